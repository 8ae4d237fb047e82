"""A rigged limb's chain as it is now: after renames, and less the bones deleted by hand.

The chain is its IK constraint's owner and the owner's ``chain_count - 1`` parents (on a hidden chain,
the bones following its FOLLOW bones). A chain bone deleted by hand leaves its children to its parent, so
the count then reaches past the chain's root into bones that were never the limb's (a leg's into the
hips): a rebuild would rig them, a removal bake the limb's motion onto them. A bone the record does not
list is the chain's own, renamed, where it wears the chain's colour, which the build gives every chain
bone; the bones above it are not. Recoloured too, it is known by what a rename leaves as it was: its
place (the chain reaches exactly as far as the record lists, each bone not recorded standing where a
recorded name no bone has now stood) and its rest (it runs to the head of the chain bone below it, as
chain bones do; a bone above a deleted one ends elsewhere).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import bpy

from ..core.model import PALETTE_CHAIN
from . import solver


def find_chain(obj: bpy.types.Object, parts: Any, owner: str | None, count: int, recorded: Sequence[str],
               name: str, hidden: bool) -> None:
    """Set ``parts.chain`` (and ``solver`` on a hidden chain) from the IK's ``owner`` and its chain ``count``
    (None: the IK constraint is gone), and ``parts.gone``, the ``recorded`` chain bones no longer in it;
    ``name``: the limb's."""
    bones = obj.data.bones
    if owner is not None:
        chain = [owner]
        bone = bones[owner]
        while bone.parent is not None and len(chain) < max(count, 1):
            bone = bone.parent
            chain.append(bone.name)
        if hidden:  # IK solves the made JOINT bones; the chain is the bones following them
            parts.solver = list(reversed(chain))
            parts.chain = solver.followers(obj, parts, tuple(recorded))
        else:
            parts.chain = _own(obj, list(reversed(chain)), recorded)
            parts.stand_in = _stand_in(obj.data.bones, list(reversed(chain)), recorded, parts.chain)
    else:
        parts.chain = [name for name in recorded if name in bones]
        parts.missing.append(f"the IK constraint on '{recorded[-1] if recorded else name}'")
    if len(parts.chain) < len(recorded):  # a bone of that name made again elsewhere is not the chain's either
        parts.gone = [name for name in recorded if name not in parts.chain]
        parts.missing.extend(f"the chain bone '{name}'" for name in parts.gone)


def _own(obj: bpy.types.Object, chain: list[str], recorded: Sequence[str]) -> list[str]:
    """``chain`` (root first) less the bones above its own: each not recorded and not in the chain's colour,
    from the root down, unless ``chain`` is the recorded one renamed (``_renamed``); the IK's owner always
    stays."""
    if _renamed(obj.data.bones, chain, recorded):
        return chain
    pose_bones = obj.pose.bones
    start = 0
    while (start < len(chain) - 1 and chain[start] not in recorded
           and pose_bones[chain[start]].color.palette != PALETTE_CHAIN):
        start += 1
    return chain[start:]


def _renamed(bones, chain: list[str], recorded: Sequence[str]) -> bool:
    """True when ``chain`` (the IK's reach, root first) is the ``recorded`` chain with bones renamed: as long,
    each bone the recorded one or, where that name is gone, a bone the record does not list that runs to the
    head of the bone below it (a bone above a deleted chain bone, which its child now hangs from, does not)."""
    standing = _standing(bones, chain, recorded)
    return bool(standing) and all(_runs_on(bones, chain, index) for index in standing)


def _stand_in(bones, chain: list[str], recorded: Sequence[str], own: list[str]) -> str | None:
    """The bone of ``chain`` that stands where a recorded chain bone, gone, stood but that its rest does not
    tell from the bone above a deleted one (it does not run to the next chain bone's head), when the chain
    ``own`` is short for it: it may be that bone renamed, recoloured and moved, or the bone above it."""
    if len(own) == len(recorded):
        return None
    return next((chain[index] for index in _standing(bones, chain, recorded) if not _runs_on(bones, chain, index)),
                None)


def _standing(bones, chain: list[str], recorded: Sequence[str]) -> list[int]:
    """Where ``chain`` holds a bone the record does not list in place of a recorded name no bone has now,
    every other bone being the recorded one (the IK's owner, last, is the chain's whatever its name); none
    where it is not so."""
    if len(chain) != len(recorded):
        return []
    listed = set(recorded)
    standing = []
    for index, (now, was) in enumerate(zip(chain[:-1], recorded[:-1])):
        if now == was:
            continue
        if was in bones or now in listed:
            return []
        standing.append(index)
    return standing


def _runs_on(bones, chain: list[str], index: int) -> bool:
    """True when chain bone ``index`` ends at the head of the one below it, as a chain's bones do."""
    length = sum(bones[name].length for name in chain)
    return (bones[chain[index]].tail_local - bones[chain[index + 1]].head_local).length <= 1e-4 * length
