"""Finding legs and arms by bone names and hierarchy (core.detect), on built and real skeletons."""

from __future__ import annotations

import random

import bpy
import pytest
from helpers import import_bvh, set_active_bone
from mathutils import Vector

from ik_rigger.core.detect import ARM, LEG, DetectedLimb, Detection, detect_limbs
from ik_rigger.core.plan import BoneInfo, Skeleton
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


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_naming_families_both_sides(name):
    detection = detect_limbs(make_skeleton(human(FAMILIES[name])))
    assert summary(detection) == expected(FAMILIES[name])
    assert detection.skipped == ()


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
