"""A Stretch To of the user's on a chain bone (the shin aimed at a prop) left the foot
Bake FK to IK keyed up to 2 degrees off the FK motion, and it said it had baked. The snaps refuse such a
constraint where it keeps them from landing; now the bake does too: it keys nothing and names the
constraint, its bone and what to do. A constraint of the user's on the chain that IK overrides (a Limit
Rotation, a Stretch To on the thigh) is no reason to refuse. On evaluated poses."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs_rigged, set_active_bone
from test_hostile_held import _plays, _state, _walking_in_fk

from ik_rigger import api


def _stretch(obj: bpy.types.Object, bone: str, target: str) -> bpy.types.Constraint:
    """A Stretch To of the user's on ``bone``, aimed at a bone of the armature or at a prop (an empty)."""
    constraint = obj.pose.bones[bone].constraints.new("STRETCH_TO")
    constraint.name = "Reach"
    if target == "prop":
        prop = bpy.data.objects.new("Prop", None)
        bpy.context.scene.collection.objects.link(prop)
        prop.location = (0.3, -0.2, 0.1)
        constraint.target = prop
    else:
        constraint.target, constraint.subtarget = obj, target
    return constraint


def test_a_users_stretch_to_on_a_chain_bone_refuses_the_bake_to_ik_keying_nothing():
    obj = both_legs_rigged()
    bone = "shin.L"
    constraint = _stretch(obj, bone, "prop")
    _walking_in_fk(obj)
    before = _state(obj)
    with pytest.raises(api.RigError, match=rf"^'{bone}': Bake FK to IK would not land: the Stretch To constraint "
                                           rf"'Reach' on '{bone}'.*'foot.L' would stand off the FK motion on frame "
                                           r"\d; nothing was changed\. Mute the constraint or set its influence"):
        api.bake(obj, "FK_TO_IK", range(1, 6), switch=True)
    assert _state(obj) == before
    set_active_bone(obj, "shin.L")
    with pytest.raises(RuntimeError, match=f"the Stretch To constraint 'Reach' on '{bone}'"):
        bpy.ops.ik_rigger.bake(direction="FK_TO_IK", frame_start=1, frame_end=5, key_switch=True, clear_other=True)
    assert _state(obj) == before
    constraint.mute = True
    played = _walking_in_fk(obj)  # the FK motion as it plays without the constraint
    assert api.bake(obj, "FK_TO_IK", range(1, 6), switch=True) == {"shin.L": 5, "shin.R": 5}
    assert _plays(obj, played)


@pytest.mark.parametrize("kind", ["LIMIT_ROTATION", "STRETCH_TO", "STRETCH_TO_PROP"])
def test_a_users_constraint_on_the_chain_that_leaves_the_baked_ik_on_the_motion_lets_the_bake_land(kind):
    obj = both_legs_rigged()
    if kind == "STRETCH_TO":
        _stretch(obj, "thigh.L", "shin.L")  # aimed where the thigh points already
    elif kind == "STRETCH_TO_PROP":
        _stretch(obj, "thigh.L", "prop")  # IK turns the thigh whatever it says, and the foot follows the clone
    else:
        limit = obj.pose.bones["shin.L"].constraints.new("LIMIT_ROTATION")
        limit.use_limit_x, limit.min_x, limit.max_x = True, -0.3, 0.3
    played = _walking_in_fk(obj)
    assert api.bake(obj, "FK_TO_IK", range(1, 6), switch=True) == {"shin.L": 5, "shin.R": 5}
    assert _plays(obj, played)
