"""A pose without keys, kept through a build and a removal: the IK controls put on it.

Importers pose a character's bones where the file's nodes stand away from their bind pose (a
glTF's node transforms, an FBX's bind pose), and a user may pose one by hand and never key it.
No key moves such a limb, so nothing bakes it; left at rest, its new controls would pull the
foot or hand back to where it rests and the character would change at the click. Instead each
such limb's controls are snapped onto the pose it shows (as Snap IK to FK puts them, unkeyed).
Where the build gives its chain bones other rests (a pre-bend, Fix Bone Orientation) their own
pose is first expressed on the new rests, so each bone still deforms as it did; Remove does the
same when the rests come back.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

import bpy
from mathutils import Matrix, Vector

from ..core import geometry, joints
from ..core.errors import RigError
from ..core.geometry import turn_degrees
from ..core.model import bending_indexes
from ..core.notes import warning
from ..limb.options import LimbOptions
from ..limb.plan import LimbPlan
from . import records, snap
from .animation import bone_of_path, fcurve_owners
from .motion_read import limb_bones, to_prebend

# How far an evaluated bone may stand from its rest before its limb counts as posed: far below what
# anyone sees, well above single precision's noise.
POSED_DISTANCE = 1e-5  # of the chain's length
POSED_DEGREES = 1e-3
# Each pose channel at rest (Blender's defaults), as ``foreach_get`` reads it: a bone with another value in
# any of them may stand off its rest (whichever its rotation mode reads). Read as arrays: ``matrix_basis``,
# made for every bone, cost ten times as much.
_REST_CHANNELS = (("location", array("f", [0.0] * 3)), ("scale", array("f", [1.0] * 3)),
                  ("rotation_quaternion", array("f", [1.0, 0.0, 0.0, 0.0])), ("rotation_euler", array("f", [0.0] * 3)),
                  ("rotation_axis_angle", array("f", [0.0, 0.0, 1.0, 0.0])))


@dataclass
class Posed:
    """The limbs posed without keys (indexes of the build's plans), and their chains' poses and rests before it."""

    indexes: list[int] = field(default_factory=list)
    poses: dict[str, Matrix] = field(default_factory=dict)
    rests: dict[str, Matrix] = field(default_factory=dict)


def posed_still(obj: bpy.types.Object, plans: Sequence[LimbPlan], options: Sequence[LimbOptions],
                modes: Sequence[str], rebuilt: set[int], stacks: Collection[str]) -> Posed:
    """Before the build: the new limbs that keep their motion (``animation`` not IGNORE) but no key moves
    (``modes`` IGNORE), whose chain or extremity stands away from its rest in the pose shown now. ``stacks``:
    the bones that have constraints (``checks.constraint_stacks``)."""
    candidates = [index for index, (chosen, mode) in enumerate(zip(options, modes))
                  if index not in rebuilt and chosen.animation != "IGNORE" and mode == "IGNORE"]
    if not _may_stand_off_rest(obj, [name for index in candidates for name in limb_bones(plans[index])], stacks):
        return Posed()
    shown = snap.evaluated_pose(obj)
    bones = obj.data.bones
    found = Posed(poses=shown)
    for index in candidates:
        chain = plans[index].chain
        length = sum(bones[name].length for name in chain)
        if any(_apart(bones[name].matrix_local, shown[name], length) for name in limb_bones(plans[index])):
            found.indexes.append(index)
            found.rests.update((name, bones[name].matrix_local.copy()) for name in chain)
    return found


def _may_stand_off_rest(obj: bpy.types.Object, names: Iterable[str], stacks: Collection[str]) -> bool:
    """Whether any bone has a pose of its own, or any of ``names`` or the bones above them a constraint (one of
    ``stacks``); else each stands at its rest, and nothing needs evaluating. Every bone's pose is read in a few
    calls; each bone is asked once, as limbs hanging along a spine share their ancestors (a creature's legs:
    asked again for every limb, it grew with the square of them)."""
    pose_bones = obj.pose.bones
    count = len(pose_bones)
    for attribute, rest in _REST_CHANNELS:
        values = array("f", bytes(4 * len(rest) * count))
        pose_bones.foreach_get(attribute, values)
        at_rest = rest * count
        # Compared as bytes first, at memory speed: compared as floats, element by element, the arrays of a
        # 159-bone metarig took 70 microseconds. Equal bytes are equal floats; a -0.0 is not the bytes of 0.0
        # but is the float, so unequal bytes are compared again as floats.
        if values.tobytes() != at_rest.tobytes() and values != at_rest:
            return True
    if not stacks:
        return False
    bones, seen = obj.data.bones, set()
    for name in names:
        bone = bones[name]
        while bone is not None and (key := bone.name) not in seen:
            seen.add(key)
            if key in stacks:
                return True
            bone = bone.parent
    return False


def bent_by_pose(obj: bpy.types.Object, plans: Sequence[LimbPlan], options: Sequence[LimbOptions],
                 posed: Posed) -> set[int]:
    """The posed limbs, straight at rest and to be pre-bent, that their pose bends: IK bends them as the
    pose does, so they keep their rests (as a motion that bends a chain keeps it unbent)."""
    found = set()
    for index in posed.indexes:
        limb_plan = plans[index]
        if not to_prebend(limb_plan, options[index]):
            continue
        chain = limb_plan.chain
        reach = Vector((0.0, obj.data.bones[chain[-1]].length, 0.0))
        points = [posed.poses[name].translation for name in chain] + [posed.poses[chain[-1]] @ reach]
        bending = bending_indexes(chain, {hinge.bone for hinge in limb_plan.hinges if hinge.axis == joints.IN_LINE})
        if geometry.bend_direction([points[number] for number in bending]) is not None:
            found.add(index)
    return found


def _apart(rest: Matrix, pose: Matrix, length: float) -> bool:
    return ((rest.translation - pose.translation).length > POSED_DISTANCE * length
            or turn_degrees(rest, pose) > POSED_DEGREES)


def keep_pose(obj: bpy.types.Object, plans: Sequence[LimbPlan], posed: Posed, notes: dict[int, list[str]]) -> None:
    """After the constraint stage: each posed limb's chain shows its pose on its new rests, and its
    controls are put onto that pose, unkeyed; where its IK cannot show that pose (a constraint of the
    user's on a control), a warning says so and what to do."""
    for index in posed.indexes:
        chain = plans[index].chain
        follow_rests(obj, chain, {edit.name for edit in plans[index].bone_edits}, posed.poses, posed.rests)
        try:
            snap.snap_ik_to_fk(obj, records.limb_of(obj, chain[-1]))
        except RigError as error:
            notes.setdefault(index, []).append(warning(
                f"{chain[-1]} was posed (not keyed) and its IK controls could not be put on that pose: "
                f"{error.problem}; pose it again with its IK controls, or use Snap IK to FK"))
            continue
        notes.setdefault(index, []).append(
            f"{chain[-1]} was posed (not keyed): its IK controls were put on that pose, so it shows as it did")


def follow_rests(obj: bpy.types.Object, chain: Sequence[str], turned: Collection[str], poses: dict[str, Matrix],
                 rests: dict[str, Matrix]) -> None:
    """Give each bone of ``chain`` (root first) whose rest changed from ``rests``' (those named in ``turned``),
    and each below one in the chain, the basis that deforms as its pose ``poses`` did on that rest (a pose
    times its rest's inverse is what moves the mesh). The chain's parent keeps its pose."""
    bones = obj.data.bones
    wanted: dict[str, Matrix] = {}
    for name in chain:
        bone = bones[name]
        parent = bone.parent
        if name not in turned and (parent is None or parent.name not in wanted):
            continue
        wanted[name] = poses[name] @ rests[name].inverted() @ bone.matrix_local
        parent_pose = None if parent is None else wanted.get(parent.name, poses[parent.name])
        obj.pose.bones[name].matrix_basis = snap.local_from_pose(obj, name, wanted[name], parent_pose)


def held_pose(obj: bpy.types.Object, chain: Sequence[str], turned: Collection[str],
              motion_kept: bool) -> Callable[[], None]:
    """For Remove, before ``turned`` chain bones get their rests back: what, called after, gives the chain
    the pose it shows now (``follow_rests``), where no key holds that pose (no motion is kept, no key is on
    the chain); else nothing."""
    keyed = {bone_of_path(curve.data_path) for owner in fcurve_owners(obj) for curve in owner.fcurves}
    if motion_kept or not turned or keyed.intersection(chain):
        return lambda: None
    poses = fk_poses(obj, chain)
    rests = {name: obj.data.bones[name].matrix_local.copy() for name in chain}
    return lambda: follow_rests(obj, chain, turned, poses, rests)


def fk_poses(obj: bpy.types.Object, chain: Sequence[str]) -> dict[str, Matrix]:
    """The armature-space poses ``chain`` (root first) shows from its own transforms, its constraints left
    out, under its parent's evaluated pose; with the parent's, for ``follow_rests``."""
    shown = snap.evaluated_pose(obj)
    bones = obj.data.bones
    poses: dict[str, Matrix] = {}
    for name in chain:
        bone = bones[name]
        parent = bone.parent
        if parent is not None and parent.name not in poses:
            poses[parent.name] = shown[parent.name]
        poses[name] = bone.convert_local_to_pose(
            obj.pose.bones[name].matrix_basis, bone.matrix_local,
            parent_matrix=poses[parent.name] if parent is not None else Matrix.Identity(4),
            parent_matrix_local=parent.matrix_local if parent is not None else Matrix.Identity(4))
    return poses
