"""A capture rigged with a Distance Limit: where the motion takes a foot out of the limit's sphere (a
walk that leaves its rest place, its handles following nothing), the baked IK cannot play it, and the
build says so, naming the limb, the worst bone, angle and frame (before, it played the walk 160 degrees
off in silence); where the motion stays within (the glTF Fox's clip in place), nothing is said."""

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
