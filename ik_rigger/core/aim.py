"""Aim rigs planned as plain data: a head, a neck or a pair of eyes that looks at a target.

The seed's one-bone solver points a bone at a target. Blender's Damped Track does that
with the least turn (no twist, so a head does not tilt and an eye does not roll), but
only along one of the bone's own axes, and imported heads and eyes point anywhere (a
BVH head leans 36 degrees, a zero-length eye points up). So the aimed bone is not
tracked itself; per aimed bone:

- a *target* control stands in front of the face, along the character's front;
- a *pivot* (mechanism) at the aimed bone's head, Y axis exactly at the target, child
  of the aimed bone's parent, carries the Damped Track: at rest it already aims, so
  nothing moves;
- the aimed bone copies the pivot's turn as if the pivot were its parent: Copy Rotation
  from the pivot's local space seen in the aimed bone's own rest orientation, before
  the bone's own rotation. Its own keys still play on top, and the influence is driven
  by the ``aim`` property on the control.

Eyes share one parent target, between their own, parented to the head's parent so it
does not swim when the head turns; each eye's target is its child. A head's or neck's
target is parented to the skeleton's root.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from mathutils import Vector

from . import body, naming
from .errors import RigError
from .model import PALETTE_CLONE, PALETTE_CONTROL, ConstraintPlan, NewBone, Skeleton

KIND_HEAD = "HEAD"
KIND_NECK = "NECK"
KIND_EYES = "EYES"
KIND_BONE = "BONE"
# What the user asks to aim; AUTO reads the active bone's name, else the head.
PARTS = ("AUTO", KIND_HEAD, KIND_NECK, KIND_EYES, "ACTIVE")

ROLE_TARGET = "AIM_TARGET"
ROLE_EYES = "AIM_EYES"
ROLE_PIVOT = "AIM_PIVOT"
ROLES = (ROLE_TARGET, ROLE_EYES, ROLE_PIVOT)
# Made bones carry ``{"limb": uid, "role": role}`` like a limb's; an aim rig's uid starts
# with this, so it never matches a limb's (plain numbers).
UID_PREFIX = "aim-"

TAG_TARGET = "aim"
TAG_PIVOT = "aim_pivot"

AIM = "aim"
AIM_DESCRIPTION = ("Aim influence: 1 looks at the aim target, 0 gives back the bone's own rotation "
                   "(the unaimed pose)")
CONSTRAINT_TRACK = "IK Rigger Aim Track"
CONSTRAINT_AIM = "IK Rigger Aim"

DEFAULT_DISTANCE = 3.0  # head sizes in front of the face

# Rigify's layers: its deform, original and mechanism copies are never the bone to aim.
_LAYER_PREFIXES = ("ORG-", "DEF-", "MCH-")
_NOT_HEAD = ("top", "end", "nub", "tip", "fore", "aim", "target", "jaw")
_NOT_NECK = ("end", "nub", "aim", "target")
_NOT_EYE = ("lid", "brow", "lash", "socket", "end", "nub", "aim", "target", "track", "highlight")
# A side written as a token inside the name, where ``naming`` reads none: ``J_Adj_L_FaceEye``.
_INNER_SIDE = re.compile(r"(?<=[_.\- ])(?P<side>[LR])(?=[_.\- ])")
# Rigify's metarig names the head and neck as spine bones.
_RIGIFY_HEAD = "spine.006"
# A head whose own bones span less than this share of the body's height is degenerate
# (an imported bone of no length): the classic proportion, a head an eighth of the body, stands in.
_DEGENERATE_HEAD = 1.0 / 40.0
_HEAD_SHARE = 1.0 / 8.0
_EPSILON = 1e-9


@dataclass(frozen=True)
class AimPlan:
    """One aim rig, before anything is written to Blender."""

    kind: str
    aimed: tuple[str, ...]
    control: str  # the bone carrying the ``aim`` property
    distance: float  # armature units between each aimed bone and its target
    new_bones: tuple[NewBone, ...]
    constraints: tuple[ConstraintPlan, ...]

    def describe(self) -> str:
        lines = [f"aim {self.kind.lower()}: {', '.join(self.aimed)}, control {self.control}"]
        lines += [f"  {new.role.lower()} {new.name} " + (f"parented to {new.parent}" if new.parent else
                                                         "follows the armature itself (no parent bone)")
                  for new in self.new_bones]
        return "\n".join(lines)


@dataclass(frozen=True)
class Aimable:
    """What detection found to aim, by name."""

    head: str | None
    neck: str | None
    eyes: tuple[str, ...]


def _word(name: str) -> str:
    """A name's base in lowercase letters and digits: ``J_Bip_C_Head`` -> ``head``."""
    base = naming.split_side(name).base
    base = re.sub(r"^[Cc][_.\- ]", "", base)  # VRM's centre marker
    return re.sub(r"[^a-z0-9]", "", base.lower())


def _candidates(skeleton: Skeleton, word: str, unwanted: tuple[str, ...]) -> list[str]:
    found = []
    for name in skeleton.bones:
        if name.startswith(_LAYER_PREFIXES):
            continue
        text = _word(name)
        # Contained, not equal: "FaceEye", "NeckTwist01" and "neck_01" count too.
        if word in text and not any(token in text for token in unwanted):
            found.append(name)
    return found


def side_of(name: str) -> str | None:
    """The side a name carries, with sides written inside it too (``J_Adj_L_FaceEye``)."""
    side = naming.split_side(name).side
    if side is not None:
        return side
    match = _INNER_SIDE.search(name)
    return match["side"] if match else None


def mirror_of(name: str, known: set[str]) -> str | None:
    """The other side's bone of ``name`` among ``known``, if any."""
    flipped = naming.flip_name(name, known)
    if flipped is not None and flipped in known:
        return flipped
    match = _INNER_SIDE.search(name)
    if match is not None:
        other = "R" if match["side"] == "L" else "L"
        flipped = f"{name[:match.start()]}{other}{name[match.end():]}"
        if flipped in known:
            return flipped
    return None


def _depth(skeleton: Skeleton, name: str) -> int:
    return sum(1 for _ in skeleton.ancestors(name))


def detect(skeleton: Skeleton) -> Aimable:
    """The head, neck and eyes of a skeleton, by their names and hierarchy (None where unsure)."""
    heads = _candidates(skeleton, "head", _NOT_HEAD)
    head = min(heads, key=lambda name: (_word(name) != "head", _depth(skeleton, name), name), default=None)
    if head is None and _RIGIFY_HEAD in skeleton:
        head = _RIGIFY_HEAD
    necks = _candidates(skeleton, "neck", _NOT_NECK)
    neck = None
    if head is not None:
        # The neck nearest the head: a neck of two bones turns the head from the upper one.
        neck = next((name for name in skeleton.ancestors(head) if name in necks), None)
        if neck is None and head == _RIGIFY_HEAD:
            neck = skeleton[head].parent
    if neck is None:
        neck = max(necks, key=lambda name: (_depth(skeleton, name), name), default=None)
    return Aimable(head, neck, _eyes(skeleton, head))


def _eyes(skeleton: Skeleton, head: str | None) -> tuple[str, ...]:
    eyes = _candidates(skeleton, "eye", _NOT_EYE)
    known = set(skeleton.bones)

    def rank(name: str) -> tuple[bool, bool, str]:
        under_head = head is not None and skeleton.is_below(name, head)
        return not under_head, _word(name) != "eye", name

    pairs = []
    for name in eyes:
        if side_of(name) == naming.LEFT:
            other = mirror_of(name, known)
            if other is not None and other in eyes:
                pairs.append((name, other))
    if pairs:
        return min(pairs, key=lambda pair: rank(pair[0]))
    single = [name for name in eyes if side_of(name) is None]
    return (min(single, key=rank),) if single else ()


def choose(skeleton: Skeleton, part: str, active: str | None) -> tuple[str, tuple[str, ...]]:
    """The kind of aim rig and the bones it aims, for what the user asked."""
    if part not in PARTS:
        raise RigError(f"unknown part '{part}' to aim", hint=f"Use one of: {', '.join(PARTS)}.")
    if active is not None and active not in skeleton:
        raise RigError("is not a bone of this armature, or was made by IK Rigger", bone=active,
                       hint="Make the head, neck or an eye active.")
    found = detect(skeleton)
    if part == "ACTIVE":
        if active is None:
            raise RigError("no active bone to aim", hint="Make the bone to aim active.")
        return KIND_BONE, (active,)
    if part == "AUTO" and active is not None:
        if active in found.eyes:
            return KIND_EYES, found.eyes
        if active in _candidates(skeleton, "eye", _NOT_EYE):
            other = mirror_of(active, set(skeleton.bones))
            if other is None:
                return KIND_EYES, (active,)
            return KIND_EYES, (active, other) if side_of(active) == naming.LEFT else (other, active)
        if active == found.head:
            return KIND_HEAD, (active,)
        if active == found.neck or active in _candidates(skeleton, "neck", _NOT_NECK):
            return KIND_NECK, (active,)
        if active in _candidates(skeleton, "head", _NOT_HEAD):
            return KIND_HEAD, (active,)
    if part == KIND_EYES:
        if not found.eyes:
            raise RigError("no eyes found: no pair of bones named like eye.L and eye.R",
                           hint="Make one eye active and aim the Active Bone, or rename the eyes eye.L and eye.R.")
        return KIND_EYES, found.eyes
    if part == KIND_NECK:
        if found.neck is None:
            raise RigError("no neck found: no bone named like 'neck'",
                           hint="Make the neck active and aim the Active Bone.")
        return KIND_NECK, (found.neck,)
    if found.head is None:
        raise RigError("no head found: no bone named like 'head'",
                       hint="Make the head bone active and aim the Active Bone, or rename it 'head'.")
    return KIND_HEAD, (found.head,)


def _height(skeleton: Skeleton, up: Vector) -> float:
    heights = [point.dot(up) for bone in skeleton.bones.values() for point in (bone.head, bone.tail)]
    return max(heights) - min(heights) if heights else 0.0


def _extent(skeleton: Skeleton, name: str) -> float:
    """How far the bone and everything below it reach from its head."""
    origin = skeleton[name].head
    return max((point - origin).length for bone in skeleton.bones.values() if skeleton.is_below(bone.name, name)
               for point in (bone.head, bone.tail))


def head_size(skeleton: Skeleton, kind: str, aimed: tuple[str, ...], up: Vector) -> float:
    """The size of the head the aim rig serves, in armature units."""
    found = detect(skeleton)
    head: str | None = aimed[0]
    if kind == KIND_EYES:
        parent = skeleton[aimed[0]].parent
        head = parent if parent is not None else found.head
    elif kind != KIND_HEAD:
        # A neck or any other bone: the head it serves sets the scale, else its own length.
        head = found.head
    height = _height(skeleton, up)
    size = _extent(skeleton, head) if head is not None else skeleton[aimed[0]].length
    if size < _DEGENERATE_HEAD * height:
        size = _HEAD_SHARE * height
    if size < _EPSILON:
        raise RigError("has no size to place an aim target by", bone=aimed[0],
                       hint="Give the bone a length in Edit mode.")
    return size


def _root(skeleton: Skeleton, name: str) -> str | None:
    *_, top = (name, *skeleton.ancestors(name))
    return top if top != name else None


def plan_aim(skeleton: Skeleton, kind: str, aimed: tuple[str, ...], taken: set[str],
             distance: float = DEFAULT_DISTANCE, reuse: dict[tuple[str, str], str] | None = None) -> AimPlan:
    """Plan the aim rig of ``aimed`` (one bone, or two eyes left first).

    ``distance`` is in head sizes; ``taken`` holds every name a new bone must not take;
    ``reuse`` maps (role, aimed bone, '' for the eyes' shared target) to a made bone an
    earlier aim rig of the same bones has, which keeps its name.
    """
    if not 0.0 < distance < math.inf:  # NaN too
        raise RigError(f"the aim distance must be a finite number above 0 (got {distance})", bone=aimed[0],
                       hint="Use a distance in head sizes, such as 3.")
    if len(set(aimed)) != len(aimed) or not aimed:
        raise RigError("the bones to aim must be distinct", bone=", ".join(aimed))
    reuse = reuse or {}
    known = set(skeleton.bones)
    taken = set(taken)
    front, up = body.facing(skeleton)
    size = head_size(skeleton, kind, aimed, up)
    reach = distance * size

    def name_for(role: str, owner: str, tag: str) -> str:
        name = reuse.get((role, owner))
        if name is None:
            name = naming.derived_name(owner, tag, taken, known)
        taken.add(name)
        return name

    bones: list[NewBone] = []
    constraints: list[ConstraintPlan] = []
    shared = None
    # What the targets follow: eyes' the head's parent, so they stay put when the head
    # turns; a head's or neck's the root, so they stay put when the spine bends.
    anchor = _root(skeleton, aimed[0])
    if kind == KIND_EYES:
        head = skeleton[aimed[0]].parent
        if head is not None and skeleton[head].parent is not None:
            anchor = skeleton[head].parent
    if kind == KIND_EYES and len(aimed) > 1:
        middle = sum((skeleton[eye].head for eye in aimed), Vector((0.0, 0.0, 0.0))) / len(aimed)
        parts = naming.split_side(aimed[0], known)
        stem = parts.namespace + (parts.base if parts.prefix or parts.suffix else _unsided(aimed[0]))
        shared = reuse.get((ROLE_EYES, "")) or naming.unique_name(stem, f"_{TAG_TARGET}", "", taken)
        taken.add(shared)
        at = middle + front * reach
        bones.append(NewBone(ROLE_EYES, shared, at, at + up * (0.3 * size), front, anchor, PALETTE_CONTROL,
                             naming.COLLECTION_CONTROLS))
    for bone_name in aimed:
        bone = skeleton[bone_name]
        target = name_for(ROLE_TARGET, bone_name, TAG_TARGET)
        pivot = name_for(ROLE_PIVOT, bone_name, TAG_PIVOT)
        at = bone.head + front * reach
        target_parent = shared if shared is not None else anchor
        bones.append(NewBone(ROLE_TARGET, target, at, at + up * (0.15 * size if shared else 0.25 * size), front,
                             target_parent, PALETTE_CONTROL, naming.COLLECTION_CONTROLS))
        length = max(bone.length, 0.25 * size)
        bones.append(NewBone(ROLE_PIVOT, pivot, bone.head, bone.head + front * length, up, bone.parent,
                             PALETTE_CLONE, naming.COLLECTION_MECHANISM))
        constraints.append(ConstraintPlan(pivot, "DAMPED_TRACK", CONSTRAINT_TRACK, target,
                                          (("track_axis", "TRACK_Y"), ("head_tail", 0.0))))
        constraints.append(ConstraintPlan(bone_name, "COPY_ROTATION", CONSTRAINT_AIM, pivot,
                                          (("owner_space", "LOCAL"), ("target_space", "LOCAL_OWNER_ORIENT"),
                                           ("mix_mode", "BEFORE"))))
    control = shared if shared is not None else bones[0].name
    return AimPlan(kind, aimed, control, reach, tuple(bones), tuple(constraints))


def _unsided(name: str) -> str:
    """A name with its inner side token taken out: ``J_Adj_L_FaceEye`` -> ``J_Adj_FaceEye``."""
    return _INNER_SIDE.sub("", name).replace("__", "_")
