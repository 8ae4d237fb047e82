"""A limb planned as plain data: the skeleton it reads and the changes it will make.

``plan_limb`` reads a ``Skeleton`` (armature-space rest data, no bpy) and returns a
frozen ``LimbPlan``: which bones to create, which to pre-bend, which constraints to
add with which settings. ``rig.build`` writes it to Blender in one pass per mode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from mathutils import Vector

from .. import parts as limb_parts
from ..core import body, detect, geometry, naming, orient
from ..core.checks import MAX_CHAIN_BONES, check_chain
from ..core.errors import RigError
from ..core.joints import Hinge
from ..core.model import (
    BoneEdit,
    ConstraintPlan,
    NewBone,
    PoseDriver,
    PropertyPlan,
    Skeleton,
    automatic_extremity,
    bending_indexes,
)
from ..core.notes import is_warning, warning
from ..parts.base import Draft
from ..parts.clone import ROLE_CLONE
from ..parts.parents import KeptOrigin, resolve_origin
from ..parts.pole import ROLE_POLE
from .options import LimbOptions, check, check_kinds, schema


@dataclass(frozen=True)
class LimbPlan:
    """Everything one limb needs, before anything is written to Blender."""

    chain: tuple[str, ...]
    extremity: str | None
    side: str | None
    handle: str
    pole: str | None
    clone: str | None
    handle_parent: str | None
    pole_angle: float
    bend_direction: Vector
    straight: bool
    new_bones: tuple[NewBone, ...]
    bone_edits: tuple[BoneEdit, ...]
    constraints: tuple[ConstraintPlan, ...]
    notes: tuple[str, ...] = field(default=())
    properties: tuple[PropertyPlan, ...] = ()
    drivers: tuple[PoseDriver, ...] = ()
    hinges: tuple[Any, ...] = ()  # core.joints.Hinge per hinged middle joint and per second half of a split segment

    def describe(self) -> str:
        """A few lines for a dry run or a report."""
        lines = [
            f"limb {' > '.join(self.chain)}"
            + (f" (extremity {self.extremity})" if self.extremity else ""),
            f"  handle {self.handle} parented to {self.handle_parent or 'nothing'}",
        ]
        if self.pole:
            lines.append(f"  pole {self.pole}, pole angle {math.degrees(self.pole_angle):.2f} degrees")
        if self.clone:
            lines.append(f"  clone {self.clone}")
        lines.extend(f"  {'warning' if is_warning(note) else 'note'}: {note}" for note in self.notes)
        return "\n".join(lines)


def chain_ending_at(skeleton: Skeleton, last: str, length: int) -> tuple[str, ...]:
    """The ``length`` bones ending at ``last``, root first, as the IK constraint counts them."""
    if last not in skeleton:
        raise RigError("no such bone in the armature", bone=last, hint="Pick the last bone of the chain.")
    if length < 2:
        raise RigError(
            f"a chain needs at least 2 bones, {length} was asked", bone=last, hint="Set the chain length to 2 or more."
        )
    chain = skeleton.lineage(last, length)
    if len(chain) < length:
        raise RigError(
            f"has only {len(chain) - 1} parent bone(s), so a chain of {length} bones cannot end here",
            bone=last,
            hint=f"Make the chain length {len(chain)} or less, or pick a bone further down the limb.",
        )
    return tuple(reversed(chain))


def _resolve_extremity(skeleton: Skeleton, chain: tuple[str, ...], options: LimbOptions) -> str | None:
    if options.extremity_mode == "NONE":
        return None
    if options.extremity_mode == "AUTO":
        return automatic_extremity(skeleton, chain[-1])
    name = options.extremity_name
    if name in chain or skeleton.is_below(chain[0], name):
        raise RigError(f"is in the chain {chain[0]} > {chain[-1]} or above it, so it cannot be its extremity",
                       bone=name, hint="Name the foot or hand below the chain, or set the extremity to none.")
    return name


def _bend(skeleton: Skeleton, chain: tuple[str, ...], extremity: str | None, options: LimbOptions,
          joints: list[Vector]) -> tuple[Vector, bool]:
    """The side the chain bends to and whether the chain is straight."""
    found = geometry.bend_direction(joints)
    if found is not None:
        return found, False
    axis = joints[-1] - joints[0]
    if options.bend_direction != "AUTO":
        side = geometry.perpendicular(geometry.AXES[options.bend_direction], axis)
        if side.length < 1e-6:
            raise RigError(f"the bend direction {options.bend_direction} lies along the chain", bone=chain[-1],
                           hint="Pick a bend direction at right angles to the chain.")
        return side.normalized(), True
    kind = naming.limb_kind(list(chain) + ([extremity] if extremity else []))
    extremity_direction = body.leads_to(skeleton, extremity) - skeleton[extremity].head if extremity else None
    is_arm = None if kind is None else kind == "ARM"
    front, up = body.facing(skeleton)
    return geometry.inferred_bend_direction(joints, extremity_direction, is_arm, front, up), True


def left_straight(chain: tuple[str, ...]) -> str:
    """The warning on a straight chain that was not pre-bent."""
    return warning(f"the chain {chain[0]} > {chain[-1]} is straight and was left so; IK may not bend it")


def _carried(joints: list[Vector], moved: list[Vector], bending: list[int]) -> list[Vector]:
    """``joints`` with those at ``bending`` moved to ``moved``, and each joint between two of them
    carried with its segment: turned and stretched as the segment is, so it keeps its place on it."""
    carried = list(joints)
    for (start, stop), (new_start, new_stop) in zip(zip(bending, bending[1:]), zip(moved, moved[1:])):
        span, new_span = joints[stop] - joints[start], new_stop - new_start
        turn = span.rotation_difference(new_span).to_matrix()
        scale = new_span.length / span.length
        for index in range(start, stop):
            carried[index] = new_start + turn @ (joints[index] - joints[start]) * scale
        carried[stop] = new_stop.copy()
    return carried


def _prebent_edits(skeleton: Skeleton, chain: tuple[str, ...], joints: list[Vector],
                   bent: list[Vector]) -> list[BoneEdit]:
    """Each chain bone carried along with its joint-to-joint segment, turned the shortest way.

    The bone turns as a whole: a tail that does not lie on the next joint (as
    importers leave them) keeps its place relative to the segment, and the roll turns
    with it, so the bone's own axes stay what the user and the mesh know. The bone
    stretches as its segment does (by a hair), so a tail on the next joint stays on it.
    """
    edits = []
    for index, name in enumerate(chain):
        bone = skeleton[name]
        turn = geometry.turn_between(joints, bent, index).to_matrix()
        stretch = (bent[index + 1] - bent[index]).length / (joints[index + 1] - joints[index]).length
        head = bent[index]
        edits.append(BoneEdit(name, head, head + turn @ bone.direction * stretch,
                              (turn @ bone.z_axis).normalized()))
    return edits


def plan_limb(skeleton: Skeleton, last: str, options: LimbOptions, taken: set[str],
              kept: KeptOrigin | None = None) -> LimbPlan:
    """Plan the guide's IK rig for the chain ending at ``last``.

    ``taken`` holds every bone name in use (the armature's, plus those of limbs
    already planned in the same build); new names never collide with it. ``kept``: what
    the handle of the limb this rebuilds follows (see ``parents.resolve_origin``).
    """
    _check_options(options, last)
    chain = chain_ending_at(skeleton, last, options.chain_length)
    _check_named_bones(skeleton, options)
    _check_whole_first_segment(skeleton, chain, options.chain_length)
    extremity = _resolve_extremity(skeleton, chain, options)
    original = skeleton
    if options.fix_orientation:
        # Checked and planned as it will be: each tail on its next joint, the last on the
        # extremity's head (Blender's IK moves the last bone's tail).
        end = skeleton[extremity].head if extremity else skeleton[last].tail
        heads = [skeleton[name].head for name in chain]
        skeleton = orient.applied(skeleton, orient.orientation_edits(skeleton, chain, [*heads, end], None))
    check_chain(skeleton, chain)
    handle_parent = resolve_origin(skeleton, chain, skeleton[extremity].head if extremity else skeleton[last].tail,
                                   options, kept)
    known = set(skeleton.bones)
    side = naming.split_side(last, known).side

    joints = [skeleton[name].head.copy() for name in chain] + [skeleton[last].tail.copy()]
    # Which bones are halves is read off the joints, the extremity's head ending the last segment:
    # an imported last bone's tail may point anywhere.
    halves = detect.split_halves(skeleton, chain, joints[:-1] + [skeleton[extremity].head if extremity else joints[-1]])
    bending = bending_indexes(chain, halves)
    if len(bending) < 3:
        raise RigError(f"ends a chain that is one segment split in two bones ({' > '.join(chain)}), so IK has no "
                       "joint to bend", bone=last,
                       hint=f"Set the chain length to {len(chain) + 1} or more, so the chain takes in the segment "
                       "above.")
    direction, straight = _bend(skeleton, chain, extremity, options, [joints[index] for index in bending])
    notes: list[str] = [
        f"'{name}' is the second half of the segment that '{chain[chain.index(name) - 1]}' begins: IK keeps it in "
        "line (its IK stiffness on X and Z at the most), so the limb bends at its joints" for name in chain
        if name in halves]
    edited: dict[str, BoneEdit] = {}
    if options.fix_orientation:
        turned = orient.orientation_edits(original, chain, joints, direction)
        skeleton = orient.applied(original, turned)
        edited = {name: BoneEdit(name, skeleton[name].head, tail, z_axis) for name, (tail, z_axis) in turned.items()}
        held = orient.held(original, chain, joints)
        if held:
            notes.append(f"the bone(s) {', '.join(held)} kept their tail and roll: bones connected to their tail "
                         "would have moved with it")
        if turned:
            notes.append(f"the bone(s) {', '.join(turned)} now point at their next joint, rolled so X is the "
                         "hinge; a pose they hold now turns them differently (motion on them is keyed anew)")
    if straight and options.prebend_straight:
        bent = _carried(joints, geometry.prebent_joints([joints[index] for index in bending], direction), bending)
        edited.update((edit.name, edit) for edit in _prebent_edits(skeleton, chain, joints, bent))
        joints = bent
        notes.append(
            f"the chain {chain[0]} > {chain[-1]} was straight, so IK could not bend it; it was pre-bent "
            f"{geometry.PREBEND_DEGREES:g} degree toward {_axis_words(direction)} with its ends kept in place"
        )
    elif straight:
        notes.append(left_straight(chain))

    names = taken | known
    handle = naming.derived_name(extremity or last, naming.TAG_HANDLE, names, known)
    names.add(handle)
    draft = Draft(skeleton=skeleton, options=options, chain=chain, extremity=extremity, side=side, joints=joints,
                  length=geometry.chain_length(joints), bend=direction, straight=straight, edited=edited,
                  handle_parent=handle_parent, names=names, known=known, handle=handle, notes=notes, halves=halves)
    for part in limb_parts.PARTS:
        part.plan(draft)
    in_line = [Hinge.in_line(name) for name in chain if name in halves]
    new_bones = draft.bones
    made = {bone.role: bone.name for bone in new_bones}
    return LimbPlan(chain=chain, extremity=extremity, side=side, handle=handle, pole=made.get(ROLE_POLE),
                    clone=made.get(ROLE_CLONE), handle_parent=handle_parent, pole_angle=draft.pole_angle,
                    bend_direction=direction, straight=straight, new_bones=tuple(new_bones),
                    bone_edits=tuple(edited.values()), constraints=tuple(draft.constraints), notes=tuple(draft.notes),
                    properties=tuple(draft.properties), drivers=tuple(draft.drivers), hinges=(*in_line, *draft.hinges))


def _check_whole_first_segment(skeleton: Skeleton, chain: tuple[str, ...], length: int) -> None:
    """Refuse a chain that starts halfway along a segment split in two: IK would bend it there."""
    first = chain[0]
    parent = skeleton[first].parent
    if parent is None or not detect.split_halves(
            skeleton, (parent, first), [skeleton[parent].head, skeleton[first].head, skeleton[chain[1]].head]):
        return
    raise RigError(f"is the second half of the segment that '{parent}' begins, so a chain starting there would bend "
                   "halfway along that segment", bone=first,
                   hint=f"Set the chain length to {length + 1}, so the chain starts at '{parent}' (Auto-Rig finds "
                   "such limbs by itself).")


def _check_named_bones(skeleton: Skeleton, options: LimbOptions) -> None:
    """Refuse a bone an option names (``Option.bone``) that the armature does not have, where the option applies."""
    for declared in schema():
        name, when = getattr(options, declared.name), declared.option.shown_when
        if not declared.option.bone or name in skeleton or (when is not None and getattr(options, when[0]) != when[1]):
            continue
        other = f", or change {when[0]}" if when is not None else ""
        # A choice (extremity_mode "BONE") asks for the bone named: none named is no bone. An option
        # merely switched on (other_parent with parent_switch) may name none.
        if not name and (when is None or not isinstance(when[1], str)):
            continue
        if not name and when is not None:
            raise RigError(f"no bone is named as {declared.option.label}, which {when[0]} asks for (option "
                           f"{declared.name})", hint=f"Name an existing bone in {declared.name}{other}.")
        raise RigError(f"is not a bone of this armature, so {declared.option.label} cannot be it (option "
                       f"{declared.name})", bone=name, hint=f"Name an existing bone in {declared.name}{other}.")


def _check_options(options: LimbOptions, last: str) -> None:
    check_kinds(options, last)
    if options.chain_length > MAX_CHAIN_BONES:
        raise RigError(f"a chain of {options.chain_length} bones is longer than Blender's IK allows "
                       f"({MAX_CHAIN_BONES})", bone=last, hint=f"Set the chain length to {MAX_CHAIN_BONES} or less.")
    check(options, last)


def _axis_words(direction: Vector) -> str:
    axis = max(range(3), key=lambda i: abs(direction[i]))
    return ("-" if direction[axis] < 0 else "+") + "XYZ"[axis]

