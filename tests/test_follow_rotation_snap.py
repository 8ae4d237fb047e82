"""Follow Handle Rotation: the last chain bone takes the IK target's rotation, so Snap IK to FK turns
the handle as that bone stands in FK and the clone takes the foot's (or hand's) own turn on it; baking
FK to IK keys them so. An FK pose with the ankle flexed (every walk) then snaps and bakes exactly,
where it landed up to 75 degrees off (the handle turned as the foot, which IK holds on the shin as at
rest). On Rigify's metarig, a Mixamo BVH and glTF characters (the Fox's hidden chain), on evaluated
poses."""

from __future__ import annotations

import random

import pytest
from helpers import evaluate
from mathutils import Euler
from test_soft_ik import Leg, assert_fk_to_ik_bake_plays, assert_same, build, set_switch

from ik_rigger import api

LIMBS = [("metarig", "leg"), ("metarig", "arm"), ("mixamo", "leg"), ("cesium", "leg"), ("fox", "leg")]


def flexed(leg: Leg, seed: int, spread: float) -> None:
    """An FK pose turning every chain bone and the extremity on it by angles up to ``spread`` radians."""
    rng = random.Random(seed)
    for name in [*leg.chain, leg.limb.extremity]:
        bone = leg.obj.pose.bones[name]
        bone.rotation_mode = "XYZ"
        bone.rotation_euler = Euler([rng.uniform(-spread, spread) for _ in range(3)])
    set_switch(leg, ik_fk=0.0)


@pytest.mark.parametrize("options", [{}, {"foot_roll": True}, {"soft_ik": 0.1}, {"max_stretch": 1.0}],
                         ids=["plain", "foot roll", "soft IK", "no stretch"])
@pytest.mark.parametrize("skeleton, kind", LIMBS)
def test_snap_ik_to_fk_follows_a_flexed_ankle(skeleton, kind, options):
    leg = build(skeleton, kind, use_rotation=True, **options)
    for seed, spread in ((1, 0.3), (2, 0.6), (3, 1.0)):
        flexed(leg, seed, spread)
        fk = evaluate(leg.obj)
        changed = api.snap_limb(leg.obj, leg.limb.name, "IK")
        assert leg.limb.bones["CLONE"] in changed
        assert_same(leg, fk, evaluate(leg.obj), f"seed {seed}")


@pytest.mark.parametrize("skeleton, kind", [("metarig", "leg"), ("fox", "leg")])
def test_baking_fk_to_ik_plays_a_flexed_ankle(skeleton, kind):
    leg = build(skeleton, kind, use_rotation=True, animation="FK")
    assert_fk_to_ik_bake_plays(leg, lambda frame: flexed(leg, frame, 0.5), [*leg.chain, leg.limb.extremity])
