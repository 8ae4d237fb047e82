"""Families detection missed before: Quaternius' spider (legs numbered with their first unnumbered,
pairs in the middle named with compound words), Quaternius' later horse (its own IK controls beside
the legs) and MakeHuman's split lower leg's chain length.

No redistributable copy of Quaternius' spider (CC0) was at hand: it is written here from its
documented layout (public scripts that rig its .blend list the bones: ``SpiderArmature``,
``Root``, each leg ``FrontLeg.L > FrontLeg2.L > FrontLeg3.L``, ``MidFrontLeg``, ``MidBackLeg``
and ``BackLeg`` likewise, each with its IK target under the root, ``FrontFoot.L``, the right
front one ``FrontFoot2.R``, ``MidFrontFoot.L``, ..., and ``PoleTarget.L``/``.R``; its IK chains
are 3 bones long), with joint positions of our own, as a rest armature (bones joint to joint, as
its .blend has them) and as a glTF imported at the importer's default settings. Neither is the
later horse (``tests/data``'s horse is the earlier one, ``FrontLeg.L > FrontUpLeg.L > FrontLowLeg.L``):
its bone names are those public game code lists for it, with positions of our own.
"""

from __future__ import annotations

import json

import pytest
from helpers import at_rest_alone, import_bvh, make_armature
from test_detect_families import skinned_gltf, summary
from test_detect_real import assert_handles_move_chain_ends, import_gltf

from ik_rigger import api
from ik_rigger.core.detect import FRONT, LEG, MID_FRONT, MID_HIND, detect_limbs
from ik_rigger.core.detect_names import Names
from ik_rigger.core.errors import RigError
from ik_rigger.rig.skeleton import read_skeleton

Point = tuple[float, float, float]
# Each pair of legs: its name, where it leaves the body along Y and how far forward (-Y) it reaches.
PAIRS = (("Front", -0.2, -0.25), ("MidFront", -0.07, -0.08), ("MidBack", 0.07, 0.08), ("Back", 0.2, 0.25))


def _foot(pair: str, side: str) -> str:
    return "FrontFoot2.R" if (pair, side) == ("Front", "R") else f"{pair}Foot.{side}"


def spider_joints() -> list[tuple[str, str | None, Point, Point]]:
    """The spider's bones in Blender's axes (Z up, facing -Y, its left at +X): name, parent, head, tail."""
    bones: list[tuple[str, str | None, Point, Point]] = [
        ("Root", None, (0, 0, 0), (0, 0.3, 0)), ("Body", "Root", (0, 0, 0.5), (0, 0.2, 0.5)),
        ("Head", "Body", (0, -0.35, 0.5), (0, -0.5, 0.5)), ("Abdomen", "Body", (0, 0.35, 0.55), (0, 0.7, 0.55))]
    for side, x in (("L", 1.0), ("R", -1.0)):
        for pair, y, forward in PAIRS:
            joints = [(0.12 * x, y, 0.5), (0.45 * x, y + 0.5 * forward, 0.85), (0.85 * x, y + forward, 0.6),
                      (1.05 * x, y + 1.2 * forward, 0.0)]
            names = [f"{pair}Leg.{side}", f"{pair}Leg2.{side}", f"{pair}Leg3.{side}"]
            for index, name in enumerate(names):
                bones.append((name, names[index - 1] if index else "Body", joints[index], joints[index + 1]))
            tip = joints[-1]
            bones.append((_foot(pair, side), "Root", tip, (tip[0], tip[1] + 0.15, tip[2])))
        bones.append((f"PoleTarget.{side}", "Root", (1.5 * x, 0, 1.2), (1.5 * x, 0.15, 1.2)))
    return bones


SPIDER_LEGS = [(LEG, side, (f"{pair}Leg.{side}", f"{pair}Leg2.{side}", f"{pair}Leg3.{side}"), _foot(pair, side))
               for pair, _, _ in PAIRS for side in "LR"]


def test_the_spiders_numbered_legs_are_chains_of_three_from_the_unnumbered_first():
    """``FrontLeg.L > FrontLeg2.L > FrontLeg3.L``: one leg of 3 bones, as the spider's own .blend rigs it,
    ending at its IK target under the root; ``MidFrontLeg``/``MidBackLeg`` are its middle pairs."""
    obj = make_armature([(name, head, tail, parent, parent not in (None, "Root", "Body"))
                         for name, parent, head, tail in spider_joints()], name="SpiderArmature")
    detection = detect_limbs(read_skeleton(obj))
    assert summary(detection) == SPIDER_LEGS
    assert detection.skipped == ()
    positions = [limb.position for limb in detection.limbs]
    assert positions[2:4] == [MID_FRONT] * 2 and positions[4:6] == [MID_HIND] * 2
    assert detection.limbs[2].label == "left middle front leg"
    built = api.auto_rig(obj)
    assert sorted(limb.name for limb in built) == sorted(chain[-1] for _, _, chain, _ in SPIDER_LEGS)
    assert_handles_move_chain_ends(obj, {chain[-1]: 3 for _, _, chain, _ in SPIDER_LEGS})
    for _, _, chain, foot in SPIDER_LEGS:
        assert obj.ik_rigger.limb_of(chain[-1]).extremity == foot


def test_the_spider_through_the_gltf_importer_at_its_default_settings(tmp_path):
    """Imported with the default bone shapes (every bone pointing up, as no node is turned): the same
    eight legs, found once their tails are pointed at the joints."""
    joints = [(name, parent, (head[0], head[2], -head[1])) for name, parent, head, _ in spider_joints()]
    path = tmp_path / "spider.gltf"
    path.write_text(json.dumps(skinned_gltf(joints, "Quaternius' spider's layout (CC0)")))
    obj = import_gltf(str(path))
    skeleton = read_skeleton(obj)
    assert summary(detect_limbs(skeleton, tails_fixed=True)) == SPIDER_LEGS
    built = api.auto_rig(obj, fix_orientation=True)
    assert len(built) == 8
    assert_handles_move_chain_ends(obj, {chain[-1]: 3 for _, _, chain, _ in SPIDER_LEGS})


@pytest.mark.parametrize(("name", "position"), [("MidFrontLeg.L", MID_FRONT), ("MidBackLeg2.L", MID_HIND),
                                                 ("Middle_Hind_Leg_L", MID_HIND), ("FrontLeg.L", FRONT),
                                                 ("MidLeg.L", None)])
def test_compound_words_name_a_middle_pair_of_legs(name, position):
    """A middle word before the position says a middle pair; alone it is a mech's middle segment."""
    obj = make_armature([("Body", (0, 0, 1), (0, 0.2, 1), None, False),
                         (name, (0.1, 0, 1), (0.4, 0, 1.2), "Body", False)])
    read = Names(read_skeleton(obj))[name]
    assert (read.base, read.position) == ("leg" if position else "midleg", position)


def horse_bones() -> list[tuple[str, str | None, Point, Point]]:
    """Quaternius' later horse in Blender's axes (facing -Y): name, parent, head, tail. Each front leg
    stops at the knee (carpus), each hind leg at the hock; the rest of the leg, the hoof, is skinned to
    ``FF.L`` (``FFB.L``) under the IK control ``IKFrontLeg.L`` (``IKBackLeg.L``) at the root."""
    bones: list[tuple[str, str | None, Point, Point]] = [
        ("Root", None, (0, 0, 0), (0, 0.3, 0)), ("Body", "Root", (0, 0, 1.4), (0, 0.3, 1.4)),
        ("Back", "Body", (0, 0.3, 1.45), (0, 0.6, 1.45)), ("Torso", "Body", (0, -0.3, 1.45), (0, -0.6, 1.5)),
        ("Torso2", "Torso", (0, -0.6, 1.5), (0, -0.8, 1.55)), ("Torso3", "Torso2", (0, -0.8, 1.55), (0, -0.95, 1.7)),
        ("Neck1", "Torso3", (0, -0.95, 1.7), (0, -1.05, 1.85)), ("Head", "Neck1", (0, -1.05, 1.85), (0, -1.4, 1.8))]
    for side, x in (("L", 1.0), ("R", -1.0)):
        front = [(0.12 * x, -0.75, 1.55), (0.2 * x, -0.68, 1.12), (0.2 * x, -0.74, 0.8), (0.2 * x, -0.74, 0.45)]
        names = [f"FrontShoulder.{side}", f"FrontUpperLeg.{side}", f"FrontLowerLeg.{side}"]
        parents = ["Torso3", *names]
        bones += [(name, parents[index], front[index], front[index + 1]) for index, name in enumerate(names)]
        back = [(0.12 * x, 0.55, 1.5), (0.2 * x, 0.62, 1.3), (0.2 * x, 0.52, 0.95), (0.2 * x, 0.74, 0.62),
                (0.2 * x, 0.8, 0.45)]
        names = [f"BackShoulder.{side}", f"BackLeg.{side}", f"BackUpperLeg.{side}", f"BackLowerLeg.{side}"]
        parents = ["Back", *names]
        bones += [(name, parents[index], back[index], back[index + 1]) for index, name in enumerate(names)]
        for ik, hoof, end, pole, pole_at in ((f"IKFrontLeg.{side}", f"FF.{side}", front[-1], f"PoleTarget.{side}",
                                             (0.2 * x, -1.5, 0.8)),
                                            (f"IKBackLeg.{side}", f"FFB.{side}", back[-1], f"PoleTargetBack.{side}",
                                             (0.2 * x, 1.5, 0.8))):
            bones += [(ik, "Root", end, (end[0], end[1] + 0.1, end[2])),
                      (hoof, ik, end, (end[0], end[1], 0.0)),
                      (pole, "Root", pole_at, (pole_at[0], pole_at[1] + 0.1, pole_at[2]))]
    return bones


HORSE_LEGS = [(LEG, side, (f"FrontUpperLeg.{side}", f"FrontLowerLeg.{side}"), f"IKFrontLeg.{side}")
              for side in "LR"] + [
    (LEG, side, (f"BackLeg.{side}", f"BackUpperLeg.{side}", f"BackLowerLeg.{side}"), f"IKBackLeg.{side}")
    for side in "LR"]


@pytest.mark.parametrize("shapes", [{}, {"bone_heuristic": "TEMPERANCE"}])
def test_quaternius_later_horse_at_the_gltf_importers_settings(shapes, tmp_path):
    """Quaternius' later animals (bone names as public game code lists them for the horse, positions of
    our own): ``FrontShoulder.L > FrontUpperLeg.L > FrontLowerLeg.L`` and ``BackShoulder.L > BackLeg.L >
    BackUpperLeg.L > BackLowerLeg.L``, their own IK controls beside them at the root: each leg ends at
    its IK control, where the hoof hangs. All four are rigged as imported: the hind legs' last bone runs
    past the hock at these bone shapes, so theirs are built on hidden chains; Fix Bone Orientation rigs
    all four too."""
    joints = [(name, parent, (head[0], head[2], -head[1])) for name, parent, head, _ in horse_bones()]
    path = tmp_path / "horse.gltf"
    path.write_text(json.dumps(skinned_gltf(joints, "Quaternius' later horse's layout (CC0)")))
    obj = import_gltf(str(path), **shapes)
    skeleton = read_skeleton(obj)
    assert summary(detect_limbs(skeleton, tails_fixed=True)) == HORSE_LEGS
    assert summary(detect_limbs(skeleton))[:2] == HORSE_LEGS[:2]
    built = api.auto_rig(obj)
    assert {limb.name: len(limb.chain) for limb in built} == {chain[-1]: len(chain) for _, _, chain, _ in HORSE_LEGS}
    assert_handles_move_chain_ends(obj, {chain[-1]: len(chain) for _, _, chain, _ in HORSE_LEGS})
    for limb in built:
        api.remove(obj, limb.name)
    built = api.auto_rig(obj, fix_orientation=True)
    assert_handles_move_chain_ends(obj, {chain[-1]: len(chain) for _, _, chain, _ in HORSE_LEGS})


def test_makehumans_split_lower_leg_is_given_the_chain_length_it_needs_at_once():
    """``upperleg01.L > upperleg02.L > lowerleg01.L > lowerleg02.L``: a chain of 2 ending at the shin's
    second half is one segment; the hint names 4 (the thigh above is split too), which builds."""
    obj = import_bvh("makehuman_benchmark.bvh")
    at_rest_alone(obj)
    with pytest.raises(RigError) as refused:
        api.build(obj, "lowerleg02.L")
    assert "Set the chain length to 4 or more" in str(refused.value)
    built = api.build(obj, "lowerleg02.L", chain_length=4)
    assert built[0].chain == ("upperleg01.L", "upperleg02.L", "lowerleg01.L", "lowerleg02.L")
