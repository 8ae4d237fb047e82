"""Detection's search for a limb's end: the foot or hand below the chain, or hanging from the root
in a game rig, and a game skeleton's own IK bones (see ``core.detect``)."""

from __future__ import annotations

import re

from .detect_names import Name, Names
from .detect_shape import MAX_SEGMENT_RATIO
from .detect_words import ARM, EXTREMITIES, KIND_WORD, NOT_EXTREMITY, POSITION_WORDS
from .model import Skeleton, automatic_extremity
from .naming import NOT_LETTERS

_DIGIT = re.compile(r"\d")


class Ends:
    """The skeleton's bones as their names and places make them a limb's foot or hand."""

    def __init__(self, skeleton: Skeleton, names: Names) -> None:
        self.skeleton = skeleton
        self.names = names

    def extremity(self, lower: str, kind: str) -> str | None:
        """The foot or hand below ``lower``: the child so named, else the child continuing the bone."""
        named = sorted(child.name for child in self.skeleton.children(lower)
                       if self.names[child.name].base in EXTREMITIES[kind] and not self.names[child.name].generated)
        automatic = automatic_extremity(self.skeleton, lower)
        if len(named) == 1:
            return named[0]
        if named:
            # Several feet: only the one continuing the bone is sure to be the foot.
            return automatic if automatic in named else None
        if automatic is not None:
            if kind == ARM and self._hand_palm(automatic, lower):
                return automatic  # a palm continuing the forearm is the hand
            child = self.names[automatic]
            # A child not named as the foot or hand continues the limb only if it is no helper,
            # finger, toe or limb bone of its own, and is on the same side.
            if not (child.generated or child.is_helper or child.contains(NOT_EXTREMITY[kind])
                    or child.sides != self.names[lower].sides):
                return automatic
        if kind != ARM:
            return None
        # The forearm's tail tells nothing (an import's), or points at a finger beside the hand (glTF's
        # Fortune bone shapes aim it between the thumb and the palm), and the hand is not alone below
        # it: its one palm is the hand.
        palms = [child.name for child in self.skeleton.children(lower) if self._hand_palm(child.name, lower)]
        return palms[0] if len(palms) == 1 else None

    def _own_ik_end(self, name: str, kind: str, own: Name) -> bool:
        """Whether ``name`` reads as the IK target of the limb ``own`` ends: "IK" and the limb's
        whole word (``IK_Leg.L``, ``IKBackLeg.L``), on its side, in its position (front or hind)."""
        read = self.names[name]
        rest = [word for word in read.words if word != "ik"]
        limb = [word for word in rest if word not in POSITION_WORDS]
        positions = {POSITION_WORDS[word] for word in rest if word in POSITION_WORDS}
        position = positions.pop() if len(positions) == 1 else None
        return (len(rest) < len(read.words) and limb == [KIND_WORD[kind]] and not read.generated
                and read.sides == own.sides and (position or read.position) == own.position)

    def _ik_named_end(self, name: str, kind: str, own: Name) -> bool:
        """Whether ``name`` is the foot or hand word then "IK" (Quaternius' cowboy: ``FootIK.L``, skinned,
        under the root), on the side and in the position of the limb ``own`` ends. "IK" first is a game
        skeleton's own IK bone instead (``own_ik_bone``)."""
        read = self.names[name]
        return (len(read.words) == 2 and read.words[0] in EXTREMITIES[kind] and read.words[1] == "ik"
                and not read.generated and read.sides == own.sides and read.position == own.position)

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

    def detached_extremity(self, chain: tuple[str, ...], kind: str) -> str | None:
        """The foot or hand of a game rig made for IK, which hangs from the root rather than from the
        chain (``Root > Foot.L``): the one bone so named on the chain's side, beside no other limb,
        that starts a segment's length (within the segment ratio) below the chain's last joint."""
        bones = self.skeleton
        own = self.names[chain[-1]]
        heads = [bones[name].head for name in chain]
        segment = (heads[-1] - heads[-2]).length
        words = EXTREMITIES[kind]

        def detached(name: str) -> bool:
            return (name not in chain and not bones.is_below(chain[0], name)
                    and not any(bones.is_below(name, bone) for bone in chain))

        found = [bone.name for bone in bones.bones.values()
                 if any(word in NOT_LETTERS.sub("", bone.name.lower()) for word in words)  # cheap, before reading
                 and self.names[bone.name].base in words and not self.names[bone.name].generated
                 and self.names[bone.name].sides == own.sides and self.names[bone.name].position == own.position
                 and detached(bone.name)]
        if not found:
            # Named as the limb's own IK target (Quaternius' animals: ``IKBackLeg.L``, the hoof, skinned):
            # where the game engine's IK put the foot, it is the foot.
            found = [bone.name for bone in bones.bones.values()
                     if "ik" in bone.name.lower() and detached(bone.name)
                     and (self._own_ik_end(bone.name, kind, own) or self._ik_named_end(bone.name, kind, own))]
        if len(found) != 1:
            return None
        reach = (bones[found[0]].head - heads[-1]).length
        return found[0] if segment / MAX_SEGMENT_RATIO <= reach <= segment * MAX_SEGMENT_RATIO else None
