"""Bone names: sides, mirrored names and the names of the bones IK Rigger creates.

A name is read as ``namespace + side prefix + base + side suffix``:
``mixamorig:LeftUpLeg`` is namespace ``mixamorig:``, prefix ``Left``, base ``UpLeg``;
``thigh.L`` is base ``thigh`` with suffix ``.L``; ``L_arm`` has the prefix ``L_``.
Exporters' lead-ins count as namespace (``Bip01 L Thigh``, ``CC_Base_L_Thigh``,
``J_Bip_L_UpperLeg``, ``b_LeftLeg01_015``), and so do namespaces without their colon
(``mixamorigLeftUpLeg``); DAZ writes the side as ``lShin``, MikuMikuDance as ``左ひざ``
(``english`` reads its words). Detection reads sides here too,
so every limb it finds can be mirrored.
Derived names put their tag between the base and the side suffix so they keep the
side where Blender's own X-mirror tools look for it (``foot_IK.L``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Container, Iterable, Sequence
from typing import NamedTuple

LEFT = "L"
RIGHT = "R"

# Tags of the bones every limb has, which detection knows not to take for the user's;
# each part names the rest of its bones itself.
TAG_HANDLE = "IK"
TAG_POLE = "IK_pole"
TAG_CLONE = "IK_clone"
TAG_ORIGIN = "origin"
TAG_HIP = "root"

COLLECTION_CONTROLS = "IK Controls"
COLLECTION_MECHANISM = "IK Mechanism"
COLLECTION_CHAIN = "IK Chain"

# A generated rig's helper bones (Rigify's MCH- and ORG-), which its own controls hang from.
_HELPER = re.compile(r"^(MCH|ORG)[-_]", re.IGNORECASE)


def generated_helper(name: str) -> bool:
    """Whether ``name`` is a generated rig's helper bone's (Rigify's ``MCH-foot_fk.L``)."""
    return _HELPER.match(name) is not None


# Rigify and rigs like it generate copies of every bone under these prefixes (``DEF-thigh.L``).
GENERATED = re.compile(r"^(?P<prefix>ORG|DEF|MCH|VIS|WGT)[-_]", re.IGNORECASE)


_SIDES = r"L|R|l|r|left|right|Left|Right|LEFT|RIGHT"
# A side suffix may be followed by numbers: Blender's duplicates (".L.001"), exporters' indices ("_l_01"),
# COLLADA's copies of a name ("arm_joint_L (4)" written "arm_joint_L__4_"); or by a joint's tag ("thigh_l_jnt").
_SUFFIX = re.compile(rf"^(?P<base>.+?)(?P<side>[._\- ](?:{_SIDES})(?:[._\- ]\d+|__\d+_)*"
                     r"(?:[._\- ](?i:jnt|joint|bind|bnd))?)$")
_SUFFIX_WORD = re.compile(r"^(?P<base>.+?[a-z0-9])(?P<side>Left|Right)$")
_PREFIX = re.compile(rf"^(?P<side>(?:{_SIDES})[._\- ])(?P<base>.+)$")
_PREFIX_WORD = re.compile(r"^(?P<side>Left|Right|left|right|LEFT|RIGHT)(?P<base>[A-Z_0-9].*)$")
# DAZ Genesis writes the side as a lowercase letter before a capital: "lShin", "rForearmBend".
_CAMEL_PREFIX = re.compile(r"^(?P<side>[lr])(?P<base>[A-Z][a-z].*)$")
# MikuMikuDance writes the side as a Japanese word before the name ("左ひざ", the left knee)
# or, for a few bones, after it ("腰キャンセル左").
_JAPANESE_PREFIX = re.compile(r"^(?P<side>[左右])(?P<base>.+)$")
_JAPANESE_SUFFIX = re.compile(r"^(?P<base>.+?)(?P<side>[左右])$")
# Korean writes the side as a word before or after the name, glued or not: 왼쪽 and 오른쪽 (left, right),
# 좌측 and 우측 (left side, right side) always ("왼쪽_허벅지", "허벅지오른쪽"); the short 좌 or 우, 왼 or 오른
# ("좌허벅지", "왼발") only before a limb word or beside the other side's name: alone, 우 begins words of its own.
_KOREAN = "왼쪽|오른쪽|좌측|우측"
_KOREAN_SHORT = "왼|오른|[좌우]"
_KOREAN_PREFIX = re.compile(rf"^(?P<side>(?:{_KOREAN})[._\- ]*)(?P<base>.+)$")
_KOREAN_SUFFIX = re.compile(rf"^(?P<base>.+?)(?P<side>[._\- ]*(?:{_KOREAN}))$")
_KOREAN_SYLLABLE_PREFIX = re.compile(rf"^(?P<side>(?:{_KOREAN_SHORT})[._\- ]*)(?P<base>.+)$")
_KOREAN_SYLLABLE_SUFFIX = re.compile(rf"^(?P<base>.+?)(?P<side>[._\- ]*(?:{_KOREAN_SHORT}))$")
# A side glued to a lowercase word: "lthigh", "leftshin". Read so only when the other side
# exists or the rest is a limb word: alone, "leg" would read as "l" + "eg".
_GLUED_PREFIX = re.compile(r"^(?P<side>left|right|l|r)(?P<base>[a-z].*)$")
# The same in capitals: "LThigh", "RUpperArm"; "LowerLeg" is no side, as its L is followed by lower case.
_CAPITAL_PREFIX = re.compile(r"^(?P<side>[LR])(?P<base>[A-Z][a-z].*)$")
# A side glued after a word as one capital: "ThighL", "UpperArmR". Read so only when the other side's
# name exists: alone, a name may end in a capital of its own. Sketchfab's renaming of a Rigify rig drops the dots and
# numbers every bone, the two sides apart ("thighL_07", "thighR_15"): after a limb word, read so alone, the word
# after Rigify's prefix too ("DEF-thighL_07"), and a split segment's number before the bone's ("DEF-thighL001_08",
# from "DEF-thigh.L.001").
_CAPITAL_SUFFIX = re.compile(r"^(?P<base>.*[a-z])(?P<side>[LR](?P<number>\d*_\d+)?)$")
# French rigs' "gauche" and "droite" as one letter: "cuisse_G", "jambe_D". Read so only when the other
# side's name exists: alone, a name may end in a letter of its own ("Bone_D").
_FRENCH_SUFFIX = re.compile(r"^(?P<base>.*[A-Za-z0-9])(?P<side>[._\- ][GDgd](?:[._\- ]\d+)*)$")
# A quadruped's corner before a limb word, its side and whether front or hind: robot dogs' "FL_thigh > FL_calf"
# and "RR_calf" (front left, rear right), ANYmal's "LF_THIGH > LF_SHANK" and "RH_SHANK" (left front, right hind).
# The letter L or R is the side; F is the front, R, H or B the hind. Read so only when the other side's corner names
# a bone too: alone, "RL_" may be a biped's right leg and "LH_" a left hand.
_CORNER = re.compile(r"^(?P<side>(?:[FRHBfrhb][LRlr]|[LRlr][FHBfhb])[._\- ])(?P<base>.+)$")
# The same corner after a leg word, before the segment's number: "leg_fl_1 > leg_fl_2 > leg_fl_3" to
# "leg_br_3" (front left to back right).
_CORNER_SUFFIX = re.compile(r"^(?P<base>.+?)(?P<side>[._\- ](?:[FRHBfrhb][LRlr]|[LRlr][FHBfhb])(?:[._\- ]\d+)*)$")
_CORNER_BASES = ("thigh", "upleg", "upperleg", "leg", "shin", "calf", "shank", "knee", "lowerleg", "foot", "ankle",
                 "hip", "femur", "tibia")
# A biped's limb tagged after its side in one tag, 3ds Max exports' "LL_thigh > LL_calf" (left leg) and
# "RA_upperarm > RA_forearm" (right arm): L or R the side, then L (leg) or A (arm). Read so only where the other side's
# tag names a bone too: alone, "LA_" may say anything, and "RL_" may be a quadruped's rear left corner.
_LIMB_TAG = re.compile(r"^(?P<side>[LR](?=[LA][._\- ])|[lr](?=[la][._\- ]))(?P<base>.+)$")
# Each limb tag's letter after the side, as the limb's word: detection reads "LL_thigh" as the left leg's thigh.
LIMB_TAG_WORDS = {"L": "Leg", "A": "Arm", "l": "leg", "a": "arm"}
# Each corner's side: the corner named position first ("FL", "RR") or side first ("LF", "RH").
_CORNER_SIDES = {**{position + side: side for position in "FRHB" for side in "LR"},
                 **{side + position: side for side in "LR" for position in "FHB"}}


def _other_corner(corner: str) -> str:
    """``corner`` on the other side, at the same end of the body: "FL" and "FR", "RL" and "RR", "LH" and "RH"."""
    side = _CORNER_SIDES[corner]
    other = RIGHT if side == LEFT else LEFT
    return corner[0] + other if corner[1] == side else other + corner[1]


# Each corner as the other side writes it, in either case.
_CORNER_FLIP = {cased(corner): cased(_other_corner(corner)) for corner in _CORNER_SIDES for cased in (str, str.lower)}


def _corner(marker: str) -> str | None:
    """The quadruped's corner a side marker without its separators names, in capitals ("FL" for ``FL`` and ``fl_1``),
    else None."""
    corner = marker[:2].upper() if len(marker) == 2 or (len(marker) > 2 and not marker[2].isalpha()) else None
    return corner if corner in _CORNER_SIDES else None


def corner_end(marker: str) -> str | None:
    """"F" for a quadruped's front corner as a side marker (``FL_``, ``rf_``, ``_fl_1``), "H" for a hind one (``RR_``,
    ``LH_``, ``_br_2``), else None."""
    corner = _corner(marker.strip("._- "))
    if corner is None:
        return None
    return "F" if corner.replace(_CORNER_SIDES[corner], "", 1) == "F" else "H"


# What comes before the side and is kept as is: a namespace up to the last ':' or '|'
# (FBX, Mixamo, some exporters), then an exporter's lead-in: Mixamo's without its colon
# ("mixamorigLeftUpLeg"), 3ds Max Biped ("Bip01 L Thigh"; the Source engine's
# "ValveBiped.Bip01_L_Thigh"), Character Creator ("CC_Base_L_Thigh"), VRM/VRoid
# ("J_Bip_L_UpperLeg"), Grand Theft Auto's ("SKEL_L_Thigh"), or before a side a short tag ("b_LeftUpperArm_09",
# "Bn_L_Thigh"; The Sims' "b__L_Thigh__", Skyrim's "NPC L Thigh [LThg]", XNALara's "leg left thigh") or a
# numbered name, Maya's HumanIK character's ("Character1_LeftUpLeg"). A longer word is part of the name:
# "Skirt_L_Leg" is no leg.
_NAMESPACE = re.compile(
    r"^(?P<ns>(?:.*[:|])?"
    r"(?:(?i:mixamorig)\d*_?|(?:[A-Za-z]+\.)?(?i:bip)\d+[ _-]|CC_Base_|J_Bip_|FullBody_|SKEL_"
    r"|(?:[A-Za-z]{1,3}|[A-Za-z]+\d+)(?:_+| )(?=(?:Left|Right)[A-Z_]|(?:left|right) |[LRlr][._\- ]))?)"
    r"(?P<rest>.+)$"
)
# A number an exporter appends to every bone ("b_LeftLeg02_016"): the two sides' numbers differ.
INDEXED = re.compile(r"^(?P<stem>.+)_\d+$")

_FLIP = {
    "L": "R", "R": "L", "l": "r", "r": "l",
    "left": "right", "right": "left", "Left": "Right", "Right": "Left",
    "LEFT": "RIGHT", "RIGHT": "LEFT", "左": "右", "右": "左", "G": "D", "D": "G", "g": "d", "d": "g",
    "왼쪽": "오른쪽", "오른쪽": "왼쪽", "좌측": "우측", "우측": "좌측", "좌": "우", "우": "좌",
    "왼": "오른", "오른": "왼",
}
_LEFT_MARKERS = "lLgG左왼좌"

# A side marker as written: separators, the side, then separators and numbers (".L.001").
_MARKER = re.compile(rf"^(?P<lead>[._\- ]*)(?P<side>[A-Za-z]+|[左右]|{_KOREAN}|{_KOREAN_SHORT})(?P<trail>.*)$")

# MikuMikuDance's bone words (PMX's standard bones), as the English words detection reads;
# mmd_tools keeps them, with the side as a suffix ("ひざ.L") when it renames. Longer words
# come first: 足首 (ankle) before 足 (leg). 手捩, the hand's twist, turns the forearm, the
# segment that ひじ (the elbow) begins: read as that segment's twist, as 腕捩 is the arm's.
_JAPANESE_WORDS = {
    "足首": "Ankle", "足先": "Toe", "つま先": "Toe", "ひざ": "Knee", "膝": "Knee", "足": "Leg",
    "腕捩": "ArmTwist", "手捩": "ElbowTwist", "捩": "Twist", "ひじ": "Elbow", "肘": "Elbow", "手首": "Wrist",
    "腕": "Arm", "肩": "Shoulder", "親指": "Thumb", "人差指": "Index", "人指": "Index", "中指": "Middle",
    "薬指": "Ring", "小指": "Pinky", "指": "Finger", "先": "Tip", "手": "Hand",
}
# Limb words in other scripts, as rigs named in Chinese ("左大腿"), Korean ("허벅지.L") and Russian
# ("Бедро.L") write them, and German's ß ("Fuß"): read in any case. 足 stays MikuMikuDance's leg.
_SCRIPT_WORDS = {
    "大腿": "Thigh", "小腿": "Shin", "脚趾": "Toe", "脚": "Foot", "腳": "Foot", "上臂": "UpperArm",
    "前臂": "Forearm", "手腕": "Wrist", "锁骨": "Clavicle", "鎖骨": "Clavicle",
    "허벅지": "Thigh", "종아리": "Calf", "정강이": "Shin", "발가락": "Toe", "발": "Foot", "위팔": "UpperArm",
    "아래팔": "Forearm", "손가락": "Finger", "손목": "Wrist", "손": "Hand", "쇄골": "Clavicle",
    "бедро": "Thigh", "голень": "Shin", "стопа": "Foot", "ступня": "Foot", "предплечье": "Forearm",
    "плечо": "UpperArm", "кисть": "Hand", "палец": "Finger", "ключица": "Clavicle", "ß": "ss",
}
# Each word as written in lower case, capitalised and in capitals: one search without IGNORECASE, which
# would make every non-ASCII name's reading slower.
_WORDS_READ = {**_JAPANESE_WORDS, **{cased: english for word, english in _SCRIPT_WORDS.items()
                                     for cased in (word, word.capitalize(), word.upper()) if not cased.isascii()}}
_JAPANESE_WORD = re.compile("|".join(sorted(_WORDS_READ, key=len, reverse=True)))

# Words that start a limb bone's name; a glued side letter before one of them is a side.
# Motion capture's anatomical names are among them (CMU's "lfemur > ltibia", "lhumerus > lradius").
LIMB_WORDS = ("thigh", "upleg", "upperleg", "leg", "shin", "calf", "knee", "lowerleg", "foot", "ankle", "toe",
              "hip", "femur", "tibia", "upperarm", "uparm", "arm", "shldr", "shoulder", "collar", "clavicle",
              "forearm", "lowerarm", "elbow", "hand", "wrist", "humerus", "radius", "ulna", "bicep")


class SideName(NamedTuple):
    """A bone name split into its parts; ``side_text`` is the side marker as written. A named tuple,
    hashed and compared in C: detection's reading of names is cached by it."""

    namespace: str
    prefix: str
    base: str
    suffix: str

    @property
    def side(self) -> str | None:
        marker = (self.prefix or self.suffix).strip("._- ")
        if not marker:
            return None
        corner = _corner(marker)
        if corner is not None:  # a quadruped's corner: "FL", "rh", "fl_1"
            return _CORNER_SIDES[corner]
        return LEFT if marker[0] in _LEFT_MARKERS else RIGHT

    @property
    def name(self) -> str:
        return f"{self.namespace}{self.prefix}{self.base}{self.suffix}"

    def flipped(self) -> str | None:
        """The same name on the other side, or None for a name without a side."""
        if self.side is None:
            return None
        return f"{self.namespace}{_flip_marker(self.prefix)}{self.base}{_flip_marker(self.suffix)}"

    def twin(self, known_names: Container[str]) -> str | None:
        """The same name on the other side among ``known_names``: ``flipped``, or that name with a bracketed tag
        after it saying the side again flipped too (Skyrim's "NPC L Thigh [LThg]" and "NPC R Thigh [RThg]")."""
        flipped = self.flipped()
        if flipped is None or flipped in known_names:
            return flipped
        marker = self.prefix.strip("._- ")
        tag = _BRACKET_SIDE.search(self.base) if marker else None
        if tag is None or tag["side"] != marker:
            return None
        tagged = self._replace(base=f"{self.base[:tag.start('side')]}{_FLIP[marker]}{self.base[tag.end('side'):]}")
        flipped = tagged.flipped()
        return flipped if flipped in known_names else None


# A tag in brackets that abbreviates the name, its side first: Skyrim's "NPC L Thigh [LThg]", "NPC R Foot [Rft ]".
_BRACKET_SIDE = re.compile(r"\[(?P<side>[LR])(?=[A-Za-z])")


def _flip_marker(marker: str) -> str:
    match = _MARKER.match(marker)
    if match is None:
        return marker
    side = match["side"]
    flipped = _FLIP.get(side) or _CORNER_FLIP.get(side)
    if flipped is None:
        return marker
    return f"{match['lead']}{flipped}{match['trail']}"


def split_side(name: str, known_names: Container[str] = ()) -> SideName:
    """Split ``name`` into namespace, side prefix, base and side suffix.

    Glued prefixes (``lthigh``, ``LThigh``) are only read as sides before a limb word or
    when the other side's name is among ``known_names``: alone, ``leg`` would read as
    "l" + "eg".
    """
    split, glued = _split_alone(name)
    return next((parts for parts, other in glued if other in known_names), split)


# A name's splits at a glued side, each with the other side's name that must exist for it to hold.
Glued = tuple[tuple[SideName, str], ...]


# Planning, detection and the panel split the same names again and again, of one armature and
# of the next: what a name alone says is read once.
@functools.lru_cache(maxsize=8192)
def _split_alone(name: str) -> tuple[SideName, Glued]:
    """``split_side`` of ``name`` as far as the name alone says; for each glued side that holds only
    when the other side's name exists, also the split with it and that other name, the first to try first."""
    match = _NAMESPACE.match(name)
    namespace, rest = (match["ns"], match["rest"]) if match else ("", name)
    for pattern, is_prefix in ((_SUFFIX, False), (_PREFIX, True), (_PREFIX_WORD, True), (_SUFFIX_WORD, False),
                               (_CAMEL_PREFIX, True), (_JAPANESE_PREFIX, True), (_JAPANESE_SUFFIX, False),
                               (_KOREAN_PREFIX, True), (_KOREAN_SUFFIX, False)):
        match = pattern.match(rest)
        if match:
            if is_prefix:
                return SideName(namespace, match["side"], match["base"], ""), ()
            return SideName(namespace, "", match["base"], match["side"]), ()
    plain = SideName(namespace, "", rest, "")
    glued: list[tuple[SideName, str]] = []
    corner = _CORNER.match(rest)
    if corner and corner["base"].lower().startswith(_CORNER_BASES):
        side, base = corner["side"], corner["base"]
        glued.append((SideName(namespace, side, base, ""), f"{namespace}{_flip_marker(side)}{base}"))
    corner = _CORNER_SUFFIX.match(rest)
    if corner and corner["base"].lower().startswith(_CORNER_BASES):
        side, base = corner["side"], corner["base"]
        glued.append((SideName(namespace, "", base, side), f"{namespace}{base}{_flip_marker(side)}"))
    # The limb's letter stays in the base: "RL_thigh" is side R, base "L_thigh", and mirrors to "LL_thigh".
    tagged = _LIMB_TAG.match(rest)
    if tagged:
        side, base = tagged["side"], tagged["base"]
        glued.append((SideName(namespace, side, base, ""), f"{namespace}{_FLIP[side]}{base}"))
    if glued:
        return plain, tuple(glued)
    match = _GLUED_PREFIX.match(rest) or _CAPITAL_PREFIX.match(rest)
    if match and match["base"].lower().startswith(LIMB_WORDS):
        return SideName(namespace, match["side"], match["base"], ""), ()
    suffix = _CAPITAL_SUFFIX.match(rest)
    if suffix:
        side, base = suffix["side"], suffix["base"]
        split = SideName(namespace, "", base, side)
        if suffix["number"] and NOT_LETTERS.sub("", GENERATED.sub("", base, 1).lower()).startswith(LIMB_WORDS):
            return split, ()
        return plain, ((split, f"{namespace}{base}{_flip_marker(side)}"),)
    korean = _korean_syllable(namespace, rest)
    if korean is not None:
        return korean
    suffix = _FRENCH_SUFFIX.match(rest)
    if suffix:
        side, base = suffix["side"], suffix["base"]
        return plain, ((SideName(namespace, "", base, side), f"{namespace}{base}{_flip_marker(side)}"),)
    if match:
        side, base = match["side"], match["base"]
        return plain, ((SideName(namespace, side, base, ""), f"{namespace}{_FLIP[side]}{base}"),)
    return plain, ()


def _korean_syllable(namespace: str, rest: str) -> tuple[SideName, Glued] | None:
    """``_split_alone``'s answer for a side written short in Korean, 좌 or 우, 왼 or 오른: a side before a limb
    word ("좌허벅지", "왼발"), else only where the other side's name exists; None where there is none."""
    plain = SideName(namespace, "", rest, "")
    match = _KOREAN_SYLLABLE_PREFIX.match(rest)
    if match:
        side, base = match["side"], match["base"]
        split = SideName(namespace, side, base, "")
        if english(base).lower().startswith(LIMB_WORDS):
            return split, ()
        return plain, ((split, f"{namespace}{_flip_marker(side)}{base}"),)
    match = _KOREAN_SYLLABLE_SUFFIX.match(rest)
    if match:
        side, base = match["side"], match["base"]
        return plain, ((SideName(namespace, "", base, side), f"{namespace}{base}{_flip_marker(side)}"),)
    return None


def english(text: str) -> str:
    """``text`` with MikuMikuDance's Japanese bone words and other scripts' limb words in English
    ("左ひざ" -> "左Knee", "Бедро" -> "Thigh") and full-width letters and digits made plain ("ＩＫ" ->
    "IK"); other text as it is."""
    if text.isascii():
        return text
    return _JAPANESE_WORD.sub(lambda found: _WORDS_READ[found.group()], unicodedata.normalize("NFKC", text))


NOT_LETTERS = re.compile(r"[^a-z]")
_LEAF_END = "_end"


def flip_name(name: str, known_names: Container[str] = ()) -> str | None:
    """The mirrored name of ``name`` (``thigh.L`` -> ``thigh.R``), None without a side.

    Exporters that number every bone give the two sides different numbers
    (``b_LeftLeg02_016``, ``b_RightLeg02_020``): when the mirrored name is not among
    ``known_names`` but exactly one known name differs from it only by that number,
    that name is the mirror.
    """
    parts = split_side(name, known_names)
    flipped = parts.twin(known_names) or parts.flipped()
    if flipped is None and name[-len(_LEAF_END):].lower() == _LEAF_END and len(name) > len(_LEAF_END):
        # A leaf bone an exporter added below a bone ("shin.L_end": Blender's FBX exporter's, and glTF files
        # converted from such FBX files) mirrors as that bone does.
        bone = flip_name(name[:-len(_LEAF_END)], known_names)
        return None if bone is None else bone + name[-len(_LEAF_END):]
    # A name at Blender's limit may grow when flipped ("Left" to "Right"): Blender cuts the other side's name
    # (its Symmetrize does), so that is the name to look for. Under 16 characters no name can be too long.
    if flipped is not None and len(flipped) > MAX_NAME_BYTES // 4 and len(flipped.encode("utf-8")) > MAX_NAME_BYTES:
        flipped = clipped(flipped, MAX_NAME_BYTES)
    if flipped is None or flipped in known_names:
        return flipped
    # Only names that can be listed are searched; a bare Container can only be asked.
    listed: Iterable[str] = known_names if isinstance(known_names, Iterable) else ()
    if len(name) > MAX_NAME_BYTES // 4 and len(name.encode("utf-8")) > MAX_NAME_BYTES - 4:
        # ``name`` may be the one cut ("Right" from "Left"): the mirror is the name it was cut from.
        longer = [known for known in listed if known.startswith(flipped) and known != flipped
                  and flip_name(known) == name]
        if len(longer) == 1:
            return longer[0]
    match = INDEXED.match(flipped)
    if match is None:
        return flipped
    stem = match["stem"]
    numbered = [known for known in listed if (found := INDEXED.match(known)) is not None and found["stem"] == stem]
    return numbered[0] if len(numbered) == 1 else flipped


# Blender keeps names in 64-byte buffers with a closing NUL: a longer name is cut,
# mid-character if need be, and then no longer matches what was planned.
MAX_NAME_BYTES = 63


def clipped(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, never inside a character."""
    return text.encode("utf-8")[:max(limit, 0)].decode("utf-8", "ignore")


def fitted(stem: str, ending: str) -> str:
    """``stem + ending`` within Blender's name limit: the stem gives way, the ending is kept."""
    whole = stem + ending
    if len(whole) <= MAX_NAME_BYTES and whole.isascii():  # as most names are: a byte a character
        return whole
    return clipped(stem, MAX_NAME_BYTES - len(ending.encode("utf-8"))) + ending


class NamesInUse:
    """The bone names a limb's new names must not take: the armature's and those other limbs of the
    build made (``sources``, asked, never copied: a copy per limb grows with the armature times the
    limbs), and the names this limb has made so far (``add``)."""

    def __init__(self, *sources: Container[str]) -> None:
        self._sources = sources
        self._new: set[str] = set()

    def __contains__(self, name: object) -> bool:
        if name in self._new:
            return True
        for source in self._sources:  # a loop, not any(): asked for every new name of every limb
            if name in source:
                return True
        return False

    def add(self, name: str) -> None:
        self._new.add(name)


def unique_name(stem: str, tag: str, suffix: str, taken: Container[str]) -> str:
    """``stem + tag + suffix`` within Blender's name limit and not in ``taken``.

    A clash gets a number after the tag (``foot_IK2.L``); a long stem gives way, so the
    tag and the side suffix stay readable.
    """
    number = 1
    while True:
        candidate = fitted(stem, f"{tag}{number if number > 1 else ''}{suffix}")
        if candidate not in taken:
            return candidate
        number += 1


def derived_name(name: str, tag: str, taken: Container[str], known_names: Container[str] = ()) -> str:
    """A new bone name made from ``name`` and ``tag`` that is not in ``taken``.

    Never returns a taken name, so an existing bone is never overwritten: a clash
    gets a number after the tag, still before the side suffix.
    """
    # As unique_name's first try: a new bone's name is almost always free, and short enough.
    alone, glued = _first_tries(name, tag)
    first = next((tried for tried, other in glued if other in known_names), alone)
    if first and first not in taken:
        return first
    parts = split_side(name, known_names)
    return unique_name(parts.namespace + parts.prefix + parts.base, f"_{tag}", parts.suffix, taken)


@functools.lru_cache(maxsize=8192)
def _first_tries(name: str, tag: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``derived_name``'s first try for ``name`` split as it alone says, and split at each glued side (for
    when the other side's name, given with it, exists: ``split_side``); "" where that try is too long or not
    ASCII, so ``unique_name`` fits it. Planning names a few bones after each chain bone, of one
    armature and of the next."""
    split, glued = _split_alone(name)

    def first(parts: SideName) -> str:
        tried = f"{parts.namespace}{parts.prefix}{parts.base}_{tag}{parts.suffix}"
        return tried if len(tried) <= MAX_NAME_BYTES and tried.isascii() else ""

    return first(split), tuple((first(parts), other) for parts, other in glued)


_ARM_WORDS = ("arm", "elbow", "hand", "wrist", "shoulder", "shldr", "clavicle", "collar", "humerus", "radius", "ulna",
              "bicep")
_LEG_WORDS = ("leg", "thigh", "shin", "calf", "knee", "foot", "ankle", "toe", "femur", "tibia")


def limb_kind(names: Sequence[str]) -> str | None:
    """'ARM' or 'LEG' when the chain's names say so unambiguously, else None.

    Only the bases count: a namespace such as ``Armature|`` must not make a leg an arm.
    """
    return _kind_of(tuple(names))


# Planning reads the kind of every limb it plans, of one armature and of the next: the names alone say it.
@functools.lru_cache(maxsize=4096)
def _kind_of(names: tuple[str, ...]) -> str | None:
    text = " ".join(english(split_side(name).base) for name in names).lower()
    arm = any(word in text for word in _ARM_WORDS)
    leg = any(word in text for word in _LEG_WORDS)
    if arm == leg:
        return None
    return "ARM" if arm else "LEG"
