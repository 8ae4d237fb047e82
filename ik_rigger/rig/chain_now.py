"""A rigged limb's chain as it is now: after renames, and less the bones deleted by hand.

The chain is its IK constraint's owner and the owner's ``chain_count - 1`` parents (on a hidden chain,
the bones following its FOLLOW bones). A chain bone deleted by hand leaves its children to its parent, so
the count then reaches past the chain's root into bones that were never the limb's (a leg's into the
hips): a rebuild would rig them, a removal bake the limb's motion onto them. A bone the record does not
list is the chain's own, renamed, only where it wears the chain's colour, which the build gives every
chain bone; the bones above it are not.
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
    else:
        parts.chain = [name for name in recorded if name in bones]
        parts.missing.append(f"the IK constraint on '{recorded[-1] if recorded else name}'")
    if len(parts.chain) < len(recorded):  # a bone of that name made again elsewhere is not the chain's either
        parts.gone = [name for name in recorded if name not in parts.chain]
        parts.missing.extend(f"the chain bone '{name}'" for name in parts.gone)


def _own(obj: bpy.types.Object, chain: list[str], recorded: Sequence[str]) -> list[str]:
    """``chain`` (root first) less the bones above its own: each not recorded and not in the chain's colour,
    from the root down; the IK's owner always stays."""
    pose_bones = obj.pose.bones
    start = 0
    while (start < len(chain) - 1 and chain[start] not in recorded
           and pose_bones[chain[start]].color.palette != PALETTE_CHAIN):
        start += 1
    return chain[start:]
