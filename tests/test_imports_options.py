"""Characters as the importers leave them under the options users toggle: Blender's BVH importer with other
rotation modes, axes, a scale and its FPS scale; its glTF importer with Bone Dir Fortune and without guessing
the original bind pose; its FBX importer with Force Connect Children, leaf bones kept or ignored, other bone
axes, Apply Transform, a scale, no pre/post rotation and no animation; and FBX files as other tools write
them (Blender's exporter with other axes, scalings, armature node types, deform bones only, every action as a
take). On each, Auto-Rig finds the limbs it finds under the defaults; the clip plays as before once rigged
(and in a Blender without IK Rigger) and after Remove; each handle carries its chain's end with no knee or
elbow flipping, and each pole turns its chain."""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, all_fcurves, evaluate, evaluate_world, rotation_degrees
from mathutils import Matrix
from test_detect_real import assert_handles_move_chain_ends
from test_imported import Limb, reach_and_bend
from test_imports_more import KNIGHT, MANNEQUIN, _assert_warnings, _plain_frames, _rest
from test_imports_quaternius import COWBOY, MAN, assert_poles_turn_the_chains, played, size_of, worst
from test_motion_fidelity import play_alone
from test_pipeline import as_matrix, play_elsewhere

from ik_rigger import api

MIXAMO = "mixamo_freebvh.bvh"
PYMO = "pymo_walk.bvh"
FOX = "gltf_fox.glb"
CESIUM = "gltf_cesium_man_skeleton.gltf"
ROBOT = "godot_platformer_robot.glb"
EXPRESSIVE = "gltf_robot_expressive.glb"


def _biped(
    prefix: str, leg: tuple[str, str, str], arm: tuple[str, str, str], sides: tuple[str, str]
) -> dict[str, tuple[tuple[str, ...], str | None]]:
    """Both legs and arms named ``{prefix}{side}{bone}``: (upper, lower, extremity) each."""
    limbs = {}
    for side in sides:
        for upper, lower, end in (leg, arm):
            limbs[f"{prefix}{side}{lower}"] = (
                (f"{prefix}{side}{upper}", f"{prefix}{side}{lower}"),
                f"{prefix}{side}{end}" if end else None,
            )
    return limbs


def _suffixed(
    leg: tuple[str, str, str], arm: tuple[str, str, str | None], sides: tuple[str, str]
) -> dict[str, tuple[tuple[str, ...], str | None]]:
    """Both legs and arms named ``{bone}{side}``: (upper, lower, extremity) each."""
    limbs = {}
    for side in sides:
        for upper, lower, end in (leg, arm):
            limbs[f"{lower}{side}"] = ((f"{upper}{side}", f"{lower}{side}"), f"{end}{side}" if end else None)
    return limbs


# What Auto-Rig finds on each character at the importers' defaults (tests/test_imported.py,
# tests/test_imports_*.py): last chain bone -> (chain, foot or hand).
LIMBS = {
    MIXAMO: _biped("mixamorig:", ("UpLeg", "Leg", "Foot"), ("Arm", "ForeArm", "Hand"), ("Left", "Right")),
    PYMO: _biped("", ("UpLeg", "Leg", "Foot"), ("Arm", "ForeArm", "Hand"), ("Left", "Right")),
    MAN: _suffixed(("UpperLeg", "LowerLeg", "Foot"), ("UpperArm", "LowerArm", "Palm"), (".L", ".R")),
    KNIGHT: _suffixed(("upperleg", "lowerleg", "foot"), ("upperarm", "lowerarm", "wrist"), (".l", ".r")),
    # Feet under the root named as IK targets; one palm beside the thumb and index finger under each forearm.
    COWBOY: _suffixed(("UpperLeg", "LowerLeg", "FootIK"), ("UpperArm", "LowerArm", "Palm"), (".L", ".R")),
    MANNEQUIN: _suffixed(("thigh", "calf", "foot"), ("upperarm", "lowerarm", "hand"), (".l", ".r")),
    FOX: {
        **{
            f"b_{side}Foot01_{n[2]}": (
                (f"b_{side}Leg01_{n[0]}", f"b_{side}Leg02_{n[1]}", f"b_{side}Foot01_{n[2]}"),
                f"b_{side}Foot02_{n[3]}",
            )
            for side, n in (("Left", ("015", "016", "017", "018")), ("Right", ("019", "020", "021", "022")))
        },
        **{
            f"b_{side}ForeArm_{n[1]}": ((f"b_{side}UpperArm_{n[0]}", f"b_{side}ForeArm_{n[1]}"), f"b_{side}Hand_{n[2]}")
            for side, n in (("Left", ("09", "010", "011")), ("Right", ("06", "07", "08")))
        },
    },
    # COLLADA's copies of one name, in the order of the hierarchy: the arms' numbers do not follow the chain.
    CESIUM: {
        **{
            f"leg_joint_{side}_2": ((f"leg_joint_{side}_1", f"leg_joint_{side}_2"), f"leg_joint_{side}_3")
            for side in "LR"
        },
        "Skeleton_arm_joint_L__3_": (
            ("Skeleton_arm_joint_L__4_", "Skeleton_arm_joint_L__3_"),
            "Skeleton_arm_joint_L__2_",
        ),
        "Skeleton_arm_joint_R__2_": (("Skeleton_arm_joint_R", "Skeleton_arm_joint_R__2_"), "Skeleton_arm_joint_R__3_"),
    },
    # No hands: its arms end at the forearm.
    ROBOT: {
        **{f"{side}-leg": ((f"{side}-thigh", f"{side}-leg"), f"{side}-foot") for side in "lr"},
        **{f"{side}-forearm": ((f"{side}-arm", f"{side}-forearm"), None) for side in "lr"},
    },
}
# RobotExpressive's arms at Bone Dir Fortune: bones long enough to read as limbs (at Blender's default shapes its
# arms are skipped as too unlike), ending at the forearm (three palms side by side are no hand).
LIMBS[EXPRESSIVE] = _suffixed(("UpperLeg", "LowerLeg", "Foot"), ("UpperArm", "LowerArm", None), (".L", ".R"))


# Each case: (character, how it arrives, the exporter's options for FBX, the importer's options).
CASES: dict[str, tuple[str, str, dict, dict]] = {
    **{f"BVH, rotation {mode}": (MIXAMO, "bvh", {}, {"rotate_mode": mode}) for mode in ("QUATERNION", "XYZ", "ZXY")},
    "BVH, Z up": (MIXAMO, "bvh", {}, {"axis_forward": "Y", "axis_up": "Z"}),
    "BVH, X forward": (MIXAMO, "bvh", {}, {"axis_forward": "X", "axis_up": "Y"}),
    "BVH, scale 0.01": (MIXAMO, "bvh", {}, {"global_scale": 0.01}),
    "BVH, FPS scale": (PYMO, "bvh", {}, {"use_fps_scale": True}),
    "BVH, FPS scale, rotation ZXY": (PYMO, "bvh", {}, {"use_fps_scale": True, "rotate_mode": "ZXY"}),
    **{
        f"glTF {name}, Fortune": (name, "gltf", {}, {"bone_heuristic": "FORTUNE"})
        for name in (FOX, CESIUM, MAN, COWBOY, KNIGHT, MANNEQUIN, ROBOT, EXPRESSIVE)
    },
    **{
        f"glTF {name}, no bind pose guess": (name, "gltf", {}, {"guess_original_bind_pose": False})
        for name in (FOX, CESIUM, MAN, COWBOY, KNIGHT, ROBOT)
    },
    "glTF, Temperance, no bind pose guess": (
        FOX,
        "gltf",
        {},
        {"bone_heuristic": "TEMPERANCE", "guess_original_bind_pose": False},
    ),
}
# The FBX importer's options on two files Blender's exporter wrote at its defaults: the Mixamo capture
# (centimetres) and Quaternius' man (feet under the root), and the exporter's options read back at the
# importer's defaults.
FBX_IMPORTS = {
    "Force Connect Children": {"force_connect_children": True},
    "primary axis X": {"primary_bone_axis": "X", "secondary_bone_axis": "Y"},
    "primary axis -Z": {"primary_bone_axis": "-Z", "secondary_bone_axis": "X"},
    "Apply Transform": {"bake_space_transform": True},
    "scale 100": {"global_scale": 100.0},
    "scale 0.01": {"global_scale": 0.01},
    "no pre/post rotation": {"use_prepost_rot": False},
    # Posed as the file's first frame shows, with no keys: the controls are put on that pose.
    "animation off": {"use_anim": False},
    "Y up, manual orientation": {"use_manual_orientation": True, "axis_forward": "Z", "axis_up": "Y"},
    "Automatic Bone Orientation, Force Connect Children": {
        "automatic_bone_orientation": True,
        "force_connect_children": True,
    },
}
FBX_EXPORTS = {
    "leaf bones kept": ({"add_leaf_bones": True}, {}),
    "leaf bones ignored": ({"add_leaf_bones": True}, {"ignore_leaf_bones": True}),
    "leaf bones, Automatic Bone Orientation": ({"add_leaf_bones": True}, {"automatic_bone_orientation": True}),
    "written Y forward Z up": ({"axis_forward": "Y", "axis_up": "Z"}, {}),
    "written -Y forward Z up": ({"axis_forward": "-Y", "axis_up": "Z"}, {}),
    "written scaled All": ({"apply_scale_options": "FBX_SCALE_ALL"}, {}),
    "written scaled Units": ({"apply_scale_options": "FBX_SCALE_UNITS"}, {}),
    "written with Apply Transform": ({"bake_space_transform": True}, {}),
    **{f"armature as {kind}": ({"armature_nodetype": kind}, {}) for kind in ("NULL", "ROOT", "LIMBNODE")},
    "deform bones only": ({"use_armature_deform_only": True}, {}),
    "bones along X": ({"primary_bone_axis": "X", "secondary_bone_axis": "-Y"}, {}),
}
for _name in (MIXAMO, MAN):
    CASES |= {f"FBX {_name}, {option}": (_name, "fbx", {}, imported) for option, imported in FBX_IMPORTS.items()}
    CASES |= {f"FBX {_name}, {option}": (_name, "fbx", *both) for option, both in FBX_EXPORTS.items()}
CASES |= {
    f"FBX {KNIGHT}, {option}": (KNIGHT, "fbx", *FBX_EXPORTS[option])
    for option in ("leaf bones kept", "leaf bones ignored", "armature as NULL", "deform bones only")
}
CASES[f"FBX {KNIGHT}, Force Connect Children"] = (KNIGHT, "fbx", {}, FBX_IMPORTS["Force Connect Children"])


def _source(name: str) -> None:
    """``name`` imported at its importer's defaults into the empty scene."""
    if name.endswith(".bvh"):
        bpy.ops.import_anim.bvh(filepath=str(DATA / name))
    else:
        bpy.ops.import_scene.gltf(filepath=str(DATA / name))


def _controls_not_deforming() -> None:
    """The character's own control bones (KayKit's ``IK-foot.l``, ``kneeIK.l``, ``control-heel-roll.l``, its hand
    slots) marked as deforming nothing, as their rig has them: an export of the deform bones only leaves them out."""
    for obj in bpy.data.objects:
        if obj.type == "ARMATURE":
            for bone in obj.data.bones:
                if "ik" in bone.name.lower() or bone.name.startswith(("control-", "handslot")):
                    bone.use_deform = False


@pytest.fixture(scope="module")
def fbx_files(tmp_path_factory: pytest.TempPathFactory):
    """Each FBX file once for the module: the character written by Blender's exporter with the options given."""
    folder = tmp_path_factory.mktemp("fbx")
    made: dict[tuple, str] = {}

    def written(name: str, options: dict) -> str:
        key = (name, tuple(sorted(options.items())))
        if key not in made:
            bpy.ops.wm.read_factory_settings(use_empty=True)
            _source(name)
            if options.get("use_armature_deform_only"):
                _controls_not_deforming()
            bpy.ops.object.select_all(action="SELECT")
            path = str(folder / f"{len(made)}.fbx")
            bpy.ops.export_scene.fbx(filepath=path, **options)
            made[key] = path
            bpy.ops.wm.read_factory_settings(use_empty=True)
        return made[key]

    return written


def arrive(case: str, fbx_files) -> bpy.types.Object:
    """The character of ``case`` as its importer leaves it, active, in Object mode."""
    name, kind, exported, imported = CASES[case]
    if kind == "bvh":
        bpy.ops.import_anim.bvh(filepath=str(DATA / name), **imported)
    elif kind == "gltf":
        bpy.ops.import_scene.gltf(filepath=str(DATA / name), **imported)
    else:
        path = fbx_files(name, exported)
        bpy.ops.import_scene.fbx(filepath=path, **imported)
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    for other in bpy.context.view_layer.objects:
        other.select_set(other == obj)
    return obj


def _assert_rest_kept(obj: bpy.types.Object, rest: dict[str, Matrix], size: float) -> None:
    """The user's bones keep their rest, to Blender's single precision at the skeleton's size (as Edit mode
    writes it back: a capture in centimetres moves by more than a millionth)."""
    for name, matrix in rest.items():
        kept = obj.data.bones[name].matrix_local
        assert (kept.translation - matrix.translation).length < 1e-6 * size, name
        assert rotation_degrees(kept, matrix) < 1e-3, name


def _frames(name: str, obj: bpy.types.Object) -> list[int]:
    """Five frames across the clip (the scene's frame when there is none), those the mannequin stretches left
    out."""
    data = obj.animation_data
    if data is None or data.action is None:
        return [bpy.context.scene.frame_current]
    if name == MANNEQUIN:
        return _plain_frames(name)
    first, last = (int(round(frame)) for frame in data.action.frame_range)
    return sorted({round(first + (last - first) * index / 4) for index in range(5)})


def _at_rest_still(obj: bpy.types.Object) -> None:
    """The clip off and every bone at its rest, as an animator starts posing."""
    if obj.animation_data is not None:
        obj.animation_data.action = None
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    evaluate(obj)  # a handle placed by its matrix reads its parent's pose as evaluated


@pytest.mark.parametrize("case", CASES)
def test_auto_rig_finds_the_limbs_keeps_the_clip_and_plays_without_the_addon(case, fbx_files, tmp_path):
    name = CASES[case][0]
    obj = arrive(case, fbx_files)
    size, frames = size_of(obj), _frames(name, obj)
    rest = _rest(obj)
    before = played(obj, frames)
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert {limb.name: (limb.chain, limb.extremity) for limb in built} == LIMBS[name]
    assert [bone for bone, _why in skipped if bone in LIMBS[name]] == []
    _assert_warnings(name, built)
    _assert_rest_kept(obj, rest, size_of(obj) / obj.matrix_world.to_scale()[0])
    # The clip plays as before, within IK's precision.
    rigged = played(obj, frames)
    moved, turned = worst(before, rigged, size)
    assert moved < 1e-3 and turned < 0.25, (moved, turned)
    # Saved, it plays the same in a Blender without IK Rigger.
    path = tmp_path / "rigged.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    elsewhere = play_elsewhere(path, frames, tmp_path)
    assert not elsewhere["invalid_drivers"]
    world = obj.matrix_world
    for frame, poses in rigged.items():
        shown = elsewhere["frames"][str(frame)][obj.name]
        for bone, pose in poses.items():
            there = world @ as_matrix(shown[bone])
            assert (there.translation - pose.translation).length < 1e-5 * size, (frame, bone)
            assert rotation_degrees(there, pose) < 0.01, (frame, bone)
    # On a frame of the clip, each pole turns its chain and each handle carries its chain's end.
    bpy.context.scene.frame_set(frames[len(frames) // 2])
    assert_poles_turn_the_chains(obj, built)
    bpy.ops.object.mode_set(mode="POSE")
    assert_handles_move_chain_ends(obj, {limb.name: len(limb.chain) for limb in built})
    # From the rest pose too, no knee or elbow flipping to the other side; but for a chain straight at rest
    # that its motion bends, left straight on purpose (docs/motion_capture.md): IK bends it from its keys.
    posed = {pose_bone.name: pose_bone.matrix_basis.copy() for pose_bone in obj.pose.bones}
    clip = obj.animation_data.action if obj.animation_data is not None else None
    _at_rest_still(obj)
    for limb in built:
        if not any("straight at rest but its motion bends it" in note for note in limb.notes):
            reach_and_bend(obj, Limb(limb.name, len(limb.chain), limb.extremity, None), count=6)
    bpy.ops.object.mode_set(mode="OBJECT")
    if clip is not None:
        obj.animation_data.action = clip
        if getattr(obj.animation_data, "action_slot", True) is None:
            obj.animation_data.action_slot = clip.slots[0]
    for pose_bone in obj.pose.bones:  # what the clip does not key stays as the file posed it
        pose_bone.matrix_basis = posed[pose_bone.name]
    for limb in built:
        api.remove(obj, limb.name)
    _assert_rest_kept(obj, rest, size_of(obj) / obj.matrix_world.to_scale()[0])
    moved, turned = worst(before, played(obj, frames), size)
    assert moved < 1e-4 and turned < 0.05, (moved, turned)


def _second_take(obj: bpy.types.Object) -> bpy.types.Action:
    """A second clip of the capture: its first one played backward, kept for the file with a fake user."""
    first = obj.animation_data.action
    start, end = first.frame_range
    second = first.copy()
    second.name = "Backward"
    obj.animation_data.action = second
    if hasattr(obj.animation_data, "action_slot"):
        obj.animation_data.action_slot = second.slots[0]
    for curve in all_fcurves(obj):
        for point in curve.keyframe_points:
            for co in (point.co, point.handle_left, point.handle_right):
                co.x = start + end - co.x
        curve.update()
    obj.animation_data.action = first
    if hasattr(obj.animation_data, "action_slot"):
        obj.animation_data.action_slot = first.slots[0]
    for action in (first, second):
        action.use_fake_user = True
    return second


def _deforming_by_take(obj: bpy.types.Object, takes: list[bpy.types.Action], frames: list[int]) -> dict:
    shown = {}
    for take in takes:
        play_alone(obj, take)
        shown[take.name] = {}
        for frame in frames:
            bpy.context.scene.frame_set(frame)
            shown[take.name][frame] = {
                name: pose for name, pose in evaluate_world(obj).items() if obj.data.bones[name].use_deform
            }
    return shown


@pytest.mark.parametrize("imported", [{}, {"automatic_bone_orientation": True, "ignore_leaf_bones": True}])
def test_every_take_of_an_fbx_written_with_all_actions_plays_as_before(imported, tmp_path):
    """Blender's exporter with All Actions writes each action as a take; its importer makes an action of each
    and plays one. Auto-Rig bakes the motion of every take onto the rig, so each plays as before once picked,
    and again after Remove."""
    _source(MIXAMO)
    source = bpy.context.active_object
    _second_take(source)
    path = tmp_path / "takes.fbx"
    bpy.ops.export_scene.fbx(
        filepath=str(path),
        bake_anim=True,
        bake_anim_use_all_actions=True,
        bake_anim_use_nla_strips=False,
        add_leaf_bones=True,
    )
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.fbx(filepath=str(path), **imported)
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    takes = sorted((action for action in bpy.data.actions), key=lambda action: action.name)
    assert len(takes) == 2, [action.name for action in takes]
    playing = obj.animation_data.action
    frames = [1, 18, 35, 52, 69]
    size = size_of(obj)
    before = _deforming_by_take(obj, takes, frames)
    play_alone(obj, playing)
    built = api.auto_rig(obj)
    assert {limb.name: (limb.chain, limb.extremity) for limb in built} == LIMBS[MIXAMO]
    after = _deforming_by_take(obj, takes, frames)
    for take in takes:
        moved, turned = worst(before[take.name], after[take.name], size)
        assert moved < 1e-3 and turned < 0.25, (take.name, moved, turned)
    play_alone(obj, playing)
    for limb in built:
        api.remove(obj, limb.name)
    after = _deforming_by_take(obj, takes, frames)
    for take in takes:
        moved, turned = worst(before[take.name], after[take.name], size)
        assert moved < 1e-4 and turned < 0.05, (take.name, moved, turned)


@pytest.mark.parametrize("heuristic", ["BLENDER", "TEMPERANCE", "FORTUNE"])
def test_build_ik_limb_takes_the_cowboys_palm_for_the_hand_whichever_way_the_importer_aims_the_forearm(heuristic):
    """Quaternius' cowboy: under each forearm a palm, a thumb and an index finger. At Bone Dir Fortune the
    importer aims the forearm's tail between them, nearest the thumb: Build IK Limb took the thumb for the
    hand (the thumb followed the handle, the hand stayed with the forearm), and Auto-Rig rigged the arm with
    no hand. Both take the palm, as at the other bone shapes."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / COWBOY), bone_heuristic=heuristic)
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    obj.data.bones.active = obj.data.bones["LowerArm.L"]
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    assert {limb.name: limb.extremity for limb in obj.ik_rigger.limbs} == {
        "LowerArm.L": "Palm.L",
        "LowerArm.R": "Palm.R",
    }
    # The hand goes with the handle.
    handle = obj.pose.bones[obj.ik_rigger.limb_of("LowerArm.L").handle]
    start = evaluate(obj)
    reach = (start["Palm.L"].translation - start["UpperArm.L"].translation).length
    target = start[handle.name].translation.lerp(start["UpperArm.L"].translation, 0.2)
    handle.matrix = Matrix.Translation(target - start[handle.name].translation) @ start[handle.name]
    moved = evaluate(obj)
    shift = moved[handle.name].translation - start[handle.name].translation
    assert shift.length > 0.1 * reach
    assert (moved["Palm.L"].translation - start["Palm.L"].translation - shift).length < 1e-3 * reach
    for name in [limb.name for limb in obj.ik_rigger.limbs]:
        api.remove(obj, name)
    built = api.auto_rig(obj)
    assert {limb.name: limb.extremity for limb in built if "Arm" in limb.name} == {
        "LowerArm.L": "Palm.L",
        "LowerArm.R": "Palm.R",
    }


@pytest.mark.parametrize(
    "case", [f"glTF {MAN}, Fortune", f"FBX {MAN}, leaf bones kept", f"FBX {MAN}, Force Connect Children"]
)
def test_build_ik_limb_on_both_sides_mirrors_the_leaf_bones_an_exporter_added(case, fbx_files):
    """Quaternius' man keeps his feet under the root; below each shin hangs only the leaf bone an FBX export adds
    (``LowerLeg.L_end``, kept in his glTF file and by the FBX importer's default). Build IK Limb on Both Sides
    took each leaf for its shin's extremity, then refused: "its extremity would be 'LowerLeg.R_end', where the
    other side's is 'LowerLeg.L_end'", which is its mirror. Both legs are rigged."""
    obj = arrive(case, fbx_files)
    assert {"LowerLeg.L_end", "LowerLeg.R_end"} <= set(obj.data.bones.keys())
    bpy.ops.object.mode_set(mode="POSE")
    obj.data.bones.active = obj.data.bones["LowerLeg.L"]
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    extremities = {limb.name: limb.extremity for limb in obj.ik_rigger.limbs}
    assert sorted(extremities) == ["LowerLeg.L", "LowerLeg.R"]
    assert extremities["LowerLeg.R"] == extremities["LowerLeg.L"].replace(".L", ".R")
