"""Reading a bone's name for detection: its words, sides, position (front or hind), number and
generated-rig prefix (see ``core.detect``)."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Container, Iterable
from dataclasses import dataclass, replace

from . import naming
from .detect_words import (
    EXTREMITY_WORDS,
    FRONT,
    HIND,
    MID_WORDS,
    MIDDLE_OF,
    NOT_LIMB_WORDS,
    NUMBERED,
    POSITION_WORDS,
    RULE_OF_LOWER,
    TAIL_JOINTS,
    THIRD_SEGMENTS,
    VOCABULARY,
)
from .model import Skeleton

# A generated rig's own controls drive the copies it makes of every bone (``naming.GENERATED``), so an IK built on
# them would fight the generated rig.
_GENERATED = naming.GENERATED
# A generated rig's ORG- and MCH- bones, in lower-case names each after a character no bone name holds (Blender's
# names are C strings): searched for through them all at once, as few armatures have one.
_RIG_LAYERS = re.compile(r"\0(?:org|mch)[-_]")
_DEFORM_PREFIXES = ("def-", "def_")
# Rigify's animal metarigs mark rear and front parts "r_toe.L", "f_palm.01.L".
_RIGIFY_POSITION = re.compile(r"^(?P<position>[fr])_(?=[a-z])")
_RIGIFY_POSITIONS = {"f": FRONT, "r": HIND}
# Words of a name: "LeftUpLeg" -> Left, Up, Leg; "LThigh" -> L, Thigh; "thigh_twist_01_l" -> thigh, twist, 01, l.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Limb words an extremity's name may carry before its own ("Leg_Ankle").
_LIMB_OWNERS = frozenset({"leg", "arm"})
_SIDE_WORDS = {"l": naming.LEFT, "left": naming.LEFT, "r": naming.RIGHT, "right": naming.RIGHT}
# A tag in brackets after the name (Skyrim's "[LThg]"), dropped when the name is read.
_BRACKETED = re.compile(r"\s*\[[^\]]*\]")


@dataclass(frozen=True)
class Name:
    """A bone name read for detection."""

    words: tuple[str, ...]  # lower case, without namespace, numbers, side and position words
    side: str | None  # the side naming.split_side reads, the one mirroring uses
    sides: frozenset[str]  # every side the name states; two means it contradicts itself
    generated: str | None  # the generated-rig prefix ("ORG"), if any
    position: str | None  # FRONT, MID_FRONT, MID_HIND or HIND
    index: int | None  # the first number glued to a word: 2 for "Leg02_016"
    copy: bool = False  # a COLLADA copy of a name ("arm_joint_L__4_"), whose number tells no order
    # The letter or number telling a limb from its side's others, its segments numbered after it: "a" for "leg_a_2_l"
    tag: str | None = None

    @functools.cached_property
    def base(self) -> str:
        """The words run together (``upperarm``): looked up a score of times for each limb found, so joined once."""
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
        return bool(NOT_LIMB_WORDS.intersection(self.words))


# Words an exporter or a rigger puts after every bone's own word (COLLADA's "leg_joint_L_1", Maya's
# "L_knee_jnt", "l_thigh_bind"); dropped after a limb word.
_FILLER_WORDS = frozenset({"joint", "jnt", "bind", "bnd"})
# Words an exporter puts before them: the skeleton's name (COLLADA's "Skeleton_arm_joint_R"), a game's tag for its
# bones (Team Fortress 2's "bip_knee_L", Skyrim's "NPC Thigh [Thg].L"); dropped before one.
_LEAD_WORDS = frozenset({"skeleton", "armature", "bip", "npc"})
_SUFFIX_NUMBER = re.compile(r"[._\- ](?P<number>\d+)$")
# COLLADA writes a name's copies "arm_joint_L (4)" as "arm_joint_L__4_": the number counts copies, in any order.
_COPY = re.compile(r"__\d+_$")
# A whole-limb word, then a letter or number telling the limb from its side's others, then the segment's number or
# the limb's tip, each apart: Mesh2Motion's spider's "leg_a_1_l > leg_a_2_l > leg_a_3_l > leg_a_tip_l".
_TAGGED = re.compile(r"(?P<word>[a-z]+)[._\- ](?P<tag>[a-z]|\d+)[._\- ](?P<segment>\d+|tip)", re.IGNORECASE)


def rig_around(names: Iterable[str]) -> bool:
    """Whether ``names`` hold a generated rig's ORG- or MCH- bones, which its DEF- bones follow while it is live."""
    return _RIG_LAYERS.search("\0" + "\0".join(names).lower()) is not None


def rigged_deform(names: Collection[str]) -> list[str]:
    """The DEF- bones of ``names`` that have their generated rig around them (``rig_around``); none where they are
    alone, as a game engine's export keeps them: only the former may follow that rig or not
    (``Skeleton.deform_driven``)."""
    if not rig_around(names):
        return []
    return [name for name in names if name[:4].lower() in _DEFORM_PREFIXES]


def read_name(name: str, known: Container[str]) -> Name:
    """``name`` read for detection (``known``: the skeleton's bone names, which tell its sides)."""
    return _read_split(name, naming.split_side(name, known))


# Detection and planning read the same names again, of one armature and of the next: a name
# with its sides split reads the same, so it is read once.
@functools.lru_cache(maxsize=8192)
def _read_split(name: str, parts: naming.SideName) -> Name:
    # A tag in brackets abbreviates the name again, its side with it: Skyrim's "NPC L Thigh [LThg]".
    rest = _BRACKETED.sub("", naming.english(parts.base))
    if parts.prefix in ("L", "R", "l", "r") and rest[:1] in naming.LIMB_TAG_WORDS and rest[1:2] in ("_", ".", "-", " "):
        # A biped's limb letter after its side (3ds Max exports' "LL_thigh", "RA_hand"), read as the limb's word,
        # which the segment's word then leads: the left leg's thigh.
        rest = naming.LIMB_TAG_WORDS[rest[0]] + rest[1:]
    generated = _GENERATED.match(rest)
    if generated:
        rest = rest[generated.end():]
    position, rest = _said_position(rest, parts)
    prefix = generated["prefix"].upper() if generated else None
    tagged = _read_tagged(rest, parts.side, prefix, position)
    if tagged is not None:
        return tagged
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
    if len(words) >= 2 and len(words[0]) == 1 and glued[1] and "".join(words[1:]) in VOCABULARY:
        # A one-letter tag glued before the word: Second Life's "mHipLeft", "mElbowRight".
        words.pop(0)
        glued.pop(0)
    if len(words) >= 2 and words[-1] == "bend" and glued[-1] and "".join(words[:-1]) in VOCABULARY:
        # DAZ Genesis names its main limb bones "ThighBend", "ShldrBend", beside "ThighTwist".
        words.pop()
    if len(words) == 1 and words[0] not in VOCABULARY | THIRD_SEGMENTS:
        # A position glued to the limb word in lower case: "frontleg", "hindleg".
        glued_position = next((word for word in POSITION_WORDS if words[0].startswith(word)
                               and words[0][len(word):] in VOCABULARY | THIRD_SEGMENTS), None)
        if glued_position:
            words = [glued_position, words[0][len(glued_position):]]
    if len(words) >= 2 and words[-2] in _LIMB_OWNERS and words[-1] in EXTREMITY_WORDS | THIRD_SEGMENTS:
        # The extremity named after its limb: Mesh2Motion's "Back_Leg_Ankle_L", "Front_Leg_Foot_L" are an ankle
        # and a foot, no leg.
        words.pop(-2)
        glued.pop(-2)
    elif len(words) == 2 and words[0] in EXTREMITY_WORDS and words[1] in _LIMB_OWNERS:
        # The same, the limb named last: Mesh2Motion's bird's "AnkleLeg_L".
        words.pop()
        glued.pop()
    if "".join(words) not in VOCABULARY:
        said_at = next((index for index, word in enumerate(words) if word in POSITION_WORDS), 0)
        # "MidFrontLeg", "MidBackLeg": a middle pair of legs, told from the front and hind ones.
        middle = said_at > 0 and words[said_at - 1] in MID_WORDS
        kept = [word for index, word in enumerate(words)
                if word not in POSITION_WORDS and not (middle and index == said_at - 1)]
        if kept != words and "".join(kept) in VOCABULARY | THIRD_SEGMENTS:
            said = next(POSITION_WORDS[word] for word in words if word in POSITION_WORDS)
            position = position or (MIDDLE_OF[said] if middle else said)
            words = kept
    if _led(words, glued):
        words.pop(0)
        glued.pop(0)
    if len(words) >= 2 and words[-1] in _FILLER_WORDS and "".join(words[:-1]) in VOCABULARY:
        words.pop()
        glued.pop()
    if len(words) >= 2 and words[-1] == "stretch" and "".join(words[:-1]) in VOCABULARY:
        # Auto-Rig Pro's exported limb bones: "thigh_stretch.l", "leg_stretch.l", "forearm_stretch.l".
        words.pop()
        glued.pop()
    if index is None and "".join(words) in NUMBERED:
        # The number after the side, when none is glued to the word: "leg_joint_L_2" is Leg2.
        numbers = _SUFFIX_NUMBER.search(parts.suffix)
        index = int(numbers["number"]) if numbers else None
    side = parts.side if len(sides) <= 1 else None
    return Name(tuple(words), side, frozenset(sides), prefix, position, index, _COPY.search(name) is not None)


def _led(words: list[str], glued: list[bool]) -> bool:
    """Whether the first of a name's ``words`` leads the limb word the rest make: an exporter's or a game's word
    (``_LEAD_WORDS``), or the limb before its segment (Fallout 4's "LLeg_Calf", "LArm_UpperArm")."""
    if len(words) < 2:
        return False
    if words[0] in _LEAD_WORDS:
        return "".join(words[1:-1] if words[-1] in _FILLER_WORDS else words[1:]) in VOCABULARY
    return (words[0] in _LIMB_OWNERS and not glued[1] and "".join(words) not in VOCABULARY
            and "".join(words[1:]) in VOCABULARY)


def _said_position(rest: str, parts: naming.SideName) -> tuple[str | None, str]:
    """The position a name states before its words (Rigify's "f_" and "r_", a quadruped's corner: "FL_thigh",
    "RH_SHANK", or after them, "leg_fl_1"), and ``rest`` without it."""
    rigify = _RIGIFY_POSITION.match(rest) if parts.side else None
    if rigify:
        return _RIGIFY_POSITIONS[rigify["position"]], rest[rigify.end():]
    marker = parts.prefix or parts.suffix
    corner = naming.corner_end(marker) if marker else None
    return (None if corner is None else FRONT if corner == "F" else HIND), rest


def _read_tagged(rest: str, side: str | None, prefix: str | None, position: str | None) -> Name | None:
    """``rest`` read as a segment or the tip of a limb tagged apart from its side's others (``leg_a_2``: Leg2 of
    leg "a", ``leg_a_tip``: its tip), or None when it is not named so."""
    tagged = _TAGGED.fullmatch(rest)
    if tagged is None or tagged["word"].lower() not in NUMBERED or tagged["tag"].lower() in _SIDE_WORDS:
        return None
    segment = tagged["segment"]
    number = int(segment) if segment.isdigit() else None
    return Name((tagged["word"].lower(), *(() if number is not None else ("tip",))), side,
                frozenset({side} if side else ()), prefix, position, number, tag=tagged["tag"].lower())


class Names:
    """Bone names read on first use (detection needs few of a skeleton's names), into the
    skeleton's own ``read_names``, so that every later reading of it finds them read."""

    def __init__(self, skeleton: Skeleton) -> None:
        self.read: dict[str, Name] = skeleton.read_names
        self.known = skeleton.bones.keys()
        self.deform_driven = skeleton.deform_driven
        self.around: bool | None = None  # see _rig_around

    def __getitem__(self, name: str) -> Name:
        read = self.read.get(name)
        if read is None:
            read = _read_split(name, naming.split_side(name, self.known))  # read_name, a call less
            if read.generated == "DEF" and not (self.deform_driven and self._rig_around()):
                read = replace(read, generated=None)
            self.read[name] = read
        return read

    @property
    def exported(self) -> bool:
        """Whether the skeleton is a generated rig, its ORG- or MCH- bones around its DEF- bones, that nothing
        drives (``Skeleton.deform_driven``): a Rigify character sent through FBX or glTF, or downloaded, keeps
        every bone and none of the constraints and drivers that moved them. Its DEF- bones are then the bones
        the mesh deforms with, rigged, and the rest of the rig is left alone."""
        return not self.deform_driven and self._rig_around()

    def _rig_around(self) -> bool:
        """Whether a generated rig's DEF- bones have that rig around them: its ORG- or MCH- bones. A
        game engine's export keeps the DEF- bones alone (Rigify's ``DEF-thigh.L > DEF-thigh.L.001 >
        DEF-shin.L``), and nothing drives them but their own keys: they are the character's bones; so
        with the rig around them where none of them follows another (``exported``)."""
        if self.around is None:
            self.around = rig_around(self.known)
        return self.around


_LOWER_WORDS = re.compile("|".join(sorted(map(re.escape, {*RULE_OF_LOWER, *NUMBERED, *TAIL_JOINTS}))))

_IK = re.compile("ik")
# Joins names for one search through them all: no bone name holds it (Blender's names are C strings).
_SEPARATOR = "\0"
# Every ASCII character but the lower-case letters and the separator, to take out of a text.
_ONLY_LETTERS = {code: None for code in range(1, 128) if not ord("a") <= code <= ord("z")}
_NOT_LETTERS_NOR_SEPARATOR = re.compile(r"[^a-z\0]")


def _found_in(names: list[str], text: str, pattern: re.Pattern[str]) -> list[str]:
    """Of ``names``, whose texts ``text`` holds in their order between separators, those in whose
    text ``pattern`` is found, in that order."""
    found: list[str] = []
    index = start = 0
    for match in pattern.finditer(text):
        at = index + text.count(_SEPARATOR, start, match.start())
        if at != index or not found:
            found.append(names[at])
        index, start = at, match.start()
    return found


def lower_candidates(names: Iterable[str]) -> list[str]:
    """The names that may be a limb's lower bone, before any is read: those whose letters (after
    ``naming.english``, lower case) hold a lower bone's word (``Fore_Arm``), in their order.
    Searched through them all at once: a large armature holds thousands of names, few of limbs."""
    listed = list(names)
    text = _SEPARATOR.join(listed)
    if text.isascii():
        letters = text.lower().translate(_ONLY_LETTERS)
    else:
        letters = _NOT_LETTERS_NOR_SEPARATOR.sub("", _SEPARATOR.join(map(naming.english, listed)).lower())
    return _found_in(listed, letters, _LOWER_WORDS)


def ik_candidates(names: Iterable[str]) -> list[str]:
    """The names holding "ik" in any case (``IK_foot.L``), in their order: the only ones that may name
    IK bones (``LimbEnds.own_ik_bone``), searched through them all at once."""
    listed = list(names)
    return _found_in(listed, _SEPARATOR.join(listed).lower(), _IK)
