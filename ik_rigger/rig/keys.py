"""Poses read and keys written in bulk: from the keys (or one scene evaluation per frame), one write per F-curve.

``Recording`` reads every chosen bone's armature-space matrix per frame; ``write_keys`` and
``key_transforms`` write a whole range per F-curve, logged in a ``Journal`` when given one,
never a ``keyframe_insert`` per bone per frame.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import bpy
import numpy as np
from mathutils import Matrix, Quaternion

from ..core.errors import RigError
from ..core.geometry import unevenness
from . import records, replay
from .animation import ensure_fcurve, existing_fcurve, fcurve_owners
from .asleep import asleep, bystanders
from .journal import Journal
from .scene_state import library_path
from .scene_time import keys_time

# Rest matrices closer than this, entry by entry, are the same rest.
_SAME_REST = 1e-7
# Below this, a pose's 3x3 part (its scale cubed) has no usable inverse in single precision.
_FLAT = 1e-12
# Poses worked out from keys agree with Blender's when this close, relative to the bone's length
# (and a tenth of it relative to its distance from the origin, which single precision blurs).
_AGREE = 1e-4
# Interpolation enum values, as foreach_set wants them.
_INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}
_ROTATION_PATHS = {"QUATERNION": ("rotation_quaternion", 4), "AXIS_ANGLE": ("rotation_axis_angle", 4)}


def _close(pose: Matrix, expected: Matrix, length: float) -> bool:
    if (pose.translation - expected.translation).length > _AGREE * (length + 0.1 * expected.translation.length):
        return False
    return all((pose.col[axis].xyz - expected.col[axis].xyz).length <= _AGREE * max(expected.col[axis].length, 1.0)
               for axis in range(3))


def evaluated_poses(obj: bpy.types.Object, frames: Sequence[int], names: Sequence[str],
                    progress: Callable[[int], None] | None = None, local: bool = False) -> dict[str, list[Matrix]]:
    """The armature-space poses of ``names`` on each of ``frames`` (``local``: the poses their keys and
    drivers set, each under its parent): one scene evaluation per frame, the current frame shown again
    afterwards."""
    pose_bones = obj.pose.bones
    indexes = [pose_bones.find(name) for name in names]
    poses: dict[str, list[Matrix]] = {name: [] for name in names}
    scene = bpy.context.scene
    current = scene.frame_current, scene.frame_subframe
    flat = [0.0] * (16 * len(pose_bones))
    try:
        # The frames evaluate the armature without the meshes it moves, which would cost far more; each
        # plays its own keys, where the poses read are keyed.
        with asleep(bystanders(obj, bpy.context.view_layer.objects)), keys_time(scene):
            for number, frame in enumerate(frames):
                scene.frame_set(frame)
                evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
                evaluated.pose.bones.foreach_get("matrix_basis" if local else "matrix", flat)
                for index, name in zip(indexes, names):
                    # Blender stores matrices column by column.
                    column = flat[16 * index:16 * index + 16]
                    poses[name].append(Matrix((column[0::4], column[1::4], column[2::4], column[3::4])))
                if progress is not None:
                    progress(number)
    finally:
        scene.frame_set(current[0], subframe=current[1])
    return poses


class Recording:
    """Armature-space pose matrices of chosen bones on each frame.

    Worked out from the keys (``replay``) where only keys move the bones and Blender's own
    evaluation agrees on the first, middle and last frames; else one evaluation per frame.
    ``from_keys`` says which.
    """

    def __init__(self, obj: bpy.types.Object, frames: Sequence[int], names: Iterable[str],
                 progress: Callable[[int], None] | None = None) -> None:
        self.frames = list(frames)
        wanted = set(names)
        self.names = [bone.name for bone in obj.pose.bones if bone.name in wanted]
        # The bones' rests as recorded: a build may change them (see follow_rests).
        self.rests = {name: obj.data.bones[name].matrix_local.copy() for name in self.names}
        replayed = replay.poses(obj, self.frames, self.names) if self.frames else None
        if replayed is not None and self._agrees(obj, replayed):
            self.from_keys, self.poses = True, replayed
            for number in range(len(self.frames)) if progress is not None else ():
                progress(number)
        else:
            self.from_keys, self.poses = False, evaluated_poses(obj, self.frames, self.names, progress)

    def _agrees(self, obj: bpy.types.Object, replayed: dict[str, list[Matrix]]) -> bool:
        """True when Blender's evaluation shows ``replayed`` on the first, middle and last frames,
        each bone within ``_AGREE`` and its axes within a ten-thousandth."""
        numbers = sorted({0, len(self.frames) // 2, len(self.frames) - 1})
        shown = evaluated_poses(obj, [self.frames[number] for number in numbers], self.names)
        bones = obj.data.bones
        return all(_close(replayed[name][number], shown[name][sample], bones[name].length)
                   for name in self.names for sample, number in enumerate(numbers))

    def check_scaled(self) -> None:
        """Refuse a recording with a bone scaled to 0 on a frame: its pose (and its children's) has
        no inverse, so no local pose of a control under it can be worked out. The first such bone in
        the hierarchy is named, which is the one keyed to 0 when its children only inherit it."""
        for number, frame in enumerate(self.frames):
            for name in self.names:
                if abs(self.poses[name][number].to_3x3().determinant()) < _FLAT:
                    raise RigError(f"is scaled to 0 on frame {frame}, so its motion cannot be baked onto IK "
                                   "controls (a pose scaled to 0 has no inverse)", bone=name,
                                   hint="Key a small scale such as 0.001 on that frame instead of 0, or build with "
                                   "Animation set to Leave Playing in FK or Ignore.")

    def uneven(self, names: Iterable[str], tolerance: float) -> tuple[list[int], float]:
        """The frames on which any bone of ``names`` recorded is scaled more along some axes than others
        or sheared (by its own keys or its parents'), beyond ``tolerance`` (``geometry.unevenness``),
        and the most uneven of them."""
        shown = [name for name in names if name in self.poses]
        found = [max((unevenness(self.poses[name][number]) for name in shown), default=0.0)
                 for number in range(len(self.frames))]
        return [frame for frame, amount in zip(self.frames, found) if amount > tolerance], max(found, default=0.0)

    def follow_rests(self, obj: bpy.types.Object) -> None:
        """Re-express the poses of the bones whose rest changed since they were recorded (Fix
        Bone Orientation, a pre-bend) so that each still deforms as it did: a pose times the old
        rest's inverse is what moves the mesh, so the pose on the new rest is the old pose
        times old rest inverse times new rest."""
        bones = obj.data.bones
        for name, rest in self.rests.items():
            now = bones[name].matrix_local
            if any(abs(now[row][column] - rest[row][column]) > _SAME_REST for row in range(4) for column in range(4)):
                change = rest.inverted() @ now
                self.poses[name] = [pose @ change for pose in self.poses[name]]
                self.rests[name] = now.copy()


def _action_for(obj: bpy.types.Object, journal: Journal | None) -> bpy.types.Action:
    """The action keys go into, made (and assigned) when the object has none."""
    if obj.animation_data is None:
        obj.animation_data_create()
    data = obj.animation_data
    if data.action is None:
        action = bpy.data.actions.new(f"{obj.name}Action")
        data.action = action
        if journal is not None:
            journal.data(lambda: _forget_action(obj, action))
    return data.action


def local_action(obj: bpy.types.Object, journal: Journal) -> str | None:
    """Before keys go into ``obj``'s action: one linked from a library is read-only (keys written there
    are lost on save), so the motion is kept in a local copy, assigned in its place (through the same
    slot), the linked action left as it is. Returns the note that says so, None when nothing changed."""
    data = obj.animation_data
    linked = data.action if data is not None else None
    if linked is None or linked.library is None:
        return None
    slot = getattr(data, "action_slot", None)
    identifier = slot.identifier if slot is not None else None
    local = linked.copy()
    data.action = local
    if identifier is not None and (data.action_slot is None or data.action_slot.identifier != identifier):
        data.action_slot = local.slots[identifier]

    def undo() -> None:
        data.action = linked
        if identifier is not None:
            data.action_slot = linked.slots[identifier]
        bpy.data.actions.remove(local)

    journal.data(undo)
    return (f"the action '{linked.name}' is linked from the library '{library_path(linked)}', which is read-only: kept "
            f"the motion in the local action '{local.name}', now the armature's, and left the linked one as it is")


def _forget_action(obj: bpy.types.Object, action: bpy.types.Action) -> None:
    if obj.animation_data is not None and obj.animation_data.action == action:
        obj.animation_data.action = None
    bpy.data.actions.remove(action)


# A key's fields as foreach_get/foreach_set read and write them: per key, how many values of which type.
_POINT_FIELDS = (("co", 2, np.float32), ("handle_left", 2, np.float32), ("handle_right", 2, np.float32),
                 ("interpolation", 1, np.int32), ("handle_left_type", 1, np.int32), ("handle_right_type", 1, np.int32))


def _snapshot_points(curve) -> dict[str, np.ndarray]:
    """Every key of ``curve``, field by field, in arrays (Blender copies those in bulk, not value by value)."""
    points = curve.keyframe_points
    saved: dict[str, np.ndarray] = {}
    for key, size, kind in _POINT_FIELDS:
        values = np.empty(len(points) * size, dtype=kind)
        points.foreach_get(key, values)
        saved[key] = values
    return saved


def _set_points(curve, saved: dict[str, np.ndarray]) -> None:
    points = curve.keyframe_points
    points.clear()
    points.add(len(saved["interpolation"]))
    for key, values in saved.items():
        points.foreach_set(key, values)
    curve.update()


def drop_range(curve, first: float, last: float) -> None:
    """Delete the keys between ``first`` and ``last``, keeping every other key exactly as it was."""
    if not len(curve.keyframe_points):
        return
    saved = _snapshot_points(curve)
    frames = saved["co"][0::2]
    keep = ~((frames >= first - 1e-3) & (frames <= last + 1e-3))
    if keep.all():
        return
    _set_points(curve, {key: values.reshape(len(frames), -1)[keep].ravel() for key, values in saved.items()})


def log_curve(obj: bpy.types.Object, curve, journal: Journal) -> None:
    """Log what gives ``curve`` of ``obj``'s active action back with the keys it has now, made again if removed."""
    path, index, group = curve.data_path, curve.array_index, curve.group.name if curve.group is not None else ""
    saved = _snapshot_points(curve)

    def undo() -> None:
        existing = existing_fcurve(obj, path, index)
        _set_points(existing if existing is not None else ensure_fcurve(_action_for(obj, None), obj, path, index,
                                                                          group), saved)

    journal.data(undo)


def _restore_points(owners: Sequence[bpy.types.bpy_struct], path: str, index: int,
                    saved: dict[str, np.ndarray]) -> None:
    for owner in owners:
        curve = owner.fcurves.find(path, index=index)
        if curve is not None:
            _set_points(curve, saved)
            return


def _remove_fcurve(owners: Sequence[bpy.types.bpy_struct], path: str, index: int) -> None:
    for owner in owners:
        curve = owner.fcurves.find(path, index=index)
        if curve is not None:
            owner.fcurves.remove(curve)


def write_keys(obj: bpy.types.Object, path: str, index: int, group: str, frames: Sequence[int],
               values: Sequence[float], interpolation: str, journal: Journal | None = None) -> None:
    """Key ``path[index]`` at ``frames``, replacing the keys it had between the first and last."""
    action = _action_for(obj, journal)
    existing = existing_fcurve(obj, path, index)
    curve = existing if existing is not None else ensure_fcurve(action, obj, path, index, group)
    if journal is not None:
        # Undone in the action keyed now, whichever is active by then (a clip keyed while it
        # played alone is not).
        owners = list(fcurve_owners(obj))
        if existing is None:
            journal.data(lambda: _remove_fcurve(owners, path, index))
        else:
            saved = _snapshot_points(existing)
            journal.data(lambda: _restore_points(owners, path, index, saved))
    points = curve.keyframe_points
    drop_range(curve, frames[0], frames[-1])
    start = len(points)
    points.add(len(frames))
    co = np.empty(2 * len(points), dtype=np.float32)
    points.foreach_get("co", co)
    co[2 * start::2] = frames
    co[2 * start + 1::2] = values
    points.foreach_set("co", co)
    modes = np.empty(len(points), dtype=np.int32)
    points.foreach_get("interpolation", modes)
    modes[start:] = _INTERPOLATION[interpolation]
    points.foreach_set("interpolation", modes)
    curve.update()


def key_transforms(obj: bpy.types.Object, name: str, frames: Sequence[int], bases: Sequence[Matrix],
                    interpolation: str, journal: Journal | None, location: bool = True,
                    scale: bool = False) -> None:
    """Key a pose bone's location, rotation (in its rotation mode) and, if asked, scale."""
    mode = obj.pose.bones[name].rotation_mode
    parts = [basis.decompose() for basis in bases]
    rotations: list[Sequence[float]] = []
    previous_quaternion: Quaternion | None = None
    previous_euler = None
    for _, quaternion, _ in parts:
        if mode == "QUATERNION":
            if previous_quaternion is not None and quaternion.dot(previous_quaternion) < 0.0:
                quaternion.negate()  # the same turn, without a flip through interpolation
            previous_quaternion = quaternion
            rotations.append(tuple(quaternion))
        elif mode == "AXIS_ANGLE":
            axis_vector, angle = quaternion.to_axis_angle()
            rotations.append((angle, *axis_vector))
        else:
            euler = quaternion.to_euler(mode, previous_euler) if previous_euler is not None \
                else quaternion.to_euler(mode)
            previous_euler = euler
            rotations.append(tuple(euler))
    # Channel by channel, as write_keys takes them: one list per channel, built in one pass.
    channels: dict[tuple[str, int], Sequence[float]] = {}
    if location:
        channels.update((("location", axis), values) for axis, values in enumerate(zip(*(part[0] for part in parts))))
    path = _ROTATION_PATHS.get(mode, ("rotation_euler", 3))[0]
    channels.update(((path, axis), values) for axis, values in enumerate(zip(*rotations)))
    if scale:
        channels.update((("scale", axis), values) for axis, values in enumerate(zip(*(part[2] for part in parts))))
    prefix = f'pose.bones["{records.quoted(name)}"].'
    for (path, axis), values in channels.items():
        write_keys(obj, prefix + path, axis, name, frames, values, interpolation, journal)


class Local:
    """Turns armature-space poses of one bone into its local (basis) matrices.

    For a bone that inherits fully: basis = (parent pose @ parent rest⁻¹ @ rest)⁻¹ @ pose;
    the rest part is worked out once, not per frame.
    """

    def __init__(self, rest: Matrix, parent_rest: Matrix | None) -> None:
        self.offset = parent_rest.inverted() @ rest if parent_rest is not None else None
        self.rest_inverse = rest.inverted()

    def basis(self, pose: Matrix, parent_pose: Matrix | None) -> Matrix:
        if parent_pose is None or self.offset is None:
            return self.rest_inverse @ pose
        return (parent_pose @ self.offset).inverted() @ pose


def local_basis(pose: Matrix, rest: Matrix, parent_pose: Matrix | None, parent_rest: Matrix | None) -> Matrix:
    """The local (basis) matrix giving a bone that inherits fully the armature-space ``pose``."""
    return Local(rest, parent_rest).basis(pose, parent_pose)


def default_interpolation() -> str:
    """The user's interpolation for new keys (Preferences > Animation)."""
    mode = bpy.context.preferences.edit.keyframe_new_interpolation_type
    return mode if mode in _INTERPOLATION else "BEZIER"
