"""Bone names: sides, mirrored names and the names of the bones IK Rigger creates.

A name is read as ``namespace + side prefix + base + side suffix``:
``mixamorig:LeftUpLeg`` is namespace ``mixamorig:``, prefix ``Left``, base ``UpLeg``;
``thigh.L`` is base ``thigh`` with suffix ``.L``; ``L_arm`` has the prefix ``L_``.
Derived names put their tag between the base and the side suffix so they keep the
side where Blender's own X-mirror tools look for it (``foot_IK.L``).
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

LEFT = "L"
RIGHT = "R"

# Tags for the bones IK Rigger creates; one place so detection, removal and
# the panel agree on what a made bone is called.
TAG_HANDLE = "IK"
TAG_POLE = "IK_pole"
TAG_CLONE = "IK_clone"
TAG_ORIGIN = "origin"
TAG_HIP = "root"

COLLECTION_CONTROLS = "IK Controls"
COLLECTION_MECHANISM = "IK Mechanism"
COLLECTION_CHAIN = "IK Chain"

_SUFFIX = re.compile(r"^(?P<base>.+?)(?P<side>[._\- ](?:L|R|l|r|left|right|Left|Right|LEFT|RIGHT))$")
_SUFFIX_WORD = re.compile(r"^(?P<base>.+?[a-z0-9])(?P<side>Left|Right)$")
_PREFIX = re.compile(r"^(?P<side>(?:L|R|l|r|left|right|Left|Right|LEFT|RIGHT)[._\- ])(?P<base>.+)$")
_PREFIX_WORD = re.compile(r"^(?P<side>Left|Right|left|right|LEFT|RIGHT)(?P<base>[A-Z_0-9].*)$")
_SHORT_PREFIX = re.compile(r"^(?P<side>[lr])(?P<base>[a-z].*)$")
_NAMESPACE = re.compile(r"^(?P<ns>[^:]*:)(?P<rest>.+)$")

_FLIP = {
    "L": "R", "R": "L", "l": "r", "r": "l",
    "left": "right", "right": "left", "Left": "Right", "Right": "Left",
    "LEFT": "RIGHT", "RIGHT": "LEFT",
}


@dataclass(frozen=True)
class SideName:
    """A bone name split into its parts; ``side_text`` is the side marker as written."""

    namespace: str
    prefix: str
    base: str
    suffix: str

    @property
    def side(self) -> str | None:
        marker = (self.prefix or self.suffix).strip("._- ")
        if not marker:
            return None
        return LEFT if marker[0] in "lL" else RIGHT

    @property
    def name(self) -> str:
        return f"{self.namespace}{self.prefix}{self.base}{self.suffix}"

    def flipped(self) -> str | None:
        """The same name on the other side, or None for a name without a side."""
        if self.side is None:
            return None
        return f"{self.namespace}{_flip_marker(self.prefix)}{self.base}{_flip_marker(self.suffix)}"

    def tagged(self, tag: str) -> str:
        """The name with ``_tag`` after the base, side marker kept in place."""
        return f"{self.namespace}{self.prefix}{self.base}_{tag}{self.suffix}"


def _flip_marker(marker: str) -> str:
    if not marker:
        return marker
    for text, other in sorted(_FLIP.items(), key=lambda item: -len(item[0])):
        stripped = marker.strip("._- ")
        if stripped == text:
            return marker.replace(text, other, 1)
    return marker


def split_side(name: str, known_names: Container[str] = ()) -> SideName:
    """Split ``name`` into namespace, side prefix, base and side suffix.

    Short lowercase prefixes (``lthigh``) are only read as sides when the other
    side's name is among ``known_names``: alone, ``leg`` would read as "l" + "eg".
    """
    namespace, rest = "", name
    match = _NAMESPACE.match(name)
    if match:
        namespace, rest = match["ns"], match["rest"]
    for pattern, is_prefix in ((_SUFFIX, False), (_PREFIX, True), (_PREFIX_WORD, True), (_SUFFIX_WORD, False)):
        match = pattern.match(rest)
        if match:
            if is_prefix:
                return SideName(namespace, match["side"], match["base"], "")
            return SideName(namespace, "", match["base"], match["side"])
    match = _SHORT_PREFIX.match(rest)
    if match:
        other = f"{namespace}{_FLIP[match['side']]}{match['base']}"
        if other in known_names:
            return SideName(namespace, match["side"], match["base"], "")
    return SideName(namespace, "", rest, "")


def flip_name(name: str, known_names: Container[str] = ()) -> str | None:
    """The mirrored name of ``name`` (``thigh.L`` -> ``thigh.R``), None without a side."""
    return split_side(name, known_names).flipped()


def derived_name(name: str, tag: str, taken: Container[str], known_names: Container[str] = ()) -> str:
    """A new bone name made from ``name`` and ``tag`` that is not in ``taken``.

    Never returns a taken name, so an existing bone is never overwritten: a clash
    gets a number after the tag, still before the side suffix.
    """
    parts = split_side(name, known_names)
    candidate = parts.tagged(tag)
    number = 2
    while candidate in taken:
        candidate = parts.tagged(f"{tag}{number}")
        number += 1
    return candidate


_ARM_WORDS = ("arm", "elbow", "hand", "wrist", "shoulder", "shldr", "clavicle", "collar")
_LEG_WORDS = ("leg", "thigh", "shin", "calf", "knee", "foot", "ankle", "toe")


def limb_kind(names: list[str]) -> str | None:
    """'ARM' or 'LEG' when the chain's names say so unambiguously, else None."""
    text = " ".join(names).lower()
    arm = any(word in text for word in _ARM_WORDS)
    leg = any(word in text for word in _LEG_WORDS)
    if arm == leg:
        return None
    return "ARM" if arm else "LEG"
