"""Find a skeleton's legs and arms from bone names and the hierarchy, without being told the bones.

A limb is found from its lower bone (shin, calf, forearm, ...), named plainly, whose
parent is named as the matching upper bone (thigh, upper arm, ...). Names are split by
``naming.split_side`` (the parser that mirrors names, so every limb found can be
mirrored), then the base is read case-insensitively as words without numbers:
``mixamorig:LeftUpLeg`` reads as the word ``upleg`` on the left, ``upper_arm.L`` as
``upperarm``, ``Bip01 L Thigh`` and ``CC_Base_L_Thigh`` as ``thigh``, ``lThighBend``
(DAZ's main thigh bone) as ``thigh``. Quadrupeds' ``front_``/``hind_`` words, and
Rigify's ``f_``/``r_``, say which pair of legs a bone belongs to. Numbered limb words
are successive segments (``b_LeftLeg01_015 > b_LeftLeg02_016``: thigh and shin); COLLADA's
copies of one name (``arm_joint_L__4_ > __3_ > __2_``) count names, not joints, so the
hierarchy orders them.

Motion-capture skeletons name each bone after the joint at its head (Blender's BVH
importer does the same), so their leg is ``Hip > Knee > Ankle`` and their arm
``Shoulder > Elbow > Wrist``. Elsewhere "shoulder" is the clavicle and "hip" the
pelvis, so those two words are upper bones only above a bone named after the middle
joint (knee, elbow): the name of the lower bone tells the two conventions apart.

A lower bone may also be named after the joint at its tail: an ankle or wrist below a bone named as the whole leg
or arm, unnumbered, and above the foot or hand is the shin or forearm (Mesh2Motion's dragon: ``front_leg_l >
front_ankle_l > front_foot_l``); below Mixamo's shin (``UpLeg > Leg > Ankle``) the ankle stays the foot. A limb told
apart from its side's others by a letter or number, its segments numbered after it, is its whole run of two or three
bones, ending at its tip (Mesh2Motion's spider: ``leg_a_1_l > leg_a_2_l > leg_a_3_l > leg_a_tip_l``).

A digitigrade or hoofed leg (a quadruped's hock, a horse's cannon bone) has a third
segment: a foot as long as the shin, continuing the leg's line down to a toe or paw
below it. Such a leg is a 3-bone chain with that toe as its extremity; a human foot,
short and turned forward, stays the extremity of a 2-bone leg.

A segment split in two bones along its length, named so (MakeHuman's ``upperleg01 >
upperleg02``, DAZ's ``ThighBend > ThighTwist``) and in line, is one segment of the chain:
both bones are in it, and ``split_halves`` names the second, which IK keeps in line.

Whatever is not certain is skipped with the reason, never guessed: generated-rig
copies (``ORG-``, ``DEF-``, ``MCH-``), bones whose sides disagree, limb segments of
implausible proportions, halves of a segment that do not continue each other's line,
bones far shorter than their segment, and two chains that could both be the same limb.
A game skeleton's own IK bones (Unreal's ``ik_foot_l``) are noted, and left alone.

This module runs detection over a skeleton; the work is split by job: ``detect_words`` (the
vocabulary), ``detect_names`` (reading a name), ``detect_chain`` (what names say of a chain),
``detect_ends`` (the foot or hand), ``detect_shape`` (joints and lengths), ``detect_limb`` (one
limb from its lower bone, step by step) and ``detect_result`` (what is found and skipped).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from itertools import product

from mathutils import Vector

from . import naming
from .detect_chain import Chains
from .detect_ends import Ends
from .detect_follow import on_followed
from .detect_limb import LimbFinder
from .detect_names import Names, ik_candidates, lower_candidates
from .detect_result import DetectedLimb, Detection, Skipped
from .detect_shape import HALF_MAX_DEGREES, in_line_angle
from .detect_words import (
    ARM,
    EXTREMITIES,
    FRONT,
    HIND,
    JOINT_WORD,
    KIND_WORD,
    LEG,
    MID_FRONT,
    MID_HIND,
    NUMBERED,
    TWO_SEGMENTS,
)
from .model import Skeleton, automatic_extremity

__all__ = ["ARM", "FRONT", "HIND", "LEG", "MID_FRONT", "MID_HIND", "DetectedLimb", "Detection", "Skipped",
           "chains_of", "detect_limbs", "split_halves"]

_KIND_ORDER = {LEG: 0, ARM: 1}
_POSITION_ORDER = {None: 0, FRONT: 1, MID_FRONT: 2, MID_HIND: 3, HIND: 4}
_SIDE_ORDER = {naming.LEFT: 0, naming.RIGHT: 1, None: 2}


def split_halves(skeleton: Skeleton, chain: tuple[str, ...], joints: list[Vector]) -> frozenset[str]:
    """The chain's bones that are the second half of a segment split in two along its length.

    Named so (``ThighBend > ThighTwist``, ``upperleg01 > upperleg02``) and continuing the
    first half's line within ``HALF_MAX_DEGREES``, joint to joint: ``joints`` are the
    chain's heads and its end. IK must keep such a bone in line with its first half, or the
    limb would bend halfway along the thigh or forearm.
    """
    chains = chains_of(skeleton)
    found = [second for index, (first, second) in enumerate(zip(chain, chain[1:]), start=1)
             if chains.second_half(first, second)
             and math.degrees(in_line_angle(joints[index - 1], joints[index], joints[index + 1])) <= HALF_MAX_DEGREES]
    # Most chains have none: every limb planned asks.
    return frozenset(found) if found else _NONE


_NONE: frozenset[str] = frozenset()


def chains_of(skeleton: Skeleton) -> Chains:
    """The skeleton's bones as their names link them (``Chains``), its names read once per skeleton:
    planning asks for each limb's halves, and whether its first bone is a second half. The reader is
    kept in the skeleton's measures, the ``Chains`` (which holds the skeleton) is not: no cycle."""
    names = skeleton.measures.get("names")
    if names is None:
        names = skeleton.measures["names"] = Names(skeleton)
    return Chains(skeleton, names)


def build_extremity(skeleton: Skeleton, chain: tuple[str, ...], made: Collection[str] = ()) -> str | None:
    """The foot or hand of ``chain`` as Auto-Rig reads it (``Ends.extremity``: the one child named so, else
    the child continuing the bone; then a game rig's foot hanging from the root, ``Ends.detached_extremity``),
    for a chain whose last bone no child continues by its place alone (an import's tail pointing off its
    joint, as the Godot robot's ``l-leg`` above ``l-foot``; a shin whose one child is an exporter's leaf bone
    while the foot hangs from the root, as in Quaternius' characters): Build IK Limb then finds the foot
    Auto-Rig finds; else the child continuing the bone by its place alone (``automatic_extremity``), as for a
    chain whose names say neither leg nor arm. ``made``: IK Rigger's own bones, never a foot (a handle named
    ``FootIK.L`` stands where the foot would)."""
    kind = naming.limb_kind(chain)
    if kind is None:
        return automatic_extremity(skeleton, chain[-1])
    names = chains_of(skeleton).names
    found = Ends(skeleton, names).extremity(chain[-1], kind)
    if found is not None:
        return found
    # The child continuing the bone, named as the foot or hand (Rigify's FK foot, past its MCH- helper), before
    # a foot hanging from the root (Rigify's own foot_ik.L is named as one too).
    automatic = automatic_extremity(skeleton, chain[-1])
    if automatic is not None and names[automatic].contains(EXTREMITIES[kind]):
        return automatic
    detached = Ends(skeleton.without(made), names).detached_extremity(chain, kind)
    return detached if detached is not None else automatic


# A number standing alone in a bone's name, after a separator ("thigh_03", "Leg.12"): the last one is read.
_PAIR_NUMBER = re.compile(r"(?:^|[._\- ])(\d+)(?=$|[._\- ])")


def _pair_number(names: Names, chain: tuple[str, ...]) -> int | str | None:
    """The number every bone of ``chain`` carries alone in its name, the same in each (a many-legged
    body's pair, ``thigh_03.L > shin_03.L``), or the letter or number it is tagged with before its segments'
    numbers (``leg_a_1_l > leg_a_2_l``, ``Name.tag``); None when a bone has none or they differ (COLLADA's
    ``leg_joint_L_1 > _2`` count segments along one limb). ``names``: the skeleton's names as detection reads
    them."""
    tags = {names[bone].tag for bone in chain}
    tag = tags.pop() if len(tags) == 1 else None
    if tag is not None:
        return int(tag) if tag.isdigit() else tag
    numbers = set()
    for bone in chain:
        found = _PAIR_NUMBER.findall(naming.split_side(bone, names.known).base)
        if not found:
            return None
        numbers.add(int(found[-1]))
    return numbers.pop() if len(numbers) == 1 else None


def _numbered_pairs(skeleton: Skeleton, names: Names, group: list[DetectedLimb]) -> list[DetectedLimb] | None:
    """Rivals that are a many-legged body's numbered legs (each chain's bones all carry one number,
    a different one in each chain, and no two chains start at one place, as copies of a limb would),
    each with its number; None when they are not."""
    numbers = [_pair_number(names, limb.chain) for limb in group]
    if None in numbers or len(set(numbers)) < len(numbers):
        return None
    roots = [skeleton[limb.chain[0]].head for limb in group]
    scale = max(skeleton[limb.chain[0]].length for limb in group)
    if _any_within(roots, 0.01 * scale):
        return None
    return [_numbered(limb, number) for limb, number in zip(group, numbers)]


def _pair_order(pair: int | str | None) -> tuple[int, int, str]:
    """Where a limb's pair sorts: numbered pairs by their number, then lettered ones by their letter."""
    return (1, 0, pair) if isinstance(pair, str) else (0, pair or 0, "")


def _numbered(limb: DetectedLimb, pair: int | str | None) -> DetectedLimb:
    """``replace(limb, pair=pair)`` without the frozen dataclass's ``__init__`` (a guarded setattr per field):
    a many-legged body numbers every leg."""
    numbered = object.__new__(DetectedLimb)
    numbered.__dict__.update(limb.__dict__, pair=pair)
    return numbered


# At most this many points are compared pairwise (``_any_within``): ten comparisons.
_FEW_POINTS = 5


def _any_within(points: list[Vector], distance: float) -> bool:
    """Whether two of ``points`` lie ``distance`` or less apart. Each point is compared with those in
    the cells near it of a grid twice ``distance`` wide, not with every other point (a body of a thousand
    legs numbers 500 on a side): on each axis its own cell and the one on the side it is nearer, the
    only two the span ``distance`` either side of it reaches. A few points (a pair of legs on a side)
    are compared with each other, which costs less than placing them."""
    if len(points) <= _FEW_POINTS:
        return any((point - other).length <= distance for at, point in enumerate(points) for other in points[:at])
    size = 2.0 * distance if distance > 0.0 else 1.0
    cells: dict[tuple[int, ...], list[Vector]] = {}
    for point in points:
        near = []
        for value in (point.x / size, point.y / size, point.z / size):
            cell = math.floor(value)
            near.append((cell, cell - 1 if value - cell < 0.5 else cell + 1))
        for key in product(*near):
            for other in cells.get(key, ()):
                if (point - other).length <= distance:
                    return True
        cells.setdefault((near[0][0], near[1][0], near[2][0]), []).append(point)
    return False


def _outermost(found: list[DetectedLimb]) -> list[DetectedLimb]:
    """The limbs whose chain is inside no other's (Leg1 > Leg2 within Leg1 > Leg2 > Leg3 is part of that
    limb). Only the chains that hold a limb's first bone can hold it all: those alone are compared."""
    holding: dict[str, list[frozenset[str]]] = {}
    for limb in found:
        bones = frozenset(limb.chain)
        for bone in limb.chain:
            holding.setdefault(bone, []).append(bones)
    return [limb for limb in found
            if not any(set(limb.chain) < other for other in holding.get(limb.chain[0], ()))]


def _drop_ambiguous(skeleton: Skeleton, names: Names,
                    limbs: list[DetectedLimb]) -> tuple[list[DetectedLimb], list[Skipped]]:
    """Keep the limbs that are alone in being, say, the left leg, or that a many-legged body numbers
    apart; skip every rival of the others."""
    groups: dict[tuple[str, str | None, str | None], list[DetectedLimb]] = {}
    for limb in limbs:
        groups.setdefault((limb.kind, limb.side, limb.position), []).append(limb)
    kept: list[DetectedLimb] = []
    skipped: list[Skipped] = []
    for group in groups.values():
        if len(group) == 1:
            kept.extend(group)
            continue
        numbered = _numbered_pairs(skeleton, names, group)
        if numbered is not None:
            kept.extend(numbered)
            continue
        rivals = " and ".join(" > ".join(limb.chain) for limb in group)
        # "The right one" would read as a side next to "the right leg".
        reason = (f"{len(group)} chains could be the {group[0].label} ({rivals}); rig the one that is by hand: "
                  "select its lower bone, then Build IK Limb")
        skipped.extend(Skipped(limb.last, reason) for limb in group)
    return kept, skipped


def _one_bone_limbs(skeleton: Skeleton, names: Names) -> list[Skipped]:
    """The legs and arms that are one bone each, hip to ankle or shoulder to wrist (Kenney's mini characters:
    ``root > leg-left``, ``torso > arm-left``): a sided bone named as the whole limb, unnumbered, with no bone
    below it but a foot or hand, or a leaf an exporter adds (FBX's ``leg-left_end``). Looked for only where
    no limb was found, so a skeleton's other bones named "leg" (Mixamo's shin, a frog's shoulder) never are."""
    skipped = []
    for bone in sorted(skeleton.bones):
        name = names[bone]
        kind = NUMBERED.get(name.base)
        if kind is None or name.side is None or name.index is not None or name.generated:
            continue
        if any(names[child.name].base not in EXTREMITIES[kind] and not names[child.name].is_helper
               or _carries_extremity(skeleton, names, child.name, kind) for child in skeleton.children(bone)):
            continue
        skipped.append(Skipped(bone, f"it is a whole {KIND_WORD[kind]} in one bone, with no {JOINT_WORD[kind]} to "
                                     f"bend: IK needs two bones at least, {TWO_SEGMENTS[kind]}", one_bone=True))
    return skipped


def _carries_extremity(skeleton: Skeleton, names: Names, bone: str, kind: str) -> bool:
    """True when a bone named as the limb's foot or hand carries one (Mesh2Motion's dragon: ``front_leg_l >
    front_ankle_l > front_foot_l``, an ankle named after the joint at its tail): the limb's lower segment, so the
    limb above is no one bone."""
    return any(names[child.name].base in EXTREMITIES[kind] for child in skeleton.children(bone))


def detect_limbs(skeleton: Skeleton, *, tails_fixed: bool = False,
                 follows: Mapping[str, str] | None = None) -> Detection:
    """The legs and arms of ``skeleton``: legs first, then arms, each left then right then unsided.

    A bone named like the lower half of a limb that cannot be rigged for sure is
    listed in ``skipped`` with the reason, unless it is part of a limb found anyway or
    hangs from a found limb's foot or hand.
    ``tails_fixed`` says the build will point every chain bone's tail at its next joint
    (Fix Bone Orientation): bones too short or too long for their segments do not matter then.
    ``follows`` maps bones that copy another's transforms wholly to it (``rig.skeleton.followed_bones``):
    a limb found on such bones is the chain they follow (``detect_follow``).
    """
    finder = LimbFinder(skeleton, tails_fixed)
    found: list[DetectedLimb] = []
    skipped: list[Skipped] = []
    for name in sorted(lower_candidates(skeleton.bones)):
        rule = finder.chains.rule_of(name)
        if rule is None:
            continue
        result = finder.limb_ending_at(name, rule)
        if isinstance(result, DetectedLimb):
            found.append(result)
        else:
            skipped.append(result)
    found = _outermost(found)
    followed: list[str] = []
    if follows is not None:  # not its size: a mapping may read each bone only when asked
        found, followed = on_followed(skeleton, found, follows, lambda bone: finder.names[bone].generated is not None,
                                      finder.ends.extremity)
    limbs, rivals = _drop_ambiguous(skeleton, finder.names, found)
    used = {bone for limb in limbs for bone in (*limb.chain, limb.extremity) if bone}
    used.update(bone for item in skipped for bone in item.chain[:-1])
    ends = {limb.extremity for limb in limbs if limb.extremity}
    # "Leg" names Mixamo's lower leg but also, elsewhere, a whole upper leg: a bone that
    # could not end a limb but is part of one found is no skip worth reporting, nor is one
    # below a found limb's foot or hand (the toe of "leg_joint_L_1 > _2 > _3 > _5"), nor one
    # in a chain skipped for its bones, whose lower bone says why.
    # Nor is a whole-limb word ("FrontLeg.L") just above a found limb's chain: that limb's shoulder or hip
    # (Quaternius' frog: FrontLeg.L > FrontUpLeg.L > FrontLowLeg.L, rigged from its upper leg).
    above = {skeleton[limb.chain[0]].parent for limb in limbs}
    worth = [item for item in skipped if item.bone not in above or finder.names[item.bone].base not in NUMBERED]
    reasons = {item.bone: item for item in [*worth, *rivals]
               if item.bone not in used and (skeleton[item.bone].parent not in ends)}
    if not limbs:
        reasons.update((item.bone, item) for item in _one_bone_limbs(skeleton, finder.names))
    limbs.sort(key=lambda limb: (_KIND_ORDER[limb.kind], _POSITION_ORDER[limb.position], _pair_order(limb.pair),
                                 _SIDE_ORDER[limb.side], limb.chain))
    own_ik = sorted(name for name in ik_candidates(skeleton.bones)
                    if name not in used and finder.ends.own_ik_bone(name))
    notes = ([f"{', '.join(repr(name) for name in own_ik)}: the skeleton's own IK bones, "
              "not limbs: left as they are"] if own_ik else []) + followed
    return Detection(tuple(limbs), tuple(reasons[bone] for bone in sorted(reasons)), tuple(notes))
