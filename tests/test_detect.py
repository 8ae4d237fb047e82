"""Finding legs and arms by bone names and hierarchy (core.detect), on built and real skeletons."""

from __future__ import annotations

import math
import random

import bpy
import pytest
from helpers import import_bvh, make_armature, set_active_bone
from mathutils import Matrix, Vector

from ik_rigger import api
from ik_rigger.core import naming
from ik_rigger.core.detect import ARM, FRONT, HIND, LEG, DetectedLimb, Detection, detect_limbs
from ik_rigger.core.model import BoneInfo, Skeleton
from ik_rigger.rig.skeleton import read_skeleton

Point = tuple[float, float, float]
# (name, parent, head, tail)
Spec = tuple[str, str | None, Point, Point]


def make_skeleton(specs: list[Spec]) -> Skeleton:
    """A Skeleton from bone tuples; a bone starting at its parent's tail counts as connected."""
    tails = {name: Vector(tail) for name, _, _, tail in specs}
    bones = {}
    for name, parent, head, tail in specs:
        connected = parent is not None and (tails[parent] - Vector(head)).length < 1e-9
        bones[name] = BoneInfo(name, parent, Vector(head), Vector(tail), Vector((1.0, 0.0, 0.0)),
                               Vector((0.0, 0.0, 1.0)), connected)
    return Skeleton(bones)


ROLES = ("pelvis", "upper_leg", "lower_leg", "foot", "toe", "clavicle", "upper_arm", "forearm", "hand", "finger")


def human(names: dict[str, str], twists: bool = False) -> list[Spec]:
    """A standing human facing -Y, arms out sideways, both sides named from ``names``' templates.

    Templates hold the side as {L} (L/R), {l} (l/r), {Left} (Left/Right) or {left} (left/right).
    A role missing from ``names`` has no bone (the pelvis, the finger).
    """
    specs: list[Spec] = [("hips", None, (0, 0, 1.0), (0, 0, 1.2)), ("chest", "hips", (0, 0, 1.2), (0, 0, 1.45))]
    for side, x in (("L", 1.0), ("R", -1.0)):
        word = "Left" if side == "L" else "Right"
        name = {role: template.format(L=side, l=side.lower(), Left=word, left=word.lower())
                for role, template in names.items()}
        leg_parent = "hips"
        if "pelvis" in name:
            specs.append((name["pelvis"], "hips", (0.02 * x, 0, 1.0), (0.1 * x, 0, 0.98)))
            leg_parent = name["pelvis"]
        specs += [
            (name["upper_leg"], leg_parent, (0.1 * x, 0, 0.98), (0.1 * x, -0.02, 0.55)),
            (name["lower_leg"], name["upper_leg"], (0.1 * x, -0.02, 0.55), (0.1 * x, 0, 0.1)),
            (name["foot"], name["lower_leg"], (0.1 * x, 0, 0.1), (0.1 * x, -0.12, 0.03)),
            (name["toe"], name["foot"], (0.1 * x, -0.12, 0.03), (0.1 * x, -0.2, 0.03)),
            (name["clavicle"], "chest", (0.03 * x, 0, 1.42), (0.18 * x, 0, 1.42)),
            (name["upper_arm"], name["clavicle"], (0.18 * x, 0, 1.42), (0.45 * x, 0.02, 1.42)),
            (name["forearm"], name["upper_arm"], (0.45 * x, 0.02, 1.42), (0.7 * x, 0, 1.42)),
            (name["hand"], name["forearm"], (0.7 * x, 0, 1.42), (0.8 * x, 0, 1.42)),
        ]
        if "finger" in name:
            specs.append((name["finger"], name["hand"], (0.8 * x, 0, 1.42), (0.85 * x, 0, 1.42)))
        if twists:
            specs += [
                (f"thigh_twist_01_{side.lower()}", name["upper_leg"], (0.1 * x, -0.01, 0.77), (0.1 * x, -0.02, 0.6)),
                (f"calf_twist_01_{side.lower()}", name["lower_leg"], (0.1 * x, -0.01, 0.33), (0.1 * x, 0, 0.15)),
                (f"upperarm_twist_01_{side.lower()}", name["upper_arm"], (0.3 * x, 0.01, 1.42), (0.4 * x, 0, 1.42)),
                (f"lowerarm_twist_01_{side.lower()}", name["forearm"], (0.58 * x, 0.01, 1.42), (0.68 * x, 0, 1.42)),
            ]
    return specs


def family(*templates: str) -> dict[str, str]:
    """Role templates in the order of ROLES after the pelvis; an empty template means no such bone."""
    return {role: template for role, template in zip(ROLES[1:], templates) if template}


FAMILIES = {
    "rigify metarig": family("thigh.{L}", "shin.{L}", "foot.{L}", "toe.{L}", "shoulder.{L}", "upper_arm.{L}",
                             "forearm.{L}", "hand.{L}", "f_index.01.{L}"),
    "mixamo": family("mixamorig:{Left}UpLeg", "mixamorig:{Left}Leg", "mixamorig:{Left}Foot",
                     "mixamorig:{Left}ToeBase", "mixamorig:{Left}Shoulder", "mixamorig:{Left}Arm",
                     "mixamorig:{Left}ForeArm", "mixamorig:{Left}Hand", "mixamorig:{Left}HandIndex1"),
    "mixamo numbered namespace": family("mixamorig1:{Left}UpLeg", "mixamorig1:{Left}Leg", "mixamorig1:{Left}Foot",
                                        "mixamorig1:{Left}ToeBase", "mixamorig1:{Left}Shoulder",
                                        "mixamorig1:{Left}Arm", "mixamorig1:{Left}ForeArm", "mixamorig1:{Left}Hand",
                                        ""),
    "unreal": family("thigh_{l}", "calf_{l}", "foot_{l}", "ball_{l}", "clavicle_{l}", "upperarm_{l}", "lowerarm_{l}",
                     "hand_{l}", "index_01_{l}"),
    "upper/lower": family("UpperLeg_{L}", "LowerLeg_{L}", "Foot_{L}", "Toe_{L}", "Clavicle_{L}", "UpperArm_{L}",
                          "LowerArm_{L}", "Hand_{L}", "Finger_{L}"),
    "side word first": family("{Left}Thigh", "{Left}Calf", "{Left}Foot", "{Left}Toes", "{Left}Clavicle", "{Left}Arm",
                              "{Left}Forearm", "{Left}Hand", ""),
    "side word last": family("Upper_Leg_{Left}", "Lower_Leg_{Left}", "Foot_{Left}", "Toe_{Left}",
                             "Clavicle_{Left}", "Upper_Arm_{Left}", "Lower_Arm_{Left}", "Hand_{Left}", ""),
    "side letter first": family("{L}_Thigh", "{L}_Shin", "{L}_Foot", "{L}_Toe", "{L}_Clavicle", "{L}_UpperArm",
                                "{L}_Forearm", "{L}_Hand", ""),
    "dash and namespace": family("Armature|thigh-{L}", "Armature|shin-{L}", "Armature|foot-{L}", "Armature|toe-{L}",
                                 "Armature|clavicle-{L}", "Armature|upper_arm-{L}", "Armature|forearm-{L}",
                                 "Armature|hand-{L}", ""),
    "upper case with spaces": family("UPPER LEG {L}", "LOWER LEG {L}", "FOOT {L}", "TOE {L}", "CLAVICLE {L}",
                                     "UPPER ARM {L}", "LOWER ARM {L}", "HAND {L}", ""),
    "glued side word": family("{left}thigh", "{left}shin", "{left}foot", "{left}toe", "{left}collar",
                              "{left}upperarm", "{left}forearm", "{left}hand", ""),
    "leg and arm": family("Leg.{L}", "Shin.{L}", "Foot.{L}", "Toe.{L}", "Clavicle.{L}", "Arm.{L}", "Forearm.{L}",
                          "Hand.{L}", ""),
    "joint-named mocap": family("{Left}Hip", "{Left}Knee", "{Left}Ankle", "{Left}Toe", "{Left}Collar",
                                "{Left}Shoulder", "{Left}Elbow", "{Left}Wrist", "{Left}Finger"),
    "short mocap": {"pelvis": "{l}buttock", **family("{l}thigh", "{l}shin", "{l}foot", "{l}toe", "{l}collar",
                                                     "{l}shldr", "{l}forearm", "{l}hand", "")},
    "mixamo without its colon": family("mixamorig{Left}UpLeg", "mixamorig{Left}Leg", "mixamorig{Left}Foot",
                                       "mixamorig{Left}ToeBase", "mixamorig{Left}Shoulder", "mixamorig{Left}Arm",
                                       "mixamorig{Left}ForeArm", "mixamorig{Left}Hand", "mixamorig{Left}HandIndex1"),
    "namespace with a bar": family("Armature|{Left}UpLeg", "Armature|{Left}Leg", "Armature|{Left}Foot",
                                   "Armature|{Left}ToeBase", "Armature|{Left}Shoulder", "Armature|{Left}Arm",
                                   "Armature|{Left}ForeArm", "Armature|{Left}Hand", ""),
    "3ds max biped": {"pelvis": "Bip01 {L} Pelvis",
                      **family("Bip01 {L} Thigh", "Bip01 {L} Calf", "Bip01 {L} Foot", "Bip01 {L} Toe0",
                               "Bip01 {L} Clavicle", "Bip01 {L} UpperArm", "Bip01 {L} Forearm", "Bip01 {L} Hand",
                               "Bip01 {L} Finger0")},
    "3ds max biped exported with underscores": family("Bip001_{L}_Thigh", "Bip001_{L}_Calf", "Bip001_{L}_Foot",
                                                      "Bip001_{L}_Toe0", "Bip001_{L}_Clavicle",
                                                      "Bip001_{L}_UpperArm", "Bip001_{L}_Forearm",
                                                      "Bip001_{L}_Hand", "Bip001_{L}_Finger0"),
    "3ds max biped exported with dashes": family("Bip001-{L}-Thigh", "Bip001-{L}-Calf", "Bip001-{L}-Foot",
                                                 "Bip001-{L}-Toe0", "Bip001-{L}-Clavicle", "Bip001-{L}-UpperArm",
                                                 "Bip001-{L}-Forearm", "Bip001-{L}-Hand", "Bip001-{L}-Finger0"),
    "daz genesis": family("{l}ThighBend", "{l}Shin", "{l}Foot", "{l}Toe", "{l}Collar", "{l}ShldrBend",
                          "{l}ForearmBend", "{l}Hand", "{l}Index1"),
    "daz genesis 2": family("{l}Thigh", "{l}Shin", "{l}Foot", "{l}Toe", "{l}Collar", "{l}Shldr", "{l}ForeArm",
                            "{l}Hand", "{l}Index1"),
    "character creator": family("CC_Base_{L}_Thigh", "CC_Base_{L}_Calf", "CC_Base_{L}_Foot", "CC_Base_{L}_ToeBase",
                                "CC_Base_{L}_Clavicle", "CC_Base_{L}_Upperarm", "CC_Base_{L}_Forearm",
                                "CC_Base_{L}_Hand", "CC_Base_{L}_Index1"),
    "makehuman": {"pelvis": "pelvis.{L}",
                  **family("upperleg01.{L}", "lowerleg01.{L}", "foot.{L}", "toe1-1.{L}", "clavicle.{L}",
                           "upperarm01.{L}", "lowerarm01.{L}", "wrist.{L}", "finger2-1.{L}")},
    "vroid": family("J_Bip_{L}_UpperLeg", "J_Bip_{L}_LowerLeg", "J_Bip_{L}_Foot", "J_Bip_{L}_ToeBase",
                    "J_Bip_{L}_Shoulder", "J_Bip_{L}_UpperArm", "J_Bip_{L}_LowerArm", "J_Bip_{L}_Hand",
                    "J_Bip_{L}_Index1"),
    "second life": family("mHip{Left}", "mKnee{Left}", "mAnkle{Left}", "mToe{Left}", "mCollar{Left}",
                          "mShoulder{Left}", "mElbow{Left}", "mWrist{Left}", "mHandIndex1{Left}"),
    "cmu motion capture": {"pelvis": "{l}hipjoint",
                           **family("{l}femur", "{l}tibia", "{l}foot", "{l}toes", "{l}clavicle", "{l}humerus",
                                    "{l}radius", "{l}wrist", "{l}fingers")},
    "source engine": family("ValveBiped.Bip01_{L}_Thigh", "ValveBiped.Bip01_{L}_Calf", "ValveBiped.Bip01_{L}_Foot",
                            "ValveBiped.Bip01_{L}_Toe0", "ValveBiped.Bip01_{L}_Clavicle",
                            "ValveBiped.Bip01_{L}_UpperArm", "ValveBiped.Bip01_{L}_Forearm",
                            "ValveBiped.Bip01_{L}_Hand", "ValveBiped.Bip01_{L}_Finger1"),
    "smpl": family("{left}_hip", "{left}_knee", "{left}_ankle", "{left}_foot", "{left}_collar", "{left}_shoulder",
                   "{left}_elbow", "{left}_wrist", "{left}_index1"),
    "vrm humanoid": family("{left}UpperLeg", "{left}LowerLeg", "{left}Foot", "{left}Toes", "{left}Shoulder",
                           "{left}UpperArm", "{left}LowerArm", "{left}Hand", "{left}IndexProximal"),
    "capital side letter": family("{L}Thigh", "{L}Calf", "{L}Foot", "{L}Toe", "{L}Clavicle", "{L}UpperArm",
                                  "{L}Forearm", "{L}Hand", "{L}Finger0"),
    "words the other way round": family("Leg_Upper_{L}", "Leg_Lower_{L}", "Foot_{L}", "Toe_{L}", "Clavicle_{L}",
                                        "Arm_Upper_{L}", "Arm_Lower_{L}", "Hand_{L}", ""),
    "maya humanik": family("Character1_{Left}UpLeg", "Character1_{Left}Leg", "Character1_{Left}Foot",
                           "Character1_{Left}ToeBase", "Character1_{Left}Shoulder", "Character1_{Left}Arm",
                           "Character1_{Left}ForeArm", "Character1_{Left}Hand", "Character1_{Left}HandIndex1"),
    "maya joints": family("{L}_thigh_jnt", "{L}_knee_jnt", "{L}_ankle_jnt", "{L}_toe_jnt", "{L}_clavicle_jnt",
                          "{L}_shoulder_jnt", "{L}_elbow_jnt", "{L}_wrist_jnt", ""),
    "bind joints with a tag": family("Bn_{L}_UpLeg_bind", "Bn_{L}_Leg_bind", "Bn_{L}_Foot_bind", "Bn_{L}_Toe_bind",
                                     "Bn_{L}_Clavicle_bind", "Bn_{L}_Arm_bind", "Bn_{L}_ForeArm_bind",
                                     "Bn_{L}_Hand_bind", ""),
    "rigify deform bones exported": family("DEF-thigh.{L}", "DEF-shin.{L}", "DEF-foot.{L}", "DEF-toe.{L}",
                                           "DEF-shoulder.{L}", "DEF-upper_arm.{L}", "DEF-forearm.{L}",
                                           "DEF-hand.{L}", ""),
    "mmd_tools english": family("leg_{L}", "knee_{L}", "ankle_{L}", "toe_{L}", "shoulder_{L}", "arm_{L}",
                                "elbow_{L}", "wrist_{L}", "index1_{L}"),
    "apple arkit body": family("{left}_upLeg_joint", "{left}_leg_joint", "{left}_foot_joint", "{left}_toes_joint",
                               "{left}_shoulder_1_joint", "{left}_arm_joint", "{left}_forearm_joint",
                               "{left}_hand_joint", "{left}_handIndex_1_joint"),
    "daz genesis 9": family("{l}_thigh", "{l}_shin", "{l}_foot", "{l}_toes", "{l}_shoulder", "{l}_upperarm",
                            "{l}_forearm", "{l}_hand", "{l}_index1"),
    "the sims": family("b__{L}_Thigh__", "b__{L}_Calf__", "b__{L}_Foot__", "b__{L}_Toe__", "b__{L}_Clavicle__",
                       "b__{L}_UpperArm__", "b__{L}_Forearm__", "b__{L}_Hand__", "b__{L}_Index0__"),
    "skyrim": family("NPC {L} Thigh [{L}Thg]", "NPC {L} Calf [{L}Clf]", "NPC {L} Foot [{L}ft ]",
                     "NPC {L} Toe0 [{L}Toe]", "NPC {L} Clavicle [{L}Clv]", "NPC {L} UpperArm [{L}Uar]",
                     "NPC {L} Forearm [{L}Lar]", "NPC {L} Hand [{L}Hnd]", "NPC {L} Finger00 [{L}F00]"),
    "skyrim renamed for blender": family("NPC Thigh [Thg].{L}", "NPC Calf [Clf].{L}", "NPC Foot [ft ].{L}",
                                         "NPC Toe0 [Toe].{L}", "NPC Clavicle [Clv].{L}", "NPC UpperArm [Uar].{L}",
                                         "NPC Forearm [Lar].{L}", "NPC Hand [Hnd].{L}", "NPC Finger00 [F00].{L}"),
    "fallout 4": family("{L}Leg_Thigh", "{L}Leg_Calf", "{L}Leg_Foot", "{L}Leg_Toe1", "{L}Arm_Collarbone",
                        "{L}Arm_UpperArm", "{L}Arm_ForeArm1", "{L}Arm_Hand", "{L}Arm_Finger11"),
    "team fortress 2": family("bip_hip_{L}", "bip_knee_{L}", "bip_foot_{L}", "bip_toe_{L}", "bip_collar_{L}",
                              "bip_upperArm_{L}", "bip_lowerArm_{L}", "bip_hand_{L}", "bip_index_0_{L}"),
    "grand theft auto": family("SKEL_{L}_Thigh", "SKEL_{L}_Calf", "SKEL_{L}_Foot", "SKEL_{L}_Toe0", "SKEL_{L}_Clavicle",
                               "SKEL_{L}_UpperArm", "SKEL_{L}_Forearm", "SKEL_{L}_Hand", "SKEL_{L}_Finger00"),
    "xnalara": family("leg {left} thigh", "leg {left} knee", "leg {left} ankle", "leg {left} toes",
                      "arm {left} shoulder 1", "arm {left} shoulder 2", "arm {left} elbow", "arm {left} wrist",
                      "arm {left} finger 1a"),
    "joints tagged after the side": family("thigh_{l}_jnt", "calf_{l}_jnt", "foot_{l}_jnt", "ball_{l}_jnt",
                                           "clavicle_{l}_jnt", "upperarm_{l}_jnt", "forearm_{l}_jnt", "hand_{l}_jnt",
                                           ""),
    "limb and side in one tag": family("{L}L_thigh", "{L}L_calf", "{L}L_foot", "{L}L_toe", "{L}A_clavicle",
                                       "{L}A_upperarm", "{L}A_forearm", "{L}A_hand", "{L}A_finger0"),
    "upper arm named bicep": family("thigh.{L}", "shin.{L}", "foot.{L}", "toe.{L}", "shoulder.{L}", "bicep.{L}",
                                    "forearm.{L}", "hand.{L}", ""),
    "upper arm named Bicep with an underscore": family("Thigh_{L}", "Shin_{L}", "Foot_{L}", "Toe_{L}",
                                                       "Clavicle_{L}", "Bicep_{L}", "Forearm_{L}", "Hand_{L}", ""),
    "ready player me": family("{Left}UpLeg", "{Left}Leg", "{Left}Foot", "{Left}ToeBase", "{Left}Shoulder",
                              "{Left}Arm", "{Left}ForeArm", "{Left}Hand", "{Left}HandIndex1"),
}


def expected(names: dict[str, str]) -> list[tuple[str, str, tuple[str, ...], str]]:
    """Both legs, then both arms, left first, as ``summary`` gives them."""
    rows: list[tuple[str, str, tuple[str, ...], str]] = []
    for kind, (upper, lower, end) in ((LEG, ("upper_leg", "lower_leg", "foot")),
                                      (ARM, ("upper_arm", "forearm", "hand"))):
        for side, word in (("L", "Left"), ("R", "Right")):
            name = {role: names[role].format(L=side, l=side.lower(), Left=word, left=word.lower())
                    for role in (upper, lower, end)}
            rows.append((kind, side, (name[upper], name[lower]), name[end]))
    return rows


def summary(detection: Detection) -> list[tuple[str, str | None, tuple[str, ...], str | None]]:
    return [(limb.kind, limb.side, limb.chain, limb.extremity) for limb in detection.limbs]


def reasons(detection: Detection) -> dict[str, str]:
    return {item.bone: item.reason for item in detection.skipped}


def mmd(suffixed: bool) -> list[Spec]:
    """MikuMikuDance's standard skeleton (PMX's standard and semi-standard bones, their names and
    parents) in a model's proportions as mmd_tools imports it (metres, Z up, facing -Y): legs
    with their deforming copies (足D) and IK bones, arms split by twist bones (腕 > 腕捩 > ひじ >
    手捩 > 手首). ``suffixed`` names the sides as mmd_tools' renaming does ("ひざ.L"), else as
    MikuMikuDance does ("左ひざ", "腰キャンセル左")."""
    specs: list[Spec] = [("全ての親", None, (0, 0, 0), (0, 0, 0.1)),
                         ("センター", "全ての親", (0, 0, 0.65), (0, 0, 0.75)),
                         ("下半身", "センター", (0, 0, 1.0), (0, 0, 0.85)),
                         ("上半身", "センター", (0, 0, 1.0), (0, 0, 1.2)),
                         ("上半身2", "上半身", (0, 0, 1.2), (0, 0, 1.35))]
    for side, x in (("左", 1.0), ("右", -1.0)):
        def name(word: str, side: str = side) -> str:
            return f"{word}.{'L' if side == '左' else 'R'}" if suffixed else f"{side}{word}"

        cancel = name("腰キャンセル") if suffixed else f"腰キャンセル{side}"
        leg = [("足", (0.08, 0.0, 0.9)), ("ひざ", (0.085, -0.01, 0.5)), ("足首", (0.09, 0.02, 0.1)),
               ("つま先", (0.09, -0.1, 0.02))]
        specs.append((cancel, "下半身", (0.08 * x, 0, 0.9), (0.08 * x, 0, 0.86)))
        for suffix in ("", "D"):
            parent = cancel
            for (word, head), (_, tail) in zip(leg, leg[1:] + [("", (0.09, -0.13, 0.02))]):
                word = "足先EX" if suffix and word == "つま先" else word + suffix
                specs.append((name(word), parent, (head[0] * x, head[1], head[2]), (tail[0] * x, tail[1], tail[2])))
                parent = name(word)
        specs += [(name("足IK親"), "全ての親", (0.09 * x, 0.02, 0), (0.09 * x, 0.02, 0.05)),
                  (name("足ＩＫ"), name("足IK親"), (0.09 * x, 0.02, 0.1), (0.09 * x, 0.1, 0.1)),
                  (name("つま先ＩＫ"), name("足ＩＫ"), (0.09 * x, -0.1, 0.02), (0.09 * x, -0.1, -0.06))]
        arm = [("肩P", "上半身2", (0.02, 0, 1.38), (0.02, 0, 1.4)),
               ("肩", "肩P", (0.02, 0, 1.38), (0.15, 0, 1.36)),
               ("肩C", "肩", (0.15, 0, 1.36), (0.16, 0, 1.355)),
               ("腕", "肩C", (0.15, 0, 1.36), (0.37, 0.01, 1.2)),
               ("腕捩", "腕", (0.26, 0.005, 1.28), (0.3, 0.007, 1.25)),
               ("ひじ", "腕捩", (0.37, 0.01, 1.2), (0.55, -0.01, 1.08)),
               ("手捩", "ひじ", (0.46, 0, 1.14), (0.5, -0.004, 1.11)),
               ("手首", "手捩", (0.55, -0.01, 1.08), (0.6, -0.01, 1.05)),
               ("人指１", "手首", (0.61, -0.03, 1.04), (0.64, -0.03, 1.02)),
               ("親指０", "手首", (0.56, -0.03, 1.07), (0.58, -0.05, 1.05))]
        for word, parent, head, tail in arm:
            parent = parent if parent.startswith("上半身") else name(parent)
            specs.append((name(word), parent, (head[0] * x, head[1], head[2]), (tail[0] * x, tail[1], tail[2])))
    return specs


@pytest.mark.parametrize("suffixed", [False, True], ids=["japanese sides", "mmd_tools sides"])
def test_mikumikudance_limbs_are_found_by_their_japanese_names(suffixed):
    specs = mmd(suffixed)
    names = {spec[0] for spec in specs}
    detection = detect_limbs(make_skeleton(specs))

    def name(word: str, side: str) -> str:
        return f"{word}.{side}" if suffixed else f"{'左' if side == 'L' else '右'}{word}"

    assert summary(detection) == [
        (LEG, side, (name("足", side), name("ひざ", side)), name("足首", side)) for side in "LR"] + [
        (ARM, side, (name("腕", side), name("腕捩", side), name("ひじ", side), name("手捩", side)), name("手首", side))
        for side in "LR"]
    # The twist bones are the second halves of their segments, which IK keeps in line.
    assert [limb.halves for limb in detection.limbs[2:]] == [(name("腕捩", side), name("手捩", side)) for side in "LR"]
    # Neither the deforming copies (足D), the IK bones nor the fingers are taken for limbs or reported.
    assert detection.skipped == ()
    for limb in detection.limbs:
        for bone in (*limb.chain, limb.extremity):
            assert naming.flip_name(naming.flip_name(bone, names), names) == bone
            assert naming.flip_name(bone, names) in names
        assert naming.limb_kind([*limb.chain, limb.extremity]) == limb.kind


@pytest.mark.parametrize("names, side, english", [
    ("左ひざ", naming.LEFT, "Knee"), ("右足首", naming.RIGHT, "Ankle"), ("腰キャンセル左", naming.LEFT, "腰キャンセル"),
    ("足ＩＫ.R", naming.RIGHT, "LegIK"), ("左人指１", naming.LEFT, "Index1"), ("センター", None, "センター"),
])
def test_japanese_names_read_their_side_and_words(names, side, english):
    parts = naming.split_side(names)
    assert parts.side == side
    assert naming.english(parts.base) == english
    assert parts.name == names


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_naming_families_both_sides(name):
    detection = detect_limbs(make_skeleton(human(FAMILIES[name])))
    assert summary(detection) == expected(FAMILIES[name])
    assert detection.skipped == ()


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_mirrors_with_the_one_side_parser(name):
    for one in assert_limbs_mirror(human(FAMILIES[name])):
        assert naming.limb_kind([*one.chain, one.extremity]) == one.kind


def assert_limbs_mirror(specs: list) -> list:
    """Build IK's Both Sides mirrors with ``naming.flip_name``: each left limb detection finds in the skeleton of
    ``specs`` (two, a leg and an arm) onto the right limb's bones, and back. The left limbs."""
    names = {spec[0] for spec in specs}
    limbs = detect_limbs(make_skeleton(specs)).limbs
    left = [limb for limb in limbs if limb.side == naming.LEFT]
    right = [limb for limb in limbs if limb.side == naming.RIGHT]
    assert len(left) == len(right) == 2
    for one, other in zip(left, right):
        for bone, mirror in zip((*one.chain, one.extremity), (*other.chain, other.extremity)):
            assert naming.split_side(bone, names).side == naming.LEFT
            assert naming.flip_name(bone, names) == mirror
            assert naming.flip_name(mirror, names) == bone
    return left


@pytest.mark.parametrize(("name", "mirror"), [
    ("Armature|LeftUpLeg", "Armature|RightUpLeg"), ("mixamorigLeftUpLeg", "mixamorigRightUpLeg"),
    ("Armature|mixamorig:LeftLeg", "Armature|mixamorig:RightLeg"), ("Bip01 L Thigh", "Bip01 R Thigh"),
    ("CC_Base_L_Thigh", "CC_Base_R_Thigh"), ("J_Bip_L_UpperLeg", "J_Bip_R_UpperLeg"), ("lThighBend", "rThighBend"),
    ("upperleg01.L", "upperleg01.R"), ("thigh.L.001", "thigh.R.001"), ("thigh_l_01", "thigh_r_01"),
    ("lthigh", "rthigh"), ("leftforearm", "rightforearm"), ("b_LeftLeg01_015", "b_RightLeg01_015"),
])
def test_flip_name_reads_every_family(name, mirror):
    assert naming.flip_name(name) == mirror
    assert naming.flip_name(mirror) == name


def test_flip_name_finds_the_other_side_under_another_exporter_number():
    names = {"b_LeftLeg02_016", "b_RightLeg02_020", "b_RightLeg01_019", "b_LeftLeg01_015"}
    assert naming.flip_name("b_LeftLeg02_016", names) == "b_RightLeg02_020"
    assert naming.flip_name("b_RightLeg01_019", names) == "b_LeftLeg01_015"
    # Two candidates: no guess, the plain mirror (which is not a bone, so nothing is mirrored).
    assert naming.flip_name("b_LeftLeg02_016", names | {"b_RightLeg02_099"}) == "b_RightLeg02_016"


# A Rigify rig renamed by Sketchfab: the dots dropped, the side glued before a number every bone gets, so the two
# sides' numbers differ ("thighL_07", "thighR_15"): the right side's are the left's plus RIGHT_AFTER.
SKETCHFAB = family("thigh{L}_07", "shin{L}_08", "foot{L}_09", "toe{L}_010", "shoulder{L}_011", "upper_arm{L}_012",
                   "forearm{L}_013", "hand{L}_014", "f_index01{L}_015")
RIGHT_AFTER = 20


def _sketchfab_numbered(name: str) -> str:
    """``name`` with a right side's number moved on by RIGHT_AFTER: "thighR_07" is "thighR_027"."""
    stem, _, number = name.rpartition("R_")
    return f"{stem}R_{int(number) + RIGHT_AFTER:03d}" if stem and number.isdigit() else name


def test_a_renamed_rigify_rig_with_its_sides_glued_before_numbers_is_found_and_mirrored():
    specs = [(_sketchfab_numbered(name), parent and _sketchfab_numbered(parent), head, tail)
             for name, parent, head, tail in human(SKETCHFAB)]
    names = {spec[0] for spec in specs}
    assert "thighR_027" in names
    detection = detect_limbs(make_skeleton(specs))
    assert summary(detection) == [(kind, side, tuple(map(_sketchfab_numbered, chain)), _sketchfab_numbered(end))
                                  for kind, side, chain, end in expected(SKETCHFAB)]
    assert detection.skipped == ()
    left, right = detection.limbs[0::2], detection.limbs[1::2]
    for one, other in zip(left, right):
        for bone, mirror in zip((*one.chain, one.extremity), (*other.chain, other.extremity)):
            assert naming.flip_name(bone, names) == mirror
            assert naming.flip_name(mirror, names) == bone
        assert naming.limb_kind([*one.chain, one.extremity]) == one.kind
    # Only after a limb word is such a capital read as a side alone: elsewhere, as before, beside the other side.
    assert naming.split_side("spineL_05").side is None and naming.split_side("ThighL").side is None
    assert naming.flip_name("spineL_05", {"spineL_05", "spineR_05"}) == "spineR_05"


@pytest.mark.parametrize("name", ["limb and side in one tag", "upper arm named bicep", "renamed rigify"])
def test_both_sides_rigs_the_other_sides_limb_of_a_newly_read_family(name):
    """*Build IK Limb* with Both Sides on the left leg and arm rigs the right ones too, as that side names them."""
    specs = human(FAMILIES.get(name, SKETCHFAB))
    if name == "renamed rigify":
        specs = [(_sketchfab_numbered(bone), parent and _sketchfab_numbered(parent), head, tail)
                 for bone, parent, head, tail in specs]
    tails = {spec[0]: spec[3] for spec in specs}
    obj = make_armature([(bone, head, tail, parent, parent is not None and tails[parent] == head)
                         for bone, parent, head, tail in specs])
    rows = detect_limbs(read_skeleton(obj)).limbs
    assert len(rows) == 4
    for left in (limb for limb in rows if limb.side == naming.LEFT):
        built = api.build(obj, left.last, both_sides=True)
        right = next(limb for limb in rows if limb.side == naming.RIGHT and limb.kind == left.kind)
        assert sorted(limb.name for limb in built) == sorted((left.last, right.last))
        assert {limb.name: limb.extremity for limb in built} == {left.last: left.extremity,
                                                                 right.last: right.extremity}


@pytest.mark.parametrize("name", ["leg", "lower", "root", "rib", "J_Bip_C_Hips", "spine_01", "Bip01 Spine"])
def test_names_without_a_side_stay_without_one(name):
    assert naming.split_side(name).side is None
    assert naming.flip_name(name) is None


def test_a_limb_tagged_after_its_side_is_read_beside_the_other_sides_tag_only():
    """``LL_thigh`` and ``RA_hand`` (left leg, right arm) tell their side where the other side's tag names a bone;
    alone, such a tag says no side, and ``L_`` alone is a side as before."""
    names = {"LL_thigh", "RL_thigh", "LA_hand", "RA_hand"}
    assert naming.split_side("LL_thigh", names).side == naming.LEFT
    assert naming.flip_name("RA_hand", names) == "LA_hand"
    assert naming.split_side("LA_hand").side is None and naming.flip_name("LL_thigh") is None
    assert naming.split_side("L_thigh").side == naming.LEFT and naming.flip_name("L_thigh") == "R_thigh"


def test_limb_kind_reads_bases_not_namespaces():
    assert naming.limb_kind(["Armature|thigh-L", "Armature|shin-L", "Armature|foot-L"]) == "LEG"
    assert naming.limb_kind(["Bip01 L UpperArm", "Bip01 L Forearm", "Bip01 L Hand"]) == "ARM"


def cc_helpers() -> list[Spec]:
    """Character Creator's twist and share bones: siblings of the limb bones, not links of the chain."""
    specs: list[Spec] = []
    for side, x in (("L", 1.0), ("R", -1.0)):
        specs += [
            (f"CC_Base_{side}_ThighTwist01", f"CC_Base_{side}_Thigh", (0.1 * x, 0, 0.98), (0.1 * x, -0.01, 0.76)),
            (f"CC_Base_{side}_ThighTwist02", f"CC_Base_{side}_Thigh", (0.1 * x, -0.01, 0.76), (0.1 * x, -0.02, 0.55)),
            (f"CC_Base_{side}_CalfTwist01", f"CC_Base_{side}_Calf", (0.1 * x, -0.02, 0.55), (0.1 * x, -0.01, 0.33)),
            (f"CC_Base_{side}_KneeShareBone", f"CC_Base_{side}_Calf", (0.1 * x, -0.02, 0.55), (0.1 * x, -0.07, 0.55)),
            (f"CC_Base_{side}_UpperarmTwist01", f"CC_Base_{side}_Upperarm", (0.18 * x, 0, 1.42), (0.3 * x, 0, 1.42)),
            (f"CC_Base_{side}_ForearmTwist01", f"CC_Base_{side}_Forearm", (0.45 * x, 0.02, 1.42), (0.6 * x, 0, 1.42)),
            (f"CC_Base_{side}_ElbowShareBone", f"CC_Base_{side}_Forearm", (0.45 * x, 0.02, 1.42),
             (0.45 * x, 0.06, 1.42)),
        ]
    return specs


def test_character_creator_twist_and_share_bones_are_left_out():
    specs = human(FAMILIES["character creator"]) + cc_helpers()
    detection = detect_limbs(make_skeleton(specs))
    assert summary(detection) == expected(FAMILIES["character creator"])
    assert detection.skipped == ()


def sided(specs: list[Spec]) -> list[Spec]:
    """Left-side specs (names holding {L}) and their mirror at -x; bones without a side once."""
    bones: dict[str, Spec] = {}
    for side, sign in (("L", 1.0), ("R", -1.0)):
        for name, parent, head, tail in specs:
            bones.setdefault(name.format(L=side), (
                name.format(L=side), parent.format(L=side) if parent else None,
                (sign * head[0], head[1], head[2]), (sign * tail[0], tail[1], tail[2])))
    return list(bones.values())


def limb_specs(parent: str, joints: list[tuple[str, Point]], end: Point) -> list[Spec]:
    """A chain of connected bones from ``parent``: each named bone runs from its joint to the next."""
    points = [point for _, point in joints] + [end]
    specs: list[Spec] = []
    for index, (name, head) in enumerate(joints):
        specs.append((name, parent if index == 0 else joints[index - 1][0], head, points[index + 1]))
    return specs


# Quadrupeds with the hierarchy and proportions of Blender's Rigify animal metarigs (facing -Y,
# Z up, metres), their spines, tails and ears; only the left side is written, the right mirrors it.
QUADRUPEDS = {
    "wolf": [
        ("spine", None, (0, 0.45, 0.72), (0, 0.1, 0.78)), ("chest", "spine", (0, 0.1, 0.78), (0, -0.3, 0.8)),
        ("head", "chest", (0, -0.3, 0.8), (0, -0.55, 0.9)),
        ("tail", "spine", (0, 0.45, 0.72), (0, 0.7, 0.62)), ("tail.001", "tail", (0, 0.7, 0.62), (0, 0.95, 0.55)),
        ("ear.{L}", "head", (0.05, -0.4, 0.95), (0.07, -0.38, 1.05)),
        ("ear.{L}.001", "ear.{L}", (0.07, -0.38, 1.05), (0.08, -0.37, 1.12)),
        ("pelvis.{L}", "spine", (0, 0.376, 0.604), (0.075, 0.275, 0.854)),
        *limb_specs("spine", [("thigh.{L}", (0.125, 0.342, 0.738)), ("shin.{L}", (0.125, 0.271, 0.473)),
                              ("foot.{L}", (0.111, 0.477, 0.247)), ("toe.{L}", (0.109, 0.414, 0.041))],
                    (0.109, 0.321, 0.0)),
        ("shoulder.{L}", "chest", (0.06, -0.258, 0.888), (0.125, -0.342, 0.715)),
        *limb_specs("shoulder.{L}", [("front_thigh.{L}", (0.125, -0.316, 0.69)),
                                     ("front_shin.{L}", (0.125, -0.225, 0.442)),
                                     ("front_foot.{L}", (0.111, -0.215, 0.17)),
                                     ("front_toe.{L}", (0.109, -0.246, 0.041))], (0.109, -0.326, 0.0)),
    ],
    "horse": [
        ("spine", None, (0, 0.8, 1.4), (0, 0.0, 1.45)), ("chest", "spine", (0, 0.0, 1.45), (0, -0.5, 1.5)),
        ("neck", "chest", (0, -0.5, 1.5), (0, -0.9, 1.9)),
        ("tail.001", "spine", (0, 0.8, 1.4), (0, 1.0, 1.2)), ("tail.002", "tail.001", (0, 1.0, 1.2), (0, 1.1, 0.9)),
        ("ear.{L}", "neck", (0.05, -0.9, 1.9), (0.07, -0.88, 2.05)),
        ("pelvis.{L}", "spine", (0, 0.806, 1.395), (0.18, 0.442, 1.578)),
        *limb_specs("pelvis.{L}", [("thigh.{L}", (0.192, 0.624, 1.409)), ("lower_leg.{L}", (0.193, 0.557, 1.033)),
                                   ("hind_foot.{L}", (0.193, 0.763, 0.607)), ("r_toe.{L}", (0.193, 0.69, 0.201)),
                                   ("r_hoof.{L}", (0.193, 0.634, 0.105))], (0.193, 0.592, 0.001)),
        ("shoulder.{L}", "chest", (0.094, -0.503, 1.578), (0.187, -0.695, 1.198)),
        *limb_specs("shoulder.{L}", [("upper_arm.{L}", (0.164, -0.69, 1.16)), ("forearm.{L}", (0.164, -0.532, 0.841)),
                                     ("forefoot.{L}", (0.164, -0.539, 0.481)), ("f_toe.{L}", (0.164, -0.516, 0.221)),
                                     ("f_hoof.{L}", (0.164, -0.572, 0.094))], (0.164, -0.638, 0.001)),
    ],
    "cat": [
        ("spine", None, (0, 0.15, 0.25), (0, -0.05, 0.26)), ("chest", "spine", (0, -0.05, 0.26), (0, -0.12, 0.27)),
        ("head", "chest", (0, -0.12, 0.27), (0, -0.2, 0.32)),
        ("tail.001", "spine", (0, 0.15, 0.25), (0, 0.25, 0.3)),
        ("tail.002", "tail.001", (0, 0.25, 0.3), (0, 0.35, 0.4)),
        ("ear.{L}", "head", (0.02, -0.17, 0.33), (0.03, -0.16, 0.37)),
        ("pelvis.{L}", "spine", (0, 0.15, 0.25), (0.039, 0.112, 0.27)),
        *limb_specs("pelvis.{L}", [("thigh.{L}", (0.029, 0.115, 0.246)), ("shin.{L}", (0.029, 0.107, 0.168)),
                                   ("foot.{L}", (0.029, 0.168, 0.107)), ("r_toe.{L}", (0.029, 0.153, 0.017))],
                    (0.029, 0.133, 0.004)),
        ("shoulder.{L}", "chest", (0.011, -0.097, 0.264), (0.035, -0.143, 0.211)),
        *limb_specs("shoulder.{L}", [("upper_arm.{L}", (0.031, -0.129, 0.202)), ("forearm.{L}", (0.031, -0.1, 0.123)),
                                     ("hand.{L}", (0.031, -0.118, 0.025)), ("f_toe.{L}", (0.031, -0.126, 0.011))],
                    (0.031, -0.142, 0.001)),
    ],
    # 3ds Max Biped's digitigrade leg: a HorseLink between the calf and the foot.
    "biped with horse link": [
        ("Bip01 Pelvis", None, (0, 0, 1.0), (0, 0, 1.1)),
        *limb_specs("Bip01 Pelvis", [("Bip01 {L} Thigh", (0.1, 0, 1.0)), ("Bip01 {L} Calf", (0.1, -0.25, 0.65)),
                                     ("Bip01 {L} HorseLink", (0.1, 0.05, 0.35)), ("Bip01 {L} Foot", (0.1, 0.0, 0.05)),
                                     ("Bip01 {L} Toe0", (0.1, -0.12, 0.0))], (0.1, -0.2, 0.0)),
    ],
}

QUADRUPED_LIMBS = {
    "wolf": [(LEG, None, ("thigh", "shin", "foot"), "toe"), (LEG, FRONT, ("front_thigh", "front_shin"), "front_foot")],
    "horse": [(LEG, HIND, ("thigh", "lower_leg", "hind_foot"), "r_toe"),
              (ARM, None, ("upper_arm", "forearm", "forefoot"), "f_toe")],
    "cat": [(LEG, None, ("thigh", "shin", "foot"), "r_toe"), (ARM, None, ("upper_arm", "forearm"), "hand")],
    "biped with horse link": [(LEG, None, ("Bip01 {L} Thigh", "Bip01 {L} Calf", "Bip01 {L} HorseLink"),
                               "Bip01 {L} Foot")],
}


def with_side(name: str, side: str) -> str:
    return name.format(L=side) if "{L}" in name else f"{name}.{side}"


@pytest.mark.parametrize("animal", sorted(QUADRUPEDS))
def test_quadrupeds_front_and_hind_legs_with_three_bone_legs_where_the_foot_continues_the_leg(animal):
    specs = sided(QUADRUPEDS[animal])
    detection = detect_limbs(make_skeleton(specs))
    rows = [(limb.kind, limb.position, limb.side, limb.chain, limb.extremity) for limb in detection.limbs]
    assert rows == [(kind, position, side, tuple(with_side(bone, side) for bone in chain), with_side(end, side))
                    for kind, position, chain, end in QUADRUPED_LIMBS[animal] for side in "LR"]
    # Spines, tails, ears and toes are not limbs: nothing else is rigged and nothing limb-like is left unexplained.
    assert detection.skipped == ()
    names = {spec[0] for spec in specs}
    for limb in detection.limbs:
        mirrors = {other.last for other in detection.limbs if other.side != limb.side}
        assert naming.flip_name(limb.last, names) in mirrors


def test_quadruped_limbs_are_labelled_front_and_hind():
    text = detect_limbs(make_skeleton(sided(QUADRUPEDS["wolf"]))).describe()
    assert "  left leg: thigh.L > shin.L > foot.L, toe toe.L" in text
    assert "  right front leg: front_thigh.R > front_shin.R, foot front_foot.R" in text
    horse = detect_limbs(make_skeleton(sided(QUADRUPEDS["horse"]))).limbs
    assert horse[0].label == "left hind leg"


def test_a_human_foot_stays_the_extremity_of_a_two_bone_leg():
    # Same names as the wolf's hind leg; the foot is short and turned forward, so it is no third segment.
    for name in ("rigify metarig", "mixamo", "unreal"):
        for limb in detect_limbs(make_skeleton(human(FAMILIES[name]))).limbs:
            assert len(limb.chain) == 2


def test_numbered_whole_limb_words_are_successive_segments_and_sides_mirror_across_numbers():
    # glTF exporters number every bone, so the two sides' numbers differ.
    specs: list[Spec] = [("b_Spine_01", None, (0, 0.3, 0.5), (0, -0.3, 0.5))]
    for side, x, numbers in (("Left", 0.1, (2, 3, 4)), ("Right", -0.1, (5, 6, 7))):
        specs += limb_specs("b_Spine_01", [(f"b_{side}Arm01_0{numbers[0]}", (x, -0.3, 0.5)),
                                           (f"b_{side}Arm02_0{numbers[1]}", (x, -0.25, 0.27)),
                                           (f"b_{side}Hand_0{numbers[2]}", (x, -0.28, 0.04))], (x, -0.33, 0.0))
    detection = detect_limbs(make_skeleton(specs))
    assert summary(detection) == [(ARM, "L", ("b_LeftArm01_02", "b_LeftArm02_03"), "b_LeftHand_04"),
                                  (ARM, "R", ("b_RightArm01_05", "b_RightArm02_06"), "b_RightHand_07")]
    assert detection.skipped == ()
    names = {spec[0] for spec in specs}
    assert naming.flip_name("b_LeftArm02_03", names) == "b_RightArm02_06"
    assert naming.flip_name("b_RightHand_07", names) == "b_LeftHand_04"


def test_numbered_segments_out_of_order_are_skipped():
    specs: list[Spec] = [("hips", None, (0, 0, 1.0), (0, 0, 1.2)),
                         *limb_specs("hips", [("Arm03.L", (0.2, 0, 1.0)), ("Arm02.L", (0.45, 0, 1.0)),
                                              ("Hand.L", (0.7, 0, 1.0))], (0.8, 0, 1.0))]
    detection = detect_limbs(make_skeleton(specs))
    assert detection.limbs == ()
    assert "its parent 'Arm03.L' are numbered 3 and 2, not in turn" in reasons(detection)["Arm02.L"]


def split_limbs(names: dict[str, list[str]]) -> list[Spec]:
    """A left leg and arm whose segments may be cut in two along their length (``names`` per role)."""
    specs: list[Spec] = [("hips", None, (0, 0, 1.0), (0, 0, 1.2)), ("chest", "hips", (0, 0, 1.2), (0, 0, 1.45))]
    leg = [(0.1, 0.0, 0.98), (0.1, -0.02, 0.55), (0.1, 0.0, 0.1), (0.1, -0.12, 0.03), (0.1, -0.2, 0.03)]
    arm = [(0.18, 0.0, 1.42), (0.45, 0.02, 1.42), (0.7, 0.0, 1.42), (0.8, 0.0, 1.42)]
    for parent, points, roles in (("hips", leg, ("thigh", "shin", "foot")), ("chest", arm, ("upper", "fore"))):
        joints: list[tuple[str, Point]] = []
        for index, role in enumerate(roles):
            start, end = Vector(points[index]), Vector(points[index + 1])
            bones = names[role]
            joints += [(bone, tuple(start.lerp(end, part / len(bones)))) for part, bone in enumerate(bones)]
        joints.append((names["end_" + parent], points[len(roles)]))
        specs += limb_specs(parent, joints, points[len(roles) + 1] if len(points) > len(roles) + 1 else
                            tuple(Vector(points[-1]) + Vector((0.05, 0, 0))))
    return specs


MAKEHUMAN_SPLIT = {"thigh": ["upperleg01.L", "upperleg02.L"], "shin": ["lowerleg01.L", "lowerleg02.L"],
                   "foot": ["foot.L"], "upper": ["upperarm01.L", "upperarm02.L"],
                   "fore": ["lowerarm01.L", "lowerarm02.L"], "end_hips": "toe1-1.L", "end_chest": "wrist.L"}
DAZ_SPLIT = {"thigh": ["lThighBend", "lThighTwist"], "shin": ["lShin"], "foot": ["lFoot"],
             "upper": ["lShldrBend", "lShldrTwist"], "fore": ["lForearmBend", "lForearmTwist"],
             "end_hips": "lToe", "end_chest": "lHand"}
# Rigify's deform bones exported for a game engine, the rig's controls and ORG- and MCH- bones left behind:
# each segment in two, the second numbered as Blender numbers a copy.
RIGIFY_EXPORT_SPLIT = {"thigh": ["DEF-thigh.L", "DEF-thigh.L.001"], "shin": ["DEF-shin.L", "DEF-shin.L.001"],
                       "foot": ["DEF-foot.L"], "upper": ["DEF-upper_arm.L", "DEF-upper_arm.L.001"],
                       "fore": ["DEF-forearm.L", "DEF-forearm.L.001"], "end_hips": "DEF-toe.L",
                       "end_chest": "DEF-hand.L"}
# Auto-Rig Pro's exports (FBX, glTF) name each segment's halves twist and stretch, the twist first in the
# upper ones.
ARP_SPLIT = {"thigh": ["thigh_twist.l", "thigh_stretch.l"], "shin": ["leg_stretch.l", "leg_twist.l"],
             "foot": ["foot.l"], "upper": ["c_arm_twist_offset.l", "arm_stretch.l"],
             "fore": ["forearm_stretch.l", "forearm_twist.l"], "end_hips": "toes_01.l", "end_chest": "hand.l"}


@pytest.mark.parametrize(("names", "legs", "arms"), [
    # MakeHuman/MPFB's default skeleton cuts each segment in two.
    (MAKEHUMAN_SPLIT, (("upperleg01.L", "upperleg02.L", "lowerleg01.L", "lowerleg02.L"), "foot.L",
                       ("upperleg02.L", "lowerleg02.L")),
     (("upperarm01.L", "upperarm02.L", "lowerarm01.L", "lowerarm02.L"), "wrist.L", ("upperarm02.L", "lowerarm02.L"))),
    # DAZ Genesis 3 and 8 put a twist bone after the bend bone: the shin has none, the forearm has.
    (DAZ_SPLIT, (("lThighBend", "lThighTwist", "lShin"), "lFoot", ("lThighTwist",)),
     (("lShldrBend", "lShldrTwist", "lForearmBend", "lForearmTwist"), "lHand", ("lShldrTwist", "lForearmTwist"))),
    (RIGIFY_EXPORT_SPLIT, (("DEF-thigh.L", "DEF-thigh.L.001", "DEF-shin.L", "DEF-shin.L.001"), "DEF-foot.L",
                           ("DEF-thigh.L.001", "DEF-shin.L.001")),
     (("DEF-upper_arm.L", "DEF-upper_arm.L.001", "DEF-forearm.L", "DEF-forearm.L.001"), "DEF-hand.L",
      ("DEF-upper_arm.L.001", "DEF-forearm.L.001"))),
    (ARP_SPLIT, (("thigh_twist.l", "thigh_stretch.l", "leg_stretch.l", "leg_twist.l"), "foot.l",
                 ("thigh_stretch.l", "leg_twist.l")),
     (("c_arm_twist_offset.l", "arm_stretch.l", "forearm_stretch.l", "forearm_twist.l"), "hand.l",
      ("arm_stretch.l", "forearm_twist.l"))),
])
def test_segments_split_in_two_bones_are_one_segment_of_the_chain(names, legs, arms):
    detection = detect_limbs(make_skeleton(split_limbs(names)))
    assert [(limb.kind, limb.chain, limb.extremity, limb.halves) for limb in detection.limbs] == [
        (LEG, *legs), (ARM, *arms)]
    # The second halves read as lower bones too, but are part of the limbs found: no skip to report.
    assert detection.skipped == ()
    assert f"left leg: {' > '.join(legs[0])}, foot {legs[1]}" in detection.describe()


@pytest.mark.parametrize("names", [MAKEHUMAN_SPLIT, DAZ_SPLIT, ARP_SPLIT])
def test_halves_that_do_not_continue_each_others_line_are_skipped_with_the_reason(names):
    specs = split_limbs(names)
    # Turn the thigh's second half 30 degrees toward the front, and the bones below with it.
    second = names["thigh"][1]
    pivot = Vector(next(head for name, _, head, _ in specs if name == second))
    turn = Matrix.Rotation(math.radians(30.0), 3, "X")
    below = {second}
    moved = []
    for name, parent, head, tail in specs:
        if parent in below:
            below.add(name)
        if name in below:
            head, tail = (tuple(pivot + turn @ (Vector(point) - pivot)) for point in (head, tail))
        moved.append((name, parent, head, tail))
    detection = detect_limbs(make_skeleton(moved))
    assert [limb.kind for limb in detection.limbs] == [ARM]
    reason = reasons(detection)[names["shin"][0]]
    assert f"'{names['thigh'][0]}' > '{second}' are named as the two halves of the thigh, but they meet at 30 degrees" \
        in reason


def test_a_twist_bone_beside_the_chain_is_no_half_of_it():
    """Character Creator's and Unreal's twist bones hang beside the limb bones: the chain stays two bones."""
    detection = detect_limbs(make_skeleton(human(FAMILIES["unreal"], twists=True)))
    assert all(limb.halves == () and len(limb.chain) == 2 for limb in detection.limbs)


def test_clavicle_named_shoulder_is_not_in_the_chain_but_joint_named_shoulder_is():
    mixamo = detect_limbs(make_skeleton(human(FAMILIES["mixamo"])))
    joints = detect_limbs(make_skeleton(human(FAMILIES["joint-named mocap"])))
    assert [limb.chain for limb in mixamo.limbs if limb.kind == ARM][0] == (
        "mixamorig:LeftArm", "mixamorig:LeftForeArm")
    assert [limb.chain for limb in joints.limbs if limb.kind == ARM][0] == ("LeftShoulder", "LeftElbow")


def test_twist_bones_are_never_chosen():
    detection = detect_limbs(make_skeleton(human(FAMILIES["unreal"], twists=True)))
    assert summary(detection) == expected(FAMILIES["unreal"])
    assert detection.skipped == ()


@pytest.mark.parametrize(("filename", "prefix"), [("mixamo_freebvh.bvh", "mixamorig:"),
                                                  ("threejs_pirouette_rest.bvh", "")])
def test_real_skeletons(filename, prefix):
    obj = import_bvh(filename)
    assert obj.mode == "OBJECT"
    detection = detect_limbs(read_skeleton(obj))
    if prefix:
        rows = [(kind, side[0], (f"{prefix}{side}{upper}", f"{prefix}{side}{lower}"), f"{prefix}{side}{end}")
                for kind, upper, lower, end in ((LEG, "UpLeg", "Leg", "Foot"), (ARM, "Arm", "ForeArm", "Hand"))
                for side in ("Left", "Right")]
    else:
        rows = [(kind, side.upper(), (f"{side}{upper}", f"{side}{lower}"), f"{side}{end}")
                for kind, upper, lower, end in ((LEG, "thigh", "shin", "foot"), (ARM, "shldr", "forearm", "hand"))
                for side in ("l", "r")]
    assert summary(detection) == rows
    assert detection.skipped == ()


def test_bones_made_by_an_earlier_build_are_never_chosen():
    obj = import_bvh("mixamo_freebvh.bvh")
    before = detect_limbs(read_skeleton(obj))
    bpy.ops.object.mode_set(mode="POSE")
    for last in ("mixamorig:LeftLeg", "mixamorig:LeftForeArm"):
        set_active_bone(obj, last)
        assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")
    assert any("_IK" in bone.name for bone in obj.data.bones)
    assert detect_limbs(read_skeleton(obj)) == before


def prefixed(specs: list[Spec], prefix: str) -> list[Spec]:
    return [(f"{prefix}{name}", f"{prefix}{parent}" if parent else None, head, tail)
            for name, parent, head, tail in specs]


def fk_control(name: str) -> str:
    """Rigify's FK control name for a metarig bone: thigh.L -> thigh_fk.L."""
    base, dot, side = name.rpartition(".")
    return f"{base}_fk{dot}{side}" if dot else f"{name}_fk"


def test_generated_rigify_bones_are_not_rigged():
    # A generated rig keeps no plain limb bone: ORG- and DEF- copies, MCH- helpers and controls such as thigh_fk.L.
    metarig = human(FAMILIES["rigify metarig"])
    controls = [(fk_control(name), fk_control(parent) if parent else None, head, tail)
                for name, parent, head, tail in metarig]
    helpers = [("MCH-shin_ik.L", "ORG-thigh.L", (0.1, -0.02, 0.55), (0.1, 0, 0.1))]
    specs = prefixed(metarig, "ORG-") + prefixed(metarig, "DEF-") + controls + helpers
    detection = detect_limbs(make_skeleton(specs))
    assert detection.limbs == ()
    why = reasons(detection)
    assert set(why) == {f"{prefix}-{bone}.{side}" for prefix in ("ORG", "DEF") for side in "LR"
                        for bone in ("shin", "forearm")}
    assert "ORG- bone" in why["ORG-shin.L"] and "metarig" in why["ORG-shin.L"]
    assert "DEF- bone" in why["DEF-forearm.R"]
    assert not any(item.tails_off for item in detection.skipped)  # Fix Bone Orientation would not rig them


@pytest.mark.parametrize("rival", ["{}2", "{}.001"])
def test_two_candidate_left_legs_are_both_skipped(rival):
    specs = human(FAMILIES["mixamo"])
    specs += [
        (rival.format("mixamorig:LeftUpLeg"), "hips", (0.15, 0, 0.98), (0.15, -0.02, 0.55)),
        (rival.format("mixamorig:LeftLeg"), rival.format("mixamorig:LeftUpLeg"), (0.15, -0.02, 0.55),
         (0.15, 0, 0.1)),
    ]
    detection = detect_limbs(make_skeleton(specs))
    assert summary(detection) == [row for row in expected(FAMILIES["mixamo"]) if row[:2] != (LEG, "L")]
    why = reasons(detection)
    assert set(why) == {"mixamorig:LeftLeg", rival.format("mixamorig:LeftLeg")}
    assert "2 chains could be the left leg" in why["mixamorig:LeftLeg"]
    assert rival.format("mixamorig:LeftUpLeg") in why["mixamorig:LeftLeg"]


def test_tails_tentacles_fingers_and_toes_are_ignored():
    specs = human(FAMILIES["rigify metarig"])
    specs += [
        ("tail.001", "hips", (0, 0.1, 1.0), (0, 0.4, 0.9)),
        ("tail.002", "tail.001", (0, 0.4, 0.9), (0, 0.7, 0.8)),
        ("tail.003", "tail.002", (0, 0.7, 0.8), (0, 1.0, 0.7)),
        ("tentacle_01_L", "chest", (0.05, 0.1, 1.3), (0.1, 0.4, 1.3)),
        ("tentacle_02_L", "tentacle_01_L", (0.1, 0.4, 1.3), (0.15, 0.7, 1.3)),
        ("f_index.02.L", "f_index.01.L", (0.85, 0, 1.42), (0.88, 0, 1.42)),
        ("f_index.03.L", "f_index.02.L", (0.88, 0, 1.42), (0.9, 0, 1.42)),
        ("thumb.01.L", "hand.L", (0.75, -0.02, 1.42), (0.78, -0.05, 1.42)),
        ("thumb.02.L", "thumb.01.L", (0.78, -0.05, 1.42), (0.8, -0.07, 1.42)),
        ("toe.02.L", "toe.L", (0.1, -0.2, 0.03), (0.1, -0.24, 0.03)),
        ("heel.02.L", "foot.L", (0.08, 0.02, 0.0), (0.12, 0.02, 0.0)),
    ]
    detection = detect_limbs(make_skeleton(specs))
    assert summary(detection) == expected(FAMILIES["rigify metarig"])
    assert detection.skipped == ()


def test_only_one_side_is_still_found():
    specs = [("hip", None, (0, 0, 1.0), (0, 0, 1.1)), ("lthigh", "hip", (0.1, 0, 1.0), (0.1, -0.02, 0.55)),
             ("lshin", "lthigh", (0.1, -0.02, 0.55), (0.1, 0, 0.1)), ("lfoot", "lshin", (0.1, 0, 0.1), (0.1, -0.1, 0))]
    detection = detect_limbs(make_skeleton(specs))
    assert summary(detection) == [(LEG, "L", ("lthigh", "lshin"), "lfoot")]
    assert detection.skipped == ()


def test_a_limb_without_a_side_is_found_when_alone():
    specs = [("base", None, (0, 0, 0), (0, 0, 0.2)), ("UpperArm", "base", (0, 0, 0.2), (0.5, 0, 0.3)),
             ("Forearm", "UpperArm", (0.5, 0, 0.3), (1.0, 0, 0.2)), ("Hand", "Forearm", (1.0, 0, 0.2), (1.1, 0, 0.2))]
    assert summary(detect_limbs(make_skeleton(specs))) == [(ARM, None, ("UpperArm", "Forearm"), "Hand")]


def leg(upper: str, lower: str, foot: str | None = None, x: float = 0.1) -> list[Spec]:
    specs: list[Spec] = [(upper, "hips", (x, 0, 1.0), (x, -0.02, 0.55)), (lower, upper, (x, -0.02, 0.55), (x, 0, 0.1))]
    if foot:
        specs.append((foot, lower, (x, 0, 0.1), (x, -0.1, 0.0)))
    return [("hips", None, (0, 0, 1.0), (0, 0, 1.2)), *specs]


def test_bones_that_disagree_on_the_side_are_skipped():
    detection = detect_limbs(make_skeleton(leg("thigh.L", "shin.R", "foot.R")))
    assert detection.limbs == ()
    assert "disagree on the side" in reasons(detection)["shin.R"]
    assert "'thigh.L' is left" in reasons(detection)["shin.R"]


def test_a_name_with_both_sides_is_skipped():
    detection = detect_limbs(make_skeleton(leg("thigh.L", "L_shin_R")))
    assert detection.limbs == ()
    assert "names both sides" in reasons(detection)["L_shin_R"]


def test_a_parent_not_named_as_the_upper_bone_is_skipped():
    detection = detect_limbs(make_skeleton(leg("pelvis.L", "shin.L", "foot.L")))
    assert detection.limbs == ()
    assert "'pelvis.L' is not named like a thigh" in reasons(detection)["shin.L"]


def test_a_twist_parent_is_skipped():
    detection = detect_limbs(make_skeleton(leg("thigh_twist.L", "shin.L", "foot.L")))
    assert detection.limbs == ()
    assert "helper bone" in reasons(detection)["shin.L"]


def test_a_parent_whose_name_contains_an_upper_word_is_accepted():
    detection = detect_limbs(make_skeleton(leg("UpperLeg_Main.L", "Shin.L", "Foot.L")))
    assert summary(detection) == [(LEG, "L", ("UpperLeg_Main.L", "Shin.L"), "Foot.L")]


def test_a_shoulder_above_a_forearm_is_a_clavicle_not_an_upper_arm():
    specs = [("chest", None, (0, 0, 1.2), (0, 0, 1.45)), ("shoulder.L", "chest", (0.03, 0, 1.42), (0.18, 0, 1.42)),
             ("forearm.L", "shoulder.L", (0.18, 0, 1.42), (0.45, 0, 1.42))]
    detection = detect_limbs(make_skeleton(specs))
    assert detection.limbs == ()
    assert "not named like an upper arm" in reasons(detection)["forearm.L"]


def test_a_short_helper_at_the_elbow_is_not_half_an_arm():
    specs = [("chest", None, (0, 0, 1.2), (0, 0, 1.45)),
             ("upper_arm.L", "chest", (0.18, 0, 1.42), (0.45, 0.02, 1.42)),
             ("elbow.L", "upper_arm.L", (0.45, 0.02, 1.42), (0.47, 0.02, 1.42)),
             ("forearm.L", "elbow.L", (0.47, 0.02, 1.42), (0.7, 0, 1.42)),
             ("hand.L", "forearm.L", (0.7, 0, 1.42), (0.8, 0, 1.42))]
    detection = detect_limbs(make_skeleton(specs))
    assert detection.limbs == ()
    why = reasons(detection)
    assert "too unlike" in why["elbow.L"]
    assert "'elbow.L' is not named like an upper arm" in why["forearm.L"]


def test_an_unnamed_child_continuing_the_limb_is_its_extremity_but_a_helper_is_not():
    paw = detect_limbs(make_skeleton(leg("thigh.L", "shin.L", "paw.L")))
    assert summary(paw) == [(LEG, "L", ("thigh.L", "shin.L"), "paw.L")]
    twist = detect_limbs(make_skeleton(leg("thigh.L", "shin.L", "shin_twist.L")))
    assert summary(twist) == [(LEG, "L", ("thigh.L", "shin.L"), None)]
    other_side = detect_limbs(make_skeleton(leg("thigh.L", "shin.L", "paw.R")))
    assert summary(other_side) == [(LEG, "L", ("thigh.L", "shin.L"), None)]


def test_the_result_does_not_depend_on_bone_order():
    specs = human(FAMILIES["mixamo"], twists=True)
    first = detect_limbs(make_skeleton(specs))
    random.Random(7).shuffle(specs)
    assert detect_limbs(make_skeleton(specs)) == first


def test_describe_lists_limbs_and_skips():
    specs = human(FAMILIES["rigify metarig"]) + [("pelvis.R", "hips", (-0.05, 0, 1.0), (-0.1, 0, 0.98)),
                                                  ("shin.R.001", "pelvis.R", (-0.1, 0, 0.98), (-0.1, 0, 0.5))]
    detection = detect_limbs(make_skeleton(specs))
    text = detection.describe()
    assert "found 4 limb(s):" in text
    assert "  left leg: thigh.L > shin.L, foot foot.L" in text
    assert "  right arm: upper_arm.R > forearm.R, hand hand.R" in text
    assert "skipped 1 bone(s):" in text
    assert "  shin.R.001: its parent 'pelvis.R' is not named like a thigh" in text
    assert detection.limbs[0] == DetectedLimb(LEG, "L", ("thigh.L", "shin.L"), "foot.L")
    assert detection.limbs[0].last == "shin.L"
    assert detect_limbs(Skeleton({})).describe() == "found no legs or arms"


@pytest.mark.parametrize(("shin_tail", "why"), [
    # Three times its segment, past the foot: the handle would sit far below the ankle.
    ((0.1, -0.02, -0.8), "IK carries its tail, far past the foot, to the handle"),
    # A tenth of its segment: IK would move a tail far above the ankle.
    ((0.1, -0.02, 0.5), "IK moves the chain's bone tails, which lie far from the joints"),
])
def test_a_last_bone_far_off_its_segment_is_skipped_unless_the_tails_are_fixed(shin_tail, why):
    specs = [(name, parent, head, shin_tail if name == "shin.L" else tail)
             for name, parent, head, tail in leg("thigh.L", "shin.L", "foot.L")]
    skeleton = make_skeleton(specs)
    detection = detect_limbs(skeleton)
    assert detection.limbs == ()
    assert why in reasons(detection)["shin.L"] and "Fix Bone Orientation" in reasons(detection)["shin.L"]
    assert [item.tails_off for item in detection.skipped] == [True]
    # Fix Bone Orientation points the tails at the next joints: the limb is sure then.
    fixed = detect_limbs(skeleton, tails_fixed=True)
    assert summary(fixed) == [(LEG, "L", ("thigh.L", "shin.L"), "foot.L")]


# Three-segment legs as real packs name them (Quaternius' CC0 mech, animals and walker robot):
# (bone, parent, head, tail) of the left leg, below a body bone.
THREE_SEGMENT_LEGS = {
    "mech": [("UpperLeg.L", "Body"), ("MidLeg.L", "UpperLeg.L"), ("LowerLeg.L", "MidLeg.L")],
    "animal": [("BackLeg.L", "Body"), ("BackUpperLeg.L", "BackLeg.L"), ("BackLowerLeg.L", "BackUpperLeg.L")],
    "walker": [("Leg1.L", "Body"), ("Leg2.L", "Leg1.L"), ("Leg3.L", "Leg2.L")],
}


@pytest.mark.parametrize("pack", sorted(THREE_SEGMENT_LEGS))
def test_three_segment_legs_named_as_packs_name_them(pack):
    # A digitigrade zigzag: forward and down, back and down, straight down.
    joints = [(0.1, 0.0, 1.0), (0.1, -0.25, 0.7), (0.1, 0.05, 0.35), (0.1, 0.0, 0.05)]
    specs: list[Spec] = [("Body", None, (0, 0, 1.0), (0, 0.3, 1.0))]
    for (name, parent), head, tail in zip(THREE_SEGMENT_LEGS[pack], joints, joints[1:]):
        specs.append((name, parent, head, tail))
    detection = detect_limbs(make_skeleton(specs))
    chain = tuple(name for name, _ in THREE_SEGMENT_LEGS[pack])
    assert [(limb.kind, limb.side, limb.chain) for limb in detection.limbs] == [(LEG, "L", chain)]
    assert detection.skipped == ()


def test_a_short_bone_above_the_upper_leg_is_no_segment():
    """Named as the whole leg above the upper leg, but a hip stub by its length: the leg is two bones."""
    specs: list[Spec] = [("Body", None, (0, 0, 1.0), (0, 0.3, 1.0)), ("Leg.L", "Body", (0.05, 0, 1.0), (0.1, 0, 1.0)),
                         ("UpperLeg.L", "Leg.L", (0.1, 0, 1.0), (0.1, -0.02, 0.55)),
                         ("LowerLeg.L", "UpperLeg.L", (0.1, -0.02, 0.55), (0.1, 0, 0.1)),
                         ("Foot.L", "LowerLeg.L", (0.1, 0, 0.1), (0.1, -0.1, 0.0))]
    detection = detect_limbs(make_skeleton(specs))
    assert summary(detection) == [(LEG, "L", ("UpperLeg.L", "LowerLeg.L"), "Foot.L")]


def test_a_palm_continuing_the_forearm_is_the_hand_but_a_numbered_one_is_not():
    """A stylised character's hand may be its palm (Quaternius' knight); Rigify's palm.01 are metacarpals."""
    arm = [("chest", None, (0, 0, 1.2), (0, 0, 1.45)), ("UpperArm.L", "chest", (0.18, 0, 1.42), (0.45, 0.02, 1.42)),
           ("LowerArm.L", "UpperArm.L", (0.45, 0.02, 1.42), (0.7, 0, 1.42))]
    palm = detect_limbs(make_skeleton([*arm, ("Palm.L", "LowerArm.L", (0.7, 0, 1.42), (0.78, 0, 1.42))]))
    assert summary(palm) == [(ARM, "L", ("UpperArm.L", "LowerArm.L"), "Palm.L")]
    metacarpal = detect_limbs(make_skeleton([*arm, ("palm.01.L", "LowerArm.L", (0.7, 0, 1.42), (0.78, 0, 1.42))]))
    assert summary(metacarpal) == [(ARM, "L", ("UpperArm.L", "LowerArm.L"), None)]


def test_an_imported_forearms_one_palm_is_the_hand_beside_a_thumb():
    """Quaternius' knight, imported: every tail a stub at its head, so no child continues the
    forearm, and a thumb (misnamed for the other side) starts beside the palm. Its one palm on
    its side is the hand; two palms, or a numbered one, are no sure hand."""
    def stub(name: str, parent: str | None, head: tuple[float, float, float]) -> Spec:
        return (name, parent, head, (head[0], head[1] + 1e-4, head[2]))

    arm = [stub("Chest", None, (0, 0, 1.3)), stub("UpperArm.L", "Chest", (0.18, 0, 1.42)),
           stub("LowerArm.L", "UpperArm.L", (0.45, 0.02, 1.42)), stub("Thumb.R", "LowerArm.L", (0.68, -0.03, 1.4))]
    palm = stub("Palm.L", "LowerArm.L", (0.7, 0, 1.42))
    fingers = stub("Fingers.L", "Palm.L", (0.8, 0, 1.42))
    found = detect_limbs(make_skeleton([*arm, palm, fingers]), tails_fixed=True)
    assert summary(found) == [(ARM, "L", ("UpperArm.L", "LowerArm.L"), "Palm.L")]
    assert found.skipped == ()
    other = stub("Palm_L", "LowerArm.L", (0.69, 0.01, 1.42))
    numbered = stub("palm.01.L", "LowerArm.L", (0.7, 0, 1.42))
    for palms in ([palm, other], [numbered]):
        unsure = detect_limbs(make_skeleton([*arm, *palms]), tails_fixed=True)
        assert unsure.limbs == () and "no single joint below it" in reasons(unsure)["LowerArm.L"]


def test_a_quadrupeds_ik_targets_under_the_root_are_its_feet():
    """Quaternius' animals, imported: stub tails, legs ending in a bone with no child, and each hoof
    a skinned bone under the root named as the leg's IK target (``IKBackLeg.L``). The one on the
    leg's side and end (front or hind), a segment's length below it, is its foot."""
    def stub(name: str, parent: str | None, head: tuple[float, float, float]) -> Spec:
        return (name, parent, head, (head[0], head[1] + 1e-4, head[2]))

    animal = [stub("Body", None, (0, 0, 1.0)), stub("BackShoulder.L", "Body", (0.1, 0.6, 1.0)),
              stub("BackLeg.L", "BackShoulder.L", (0.15, 0.6, 1.0)),
              stub("BackUpperLeg.L", "BackLeg.L", (0.15, 0.5, 0.7)),
              stub("BackLowerLeg.L", "BackUpperLeg.L", (0.15, 0.65, 0.4)),
              stub("FrontShoulder.L", "Body", (0.1, -0.6, 1.0)),
              stub("FrontUpperLeg.L", "FrontShoulder.L", (0.15, -0.6, 0.9)),
              stub("FrontLowerLeg.L", "FrontUpperLeg.L", (0.15, -0.62, 0.5))]
    hooves = [stub("IKBackLeg.L", None, (0.15, 0.6, 0.05)), stub("FFB.L", "IKBackLeg.L", (0.15, 0.55, 0.0)),
              stub("IKFrontLeg.L", None, (0.15, -0.6, 0.08)), stub("FF.L", "IKFrontLeg.L", (0.15, -0.65, 0.0))]
    found = detect_limbs(make_skeleton([*animal, *hooves]), tails_fixed=True)
    assert summary(found) == [(LEG, "L", ("FrontUpperLeg.L", "FrontLowerLeg.L"), "IKFrontLeg.L"),
                              (LEG, "L", ("BackLeg.L", "BackUpperLeg.L", "BackLowerLeg.L"), "IKBackLeg.L")]
    assert found.skipped == ()
    # Another side's, another end's, an arm's, or one far below: the leg has no sure foot.
    for wrong in (stub("IKBackLeg.R", None, (0.15, 0.6, 0.05)), stub("IKFrontLeg.L", None, (0.15, 0.6, 0.05)),
                  stub("IK_Arm.L", None, (0.15, 0.6, 0.05)), stub("IKBackLeg.L", None, (0.15, 0.6, -3.0))):
        unsure = detect_limbs(make_skeleton([*animal[:5], wrong]), tails_fixed=True)
        assert summary(unsure) == [(LEG, "L", ("BackLeg.L", "BackUpperLeg.L", "BackLowerLeg.L"), None)], wrong


def test_a_game_rigs_foot_hanging_from_the_root_is_the_legs_foot():
    """Rigs made for IK (Quaternius', three.js' robot) leave the feet under the root, at the ankles."""
    body: list[Spec] = [("Root", None, (0, 0, 0), (0, 0.2, 0)), ("Hips", "Root", (0, 0, 1.0), (0, 0, 1.2)),
                        ("UpperLeg.L", "Hips", (0.1, 0, 1.0), (0.1, -0.02, 0.55)),
                        ("LowerLeg.L", "UpperLeg.L", (0.1, -0.02, 0.55), (0.1, 0, 0.1)),
                        ("PoleTarget.L", "Root", (0.1, -0.5, 0.55), (0.1, -0.6, 0.55))]
    foot: Spec = ("Foot.L", "Root", (0.1, 0, 0.1), (0.1, -0.1, 0.0))
    assert summary(detect_limbs(make_skeleton([*body, foot]))) == [
        (LEG, "L", ("UpperLeg.L", "LowerLeg.L"), "Foot.L")]
    # Far from the leg's end, or one of two, it is nobody's sure foot.
    far: Spec = ("Foot.L", "Root", (0.1, 0, -2.5), (0.1, -0.1, -2.6))
    assert summary(detect_limbs(make_skeleton([*body, far]))) == [(LEG, "L", ("UpperLeg.L", "LowerLeg.L"), None)]
    second: Spec = ("Foot.L.001", "Root", (0.1, 0, 0.1), (0.1, -0.1, 0.0))
    assert summary(detect_limbs(make_skeleton([*body, foot, second]))) == [
        (LEG, "L", ("UpperLeg.L", "LowerLeg.L"), None)]


def test_a_bracketed_tag_flips_with_the_side_only_where_the_other_side_is_named_so():
    # Skyrim's tag says the side again; a tag that only begins with the letter does not (the other side's
    # bone keeps it as it is).
    skyrim = {"NPC L Thigh [LThg]", "NPC R Thigh [RThg]"}
    assert naming.flip_name("NPC L Thigh [LThg]", skyrim) == "NPC R Thigh [RThg]"
    assert naming.flip_name("NPC R Thigh [RThg]", skyrim) == "NPC L Thigh [LThg]"
    tagged = {"L_thigh [Lower]", "R_thigh [Lower]"}
    assert naming.flip_name("L_thigh [Lower]", tagged) == "R_thigh [Lower]"
