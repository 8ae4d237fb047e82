"""Exact snapping between IK and FK, on evaluated poses.

All matrices are armature space (``PoseBone.matrix``), so the armature object's
own transform never enters. Runs in Object or Pose mode; no mode switch.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
from mathutils import Euler, Matrix, Quaternion, Vector

from .. import parts as limb_parts
from ..core.geometry import rotation_property
from ..parts.handle import IK_FK, ROLE_HANDLE
from ..parts.pole_line import ROLE_POLE_LINE
from . import records, snap_guard, soft_measure, solver, switches
from .animation import action_frame, existing_fcurve


def evaluated_pose(obj: bpy.types.Object) -> dict[str, Matrix]:
    """Armature-space pose matrices of ``obj`` after a depsgraph update."""
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return {bone.name: bone.matrix.copy() for bone in evaluated.pose.bones}


def local_from_pose(obj: bpy.types.Object, name: str, pose: Matrix, parent_pose: Matrix | None) -> Matrix:
    """The basis (local) matrix that gives bone ``name`` the armature-space ``pose``."""
    bone = obj.data.bones[name]
    parent = bone.parent
    return bone.convert_local_to_pose(
        pose, bone.matrix_local,
        parent_matrix=parent_pose if parent is not None else Matrix.Identity(4),
        parent_matrix_local=parent.matrix_local if parent is not None else Matrix.Identity(4),
        invert=True,
    )


# A location (in bone lengths) or a scale this close to rest is rest, as single precision leaves it.
_IDLE = 1e-5


def key_pose(obj: bpy.types.Object, names: list[str], frame: int) -> None:
    """Key the bones' location, rotation (in their rotation mode, written as their keys play it there) and
    scale at ``frame``: a location of 0 (a connected bone's, which Blender ignores, always) and a scale of 1,
    to single precision, only where keyed already, so no F-curve holds what plays anyway."""
    for name in names:
        pose_bone = obj.pose.bones[name]
        played = played_values(obj, pose_bone, rotation_property(pose_bone.rotation_mode), frame)
        if played is not None:
            compatible_rotation(pose_bone, played)
        bone = obj.data.bones[name]
        for path in ("location", rotation_property(pose_bone.rotation_mode), "scale"):
            idle = (path == "location" and (bone.use_connect or pose_bone.location.length < _IDLE * bone.length)
                    or path == "scale" and (pose_bone.scale - Vector((1.0, 1.0, 1.0))).length < _IDLE)
            if not idle or existing_fcurve(obj, pose_bone.path_from_id(path)) is not None:
                pose_bone.keyframe_insert(path, frame=frame, group=name)


def played_values(obj: bpy.types.Object, pose_bone: bpy.types.PoseBone, path: str, frame: float) -> list[float] | None:
    """The values bone property ``path`` plays on the scene's ``frame`` by the keys of the active action (its
    current value for a channel not keyed); None where no channel is keyed."""
    full, at = pose_bone.path_from_id(path), action_frame(obj, frame)
    current = list(getattr(pose_bone, path))
    curves = [existing_fcurve(obj, full, index) for index in range(len(current))]
    if all(curve is None for curve in curves):
        return None
    return [curve.evaluate(at) if curve is not None else value for curve, value in zip(curves, current)]


def compatible_rotation(pose_bone: bpy.types.PoseBone, played: list[float]) -> None:
    """Write the bone's rotation as the turn nearest ``played`` (its keys' values there): an Euler turn wound
    past 180 degrees, a quaternion of the sign its keys have. Keyed in Blender's own form, the key before
    would interpolate toward it the long way round."""
    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        if pose_bone.rotation_quaternion.dot(Quaternion(played)) < 0.0:
            pose_bone.rotation_quaternion = pose_bone.rotation_quaternion * -1.0
    elif mode != "AXIS_ANGLE":
        pose_bone.rotation_euler = pose_bone.rotation_euler.to_matrix().to_euler(mode, Euler(played, mode))


def snap_fk_to_ik(obj: bpy.types.Object, limb, *, keyframe: bool = False, frame: int = 0) -> list[str]:
    """Copy the visual IK pose into the chain's (and extremity's) own transforms.

    Afterwards switching the limb to FK shows the same pose. Returns the bones changed.
    """
    parts = records.require(obj, limb)
    switches.check(obj, parts, restored=(IK_FK,))
    names = parts.chain + ([parts.extremity] if parts.extremity else [])
    # And any other bone of the user's IK Rigger's constraints move (the toe, under a foot roll).
    names += sorted({owner for owner, _ in parts.constraints} - set(names) - set(parts.made.values()))
    guard = snap_guard.guard(obj, parts, names, names)
    pose = evaluated_pose(obj)
    for name in names:
        parent = obj.data.bones[name].parent
        obj.pose.bones[name].matrix_basis = local_from_pose(obj, name, pose[name],
                                                             pose[parent.name] if parent else None)
    if guard is not None:
        _check_fk(obj, parts, guard, pose, names)
    if keyframe:
        key_pose(obj, names, frame)
    return names


def _shown_in(obj: bpy.types.Object, parts: records.Parts, ik_fk: float) -> dict[str, Matrix]:
    """The evaluated pose with the limb's switch at ``ik_fk`` (0 FK, 1 IK); the switch given back after."""
    blend = records.ik_fk(obj, parts)
    records.set_ik_fk(obj, parts, ik_fk)
    try:
        return evaluated_pose(obj)
    finally:
        records.set_ik_fk(obj, parts, blend)


def _check_fk(obj: bpy.types.Object, parts: records.Parts, guard: snap_guard.Guard, ik: dict[str, Matrix],
              names: list[str]) -> None:
    """Refuse an FK snap the user's constraints on the chain keep FK from showing (``snap_guard``)."""
    length = sum(obj.data.bones[name].length for name in parts.chain)
    guard.check(ik, _shown_in(obj, parts, 0.0), names, length, "Snap FK to IK")


@dataclass
class Snap:
    """What the parts' ``snap_to_fk`` hooks read: the limb, its FK pose, where the FK chain ends and
    where to send IK's target (``aim``) so it ends there."""

    obj: bpy.types.Object
    parts: records.Parts
    ik: bpy.types.Constraint
    fk: dict[str, Matrix]
    end: Vector
    # Where the IK target is sent so the chain ends at ``end``: ``end`` itself, then moved by what
    # Blender's IK, solving in single precision, left over (``_refine``).
    aim: Vector
    # A hidden chain's poses that show the FK pose (``solver.joint_poses``); none without one.
    joint_poses: list[Matrix]

    @property
    def end_point(self) -> Vector:
        """Where the chain ends in its last bone's space (``solver.end_point``)."""
        return solver.end_point(self.obj, self.parts)

    @property
    def length(self) -> float:
        """The FK chain's length, joint to joint."""
        joints = _joints(self, self.fk)
        return sum((b - a).length for a, b in zip(joints, joints[1:]))

    @property
    def root(self) -> Matrix:
        """Where IK's root stands on the FK pose: the chain's first bone, or its hidden chain's."""
        return self.joint_poses[0] if self.joint_poses else self.fk[self.parts.chain[0]]

    def evaluate(self) -> None:
        """Let what the hooks set so far land (a pole hanging from the handle)."""
        evaluated_pose(self.obj)

    def unconstrained(self, name: str) -> Matrix:
        """Bone ``name``'s pose in the FK evaluation without its own constraints: its basis on its parent's
        pose. The stretch target's Limit Distance holds it in where the handle was left far off, which
        is not where it stands from the handle once the handle is snapped."""
        bone = self.obj.data.bones[name]
        parent = bone.parent
        return bone.convert_local_to_pose(
            self.obj.pose.bones[name].matrix_basis, bone.matrix_local,
            parent_matrix=self.fk[parent.name] if parent is not None else Matrix.Identity(4),
            parent_matrix_local=parent.matrix_local if parent is not None else Matrix.Identity(4))


def snap_ik_to_fk(obj: bpy.types.Object, limb, *, keyframe: bool = False, frame: int = 0) -> list[str]:
    """Put the IK controls where the FK pose is, part by part: the handle at the FK chain's end
    turned like the extremity, the pole into its bend plane; then the handle sent on by what
    Blender's IK leaves over (``_refine``).

    Switching the limb to IK then shows the same pose. Returns the bones changed.
    """
    # A control deleted by hand (the pole) would leave the IK playing another pose than the one snapped to.
    parts = records.require(obj, limb, ROLE_HANDLE, ik=True, every=True, spared=(ROLE_POLE_LINE,))
    switches.check(obj, parts, restored=(IK_FK,))
    soft_measure.check(obj, parts, "Snap IK to FK")
    ik = records.ik_constraint(obj, parts)
    # The controls the snap sets and those hanging from them, the chain IK moves and its extremity.
    moved = [*parts.made.values(), *parts.chain, *([parts.extremity] if parts.extremity else [])]
    guard = snap_guard.guard(obj, parts, moved, parts.made.values())
    blend = records.ik_fk(obj, parts)
    fk = _shown_in(obj, parts, 0.0)
    joints = solver.joint_poses(obj, parts, [[fk[name] for name in parts.chain]])[0] if parts.solver else []
    end = solver.chain_ends(obj, parts, [fk[parts.chain[-1]]], joints[-1:])[0]
    snap = Snap(obj, parts, ik, fk, end, end.copy(), joints)
    changed = _place(snap)
    _refine(snap, blend)
    if guard is not None:
        _check_ik(snap, guard)
    if keyframe:
        key_pose(obj, changed, frame)
    return changed


# Rounds of correcting the aim by what IK left over: the first takes the Godot robot's legs from up to
# 1.2e-4 of the chain to about 3e-5, later ones gain little (single-precision noise); a round that does
# not shrink what is left over is undone.
REFINE_ROUNDS = 3


def _place(snap: Snap) -> list[str]:
    """Every part's controls placed on the FK pose, IK sent to ``snap.aim``; the bones changed."""
    return [name for part in limb_parts.with_hook("snap_to_fk") for name in part.snap_to_fk(snap)]


def _joints(snap: Snap, pose: dict[str, Matrix]) -> list[Vector]:
    """The chain's joints in ``pose``: each bone's head, then where the chain ends."""
    chain = snap.parts.chain
    return [pose[name].translation for name in chain] + [pose[chain[-1]] @ snap.end_point]


def _miss(snap: Snap) -> Vector:
    """How far IK's end is from where it would be with each segment of the chain as long as IK shows
    it and turned as in FK. Blender's IK solves in single precision and stops short, by up to a few 1e-5 of the
    chain, and its segments come out a few 1e-5 longer or shorter than FK's: near straight, that
    much along the chain moves a knee 1e-4 of the chain and turns the thigh 0.02 degree."""
    records.set_ik_fk(snap.obj, snap.parts, 1.0)
    shown = _joints(snap, evaluated_pose(snap.obj))
    fk = _joints(snap, snap.fk)
    wanted = shown[0].copy()
    for index in range(len(fk) - 1):
        wanted += (fk[index + 1] - fk[index]).normalized() * (shown[index + 1] - shown[index]).length
    return wanted - shown[-1]


def _check_ik(snap: Snap, guard: snap_guard.Guard) -> None:
    """Refuse an IK snap the user's constraints on the controls or the chain keep IK from showing (``snap_guard``)."""
    names = [*snap.parts.chain, *([snap.parts.extremity] if snap.parts.extremity else [])]
    guard.check(snap.fk, _shown_in(snap.obj, snap.parts, 1.0), names, snap.length, "Snap IK to FK")


def _refine(snap: Snap, blend: float) -> None:
    """Send IK's target on by what IK left over, while that shrinks, so IK shows the FK pose within
    1e-4 of the chain and 0.01 degree; the switch is left at ``blend``."""
    try:
        best = (_miss(snap), snap.aim.copy())
        for _ in range(REFINE_ROUNDS):
            if best[0].length < 1e-7 * snap.length:
                break
            snap.aim = best[1] + best[0]
            _place(snap)
            miss = _miss(snap)
            if miss.length >= best[0].length:
                snap.aim = best[1]
                _place(snap)
                break
            best = (miss, snap.aim.copy())
    finally:
        records.set_ik_fk(snap.obj, snap.parts, blend)
