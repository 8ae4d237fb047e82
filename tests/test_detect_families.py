"""Skeleton families through Blender's own importers: CMU's BVH conversions, a VRM 0.0 avatar,
Quaternius' animals, Cesium Man's arms and Unreal's own IK bones.

Quaternius' T-Rex and horse and Cesium Man are real files (tests/data). No CMU conversion, VRM 0.0
avatar or Unreal skeleton with a licence to redistribute was at hand: those are written here
from their families' documented layouts (CMU's joint names and its skeleton's offsets, VRM
0.0's humanoid bones at rest with no rotation, the Unreal mannequin's bones) and imported
with Blender's BVH, glTF and FBX importers at their default settings.
"""

from __future__ import annotations

import base64
import json
import shutil
import struct
from pathlib import Path

import bpy
import pytest
from helpers import DATA, at_rest_alone, make_armature, through_fbx
from test_batch_safety import report_of, run
from test_detect import FAMILIES, human
from test_detect_real import assert_handles_move_chain_ends, import_gltf

from ik_rigger import api
from ik_rigger.core.detect import ARM, LEG, detect_limbs
from ik_rigger.rig.skeleton import read_skeleton

Offset = tuple[float, float, float]
Joint = tuple[str, Offset, list]  # name, offset from the parent joint, children


def summary(detection) -> list[tuple[str, str | None, tuple[str, ...], str | None]]:
    return [(limb.kind, limb.side, limb.chain, limb.extremity) for limb in detection.limbs]


def handle_to_end(obj: bpy.types.Object, last: str, end: str) -> float:
    """How far the handle of the limb ending at ``last`` starts from ``end``'s head, in rest space."""
    bones = obj.data.bones
    return (bones[obj.ik_rigger.limb_of(last).handle].head_local - bones[end].head_local).length


# CMU's skeleton as its BVH conversions carry it (offsets of 01_01, in its own units): each hip and
# shoulder joint hangs from a connector at the hips or the chest (LHipJoint, LeftShoulder).
def _cmu_leg(side: str, x: float) -> Joint:
    return (f"{side[0]}HipJoint", (0, 0, 0), [(f"{side}UpLeg", (1.36306 * x, -1.79463, 0.83929), [
        (f"{side}Leg", (2.44811 * x, -6.72613, 0), [(f"{side}Foot", (2.5622 * x, -7.03959, 0), [
            (f"{side}ToeBase", (0.15764 * x, -0.43311, 2.32255), [])])])])])


def _cmu_arm(side: str, x: float) -> Joint:
    return (f"{side}Shoulder", (0, 0, 0), [(f"{side}Arm", (3.36241 * x, 1.20089, -0.31121), [
        (f"{side}ForeArm", (4.983 * x, 0, 0), [(f"{side}Hand", (3.48356 * x, 0, 0), [
            (f"{side}FingerBase", (0.71526 * x, 0, 0), [(f"{side}HandIndex1", (0.62921 * x, 0, 0), [])]),
            (f"{side[0]}Thumb", (0, 0, 0), [])])])])])


CMU: Joint = ("Hips", (0, 0, 0), [_cmu_leg("Left", 1), _cmu_leg("Right", -1), ("LowerBack", (0, 0, 0), [
    ("Spine", (0.02827, 2.03559, -0.19338), [("Spine1", (0.05672, 2.04885, -0.04275), [
        ("Neck", (0, 0, 0), [("Neck1", (-0.05417, 1.74624, 0.17202), [("Head", (0.10407, 1.76136, -0.12397), [])])]),
        _cmu_arm("Left", 1), _cmu_arm("Right", -1)])])])])
# The 3ds Max-friendly release names each bone after the joint at its head, as Biped does.
CMU_3DS_MAX = {f"{side}{old}": f"{side}{new}" for side in ("Left", "Right") for old, new in (
    ("UpLeg", "Hip"), ("Leg", "Knee"), ("Foot", "Ankle"), ("ToeBase", "Toe"), ("Shoulder", "Collar"),
    ("Arm", "Shoulder"), ("ForeArm", "Elbow"), ("Hand", "Wrist"))}


def write_bvh(path: Path, root: Joint, names: dict[str, str]) -> None:
    """``root``'s hierarchy as a BVH file with one frame at rest, joints renamed by ``names``."""
    lines, channels = ["HIERARCHY"], [0]

    def write(joint: Joint, depth: int) -> None:
        name, offset, children = joint
        pad = "\t" * depth
        count = 3 if depth else 6
        channels[0] += count
        lines.extend([f"{pad}{'JOINT' if depth else 'ROOT'} {names.get(name, name)}", pad + "{",
                      f"{pad}\tOFFSET {offset[0]:.5f} {offset[1]:.5f} {offset[2]:.5f}",
                      f"{pad}\tCHANNELS {count} {'' if depth else 'Xposition Yposition Zposition '}"
                      "Zrotation Yrotation Xrotation"])
        for child in children:
            write(child, depth + 1)
        if not children:  # the end site half a bone on, as the conversions have it
            end = [0.5 * value for value in offset] if any(offset) else [0.0, 0.5, 0.0]
            lines.extend([f"{pad}\tEnd Site", pad + "\t{", f"{pad}\t\tOFFSET {end[0]:.5f} {end[1]:.5f} {end[2]:.5f}",
                          pad + "\t}"])
        lines.append(pad + "}")

    write(root, 0)
    lines.extend(["MOTION", "Frames: 1", "Frame Time: 0.008333", " ".join(["0.0"] * channels[0])])
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("names", [CMU_3DS_MAX, {}], ids=["3ds max-friendly", "motionbuilder-friendly"])
def test_cmus_legs_below_the_hip_connector(names, tmp_path):
    """``Hips > LHipJoint > LeftHip > LeftKnee > LeftAnkle``: LHipJoint, from the hips to the hip
    joint, is the pelvis' connector, not the first half of the thigh; the leg is LeftHip > LeftKnee."""
    path = tmp_path / "cmu.bvh"
    write_bvh(path, CMU, names)
    bpy.ops.import_anim.bvh(filepath=str(path))
    obj = bpy.context.active_object
    at_rest_alone(obj)
    detection = detect_limbs(read_skeleton(obj))

    def name(old: str) -> str:
        return names.get(old, old)

    sides = ("Left", "Right")
    assert summary(detection) == [
        (LEG, side[0], (name(f"{side}UpLeg"), name(f"{side}Leg")), name(f"{side}Foot")) for side in sides
    ] + [(ARM, side[0], (name(f"{side}Arm"), name(f"{side}ForeArm")), name(f"{side}Hand")) for side in sides]
    assert detection.skipped == ()
    built = api.auto_rig(obj)
    assert sorted(limb.name for limb in built) == sorted(limb.last for limb in detection.limbs)
    assert_handles_move_chain_ends(obj, {limb.last: 2 for limb in detection.limbs})
    for side in ("Left", "Right"):
        assert handle_to_end(obj, name(f"{side}Leg"), name(f"{side}Foot")) < 1e-4 * obj.dimensions.length
    for connector in ("LHipJoint", "RHipJoint", name("LeftShoulder")):
        assert not obj.pose.bones[connector].constraints


def skinned_gltf(joints: list[tuple[str, str | None, Offset]], copyright_note: str) -> dict:
    """A glTF of ``joints`` (name, parent, position; no rotation, as VRM 0.0 keeps them at rest)
    under a root node, with one triangle skinned to them so that the importer makes the armature."""
    index = {name: number for number, (name, _, _) in enumerate(joints)}
    nodes: list[dict] = []
    for name, parent, position in joints:
        origin = joints[index[parent]][2] if parent else (0.0, 0.0, 0.0)
        node: dict = {"name": name, "translation": [a - b for a, b in zip(position, origin)]}
        children = [index[child] for child, above, _ in joints if above == name]
        if children:
            node["children"] = children
        nodes.append(node)
    nodes += [{"name": "Root", "children": [index[joints[0][0]], len(joints) + 1]},
              {"name": "Body", "mesh": 0, "skin": 0}]
    data = (struct.pack("<9f", 0, 0, 0, 0.1, 0, 0, 0, 0.1, 0) + bytes(12) + struct.pack("<12f", *[1, 0, 0, 0] * 3))
    return {
        "asset": {"version": "2.0", "copyright": copyright_note}, "scene": 0, "scenes": [{"nodes": [len(joints)]}],
        "nodes": nodes, "skins": [{"joints": list(range(len(joints))), "skeleton": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}}]}],
        "buffers": [{"byteLength": len(data),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(data).decode()}],
        "bufferViews": [{"buffer": 0, "byteOffset": start, "byteLength": length}
                        for start, length in ((0, 36), (36, 12), (48, 48))],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0],
                       "max": [0.1, 0.1, 0]},
                      {"bufferView": 1, "componentType": 5121, "count": 3, "type": "VEC4"},
                      {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"}],
    }


def vrm0_humanoid() -> list[tuple[str, str | None, Offset]]:
    """VRoid's humanoid bones as a VRM 0.0 file keeps them: glTF's Y up, facing -Z (the character's
    left at -X), in T-pose, every node without rotation; knees a little forward, elbows a little back."""
    joints: list[tuple[str, str | None, Offset]] = [
        ("J_Bip_C_Hips", None, (0, 0.95, 0)), ("J_Bip_C_Spine", "J_Bip_C_Hips", (0, 1.05, 0)),
        ("J_Bip_C_Chest", "J_Bip_C_Spine", (0, 1.2, 0)), ("J_Bip_C_Neck", "J_Bip_C_Chest", (0, 1.45, 0)),
        ("J_Bip_C_Head", "J_Bip_C_Neck", (0, 1.55, 0))]
    for side, x in (("L", -1.0), ("R", 1.0)):
        bone = f"J_Bip_{side}_"
        joints += [(bone + "UpperLeg", "J_Bip_C_Hips", (0.09 * x, 0.9, 0)),
                   (bone + "LowerLeg", bone + "UpperLeg", (0.09 * x, 0.5, -0.01)),
                   (bone + "Foot", bone + "LowerLeg", (0.09 * x, 0.08, 0.01)),
                   (bone + "ToeBase", bone + "Foot", (0.09 * x, 0.02, -0.1)),
                   (bone + "Shoulder", "J_Bip_C_Chest", (0.03 * x, 1.4, 0)),
                   (bone + "UpperArm", bone + "Shoulder", (0.15 * x, 1.4, 0)),
                   (bone + "LowerArm", bone + "UpperArm", (0.42 * x, 1.4, 0.01)),
                   (bone + "Hand", bone + "LowerArm", (0.66 * x, 1.4, 0)),
                   (bone + "Middle1", bone + "Hand", (0.74 * x, 1.4, 0))]
    return joints


def test_a_vrm_avatar_at_the_gltf_importers_default_bone_shapes(tmp_path):
    """Every bone of a VRM 0.0 avatar points up (+Z) after glTF's default import: the legs fold back on
    themselves. Auto-Rig solves every limb on a hidden chain from joint to joint, the bones as they are
    (before, the knees were refused); Fix Bone Orientation, asked for, turns the bones instead."""
    path = tmp_path / "avatar.gltf"
    path.write_text(json.dumps(skinned_gltf(vrm0_humanoid(), "a VRM 0.0 humanoid's layout")))
    obj = import_gltf(str(path))
    detection = detect_limbs(read_skeleton(obj))
    legs = [limb for limb in detection.limbs if limb.kind == LEG]
    assert [limb.chain for limb in legs] == [("J_Bip_L_UpperLeg", "J_Bip_L_LowerLeg"),
                                              ("J_Bip_R_UpperLeg", "J_Bip_R_LowerLeg")]
    assert all(limb.tails_elsewhere for limb in detection.limbs)
    tails = {bone.name: bone.tail_local.copy() for bone in obj.data.bones}
    for fix in (False, True):
        skipped: list[tuple[str, str]] = []
        built = api.auto_rig(obj, skipped=skipped, fix_orientation=fix)
        assert len(built) == 4 and not [bone for bone, _ in skipped if "Leg" in bone or "Arm" in bone]
        for side in "LR":
            assert handle_to_end(obj, f"J_Bip_{side}_LowerLeg", f"J_Bip_{side}_Foot") < 1e-4
            assert handle_to_end(obj, f"J_Bip_{side}_LowerArm", f"J_Bip_{side}_Hand") < 1e-4
        assert_handles_move_chain_ends(obj, {limb.name: 2 for limb in built})
        if not fix:
            assert all(obj.data.bones[name].tail_local == tail for name, tail in tails.items())
            for limb in built:
                api.remove(obj, limb.name)


def test_a_vrm_avatars_legs_alone_are_rigged_too(tmp_path):
    """Legs alone, every bone pointing up: both rigged, by the API and in the window alike (before,
    nothing was, with an error naming Fix Bone Orientation)."""
    legs = [joint for joint in vrm0_humanoid() if "Arm" not in joint[0] and "Hand" not in joint[0]
            and "Middle" not in joint[0]]
    path = tmp_path / "legs.gltf"
    path.write_text(json.dumps(skinned_gltf(legs, "a VRM 0.0 humanoid's legs")))
    obj = import_gltf(str(path))
    assert sorted(limb.name for limb in api.auto_rig(obj)) == ["J_Bip_L_LowerLeg", "J_Bip_R_LowerLeg"]
    for name in ("J_Bip_L_LowerLeg", "J_Bip_R_LowerLeg"):
        api.remove(obj, name)
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    assert_handles_move_chain_ends(obj, {"J_Bip_L_LowerLeg": 2, "J_Bip_R_LowerLeg": 2})


TREX_LEGS = [(LEG, side, (f"{end}Leg.{side}", f"{end}UpLeg.{side}", f"{end}LowLeg.{side}"), f"{end}Foot.{side}")
             for end in ("Front", "Back") for side in "LR"]


def test_quaternius_dinosaurs_legs_of_shortened_words():
    """``Body > BackLeg.L > BackUpLeg.L > BackLowLeg.L``, the hind feet under the root: four legs of
    three bones, once their tails (stubs at the default bone shapes) are pointed at the joints."""
    obj = import_gltf("gltf_quaternius_trex_skeleton.gltf")
    skeleton = read_skeleton(obj)
    assert summary(detect_limbs(skeleton, tails_fixed=True)) == TREX_LEGS
    # Read as imported, each leg's stub tails would not carry IK: detection alone skips them.
    skipped = detect_limbs(skeleton).skipped
    assert {item.bone: item.tails_off for item in skipped} == {
        f"{end}LowLeg.{side}": True for end in ("Front", "Back") for side in "LR"}
    # Auto-Rig solves them on hidden chains (before, it refused, naming Fix Bone Orientation).
    for fix in (False, True):
        built = api.auto_rig(obj, fix_orientation=fix)
        assert sorted(limb.name for limb in built) == sorted(chain[-1] for _, _, chain, _ in TREX_LEGS)
        for _, _, chain, foot in TREX_LEGS:
            assert handle_to_end(obj, chain[-1], foot) < 1e-4 * (obj.data.bones[chain[2]].head_local
                                                                 - obj.data.bones[chain[1]].head_local).length
        assert_handles_move_chain_ends(obj, {chain[-1]: 3 for _, _, chain, _ in TREX_LEGS})
        if not fix:
            for limb in built:
                api.remove(obj, limb.name)


def test_quaternius_horses_front_legs_end_in_a_leaf_its_hooves_under_the_root():
    """Quaternius' horse, of the same animals: ``FrontLowLeg.L`` ends its leg with no child, and the
    hoof ``FrontFoot.L`` hangs from the root at its end. Rigged as imported, at the default settings."""
    obj = import_gltf("gltf_quaternius_horse_skeleton.gltf")
    detection = detect_limbs(read_skeleton(obj))
    assert summary(detection) == TREX_LEGS
    assert detection.skipped == ()
    built = api.auto_rig(obj)
    assert sorted(limb.name for limb in built) == sorted(chain[-1] for _, _, chain, _ in TREX_LEGS)
    # Their last tails stop short of the hooves: each leg is solved on a hidden chain ending on its hoof.
    assert all(limb.notes and all("hidden chain" in note for note in limb.notes) for limb in built)
    assert_handles_move_chain_ends(obj, {chain[-1]: 3 for _, _, chain, _ in TREX_LEGS})


def test_quaternius_dinosaur_through_fbx(tmp_path):
    """The same skeleton through Blender's FBX exporter and importer (Quaternius ships FBX files too)."""
    import_gltf("gltf_quaternius_trex_skeleton.gltf")
    path = tmp_path / "trex.fbx"
    bpy.ops.export_scene.fbx(filepath=str(path), add_leaf_bones=False)
    for item in list(bpy.data.objects):
        bpy.data.objects.remove(item)
    bpy.ops.import_scene.fbx(filepath=str(path))
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    at_rest_alone(obj)
    assert summary(detect_limbs(read_skeleton(obj), tails_fixed=True)) == TREX_LEGS
    built = api.auto_rig(obj, fix_orientation=True)
    assert len(built) == 4
    assert_handles_move_chain_ends(obj, {chain[-1]: 3 for _, _, chain, _ in TREX_LEGS})


def test_cesium_mans_arms_numbered_as_collada_copies():
    """``Skeleton_arm_joint_L__4_ > __3_ > __2_``: COLLADA's copies of one name, numbered in no order;
    the hierarchy orders them: upper arm, forearm, and the hand, a leaf."""
    obj = import_gltf("gltf_cesium_man_skeleton.gltf")
    arms = [limb for limb in detect_limbs(read_skeleton(obj)).limbs if limb.kind == ARM]
    assert [(limb.side, limb.chain, limb.extremity) for limb in arms] == [
        ("L", ("Skeleton_arm_joint_L__4_", "Skeleton_arm_joint_L__3_"), "Skeleton_arm_joint_L__2_"),
        ("R", ("Skeleton_arm_joint_R", "Skeleton_arm_joint_R__2_"), "Skeleton_arm_joint_R__3_")]
    built = api.auto_rig(obj, fix_orientation=True)
    assert len(built) == 4
    for limb in arms:
        assert handle_to_end(obj, limb.last, limb.extremity) < 1e-4
    assert_handles_move_chain_ends(obj, {limb.name: 2 for limb in built})


UNREAL_IK = [("ik_foot_root", None, (0, 0, 0), (0, 0.1, 0)),
             ("ik_foot_l", "ik_foot_root", (0.1, 0, 0.1), (0.1, 0.1, 0.1)),
             ("ik_foot_r", "ik_foot_root", (-0.1, 0, 0.1), (-0.1, 0.1, 0.1)),
             ("ik_hand_root", None, (0, 0, 0), (0, 0.1, 0)),
             ("ik_hand_gun", "ik_hand_root", (-0.7, 0, 1.42), (-0.7, 0.1, 1.42)),
             ("ik_hand_l", "ik_hand_gun", (0.7, 0, 1.42), (0.7, 0.1, 1.42)),
             ("ik_hand_r", "ik_hand_gun", (-0.7, 0, 1.42), (-0.7, 0.1, 1.42))]


def test_unreals_own_ik_bones_are_noted_not_rigged(tmp_path):
    """The mannequin's ik_foot_l, ik_hand_gun ... follow the feet and hands in its engine: a note
    says they were left alone on purpose, through Blender's FBX exporter and importer."""
    bones = [(name, head, tail, parent, False) for name, parent, head, tail in human(FAMILIES["unreal"])]
    bones += [(name, head, tail, parent, False) for name, parent, head, tail in UNREAL_IK]
    made = make_armature(bones, mode="OBJECT")
    obj = through_fbx(made, tmp_path)
    at_rest_alone(obj)
    detection = detect_limbs(read_skeleton(obj))
    assert len(detection.limbs) == 4 and detection.skipped == ()
    own = sorted(name for name, _, _, _ in UNREAL_IK)
    assert detection.notes == (f"{', '.join(repr(name) for name in own)}: the skeleton's own IK bones, not limbs: "
                               "left as they are",)
    assert "note: 'ik_foot_l'" in detection.describe()
    notes: list[str] = []
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped, notes=notes)
    assert len(built) == 4 and skipped == [] and notes == list(detection.notes)
    for name in own:
        assert not obj.pose.bones[name].constraints


def test_the_batch_rigs_each_family_at_its_importers_default_settings(tmp_path):
    """The batch command on the families' files, one run: every limb rigged, on a hidden chain where the
    import left the bones' tails off their joints."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_bvh(inputs / "cmu.bvh", CMU, CMU_3DS_MAX)
    (inputs / "avatar.gltf").write_text(json.dumps(skinned_gltf(vrm0_humanoid(), "a VRM 0.0 humanoid's layout")))
    for name in ("gltf_quaternius_trex_skeleton.gltf", "gltf_quaternius_horse_skeleton.gltf",
                 "gltf_cesium_man_skeleton.gltf"):
        shutil.copy(DATA / name, inputs / name)
    result = run(str(inputs), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"),
                 keep=[inputs])
    assert result.returncode == 0, result.stdout + result.stderr
    report = report_of(tmp_path / "report.json")
    rigged = {name: sorted(chain[-1] for armature in entry["armatures"] for chain in armature["limbs"])
              for name, entry in report.items()}
    assert rigged == {
        "cmu.bvh": ["LeftElbow", "LeftKnee", "RightElbow", "RightKnee"],
        "avatar.gltf": ["J_Bip_L_LowerArm", "J_Bip_L_LowerLeg", "J_Bip_R_LowerArm", "J_Bip_R_LowerLeg"],
        "gltf_quaternius_trex_skeleton.gltf": ["BackLowLeg.L", "BackLowLeg.R", "FrontLowLeg.L", "FrontLowLeg.R"],
        "gltf_quaternius_horse_skeleton.gltf": ["BackLowLeg.L", "BackLowLeg.R", "FrontLowLeg.L", "FrontLowLeg.R"],
        "gltf_cesium_man_skeleton.gltf": ["Skeleton_arm_joint_L__3_", "Skeleton_arm_joint_R__2_", "leg_joint_L_2",
                                          "leg_joint_R_2"]}
    assert all(not armature["skipped"] for entry in report.values() for armature in entry["armatures"])


# Games whose characters modders rig in Blender, each naming its bones its own way: a tag before the name
# (Team Fortress 2's "bip_", Skyrim's "NPC", The Sims' "b__", Grand Theft Auto's "SKEL_"), the side in the middle
# (Skyrim's "NPC L Thigh", The Sims' "b__L_Thigh__", XNALara's "leg left thigh"), a tag in brackets saying the
# side again (Skyrim's "[LThg]"), or the limb before its segment (Fallout 4's "LLeg_Calf", "LArm_UpperArm").
GAMES = ("team fortress 2", "skyrim", "skyrim renamed for blender", "the sims", "fallout 4", "grand theft auto",
         "xnalara")


@pytest.mark.parametrize("game", GAMES)
def test_game_skeletons_are_rigged_as_they_arrive_and_one_side_mirrors(game, tmp_path):
    names = FAMILIES[game]
    bones = [(name, head, tail, parent, False) for name, parent, head, tail in human(names)]
    obj = through_fbx(make_armature(bones, mode="OBJECT"), tmp_path)
    at_rest_alone(obj)
    built = api.auto_rig(obj)
    side_names = {"L": ("L", "l", "Left", "left"), "R": ("R", "r", "Right", "right")}
    wanted = {names[role].format(**dict(zip(("L", "l", "Left", "left"), side_names[side])))
              for role in ("lower_leg", "forearm") for side in "LR"}
    assert {limb.name for limb in built} == wanted
    assert_handles_move_chain_ends(obj, dict.fromkeys(wanted, 2))
    # Build IK Limb's Both Sides finds each limb's other side by its name.
    for limb in built:
        api.remove(obj, limb.name)
    left = names["lower_leg"].format(L="L", l="l", Left="Left", left="left")
    both = api.build(obj, left, both_sides=True)
    assert [limb.name for limb in both] == [left, names["lower_leg"].format(L="R", l="r", Left="Right", left="right")]
    assert not [note for limb in both for note in limb.notes if "no mirrored bone" in note]
