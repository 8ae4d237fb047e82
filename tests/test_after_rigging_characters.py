"""After rigging, several characters in one scene: an operator run again (Repeat Last, a script) with
another character active names a limb that character has not; it is refused by name, and nothing
changes."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, import_bvh, make_armature, same, snapshot

from ik_rigger import api

LIMB_OPERATORS = [
    ("snap_fk_to_ik", {"keyframe": True}),
    ("snap_ik_to_fk", {"keyframe": True}),
    ("reset_pole_angle", {}),
    ("rebuild_limb", {}),
    ("bake", {"frame_start": 1, "frame_end": 5}),
    ("switch_parent", {"parent": 1, "keyframe": True}),
    ("select_limb_bones", {"part": "CHAIN"}),
]


@pytest.fixture
def two_characters() -> tuple[bpy.types.Object, bpy.types.Object]:
    """A leg rig made here (Hero), then a motion-capture walk (Walker) rigged, active, in Pose mode."""
    hero = make_armature(both_legs(), name="Hero", mode="OBJECT")
    api.auto_rig(hero, parent_switch=True)
    walker = import_bvh("pymo_walk.bvh")
    walker.name = "Walker"
    api.auto_rig(walker, parent_switch=True)
    bpy.context.view_layer.objects.active = walker
    bpy.ops.object.mode_set(mode="POSE")
    walker.data.bones.active = walker.data.bones["LeftLeg"]
    return hero, walker


@pytest.mark.parametrize("name, options", LIMB_OPERATORS, ids=[name for name, _ in LIMB_OPERATORS])
def test_a_limb_of_another_character_is_refused_by_name_and_nothing_changes(two_characters, name, options):
    hero, walker = two_characters
    before = snapshot(walker), snapshot(hero)
    with pytest.raises(RuntimeError) as refused:
        getattr(bpy.ops.ik_rigger, name)("EXEC_DEFAULT", True, limb="shin.L", **options)
    message = str(refused.value)
    assert "Traceback" not in message, message
    assert "'shin.L'" in message and "'Walker'" in message, message
    assert same(snapshot(walker), before[0]) and same(snapshot(hero), before[1])


@pytest.mark.parametrize("name, options", LIMB_OPERATORS, ids=[name for name, _ in LIMB_OPERATORS])
def test_a_limb_is_named_by_any_of_its_bones(two_characters, name, options):
    _, walker = two_characters
    walker.data.bones.active = walker.data.bones["Hips"]
    assert getattr(bpy.ops.ik_rigger, name)(limb="RightFoot_IK", **options) == {"FINISHED"}
