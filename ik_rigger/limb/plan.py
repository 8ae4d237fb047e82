"""A limb planned as plain data: the skeleton it reads and the changes it will make.

``plan_limb`` reads a ``Skeleton`` (armature-space rest data, no bpy) and returns a
frozen ``LimbPlan``: which bones to create, which to pre-bend, which constraints to
add with which settings. ``rig.build`` writes it to Blender in one pass per mode.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Container, Mapping
from dataclasses import dataclass, field
from typing import Any

from mathutils import Vector

from .. import parts as limb_parts
from ..core import body, detect, geometry, naming, orient
from ..core.checks import MAX_CHAIN_BONES, check_chain
from ..core.errors import RigError
from ..core.joints import Hinge, JointRest, off_hinge
from ..core.model import (
    BoneEdit,
    ConstraintPlan,
    NewBone,
    PoseDriver,
    PropertyPlan,
    Skeleton,
    bending_indexes,
    quick_init,
)
from ..core.notes import is_warning, warning
from ..parts.base import Draft, Part
from ..parts.clone import ROLE_CLONE
from ..parts.pole import ROLE_POLE
from .options import LimbOptions, check_kinds, check_values, schema, values_of


@quick_init
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
    hinges: tuple[Hinge, ...] = ()  # per hinged middle joint and per second half of a split segment

    def describe(self) -> str:
        """A few lines for a dry run or a report."""
        lines = [
            f"limb {' > '.join(self.chain)}"
            + (f" (extremity {self.extremity})" if self.extremity else ""),
            f"  handle {self.handle} " + (f"parented to {self.handle_parent}" if self.handle_parent
                                          else "follows the armature itself (no parent bone)"),
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


def _resolve_extremity(skeleton: Skeleton, chain: tuple[str, ...], options: LimbOptions,
                       made: Collection[str]) -> str | None:
    if options.extremity_mode == "NONE":
        return None
    if options.extremity_mode == "AUTO":
        # Auto-Rig's reading first where the names say leg or arm: the child nearest the last tail may be a
        # thumb beside the hand (an import's tail aimed between them), or a leaf bone with the foot elsewhere.
        return detect.build_extremity(skeleton, chain, made)
    name = options.extremity_name
    if name in chain or skeleton.is_below(chain[0], name):
        raise RigError(f"is in the chain {chain[0]} > {chain[-1]} or above it, so it cannot be its extremity",
                       bone=name, hint="Name the foot or hand below the chain, or set the extremity to none.")
    # A name of the other side's (a mirrored name mistyped): its foot or hand would follow this chain's handle.
    own, its = naming.split_side(chain[-1], skeleton.bones).side, naming.split_side(name, skeleton.bones).side
    if own and its and own != its:
        raise RigError(f"is on the other side ({its}) from the chain {chain[0]} > {chain[-1]} ({own}), so it cannot "
                       "be its extremity", bone=name,
                       hint="Name the foot or hand of the chain's own side, or set the extremity to none.")
    return name


def _bend(skeleton: Skeleton, chain: tuple[str, ...], extremity: str | None, options: LimbOptions,
          joints: list[Vector], hidden: bool) -> tuple[Vector, bool, bool]:
    """The side the chain bends to, whether the chain is read as straight (one bent only slightly the other
    way, ``geometry.bent_against``, is, and bends to the side a straight one would: the chain part pre-bends
    it, or leaves it bending its own way), and whether it is bent so on the user's own bones (not ``hidden``)
    by more than pre-bending may turn them, so it keeps its bend (told: ``_past_promise``)."""
    found, degrees = geometry.bend(joints)
    if found is not None and not degrees <= geometry.SLIGHT_DEGREES:  # not ``geometry.bent_slightly``
        # Bent more than slightly: whichever side it should bend to, it bends its own way (asked first, so a
        # clearly bent chain never reads the body).
        return found, False, False
    axis = joints[-1] - joints[0]
    if options.bend_direction != "AUTO":
        side = geometry.perpendicular(geometry.AXES[options.bend_direction], axis)
        if side.length < 1e-6:
            if found is not None:  # bent, if slightly: its own way, as the option speaks of straight chains
                return found, False, False
            raise RigError(f"the bend direction {options.bend_direction} lies along the chain", bone=chain[-1],
                           hint="Pick a bend direction at right angles to the chain.")
        side.normalize()
    else:
        kind = naming.limb_kind((*chain, extremity) if extremity else chain)
        extremity_direction = body.leads_to(skeleton, extremity) - skeleton[extremity].head if extremity else None
        is_arm = None if kind is None else kind == "ARM"
        front, up = body.facing(skeleton)
        side = geometry.inferred_bend_direction(joints, extremity_direction, is_arm, front, up)
    if found is not None and not geometry.bent_against(joints, found, side, not hidden):
        return found, False, not hidden and geometry.bent_against(joints, found, side, False)
    return side, True, False


def _past_promise(chain: tuple[str, ...], joints: list[Vector]) -> str:
    """The warning on the user's own bones bent slightly the other way, by more than pre-bending them may
    turn them (the promised 2 degrees): IK bends them on that way; what to do."""
    return warning(
        f"the chain {chain[0]} > {chain[-1]} is bent {geometry.bend_degrees(joints):.1f} degree the other way from "
        f"the side it should bend to, further than pre-bending may turn its bones ({geometry.PROMISED_DEGREES:g} "
        "degrees), so IK bends it on that way; to bend it the other way, bend the joint a degree or two that way in "
        "Edit mode and build again")


def _rolled_off(skeleton: Skeleton, chain: tuple[str, ...], options: LimbOptions, bend: Vector | None = None,
                halves: Collection[str] = ()) -> str | None:
    """With Hinge Joints and the bones left as they are, the first chain bone rolled off its joint's hinge
    (``joints.off_hinge``; with ``bend``, a straight joint's too): the limb is then solved on a hidden chain
    rolled on its hinges."""
    if not options.hinge_joints or options.fix_orientation:
        return None
    bones = skeleton.bones
    return off_hinge([JointRest(name, bones[name].direction, bones[name].x_axis, bones[name].z_axis)
                      for name in chain], bend, halves)


def plan_limb(skeleton: Skeleton, last: str, options: LimbOptions, taken: set[str],
              kept: Mapping[str, Any] | None = None) -> LimbPlan:
    """Plan the guide's IK rig for the chain ending at ``last``: read the chain, then let every part plan.

    ``taken`` holds every bone name in use (the armature's, plus those of limbs
    already planned in the same build); new names never collide with it. ``kept``: what
    each part keeps of the limb this rebuilds, by part name (its ``keep`` hook).
    """
    named, _, plans = _checked(options, last)
    chain = chain_ending_at(skeleton, last, options.chain_length)
    _check_named_bones(skeleton, named, taken)
    _check_whole_first_segment(skeleton, chain, options.chain_length)
    extremity = _resolve_extremity(skeleton, chain, options, taken)
    read = skeleton
    # Checked and read as it will be solved: each tail on its next joint, the last on the
    # extremity's head (Blender's IK moves the last bone's tail). The chain part makes it so,
    # turning the bones (fix_orientation) or on a hidden chain of the rig's own (parts.hidden).
    bones = skeleton.bones
    ends = [bones[name].head for name in chain]
    ends.append(bones[extremity].head if extremity else bones[last].tail)
    # A chain whose joints coincide is refused below as its bones are, with what to do.
    distinct = all((after - before).length > 0.0 for before, after in zip(ends, ends[1:]))
    hidden = not options.fix_orientation and not orient.runs_joint_to_joint(skeleton, chain, ends) and distinct
    rolled_off = _rolled_off(skeleton, chain, options) if distinct and not hidden else None
    hidden = hidden or rolled_off is not None
    if options.fix_orientation:
        read = orient.applied(skeleton, orient.orientation_edits(skeleton, chain, ends, None))
    elif hidden:
        read = skeleton.moved({**skeleton.bones, **orient.joint_bones(skeleton, chain, ends, None)})
    check_chain(read, chain)
    known = read.bones  # asked by name only
    side = naming.split_side(last, known).side

    joints = [known[name].head.copy() for name in chain]
    joints.append(known[last].tail.copy())
    # Which bones are halves is read off the joints, the extremity's head ending the last segment:
    # an imported last bone's tail may point anywhere.
    halves = detect.split_halves(read, chain, joints[:-1] + [known[extremity].head if extremity else joints[-1]])
    bending = bending_indexes(chain, halves)
    if len(bending) < 3:
        raise RigError(f"ends a chain that is one segment split in two bones ({' > '.join(chain)}), so IK has no "
                       "joint to bend", bone=last,
                       hint=f"Set the chain length to {_taking_in_segment_above(read, chain)} or more, so the chain "
                       "takes in the segment above.")
    # A chain hidden only for its roll has the user's bones pre-bent with it (parts.chain): as their own.
    bent_joints = [joints[index] for index in bending]
    direction, straight, past_promise = _bend(read, chain, extremity, options, bent_joints,
                                              hidden and rolled_off is None)
    if distinct and not hidden:
        # A straight joint's hinge is the chain's bend's axis, known only now (a straight chain's bones rolled
        # any way): off it, the chain is hidden too, pre-bent and hinged there, its bones pre-bent with it.
        rolled_off = _rolled_off(skeleton, chain, options, direction, halves)
        hidden = rolled_off is not None
    against = _past_promise(chain, bent_joints) if past_promise and not hidden and options.prebend_straight else None
    names = naming.NamesInUse(taken, known)
    handle = naming.derived_name(extremity or last, naming.TAG_HANDLE, names, known)
    names.add(handle)
    draft = Draft(skeleton=skeleton, options=options, chain=chain, extremity=extremity, side=side, joints=joints,
                  length=geometry.chain_length(joints), bend=direction, straight=straight, names=names, known=known,
                  handle=handle, halves=halves, kept=kept or {}, hidden=hidden, off_hinge=rolled_off or "")
    for plan in plans:
        plan(draft)
    if against is not None:
        draft.notes.append(against)
    made = {bone.role: bone.name for bone in draft.bones}
    return LimbPlan(chain=chain, extremity=extremity, side=side, handle=handle, pole=made.get(ROLE_POLE),
                    clone=made.get(ROLE_CLONE), handle_parent=draft.handle_parent, pole_angle=draft.pole_angle,
                    bend_direction=draft.bend, straight=straight, new_bones=tuple(draft.bones),
                    bone_edits=tuple(draft.edited.values()), constraints=tuple(draft.constraints),
                    notes=tuple(draft.notes), properties=tuple(draft.properties), drivers=tuple(draft.drivers),
                    hinges=tuple(draft.hinges))


def _taking_in_segment_above(skeleton: Skeleton, chain: tuple[str, ...]) -> int:
    """The chain length that takes in the whole segment above ``chain``: a bone more, or two where that
    segment is split in two bones too (MakeHuman's ``upperleg01 > upperleg02`` above the shin's halves),
    as a chain starting halfway along it is refused."""
    parent = skeleton[chain[0]].parent
    grand = skeleton[parent].parent if parent is not None else None
    if parent is not None and grand is not None and detect.split_halves(
            skeleton, (grand, parent), [skeleton[grand].head, skeleton[parent].head, skeleton[chain[0]].head]):
        return len(chain) + 2
    return len(chain) + 1


def _check_whole_first_segment(skeleton: Skeleton, chain: tuple[str, ...], length: int) -> None:
    """Refuse a chain that starts halfway along a segment split in two: IK would bend it there."""
    first = chain[0]
    bones = skeleton.bones
    parent = bones[first].parent
    # Most chains start at a bone whose name makes it no second half: the joints are not even read.
    if parent is None or not detect.chains_of(skeleton).second_half(parent, first) or not detect.split_halves(
            skeleton, (parent, first), [bones[parent].head, bones[first].head, bones[chain[1]].head]):
        return
    raise RigError(f"is the second half of the segment that '{parent}' begins, so a chain starting there would bend "
                   "halfway along that segment", bone=first,
                   hint=f"Set the chain length to {length + 1}, so the chain starts at '{parent}' (Auto-Rig finds "
                   "such limbs by itself).")


# The options that name a bone: each limb's planning checks only these.
_BONE_OPTIONS = tuple(declared for declared in schema() if declared.option.bone)


Named = tuple[tuple[Any, str], ...]


def _check_named_bones(skeleton: Skeleton, named: Named, made: Container[str] = ()) -> None:
    """Refuse a bone an option names (``Option.bone``) that the armature does not have, where the option applies:
    ``named`` holds those options with the names they give (``_checked``); ``made``: the names of bones IK Rigger
    made, which no option may name (the skeleton planned on leaves them out)."""
    bones = skeleton.bones
    for declared, name in named:
        when = declared.option.shown_when
        if name in bones:
            continue
        other = f", or change {when[0]}" if when is not None else ""
        # A choice (extremity_mode "BONE") asks for the bone named: none named is no bone. An option
        # merely switched on (other_parent with parent_switch) may name none.
        if not name and (when is None or not isinstance(when[1], str)):
            continue
        if not name and when is not None:
            raise RigError(f"no bone is named as {declared.option.label}, which {when[0]} asks for (option "
                           f"{declared.name})", hint=f"Name an existing bone in {declared.name}{other}.")
        if name in made:
            raise RigError(f"was made by IK Rigger, so {declared.option.label} cannot be it (option {declared.name})",
                           bone=name, hint=f"Name one of the character's own bones in {declared.name}{other}.")
        raise RigError(f"is not a bone of this armature, so {declared.option.label} cannot be it (option "
                       f"{declared.name})", bone=name, hint=f"Name an existing bone in {declared.name}{other}.")


# What planning reads of a set of options once they passed every check (``_checked``): the bone options
# that apply to them with the names they give, the parts registered then, and the plans of those parts
# that plan anything for them (``Part.plans``; a plain script's options turn most of them off).
Reading = tuple[Named, tuple[Part, ...], tuple[Callable[[Draft], None], ...]]
# Options that passed every check, by their values with their types (True equals 1, 2.0 equals 2), with
# what planning reads of them: a build mostly asks equal options for every limb (a script often makes
# each limb's own), and a rebuild the same again. A value equal to none (NaN) is refused.
_PASSED: dict[tuple[tuple[Any, ...], tuple[type, ...]], Reading] = {}
# The options that passed last, themselves, and what planning reads of them: a script mostly hands
# every limb the same options.
_LAST_PASSED: list[Any] = [None, None]


def _checked(options: LimbOptions, last: str) -> Reading:
    """Refuse options of the wrong kind or out of range; what planning reads of them (``Reading``)."""
    if _LAST_PASSED[0] is options:
        reading: Reading = _LAST_PASSED[1]
    else:
        values = values_of(options)
        key = (values, tuple(map(type, values)))
        found = _PASSED.get(key)
        if found is None:
            check_kinds(options, last)
            if options.chain_length > MAX_CHAIN_BONES:
                raise RigError(f"a chain of {options.chain_length} bones is longer than Blender's IK allows "
                               f"({MAX_CHAIN_BONES})", bone=last,
                               hint=f"Set the chain length to {MAX_CHAIN_BONES} or less.")
            check_values(options, last)
            if len(_PASSED) >= 256:
                _PASSED.clear()
            found = _PASSED[key] = _reading(options)
        reading = found
        _LAST_PASSED[:] = [options, reading]
    if reading[1] is not limb_parts.PARTS:  # parts registered since (a test's, an add-on's)
        reading = _LAST_PASSED[1] = _reading(options)
    return reading


def _reading(options: LimbOptions) -> Reading:
    parts = limb_parts.PARTS
    named = tuple((declared, getattr(options, declared.name)) for declared in _BONE_OPTIONS
                  if (when := declared.option.shown_when) is None or getattr(options, when[0]) == when[1])
    return named, parts, tuple(part.plan for part in parts if part.plans(options))
