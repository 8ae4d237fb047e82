"""Limbs found on bones that follow others wholly (a game rig's deform bones copying its controls'
transforms): the limb a rigger means is the chain they follow."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .detect_result import DetectedLimb
from .detect_words import EXTREMITY_WORD
from .model import Skeleton


def on_followed(skeleton: Skeleton, found: list[DetectedLimb], follows: Mapping[str, str],
                generated: Callable[[str], bool], own_end: Callable[[str, str], str | None],
                ) -> tuple[list[DetectedLimb], list[str]]:
    """``found`` with each limb whose every chain bone follows a bone (``follows``: bone to the bone
    whose transforms it copies) moved onto the bones followed, when they make a chain as its own do
    and none is a generated rig's helper (``generated``: an MCH- or ORG- bone, its own rig's to drive);
    each limb once. An IK on the followers would turn them away from the controls that pose them, and
    those controls would move nothing while it is on. The limb's foot or hand is the one its own follows,
    below the chain followed; where its own follows none there, the chain followed's own (``own_end``:
    the foot or hand detection finds below a bone, for a kind of limb), so the control foot is rigged.
    Returns the limbs and a note for each limb moved."""
    moved: dict[tuple[str, ...], DetectedLimb] = {}
    notes: list[str] = []
    for limb in found:
        chain = tuple(follows.get(bone, "") for bone in limb.chain)
        if (not all(chain) or not _links(skeleton, chain) or set(chain) & set(limb.chain)
                or any(generated(bone) for bone in chain)):
            continue
        extremity = follows.get(limb.extremity or "")
        if extremity is not None and skeleton[extremity].parent != chain[-1]:
            extremity = None
        note = ""
        if extremity is None:
            extremity = _counterpart(skeleton, limb.extremity, chain[-1]) or own_end(chain[-1], limb.kind)
            if extremity in follows:  # a follower of its own is no control
                extremity = None
            if extremity is not None and limb.extremity:
                note = (f"; '{limb.extremity}' follows no bone there, so the {EXTREMITY_WORD[limb.kind]} rigged is "
                        f"'{extremity}', below '{chain[-1]}', and '{limb.extremity}' turns with '{limb.last}', not "
                        f"with the handle (a Copy Transforms of '{extremity}' on it, as its chain has, makes it "
                        "follow)")
        moved[limb.chain] = _moved(limb, chain, extremity, follows)
        notes.append(f"'{limb.last}' follows '{chain[-1]}' by its Copy Transforms, so the {limb.label} is the "
                     f"chain it follows, {' > '.join(chain)}{note}")
    if not moved:
        return found, notes
    limbs: dict[tuple[str, ...], DetectedLimb] = {}
    for limb in found:  # a chain found itself first, over the same chain reached through its followers
        if limb.chain not in moved:
            limbs.setdefault(limb.chain, limb)
    for limb in moved.values():
        limbs.setdefault(limb.chain, limb)
    return list(limbs.values()), notes


def _counterpart(skeleton: Skeleton, extremity: str | None, last: str) -> str | None:
    """The one bone below ``last`` (the chain followed's last) at ``extremity``'s rest, head and tail: the
    control foot a deform foot was made from, whatever its name says."""
    if extremity is None:
        return None
    own = skeleton[extremity]
    near = 1e-4 * max(own.length, 1e-9)
    alike = [child.name for child in skeleton.children(last)
             if (child.head - own.head).length <= near and (child.tail - own.tail).length <= near]
    return alike[0] if len(alike) == 1 else None


def _links(skeleton: Skeleton, chain: tuple[str, ...]) -> bool:
    """Whether each bone of ``chain`` is its next one's parent."""
    return all(skeleton[lower].parent == upper for upper, lower in zip(chain, chain[1:]))


def _moved(limb: DetectedLimb, chain: tuple[str, ...], extremity: str | None,
           follows: Mapping[str, str]) -> DetectedLimb:
    return DetectedLimb(limb.kind, limb.side, chain, extremity, limb.position,
                        tuple(follows[bone] for bone in limb.halves), limb.tails_elsewhere, limb.pair)
