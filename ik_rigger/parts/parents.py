"""What the controls follow: the guide's Origin, or a choice switched while animating.

By default the IK handle hangs from a bone above the chain's parent (the guide's
Origin), and so does a pole at the origin: for a leg, one that stands at the ground as
the guide's Origin does (see ``resolve_origin``), else the bone just above. With Parent
Switching, they hang from a hidden socket bone instead, which follows one of several
parents: the origin, the skeleton's root, the torso (the bone the chain hangs from) and a
bone the user names. The choice is the integer custom property ``parent`` on the handle's pose bone; each
candidate is an Armature constraint on the socket whose influence is the simple
expression ``parent == i``, so it plays without IK Rigger. Switching with the
*Switch Parent* operator keeps the handle and pole where they are.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mathutils import Vector

from ..core import body, geometry, naming
from ..core.errors import RigError
from ..core.model import PALETTE_MECHANISM, ConstraintPlan, Driven, NewBone, PropertyPlan, Skeleton
from ..core.switches import is_number
from .base import Draft, Item, Part, option

ROLE_SOCKET = "SOCKET"
TAG_SOCKET = "IK_parent"
PARENT = "parent"
CONSTRAINT_PARENT = "IK Rigger Parent"
SWITCH_OPERATOR = "ik_rigger.switch_parent"

PARENT_MODE_ITEMS: tuple[Item, ...] = (
    ("AUTO", "Automatic", "A bone above the chain's parent (the guide's Origin): for a leg, the nearest one at the "
             "ground (a root), never a hips bone that carries the body; none if there is none"),
    ("NONE", "None", "No parent"),
    ("BONE", "Bone", "The bone named below"),
)


@dataclass(frozen=True)
class Options:
    handle_parent_mode: str = option("AUTO", "Handle Parent", "What the IK handle follows", items=PARENT_MODE_ITEMS,
                                     per_limb=True)
    handle_parent: str = option("", "Handle Parent Bone", "The IK handle's parent when set to Bone",
                                shown_when=("handle_parent_mode", "BONE"), bone=True)
    parent_switch: bool = option(False, "Parent Switching", "The handle (and a pole at the origin) follow a choice "
                                 "animators switch and key: the origin, the root, the torso (the bone the chain "
                                 "hangs from) or the Other Parent; switching keeps them in place")
    other_parent: str = option("", "Other Parent", "One more bone the handle may follow when Parent Switching is "
                               "on (a prop, the head, the other hand)", shown_when=("parent_switch", True), bone=True)


@dataclass(frozen=True)
class KeptOrigin:
    """What a rebuilt limb's handle follows now (None: the armature), kept by an automatic parent."""

    bone: str | None


def resolve_origin(skeleton: Skeleton, chain: tuple[str, ...], end: Vector, options: Any,
                   kept: KeptOrigin | None = None) -> str | None:
    """The handle's parent by the options: the guide's Origin, none, or the named bone.

    The Origin is a bone above the chain's parent, so the handle stays put while the
    chain's parent moves the limb; for an arm, the one just above (the chest, when the
    chain hangs from the shoulder). Helper bones that start where the bone below them does
    are passed over, as part of that bone (MikuMikuDance's 肩C and 肩P about the shoulder,
    腰キャンセル at the top of the leg). A limb whose ``end`` is at the ground (a leg) takes the
    nearest one standing at the ground too, as the guide's Origin does (a root or master
    bone, where the character is placed): the bones between carry the body (the hips or
    centre of mass of DAZ, Character Creator, 3ds Max Biped and MikuMikuDance skeletons,
    above their pelvis), and feet that followed them would slide as the body moves. With
    none at the ground, the handle follows the armature itself, as it does where the
    hips are the root (Mixamo).

    ``kept``: a rebuild keeps what the handle follows while it may (its keys move it from
    there; an earlier release may have chosen otherwise, or the user parented it).
    """
    if options.handle_parent_mode == "NONE":
        return None
    if options.handle_parent_mode == "AUTO":
        if kept is not None and (kept.bone is None or _may_follow(skeleton, chain, kept.bone)):
            return kept.bone
        carrier = _past_helpers(skeleton, chain[0], chain)  # the shoulder above 肩C, the lower body above 腰キャンセル
        if carrier is None or skeleton.bones[carrier].parent is None or not body.at_ground(skeleton, end):
            return _past_helpers(skeleton, carrier, chain) if carrier else None
        return body.ground_above(skeleton, carrier)
    name = options.handle_parent
    check_control_parent(skeleton, chain, name, "handle")
    return name


def _past_helpers(skeleton: Skeleton, bone: str, chain: tuple[str, ...]) -> str | None:
    """The parent of ``bone``, or past parents that start where ``bone`` does (helpers at its
    joint), the first that starts elsewhere; the parent itself when all of them start there."""
    bones = skeleton.bones
    root = bones[chain[0]]
    near = geometry.SAME_JOINT * (root.tail - root.head).length
    joint = bones[bone].head
    above = parent = bones[bone].parent
    while above is not None:
        if (bones[above].head - joint).length > near:
            return above
        above = bones[above].parent
    return parent


def _may_follow(skeleton: Skeleton, chain: tuple[str, ...], bone: str) -> bool:
    try:
        check_control_parent(skeleton, chain, bone, "handle")
    except RigError:
        return False
    return True


def check_control_parent(skeleton: Skeleton, chain: tuple[str, ...], name: str, what: str,
                         follows_body: bool = False) -> None:
    """Refuse a parent that would make a cycle (in or below the chain) or, unless ``follows_body``,
    drag the limb along with the body (below the chain's parent)."""
    if name not in skeleton:
        raise RigError(f"is not a bone of this armature, so the {what} cannot be parented to it", bone=name,
                       hint="Pick an existing bone above the chain, or leave the parent automatic.")
    # The bone and its ancestors, walked once for every question below (each is_below would walk them again).
    lineage = {name, *skeleton.ancestors(name)}
    if not lineage.isdisjoint(chain):
        raise RigError(
            f"is part of the chain {chain[0]} > {chain[-1]} or below it; parenting the {what} to it would make a "
            "dependency cycle", bone=name, hint="Pick a bone above the chain's parent, such as the root or origin.")
    root_parent = skeleton.bones[chain[0]].parent
    if not follows_body and root_parent and root_parent in lineage:
        raise RigError(
            f"moves with the chain's parent '{root_parent}', so the {what} would drag the limb along with the body",
            bone=name, hint=f"Pick a bone above '{root_parent}', such as the root or origin.")


def choices(skeleton: Skeleton, chain: tuple[str, ...], origin: str | None, other: str) -> list[tuple[str, str | None]]:
    """The parents to switch between, as (label, bone); the first is the origin (None: the armature itself)."""
    found: list[tuple[str, str | None]] = [("Origin", origin)]
    lineage = [chain[0], *skeleton.ancestors(chain[0])]
    torso = skeleton[chain[0]].parent
    for label, bone in (("Root", lineage[-1] if len(lineage) > 1 else None), ("Torso", torso)):
        if bone is not None and all(bone != known for _, known in found):
            found.append((label, bone))
    if other:
        check_control_parent(skeleton, chain, other, "handle", follows_body=True)
        if all(other != known for _, known in found):
            found.append(("Other", other))
    return found


def plan(draft: Draft) -> None:
    """The handle's parent (the guide's Origin, by the options), and the socket the controls hang from
    when switching is on; else they hang from the origin itself."""
    skeleton, extremity = draft.skeleton, draft.extremity
    bones = skeleton.bones
    end = bones[extremity].head if extremity else bones[draft.chain[-1]].tail
    draft.handle_parent = resolve_origin(skeleton, draft.chain, end, draft.options, draft.kept.get(PART.name))
    draft.controls_parent = draft.handle_parent
    if not draft.options.parent_switch:
        return
    found = choices(draft.skeleton, draft.chain, draft.handle_parent, draft.options.other_parent)
    socket = draft.new_name(draft.end_bone, TAG_SOCKET)
    end = draft.joints[-1]
    along = (draft.joints[-1] - draft.joints[0]).normalized()
    draft.bones.append(NewBone(ROLE_SOCKET, socket, end, end + along * 0.05 * draft.length, draft.bend, None,
                               PALETTE_MECHANISM, naming.COLLECTION_MECHANISM, hidden=True))
    handle = draft.handle
    for index, (label, bone) in enumerate(found):
        if bone is None:
            continue  # the armature itself: the socket stays where it is at rest
        draft.constraints.append(ConstraintPlan(
            socket, "ARMATURE", f"{CONSTRAINT_PARENT} {index}: {label}", bone,
            influence=Driven(((PARENT, handle),), f"{PARENT} == {index}")))
    described = ", ".join(f"{index} {label}" + (f" ({bone})" if bone else " (the armature)")
                          for index, (label, bone) in enumerate(found))
    draft.properties.append(PropertyPlan(handle, PARENT, 0, 0, len(found) - 1,
                                         f"What the IK handle and pole follow: {described}. Switch it with Switch "
                                         "Parent to keep them in place", integer=True))
    draft.controls_parent = socket


def keep(obj: Any, parts: Any) -> KeptOrigin | None:
    """What the handle of a limb being rebuilt follows now, unless it is the limb's own socket."""
    bone = obj.data.bones.get(parts.handle or "")
    if bone is None or (bone.parent is not None and bone.parent.name in parts.made.values()):
        return None
    return KeptOrigin(bone.parent.name if bone.parent is not None else None)


def named(obj: Any, parts: Any, settings: Any) -> dict[str, str]:
    """The bones Handle Parent Bone and Other Parent name, as the rig follows them now: the handle's parent, or
    its socket's Origin and Other choices (a bone renamed since is followed there, not in the options)."""
    socket = obj.pose.bones.get(parts.made.get(ROLE_SOCKET) or "")
    wanted = {"Origin": "handle_parent" if settings.handle_parent_mode == "BONE" else "",
              "Other": "other_parent" if settings.parent_switch else ""}
    if socket is None:
        handle = obj.data.bones.get(parts.handle or "")
        parent = handle.parent if handle is not None else None
        return {wanted["Origin"]: parent.name} if wanted["Origin"] and parent is not None else {}
    return {option: bone for _, label, bone in _socket_parents(socket) if (option := wanted.get(label)) and bone}


def _socket_parents(socket: Any) -> Iterator[tuple[str, str, str]]:
    """Each parent choice the socket's pose bone holds, from its constraints' names ("IK Rigger Parent 1:
    Other") and targets: the choice's number as named, its label and the bone it follows ("" for none)."""
    for constraint in socket.constraints:
        head, _, label = constraint.name.partition(": ")
        if head.startswith(CONSTRAINT_PARENT):
            bone = constraint.targets[0].subtarget if constraint.type == "ARMATURE" and len(constraint.targets) else ""
            yield head.removeprefix(CONSTRAINT_PARENT + " "), label, bone


def choice_count(handle: Any) -> int:
    """How many parents the handle's pose bone may follow: its ``parent`` property's range."""
    return int(handle.id_properties_ui(PARENT).as_dict().get("max", 0)) + 1


# The first choice's label where the origin is the armature itself (no bone above the chain's parent).
ORIGIN_ARMATURE = "Origin (the armature)"


def labels(obj: Any, socket: str | None, count: int) -> list[str]:
    """Each choice's label, read from the socket's constraints (``count`` choices in all). The origin
    with no constraint is the armature itself: still the Origin, as the ``parent`` property and the
    docs name it, so ``switch_parent(..., "Origin")`` finds it."""
    found = [ORIGIN_ARMATURE, *["Armature"] * (count - 1)][:count]
    if socket is None or socket not in obj.pose.bones:
        return found
    for number, label, bone in _socket_parents(obj.pose.bones[socket]):
        if number.isdigit() and int(number) < count:
            found[int(number)] = f"{label} ({bone})" if bone else label
    return found


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    """The parent choices as buttons: pressing one switches without moving the controls."""
    handle = obj.pose.bones.get(parts.handle) if parts.handle else None
    if handle is None or PARENT not in handle:
        return
    column = layout.column(align=True)
    column.label(text="Follows")
    if not is_number(handle[PARENT]):  # made a text or a list by hand
        column.label(text=f"'{PARENT}' is no number: rebuild the limb", icon="ERROR")
        return
    current = int(handle[PARENT])
    for index, label in enumerate(labels(obj, parts.made.get(ROLE_SOCKET), choice_count(handle))):
        button = column.operator(SWITCH_OPERATOR, text=label, depress=index == current)
        button.limb = limb.name
        button.parent = index


def bake_to_ik(bake: Any) -> None:
    """The socket's poses over the recording, each frame's from the parent the handle's ``parent`` plays there."""
    socket = bake.parts.made.get(ROLE_SOCKET)
    if socket is None:
        return
    bones = bake.obj.data.bones
    rest = bones[socket].matrix_local
    handle = bake.obj.pose.bones.get(bake.parts.handle or "")
    chosen = bake.played_switch(handle.name, PARENT, 0) if handle is not None else [0.0] * len(bake.frames)
    followed: dict[int, str] = {}
    for constraint in bake.obj.pose.bones[socket].constraints:
        head = constraint.name.partition(":")[0].removeprefix(CONSTRAINT_PARENT + " ")
        if constraint.type == "ARMATURE" and len(constraint.targets) and head.isdigit():
            followed.setdefault(int(head), constraint.targets[0].subtarget)
    poses = []
    for number_on_frame, value in enumerate(chosen):
        bone = followed.get(round(value))
        if not bone:
            poses.append(rest.copy())
            continue
        poses.append(bake.poses_of(bone)[number_on_frame] @ bones[bone].matrix_local.inverted() @ rest)
    bake.made[socket] = poses


PART = Part("parents", Options, plan, roles=(ROLE_SOCKET,), draw=draw, bake_to_ik=bake_to_ik, keep=keep, named=named)
