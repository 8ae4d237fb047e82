"""A Rigify rig as Sketchfab renames it, its prefixes kept (``DEF-thighL_07``): read as the same rig with its dots."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from helpers import make_armature
from test_detect import (
    FAMILIES,
    RIGIFY_EXPORT_SPLIT,
    Spec,
    fk_control,
    human,
    make_skeleton,
    prefixed,
    reasons,
    split_limbs,
)
from test_detect_real import assert_handles_move_chain_ends

from ik_rigger import api
from ik_rigger.core import naming
from ik_rigger.core.detect import ARM, LEG, Detection, detect_limbs
from ik_rigger.rig.skeleton import read_skeleton


def sketchfab(specs: list[Spec]) -> tuple[list[Spec], dict[str, str]]:
    """``specs`` renamed as Sketchfab renames a rig: the dots dropped and every bone numbered in turn, so the two
    sides' numbers differ ("DEF-thigh.L" is "DEF-thighL_09", "DEF-thigh.R" "DEF-thighR_18", "DEF-thigh.L.001"
    "DEF-thighL001_10"); with each old name's new one."""
    names = {name: f"{name.replace('.', '')}_{number:02d}" for number, (name, *_) in enumerate(specs, 7)}
    return [(names[name], parent and names[parent], head, tail) for name, parent, head, tail in specs], names


def both_sides_split(names: dict[str, list[str]]) -> list[Spec]:
    """``split_limbs`` of ``names`` (a left leg and arm, each segment in two) and the same limbs on the right."""
    left = split_limbs(names)
    right = [(name.replace(".L", ".R"), parent and parent.replace(".L", ".R"), (-head[0], *head[1:]),
              (-tail[0], *tail[1:])) for name, parent, head, tail in left if name.endswith((".L", ".L.001"))]
    return left + right


METARIG = human(FAMILIES["rigify metarig"])
DEFORM = prefixed(METARIG, "DEF-")
CONTROLS = [(fk_control(name), fk_control(parent) if parent else None, head, tail)
            for name, parent, head, tail in METARIG]
HELPERS = [(f"MCH-shin_ik.{side}", f"ORG-thigh.{side}", (0.1 * x, -0.02, 0.55), (0.1 * x, 0, 0.1))
           for side, x in (("L", 1.0), ("R", -1.0))]
# Rigify rigs as they reach Sketchfab: the deform bones alone (a game engine's export), also with each segment cut
# in two; the whole generated rig (ORG-, DEF-, MCH- and controls), or its ORG- and DEF- bones alone; the deform bones
# beside bare twins.
RIGS = {
    "deform only": DEFORM,
    "deform only, segments split": both_sides_split(RIGIFY_EXPORT_SPLIT),
    "generated rig": prefixed(METARIG, "ORG-") + DEFORM + CONTROLS + HELPERS,
    "original and deform": prefixed(METARIG, "ORG-") + DEFORM,
    "deform beside bare twins": METARIG + DEFORM,
}


def renamed(detection: Detection, names: dict[str, str]) -> tuple[list, dict[str, str]]:
    """``detection``'s limbs and skips with every bone named as ``names`` renames it, in reasons too."""
    word = re.compile("|".join(rf"(?<![\w.-]){re.escape(name)}(?![\w.])" for name in sorted(names, key=len,
                                                                                              reverse=True)))
    limbs = [(limb.kind, limb.side, tuple(map(names.get, limb.chain)), names[limb.extremity],
              tuple(map(names.get, limb.halves))) for limb in detection.limbs]
    return limbs, {names[bone]: word.sub(lambda found: names[found.group()], reason)
                   for bone, reason in reasons(detection).items()}


def read(detection: Detection) -> tuple[list, dict[str, str]]:
    return [(limb.kind, limb.side, limb.chain, limb.extremity, limb.halves) for limb in detection.limbs], \
        reasons(detection)


@pytest.mark.parametrize("rig", sorted(RIGS))
def test_a_renamed_rigify_rig_with_its_prefixes_is_read_as_with_its_dots(rig):
    """Each limb the rig with its dots gives (the deforming legs and arms of an export, both sides, with foot and
    hand), and each skip with its reason (a generated rig's own bones), the renamed rig gives too."""
    specs, names = sketchfab(RIGS[rig])
    dotted = detect_limbs(make_skeleton(RIGS[rig]))
    assert read(detect_limbs(make_skeleton(specs))) == renamed(dotted, names)
    if rig.startswith("deform only"):
        assert [(limb.kind, limb.side) for limb in dotted.limbs] == [("LEG", "L"), ("LEG", "R"), ("ARM", "L"),
                                                                      ("ARM", "R")]


@pytest.mark.parametrize("rig", ["deform only", "deform only, segments split"])
def test_both_sides_mirrors_a_renamed_rigify_export_to_the_other_sides_numbers(rig):
    specs, _ = sketchfab(RIGS[rig])
    known = {spec[0] for spec in specs}
    limbs = detect_limbs(make_skeleton(specs)).limbs
    assert [limb.side for limb in limbs] == [naming.LEFT, naming.RIGHT] * 2
    for left, right in zip(limbs[0::2], limbs[1::2]):
        for bone, mirror in zip((*left.chain, left.extremity, *left.halves),
                                (*right.chain, right.extremity, *right.halves), strict=True):
            assert naming.split_side(bone, known).side == naming.LEFT
            assert naming.flip_name(bone, known) == mirror
            assert naming.flip_name(mirror, known) == bone
        assert naming.limb_kind([*left.chain, left.extremity]) == left.kind


def armature(specs: list[Spec]):
    tails = {spec[0]: spec[3] for spec in specs}
    return make_armature([(bone, head, tail, parent, parent is not None and tails[parent] == head)
                          for bone, parent, head, tail in specs])


def test_auto_rig_and_both_sides_rig_a_renamed_rigify_export():
    specs, names = sketchfab(DEFORM)
    obj = armature(specs)
    built = api.auto_rig(obj)
    legs_arms = [names[f"DEF-{bone}.{side}"] for bone in ("shin", "forearm") for side in "LR"]
    assert sorted(limb.name for limb in built) == sorted(legs_arms)
    assert_handles_move_chain_ends(obj, {last: 2 for last in legs_arms})
    obj = armature(specs)
    for bone in ("shin", "forearm"):
        built = api.build(obj, names[f"DEF-{bone}.L"], both_sides=True)
        assert {limb.name: limb.extremity for limb in built} == {
            names[f"DEF-{bone}.{side}"]: names[f"DEF-{'foot' if bone == 'shin' else 'hand'}.{side}"] for side in "LR"}


# A whole generated rig as an export leaves it (through FBX or glTF, or downloaded): every bone kept, none of the
# constraints and drivers that moved them; also with each DEF- segment cut in two, as Rigify cuts them.
EXPORTED = {
    "generated rig": RIGS["generated rig"],
    "generated rig, segments split": (prefixed(METARIG, "ORG-") + both_sides_split(RIGIFY_EXPORT_SPLIT) + CONTROLS
                                      + HELPERS),
}


@pytest.mark.parametrize("renamed_so", [False, True], ids=["dotted", "renamed"])
@pytest.mark.parametrize("rig", sorted(EXPORTED))
def test_an_exported_generated_rig_is_rigged_on_its_deform_bones(rig, renamed_so):
    """Where nothing drives a generated rig's DEF- bones, its DEF- legs and arms are rigged with their feet and
    hands, each mirrored to the other side's by Both Sides, and its ORG- chains skipped saying so; where they
    follow its controls (a live rig), the whole rig is skipped as before."""
    specs, names = sketchfab(EXPORTED[rig]) if renamed_so else (EXPORTED[rig], {spec[0]: spec[0] for spec in
                                                                                 EXPORTED[rig]})
    split = rig.endswith("split")
    exported = detect_limbs(replace(make_skeleton(specs), deform_driven=False))
    limbs = []
    for kind, (upper, lower, end) in ((LEG, ("thigh", "shin", "foot")), (ARM, ("upper_arm", "forearm", "hand"))):
        for side in "LR":
            chain = tuple(f"DEF-{bone}.{side}{copy}" for bone in (upper, lower) for copy in ("", ".001")[:1 + split])
            limbs.append((kind, side, tuple(map(names.get, chain)), names[f"DEF-{end}.{side}"],
                          tuple(names[bone] for bone in chain if bone.endswith(".001"))))
    found, why = read(exported)
    assert found == limbs
    assert set(why) == {names[f"ORG-{bone}.{side}"] for bone in ("shin", "forearm") for side in "LR"}
    assert all("its DEF- chain is rigged" in reason for reason in why.values())
    assert not any(item.generated for item in exported.skipped)  # no "generated rig" refusal if none is rigged
    known = set(names.values())
    for left, right in zip(exported.limbs[0::2], exported.limbs[1::2]):
        for bone, mirror in zip((*left.chain, left.extremity), (*right.chain, right.extremity), strict=True):
            assert naming.flip_name(bone, known) == mirror
    live = detect_limbs(make_skeleton(specs))
    assert live.limbs == ()
    assert all("rig the metarig instead" in reason for reason in reasons(live).values())
    assert {names[f"DEF-{bone}.{side}"] for bone in ("shin", "forearm") for side in "LR"} <= set(reasons(live))


def test_an_armature_tells_an_exported_generated_rig_from_a_live_one_by_its_deform_bones():
    """Read from an armature, a renamed generated rig is an export's while no DEF- bone has a constraint or a driver
    on its transforms: its DEF- legs and arms are found; one such constraint or driver makes it a live rig's."""
    specs, names = sketchfab(EXPORTED["generated rig"])
    obj = armature(specs)
    lasts = [names[f"DEF-{bone}.{side}"] for bone in ("shin", "forearm") for side in "LR"]
    assert sorted(limb.last for limb in detect_limbs(read_skeleton(obj)).limbs) == sorted(lasts)
    thigh = obj.pose.bones[names["DEF-thigh.R"]]
    thigh.driver_add("rotation_euler", 0)
    assert detect_limbs(read_skeleton(obj)).limbs == ()
    thigh.driver_remove("rotation_euler", 0)
    obj.pose.bones[names["ORG-shin.L"]].driver_add("location", 1)  # an ORG- bone's driver says nothing of DEF-
    assert len(detect_limbs(read_skeleton(obj)).limbs) == 4
    constraint = thigh.constraints.new("COPY_TRANSFORMS")
    constraint.target, constraint.subtarget = obj, names["ORG-thigh.R"]
    assert detect_limbs(read_skeleton(obj)).limbs == ()
