"""Limbs found on bones that follow others wholly (a game rig's deform bones copying its controls'
transforms): the limb a rigger means is the chain they follow."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .detect_result import DetectedLimb
from .detect_words import EXTREMITY_WORD
from .model import Skeleton
from .notes import WarningNote, warning


def on_followed(skeleton: Skeleton, found: list[DetectedLimb], follows: Mapping[str, str],
                generated: Callable[[str], bool], own_end: Callable[[str, str], str | None],
                ) -> tuple[list[DetectedLimb], list[str]]:
    """``found`` with each limb whose every chain bone follows a bone (``follows``: bone to the bone
    whose transforms it copies) moved onto the bones followed, when they make a chain as its own do
    and none is a generated rig's helper (``generated``: an MCH- or ORG- bone, its own rig's to drive);
    each limb once. An IK on the followers would turn them away from the controls that pose them, and
    those controls would move nothing while it is on. The limb's foot or hand is the one its own follows
    (``_foot``), or the chain followed's own (``own_end``: the foot or hand detection finds below a bone, for a
    kind of limb), so the control foot is rigged. Returns the limbs and a note for each limb moved, and a
    warning where the followers' own foot would stay behind."""
    moved: dict[tuple[str, ...], DetectedLimb] = {}
    sure: set[tuple[str, ...]] = set()
    notes: list[str] = []
    for limb in found:
        if not all(bone in follows for bone in limb.chain):  # from its first bone that follows none, asked no more
            continue
        chain = tuple(follows[bone] for bone in limb.chain)
        if not _links(skeleton, chain) or set(chain) & set(limb.chain) or any(generated(bone) for bone in chain):
            continue
        extremity, note, warned = _foot(skeleton, limb, chain, follows, generated, own_end)
        moved[limb.chain] = _moved(limb, chain, extremity, follows)
        if extremity is not None and skeleton[extremity].parent != chain[-1] and extremity in follows.values():
            sure.add(chain)  # a foot control outside the chain that the followers' own foot follows
        notes.append(f"'{limb.last}' follows '{chain[-1]}' by its Copy Transforms, so the {limb.label} is the "
                     f"chain it follows, {' > '.join(chain)}{note}")
        notes += [warned] if warned else []
    if not moved:
        return found, notes
    limbs: dict[tuple[str, ...], DetectedLimb] = {}
    for limb in found:  # a chain found itself first, over the same chain reached through its followers
        if limb.chain not in moved:
            limbs.setdefault(limb.chain, limb)
    for limb in moved.values():
        if limb.chain in sure:  # over the chain found itself, whose own foot the body's does not follow
            limbs[limb.chain] = limb
        else:
            limbs.setdefault(limb.chain, limb)
    return list(limbs.values()), notes


def _foot(skeleton: Skeleton, limb: DetectedLimb, chain: tuple[str, ...], follows: Mapping[str, str],
          generated: Callable[[str], bool], own_end: Callable[[str, str], str | None],
          ) -> tuple[str | None, str, WarningNote | None]:
    """The foot or hand to rig for ``limb`` moved onto ``chain``, the rest of its note and a warning: the bone
    its own foot follows (below the chain, or a foot control of its own outside it, an Unreal-like
    ``ik_foot``); where its own follows none, the chain's foot, and where the chain has none, its own."""
    last, word = chain[-1], EXTREMITY_WORD[limb.kind]
    own = limb.extremity or _twin(skeleton, own_end(last, limb.kind), follows)
    followed = follows.get(own or "")
    if followed is not None and followed not in chain and not generated(followed):
        if skeleton[followed].parent == last:
            return followed, "", None
        return followed, (f"; '{own}' follows '{followed}', not below '{last}', so the {word} rigged is "
                          f"'{followed}', which copies the handle's clone while IK is on"), None
    extremity = _counterpart(skeleton, own, last) or own_end(last, limb.kind)
    if extremity in follows:  # a follower of its own is no control
        extremity = None
    if own is None or own == extremity:
        return extremity, "", None
    if extremity is None:
        return own, (f"; '{own}' follows no bone there and '{last}' has no {word} below it, so the {word} rigged "
                     f"is '{own}' itself, which copies the handle's clone while IK is on"), None
    if skeleton.is_below(own, extremity):
        return extremity, "", None
    parent = skeleton[own].parent
    if parent == limb.last:
        return extremity, (f"; '{own}' follows no bone there, so the {word} rigged is '{extremity}', below "
                           f"'{last}', and '{own}' turns with '{limb.last}', not with the handle (a Copy "
                           f"Transforms of '{extremity}' on it, as its chain has, makes it follow)"), None
    hangs = f"from '{parent}'" if parent else "from no bone"
    return extremity, "", warning(
        f"'{own}' follows no bone and hangs {hangs}, not from the {limb.label}: it stays there as the {limb.label} "
        f"moves; a Copy "
        f"Transforms of '{extremity}' on it makes it follow the handle (the {word} rigged is '{extremity}', "
        f"below '{last}')")


def _twin(skeleton: Skeleton, extremity: str | None, follows: Mapping[str, str]) -> str | None:
    """The one other bone at ``extremity``'s rest, head and tail, that is no bone of the chain followed's:
    the deform foot made from that control foot, wherever it hangs."""
    if extremity is None:
        return None
    own = skeleton[extremity]
    near = 1e-4 * max(own.length, 1e-9)
    alike = [bone.name for bone in skeleton.bones.values() if bone.name != extremity
             and not skeleton.is_below(bone.name, extremity)
             and (bone.head - own.head).length <= near and (bone.tail - own.tail).length <= near]
    return alike[0] if len(alike) == 1 else None


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
