"""Reading one character's motion frame by frame in a scene of many: Blender plays only that character.

A build keeping the motion, a bake and an export read the armature's poses on every frame, and each
frame Blender evaluates whatever plays in the scene. The other characters (their armatures, the meshes
they move) and anything animated are put to sleep meanwhile, so the cost follows the character, not the
scene; still objects, which a frame does not evaluate, stay awake; what the character depends on (here
another character's hips, which its own hips copy) Blender still evaluates, so the motion is kept.
"""

from __future__ import annotations

import bpy
from helpers import DATA
from test_bake import assert_plays_the_same, played

from ik_rigger import api

HIPS = "mixamorig:Hips"


def _character(x: float) -> tuple[bpy.types.Object, bpy.types.Object]:
    """The Mixamo capture at ``x`` with a mesh its Armature modifier moves."""
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    armature = bpy.context.active_object
    armature.location.x = x
    bpy.ops.mesh.primitive_cube_add(size=10.0, location=(x, 0.0, 100.0))
    skin = bpy.context.active_object
    skin.modifiers.new("Armature", "ARMATURE").object = armature
    skin.vertex_groups.new(name=HIPS).add(list(range(len(skin.data.vertices))), 1.0, "REPLACE")
    return armature, skin


def _scene() -> dict[str, bpy.types.Object]:
    """Two characters, the first's hips carried by the second's, a still prop and an animated one."""
    scene = bpy.context.scene
    obj, skin = _character(0.0)
    other, other_skin = _character(300.0)
    scene.frame_start, scene.frame_end = 1, 69
    carried = obj.pose.bones[HIPS].constraints.new("COPY_LOCATION")
    carried.target, carried.subtarget, carried.use_offset = other, HIPS, True
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(0.0, 200.0, 0.0))
    still = bpy.context.active_object
    bird = bpy.data.objects.new("Bird", None)
    scene.collection.objects.link(bird)
    for frame, z in ((1, 0.0), (69, 50.0)):
        bird.location.z = z
        bird.keyframe_insert("location", frame=frame)
    for item in scene.objects:
        item.select_set(item in (obj, skin, other_skin))
    bpy.context.view_layer.objects.active = obj
    return {"obj": obj, "skin": skin, "other": other, "other_skin": other_skin, "still": still, "bird": bird}


def _watched(objects: dict[str, bpy.types.Object], work) -> list[dict[str, bool]]:
    """Which objects were asleep (disabled in viewports) on each frame ``work`` stepped through."""
    seen: list[dict[str, bool]] = []

    def watch(_scene: bpy.types.Scene, _depsgraph: bpy.types.Depsgraph) -> None:
        seen.append({name: item.hide_viewport for name, item in objects.items()})

    bpy.app.handlers.frame_change_post.append(watch)
    try:
        work()
    finally:
        bpy.app.handlers.frame_change_post.remove(watch)
    return seen


def _assert_only_the_character_played(objects: dict[str, bpy.types.Object], seen: list[dict[str, bool]]) -> None:
    stepped = seen[:-1]  # the last frame change gives the user's frame back, everything awake
    assert len(stepped) >= 69, len(stepped)
    for asleep in stepped:
        assert asleep == {"obj": False, "skin": True, "other": True, "other_skin": True, "still": False,
                          "bird": True}, asleep
    assert not any(seen[-1].values()), seen[-1]
    assert not any(item.hide_viewport for item in objects.values())
    assert [item.name for item in objects.values() if item.select_get()] == [
        objects[name].name for name in ("obj", "skin", "other_skin")]  # selected again as they were


def test_a_build_keeping_the_motion_plays_the_character_alone_and_keeps_what_it_depends_on():
    objects = _scene()
    obj = objects["obj"]
    length = obj.data.bones["mixamorig:LeftLeg"].length
    expected = played(obj, range(1, 70, 4))
    built: list = []
    seen = _watched(objects, lambda: built.extend(api.auto_rig(obj)))
    assert len(built) == 4
    _assert_only_the_character_played(objects, seen)
    assert_plays_the_same(obj, expected, length)  # the other character's hips carried it on every frame


def test_a_bake_and_an_export_play_the_character_alone(tmp_path):
    objects = _scene()
    obj = objects["obj"]
    api.auto_rig(obj)
    bpy.ops.object.mode_set(mode="POSE")
    seen = _watched(objects, lambda: api.bake(obj, "IK_TO_FK", range(1, 70)))
    _assert_only_the_character_played(objects, seen)
    bpy.ops.object.mode_set(mode="OBJECT")
    seen = _watched(objects, lambda: api.export(obj, str(tmp_path / "walk.glb")))
    assert len(seen) >= 69 and any(all(asleep[name] for name in ("other", "other_skin", "bird")) for asleep in seen)
    assert not any(item.hide_viewport for item in objects.values())
