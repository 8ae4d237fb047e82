"""Limits that keep a baked IK off the motion are warned of. A capture rigged with a Distance Limit:
where the motion takes a foot out of the limit's sphere (a walk that leaves its rest place, its handles
following nothing), the baked IK cannot play it, and the build says so, naming the limb, the worst bone,
angle and frame (before, it played the walk 160 degrees off in silence); where the motion stays within
(the glTF Fox's clip in place), nothing is said. Hinge Joints on a hidden chain are looked at too."""

from __future__ import annotations

import bpy
from helpers import DATA

from ik_rigger import api
from ik_rigger.core.notes import is_warning


def test_a_walk_that_leaves_the_limits_sphere_is_warned_of():
    bpy.ops.import_anim.bvh(filepath=str(DATA / "pymo_walk.bvh"))
    obj = bpy.context.active_object
    limbs = {limb.name: limb for limb in api.auto_rig(obj, distance_limit="INSIDE")}
    for leg in ("LeftLeg", "RightLeg"):
        said = [note for note in limbs[leg].notes if "distance limit" in note]
        assert len(said) == 1 and is_warning(said[0]), limbs[leg].notes
        assert said[0].startswith(f"'{leg}': its distance limit keeps the baked IK from playing the FK motion: '")
        assert "degrees off it (frame " in said[0] and "Widen its radius or turn the limit off" in said[0]


def test_a_motion_within_the_limit_says_nothing():
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_fox.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    limbs = api.auto_rig(obj, distance_limit="INSIDE")
    assert len(limbs) == 4 and not [note for limb in limbs for note in limb.warnings]


def test_hinge_joints_on_a_hidden_chain_that_keep_the_ik_off_the_motion_are_warned_of():
    """Godot's platformer robot at the glTF importer's default bone shapes: its legs on hidden chains,
    hinged there; its clip bends the left knee where the hinge does not let it (the bake played it 98
    degrees off in silence, as the hidden chain's settings were not looked at)."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / "godot_platformer_robot.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    limbs = {limb.name: limb for limb in api.auto_rig(obj, hinge_joints=True)}
    said = [note for note in limbs["l-leg"].warnings if "hidden chain" in note]
    assert len(said) == 1, limbs["l-leg"].notes
    assert said[0].startswith("'l-leg': the IK settings of its hidden chain (IK Limit X ")
    assert "as Hinge Joints set them) keep the baked IK from playing the FK motion: 'l-" in said[0]
    assert "Turn Hinge Joints off and build again, or keep this limb in FK" in said[0]
