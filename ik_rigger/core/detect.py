"""Find a skeleton's legs and arms from bone names and the hierarchy, without being told the bones.

A limb is found from its lower bone (shin, calf, forearm, ...), named plainly, whose
parent is named as the matching upper bone (thigh, upper arm, ...). Names are read
case-insensitively as words, after dropping a namespace (``mixamorig:``,
``Armature|``), Blender's duplicate number (``.001``), numbers and side markers:
``mixamorig:LeftUpLeg`` reads as the word ``upleg`` on the left, ``upper_arm.L`` as
``upperarm`` on the left, ``lthigh`` as ``thigh`` on the left.

Motion-capture skeletons name each bone after the joint at its head (Blender's BVH
importer does the same), so their leg is ``Hip > Knee > Ankle`` and their arm
``Shoulder > Elbow > Wrist``. Elsewhere "shoulder" is the clavicle and "hip" the
pelvis, so those two words are upper bones only above a bone named after the middle
joint (knee, elbow): the name of the lower bone tells the two conventions apart.

Whatever is not certain is skipped with the reason, never guessed: generated-rig
copies (``ORG-``, ``DEF-``, ``MCH-``), bones whose sides disagree, limb segments of
implausible proportions, and two chains that could both be the same limb.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import naming
from .plan import Skeleton, automatic_extremity

LEG = "LEG"
ARM = "ARM"

# A namespace is everything up to the last ':' (FBX, Mixamo) or '|' (some exporters).
_NAMESPACE = re.compile(r"^.*[:|]")
# Blender numbers a duplicated bone "thigh.L.001"; the copy is read as the same limb bone.
_DUPLICATE = re.compile(r"\.\d{3}$")
# Rigify and rigs like it generate copies of every bone under these prefixes; their own
# controls drive them, so an IK built on them would fight the generated rig.
_GENERATED = re.compile(r"^(?P<prefix>ORG|DEF|MCH|VIS|WGT)[-_]", re.IGNORECASE)
# Words of a name: "LeftUpLeg" -> Left, Up, Leg; "LThigh" -> L, Thigh; "thigh_twist_01_l" -> thigh, twist, 01, l.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SIDE_WORDS = {"l": naming.LEFT, "left": naming.LEFT, "r": naming.RIGHT, "right": naming.RIGHT}

# Words that make a bone a helper, a finger or a toe rather than a limb segment or its
# foot or hand, whatever else its name says. The tags of the bones IK Rigger makes are
# among them, so a handle, pole or clone from an earlier run is never taken for a limb.
_NOT_LIMB_WORDS = frozenset(
    {word.lower() for tag in (naming.TAG_HANDLE, naming.TAG_POLE, naming.TAG_CLONE) for word in tag.split("_")}
    | {"twist", "roll", "fk", "tweak", "helper", "target", "ctrl", "control", "mch", "bend", "stretch", "parent",
       "socket", "offset", "end", "tip", "toe", "toes", "ball", "heel", "finger", "thumb", "index", "middle", "ring",
       "pinky", "little", "palm", "metacarpal"}
)


@dataclass(frozen=True)
class _Rule:
    """Which parents a lower bone named ``lowers`` accepts as the upper bone of its limb."""

    kind: str
    lowers: frozenset[str]
    uppers: frozenset[str]
    # A parent whose name only contains one of these among other words (``UpperLeg_Main``)
    # is accepted too; empty when the lower word is too common to allow that.
    loose_uppers: frozenset[str]


_LEG_UPPERS = frozenset({"thigh", "upleg", "upperleg", "leg", "femur"})
_ARM_UPPERS = frozenset({"upperarm", "uparm", "arm", "shldr", "humerus"})
_RULES = (
    _Rule(LEG, frozenset({"shin", "calf", "shank", "lowerleg"}), _LEG_UPPERS, _LEG_UPPERS),
    # Joint-named: the bone called Knee runs from the knee to the ankle, below Hip or a thigh.
    _Rule(LEG, frozenset({"knee"}), _LEG_UPPERS | {"hip"}, _LEG_UPPERS),
    # Mixamo's UpLeg > Leg; "leg" alone names a whole leg too often to trust a loosely named parent.
    _Rule(LEG, frozenset({"leg"}), frozenset({"upleg", "upperleg", "thigh"}), frozenset()),
    _Rule(ARM, frozenset({"forearm", "lowerarm"}), _ARM_UPPERS, _ARM_UPPERS),
    # Joint-named: the bone called Elbow runs from the elbow to the wrist, below Shoulder or an upper arm.
    _Rule(ARM, frozenset({"elbow"}), _ARM_UPPERS | {"shoulder"}, _ARM_UPPERS),
)
_RULE_OF_LOWER = {lower: rule for rule in _RULES for lower in rule.lowers}
_EXTREMITIES = {LEG: frozenset({"foot", "ankle"}), ARM: frozenset({"hand", "wrist"})}
_VOCABULARY = frozenset(word for rule in _RULES for word in rule.lowers | rule.uppers).union(*_EXTREMITIES.values())
# A child spelling any of these is a limb bone of its own, not this limb's foot or hand.
_NOT_EXTREMITY = {kind: _VOCABULARY - words for kind, words in _EXTREMITIES.items()}

_KIND_WORD = {LEG: "leg", ARM: "arm"}
_UPPER_WORD = {LEG: "a thigh or upper leg", ARM: "an upper arm"}
_EXTREMITY_WORD = {LEG: "foot", ARM: "hand"}
_SIDE_WORD = {naming.LEFT: "left", naming.RIGHT: "right"}
_KIND_ORDER = {LEG: 0, ARM: 1}
_SIDE_ORDER = {naming.LEFT: 0, naming.RIGHT: 1, None: 2}

# A limb segment more than this many times as long as the other is a helper bone or a
# mislabelled one, not half of a leg or an arm (human and animal limbs stay well within it).
_MAX_SEGMENT_RATIO = 4.0
_EPSILON = 1e-9


@dataclass(frozen=True)
class DetectedLimb:
    """A leg or an arm found in the skeleton, ready to be rigged."""

    kind: str  # LEG or ARM
    side: str | None  # naming.LEFT, naming.RIGHT or None
    chain: tuple[str, ...]  # root first: (thigh, shin) or (upper arm, forearm)
    extremity: str | None  # foot or hand, if found

    @property
    def last(self) -> str:
        return self.chain[-1]


@dataclass(frozen=True)
class Skipped:
    """A bone that looked like part of a limb but was not rigged."""

    bone: str
    reason: str  # a sentence: why it was not rigged


@dataclass(frozen=True)
class Detection:
    """What ``detect_limbs`` found and what it left alone."""

    limbs: tuple[DetectedLimb, ...]
    skipped: tuple[Skipped, ...]

    def describe(self) -> str:
        """A few lines for a report: the limbs found, then the bones skipped and why."""
        if self.limbs:
            lines = [f"found {len(self.limbs)} limb(s):"]
            for limb in self.limbs:
                end = f", {_EXTREMITY_WORD[limb.kind]} {limb.extremity}" if limb.extremity else ""
                lines.append(f"  {_label(limb.kind, limb.side)}: {' > '.join(limb.chain)}{end}")
        else:
            lines = ["found no legs or arms"]
        if self.skipped:
            lines.append(f"skipped {len(self.skipped)} bone(s):")
            lines.extend(f"  {item.bone}: {item.reason}" for item in self.skipped)
        return "\n".join(lines)


def _label(kind: str, side: str | None) -> str:
    if side is None:
        return f"{_KIND_WORD[kind]} without a side"
    return f"{_SIDE_WORD[side]} {_KIND_WORD[kind]}"


@dataclass(frozen=True)
class _Name:
    """A bone name read for detection."""

    words: tuple[str, ...]  # lower case, without namespace, numbers and side words
    sides: frozenset[str]  # every side the name states; two means it contradicts itself
    generated: str | None  # the generated-rig prefix ("ORG"), if any

    @property
    def base(self) -> str:
        return "".join(self.words)

    @property
    def side(self) -> str | None:
        return next(iter(self.sides)) if len(self.sides) == 1 else None

    def contains(self, vocabulary: frozenset[str]) -> bool:
        """True when a run of consecutive words spells one of ``vocabulary`` (``Upper``, ``Leg`` spell upperleg)."""
        return any(
            "".join(self.words[start:stop]) in vocabulary
            for start in range(len(self.words))
            for stop in range(start + 1, len(self.words) + 1)
        )

    @property
    def is_helper(self) -> bool:
        return bool(_NOT_LIMB_WORDS.intersection(self.words))


def _read_name(name: str) -> _Name:
    rest = _DUPLICATE.sub("", _NAMESPACE.sub("", name))
    generated = _GENERATED.match(rest)
    if generated:
        rest = rest[generated.end():]
    words: list[str] = []
    sides: set[str] = set()
    for word in _WORD.findall(rest):
        lower = word.lower()
        if lower in _SIDE_WORDS:
            sides.add(_SIDE_WORDS[lower])
        elif not lower.isdigit():
            words.append(lower)
    joined = "".join(words)
    if not sides and joined not in _VOCABULARY:
        # A side glued to a limb word: "lthigh", "rforearm", "leftthigh". Only before a
        # known word, or "leg" would read as "l" + "eg".
        for marker in ("left", "right", "l", "r"):
            if joined.startswith(marker) and joined[len(marker):] in _VOCABULARY:
                words, sides = [joined[len(marker):]], {_SIDE_WORDS[marker]}
                break
    prefix = generated["prefix"].upper() if generated else None
    return _Name(tuple(words), frozenset(sides), prefix)


class _Names(dict[str, _Name]):
    """Bone names read on first use: detection needs few of a skeleton's names."""

    def __missing__(self, name: str) -> _Name:
        read = self[name] = _read_name(name)
        return read


_LOWER_WORDS = tuple(sorted(_RULE_OF_LOWER))
_NOT_LETTERS = re.compile(r"[^a-z]")


def _may_be_lower(name: str) -> bool:
    """Cheap test before reading a name: a lower bone's letters hold its word (``Fore_Arm``)."""
    letters = _NOT_LETTERS.sub("", name.lower())
    return any(word in letters for word in _LOWER_WORDS)


class _Reader:
    """The skeleton with its names read once, when first needed."""

    def __init__(self, skeleton: Skeleton) -> None:
        self.skeleton = skeleton
        self.names = _Names()

    def limb_ending_at(self, lower: str, rule: _Rule) -> DetectedLimb | Skipped:
        """The limb whose lower bone is ``lower``, or why ``lower`` cannot end one."""
        what = _KIND_WORD[rule.kind]
        lower_name = self.names[lower]
        if lower_name.generated:
            return Skipped(lower, _generated_reason(lower_name.generated))
        upper = self.skeleton[lower].parent
        if upper is None:
            return Skipped(lower, f"it is named like the lower half of a {what} but has no parent bone")
        upper_name = self.names[upper]
        if upper_name.generated:
            return Skipped(lower, f"its parent '{upper}' is skipped: {_generated_reason(upper_name.generated)}")
        if upper_name.base not in rule.uppers:
            if upper_name.is_helper:
                return Skipped(lower, f"its parent '{upper}' is named like a helper bone (twist, IK, ...), "
                                      f"not {_UPPER_WORD[rule.kind]}")
            if not upper_name.contains(rule.loose_uppers):
                return Skipped(lower, f"its parent '{upper}' is not named like {_UPPER_WORD[rule.kind]}, "
                                      f"so it is not sure to be a {what}")
        chain = (upper, lower)
        extremity = self._extremity(lower, rule.kind)
        side, disagreement = self._side(chain + ((extremity,) if extremity else ()))
        if disagreement:
            return Skipped(lower, disagreement)
        proportion = self._proportion(upper, lower, extremity)
        if proportion:
            return Skipped(lower, proportion)
        return DetectedLimb(rule.kind, side, chain, extremity)

    def _extremity(self, lower: str, kind: str) -> str | None:
        """The foot or hand below ``lower``: the child so named, else the child continuing the bone."""
        named = sorted(child.name for child in self.skeleton.children(lower)
                       if self.names[child.name].base in _EXTREMITIES[kind] and not self.names[child.name].generated)
        automatic = automatic_extremity(self.skeleton, lower)
        if len(named) == 1:
            return named[0]
        if named:
            # Several feet: only the one continuing the bone is sure to be the foot.
            return automatic if automatic in named else None
        if automatic is None:
            return None
        child = self.names[automatic]
        # A child not named as the foot or hand continues the limb only if it is no helper,
        # finger, toe or limb bone of its own, and is on the same side.
        if (child.generated or child.is_helper or child.contains(_NOT_EXTREMITY[kind])
                or child.sides != self.names[lower].sides):
            return None
        return automatic

    def _side(self, bones: tuple[str, ...]) -> tuple[str | None, str]:
        """The side all ``bones`` state, or why they do not agree on one."""
        for bone in bones:
            if len(self.names[bone].sides) > 1:
                return None, f"'{bone}' names both sides, so the limb's side is not sure"
        sides = {bone: self.names[bone].side for bone in bones}
        if len(set(sides.values())) > 1:
            said = ", ".join(f"'{bone}' is {_SIDE_WORD[side]}" if side else f"'{bone}' has no side"
                             for bone, side in sides.items())
            return None, f"its bones disagree on the side ({said}), so the limb's side is not sure"
        return sides[bones[0]], ""

    def _proportion(self, upper: str, lower: str, extremity: str | None) -> str:
        """Why ``upper`` and ``lower`` are not the two halves of one limb by their lengths, or ''."""
        # Joint to joint from the heads: importers place tails differently, heads are the joints.
        first = (self.skeleton[lower].head - self.skeleton[upper].head).length
        if extremity:
            second = (self.skeleton[extremity].head - self.skeleton[lower].head).length
        else:
            second = self.skeleton[lower].length
        if min(first, second) < _EPSILON or max(first, second) > _MAX_SEGMENT_RATIO * min(first, second):
            return (f"its parent '{upper}' spans {first:.3g} and it spans {second:.3g}: too unlike to be the "
                    "two halves of one limb")
        return ""


def _generated_reason(prefix: str) -> str:
    return (f"it is a generated rig's {prefix}- bone, driven by that rig's own controls; "
            "rig the metarig instead")


def _drop_ambiguous(limbs: list[DetectedLimb]) -> tuple[list[DetectedLimb], list[Skipped]]:
    """Keep the limbs that are alone in being, say, the left leg; skip every rival of the others."""
    groups: dict[tuple[str, str | None], list[DetectedLimb]] = {}
    for limb in limbs:
        groups.setdefault((limb.kind, limb.side), []).append(limb)
    kept: list[DetectedLimb] = []
    skipped: list[Skipped] = []
    for (kind, side), group in groups.items():
        if len(group) == 1:
            kept.extend(group)
            continue
        rivals = " and ".join(" > ".join(limb.chain) for limb in group)
        reason = f"{len(group)} chains could be the {_label(kind, side)} ({rivals}); rig the right one by hand"
        skipped.extend(Skipped(limb.last, reason) for limb in group)
    return kept, skipped


def detect_limbs(skeleton: Skeleton) -> Detection:
    """The legs and arms of ``skeleton``: legs first, then arms, each left then right then unsided.

    A bone named like the lower half of a limb that cannot be rigged for sure is
    listed in ``skipped`` with the reason, unless it is part of a limb found anyway.
    """
    reader = _Reader(skeleton)
    found: list[DetectedLimb] = []
    skipped: list[Skipped] = []
    for name in sorted(skeleton.bones):
        if not _may_be_lower(name):
            continue
        rule = _RULE_OF_LOWER.get(reader.names[name].base)
        if rule is None:
            continue
        result = reader.limb_ending_at(name, rule)
        if isinstance(result, DetectedLimb):
            found.append(result)
        else:
            skipped.append(result)
    limbs, rivals = _drop_ambiguous(found)
    used = {bone for limb in limbs for bone in (*limb.chain, limb.extremity) if bone}
    # "Leg" names Mixamo's lower leg but also, elsewhere, a whole upper leg: a bone that
    # could not end a limb but is part of one found is no skip worth reporting.
    reasons = {item.bone: item for item in [*skipped, *rivals] if item.bone not in used}
    limbs.sort(key=lambda limb: (_KIND_ORDER[limb.kind], _SIDE_ORDER[limb.side], limb.chain))
    return Detection(tuple(limbs), tuple(reasons[bone] for bone in sorted(reasons)))
