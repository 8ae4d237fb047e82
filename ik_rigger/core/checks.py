"""Refusals read from the rest skeleton alone: chains IK cannot rig soundly, mirrors that do not mirror.

Thresholds are relative to the chain's own size, so a character modelled in
millimetres and one modelled in kilometres are judged alike.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping, Sequence

from . import naming
from .errors import RigError
from .model import BoneInfo, Skeleton

# Blender's IK constraint counts at most this many bones (its chain_count maximum);
# a longer request would be cut short without a word.
MAX_CHAIN_BONES = 255

# A chain segment (from one chain bone's head to the next, or to the last bone's
# tail) shorter than this fraction of the chain's average bone is a slip rather than
# a design: IK turns it about a lever of almost nothing, and the rest pose jumps (by
# 10 to 130 degrees with a shin under 1% of a two-bone leg). One bone twenty times
# another is fine.
SHORT_FRACTION = 0.05
# A bone itself may be short when its child starts away from its tail (the segment
# is the lever then), but not this short: its own axis, which sets its roll and the
# pole angle, would be lost in rounding.
STUB_FRACTION = 1e-3

# Chain bones that turn back on each other by more than this (meeting at under 5
# degrees) are folded back on themselves. Folded a fraction of a degree tighter, a
# chain reads as straight, and pre-bending a straight chain unfolds it (a 180-degree
# flip at rest): this close, rounding would decide.
FOLDED_DEGREES = 175.0


def check_chain(skeleton: Skeleton, chain: Sequence[str]) -> None:
    """Refuse a chain whose rest shape would make a broken IK rig, naming the bone and the fix.

    ``chain`` is root first, as ``plan.chain_ending_at`` gives it. The joints are the
    chain bones' heads and the last bone's tail, as IK Rigger plans them.
    """
    found = skeleton.bones
    bones = [found[name] for name in chain]
    heads = [bone.head for bone in bones]
    last = bones[-1]
    gaps = [b - a for a, b in zip(heads, heads[1:])]
    gaps.append(last.tail - last.head)
    # Each length measured once: every limb of a build is checked.
    segments = [gap.length for gap in gaps]
    # The last bone's own length is its segment's: both are its tail less its head.
    lengths = [(bone.tail - bone.head).length for bone in bones[:-1]]
    lengths.append(segments[-1])
    # The larger of the two sums: a chain of tiny bones spread far apart still has a size.
    average = max(sum(lengths), sum(segments)) / len(bones)
    short = SHORT_FRACTION * average
    # Most chains have no bone nor segment this short (``STUB_FRACTION`` is shorter still): nothing to look
    # for. Asked as "all longer", so that a length that is no number (NaN) is looked at as before.
    if not (min(lengths) > short and min(segments) > short):
        _check_lengths(chain, bones, lengths, segments, average)
    for index in range(1, len(chain)):
        previous, name = chain[index - 1], chain[index]
        between = 180.0 - math.degrees(gaps[index - 1].angle(gaps[index]))
        if between < 180.0 - FOLDED_DEGREES:
            raise RigError(
                f"turns back along '{previous}' ({between:.1f} degrees between them): the chain is folded back "
                "on itself, and IK cannot tell which way it bends", bone=name,
                hint=f"In Edit Mode, open the joint between '{previous}' and '{name}' so the two bones point "
                "apart, then try again.")
    reach = (last.tail - heads[0]).length
    if reach <= short:
        raise RigError(
            f"ends where the chain {chain[0]} > {chain[-1]} starts ({reach:.3g} apart), so IK has no line to "
            "bend it about", bone=chain[-1],
            hint=f"In Edit Mode, move the joints so the tail of '{chain[-1]}' lies away from the head of "
            f"'{chain[0]}', then try again.")


def _check_lengths(chain: Sequence[str], bones: list[BoneInfo], lengths: list[float], segments: list[float],
                   average: float) -> None:
    """Refuse the first chain bone too short for IK, or starting where the one before it does."""
    short = SHORT_FRACTION * average
    stub = STUB_FRACTION * average
    for index, bone in enumerate(bones):
        length, segment = lengths[index], segments[index]
        if length <= stub or (length <= short and segment <= short):
            raise RigError(
                f"is {length:.3g} long, too short for IK next to the chain's other bones "
                f"({average:.3g} on average)", bone=bone.name,
                hint="In Edit Mode, move its tail away from its head to give it a real length, then try again.")
        if segment <= short:
            # Only an inner bone gets here: the last one's segment is its own length.
            name = chain[index + 1]
            raise RigError(
                f"starts where '{bone.name}' starts ({segment:.3g} apart), so the chain has no joint between them",
                bone=name, hint=f"In Edit Mode, move the head of '{name}' to the tail of '{bone.name}', then try "
                "again.")


def check_mirrored(chain: Sequence[str], extremity: str | None, other_chain: Sequence[str],
                   other_extremity: str | None, names: Container[str]) -> None:
    """Refuse Both Sides when the other side is not, bone for bone, the mirror of ``chain``.

    ``other_chain`` is the chain of the same length ending at the mirror of ``chain``'s
    last bone (root first; shorter when that bone has too few parents), and the
    extremities are the ones each side's build would take; ``names`` are the armature's
    bone names. A bone without a side stands for itself.
    """
    wanted = [naming.flip_name(name, names) or name for name in chain]
    found: list[str | None] = [None] * (len(chain) - len(other_chain)) + list(other_chain)
    # From the last bone up: the first difference is a bone with the wrong parent.
    for index in range(len(chain) - 2, -1, -1):
        if found[index] == wanted[index]:
            continue
        child, want, got = wanted[index + 1], wanted[index], found[index]
        mirror = " > ".join(wanted)
        if want not in names:
            raise RigError(
                f"is missing, so the other side's chain would be {' > '.join(other_chain)} instead of {mirror}, "
                f"the mirror of {' > '.join(chain)}", bone=want,
                hint=f"Add '{want}' as the parent of '{child}', mirroring '{chain[index]}', or turn Both Sides off.")
        parent = f"is parented to '{got}'" if got else "has no parent"
        own = chain[index]
        if got and want == own and naming.split_side(own, names).side is None:
            # The chain's bone says no side, so it stands for itself on both sides: a bone both share (a spine's),
            # or one side's renamed or named without its side, whose mirror is then a name it lacks; the latter
            # surely where the other side's bone says its side and no bone has the mirror of that name.
            as_got = naming.flip_name(got, names)
            renamed = (f"Give '{own}' the name of its side, '{as_got}' (the mirror of '{got}'), so the two sides' "
                       "names mirror" if as_got else f"Give '{own}' a name that says its side, as '{got}' does")
            if as_got and as_got not in names:
                hint = f"{renamed}; or turn Both Sides off and build each side alone."
            else:
                hint = (f"If '{own}' is one side's bone: {renamed[0].lower()}{renamed[1:]}. If both sides share it: "
                        f"parent '{child}' to it. Or turn Both Sides off.")
            raise RigError(f"{parent} where '{chain[index + 1]}' is parented to '{own}', whose name says no side, so "
                           f"the other side's chain is not {mirror}", bone=child, hint=hint)
        raise RigError(
            f"{parent} where '{chain[index + 1]}' is parented to '{chain[index]}', so the other side's chain is "
            f"not {mirror}", bone=child,
            hint=f"Parent '{child}' to '{want}', mirroring the other side, or turn Both Sides off.")
    want_extremity = (naming.flip_name(extremity, names) or extremity) if extremity else None
    last = wanted[-1]
    if want_extremity is not None and want_extremity not in names:
        raise RigError(f"is missing, so the chain ending at '{last}' has no extremity mirroring '{extremity}'",
                       bone=want_extremity, hint=f"Add '{want_extremity}' below '{last}', or set the extremity to "
                       "none, or turn Both Sides off.")
    if other_extremity != want_extremity:
        mine = f"'{extremity}'" if extremity else "none"
        theirs = f"'{other_extremity}'" if other_extremity else "none"
        raise RigError(
            f"its extremity would be {theirs}, where the other side's is {mine}", bone=last,
            hint="Make the two feet or hands mirror each other (names, parents and where they start), or "
            "pick the extremity by name, or turn Both Sides off.")


# The arguments of the API's calls that name bones: one bone, or several (a list of names, of requests).
_ONE_BONE = ("bone", "last_bone")
_MANY_BONES = ("bones", "requests", "named")


def check_bones_named(call: str, armature: str, given: Mapping[str, object], names: Container[str]) -> None:
    """Refuse an empty or blank bone name among ``given`` (a call's arguments by name) that no bone has:
    said as it is, not as a bone "''" that is not part of a limb. Changes nothing."""
    named = [given.get(key) for key in _ONE_BONE]
    for key in _MANY_BONES:
        several = given.get(key)
        if isinstance(several, Sequence) and not isinstance(several, str):
            named += [item[0] if isinstance(item, tuple) and item else item for item in several]
    for name in named:
        if isinstance(name, str) and not name.strip() and name not in names:
            what = "an empty bone name" if not name else f"a blank bone name ({name!r})"
            hint = ("Pass the name of the bone to aim, or None for the head." if call == "api.add_aim" else
                    "Pass the name of an aimed bone or of its aim target." if call == "api.remove_aim" else
                    "Pass a limb's name: the name of its chain's last bone (the shin or forearm, 'shin.L' on a "
                    "Rigify metarig), as api.limbs() lists them.")
            raise RigError(f"{call} was given {what} for the armature '{armature}'", hint=hint)
