"""Soft IK on a limb that stretches: the handle may pull the target past Maximum Stretch as far as soft
IK needs to send the end near full extension, so snapping and baking match an FK pose however straight
(held at Maximum Stretch, the target left a soft IK of 0.2 short of 0.994 of the chain, and Snap IK to
FK of Rigify's leg at its own rest bend 4 degrees off); Maximum Stretch still caps where the end goes."""

from __future__ import annotations

import pytest
from helpers import evaluate
from test_soft_ik import assert_fk_to_ik_bake_plays, assert_same, build, end_of, fk_pose, place, set_switch

from ik_rigger import api


@pytest.mark.parametrize("soft", [0.1, 0.2, 0.25])
@pytest.mark.parametrize("bend", [0.0, -0.1, -0.15], ids=["rest bend", "straighter", "nearly straight"])
@pytest.mark.parametrize("skeleton, kind", [("metarig", "leg"), ("metarig", "arm"), ("mixamo", "leg")])
def test_snap_ik_to_fk_matches_a_straight_fk_pose_on_a_stretching_limb(skeleton, kind, soft, bend):
    leg = build(skeleton, kind, soft_ik=soft, max_stretch=1.5)
    fk_pose(leg, bend)
    fk = evaluate(leg.obj)
    reach = (end_of(leg, fk) - fk[leg.chain[0]].translation).length / leg.length
    api.snap_limb(leg.obj, leg.limb.name, "IK")
    assert_same(leg, fk, evaluate(leg.obj), f"reach {reach:.6f}")


def test_baking_a_straightening_fk_motion_to_ik_plays_it():
    leg = build(soft_ik=0.2, max_stretch=1.5, animation="FK")
    bends = (0.2, 0.0, -0.1, -0.15)
    assert_fk_to_ik_bake_plays(leg, lambda frame: fk_pose(leg, bends[frame - 1]), list(leg.chain))


@pytest.mark.parametrize("stretch", [0.0, 0.5, 1.0])
def test_maximum_stretch_still_caps_the_reach(stretch):
    """The handle pulled three chain lengths away: at full stretch the end stops at Maximum Stretch, and
    never passes it at any stretch, though the target goes further."""
    leg = build(soft_ik=0.2, max_stretch=1.5)
    set_switch(leg, stretch=stretch)
    root, _, posed = place(leg, 3.0, 0.2)
    end = (end_of(leg, posed) - root).length / leg.length
    assert end < 1.5 + 1e-4
    if stretch == 1.0:
        assert end == pytest.approx(1.5, abs=1e-4)
    set_switch(leg, soft_ik=0.0)  # animated to hard IK: the cap holds all the same
    assert (end_of(leg, evaluate(leg.obj)) - root).length / leg.length < 1.5 + 1e-4
