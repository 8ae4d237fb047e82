"""Many-legged bodies that number their pairs of legs (a centipede's, a spider's or a mech's from a
generator: ``thigh_03.L > shin_03.L > foot_03.L`` on each segment of the body): every pair is a leg
of its own, told apart by its number, where two unnumbered chains on one side stay rivals."""

from __future__ import annotations

import bpy
import pytest
from helpers import make_armature
from test_detect_real import assert_handles_move_chain_ends

from ik_rigger import api
from ik_rigger.core.detect import LEG, detect_limbs
from ik_rigger.rig.skeleton import read_skeleton

SEGMENT = 0.3


def body(pairs: int, number: str = "{:02d}", stacked: bool = False) -> list:
    """A body of ``pairs`` segments along -Y, each with a leg on each side (hip, thigh, shin, foot), the
    legs named with the segment's number; ``stacked``: every pair at the first segment's place."""
    bones = [("root", (0.0, 0.0, 0.0), (0.0, SEGMENT, 0.0), None, False)]
    parent = "root"
    for index in range(pairs):
        y = 0.0 if stacked else -index * SEGMENT
        segment = f"spine_{number.format(index)}"
        bones.append((segment, (0.0, y, 1.0), (0.0, y - SEGMENT, 1.0), parent, False))
        for side, x in (("L", 1.0), ("R", -1.0)):
            hip, thigh, shin, foot = (f"{part}_{number.format(index)}.{side}"
                                      for part in ("hip", "thigh", "shin", "foot"))
            bones += [(hip, (0.05 * x, y, 1.0), (0.15 * x, y, 1.0), segment, False),
                      (thigh, (0.15 * x, y, 1.0), (0.3 * x, y - 0.03, 0.55), hip, True),
                      (shin, (0.3 * x, y - 0.03, 0.55), (0.35 * x, y, 0.1), thigh, True),
                      (foot, (0.35 * x, y, 0.1), (0.35 * x, y - 0.1, 0.0), shin, True)]
        parent = segment
    return bones


@pytest.mark.parametrize("number", ["{:02d}", "{:04d}", "{}"])
def test_each_numbered_pair_is_a_leg_of_its_own(number):
    """Six pairs: twelve legs, front pair first, each labelled with its number, and Auto-Rig rigs them all."""
    obj = make_armature(body(6, number), name="Centipede")
    detection = detect_limbs(read_skeleton(obj))
    assert detection.skipped == ()
    expected = [(LEG, side, (f"thigh_{number.format(index)}.{side}", f"shin_{number.format(index)}.{side}"),
                 f"foot_{number.format(index)}.{side}") for index in range(6) for side in "LR"]
    assert [(limb.kind, limb.side, limb.chain, limb.extremity) for limb in detection.limbs] == expected
    assert [limb.label for limb in detection.limbs[:3]] == ["left leg 0", "right leg 0", "left leg 1"]
    built = api.auto_rig(obj)
    assert sorted(limb.name for limb in built) == sorted(chain[-1] for _, _, chain, _ in expected)
    assert_handles_move_chain_ends(obj, {chain[-1]: 2 for _, _, chain, _ in expected})


def test_the_auto_rig_operator_rigs_every_numbered_leg():
    obj = make_armature(body(3), name="Centipede")
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert len(obj.ik_rigger.limbs) == 6


def test_numbered_copies_stacked_in_one_place_stay_rivals():
    """Copies of one leg at one place (numbered as a duplicate would be) are not a body's pairs: which to
    rig is the user's choice, as for any two chains that could be the same leg."""
    obj = make_armature(body(2, stacked=True), name="Copies")
    detection = detect_limbs(read_skeleton(obj))
    assert detection.limbs == ()
    assert {item.bone for item in detection.skipped} == {"shin_00.L", "shin_01.L", "shin_00.R", "shin_01.R"}
    assert all("could be the left leg" in item.reason or "could be the right leg" in item.reason
               for item in detection.skipped)


def test_a_chain_whose_bones_carry_different_numbers_is_not_a_numbered_pair():
    """``thigh_00.L > shin_01.L`` numbers segments, not a pair: beside another left leg it stays a rival."""
    bones = body(2)
    renamed = {"shin_01.L": "shin_07.L"}
    bones = [(renamed.get(name, name), head, tail, renamed.get(parent, parent), connected)
             for name, head, tail, parent, connected in bones]
    obj = make_armature(bones, name="Mixed")
    detection = detect_limbs(read_skeleton(obj))
    assert {limb.last for limb in detection.limbs} == {"shin_00.R", "shin_01.R"}
    assert {item.bone for item in detection.skipped} == {"shin_00.L", "shin_07.L"}
