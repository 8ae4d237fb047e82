"""Small seams: a straight chain's handle turned as its pre-bent last bone, so Follow Handle Rotation
gives that bone the handle's own rotation; Snap IK to FK exact wherever the handle was left."""

from __future__ import annotations

import pytest
from helpers import chain_length, evaluate, make_armature, rotation_degrees
from mathutils import Euler, Matrix
from test_pose_tools import assert_same_pose, fk_pose, rig_leg, set_ik_fk

from ik_rigger import api


def _turn(matrix: Matrix) -> Matrix:
    return matrix.to_3x3().to_4x4()


@pytest.mark.parametrize("bend", ["Z_POS", "AUTO"])
@pytest.mark.parametrize("lengths", [(0.3, 0.3), (0.2, 0.3, 0.25)])
def test_a_straight_chain_following_the_handles_rotation_takes_the_handles_rotation(bend, lengths):
    """A straight arm along X (no hand) is pre-bent toward ``bend``; its last bone, following the
    handle's rotation, has the handle's own rotation at rest and with the handle turned."""
    specs = [("root", (0, 0, 0), (0, 0.3, 0), None, False), ("chest", (0, 0, 1.3), (0, 0, 1.5), "root", False)]
    x, last = 0.2, "chest"
    for index, length in enumerate(lengths):
        specs.append((f"segment_{index}", (x, 0, 1.4), (x + length, 0, 1.4), last, index > 0))
        last, x = f"segment_{index}", x + length
    obj = make_armature(specs)
    limb = api.build(obj, last, both_sides=False, bend_direction=bend, use_rotation=True,
                     chain_length=len(lengths))[0]
    assert any("pre-bent" in note for note in limb.notes)
    handle = limb.bones["HANDLE"]
    rest = evaluate(obj)
    assert rotation_degrees(_turn(rest[last]), _turn(rest[handle])) < 0.01
    root = rest[limb.chain[0]].translation
    # Turned about the chain's root, the handle asks for a pose the whole chain can take.
    turn = Matrix.Translation(root) @ Euler((0.2, -0.3, 0.5)).to_matrix().to_4x4() @ Matrix.Translation(-root)
    obj.pose.bones[handle].matrix = turn @ rest[handle]
    posed = evaluate(obj)
    assert rotation_degrees(_turn(posed[last]), _turn(posed[handle])) < 0.01
    assert rotation_degrees(_turn(posed[last]), _turn(turn @ rest[last])) < 0.01


@pytest.mark.parametrize("options", [{}, {"foot_roll": True}], ids=["plain", "foot roll"])
@pytest.mark.parametrize("away", [0.5, 3.0])
def test_snap_ik_to_fk_lands_exactly_wherever_the_handle_was_left(options, away):
    """Animating in FK leaves the handle where it was: where that is beyond the stretch's reach, the
    target the IK aims at is held in by its Limit Distance, which Snap IK to FK must not take for where
    it stands from the handle. Within 1e-4 of the chain and 0.01 degree, as the docs say."""
    obj = rig_leg(**options)
    limb = obj.ik_rigger.limbs[0]
    names = ["thigh.L", "shin.L", "foot.L"]
    handle = obj.pose.bones[limb.handle]
    handle.location = (away, -away, away)
    fk_pose(obj, names, seed=1)
    set_ik_fk(obj, limb, 0.0)
    fk = evaluate(obj)
    api.snap_limb(obj, "shin.L", "IK")
    assert handle["ik_fk"] == 1.0
    assert_same_pose(obj, fk, evaluate(obj), names, chain_length(obj, names[:2]))
