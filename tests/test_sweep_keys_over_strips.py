"""A snap or a parent switch keyed on an armature whose motion plays from NLA strips, with no action of its
own: the keys would go into a new action played over the strips, holding the bones keyed on every frame
(the Mixamo capture's leg 146 degrees off across the shot after one snap). Refused by name, nothing
changed; not keyed, the snap poses the frame as before."""

from __future__ import annotations

import bpy
import pytest
from helpers import same, snapshot
from test_bake import import_mocap

from ik_rigger import api
from ik_rigger.core.errors import RigError

LEG = "mixamorig:LeftLeg"


@pytest.fixture
def in_a_strip() -> bpy.types.Object:
    """The Mixamo capture rigged, its action (the motion kept on the controls) pushed down onto a strip."""
    obj = import_mocap()
    api.auto_rig(obj, parent_switch=True)
    data = obj.animation_data
    # Named again: Blender 4.3 and 4.4 name a new strip after its action, whatever name it is given.
    data.nla_tracks.new().strips.new("walk", 1, data.action).name = "walk"
    data.action = None
    bpy.context.scene.frame_set(29)
    return obj


@pytest.mark.parametrize("tool", ["Snap FK to IK", "Snap IK to FK", "Switch Parent"])
def test_a_keyed_snap_or_switch_over_strips_is_refused_and_changes_nothing(in_a_strip, tool):
    obj = in_a_strip
    before, actions = snapshot(obj), len(bpy.data.actions)
    with pytest.raises(RigError, match="mixamo_freebvh.*NLA strip 'walk'.*every frame.*Action Editor"):
        if tool == "Switch Parent":
            api.switch_parent(obj, LEG, 1, key=True)
        else:
            api.snap_limb(obj, LEG, "FK" if tool == "Snap FK to IK" else "IK", key=True)
    assert same(before, snapshot(obj)) and len(bpy.data.actions) == actions
    assert obj.animation_data.action is None


def test_a_snap_not_keyed_over_strips_poses_the_frame(in_a_strip):
    obj = in_a_strip
    assert api.snap_limb(obj, LEG, "FK")
    assert obj.animation_data.action is None
