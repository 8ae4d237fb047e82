"""Export (api.export) with every build option, keyed as an animator keys them: each file holds
several limbs built with different options (soft IK, stretch and Maximum Stretch, Foot Roll, Hinge
Joints, hidden chains, pole lines, Parent Switching with an Other Parent, Follow Handle Rotation, a
chain of 3, the three copy modes, Distance Limit, an aim), and a clip that moves the handles and
poles past the limbs' reach, keys soft IK off and on, stretch, the roll, IK/FK switched by keyed
snaps and a keyed parent switch. The .glb validates and three.js plays it, Blender's FBX importer
and assimp read the .fbx, every deform bone on every frame (the switch frames among them) where
Blender's rig puts it; the scene is left as it was. One parametrised test exports several option
sets per file, so Node runs a few times only."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import addon_utils
import bpy
import numpy as np
import pytest
from export_readers import DEGREES, POSITION, Y_UP, blender_rest, blender_world, compare, height, three_play
from helpers import import_bvh
from test_export import assert_fbx_plays_the_rig, assert_three_plays_the_rig, state
from test_hidden_chain import hidden_bones, import_gltf

from ik_rigger import api

# Frames of the clip: the snaps to FK and back to IK, the parent switches.
TO_FK, TO_IK = 12, 20
SWITCHES = (14, 22)


@dataclass(frozen=True)
class OptionSet:
    """A character, the options of each limb built on it (by its last bone), the limbs switched to FK and
    back by keyed snaps, and the limbs whose parent a keyed switch changes (to the last choice, then back
    to the first)."""

    load: Callable[[], bpy.types.Object]
    limbs: dict[str, dict[str, object]]
    snapped: tuple[str, ...] = ()
    switched: tuple[str, ...] = ()
    aim: str = ""
    solver: str = "LEGACY"
    stretched: tuple[str, ...] = ()  # deform bones the clip must stretch past their length


def _metarig() -> bpy.types.Object:
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    return bpy.context.active_object


def _mixamo_as_an_fbx_arrives() -> bpy.types.Object:
    """The Mixamo skeleton turned and scaled to centimetres, as an FBX import leaves an armature."""
    obj = import_bvh("mixamo_freebvh.bvh")
    obj.scale = (0.01, 0.01, 0.01)
    obj.rotation_euler = (math.pi / 2, 0.0, 0.4)
    return obj


def _fox() -> bpy.types.Object:
    return import_gltf("gltf_fox.glb")


SETS = {
    "metarig-soft-roll-hinge-switch": OptionSet(_metarig, {
        "shin.L": dict(soft_ik=0.1, foot_roll=True, pole_line=True),
        "shin.R": dict(chain_length=3, hinge_joints=True, copy_mode="ROTATION_SCALE", max_stretch=2.0),
        "forearm.L": dict(parent_switch=True, other_parent="spine.006", use_rotation=True, copy_mode="TRANSFORMS"),
        "forearm.R": dict(hinge_joints=True, distance_limit="INSIDE", pole_parent="HANDLE", max_stretch=1.0),
    }, snapped=("shin.L", "shin.R", "forearm.L"), switched=("forearm.L",), aim="HEAD", stretched=("thigh.L", "shin.L")),
    "metarig-itasc-long-stretch": OptionSet(_metarig, {
        "shin.L": dict(copy_mode="TRANSFORMS", max_stretch=10.0, use_pole=False, parent_switch=True),
        "shin.R": dict(soft_ik=0.25, foot_roll=True, use_rotation=True, max_stretch=3.0, pole_line=False),
        "forearm.L": dict(chain_length=3, soft_ik=0.125, copy_mode="ROTATION_SCALE", distance_limit="OUTSIDE",
                          distance_method="ITASC"),
        "forearm.R": dict(parent_switch=True, pole_parent="HANDLE", shapes=False),
    }, snapped=("shin.L", "forearm.R"), switched=("shin.L", "forearm.R"), aim="EYES", solver="ITASC"),
    # Turned and scaled as an FBX import leaves it; the foot copying the handle's transforms leaves the
    # shin's end where the handle goes out of reach.
    "mixamo-imported-roll-transforms-chain3": OptionSet(_mixamo_as_an_fbx_arrives, {
        "mixamorig:LeftLeg": dict(soft_ik=0.1, foot_roll=True, max_stretch=2.0),
        "mixamorig:RightLeg": dict(hinge_joints=True, copy_mode="TRANSFORMS", parent_switch=True),
        "mixamorig:LeftForeArm": dict(use_rotation=True, chain_length=3, max_stretch=3.0),
    }, snapped=("mixamorig:LeftForeArm", "mixamorig:RightLeg"), switched=("mixamorig:RightLeg",),
        stretched=("mixamorig:LeftUpLeg", "mixamorig:LeftLeg")),
    # The Fox's limbs are hidden chains; its three clips keep their motion on the controls.
    "fox-hidden-chains": OptionSet(_fox, {
        "b_LeftForeArm_010": dict(soft_ik=0.2, max_stretch=3.0),
        "b_RightForeArm_07": dict(parent_switch=True, use_rotation=True, hinge_joints=True),
        "b_LeftFoot01_017": dict(max_stretch=2.5, copy_mode="TRANSFORMS"),
    }, snapped=("b_RightForeArm_07",), switched=("b_RightForeArm_07",),
        stretched=("b_LeftLeg02_016", "b_LeftFoot01_017")),
}


def _key(owner: bpy.types.PoseBone, path: str, values: dict[int, object]) -> None:
    for frame, value in values.items():
        if path.startswith('["'):
            owner[path[2:-2]] = value
        else:
            setattr(owner, path, value)
        owner.keyframe_insert(path, frame=frame)


def _key_controls(obj: bpy.types.Object, limb: api.Limb, number: int) -> None:
    """The handle past the limb's reach and back, the pole swung, stretch and soft IK keyed on and off,
    the roll rocked forward, back and onto the toe: in the active clip."""
    bones = obj.pose.bones
    handle = bones[limb.bones["HANDLE"]]
    # The chain's reach, in the handle's space (its parent's rest: armature units).
    size = sum((bones[name].head - bones[name].tail).length for name in limb.chain)
    _key(handle, "location", {frame: (far * size, -far * size, far * size * math.cos(number))
                              for frame, far in {1: 0.0, 8: 0.3, 16: -0.5, 24: 0.8, 30: 0.0}.items()})
    if "POLE" in limb.bones:
        _key(bones[limb.bones["POLE"]], "location", {frame: (far * size, 0.5 * far * size, 0.0)
                                                     for frame, far in {1: 0.0, 10: 0.4, 25: -1.2}.items()})
    if "stretch" in handle:
        _key(handle, '["stretch"]', {1: 0.0, 10: 1.0, 22: 1.0, 27: 0.0})
    if handle.get("soft_ik"):
        soft = float(handle["soft_ik"])
        _key(handle, '["soft_ik"]', {1: soft, 12: 0.0, 18: soft})
    if "ROLL" in limb.bones:
        roll = bones[limb.bones["ROLL"]]
        roll.rotation_mode = "XYZ"
        # Forward onto the ball and the toe, back onto the heel, banked and spun.
        _key(roll, "rotation_euler", {1: (0.0, 0.0, 0.0), 9: (0.6, 0.0, 0.0), 15: (-0.4, 0.3, 0.0),
                                      23: (1.2, -0.3, 0.4)})
    if "DISTANCE_CENTER" in limb.bones:
        _key(bones[limb.bones["DISTANCE_CENTER"]], "location", {1: (0.0, 0.0, 0.0), 18: (0.2 * size, 0.0, 0.0)})
    if number == 0:
        _key(handle, '["ik_weight"]', {1: 1.0, 6: 0.4, 11: 1.0})


def _key_aims(obj: bpy.types.Object, size: float) -> int:
    """Each aim control (the bones that carry ``aim``) swung aside and its aim blended out and back in;
    returns how many."""
    controls = [bone for bone in obj.pose.bones if "aim" in bone]
    for control in controls:
        _key(control, "location", {1: (0.0, 0.0, 0.0), 12: (size, 0.0, 0.5 * size), 26: (-size, 0.0, 0.0)})
        _key(control, '["aim"]', {1: 1.0, 8: 0.0, 16: 1.0})
    return len(controls)


def _rig_and_key(case: OptionSet) -> bpy.types.Object:
    obj = case.load()
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    for last, options in case.limbs.items():
        api.build(obj, last, **options)
    if case.aim:
        api.add_aim(obj, case.aim)
    obj.pose.ik_solver = case.solver
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 30
    limbs = {limb.name: limb for limb in api.limbs(obj)}
    for number, limb in enumerate(limbs.values()):
        _key_controls(obj, limb, number)
    assert _key_aims(obj, max(bone.length for bone in obj.data.bones)) or not case.aim, "no aim control to key"
    for name in case.snapped:
        api.snap_limb(obj, name, "FK", key=True, frame=TO_FK)
        api.snap_limb(obj, name, "IK", key=True, frame=TO_IK)
    for name in case.switched:
        choices = api.parent_choices(obj, name)
        api.switch_parent(obj, name, len(choices) - 1, key=True, frame=SWITCHES[0])
        api.switch_parent(obj, name, 0, key=True, frame=SWITCHES[1])
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def _assert_the_clip_shows_the_options(obj: bpy.types.Object, case: OptionSet) -> None:
    """What the clip keys plays in Blender: the limbs switched to FK and back, the parents switched, the
    bones named stretched past their length (the scale the file must hold)."""
    handles = {limb.name: obj.pose.bones[limb.bones["HANDLE"]] for limb in api.limbs(obj)}
    action = obj.animation_data.action
    scene = bpy.context.scene
    for name in case.snapped:
        scene.frame_set(TO_FK)
        assert handles[name]["ik_fk"] == 0.0, name
        scene.frame_set(TO_IK)
        assert handles[name]["ik_fk"] == 1.0, name
    for name in case.switched:
        scene.frame_set(SWITCHES[0])
        assert handles[name]["parent"] == len(api.parent_choices(obj, name)) - 1, name
        scene.frame_set(SWITCHES[1])
        assert handles[name]["parent"] == 0, name
    if case.stretched:
        played = blender_world(obj, action, list(range(1, 31)), list(case.stretched))
        scales = [np.linalg.norm(frame[name][:3, :3], axis=0)[1] / np.linalg.norm(obj.matrix_world.col[1][:3])
                  for frame in played for name in case.stretched]
        assert max(scales) > 1.02, f"the clip stretches none of {case.stretched}"
    scene.frame_set(1)


def _assert_same_state(now: dict, before: dict, what: str, solver: str) -> None:
    """``state()`` as it was. Under iTaSC, but the evaluated pose: iTaSC starts each solve from the pose
    shown before, so the current frame's pose, reached again from the clip's last frame, may differ (the
    export warns of it)."""
    kept = [key for key in before if key != "evaluated" or solver != "ITASC"]
    assert {key: now[key] for key in kept} == {key: before[key] for key in kept}, f"{what} changed the scene"


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_option_set_plays_the_same_in_three_js_and_through_fbx(tmp_path: Path, name: str):
    case = SETS[name]
    obj = _rig_and_key(case)
    if name.startswith("fox"):
        assert hidden_bones(obj), "the Fox's limbs are built on hidden chains"
    _assert_the_clip_shows_the_options(obj, case)
    for suffix in ("glb", "fbx"):
        before = state()
        report = api.export(obj, str(tmp_path / f"{name}.{suffix}"))
        _assert_same_state(state(), before, f"the .{suffix} export", case.solver)
        # A warning of several roots is the skeleton's own, not the options'.
        warned = [warning for warning in report.warnings if "roots" not in warning]
        assert warned == ([f"the armature '{obj.name}' solves its IK with iTaSC, whose pose on a frame depends on "
                           "the frames shown before it: the file holds each clip as it plays from its first frame, "
                           "and the pose shown on the current frame may have moved (play from the clip's start to "
                           "see the file's); for poses that depend on their frame only, set the IK Solver "
                           "(Armature properties) to Standard"] if case.solver == "ITASC" else []), warned
        if suffix == "glb":
            assert_three_plays_the_rig(obj, tmp_path / f"{name}.glb", report)
        else:
            assert_fbx_plays_the_rig(obj, tmp_path / f"{name}.fbx", report)


def test_switches_set_by_hand_and_not_keyed_stay_as_they_were(tmp_path: Path):
    """An animator looks at a frame with IK/FK, the parent, soft IK, stretch and an aim set by hand over
    their keys, and exports: before, the frames played put every keyed switch back to its keys (the bones'
    own transforms alone were given back), so the limbs jumped back to IK and the aim to its keys."""
    obj = _rig_and_key(SETS["metarig-soft-roll-hinge-switch"])
    scene = bpy.context.scene
    scene.frame_set(5)
    limbs = {limb.name: obj.pose.bones[limb.bones["HANDLE"]] for limb in api.limbs(obj)}
    aim = next(bone for bone in obj.pose.bones if "aim" in bone)
    by_hand = [(limbs["forearm.L"], "ik_fk", 0.5), (limbs["forearm.L"], "parent", 1),
               (limbs["shin.L"], "soft_ik", 0.05), (limbs["shin.L"], "stretch", 0.3), (aim, "aim", 0.25)]
    for bone, name, value in by_hand:
        assert bone[name] != value, (bone.name, name)
        bone[name] = value
    obj.update_tag()
    before = state()
    api.export(obj, str(tmp_path / "shot.glb"))
    assert [bone[name] for bone, name, _ in by_hand] == pytest.approx([value for _, _, value in by_hand])
    assert state() == before


def test_a_clip_that_keys_no_switch_plays_with_the_switches_as_they_are(tmp_path: Path):
    """Two clips: 'Arm FK' keys the arm's IK/FK at FK and its soft IK off, 'Walk' keys the handles only.
    Played alone in Blender, 'Walk' plays with the switches as they are (IK); before, the export played it
    after 'Arm FK' and baked it in FK, with the soft IK off, the values that clip left."""
    obj = _metarig()
    api.build(obj, "forearm.L", soft_ik=0.1)
    api.build(obj, "shin.L", soft_ik=0.1)
    handles = {limb.name: obj.pose.bones[limb.bones["HANDLE"]] for limb in api.limbs(obj)}
    for number, limb in enumerate(api.limbs(obj)):
        _key_controls(obj, limb, number)
    walk = obj.animation_data.action
    walk.name = "Walk"
    fk = bpy.data.actions.new("Arm FK")
    fk.use_fake_user = True
    obj.animation_data.action = fk
    if hasattr(obj.animation_data, "action_slot") and fk.slots:
        obj.animation_data.action_slot = fk.slots[0]
    arm, leg = handles["forearm.L"], handles["shin.L"]
    _key(arm, '["ik_fk"]', {1: 0.0, 10: 0.0})
    _key(leg, '["soft_ik"]', {1: 0.0, 10: 0.0})
    _key(arm, "location", {1: (0.0, 0.0, 0.0), 10: (0.1, 0.0, 0.0)})
    obj.animation_data.action = walk
    if hasattr(obj.animation_data, "action_slot") and walk.slots:
        obj.animation_data.action_slot = walk.slots[0]
    arm["ik_fk"], leg["soft_ik"] = 1.0, 0.1
    bpy.ops.object.mode_set(mode="OBJECT")
    before = state()
    report = api.export(obj, str(tmp_path / "clips.glb"))
    assert state() == before and (arm["ik_fk"], leg["soft_ik"]) == pytest.approx((1.0, 0.1))
    assert [clip.name for clip in report.clips] == ["Arm FK", "Walk"]
    # 'Walk' alone, as Blender plays it with the switches as they are (not after 'Arm FK').
    expected = blender_world(obj, walk, list(range(1, 31)), list(report.joints))
    scene = bpy.context.scene
    played = three_play(str(tmp_path / "clips.glb"), scene.render.fps / scene.render.fps_base)
    moved, turned = compare(played.clips["Walk"], played.rest, expected, blender_rest(obj, list(report.joints)),
                            height(obj), Y_UP)
    assert moved < POSITION and turned < DEGREES, (moved, turned)


@pytest.mark.parametrize("inherit", ["FULL", "NONE"])
def test_a_foot_scaled_unevenly_over_a_toe_that_does_not_take_its_scale_is_warned_of(tmp_path: Path,
                                                                                       inherit: str):
    """The foot copies its handle's rotation and scale; the handle is scaled along one axis. A toe that
    takes the foot's scale (Inherit Scale Full) is sheared with it in Blender and in the file alike; one
    that does not (None) is sheared against the foot, which glTF and FBX cannot hold: the readers turned
    it 4.7 degrees off without a word before."""
    obj = _metarig()
    obj.data.bones["toe.L"].inherit_scale = inherit
    handle = obj.pose.bones[api.build(obj, "shin.L", copy_mode="ROTATION_SCALE")[0].bones["HANDLE"]]
    _key(handle, "scale", {1: (1.0, 1.0, 1.0), 10: (1.0, 1.4, 0.7), 20: (1.3, 1.3, 1.3)})
    bpy.ops.object.mode_set(mode="OBJECT")
    report = api.export(obj, str(tmp_path / "feet.glb"))
    warned = [warning for warning in report.warnings if "roots" not in warning]
    if inherit == "FULL":
        assert warned == []
        assert_three_plays_the_rig(obj, tmp_path / "feet.glb", report)
        return
    assert len(warned) == 1 and warned[0].startswith("the bone 'toe.L' plays up to 4.7 degrees off in the file "
                                                     "(frame 10 of 'metarigAction')"), warned
    assert "its parent 'foot.L' scales unevenly there" in warned[0] and "Inherit Scale 'NONE'" in warned[0]


def test_a_bone_scaled_to_nothing_exports_and_plays_as_the_rig_does(tmp_path: Path):
    """An animator hides the right hand (its fingers with it) by keying its scale to 0, while the left leg's IK
    plays: before, the export failed with numpy's 'Singular matrix' for the fingers under it."""
    obj = _metarig()
    api.build(obj, "shin.L", soft_ik=0.1)
    for number, limb in enumerate(api.limbs(obj)):
        _key_controls(obj, limb, number)
    _key(obj.pose.bones["hand.R"], "scale", {1: (1.0, 1.0, 1.0), 10: (0.0, 0.0, 0.0), 20: (1.0, 1.0, 1.0)})
    bpy.ops.object.mode_set(mode="OBJECT")
    before = state()
    report = api.export(obj, str(tmp_path / "hidden.glb"))
    assert state() == before and [warning for warning in report.warnings if "roots" not in warning] == []
    assert_three_plays_the_rig(obj, tmp_path / "hidden.glb", report)
    report = api.export(obj, str(tmp_path / "hidden.fbx"))
    assert_fbx_plays_the_rig(obj, tmp_path / "hidden.fbx", report)

