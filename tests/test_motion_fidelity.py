"""Motion capture plays exactly once rigged: every deforming bone on every frame, in FK, baked onto
the IK controls and after Remove, on a capture whose legs and arms are straight at rest and
that starts on its T-pose (as CMU's BVH conversions do), read from BVH and from Blender's FBX."""

from __future__ import annotations

import math
from pathlib import Path

import bpy
import pytest
from helpers import DATA, all_fcurves, evaluate_world, rotation_degrees
from mathutils import Matrix, Vector
from test_bake import MOCAP_LIMBS, played

from ik_rigger import api
from ik_rigger.core.notes import is_warning
from ik_rigger.limb.options import LimbOptions
from ik_rigger.rig.build import build_limbs

# The Mixamo capture's elbow and knee joints as offsets from the joint above; set in line, the
# limbs are straight at rest, as a T-pose capture's are.
_IN_LINE = {"ForeArm": 0, "Hand": 0, "Leg": 1, "Foot": 1}


def straight_capture(folder: Path) -> Path:
    """tests/data's Mixamo capture with straight limbs at rest (each elbow and knee offset kept to its
    length along the limb) and a first frame of zeros: its T-pose."""
    lines = (DATA / "mixamo_freebvh.bvh").read_text().split("\n")
    for number, line in enumerate(lines[:-1]):
        joint = line.strip().removeprefix("JOINT mixamorig:").removeprefix("Left").removeprefix("Right")
        if line.strip().startswith("JOINT") and joint in _IN_LINE:
            indent, values = lines[number + 2].split("OFFSET")
            offset = [float(value) for value in values.split()]
            axis = _IN_LINE[joint]
            length = sum(value * value for value in offset) ** 0.5
            lines[number + 2] = indent + "OFFSET " + " ".join(
                f"{(length if offset[axis] > 0 else -length) if index == axis else 0.0:.6f}" for index in range(3))
    motion = lines.index("MOTION")
    frames = int(lines[motion + 1].split()[1])
    channels = len(lines[motion + 3].split())
    lines[motion + 1] = f"Frames: {frames + 1}"
    lines.insert(motion + 3, " ".join(["0.0"] * channels))
    path = folder / "straight_tpose.bvh"
    path.write_text("\n".join(lines))
    return path


# How each form reads the capture: a BVH as it is, through Blender's FBX exporter and importer as a
# capture from another program comes, or shaped as Mixamo delivers a character (mixamo_shaped),
# imported with Blender's defaults or with its bones re-oriented and the leaf bones left out.
FORMS = {"bvh": None, "fbx": None, "mixamo": {},
         "mixamo_oriented": {"automatic_bone_orientation": True, "ignore_leaf_bones": True}}


def import_capture(path: Path, form: str) -> bpy.types.Object:
    """The BVH at ``path`` in ``form`` (FORMS), active, the scene's frames those its keys play."""
    if form.startswith("mixamo"):  # the file's own axes: bones in centimetres, Y up
        bpy.ops.import_anim.bvh(filepath=str(path), axis_forward="Y", axis_up="Z")
        obj = mixamo_shaped(bpy.context.active_object, path.parent, FORMS[form])
    else:
        bpy.ops.import_anim.bvh(filepath=str(path))
        obj = bpy.context.active_object
    if form == "fbx":
        fbx = path.with_suffix(".fbx")
        bpy.ops.export_scene.fbx(filepath=str(fbx), use_selection=True, bake_anim=True, add_leaf_bones=False)
        bpy.data.objects.remove(obj)
        bpy.ops.import_scene.fbx(filepath=str(fbx))
        obj = next(found for found in bpy.context.selected_objects if found.type == "ARMATURE")
        bpy.context.view_layer.objects.active = obj
    start, end = obj.animation_data.action.frame_range
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = int(start), int(end)
    return obj


def mixamo_shaped(obj: bpy.types.Object, folder: Path, options: dict) -> bpy.types.Object:
    """``obj`` (bones in centimetres, Y up) as Mixamo's FBX files import: the armature object turned
    90 degrees about X and scaled a hundredth, its own transform keyed (here moving), a leaf bone at
    every chain's end, location keys on the hips and scale keys on every bone (Blender's exporter
    writes them all)."""
    obj.rotation_euler, obj.scale = (math.radians(90.0), 0.0, 0.0), (0.01, 0.01, 0.01)
    start, end = obj.animation_data.action.frame_range
    for frame in (start, end):
        for path in ("location", "rotation_euler", "scale"):
            obj.keyframe_insert(path, frame=frame)
        # The object moves on and turns as it goes, and its keys have their say in every bone's pose.
        obj.location.y, obj.rotation_euler.z = 0.5, math.radians(10.0)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = int(start), int(end)
    fbx = folder / f"{obj.name}_mixamo.fbx"
    # Written in the object's own units, unscaled, so the importer gives the object its turn and scale back.
    bpy.ops.export_scene.fbx(filepath=str(fbx), use_selection=True, bake_anim=True, add_leaf_bones=True,
                             apply_scale_options="FBX_SCALE_NONE", bake_anim_simplify_factor=0.0)
    bpy.data.objects.remove(obj)
    bpy.ops.import_scene.fbx(filepath=str(fbx), **options)
    obj = next(found for found in bpy.context.selected_objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    bpy.context.scene.frame_set(int(obj.animation_data.action.frame_range[0]))
    turn = Matrix.Rotation(math.radians(90.0), 4, "X") @ Matrix.Scale(0.01, 4)
    assert all(abs(a - b) < 1e-6 for row, expected in zip(obj.matrix_world, turn) for a, b in zip(row, expected))
    keyed = {curve.data_path for curve in all_fcurves(obj)}
    assert {"location", "rotation_euler", "scale"} <= keyed
    assert any(path.endswith('Hips"].location') for path in keyed)
    assert any(bone.name.endswith("_end") for bone in obj.data.bones) != ("ignore_leaf_bones" in options)
    return obj


def played_in_world(obj: bpy.types.Object, frames=None) -> dict[int, dict[str, Matrix]]:
    """Every deforming bone's world pose on each of ``frames`` (the scene's by default): the object's own
    keys have their say too."""
    scene = bpy.context.scene
    shown = {}
    for frame in range(scene.frame_start, scene.frame_end + 1) if frames is None else frames:
        scene.frame_set(frame)
        shown[frame] = {name: pose for name, pose in evaluate_world(obj).items() if obj.data.bones[name].use_deform}
    return shown


def extent(points: list[Vector]) -> float:
    """The largest of the points' spans along X, Y and Z: a character's height, whichever axis is up."""
    return max(max(point[axis] for point in points) - min(point[axis] for point in points) for axis in range(3))


def at_rest(obj: bpy.types.Object) -> tuple[float, dict[str, tuple[Vector, Vector]]]:
    """The character's height in the world (``extent`` of its bones' heads) and each bone's rest head and
    tail, for ``assert_plays_as_before``."""
    bpy.context.view_layer.update()
    height = extent([obj.matrix_world @ bone.head_local for bone in obj.data.bones])
    return height, {bone.name: (bone.head_local.copy(), bone.tail_local.copy()) for bone in obj.data.bones}


def worst(obj: bpy.types.Object, before: dict[int, dict[str, Matrix]]) -> tuple[float, float]:
    """The largest move (of the character's height) and turn (degrees) of any deforming bone on any frame."""
    after = played_in_world(obj, before)
    height = extent([matrix.translation for matrix in before[min(before)].values()])
    moved = max((matrix.translation - after[frame][name].translation).length / height
                for frame, poses in before.items() for name, matrix in poses.items())
    turned = max(rotation_degrees(matrix, after[frame][name])
                 for frame, poses in before.items() for name, matrix in poses.items())
    return moved, turned


def limbs_of(obj: bpy.types.Object) -> list[str]:
    names = [bone.name for bone in obj.data.bones]
    return [next(name for name in names if name.endswith(limb.split(":")[1])) for limb in MOCAP_LIMBS]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("animation", ["FK", "BAKE"])
def test_a_capture_straight_at_rest_plays_exactly(tmp_path, form, animation):
    """Its straight limbs are not pre-bent: their motion bends them, and pre-bent, their own keys
    turned a new rest (FK played 1.9 degrees off, the bake missed the T-pose frame by 4e-3 of the
    height). FK plays the keys as they were, also after Remove; the IK plays them within its solver's
    precision, the straight T-pose frame too."""
    obj = import_capture(straight_capture(tmp_path), form)
    before = played_in_world(obj)
    limbs = limbs_of(obj)
    built = build_limbs(obj, [(name, LimbOptions(animation=animation)) for name in limbs])
    moved, turned = worst(obj, before)
    if animation == "FK":
        assert moved < 1e-4 and turned < 0.05, (moved, turned)
    else:
        assert moved < 1e-3 and turned < 0.25, (moved, turned)
    assert not any(limb.prebent for limb in obj.ik_rigger.limbs)
    assert all(any("its motion bends it, so it was not pre-bent" in note for note in plan.notes) for plan in built)
    assert not any("scaled unevenly" in note for plan in built for note in plan.notes)
    for name in limbs:
        api.remove(obj, name)
    moved, turned = worst(obj, before)
    assert moved < 1e-4 and turned < 0.05, (moved, turned)


def play_alone(obj: bpy.types.Object, action: bpy.types.Action) -> None:
    """``action`` alone from the rest pose, as an engine plays a clip (and the animator picks one)."""
    data = obj.animation_data
    data.use_nla = False
    for pose_bone in obj.pose.bones:
        pose_bone.location, pose_bone.scale = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)
        pose_bone.rotation_quaternion, pose_bone.rotation_euler = (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    data.action = action
    if hasattr(data, "action_slot"):  # Blender 4.4 and later
        data.action_slot = action.slots[0]


def deforms(obj: bpy.types.Object) -> dict[str, dict[int, dict[str, Matrix]]]:
    """Per clip and frame, what moves the mesh: each deforming bone's world pose times its rest's inverse
    (so a bone Fix Bone Orientation turned counts by what it does, not by its new axes)."""
    found = {}
    for action in bpy.data.actions:
        if getattr(action, "id_root", "OBJECT") != "OBJECT":  # 5.0 has no id_root: slots tell
            # Another kind's clip: before 4.4 glTF's importer gives the shape keys their own ('Dance_Head'),
            # which 4.2 does not assign to the armature, leaving the clip before playing, and 4.3 refuses.
            continue
        play_alone(obj, action)
        start, end = action.frame_range
        frames = range(int(start), int(end) + 1)
        found[action.name] = {frame: {name: obj.matrix_world @ pose @ obj.data.bones[name].matrix_local.inverted()
                                      for name, pose in poses.items()}
                              for frame, poses in played(obj, frames).items()}
    return found


def worst_deform(obj: bpy.types.Object, before: dict, points: dict[str, tuple], height: float) -> tuple[float, float]:
    after = deforms(obj)
    moved = max((deform @ point - after[clip][frame][name] @ point).length / height
                for clip, frames in before.items() for frame, poses in frames.items()
                for name, deform in poses.items() for point in points[name])
    turned = max(rotation_degrees(deform, after[clip][frame][name])
                 for clip, frames in before.items() for frame, poses in frames.items()
                 for name, deform in poses.items())
    return moved, turned


def assert_plays_as_before(obj: bpy.types.Object, before: dict, points: dict[str, tuple], height: float,
                           animation: str) -> None:
    """Every deform bone of every clip within the kept motion's bounds of how it played ``before``: in FK
    (the chain's own keys) 1e-4 of the height and 0.05 degree, baked onto the controls 1e-3 and 0.25."""
    moved, turned = worst_deform(obj, before, points, height)
    assert moved < (1e-4 if animation == "FK" else 1e-3) and turned < (0.05 if animation == "FK" else 0.25), \
        (moved, turned)


@pytest.mark.parametrize("animation", ["FK", "BAKE"])
@pytest.mark.parametrize("filename", ["gltf_fox.glb", "gltf_robot_expressive.glb"])
def test_every_clip_of_a_gltf_file_plays_the_same_after_remove(filename, animation):
    """Fix Bone Orientation (as the batch rigs these imports) keys the turned bones anew in every
    clip; Remove gives them back their rests and keys them anew again in every clip, so each plays as
    it did (before, the Fox's Walk and Run played 120 degrees off). RobotExpressive's feet hang from
    the root, not from the legs: Remove reads their parent too (before, a KeyError)."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / filename))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    height, points = at_rest(obj)
    playing = obj.animation_data.action
    before = deforms(obj)
    play_alone(obj, playing)
    built = api.auto_rig(obj, fix_orientation=True, animation=animation)
    assert len(built) >= 2
    assert_plays_as_before(obj, before, points, height, animation)
    play_alone(obj, playing)
    for limb in [limb.name for limb in obj.ik_rigger.limbs]:
        api.remove(obj, limb)
    assert_plays_as_before(obj, before, points, height, animation)


def t_pose_first(folder: Path) -> Path:
    """tests/data's walk with a T-pose frame first, where the walk starts, as captures often start."""
    lines = (DATA / "pymo_walk.bvh").read_text().split("\n")
    motion = lines.index("MOTION")
    lines[motion + 1] = f"Frames: {int(lines[motion + 1].split()[1]) + 1}"
    first = lines[motion + 3].split()
    lines.insert(motion + 3, " ".join(first[:3] + ["0.0"] * (len(first) - 3)))
    path = folder / "walk_tpose.bvh"
    path.write_text("\n".join(lines))
    return path


@pytest.mark.parametrize("form", ["bvh", "mixamo"])
@pytest.mark.parametrize("animation", ["FK", "BAKE"])
def test_a_motion_capture_walk_straight_at_rest_plays_exactly(tmp_path, form, animation):
    """A real capture (tests/data/pymo_walk.bvh, 60 frames of a walk) whose legs and arms are straight at
    rest, with a T-pose frame first: they are not pre-bent, as their motion bends them, so FK plays its
    keys as they were (before, a degree off at the hands), and so does the limb once removed; baked, the
    IK plays them too, the T-pose frame included (before, pre-bent, off by the knee's shift there)."""
    obj = import_capture(t_pose_first(tmp_path), form)
    before = played_in_world(obj)
    limbs = ["LeftLeg", "RightLeg", "LeftForeArm", "RightForeArm"]
    build_limbs(obj, [(name, LimbOptions(animation=animation)) for name in limbs])
    moved, turned = worst(obj, before)
    assert moved < (1e-4 if animation == "FK" else 1e-3) and turned < (0.05 if animation == "FK" else 0.25), \
        (moved, turned)
    assert not any(limb.prebent for limb in obj.ik_rigger.limbs)
    for name in limbs:
        api.remove(obj, name)
    moved, turned = worst(obj, before)
    assert moved < (1e-4 if animation == "FK" else 1e-3) and turned < (0.05 if animation == "FK" else 0.25), \
        (moved, turned)


@pytest.mark.parametrize("scaled", ["hips alike", "hips unevenly", "feet and hands unevenly"])
def test_a_bake_warns_of_a_scale_its_ik_cannot_play(tmp_path, scaled):
    """Blender's IK turns a bone within its scaled axes, so a chain scaled more along some axes than
    others (here by the hips, on frames 20 to 30) misses its handle: baked, the limb plays those frames
    off (2.5e-2 of the height and 3.9 degrees at 5 percent), and each limb says so, with what plays
    exactly. Scaled alike along every axis, or only the feet and hands scaled (their own scale plays
    under the clone's Copy Rotation), the bake plays every frame as before and says nothing of it."""
    obj = import_capture(straight_capture(tmp_path), "bvh")
    names = ["mixamorig:Hips"] if scaled.startswith("hips") else [
        f"mixamorig:{side}{end}" for side in ("Left", "Right") for end in ("Foot", "Hand")]
    for name in names:
        for frame in range(19, 32):
            obj.pose.bones[name].scale = (1.0, 1.0, 1.0) if frame in (19, 31) else (
                (1.05, 1.05, 1.05) if scaled == "hips alike" else (1.05, 0.95, 1.0))
            obj.pose.bones[name].keyframe_insert("scale", frame=frame)
    before = played_in_world(obj)
    built = build_limbs(obj, [(name, LimbOptions()) for name in limbs_of(obj)])
    warned = [[note for note in plan.notes if "scaled unevenly" in note] for plan in built]
    if scaled == "hips unevenly":
        assert all(len(notes) == 1 and is_warning(notes[0]) and "11 frames from 20 to 30" in notes[0]
                   and 5.0 < float(notes[0].split("up to ")[1].split("%")[0]) < 20.0
                   and "Leave Playing in FK" in notes[0] for notes in warned), warned
    else:
        assert not any(warned), warned
        moved, turned = worst(obj, before)
        assert moved < 1e-3 and turned < 0.25, (moved, turned)
