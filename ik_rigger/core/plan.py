"""A limb planned as plain data: the skeleton it reads and the changes it will make.

``plan_limb`` reads a ``Skeleton`` (armature-space rest data, no bpy) and returns a
frozen ``LimbPlan``: which bones to create, which to pre-bend, which constraints to
add with which settings. ``rig.build`` writes it to Blender in one pass per mode.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, replace
from itertools import islice

from mathutils import Vector

from . import body, foot_roll, geometry, naming, orient
from .checks import MAX_CHAIN_BONES, check_chain
from .errors import RigError
from .options import LimbOptions, check

# The guide's colours, as Blender bone colour palettes.
PALETTE_CHAIN = "THEME01"  # red
PALETTE_CONTROL = "THEME04"  # blue: IK handle and pole
PALETTE_ORIGIN = "THEME03"  # green: origin and parents
PALETTE_CLONE = "THEME08"  # teal, as the guide's clone
PALETTE_MECHANISM = "DEFAULT"  # bones only the rig itself moves, hidden

ROLE_HANDLE = "HANDLE"
ROLE_POLE = "POLE"
ROLE_CLONE = "CLONE"
ROLE_POLE_LINE = "POLE_LINE"
ROLE_TARGET = "TARGET"
ROLE_REACH = "REACH"

CONSTRAINT_IK = "IK Rigger IK"
CONSTRAINT_POLE_LINE = "IK Rigger Pole Line"
CONSTRAINT_REACH = "IK Rigger Reach"
CONSTRAINT_COPY_ROTATION = "IK Rigger Copy Rotation"
CONSTRAINT_COPY_SCALE = "IK Rigger Copy Scale"
CONSTRAINT_COPY_TRANSFORMS = "IK Rigger Copy Transforms"
CONSTRAINT_COPY_LOCATION = "IK Rigger Copy Location"



@dataclass(frozen=True)
class BoneInfo:
    """One bone at rest, in armature space."""

    name: str
    parent: str | None
    head: Vector
    tail: Vector
    x_axis: Vector
    z_axis: Vector
    connected: bool = False

    @property
    def length(self) -> float:
        return (self.tail - self.head).length

    @property
    def direction(self) -> Vector:
        return self.tail - self.head


@dataclass(frozen=True)
class Skeleton:
    """The rest skeleton of one armature, as ``rig.skeleton`` reads it.

    ``up`` and ``front`` are the world's up and Blender's front (-Y) seen from inside
    the armature (through its object's matrix); ``core.body`` says where the
    character itself faces.
    """

    bones: dict[str, BoneInfo]
    up: Vector = field(default_factory=lambda: Vector((0.0, 0.0, 1.0)))
    front: Vector = field(default_factory=lambda: Vector((0.0, -1.0, 0.0)))

    def __contains__(self, name: str) -> bool:
        return name in self.bones

    def __getitem__(self, name: str) -> BoneInfo:
        return self.bones[name]

    def children(self, name: str) -> list[BoneInfo]:
        return [bone for bone in self.bones.values() if bone.parent == name]

    def ancestors(self, name: str) -> Iterator[str]:
        """Parent, grandparent, ... of ``name``, nearest first."""
        parent = self.bones[name].parent
        while parent is not None:
            yield parent
            parent = self.bones[parent].parent

    def is_below(self, name: str, ancestor: str) -> bool:
        """True when ``name`` is ``ancestor`` or one of its descendants."""
        return name == ancestor or ancestor in self.ancestors(name)

    def lineage(self, name: str, count: int) -> list[str]:
        """``name`` and its ancestors, nearest first, at most ``count`` bones (none for an unknown name)."""
        if name not in self.bones:
            return []
        return [name, *islice(self.ancestors(name), count - 1)]

    def without(self, names: Collection[str]) -> Skeleton:
        """The skeleton less the named bones (a limb's made bones, when planning its rebuild)."""
        return replace(self, bones={name: bone for name, bone in self.bones.items() if name not in names})


@dataclass(frozen=True)
class NewBone:
    """A bone IK Rigger creates; never deforms."""

    role: str
    name: str
    head: Vector
    tail: Vector
    z_axis: Vector
    parent: str | None
    palette: str
    collection: str
    hidden: bool = False  # mechanism only the rig moves: hidden so nobody grabs it


@dataclass(frozen=True)
class BoneEdit:
    """A user bone moved at rest (only to pre-bend a straight chain)."""

    name: str
    head: Vector
    tail: Vector
    z_axis: Vector


@dataclass(frozen=True)
class ConstraintPlan:
    """A constraint to add to ``owner`` with its settings as (property, value) pairs."""

    owner: str
    kind: str
    name: str
    subtarget: str
    settings: tuple[tuple[str, object], ...] = ()
    pole_subtarget: str = ""
    driven: bool = True  # the influence follows the limb's IK/FK switch


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
        lines.extend(f"  note: {note}" for note in self.notes)
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


def automatic_extremity(skeleton: Skeleton, last: str) -> str | None:
    """The child of ``last`` that continues the limb (the foot or hand), if any.

    A connected child wins; otherwise the child whose head is nearest the last
    bone's tail, as long as it starts close to it; otherwise, for an imported bone
    whose tail points off its joint, its only child when that starts well away from
    the bone's head (at the next joint, not a kneecap beside the knee).
    """
    bone = skeleton[last]
    children = skeleton.children(last)
    connected = [child for child in children if child.connected]
    if connected:
        return connected[0].name
    near = [child for child in children if (child.head - bone.tail).length <= 0.25 * bone.length]
    if near:
        return min(near, key=lambda child: ((child.head - bone.tail).length, child.name)).name
    if len(children) == 1 and (children[0].head - bone.head).length >= 0.5 * bone.length:
        return children[0].name
    return None


def _resolve_handle_parent(skeleton: Skeleton, chain: tuple[str, ...], options: LimbOptions) -> str | None:
    root_parent = skeleton[chain[0]].parent
    if options.handle_parent_mode == "NONE":
        return None
    if options.handle_parent_mode == "AUTO":
        return skeleton[root_parent].parent if root_parent else None
    name = options.handle_parent
    _check_control_parent(skeleton, chain, name, "handle")
    return name


def _check_control_parent(skeleton: Skeleton, chain: tuple[str, ...], name: str, what: str) -> None:
    if name not in skeleton:
        raise RigError(f"is not a bone of this armature, so the {what} cannot be parented to it", bone=name,
                       hint="Pick an existing bone above the chain, or leave the parent automatic.")
    if any(skeleton.is_below(name, bone) for bone in chain):
        raise RigError(
            f"is part of the chain {chain[0]} > {chain[-1]} or below it; parenting the {what} to it would make a "
            "dependency cycle", bone=name, hint="Pick a bone above the chain's parent, such as the root or origin.")
    root_parent = skeleton[chain[0]].parent
    if root_parent and skeleton.is_below(name, root_parent):
        raise RigError(
            f"moves with the chain's parent '{root_parent}', so the {what} would drag the limb along with the body",
            bone=name, hint=f"Pick a bone above '{root_parent}', such as the root or origin.")


def _resolve_extremity(skeleton: Skeleton, chain: tuple[str, ...], options: LimbOptions) -> str | None:
    if options.extremity_mode == "NONE":
        return None
    if options.extremity_mode == "AUTO":
        return automatic_extremity(skeleton, chain[-1])
    name = options.extremity_name
    if name not in skeleton:
        raise RigError("is not a bone of this armature", bone=name,
                       hint="Name an existing bone as the extremity, or set the extremity to automatic or none.")
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


def plan_limb(skeleton: Skeleton, last: str, options: LimbOptions, taken: set[str]) -> LimbPlan:
    """Plan the guide's IK rig for the chain ending at ``last``.

    ``taken`` holds every bone name in use (the armature's, plus those of limbs
    already planned in the same build); new names never collide with it.
    """
    _check_options(options, last)
    chain = chain_ending_at(skeleton, last, options.chain_length)
    extremity = _resolve_extremity(skeleton, chain, options)
    original = skeleton
    if options.fix_orientation:
        # Checked and planned as it will be: each tail on its next joint, the last on the
        # extremity's head (Blender's IK moves the last bone's tail).
        end = skeleton[extremity].head if extremity else skeleton[last].tail
        heads = [skeleton[name].head for name in chain]
        skeleton = orient.applied(skeleton, orient.orientation_edits(skeleton, chain, [*heads, end], None))
    check_chain(skeleton, chain)
    handle_parent = _resolve_handle_parent(skeleton, chain, options)
    known = set(skeleton.bones)
    side = naming.split_side(last, known).side

    joints = [skeleton[name].head.copy() for name in chain] + [skeleton[last].tail.copy()]
    direction, straight = _bend(skeleton, chain, extremity, options, joints)
    notes: list[str] = []
    edited: dict[str, BoneEdit] = {}
    if options.fix_orientation:
        turned = orient.orientation_edits(original, chain, joints, direction)
        skeleton = orient.applied(original, turned)
        edited = {name: BoneEdit(name, skeleton[name].head, tail, z_axis) for name, (tail, z_axis) in turned.items()}
        if turned:
            notes.append(f"the bone(s) {', '.join(turned)} now point at their next joint, rolled so X is the "
                         "hinge; their existing poses and keys turn them differently now")
    if straight and options.prebend_straight:
        bent = geometry.prebent_joints(joints, direction)
        edited.update((edit.name, edit) for edit in _prebent_edits(skeleton, chain, joints, bent))
        joints = bent
        notes.append(
            f"the chain {chain[0]} > {chain[-1]} was straight, so IK could not bend it; it was pre-bent "
            f"{geometry.PREBEND_DEGREES:g} degree toward {_axis_words(direction)} with its ends kept in place"
        )
    elif straight:
        notes.append(f"the chain {chain[0]} > {chain[-1]} is straight and was left so; IK may not bend it")

    length = geometry.chain_length(joints)
    names = taken | known
    new_bones: list[NewBone] = []

    def new_name(source: str, tag: str) -> str:
        name = naming.derived_name(source, tag, names, known)
        names.add(name)
        return name

    end_bone = skeleton[extremity] if extremity else skeleton[last]
    handle = new_name(extremity or last, naming.TAG_HANDLE)
    handle_vector = end_bone.direction if extremity else end_bone.direction.normalized() * 0.25 * length
    new_bones.append(NewBone(ROLE_HANDLE, handle, joints[-1], joints[-1] + handle_vector, end_bone.z_axis,
                             handle_parent, PALETTE_CONTROL, naming.COLLECTION_CONTROLS))
    # What the IK target and the foot's clone hang from: the handle, or the foot roll's ball.
    follows = handle
    roll_constraints: list[ConstraintPlan] = []
    toe_clone: tuple[str, str] | None = None
    if options.foot_roll:
        follows, toe_clone = _foot_roll(skeleton, last, extremity, joints, length, handle, new_name, new_bones,
                                        roll_constraints)
    # Stretch: the IK aims at a target that follows the handle but never lies further than the
    # limb's Maximum Stretch from the chain's root (a point that moves with the body, not the chain).
    target = new_name(extremity or last, naming.TAG_TARGET)
    new_bones.append(NewBone(ROLE_TARGET, target, joints[-1], joints[-1] + handle_vector * 0.5, end_bone.z_axis,
                             follows, PALETTE_MECHANISM, naming.COLLECTION_MECHANISM, hidden=True))
    reach = new_name(chain[0], naming.TAG_REACH)
    along = (joints[1] - joints[0]).normalized()
    new_bones.append(NewBone(ROLE_REACH, reach, joints[0], joints[0] + along * 0.05 * length,
                             (joints[-1] - joints[0]).normalized(), skeleton[chain[0]].parent, PALETTE_MECHANISM,
                             naming.COLLECTION_MECHANISM, hidden=True))
    reach_limit = ConstraintPlan(target, "LIMIT_DISTANCE", CONSTRAINT_REACH, reach, settings=(
        ("limit_mode", "LIMITDIST_INSIDE"), ("distance", length * options.max_stretch), ("owner_space", "POSE"),
        ("target_space", "POSE")), driven=False)

    pole = None
    pole_angle = options.pole_angle
    extra_constraints: list[ConstraintPlan] = []
    if options.use_pole:
        middle = chain[len(chain) // 2]
        pole = new_name(middle, naming.TAG_POLE)
        distance = max(options.pole_distance, 0.05) * length
        position = geometry.pole_position(joints, direction, distance)
        pole_parent = handle if options.pole_parent == "HANDLE" else handle_parent
        if options.pole_parent == "ORIGIN" and pole_parent is not None:
            _check_control_parent(skeleton, chain, pole_parent, "pole")
        new_bones.append(NewBone(ROLE_POLE, pole, position, position + direction * 0.1 * length,
                                 (joints[-1] - joints[0]).normalized(), pole_parent, PALETTE_CONTROL,
                                 naming.COLLECTION_CONTROLS))
        if options.pole_line:
            # A thin line from the knee or elbow to the pole, so animators see where the pole is.
            line = new_name(middle, naming.TAG_POLE_LINE)
            knee = joints[len(chain) // 2]
            new_bones.append(NewBone(ROLE_POLE_LINE, line, knee, position, (joints[-1] - joints[0]).normalized(),
                                     middle, PALETTE_CONTROL, naming.COLLECTION_MECHANISM))
            extra_constraints.append(ConstraintPlan(line, "STRETCH_TO", CONSTRAINT_POLE_LINE, pole, driven=False))
        if options.pole_angle_auto:
            root = skeleton[chain[0]]
            root_edit = edited.get(chain[0])
            root_head, root_tail = (root_edit.head, root_edit.tail) if root_edit else (root.head, root.tail)
            root_x = _rest_x_axis(root, root_edit)
            pole_angle = geometry.pole_angle(root_head, root_tail, root_x, joints[-1], position)

    constraints = [ConstraintPlan(
        owner=last, kind="IK", name=CONSTRAINT_IK, subtarget=target, pole_subtarget=pole or "",
        # Stretch is always allowed here: how far each bone stretches is its ik_stretch,
        # which the handle's "stretch" drives (0: not at all).
        settings=(("chain_count", len(chain)), ("pole_angle", pole_angle), ("iterations", options.iterations),
                  ("use_stretch", True), ("use_tail", True), ("use_rotation", options.use_rotation)),
    ), reach_limit, *extra_constraints, *roll_constraints]
    clone = None
    if extremity:
        clone = new_name(extremity, naming.TAG_CLONE)
        bone = skeleton[extremity]
        new_bones.append(NewBone(ROLE_CLONE, clone, bone.head, bone.tail, bone.z_axis, follows, PALETTE_CLONE,
                                 naming.COLLECTION_MECHANISM))
        # An extremity whose head is off the chain's end would swing about it as the
        # last bone turns: pin its head too, so it stays planted.
        pinned = (bone.head - joints[-1]).length > 1e-4 * length
        constraints.extend(_copy_constraints(extremity, clone, options.copy_mode, pinned))
    if toe_clone is not None:
        toe, toe_clone_name = toe_clone
        constraints.append(ConstraintPlan(toe, "COPY_ROTATION", foot_roll.CONSTRAINT_TOE, toe_clone_name,
                                          (("owner_space", "POSE"), ("target_space", "POSE"))))

    return LimbPlan(chain=chain, extremity=extremity, side=side, handle=handle, pole=pole, clone=clone,
                    handle_parent=handle_parent, pole_angle=pole_angle, bend_direction=direction,
                    straight=straight, new_bones=tuple(new_bones), bone_edits=tuple(edited.values()),
                    constraints=tuple(constraints), notes=tuple(notes))


def _foot_roll(skeleton: Skeleton, last: str, extremity: str | None, joints: list[Vector], length: float,
               handle: str, new_name: Callable[[str, str], str], new_bones: list[NewBone],
               constraints: list[ConstraintPlan]) -> tuple[str, tuple[str, str] | None]:
    """Plan the reverse foot; returns the ball pivot (what the IK target and clone follow) and the
    toe with its clone, when the foot has a toe."""
    if extremity is None:
        raise RigError("has no foot below it, so Foot Roll has nothing to roll", bone=last,
                       hint="Set the extremity to the foot, or turn Foot Roll off.")
    foot = skeleton[extremity]
    children = sorted(skeleton.children(extremity), key=lambda child: (not child.connected, child.name))
    toe = children[0] if children else None
    points = foot_roll.foot_points(joints[-1], foot.head, foot.tail, (toe.name, toe.head, toe.tail) if toe else None,
                                   skeleton.up, extremity)
    roll = foot_roll.plan_foot_roll(points, extremity, handle, 0.08 * length, new_name)
    for role, name, head, tail, z_axis, parent in roll.bones:
        control = role == foot_roll.ROLE_ROLL
        new_bones.append(NewBone(role, name, head, tail, z_axis, parent,
                                 PALETTE_CONTROL if control else PALETTE_MECHANISM,
                                 naming.COLLECTION_CONTROLS if control else naming.COLLECTION_MECHANISM,
                                 hidden=not control))
    constraints.extend(ConstraintPlan(owner, kind, name, target, settings, driven=False)
                       for owner, kind, name, target, settings in roll.constraints)
    if toe is None:
        return roll.ball, None
    clone = new_name(toe.name, naming.TAG_CLONE)
    new_bones.append(NewBone(foot_roll.ROLE_TOE_CLONE, clone, toe.head, toe.tail, toe.z_axis, roll.tip, PALETTE_CLONE,
                             naming.COLLECTION_MECHANISM))
    return roll.ball, (toe.name, clone)


def _rest_x_axis(bone: BoneInfo, edit: BoneEdit | None) -> Vector:
    """The bone's X axis at rest, after its edit if it has one (Blender's X is Y cross Z)."""
    if edit is None:
        return bone.x_axis
    return geometry.cross((edit.tail - edit.head).normalized(), edit.z_axis)


def _copy_constraints(extremity: str, clone: str, mode: str, pinned: bool) -> list[ConstraintPlan]:
    # Pose (armature) space, not world space: world-space copies shear under a
    # non-uniformly scaled armature object.
    pose_space = (("owner_space", "POSE"), ("target_space", "POSE"))
    if mode == "TRANSFORMS":
        return [ConstraintPlan(extremity, "COPY_TRANSFORMS", CONSTRAINT_COPY_TRANSFORMS, clone, pose_space)]
    plans = [ConstraintPlan(extremity, "COPY_ROTATION", CONSTRAINT_COPY_ROTATION, clone, pose_space)]
    if pinned:
        plans.insert(0, ConstraintPlan(extremity, "COPY_LOCATION", CONSTRAINT_COPY_LOCATION, clone, pose_space))
    if mode == "ROTATION_SCALE":
        plans.append(ConstraintPlan(extremity, "COPY_SCALE", CONSTRAINT_COPY_SCALE, clone, pose_space))
    return plans


def _check_options(options: LimbOptions, last: str) -> None:
    if options.chain_length > MAX_CHAIN_BONES:
        raise RigError(f"a chain of {options.chain_length} bones is longer than Blender's IK allows "
                       f"({MAX_CHAIN_BONES})", bone=last, hint=f"Set the chain length to {MAX_CHAIN_BONES} or less.")
    check(options, last)


def _axis_words(direction: Vector) -> str:
    axis = max(range(3), key=lambda i: abs(direction[i]))
    return ("-" if direction[axis] < 0 else "+") + "XYZ"[axis]

