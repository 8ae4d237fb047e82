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
"""

from __future__ import annotations

import math
import re
from collections.abc import Container
from dataclasses import dataclass, replace

from mathutils import Vector

from . import geometry, naming
from .model import Skeleton, automatic_extremity

LEG = "LEG"
ARM = "ARM"
FRONT = "FRONT"
HIND = "HIND"

# Rigify and rigs like it generate copies of every bone under these prefixes; their own
# controls drive them, so an IK built on them would fight the generated rig.
_GENERATED = re.compile(r"^(?P<prefix>ORG|DEF|MCH|VIS|WGT)[-_]", re.IGNORECASE)
# Rigify's animal metarigs mark rear and front parts "r_toe.L", "f_palm.01.L".
_RIGIFY_POSITION = re.compile(r"^(?P<position>[fr])_(?=[a-z])")
_RIGIFY_POSITIONS = {"f": FRONT, "r": HIND}
# Words of a name: "LeftUpLeg" -> Left, Up, Leg; "LThigh" -> L, Thigh; "thigh_twist_01_l" -> thigh, twist, 01, l.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SIDE_WORDS = {"l": naming.LEFT, "left": naming.LEFT, "r": naming.RIGHT, "right": naming.RIGHT}
_POSITION_WORDS = {"front": FRONT, "fore": FRONT, "hind": HIND, "rear": HIND, "back": HIND}

# Words that make a bone a helper, a finger or a toe rather than a limb segment or its
# foot or hand, whatever else its name says. The tags of the bones IK Rigger makes are
# among them, so a handle, pole or clone from an earlier run is never taken for a limb.
_NOT_LIMB_WORDS = frozenset(
    {word.lower() for tag in (naming.TAG_HANDLE, naming.TAG_POLE, naming.TAG_CLONE) for word in tag.split("_")}
    | {"twist", "roll", "fk", "tweak", "helper", "target", "ctrl", "control", "mch", "bend", "stretch", "parent",
       "socket", "offset", "end", "tip", "toe", "toes", "ball", "heel", "finger", "thumb", "index", "middle", "ring",
       "pinky", "little", "palm", "metacarpal", "share"}
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


# With the words either way round: "UpperLeg", "Leg_Upper".
_LEG_UPPERS = frozenset({"thigh", "upleg", "upperleg", "legupper", "leg", "femur"})
_ARM_UPPERS = frozenset({"upperarm", "armupper", "uparm", "arm", "shldr", "humerus"})
_RULES = (
    # Quaternius' animals shorten the words: "FrontUpLeg > FrontLowLeg".
    _Rule(LEG, frozenset({"shin", "calf", "shank", "lowerleg", "leglower", "lowleg", "tibia"}), _LEG_UPPERS,
          _LEG_UPPERS),
    # Joint-named: the bone called Knee runs from the knee to the ankle, below Hip or a thigh.
    _Rule(LEG, frozenset({"knee"}), _LEG_UPPERS | {"hip"}, _LEG_UPPERS),
    # Mixamo's UpLeg > Leg; "leg" alone names a whole leg too often to trust a loosely named parent.
    _Rule(LEG, frozenset({"leg"}), frozenset({"upleg", "upperleg", "thigh"}), frozenset()),
    _Rule(ARM, frozenset({"forearm", "lowerarm", "armlower", "lowarm", "radius", "ulna"}), _ARM_UPPERS, _ARM_UPPERS),
    # Joint-named: the bone called Elbow runs from the elbow to the wrist, below Shoulder or an upper arm.
    _Rule(ARM, frozenset({"elbow"}), _ARM_UPPERS | {"shoulder"}, _ARM_UPPERS),
)
_RULE_OF_LOWER = {lower: rule for rule in _RULES for lower in rule.lowers}
# Whole-limb words numbered in order name successive segments: Leg01 > Leg02 is thigh > shin.
_NUMBERED = {"leg": LEG, "arm": ARM}
_WHOLE_WORD = {kind: word for word, kind in _NUMBERED.items()}
_UPPERS = {LEG: _LEG_UPPERS, ARM: _ARM_UPPERS}
# Joint words that name an upper bone only above a joint-named lower one (see the module's docstring).
# Two bones so named in a row are a pelvis or clavicle bone and the limb's own (CMU's ``LHipJoint >
# LeftHip``, the hip's connector above the thigh), never the two halves of one segment.
_JOINT_UPPERS = frozenset({"hip", "shoulder"})
_EXTREMITIES = {LEG: frozenset({"foot", "ankle"}), ARM: frozenset({"hand", "wrist"})}
_EXTREMITY_WORDS = frozenset().union(*_EXTREMITIES.values())
_VOCABULARY = frozenset(word for rule in _RULES for word in rule.lowers | rule.uppers) | _EXTREMITY_WORDS
# A child spelling any of these is a limb bone of its own, not this limb's foot or hand.
_NOT_EXTREMITY = {kind: _VOCABULARY - words for kind, words in _EXTREMITIES.items()}
# Names of a digitigrade or hoofed leg's third segment (metatarsus, cannon bone), which a
# hand never is.
_THIRD_SEGMENTS = frozenset({"foot", "forefoot", "hindfoot", "metatarsal", "metatarsals", "horselink"})

_KIND_WORD = {LEG: "leg", ARM: "arm"}
_UPPER_WORD = {LEG: "a thigh or upper leg", ARM: "an upper arm"}
_SEGMENT_WORD = {LEG: ("thigh", "shin"), ARM: ("upper arm", "forearm")}
_EXTREMITY_WORD = {LEG: "foot", ARM: "hand"}
_SIDE_WORD = {naming.LEFT: "left", naming.RIGHT: "right"}
_POSITION_WORD = {FRONT: "front", HIND: "hind"}
_KIND_ORDER = {LEG: 0, ARM: 1}
_POSITION_ORDER = {None: 0, FRONT: 1, HIND: 2}
_SIDE_ORDER = {naming.LEFT: 0, naming.RIGHT: 1, None: 2}

# A limb segment more than this many times as long as the other is a helper bone or a
# mislabelled one, not half of a leg or an arm (human and animal limbs stay well within it).
_MAX_SEGMENT_RATIO = 4.0
# A foot at least this long against the shin, and within this angle of the leg's line
# from hip to ankle, is a third leg segment: animals' metatarsi measure 0.7 to 1.1 of the
# shin and run 10 to 35 degrees off that line; a human foot is 0.3 to 0.45 of the shin
# and turns 60 degrees or more, a human hand 0.4 of the forearm.
_THIRD_SEGMENT_RATIO = 0.55
_THIRD_SEGMENT_MAX_DEGREES = 45.0
# A chain bone shorter than this share of its segment ends far from the next joint:
# IK moves bone tails, so it would not carry the foot or hand.
_MIN_BONE_SHARE = 0.2
# The chain's last bone longer than this share of its segment ends far past the foot or hand,
# and IK carries that tail to the handle: the handle would float away from the foot.
_MAX_LAST_SHARE = 1.5
# A chain bone whose tail lies farther than this share of its segment from the next joint points
# elsewhere (an importer's guess): IK would carry that tail, not the joint, to the handle.
_MAX_TAIL_OFF = 0.5
# Two bones named as the halves of one segment must continue each other's line, joint to
# joint, within this angle: a knee or an elbow, however straight, is told apart by its names.
HALF_MAX_DEGREES = 20.0
_EPSILON = 1e-9


@dataclass(frozen=True)
class DetectedLimb:
    """A leg or an arm found in the skeleton, ready to be rigged."""

    kind: str  # LEG or ARM
    side: str | None  # naming.LEFT, naming.RIGHT or None
    chain: tuple[str, ...]  # root first: (thigh, shin), (upper arm, forearm) or (thigh, shin, foot)
    extremity: str | None  # foot, hand or toe, if found
    position: str | None = None  # FRONT or HIND when the names say which pair of a quadruped's legs
    # Chain bones that are the second half of a segment split in two (DAZ's ThighTwist): IK keeps them in line.
    halves: tuple[str, ...] = ()
    # A chain bone's tail lies far from its next joint, its length fitting (an importer's guess of
    # its direction): IK carries that tail, not the joint, to the handle (see Fix Bone Orientation).
    tails_elsewhere: bool = False

    @property
    def last(self) -> str:
        return self.chain[-1]

    @property
    def label(self) -> str:
        """How a report names the limb: "left leg", "right front leg"."""
        return _label(self.kind, self.side, self.position)


@dataclass(frozen=True)
class Skipped:
    """A bone that looked like part of a limb but was not rigged."""

    bone: str
    reason: str  # a sentence: why it was not rigged
    # Its bones' tails lie far off their joints, as importers often leave them: Fix Bone
    # Orientation, which points them at the joints, would let it be rigged.
    tails_off: bool = False
    # The chain it would have ended, when it was refused for the chain's bones: a bone in it has
    # nothing more to say (Quaternius' BackLeg.L, the first of BackLeg.L > BackUpLeg.L > BackLowLeg.L).
    chain: tuple[str, ...] = ()


@dataclass(frozen=True)
class Detection:
    """What ``detect_limbs`` found and what it left alone."""

    limbs: tuple[DetectedLimb, ...]
    skipped: tuple[Skipped, ...]
    notes: tuple[str, ...] = ()  # what it left alone on purpose: a skeleton's own IK bones

    def describe(self) -> str:
        """A few lines for a report: the limbs found, the bones skipped and why, then the notes."""
        if self.limbs:
            lines = [f"found {len(self.limbs)} limb(s):"]
            for limb in self.limbs:
                # Below a 3-bone leg's foot is a toe, paw or hoof.
                word = "toe" if len(limb.chain) - len(limb.halves) > 2 else _EXTREMITY_WORD[limb.kind]
                end = f", {word} {limb.extremity}" if limb.extremity else ""
                lines.append(f"  {limb.label}: {' > '.join(limb.chain)}{end}")
        else:
            lines = ["found no legs or arms"]
        if self.skipped:
            lines.append(f"skipped {len(self.skipped)} bone(s):")
            lines.extend(f"  {item.bone}: {item.reason}" for item in self.skipped)
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)


def _label(kind: str, side: str | None, position: str | None = None) -> str:
    words = [_SIDE_WORD[side]] if side else []
    if position:
        words.append(_POSITION_WORD[position])
    words.append(_KIND_WORD[kind])
    if side is None:
        words.append("without a side")
    return " ".join(words)


@dataclass(frozen=True)
class _Name:
    """A bone name read for detection."""

    words: tuple[str, ...]  # lower case, without namespace, numbers, side and position words
    side: str | None  # the side naming.split_side reads, the one mirroring uses
    sides: frozenset[str]  # every side the name states; two means it contradicts itself
    generated: str | None  # the generated-rig prefix ("ORG"), if any
    position: str | None  # FRONT or HIND
    index: int | None  # the first number glued to a word: 2 for "Leg02_016"
    copy: bool = False  # a COLLADA copy of a name ("arm_joint_L__4_"), whose number tells no order

    @property
    def base(self) -> str:
        return "".join(self.words)

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


# Words an exporter or a rigger puts after every bone's own word (COLLADA's "leg_joint_L_1", Maya's
# "L_knee_jnt", "l_thigh_bind"); dropped after a limb word.
_FILLER_WORDS = frozenset({"joint", "jnt", "bind", "bnd"})
# Words an exporter puts before them: the skeleton's name (COLLADA's "Skeleton_arm_joint_R"); dropped before one.
_LEAD_WORDS = frozenset({"skeleton", "armature"})
_SUFFIX_NUMBER = re.compile(r"[._\- ](?P<number>\d+)$")
# COLLADA writes a name's copies "arm_joint_L (4)" as "arm_joint_L__4_": the number counts copies, in any order.
_COPY = re.compile(r"__\d+_$")


def _read_name(name: str, known: Container[str]) -> _Name:
    parts = naming.split_side(name, known)
    rest = naming.english(parts.base)
    generated = _GENERATED.match(rest)
    if generated:
        rest = rest[generated.end():]
    position = None
    rigify = _RIGIFY_POSITION.match(rest) if parts.side else None
    if rigify:
        position, rest = _RIGIFY_POSITIONS[rigify["position"]], rest[rigify.end():]
    sides = {parts.side} if parts.side else set()
    words: list[str] = []
    glued: list[bool] = []  # whether each word was glued to the word before it ("ThighBend")
    index = None
    previous_end = -1
    for match in _WORD.finditer(rest):
        lower = match.group().lower()
        if lower.isdigit():
            if words and match.start() == previous_end and index is None:
                index = int(lower)
        elif lower in _SIDE_WORDS:
            # A side word left in the base: "L_shin_R" states both sides.
            sides.add(_SIDE_WORDS[lower])
        else:
            words.append(lower)
            glued.append(match.start() == previous_end)
        previous_end = match.end()
    if len(words) >= 2 and len(words[0]) == 1 and glued[1] and "".join(words[1:]) in _VOCABULARY:
        # A one-letter tag glued before the word: Second Life's "mHipLeft", "mElbowRight".
        words.pop(0)
        glued.pop(0)
    if len(words) >= 2 and words[-1] == "bend" and glued[-1] and "".join(words[:-1]) in _VOCABULARY:
        # DAZ Genesis names its main limb bones "ThighBend", "ShldrBend", beside "ThighTwist".
        words.pop()
    if len(words) == 1 and words[0] not in _VOCABULARY | _THIRD_SEGMENTS:
        # A position glued to the limb word in lower case: "frontleg", "hindleg".
        glued_position = next((word for word in _POSITION_WORDS if words[0].startswith(word)
                               and words[0][len(word):] in _VOCABULARY | _THIRD_SEGMENTS), None)
        if glued_position:
            words = [glued_position, words[0][len(glued_position):]]
    if "".join(words) not in _VOCABULARY:
        kept = [word for word in words if word not in _POSITION_WORDS]
        if kept != words and "".join(kept) in _VOCABULARY | _THIRD_SEGMENTS:
            position = position or next(_POSITION_WORDS[word] for word in words if word in _POSITION_WORDS)
            words = kept
    if len(words) >= 2 and words[0] in _LEAD_WORDS and "".join(
            words[1:-1] if words[-1] in _FILLER_WORDS else words[1:]) in _VOCABULARY:
        words.pop(0)
        glued.pop(0)
    if len(words) >= 2 and words[-1] in _FILLER_WORDS and "".join(words[:-1]) in _VOCABULARY:
        words.pop()
        glued.pop()
    if len(words) >= 2 and words[-1] == "stretch" and "".join(words[:-1]) in _VOCABULARY:
        # Auto-Rig Pro's exported limb bones: "thigh_stretch.l", "leg_stretch.l", "forearm_stretch.l".
        words.pop()
        glued.pop()
    if index is None and "".join(words) in _NUMBERED:
        # The number after the side, when none is glued to the word: "leg_joint_L_2" is Leg2.
        numbers = _SUFFIX_NUMBER.search(parts.suffix)
        index = int(numbers["number"]) if numbers else None
    prefix = generated["prefix"].upper() if generated else None
    side = parts.side if len(sides) <= 1 else None
    return _Name(tuple(words), side, frozenset(sides), prefix, position, index, _COPY.search(name) is not None)


class _Names:
    """Bone names read on first use (detection needs few of a skeleton's names), into the
    skeleton's own ``read_names``, so that every later reading of it finds them read."""

    def __init__(self, skeleton: Skeleton) -> None:
        self.read: dict[str, _Name] = skeleton.read_names
        self.known = skeleton.bones.keys()
        self.around: bool | None = None  # see _rig_around

    def __getitem__(self, name: str) -> _Name:
        read = self.read.get(name)
        if read is None:
            read = _read_name(name, self.known)
            if read.generated == "DEF" and not self._rig_around():
                read = replace(read, generated=None)
            self.read[name] = read
        return read

    def _rig_around(self) -> bool:
        """Whether a generated rig's DEF- bones have that rig around them: its ORG- or MCH- bones. A
        game engine's export keeps the DEF- bones alone (Rigify's ``DEF-thigh.L > DEF-thigh.L.001 >
        DEF-shin.L``), and nothing drives them but their own keys: they are the character's bones."""
        if self.around is None:
            self.around = any((found := _GENERATED.match(bone)) is not None
                              and found["prefix"].upper() in ("ORG", "MCH") for bone in self.known)
        return self.around


_LOWER_WORDS = re.compile("|".join(sorted(map(re.escape, {*_RULE_OF_LOWER, *_NUMBERED}))))
_NOT_LETTERS = re.compile(r"[^a-z]")
_DIGIT = re.compile(r"\d")


def _may_be_lower(name: str) -> bool:
    """Cheap test before reading a name: a lower bone's letters hold its word (``Fore_Arm``)."""
    return _LOWER_WORDS.search(_NOT_LETTERS.sub("", naming.english(name).lower())) is not None


def _angle_cosine(a: Vector, b: Vector) -> float:
    return a.dot(b) / max(a.length * b.length, _EPSILON)


class _Reader:
    """The skeleton with its names read once, when first needed."""

    def __init__(self, skeleton: Skeleton, tails_fixed: bool = False) -> None:
        self.skeleton = skeleton
        self.names = _Names(skeleton)
        self.tails_fixed = tails_fixed

    def rule_of(self, name: str) -> _Rule | None:
        """The rule for ``name`` as a lower bone; a numbered whole-limb word makes its own."""
        read = self.names[name]
        rule = _RULE_OF_LOWER.get(read.base)
        if rule is None and read.base in _NUMBERED and (read.index is not None or read.copy):
            return _Rule(_NUMBERED[read.base], frozenset({read.base}), frozenset(), frozenset())
        return rule

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
        if self.second_half(upper, lower):
            return Skipped(lower, f"it is the second half of the {_SEGMENT_WORD[rule.kind][1]} '{upper}' > "
                                  f"'{lower}', in the limb that '{upper}' ends")
        top: tuple[str, ...] = (upper,)
        grand = self.skeleton[upper].parent
        above = False  # whether the chain starts a segment above its upper bone
        if grand is not None and self.second_half(grand, upper):
            bent = self._bent_halves(grand, upper, self.skeleton[lower].head, _SEGMENT_WORD[rule.kind][0])
            if bent:
                return Skipped(lower, bent)
            top, upper, upper_name = (grand, upper), grand, self.names[grand]
        elif grand is not None and self._segment_above(grand, upper, rule.kind):
            top, upper, upper_name, above = (grand, upper), grand, self.names[grand], True
        # Leg01 > Leg02, or a name and its first copy as Blender numbers them (frontleg > frontleg001).
        numbered = (lower_name.base in _NUMBERED and lower_name.index is not None
                    and upper_name.base == lower_name.base
                    and upper_name.index == (None if lower_name.index == 1 else lower_name.index - 1)
                    or self._copies(upper, lower))
        if numbered and len(top) == 1 and grand is not None and self._numbered_before(grand, upper):
            if self._short_end(upper, lower) or (rule.kind == ARM and self._joint_below(lower) is None):
                # Leg1 > Leg2 > Leg3 where Leg3 is short (Arm3 ending the arm): the foot (hand) of Leg1 > Leg2.
                return Skipped(lower, f"it is the {_EXTREMITY_WORD[rule.kind]} of '{grand}' > '{upper}', "
                                      f"too short or too much at the end for a third segment")
            top, upper, upper_name = (grand, upper), grand, self.names[grand]  # Leg1 > Leg2 > Leg3: three segments
        # The upper segment's name: its first half's, or its second's when the first is named as its twist.
        if not numbered and upper_name.base not in rule.uppers and self.names[top[-1]].base not in rule.uppers:
            if lower_name.base in _NUMBERED and upper_name.base == lower_name.base:
                return Skipped(lower, f"it and its parent '{upper}' are numbered {upper_name.index} and "
                                      f"{lower_name.index}, not in turn, so they are not sure to be a {what}'s "
                                      "segments")
            if upper_name.is_helper:
                return Skipped(lower, f"its parent '{upper}' is named like a helper bone (twist, IK, ...), "
                                      f"not {_UPPER_WORD[rule.kind]}")
            if not upper_name.contains(rule.loose_uppers):
                return Skipped(lower, f"its parent '{upper}' is not named like {_UPPER_WORD[rule.kind]}, "
                                      f"so it is not sure to be a {what}")
        chain: tuple[str, ...] = (*top, lower)
        extremity = self._extremity(lower, rule.kind)
        if extremity is None and numbered:
            extremity = self._numbered_next(lower)  # Leg1 > Leg2 > Leg3, Leg3 the foot (see _short_end)
        if extremity is None:
            half = next((child.name for child in self.skeleton.children(lower)
                         if self.second_half(lower, child.name)), None)
            if half is not None:
                below = self._extremity(half, rule.kind)
                end = self.skeleton[below].head if below else self.skeleton[half].tail
                bent = self._bent_halves(lower, half, end, _SEGMENT_WORD[rule.kind][1])
                if not bent:
                    chain, extremity = (*chain, half), below
                elif not self.names[half].is_helper:  # a twist bone turning away is a helper beside the limb
                    return Skipped(lower, bent)
        third = self._third_segment(upper, lower, extremity) if extremity else None
        if third is not None:
            chain, extremity = (*chain, third[0]), third[1]
        if extremity is None:
            extremity = self._detached_extremity(chain, rule.kind)
        side, disagreement = self._side(chain + ((extremity,) if extremity else ()))
        if disagreement:
            return Skipped(lower, disagreement)
        halves = tuple(second for first, second in zip(chain, chain[1:]) if self.second_half(first, second))
        problem = self._proportion(chain, halves, extremity, rule.kind)
        if problem and above and not self._proportion(chain[1:], halves, extremity, rule.kind):
            chain, problem = chain[1:], ""  # the bone above is no segment by its length: the limb without it
        if problem:
            return Skipped(lower, problem, tails_off=problem.endswith(_SHAPE_HINT), chain=chain)
        positions = {self.names[bone].position for bone in chain} - {None}
        position = positions.pop() if len(positions) == 1 else None
        return DetectedLimb(rule.kind, side, chain, extremity, position, halves,
                            self._tails_elsewhere(chain, extremity))

    def _tails_elsewhere(self, chain: tuple[str, ...], extremity: str | None) -> bool:
        """Whether a bone of ``chain`` ends far from its next joint (the next bone's head, or the foot's
        or hand's): farther than ``_MAX_TAIL_OFF`` of the segment between the two joints."""
        bones = self.skeleton
        ends = [bones[name].head for name in chain[1:]] + ([bones[extremity].head] if extremity else [])
        return any((bones[name].tail - end).length > _MAX_TAIL_OFF * (end - bones[name].head).length
                   for name, end in zip(chain, ends))

    def second_half(self, first: str, second: str) -> bool:
        """Whether the names make ``second`` the second half of a limb segment that ``first`` begins.

        MakeHuman's ``upperleg01 > upperleg02`` name both halves with one limb word,
        numbered; DAZ's ``ThighBend > ThighTwist`` add "twist" to the second, Auto-Rig Pro's
        exports to the first (``thigh_twist > thigh_stretch``, ``c_arm_twist_offset >
        arm_stretch``). Whole-limb words numbered (``Leg01 > Leg02``) are successive
        segments instead.
        """
        one, two = self.names[first], self.names[second]
        if one.generated or two.generated:
            return False
        if one.base in _VOCABULARY and one.base not in _EXTREMITY_WORDS:
            if one.base == two.base:
                return one.base not in _NUMBERED and one.base not in _JOINT_UPPERS
            return "twist" in two.words and two.contains(frozenset({one.base}))
        return (two.base in _VOCABULARY and two.base not in _EXTREMITY_WORDS and "twist" in one.words
                and one.contains(frozenset({two.base})))

    def _numbered_before(self, first: str, second: str) -> bool:
        """Whether ``first`` and ``second`` are one whole-limb word numbered in turn (``Leg1 > Leg2``)."""
        one, two = self.names[first], self.names[second]
        return (not one.generated and one.base == two.base and one.base in _NUMBERED and one.index is not None
                and two.index is not None and one.index == two.index - 1 and one.sides == two.sides
                or self._copies(first, second))

    def _copies(self, first: str, second: str) -> bool:
        """Whether ``second`` is a COLLADA copy of ``first``'s whole-limb word on its side (Cesium Man's
        ``arm_joint_L__4_ > __3_ > __2_``, ``arm_joint_R > __2_ > __3_``): the copies' numbers count
        names, not joints, so the hierarchy alone orders the segments."""
        one, two = self.names[first], self.names[second]
        return (two.copy and not one.generated and not two.generated and one.base == two.base
                and one.base in _NUMBERED and one.index is None and two.index is None and one.sides == two.sides)

    def _numbered_next(self, bone: str) -> str | None:
        """The one child of ``bone`` that numbers its whole-limb word on (``Leg2`` below ``Leg1``)."""
        following = [child.name for child in self.skeleton.children(bone) if self._numbered_before(bone, child.name)]
        return following[0] if len(following) == 1 else None

    def _segment_above(self, first: str, middle: str, kind: str) -> bool:
        """Whether ``first`` is a three-segment limb's first segment, above ``middle``, its second.

        A mech's ``UpperLeg > MidLeg > LowerLeg`` name the middle one so; animals' ``Leg >
        UpperLeg > LowerLeg`` (Quaternius') put the whole-limb word above the upper one.
        """
        one, two = self.names[first], self.names[middle]
        if one.generated or one.is_helper or one.sides != two.sides or one.position != two.position:
            return False
        whole, uppers = _WHOLE_WORD[kind], _UPPERS[kind]
        if two.words[:1] in (("mid",), ("middle",)) and "".join(two.words[1:]) == whole:
            return one.base in uppers
        return one.base == whole and one.index is None and two.base in uppers and two.base != whole

    def _bent_halves(self, first: str, second: str, end: Vector, segment: str) -> str:
        """Why ``first > second``, named as the two halves of one segment, are not, or ''."""
        bones = self.skeleton
        angle = math.degrees(in_line_angle(bones[first].head, bones[second].head, end))
        if angle <= HALF_MAX_DEGREES:
            return ""
        return (f"'{first}' > '{second}' are named as the two halves of the {segment}, but they meet at "
                f"{angle:.0f} degrees, so the knee or elbow could be at either; rig it by hand")

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
            if kind != ARM:
                return None
            # The forearm's tail tells nothing (an import's) and the hand is not alone below it
            # (a thumb beside it): its one palm is the hand.
            palms = [child.name for child in self.skeleton.children(lower) if self._hand_palm(child.name, lower)]
            return palms[0] if len(palms) == 1 else None
        if kind == ARM and self._hand_palm(automatic, lower):
            return automatic  # a palm continuing the forearm is the hand
        child = self.names[automatic]
        # A child not named as the foot or hand continues the limb only if it is no helper,
        # finger, toe or limb bone of its own, and is on the same side.
        if (child.generated or child.is_helper or child.contains(_NOT_EXTREMITY[kind])
                or child.sides != self.names[lower].sides):
            return None
        return automatic

    def _own_ik_end(self, name: str, kind: str, own: _Name) -> bool:
        """Whether ``name`` reads as the IK target of the limb ``own`` ends: "IK" and the limb's
        whole word (``IK_Leg.L``, ``IKBackLeg.L``), on its side, in its position (front or hind)."""
        read = self.names[name]
        rest = [word for word in read.words if word != "ik"]
        limb = [word for word in rest if word not in _POSITION_WORDS]
        positions = {_POSITION_WORDS[word] for word in rest if word in _POSITION_WORDS}
        position = positions.pop() if len(positions) == 1 else None
        return (len(rest) < len(read.words) and limb == [_KIND_WORD[kind]] and not read.generated
                and read.sides == own.sides and (position or read.position) == own.position)

    def own_ik_bone(self, name: str) -> bool:
        """Whether ``name`` reads as a game skeleton's own IK bone: "IK", then a foot or a hand, first
        (Unreal's ``ik_foot_l``, ``ik_hand_gun``, ``ik_foot_root``), which its engine places."""
        if "ik" not in name.lower():  # cheap, before reading
            return False
        read = self.names[name]
        return read.words[:1] == ("ik",) and read.words[1:2] in (("foot",), ("hand",)) and not read.generated

    def _hand_palm(self, name: str, lower: str) -> bool:
        """Whether ``name``, a child of the forearm ``lower``, is a palm on its side: the hand in rigs
        that name it so (a numbered palm is a metacarpal)."""
        read = self.names[name]
        return (read.base == "palm" and not read.generated and not _DIGIT.search(name.rsplit(":", 1)[-1])
                and read.sides == self.names[lower].sides)

    def _detached_extremity(self, chain: tuple[str, ...], kind: str) -> str | None:
        """The foot or hand of a game rig made for IK, which hangs from the root rather than from the
        chain (``Root > Foot.L``): the one bone so named on the chain's side, beside no other limb,
        that starts a segment's length (within the segment ratio) below the chain's last joint."""
        bones = self.skeleton
        own = self.names[chain[-1]]
        heads = [bones[name].head for name in chain]
        segment = (heads[-1] - heads[-2]).length
        words = _EXTREMITIES[kind]

        def detached(name: str) -> bool:
            return (name not in chain and not bones.is_below(chain[0], name)
                    and not any(bones.is_below(name, bone) for bone in chain))

        found = [bone.name for bone in bones.bones.values()
                 if any(word in _NOT_LETTERS.sub("", bone.name.lower()) for word in words)  # cheap, before reading
                 and self.names[bone.name].base in words and not self.names[bone.name].generated
                 and self.names[bone.name].sides == own.sides and self.names[bone.name].position == own.position
                 and detached(bone.name)]
        if not found:
            # Named as the limb's own IK target (Quaternius' animals: ``IKBackLeg.L``, the hoof, skinned):
            # where the game engine's IK put the foot, it is the foot.
            found = [bone.name for bone in bones.bones.values()
                     if "ik" in bone.name.lower() and self._own_ik_end(bone.name, kind, own) and detached(bone.name)]
        if len(found) != 1:
            return None
        reach = (bones[found[0]].head - heads[-1]).length
        return found[0] if segment / _MAX_SEGMENT_RATIO <= reach <= segment * _MAX_SEGMENT_RATIO else None

    def _joint_below(self, bone: str) -> tuple[Vector, list[str]] | None:
        """Where the bones below ``bone`` start, when they all start at one joint, and those bones."""
        children = [child for child in self.skeleton.children(bone) if not self.names[child.name].generated]
        if not children:
            return None
        head = self.skeleton[bone].head
        joint = children[0].head
        span = (joint - head).length
        if span < _EPSILON or any((child.head - joint).length > geometry.SAME_JOINT * span for child in children):
            return None
        return joint, sorted(child.name for child in children)

    def _end_segment(self, lower: str, foot: str) -> tuple[Vector, Vector, list[str]] | None:
        """Below ``lower``: the span from its head to ``foot``'s, the span from ``foot``'s head to the
        joint below it, and the bones starting there; None without one joint below ``foot``."""
        below = self._joint_below(foot)
        if below is None:
            return None
        head = self.skeleton[foot].head
        return head - self.skeleton[lower].head, below[0] - head, below[1]

    def _short_end(self, lower: str, foot: str) -> bool:
        """Whether ``foot``, below ``lower``, spans to the joint below it less than a third segment
        does (``_THIRD_SEGMENT_RATIO`` of ``lower``'s): a human foot or hand."""
        spans = self._end_segment(lower, foot)
        return spans is not None and spans[1].length < _THIRD_SEGMENT_RATIO * spans[0].length

    def _third_segment(self, upper: str, lower: str, foot: str) -> tuple[str, str | None] | None:
        """``foot`` and the toe below it when ``foot`` is a third leg segment (long enough, and close
        enough to the leg's line from hip to ankle, as an animal's metatarsus is), else None."""
        foot_name = self.names[foot]
        spans = self._end_segment(lower, foot)
        if foot_name.base not in _THIRD_SEGMENTS or foot_name.is_helper or spans is None:
            return None
        shin, segment, children = spans
        leg_line = self.skeleton[foot].head - self.skeleton[upper].head
        if not _THIRD_SEGMENT_RATIO * shin.length <= segment.length <= _MAX_SEGMENT_RATIO * shin.length:
            return None
        if _angle_cosine(segment, leg_line) < math.cos(math.radians(_THIRD_SEGMENT_MAX_DEGREES)):
            return None
        plain = [child for child in children if not self.names[child].is_helper
                 or self.names[child].contains(frozenset({"toe", "toes"}))]
        toe = plain[0] if len(plain) == 1 else (children[0] if len(children) == 1 else None)
        return foot, toe

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

    def _proportion(self, chain: tuple[str, ...], halves: tuple[str, ...], extremity: str | None, kind: str) -> str:
        """Why the chain's bones are not the segments of one limb by their lengths, or ''."""
        # Joint to joint from the heads: importers place tails differently, heads are the joints.
        bones = self.skeleton
        segments = [name for name in chain if name not in halves]
        upper, lower = segments[0], segments[1]
        first = (bones[lower].head - bones[upper].head).length
        end: Vector | None = bones[extremity].head if extremity else None
        if end is None and len(segments) == 2:
            below = self._joint_below(chain[-1])
            end = below[0] if below else None
        if len(segments) == 2:
            second = ((end - bones[lower].head).length if end is not None
                      else sum(bones[name].length for name in chain[chain.index(lower):]))
        else:
            second = (bones[segments[2]].head - bones[lower].head).length
        if min(first, second) < _EPSILON or max(first, second) > _MAX_SEGMENT_RATIO * min(first, second):
            if end is not None or len(segments) > 2:
                return (f"its parent '{upper}' spans {first:.3g} and it spans {second:.3g}: too unlike to be "
                        "the two halves of one limb")
            return (f"its parent '{upper}' spans {first:.3g} and it is {second:.3g} long, with no single joint "
                    f"below it to show where its segment ends: too unlike to be the two halves of one limb; "
                    f"{_IMPORT_HINT}")
        if self.tails_fixed:  # the build points every tail at its next joint
            return ""
        joints = [bones[name].head for name in chain] + ([end] if end is not None else [])
        for name, head, following in zip(chain, joints, joints[1:]):
            span = (following - head).length
            if bones[name].length < _MIN_BONE_SHARE * span:
                return (f"'{name}' is {bones[name].length:.3g} long but its segment spans {span:.3g}: IK moves the "
                        f"chain's bone tails, which lie far from the joints, so it would not carry the "
                        f"{_EXTREMITY_WORD[kind]}; {_SHAPE_HINT}")
            if name == chain[-1] and bones[name].length > _MAX_LAST_SHARE * span:
                return (f"'{name}' is {bones[name].length:.3g} long but its segment spans {span:.3g}: IK carries its "
                        f"tail, far past the {_EXTREMITY_WORD[kind]}, to the handle, so the handle would float away "
                        f"from the {_EXTREMITY_WORD[kind]}; {_SHAPE_HINT}")
        return ""


_IMPORT_HINT = "give the bones tails on their next joint (the importer's bone shape setting)"
_SHAPE_HINT = f"{_IMPORT_HINT}, or rig with Fix Bone Orientation on"


def _generated_reason(prefix: str) -> str:
    return (f"it is a generated rig's {prefix}- bone, driven by that rig's own controls; "
            "rig the metarig instead")


def in_line_angle(start: Vector, joint: Vector, end: Vector) -> float:
    """How far (radians) the line from ``joint`` to ``end`` turns away from the line from ``start`` to ``joint``."""
    into, out = joint - start, end - joint
    if into.length < _EPSILON or out.length < _EPSILON:
        return math.pi
    return float(into.angle(out))


def split_halves(skeleton: Skeleton, chain: tuple[str, ...], joints: list[Vector]) -> frozenset[str]:
    """The chain's bones that are the second half of a segment split in two along its length.

    Named so (``ThighBend > ThighTwist``, ``upperleg01 > upperleg02``) and continuing the
    first half's line within ``HALF_MAX_DEGREES``, joint to joint: ``joints`` are the
    chain's heads and its end. IK must keep such a bone in line with its first half, or the
    limb would bend halfway along the thigh or forearm.
    """
    reader = _Reader(skeleton)
    return frozenset(
        second for index, (first, second) in enumerate(zip(chain, chain[1:]), start=1)
        if reader.second_half(first, second)
        and math.degrees(in_line_angle(joints[index - 1], joints[index], joints[index + 1])) <= HALF_MAX_DEGREES)


def _drop_ambiguous(limbs: list[DetectedLimb]) -> tuple[list[DetectedLimb], list[Skipped]]:
    """Keep the limbs that are alone in being, say, the left leg; skip every rival of the others."""
    groups: dict[tuple[str, str | None, str | None], list[DetectedLimb]] = {}
    for limb in limbs:
        groups.setdefault((limb.kind, limb.side, limb.position), []).append(limb)
    kept: list[DetectedLimb] = []
    skipped: list[Skipped] = []
    for group in groups.values():
        if len(group) == 1:
            kept.extend(group)
            continue
        rivals = " and ".join(" > ".join(limb.chain) for limb in group)
        reason = f"{len(group)} chains could be the {group[0].label} ({rivals}); rig the right one by hand"
        skipped.extend(Skipped(limb.last, reason) for limb in group)
    return kept, skipped


def detect_limbs(skeleton: Skeleton, *, tails_fixed: bool = False) -> Detection:
    """The legs and arms of ``skeleton``: legs first, then arms, each left then right then unsided.

    A bone named like the lower half of a limb that cannot be rigged for sure is
    listed in ``skipped`` with the reason, unless it is part of a limb found anyway or
    hangs from a found limb's foot or hand.
    ``tails_fixed`` says the build will point every chain bone's tail at its next joint
    (Fix Bone Orientation): bones too short or too long for their segments do not matter then.
    """
    reader = _Reader(skeleton, tails_fixed)
    found: list[DetectedLimb] = []
    skipped: list[Skipped] = []
    for name in sorted(skeleton.bones):
        if not _may_be_lower(name):
            continue
        rule = reader.rule_of(name)
        if rule is None:
            continue
        result = reader.limb_ending_at(name, rule)
        if isinstance(result, DetectedLimb):
            found.append(result)
        else:
            skipped.append(result)
    # A chain inside another found one (Leg1 > Leg2 within Leg1 > Leg2 > Leg3) is part of that limb.
    found = [limb for limb in found if not any(set(limb.chain) < set(other.chain) for other in found)]
    limbs, rivals = _drop_ambiguous(found)
    used = {bone for limb in limbs for bone in (*limb.chain, limb.extremity) if bone}
    used.update(bone for item in skipped for bone in item.chain[:-1])
    ends = {limb.extremity for limb in limbs if limb.extremity}
    # "Leg" names Mixamo's lower leg but also, elsewhere, a whole upper leg: a bone that
    # could not end a limb but is part of one found is no skip worth reporting, nor is one
    # below a found limb's foot or hand (the toe of "leg_joint_L_1 > _2 > _3 > _5"), nor one
    # in a chain skipped for its bones, whose lower bone says why.
    reasons = {item.bone: item for item in [*skipped, *rivals]
               if item.bone not in used and (skeleton[item.bone].parent not in ends)}
    limbs.sort(key=lambda limb: (_KIND_ORDER[limb.kind], _POSITION_ORDER[limb.position], _SIDE_ORDER[limb.side],
                                 limb.chain))
    own_ik = sorted(name for name in skeleton.bones if name not in used and reader.own_ik_bone(name))
    notes = (f"{', '.join(repr(name) for name in own_ik)}: the skeleton's own IK bones, "
             "not limbs: left as they are",) if own_ik else ()
    return Detection(tuple(limbs), tuple(reasons[bone] for bone in sorted(reasons)), notes)
