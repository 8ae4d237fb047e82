"""What detection finds: the limbs, the bones it skipped and why, and how a report reads them."""

from __future__ import annotations

from dataclasses import dataclass

from .detect_words import EXTREMITY_WORD, KIND_WORD, POSITION_WORD, SIDE_WORD


@dataclass(frozen=True)
class DetectedLimb:
    """A leg or an arm found in the skeleton, ready to be rigged."""

    kind: str  # LEG or ARM
    side: str | None  # naming.LEFT, naming.RIGHT or None
    chain: tuple[str, ...]  # root first: (thigh, shin), (upper arm, forearm) or (thigh, shin, foot)
    extremity: str | None  # foot, hand or toe, if found
    position: str | None = None  # FRONT, MID_FRONT, MID_HIND or HIND: which pair of an animal's legs the names say
    # Chain bones that are the second half of a segment split in two (DAZ's ThighTwist): IK keeps them in line.
    halves: tuple[str, ...] = ()
    # A chain bone's tail lies far from its next joint, its length fitting (an importer's guess of
    # its direction): IK carries that tail, not the joint, to the handle (see Fix Bone Orientation).
    tails_elsewhere: bool = False
    # The number every bone of the chain carries when a many-legged body numbers its pairs
    # (``thigh_03.L > shin_03.L``), or the letter it tags them with (``leg_a_1_l``: "a"), which tells the legs
    # of one side apart; None otherwise.
    pair: int | str | None = None

    @property
    def last(self) -> str:
        return self.chain[-1]

    @property
    def label(self) -> str:
        """How a report names the limb: "left leg", "right front leg", "left leg 3"."""
        label = _label(self.kind, self.side, self.position)
        return label if self.pair is None else f"{label} {self.pair}"


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
    # It is a generated rig's ORG-, DEF- or MCH- bone, or hangs from one: that rig's own controls drive it.
    generated: bool = False
    # It is a whole leg or arm in one bone (Kenney's mini characters' leg-left), with no knee or elbow to bend.
    one_bone: bool = False


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
                word = "toe" if len(limb.chain) - len(limb.halves) > 2 else EXTREMITY_WORD[limb.kind]
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
    words = [SIDE_WORD[side]] if side else []
    if position:
        words.append(POSITION_WORD[position])
    words.append(KIND_WORD[kind])
    if side is None:
        words.append("without a side")
    return " ".join(words)
