"""Armature-space poses worked out from the active action's keys, without playing the frames.

Reading a motion by evaluating the scene on each frame costs what playing it costs. Where
the bones read, and the bones above them, move by their own keys alone (no constraint,
driver or NLA strip has a say, every bone inherits its parent's whole transform), Blender's
pose is a product this module computes for every frame at once: each F-curve evaluated
where Blender evaluates it, each bone's local matrix made as Blender makes it (location,
then rotation in the bone's mode, then scale), and the parent's pose times the rest
offset times that. ``keys.Recording`` still checks the result against Blender's own
evaluation on a few frames before it takes it.
"""

from __future__ import annotations

from collections.abc import Sequence

import bpy
import numpy as np
from mathutils import Matrix

from ..core.geometry import POSE_CHANNELS, rotation_property
from .animation import bone_of_path, fcurve_owners
from .checks import IK_TYPES, moved_by
from .clips import enabled
from .skeleton import read_skeleton

# The channels a pose bone's matrix is made of.
# A constraint's settings that turn it on or off.
_SWITCHES = (".mute", ".enabled")


def _with_ancestors(obj: bpy.types.Object, names: Sequence[str]) -> list[str]:
    """``names`` and every bone above them, each parent before its children."""
    found: dict[str, None] = {}
    for name in names:
        line = []
        bone = obj.data.bones[name]
        while bone is not None and bone.name not in found:
            line.append(bone.name)
            bone = bone.parent
        found.update((each, None) for each in reversed(line))
    return list(found)


def _moved_by_ik(obj: bpy.types.Object) -> set[str]:
    """The bones an enabled IK or Spline IK constraint moves (its chain, as Blender's solvers count it)."""
    skeleton = read_skeleton(obj)
    return {name for pose_bone in obj.pose.bones for constraint in pose_bone.constraints
            if constraint.type in IK_TYPES and enabled(constraint)
            for name in moved_by(skeleton, pose_bone.name, constraint)}


def _harmless(path: str) -> bool:
    """True for a bone's setting that moves it only through a constraint (an influence, the IK
    stretch): a bone read from keys has no constraint enabled, and nothing may enable one."""
    setting = path.split('"]', 1)[-1]
    return setting.startswith(".ik_") or (setting.startswith(".constraints[") and not setting.endswith(_SWITCHES))


def _moves(path: str, bones: set[str]) -> bool:
    """True when animating ``path`` of the armature object may move one of ``bones`` (or any bone,
    through the armature's settings)."""
    return path.startswith("data.") or (bone_of_path(path) in bones and not _harmless(path))


def _animation_reason(obj: bpy.types.Object, bones: set[str]) -> str | None:
    """Why the object's animation is more than its active action's own keys, if it is."""
    data = obj.animation_data
    if data is None:
        return None
    if data.use_tweak_mode or (data.use_nla and any(not track.mute and len(track.strips) for track in data.nla_tracks)):
        return "NLA strips play"
    if data.action is not None and (data.action_blend_type != "REPLACE" or data.action_influence != 1.0):
        return "the action is blended"
    action = data.action
    if action is not None and hasattr(action, "layers") and len(action.layers) > 1:
        return "the action has layers"
    if any(_moves(curve.data_path, bones) for curve in data.drivers):
        return "drivers move a bone"
    armature = obj.data.animation_data
    if armature is not None and (armature.action is not None or len(armature.drivers)):
        return "the armature's own settings are animated"
    return None


def unsupported(obj: bpy.types.Object, names: Sequence[str]) -> str | None:
    """Why the poses of ``names`` cannot be worked out from keys alone, or None when they can."""
    if obj.data.pose_position != "POSE":
        return "the armature shows its rest position"
    scene = bpy.context.scene
    if scene.render.frame_map_old != scene.render.frame_map_new:
        return "the scene remaps time"
    bones = set(_with_ancestors(obj, names))
    reason = _animation_reason(obj, bones)
    if reason is not None:
        return reason
    if bones & _moved_by_ik(obj):
        return "an IK constraint moves a bone"
    for name in bones:
        bone = obj.data.bones[name]
        if any(enabled(constraint) for constraint in obj.pose.bones[name].constraints):
            return f"{name} has a constraint"
        if not (bone.use_inherit_rotation and bone.inherit_scale == "FULL" and bone.use_local_location
                and not bone.use_relative_parent):
            return f"{name} does not inherit its parent's whole transform"
    return None


def _curves(obj: bpy.types.Object, bones: set[str]) -> dict[tuple[str, str], dict[int, bpy.types.FCurve]] | None:
    """The F-curves keying the bones' transforms, per (bone, channel) and index; None when one of
    them would not play as ``FCurve.evaluate`` says (muted, empty, broken) or keys the rotation mode."""
    found: dict[tuple[str, str], dict[int, bpy.types.FCurve]] = {}
    for owner in fcurve_owners(obj):
        for curve in owner.fcurves:
            if curve.data_path.startswith("data."):
                return None
            bone = bone_of_path(curve.data_path)
            if bone not in bones:
                continue
            channel = curve.data_path.rsplit(".", 1)[-1]
            if channel == "rotation_mode" or curve.data_path.endswith(_SWITCHES):
                return None
            if channel not in POSE_CHANNELS:
                continue
            group = curve.group
            if curve.mute or (group is not None and group.mute) or not curve.is_valid or not len(curve.keyframe_points):
                return None
            found.setdefault((bone, channel), {})[curve.array_index] = curve
    return found


def _channel(pose_bone: bpy.types.PoseBone, channel: str, curves: dict[int, bpy.types.FCurve],
             frames: Sequence[int]) -> np.ndarray:
    """A channel's values on each frame (frames by components): keyed ones evaluated, the others as they stand."""
    values = np.tile(np.array(getattr(pose_bone, channel), dtype=np.float64), (len(frames), 1))
    for index, curve in curves.items():
        if index < values.shape[1]:
            values[:, index] = list(map(curve.evaluate, frames))
    return values


def _rotations(mode: str, values: np.ndarray) -> np.ndarray:
    """Rotation matrices (frames by 3 by 3) as Blender makes them from a pose bone's channel in ``mode``."""
    count = len(values)
    if mode == "QUATERNION":
        length = np.linalg.norm(values, axis=1)
        # A quaternion of no length turns half a turn about X in Blender (its normalize_qt's choice).
        unit = np.where(length[:, None] > 0.0, values / np.where(length > 0.0, length, 1.0)[:, None],
                        np.array([0.0, 1.0, 0.0, 0.0]))
        return _quaternion_matrices(unit)
    if mode == "AXIS_ANGLE":
        angle, axis = values[:, 0], values[:, 1:]
        length = np.linalg.norm(axis, axis=1)
        still = length == 0.0
        axis = axis / np.where(still, 1.0, length)[:, None]
        half = np.where(still, 0.0, angle) / 2.0
        return _quaternion_matrices(np.column_stack((np.cos(half), axis * np.sin(half)[:, None])))
    result = np.tile(np.eye(3), (count, 1, 1))
    for axis in mode:  # an Euler order names the axes in the order they turn
        index = "XYZ".index(axis)
        cosine, sine = np.cos(values[:, index]), np.sin(values[:, index])
        turn = np.tile(np.eye(3), (count, 1, 1))
        first, second = [other for other in range(3) if other != index]
        sign = -1.0 if index == 1 else 1.0  # Y's turn keeps the right-handed order Z, X
        turn[:, first, first] = cosine
        turn[:, second, second] = cosine
        turn[:, first, second] = -sign * sine
        turn[:, second, first] = sign * sine
        result = turn @ result
    return result


def _quaternion_matrices(unit: np.ndarray) -> np.ndarray:
    w, x, y, z = unit.T
    return np.stack((
        np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)), axis=1),
        np.stack((2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)), axis=1),
        np.stack((2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)), axis=1),
    ), axis=1)


def _locals(pose_bone: bpy.types.PoseBone, curves: dict[tuple[str, str], dict[int, bpy.types.FCurve]],
            frames: Sequence[int]) -> np.ndarray:
    """The bone's local (basis) matrices on each frame: location (none on a connected bone, as
    Blender keeps keys from breaking a chain), then rotation, then scale."""
    name, mode = pose_bone.name, pose_bone.rotation_mode

    def values(channel: str) -> np.ndarray:
        return _channel(pose_bone, channel, curves.get((name, channel), {}), frames)

    rotation = values(rotation_property(mode))
    result = np.tile(np.eye(4), (len(frames), 1, 1))
    result[:, :3, :3] = _rotations(mode, rotation) * values("scale")[:, None, :]
    if not pose_bone.bone.use_connect:
        result[:, :3, 3] = values("location")
    return result


def poses(obj: bpy.types.Object, frames: Sequence[int], names: Sequence[str]) -> dict[str, list[Matrix]] | None:
    """The armature-space poses of ``names`` on each of ``frames``, as playing them would show,
    worked out from the keys; None when something else than keys has a say (``unsupported``)."""
    if unsupported(obj, names) is not None:
        return None
    order = _with_ancestors(obj, names)
    curves = _curves(obj, set(order))
    if curves is None:
        return None
    bones = obj.data.bones
    computed: dict[str, np.ndarray] = {}
    for name in order:
        bone = bones[name]
        rest = np.array(bone.matrix_local, dtype=np.float64)
        local = _locals(obj.pose.bones[name], curves, frames)
        if bone.parent is None:
            computed[name] = rest @ local
        else:
            offset = np.linalg.inv(np.array(bone.parent.matrix_local, dtype=np.float64)) @ rest
            computed[name] = computed[bone.parent.name] @ (offset @ local)
    return {name: [Matrix(pose) for pose in computed[name].tolist()] for name in names}
