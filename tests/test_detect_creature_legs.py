"""Creatures whose legs are named in two ways the usual words do not cover (Mesh2Motion's dragon and spider, both in
tests/data): a lower bone named after the joint at its tail, below a bone named as the whole leg and above the foot
(``front_leg_l > front_ankle_l > front_foot_l``), and a leg's segments numbered after a letter or number that tells
the legs of a side apart (``leg_a_1_l > leg_a_2_l > leg_a_3_l > leg_a_tip_l``). Auto-Rig finds both, and neither
reading turns a shin's ankle, a tentacle, a tail or a wing into a limb."""

from __future__ import annotations

import re

import pytest
from helpers import make_armature
from test_detect_real import assert_handles_move_chain_ends

from ik_rigger import api
from ik_rigger.core import naming
from ik_rigger.core.detect import ARM, FRONT, HIND, LEG, detect_limbs
from ik_rigger.core.detect_names import read_name
from ik_rigger.core.errors import RigError
from ik_rigger.rig.skeleton import read_skeleton

SIDES = (("l", "L", 1.0), ("r", "R", -1.0))  # the names' side, the side detection reports, the side's X
BODY = [("root", (0.0, 0.0, 0.0), (0.0, 0.5, 0.0), None, False),
        ("hips", (0.0, 0.4, 1.0), (0.0, 0.2, 1.0), "root", False),
        ("chest", (0.0, 0.2, 1.0), (0.0, -0.4, 1.0), "hips", True)]


def _found(detection) -> list[tuple]:
    return [(limb.kind, limb.position, limb.side, limb.chain, limb.extremity) for limb in detection.limbs]


def _rigged(obj, detection) -> None:
    """Auto-Rig rigs the limbs detection found, each handle carrying its chain's end."""
    built = api.auto_rig(obj)
    assert {limb.name: (limb.chain, limb.extremity) for limb in built} == {
        limb.last: (limb.chain, limb.extremity) for limb in detection.limbs}
    assert_handles_move_chain_ends(obj, {limb.last: len(limb.chain) for limb in detection.limbs})


def joint_named_leg(end: str, side: str, x: float, y: float, parent: str, above: str,
                    words: tuple[str, str] = ("leg", "ankle")) -> list:
    """A leg hanging from ``above`` (a collar or hip bone, not named as a thigh), its lower bone named after the joint
    at its tail: ``front_leg_l > front_ankle_l > front_foot_l > front_toes_l``, the knee bent forward (-Y)."""
    upper, lower = (f"{end}_{word}_{side}" for word in words)
    hip, foot, toes = (f"{end}_{word}_{side}" for word in (above, "foot", "toes"))
    return [(hip, (0.05 * x, y, 1.0), (x, y, 0.95), parent, False),
            (upper, (x, y, 0.95), (x, y - 0.05, 0.55), hip, True),
            (lower, (x, y - 0.05, 0.55), (x, y, 0.15), upper, True),
            (foot, (x, y, 0.15), (x, y - 0.1, 0.0), lower, True),
            (toes, (x, y - 0.1, 0.0), (x, y - 0.2, 0.0), foot, True)]


def test_a_lower_bone_named_after_the_ankle_at_its_tail_is_the_shin():
    """``front_leg_l > front_ankle_l > front_foot_l``: the whole-leg word names the thigh, the ankle the shin above
    the foot; each of the four legs is found, front and hind, and rigged."""
    bones = [*BODY, *(bone for side, _, x in SIDES for bone in (
        *joint_named_leg("front", side, 0.3 * x, -0.3, "chest", "leg_collar"),
        *joint_named_leg("back", side, 0.3 * x, 0.3, "hips", "leg_hip")))]
    obj = make_armature(bones, name="Dragon")
    detection = detect_limbs(read_skeleton(obj))
    assert detection.skipped == ()
    assert _found(detection) == [(LEG, position, side, (f"{end}_leg_{name}", f"{end}_ankle_{name}"),
                                  f"{end}_foot_{name}")
                                 for position, end in ((FRONT, "front"), (HIND, "back")) for name, side, _ in SIDES]
    _rigged(obj, detection)


def test_a_forearm_named_after_the_wrist_at_its_tail_is_the_forearm():
    """The same for an arm: ``arm_l > wrist_l > hand_l``, the arm held out along X, its elbow bent back (+Y)."""
    bones = list(BODY)
    for side, _, x in SIDES:
        bones += [(f"arm_{side}", (0.2 * x, -0.3, 1.0), (0.5 * x, -0.25, 1.0), "chest", False),
                  (f"wrist_{side}", (0.5 * x, -0.25, 1.0), (0.8 * x, -0.3, 1.0), f"arm_{side}", True),
                  (f"hand_{side}", (0.8 * x, -0.3, 1.0), (0.9 * x, -0.3, 1.0), f"wrist_{side}", True)]
    obj = make_armature(bones, name="Arms")
    detection = detect_limbs(read_skeleton(obj))
    assert detection.skipped == ()
    assert _found(detection) == [(ARM, None, side, (f"arm_{name}", f"wrist_{name}"), f"hand_{name}")
                                 for name, side, _ in SIDES]
    _rigged(obj, detection)


def test_an_ankle_below_a_shin_named_leg_stays_its_foot():
    """Mixamo's shin is "Leg": below ``back_upleg_l > back_leg_l``, the ankle above the foot is the leg's foot, not a
    second lower bone rivalling the first, while the dragon's front legs beside it are found."""
    bones = [*BODY, *(bone for side, _, x in SIDES for bone in joint_named_leg(
        "front", side, 0.3 * x, -0.3, "chest", "leg_collar"))]
    for side, _, x in SIDES:
        upleg, leg, ankle, foot = (f"back_{word}_{side}" for word in ("upleg", "leg", "ankle", "foot"))
        bones += [(upleg, (0.3 * x, 0.3, 1.0), (0.3 * x, 0.25, 0.6), "hips", False),
                  (leg, (0.3 * x, 0.25, 0.6), (0.3 * x, 0.3, 0.2), upleg, True),
                  (ankle, (0.3 * x, 0.3, 0.2), (0.3 * x, 0.25, 0.1), leg, True),
                  (foot, (0.3 * x, 0.25, 0.1), (0.3 * x, 0.15, 0.0), ankle, True)]
    obj = make_armature(bones, name="Mixed")
    detection = detect_limbs(read_skeleton(obj))
    assert detection.skipped == ()
    assert {limb.last: (limb.chain, limb.extremity) for limb in detection.limbs} == {
        **{f"front_ankle_{side}": ((f"front_leg_{side}", f"front_ankle_{side}"), f"front_foot_{side}")
           for side, _, _ in SIDES},
        **{f"back_leg_{side}": ((f"back_upleg_{side}", f"back_leg_{side}"), f"back_ankle_{side}")
           for side, _, _ in SIDES}}
    _rigged(obj, detection)


def lettered_leg(tag: str, side: str, x: float, y: float, segments: int = 3, kind: str = "leg") -> list:
    """A spider's leg hanging from an anchor on the chest, its segments numbered after ``tag``: ``legs_anchor_1_l >
    leg_a_1_l > leg_a_2_l > leg_a_3_l > leg_a_tip_l``, up to its knee, out, then down to the ground."""
    anchor = f"{kind}s_anchor_{tag}_{side}"
    joints = [(0.1 * x, y, 1.0), (0.5 * x, y, 1.4), (0.9 * x, y, 1.0), (1.1 * x, y, 0.3), (1.2 * x, y, 0.2),
              (1.3 * x, y, 0.1), (1.4 * x, y, 0.05), (1.5 * x, y, 0.0)][:segments + 1]
    names = [f"{kind}_{tag}_{number}_{side}" for number in range(1, segments + 1)] + [f"{kind}_{tag}_tip_{side}"]
    bones = [(anchor, (0.0, y, 1.0), joints[0], "chest", False)]
    for index, name in enumerate(names):
        tail = joints[index + 1] if index + 1 < len(joints) else tuple(
            value + 0.3 * (value - before) for value, before in zip(joints[-1], joints[-2]))
        bones.append((name, joints[index], tail, names[index - 1] if index else anchor, index > 0))
    return bones


@pytest.mark.parametrize("tags", ["abcd", "1234"])
@pytest.mark.parametrize("segments", [2, 3])
def test_a_legs_numbered_run_told_apart_by_a_letter_or_number_is_one_chain_to_its_tip(tags, segments):
    """Four legs a side, each a run numbered after its letter or number (``leg_a_1_l > leg_a_2_l > leg_a_3_l``):
    each run is one chain, its tip (``leg_a_tip_l``) the leg's end, reported as "left leg a" (or "left leg 1")."""
    bones = list(BODY)
    for side, _, x in SIDES:
        for index, tag in enumerate(tags):
            bones += lettered_leg(tag, side, x, -0.3 + 0.2 * index, segments)
    obj = make_armature(bones, name="Spider")
    detection = detect_limbs(read_skeleton(obj))
    assert detection.skipped == ()
    assert _found(detection) == [(LEG, None, side, tuple(f"leg_{tag}_{number}_{name}" for number in
                                                         range(1, segments + 1)), f"leg_{tag}_tip_{name}")
                                 for tag in tags for name, side, _ in SIDES]
    assert [limb.label for limb in detection.limbs[:3]] == [f"left leg {tags[0]}", f"right leg {tags[0]}",
                                                            f"left leg {tags[1]}"]
    _rigged(obj, detection)


def test_no_tentacle_tail_wing_or_one_bone_run_is_taken_for_a_leg():
    """Beside two lettered legs: a run of six named as leg ``e`` (a tentacle) is refused, saying why; a run of one
    (``leg_f_1_l > leg_f_tip_l``) has no knee; tails and wings numbered the same way name no limb. The legs
    are rigged."""
    bones = list(BODY)
    for side, _, x in SIDES:
        bones += [*lettered_leg("a", side, x, -0.3), *lettered_leg("b", side, x, -0.1),
                  *lettered_leg("e", side, x, 0.1, segments=6), *lettered_leg("f", side, x, 0.3, segments=1),
                  *lettered_leg("a", side, x, -0.2, kind="wing")]
    bones += [(f"tail_{number}", (0.0, 0.4 + 0.3 * number, 1.0), (0.0, 0.7 + 0.3 * number, 1.0),
               f"tail_{number - 1}" if number > 1 else "hips", number > 1) for number in range(1, 4)]
    obj = make_armature(bones, name="Creature")
    detection = detect_limbs(read_skeleton(obj))
    assert {limb.last for limb in detection.limbs} == {f"leg_{tag}_3_{side}" for tag in "ab" for side, _, _ in SIDES}
    reasons = {item.bone: item.reason for item in detection.skipped}
    assert sorted(reasons) == sorted(f"leg_{tag}_{number}_{side}" for tag, number in (("e", 6), ("f", 1))
                                     for side, _, _ in SIDES)
    for side, _, _ in SIDES:
        assert reasons[f"leg_e_6_{side}"].startswith(f"it ends 6 bones numbered as one leg ('leg_e_1_{side}' > ... > "
                                                     f"'leg_e_6_{side}'), more than a leg's 3 segments")
        assert reasons[f"leg_f_1_{side}"].startswith("it is the only bone numbered as its leg, with no knee to bend")
    _rigged(obj, detection)


def test_bones_named_like_legs_that_make_no_chain_are_refused_unchanged_saying_so():
    """A lone thigh above its foot (no shin) is still no leg: Auto-Rig says its bones named like parts of legs make
    no chain it can read, and changes nothing."""
    bones = list(BODY)
    for side, _, x in SIDES:
        bones += [(f"thigh_{side}", (0.2 * x, 0.3, 1.0), (0.2 * x, 0.3, 0.1), "hips", False),
                  (f"foot_{side}", (0.2 * x, 0.3, 0.1), (0.2 * x, 0.1, 0.0), f"thigh_{side}", True)]
    obj = make_armature(bones, name="Stilts")
    with pytest.raises(RigError, match=re.escape("no limbs found on 'Stilts': its bones named like parts of legs or "
                                                 "arms ('foot_l', 'foot_r', 'thigh_l', 'thigh_r') make no chain it "
                                                 "can read")):
        api.auto_rig(obj)
    assert not len(obj.ik_rigger.limbs) and len(obj.data.bones) == len(bones)


# Robot dogs name each leg's bones after its corner: Unitree's front left "FL_" and rear right "RR_", ANYmal's left
# front "LF_" and right hind "RH_" (corners as written, then the position and side detection reports).
CORNERS = {"position first": (("FL", FRONT, "L"), ("FR", FRONT, "R"), ("RL", HIND, "L"), ("RR", HIND, "R")),
           "side first": (("LF", FRONT, "L"), ("RF", FRONT, "R"), ("LH", HIND, "L"), ("RH", HIND, "R"))}


def corner_leg(corner: str, words: tuple[str, str, str, str], x: float, y: float) -> list:
    """A robot dog's leg named after its corner (``FL_hip > FL_thigh > FL_calf > FL_foot``), hanging from the trunk,
    the knee bent forward (-Y)."""
    hip, thigh, lower, foot = (f"{corner}_{word}" for word in words)
    return [(hip, (0.5 * x, y, 1.0), (x, y, 1.0), "chest", False),
            (thigh, (x, y, 1.0), (x, y - 0.05, 0.55), hip, True),
            (lower, (x, y - 0.05, 0.55), (x, y, 0.1), thigh, True),
            (foot, (x, y, 0.1), (x, y - 0.05, 0.0), lower, True)]


@pytest.mark.parametrize(("scheme", "words"), [("position first", ("hip", "thigh", "calf", "foot")),
                                               ("side first", ("HIP", "THIGH", "SHANK", "FOOT"))])
def test_a_robot_dogs_legs_named_after_their_corners_are_found_and_mirrored(scheme, words):
    """``FL_thigh > FL_calf > FL_foot`` (Unitree's) and ``LH_THIGH > LH_SHANK > LH_FOOT`` (ANYmal's): the corner says
    the side and whether front or hind, each leg is found and rigged, and a leg's mirror is the other side's."""
    corners = CORNERS[scheme]
    bones = list(BODY)
    for corner, position, side in corners:
        bones += corner_leg(corner, words, 0.3 if side == "L" else -0.3, -0.3 if position == FRONT else 0.3)
    obj = make_armature(bones, name="RobotDog")
    detection = detect_limbs(read_skeleton(obj))
    assert detection.skipped == ()
    assert _found(detection) == [(LEG, position, side, (f"{corner}_{words[1]}", f"{corner}_{words[2]}"),
                                  f"{corner}_{words[3]}") for corner, position, side in corners]
    _rigged(obj, detection)
    # Both Sides on one leg rigs its mirror: the other side's corner, the same end of the body.
    api.remove(obj, f"{corners[2][0]}_{words[2]}")
    api.remove(obj, f"{corners[3][0]}_{words[2]}")
    built = api.build(obj, f"{corners[2][0]}_{words[2]}", both_sides=True)
    assert sorted(limb.name for limb in built) == sorted(f"{corner}_{words[2]}" for corner, *_ in corners[2:])


# Corners inside the names, after a leg word and before the segment's number: front left to back right.
TAGGED_CORNERS = (("fl", FRONT, "L"), ("fr", FRONT, "R"), ("bl", HIND, "L"), ("br", HIND, "R"))


def corner_tagged_leg(corner: str, x: float, y: float) -> list:
    """A leg of three bones named with its corner inside (``leg_fl_1 > leg_fl_2 > leg_fl_3``), hanging from the
    trunk, the knee bent forward (-Y), the third bone as short as a paw."""
    upper, lower, paw = (f"leg_{corner}_{number}" for number in (1, 2, 3))
    return [(upper, (x, y, 1.0), (x, y - 0.05, 0.55), "chest", False),
            (lower, (x, y - 0.05, 0.55), (x, y, 0.15), upper, True),
            (paw, (x, y, 0.15), (x, y - 0.08, 0.0), lower, True)]


def test_legs_with_their_corner_inside_the_name_are_found_and_mirrored():
    """``leg_fl_1 > leg_fl_2 > leg_fl_3`` to ``leg_br_*``: four legs, each corner telling the side and whether front
    or back, so each side's pair is told apart; Both Sides mirrors fl to fr and bl to br."""
    bones = list(BODY)
    for corner, position, side in TAGGED_CORNERS:
        bones += corner_tagged_leg(corner, 0.3 if side == "L" else -0.3, -0.3 if position == FRONT else 0.3)
    obj = make_armature(bones, name="TaggedCorners")
    names = {bone[0] for bone in bones}
    detection = detect_limbs(read_skeleton(obj))
    assert detection.skipped == ()
    assert _found(detection) == [(LEG, position, side, tuple(f"leg_{corner}_{number}" for number in (1, 2, 3)), None)
                                 for corner, position, side in TAGGED_CORNERS]
    for left, right in (("fl", "fr"), ("bl", "br")):
        for number in (1, 2, 3):
            assert naming.flip_name(f"leg_{left}_{number}", names) == f"leg_{right}_{number}"
            assert naming.flip_name(f"leg_{right}_{number}", names) == f"leg_{left}_{number}"
    _rigged(obj, detection)
    api.remove(obj, "leg_bl_3")
    api.remove(obj, "leg_br_3")
    built = api.build(obj, "leg_bl_3", chain_length=3, both_sides=True)
    assert sorted(limb.name for limb in built) == ["leg_bl_3", "leg_br_3"]
    # Without the other side's corner beside it, such a tag says no side, as a corner before the name does.
    assert naming.split_side("leg_fl_1").side is None and naming.flip_name("leg_fl_1") is None


def test_a_bipeds_right_leg_prefix_is_no_corner():
    """``RL_thigh`` beside ``LL_thigh`` is a biped's right and left leg, not a rear left corner: with no ``RR_thigh``
    the prefix is read as the right leg's (the legs are not taken for a quadruped's hind legs)."""
    names = {"RL_thigh", "LL_thigh", "RL_calf", "LL_calf"}
    assert naming.split_side("RL_thigh", names).side == naming.RIGHT
    assert naming.flip_name("RL_thigh", names) == "LL_thigh"
    assert naming.flip_name("LL_thigh", names) == "RL_thigh"
    assert read_name("RL_thigh", names).position is None
    # With both rear corners, the same name is the rear left leg's.
    corners = {"RL_thigh", "RR_thigh"}
    assert naming.split_side("RL_thigh", corners).side == naming.LEFT
    assert naming.flip_name("RL_thigh", corners) == "RR_thigh"
    assert naming.flip_name("RR_thigh", corners) == "RL_thigh"
    # A corner before a word naming no leg bone is no corner ("LH_index" beside "RH_index": hands' fingers).
    assert naming.split_side("LH_index", {"LH_index", "RH_index"}).side is None


def test_a_three_segment_leg_keeps_its_long_foot_in_line_as_its_foot():
    """Quaternius' animals' legs run ``FrontLeg.L > FrontUpLeg.L > FrontLowLeg.L`` from the body, the foot below: the
    parasaurolophus' front foot, nearly as long as the segment above it and in line with the leg, was taken for a
    fourth segment, its exporter's leaf (``FrontFoot.L_end``, no side of its own) for the foot, and the legs were
    skipped as bones disagreeing on their side."""
    bones = [("root", (0.0, 0.0, 0.0), (0.0, 0.5, 0.0), None, False),
             ("Body", (0.0, 0.6, 1.3), (0.0, -0.6, 1.3), "root", False)]
    for side, _, x in SIDES:
        names = [f"Front{word}.{side.upper()}" for word in ("Leg", "UpLeg", "LowLeg", "Foot")]
        joints = [(0.1 * x, -0.5, 1.25), (0.25 * x, -0.5, 1.0), (0.25 * x, -0.62, 0.7), (0.25 * x, -0.56, 0.4),
                  (0.25 * x, -0.5, 0.13), (0.25 * x, -0.44, -0.14)]
        parents = ["Body", *names]
        bones += [(name, head, tail, parent, index > 0)
                  for index, (name, head, tail, parent) in enumerate(zip(names, joints, joints[1:], parents))]
        bones.append((f"{names[-1]}_end", joints[4], joints[5], names[-1], True))
    obj = make_armature(bones, name="Dinosaur")
    detection = detect_limbs(read_skeleton(obj))
    found = {limb.last: (limb.side, limb.chain, limb.extremity) for limb in detection.limbs}
    assert found == {f"FrontLowLeg.{side}": (side, tuple(f"Front{word}.{side}" for word in ("Leg", "UpLeg", "LowLeg")),
                                             f"FrontFoot.{side}") for _, side, _ in SIDES}
    _rigged(obj, detection)
