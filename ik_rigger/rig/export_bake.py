"""The motion an export writes: each clip played alone, read once per frame into arrays, and keyed
onto a bare copy of the skeleton as local transforms.

Blender's exporters sample what the armature they are given plays. Given a copy with no
constraint, no driver and these keys, they sample exactly what the rig showed: the copy's
bones, keyed in the armature space the rig played, reach the same armature-space poses.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import bpy
import numpy as np

from ..core.errors import RigError
from . import records
from .animation import action_fcurves, action_paths, bone_of_path, ensure_fcurve, strip_actions
from .asleep import asleep, bystanders
from .clips import Clip, carriers, other_clips, passed_clips, playing_alone
from .scene_state import animated_paths, give_back, values_at
from .scene_time import keys_time

_QUATERNION_PATH = "rotation_quaternion"
# Per bone, the channels keyed: (path, how many values), in the order of a row of ``local_channels``.
_CHANNELS = (("location", 3), (_QUATERNION_PATH, 4), ("scale", 3))


def deform_bones(obj: bpy.types.Object) -> list[str]:
    """The user's bones that deform, in the armature's order: never a bone IK Rigger made (by its
    mark, whatever its name or its deform flag)."""
    return [bone.name for bone in obj.data.bones if bone.use_deform and records.marker(bone) is None]


def _keys_bones(action: bpy.types.Action, bones: bpy.types.ArmatureBones) -> bool:
    return any((name := bone_of_path(path)) is not None and name in bones for path in action_paths(action))


def rig_clips(obj: bpy.types.Object) -> list[Clip]:
    """Every clip that animates ``obj``'s bones, by name: its action, its NLA strips' actions (muted
    or not) and the actions kept for it without playing (``clips.other_clips``)."""
    data = obj.animation_data
    found: dict[str, Clip] = {}
    if data is not None:
        if data.action is not None:
            found[data.action.name] = Clip(data.action, getattr(data, "action_slot", None))
        for action, slot in strip_actions(data):
            found.setdefault(action.name, Clip(action, slot))
    for clip in other_clips(obj):
        found.setdefault(clip.name, clip)
    return [found[name] for name in sorted(found) if _keys_bones(found[name].action, obj.data.bones)]


def chosen_clips(obj: bpy.types.Object, names: Sequence[str] | str | None) -> list[Clip]:
    """The clips named (all when None; one name alone is that clip), refusing a name that animates
    nothing of ``obj``."""
    available = rig_clips(obj)
    if names is None:
        return available
    if isinstance(names, str):  # a name is a sequence of its letters: 'Walk' was refused as no clip 'W'
        names = [names]
    by_name = {clip.name: clip for clip in available}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        have = ", ".join(f"'{name}'" for name in by_name) or "none"
        raise RigError(f"no clip named '{unknown[0]}' animates the armature '{obj.name}' (its clips: {have})",
                       hint="Name a clip (an action) that keys the armature's bones, or pass no clips for all.")
    return [by_name[name] for name in dict.fromkeys(names)]


_OBJECT_TRANSFORMS = frozenset(("location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale",
                                "delta_location", "delta_rotation_euler", "delta_rotation_quaternion", "delta_scale"))


# How far a still object's keyed value may stray, relative to its size (at least 1): the float precision of keys.
_STILL = 1e-5


def _moves_object(clip: Clip) -> bool:
    """True when the clip's keys change the object's transform over its frames. Importers key the
    object with its one transform on every frame (glTF's armature node, as Blender's FBX importer
    did), which moves nothing: each curve is read where the clip plays, its modifiers included."""
    for curve in action_fcurves(clip.action):
        if curve.data_path in _OBJECT_TRANSFORMS:
            values = [curve.evaluate(frame) for frame in clip.frames]
            if values and max(values) - min(values) > _STILL * max(1.0, *map(abs, values)):
                return True
    return False


def object_motion_warnings(obj: bpy.types.Object, clips: Sequence[Clip]) -> list[str]:
    """A warning for each clip that moves the armature object itself: the file holds the bones'
    motion only (what engines read as root motion is the root bone's)."""
    return [f"the clip '{clip.name}' moves the armature object '{obj.name}' itself, which is not exported: key "
            "the root bone instead (engines read root motion from it)" for clip in clips if _moves_object(clip)]


def passed_warnings(obj: bpy.types.Object, names: Sequence[str] | None) -> list[str]:
    """When every clip is exported (``names`` None), a warning for each action kept in the file that keys
    bones of ``obj`` but is not taken for its clip (``clips.passed_clips``), saying why."""
    if names is not None:
        return []
    return [f"the action '{clip.name}' keys bones of '{obj.name}' but is not exported: "
            f"{why.partition('; to play it')[0]} (make it the armature's action, or put it on an NLA strip of "
            "the armature, to export it)" for clip, why in passed_clips(obj) if clip.action.library is None]


def carrier_warnings(obj: bpy.types.Object) -> list[str]:
    """A warning for each animated object the armature object moves with (a parent, a constraint's
    target): the file places the skeleton as it stands on the current frame."""
    return [f"the armature '{obj.name}' moves with '{other.name}', which is animated: that motion is not exported "
            "(the file places the skeleton where it stands on the current frame); key the root bone instead"
            for other in carriers(obj)]


def solver_warnings(obj: bpy.types.Object) -> list[str]:
    """A warning when ``obj`` solves its IK with iTaSC: iTaSC starts each frame's solve from the pose of the
    frame shown before, so a frame's pose depends on the frames played before it (Rigify's leg with soft IK
    and Follow Handle Rotation, on one frame reached from two others, bent its knee differently). The file
    holds each clip played from its first frame on, as playback from the start shows it, and the pose
    shown on the current frame afterwards is the one reached from the clip's last frame."""
    if obj.pose is None or obj.pose.ik_solver != "ITASC":
        return []
    if not any(constraint.type == "IK" for bone in obj.pose.bones for constraint in bone.constraints):
        return []
    return [f"the armature '{obj.name}' solves its IK with iTaSC, whose pose on a frame depends on the frames "
            "shown before it: the file holds each clip as it plays from its first frame, and the pose shown on "
            "the current frame may have moved (play from the clip's start to see the file's); for poses that "
            "depend on their frame only, set the IK Solver (Armature properties) to Standard"]


@dataclass(frozen=True)
class BakedClip:
    """A clip's armature-space poses: ``poses[frame, bone]`` as 4x4 matrices, for ``frames``."""

    name: str
    frames: list[int]
    poses: np.ndarray  # (frames, bones, 4, 4), rows of the matrices (not Blender's columns)


def _other_animated_paths(obj: bpy.types.Object) -> dict[str, set[int]]:
    """Each data path of ``obj`` a clip of it animates (with its array indexes), but the bones' transforms:
    the switches on the handles (``ik_fk``, ``parent``, ``soft_ik``, ``stretch``, ``aim``), the object's own."""
    actions = [clip.action for clip in rig_clips(obj)]
    if obj.animation_data is not None and obj.animation_data.action is not None:
        actions.append(obj.animation_data.action)
    return {path: indexes for path, indexes in animated_paths(actions).items()
            if not (path.startswith("pose.bones[") and path.rpartition(".")[2] in _TRANSFORMS)}


def bake_clips(obj: bpy.types.Object, clips: Sequence[Clip], frame_range: tuple[int, int] | None,
               names: Sequence[str]) -> list[BakedClip]:
    """Play each clip alone on every frame of its range (or ``frame_range``) and read the evaluated
    poses of ``names`` once per frame; the scene's frame and the armature's action, pose and NLA
    are as they were afterwards. Each clip starts from the values the user left on what another clip
    animates (a switch it does not key plays as set, not as the clip played before left it)."""
    scene = bpy.context.scene
    current = scene.frame_current, scene.frame_subframe
    pose_bones = obj.pose.bones
    indexes = np.array([pose_bones.find(name) for name in names])
    flat = np.empty(16 * len(pose_bones), dtype=np.float32)
    baked = []
    left = values_at(obj, _other_animated_paths(obj))
    with asleep(bystanders(obj, bpy.context.view_layer.objects)):
        for clip in clips:
            frames = list(range(frame_range[0], frame_range[1] + 1)) if frame_range else clip.frames
            poses = np.empty((len(frames), len(names), 16), dtype=np.float64)
            give_back(left)
            with playing_alone(obj, clip):
                try:
                    with keys_time(scene):  # a clip's frames as keyed, the scene's Time Stretching aside
                        for row, frame in enumerate(frames):
                            scene.frame_set(frame)
                            obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones.foreach_get(
                                "matrix", flat)
                            poses[row] = flat.reshape(-1, 16)[indexes]
                finally:
                    # Back on the user's frame while the clip still plays alone: the pose the
                    # user had (keys or not) is put back after it, and no key overwrites it.
                    scene.frame_set(current[0], subframe=current[1])
            # Blender stores a matrix column by column: each 16 values transposed are its rows.
            baked.append(BakedClip(clip.name, frames, poses.reshape(len(frames), len(names), 4, 4)
                                   .transpose(0, 1, 3, 2).copy()))
    return baked


_TRANSFORMS = {"location": 3, "rotation_quaternion": 4, "rotation_euler": 3, "rotation_axis_angle": 4,
               "scale": 3}


@contextmanager
def pose_kept(obj: bpy.types.Object) -> Iterator[None]:
    """Every pose bone's transform as the user left it, keyed or not, after the block, and every other value
    a clip animates (a switch set by hand over its keys). Swapping the action, as removing a datablock, makes
    Blender play the keys again at the next update, over a pose changed by hand and not keyed: that update
    runs first, then the values are put back and evaluated without the keys."""
    bones = obj.pose.bones
    saved = {}
    for name, size in _TRANSFORMS.items():
        saved[name] = np.empty(size * len(bones), dtype=np.float32)
        bones.foreach_get(name, saved[name])
    others = values_at(obj, _other_animated_paths(obj))
    try:
        yield
    finally:
        bpy.context.view_layer.update()
        for name, values in saved.items():
            bones.foreach_set(name, values)
        give_back(others)
        obj.update_tag(refresh={"DATA"})
        bpy.context.view_layer.update()


def _quaternions(rotations: np.ndarray) -> np.ndarray:
    """Unit quaternions (w, x, y, z) of rotation matrices (..., 3, 3), by the largest of the four
    terms (Shepperd's way, exact wherever the turn is)."""
    m = rotations
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    candidates = np.stack([
        np.stack([1 + trace, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                  m[..., 1, 0] - m[..., 0, 1]], -1),
        np.stack([m[..., 2, 1] - m[..., 1, 2], 1 + m[..., 0, 0] - m[..., 1, 1] - m[..., 2, 2],
                  m[..., 0, 1] + m[..., 1, 0], m[..., 0, 2] + m[..., 2, 0]], -1),
        np.stack([m[..., 0, 2] - m[..., 2, 0], m[..., 0, 1] + m[..., 1, 0],
                  1 - m[..., 0, 0] + m[..., 1, 1] - m[..., 2, 2], m[..., 1, 2] + m[..., 2, 1]], -1),
        np.stack([m[..., 1, 0] - m[..., 0, 1], m[..., 0, 2] + m[..., 2, 0], m[..., 1, 2] + m[..., 2, 1],
                  1 - m[..., 0, 0] - m[..., 1, 1] + m[..., 2, 2]], -1),
    ], -2)
    diagonal = np.stack([trace, m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]], -1)
    best = np.argmax(diagonal, axis=-1)
    chosen = np.take_along_axis(candidates, best[..., None, None], axis=-2)[..., 0, :]
    return chosen / np.linalg.norm(chosen, axis=-1, keepdims=True)


def _offsets(obj: bpy.types.Object, names: Sequence[str]) -> tuple[list[int], np.ndarray]:
    """Each bone's parent (its column, -1 for a root) and rest relative to its parent's (its rest for a root)."""
    bones = [obj.data.bones[name] for name in names]
    rests = np.array([np.array(bone.matrix_local) for bone in bones])
    position = {name: index for index, name in enumerate(names)}
    parents = [position[bone.parent.name] if bone.parent is not None else -1 for bone in bones]
    offsets = np.array([np.linalg.inv(rests[parent]) @ rests[index] if parent >= 0 else rests[index]
                        for index, parent in enumerate(parents)])
    return parents, offsets


def _carried(obj: bpy.types.Object, names: Sequence[str], poses: np.ndarray) -> np.ndarray:
    """Per frame and bone, where a bone's own transform starts from on a copy where every bone inherits
    fully from its parent: its parent's pose @ the parent's rest⁻¹ @ its rest; its rest for a root."""
    parents, offsets = _offsets(obj, names)
    parent_poses = np.where(np.array(parents)[None, :, None, None] >= 0, poses[:, parents], np.eye(4))
    return parent_poses @ offsets


# A bone's scale below which it is taken as scaled to nothing along an axis (an animator's way to hide a
# bone and what hangs from it); above single precision's noise on the poses read.
_NOTHING = 1e-5
# What a scale of nothing along some of a bone's axes, not all three, is written as (of its largest): both
# exporters place each bone from its parent's pose inverted, which a flattened parent has none of. Thinner,
# single precision's noise times that inverse turns the bones under it off (at 1e-3, the metarig's fingers
# 8e-5 of the height; 1.6e-5 at 1e-2).
_THIN = 1e-2


def _flat(matrices: np.ndarray) -> np.ndarray:
    """Where each 4x4 matrix's 3x3 part is flattened, scaled to nothing along some axis (its least singular
    value below ``_NOTHING``; looked for only where the determinant is small enough to allow it)."""
    linear = matrices[..., :3, :3]
    found = np.abs(np.linalg.det(linear)) <= _NOTHING * np.square(linear).sum(axis=(-2, -1))
    found[found] = np.linalg.svd(linear[found], compute_uv=False).min(axis=-1) < _NOTHING
    return found


def _axes(linear: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``linear``'s columns divided by their ``scale``; an axis scaled to nothing made from the other two
    (the turn they keep), where they are there."""
    gone = np.abs(scale) < _NOTHING
    axes = linear / np.where(gone, 1.0, scale)[..., None, :]
    for index in range(3):
        a, b = (index + 1) % 3, (index + 2) % 3
        alone = gone[..., index] & ~gone[..., a] & ~gone[..., b]
        axes[..., :, index] = np.where(alone[..., None], np.cross(axes[..., :, a], axes[..., :, b]),
                                       axes[..., :, index])
    return axes


def _completed(parent: np.ndarray, linear: np.ndarray) -> np.ndarray:
    """``linear``, a bone's own 3x3 under ``parent`` flattened along one or two axes (the least transform:
    nothing along them, which no turn and scale can hold), with those axes given back as a turn holds them:
    the cross of the other two at their length, or any two square to the one left. The parent shows none
    of them; the keys need a turn."""
    _, sizes, vt = np.linalg.svd(parent)
    kept = vt @ linear  # rows along the parent's axes, most scaled first; the flattened ones nothing
    first = kept[..., 0, :]
    length = np.linalg.norm(first, axis=-1)
    one = sizes[..., 1] >= _NOTHING * sizes[..., 0]
    # One axis flattened: the cross of the two kept, at their length.
    second = np.where(one[..., None], kept[..., 1, :], 0.0)
    across = np.cross(first, second)
    both = np.sqrt(length * np.linalg.norm(second, axis=-1))
    across /= np.where(both > 0.0, both, 1.0)[..., None]
    # Two: a row square to the one kept (crossed with the axis least along it), then the cross of both.
    least = np.eye(3)[np.argmin(np.abs(first), axis=-1)]
    square = np.cross(first, least)
    square *= (length / np.maximum(np.linalg.norm(square, axis=-1), 1e-300))[..., None]
    second = np.where(one[..., None], 0.0, square)
    across = np.where(one[..., None], across, np.cross(first, square) / np.maximum(length, 1e-300)[..., None])
    across *= np.sign(np.linalg.det(vt))[..., None]
    added = vt[..., 1, :, None] * second[..., None, :] + vt[..., 2, :, None] * across[..., None, :]
    return linear + np.where((length > 0.0)[..., None, None], added, 0.0)


def _channels(carried: np.ndarray, poses: np.ndarray, placed: np.ndarray | None = None) -> np.ndarray:
    """Per frame and bone, the location, quaternion and scale (10 values) that turn ``carried`` into
    ``poses``; the location from ``placed`` when given (where the keys carry the bone from, which differs
    from ``carried`` under a bone written thin), where that is not flat."""
    under_nothing = _flat(carried)
    basis = np.linalg.inv(np.where(under_nothing[..., None, None], np.eye(4), carried)) @ poses
    # Under a bone flattened, the least transform that places it as the rig does (exact where it takes the
    # flattening as a child does: its pose lies in what that bone leaves), made a turn.
    flat, posed = carried[under_nothing], poses[under_nothing]
    least = np.linalg.pinv(flat[..., :3, :3], _NOTHING)
    basis[under_nothing, :3, :3] = _completed(flat[..., :3, :3], least @ posed[..., :3, :3])
    basis[under_nothing, :3, 3] = (least @ (posed[..., :3, 3] - flat[..., :3, 3])[..., None])[..., 0]
    location = basis[..., :3, 3]
    if placed is not None:
        located = ~_flat(placed)
        start, shown = placed[located], poses[located]
        location[located] = (np.linalg.inv(start[..., :3, :3]) @ (shown[..., :3, 3] - start[..., :3, 3])[..., None])[
            ..., 0]
    linear = basis[..., :3, :3]
    scale = np.linalg.norm(linear, axis=-2)
    # A mirrored basis (negative determinant) keeps its flip in the scale's first axis, as Blender does.
    flip = np.where(np.linalg.det(linear) < 0.0, -1.0, 1.0)
    scale[..., 0] *= flip
    quaternion = _held_turns(_quaternions(_axes(linear, scale)), linear, scale)
    gone = np.abs(scale) < _NOTHING
    some = gone & ~gone.all(axis=-1, keepdims=True)
    scale = np.where(some, np.where(scale < 0.0, -_THIN, _THIN) * np.abs(scale).max(axis=-1, keepdims=True), scale)
    return np.concatenate([location, quaternion, scale], axis=-1)


def _held_turns(quaternion: np.ndarray, linear: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``quaternion`` (frames, bones, 4) where a bone is scaled to nothing along two axes or three, which
    shows no turn (or one axis only): the turn of the frame before, turned the least to lay that axis where it
    lies; and each frame on the previous one's side, the same turn without a flip through interpolation."""
    gone = np.abs(scale) < _NOTHING
    all_gone, two = gone.all(axis=-1), gone.sum(axis=-1) == 2
    kept = np.argmin(gone, axis=-1)
    along = np.take_along_axis(linear, kept[..., None, None], axis=-1)[..., 0]
    along /= np.maximum(np.linalg.norm(along, axis=-1, keepdims=True), 1e-300)
    along *= np.where(np.take_along_axis(scale, kept[..., None], axis=-1) < 0.0, -1.0, 1.0)
    before = np.tile((1.0, 0.0, 0.0, 0.0), (quaternion.shape[1], 1))
    for row in range(len(quaternion)):
        quaternion[row][all_gone[row]] = before[all_gone[row]]
        bones = np.nonzero(two[row])[0]
        if len(bones):
            turn = _turns(before[bones])
            axis = np.take_along_axis(turn, kept[row, bones][:, None, None], axis=-1)[..., 0]
            # The least turn from that axis to where it lies now (Rodrigues' formula).
            cross, cosine = np.cross(axis, along[row, bones]), np.sum(axis * along[row, bones], axis=-1)
            skew = np.zeros((len(bones), 3, 3))
            skew[:, [2, 0, 1], [1, 2, 0]] = cross
            skew -= np.swapaxes(skew, -1, -2)
            least = np.eye(3) + skew + skew @ skew / np.maximum(1.0 + cosine, 1e-12)[:, None, None]
            quaternion[row][bones] = _quaternions(least @ turn)
        if row:
            sign = np.where(np.sum(quaternion[row] * quaternion[row - 1], axis=-1) < 0.0, -1.0, 1.0)
            quaternion[row] *= sign[:, None]
        before = quaternion[row]
    return quaternion


def _turns(quaternion: np.ndarray) -> np.ndarray:
    """The rotation matrices of unit quaternions (..., 4: w, x, y, z)."""
    w, x, y, z = np.moveaxis(quaternion, -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def _written(channels: np.ndarray) -> np.ndarray:
    """The 4x4 matrices that ``channels`` (location, quaternion, scale) key."""
    location, quaternion, scale = channels[..., :3], channels[..., 3:7], channels[..., 7:]
    written = np.zeros((*channels.shape[:-1], 4, 4))
    written[..., :3, :3] = _turns(quaternion) * scale[..., None, :]
    written[..., :3, 3] = location
    written[..., 3, 3] = 1.0
    return written


def local_channels(obj: bpy.types.Object, names: Sequence[str], poses: np.ndarray) -> np.ndarray:
    """Per frame and bone, the location, quaternion and scale (10 values) that give each bone its
    armature-space pose on a copy where every bone inherits fully from its parent. A bone scaled to
    nothing keeps the turn of the frame before (it shows none); one scaled to nothing along some of its
    axes, not all three, is written thin (``_THIN``) along them, and the bones under it are placed from
    where that thin bone carries them, so the exporters, which place each bone from its parent's pose
    inverted, find one to invert."""
    carried = _carried(obj, names, poses)
    channels = _channels(carried, poses)
    if not (_flat(poses) & ~_flat(carried)).any():
        return channels
    # Parents first, level by level: each bone's location from where its parent's keys carry it.
    parents, offsets = _offsets(obj, names)
    depth = []
    for parent in parents:
        count = 0
        while parent >= 0:
            parent, count = parents[parent], count + 1
        depth.append(count)
    keyed = poses.copy()
    levels = np.array(depth)
    for level in range(max(depth) + 1):
        columns = np.nonzero(levels == level)[0]
        above = [parents[column] for column in columns]
        placed = np.where(np.array(above)[None, :, None, None] >= 0, keyed[:, above], np.eye(4)) @ offsets[columns]
        channels[:, columns] = _channels(carried[:, columns], poses[:, columns], placed)
        keyed[:, columns] = placed @ _written(channels[:, columns])
    return channels


def _rotations(matrices: np.ndarray) -> np.ndarray:
    """The rotation nearest each 3x3 matrix (its scale and shear taken out)."""
    u, _, vt = np.linalg.svd(matrices)
    return u @ vt


def shear_warnings(copy: bpy.types.Object, obj: bpy.types.Object, names: Sequence[str], baked: BakedClip,
                   channels: np.ndarray) -> list[str]:
    """A warning for each bone the file turns more than 0.05 degree off the rig on some frame of the clip:
    glTF and FBX hold each bone's own transform as location, rotation and scale, and a bone that does not
    take its parent's scale (its Inherit Scale not Full) under a parent scaled unevenly (a foot copying
    the scale of an IK handle scaled along one axis) is sheared against it, which neither can hold."""
    played = (_carried(copy, names, baked.poses) @ _written(channels))[..., :3, :3]
    shown = baked.poses[..., :3, :3]
    # Only where the file's axes differ from the rig's at all (single precision's noise apart) is the turn
    # measured, and not on a bone scaled to nothing, which shows none.
    differ = (np.abs(played - shown).max(axis=(-2, -1)) > 1e-5 * np.abs(shown).max(axis=(-2, -1)))
    differ &= ~_flat(baked.poses)
    degrees = np.zeros(differ.shape)
    gap = _rotations(np.swapaxes(_rotations(played[differ]), -1, -2) @ _rotations(shown[differ]))
    degrees[differ] = np.degrees(np.arccos(np.clip((np.trace(gap, axis1=-2, axis2=-1) - 1.0) / 2.0, -1.0, 1.0)))
    found = []
    for column in np.nonzero(degrees.max(axis=0) > 0.05)[0]:
        row = int(np.argmax(degrees[:, column]))
        name, parent = names[column], copy.data.bones[names[column]].parent
        above = f"its parent '{parent.name}'" if parent is not None else "the armature"
        inherit = obj.data.bones[name].inherit_scale
        # A bone that takes its parent's scale in full is sheared against it only where its constraints set
        # its pose apart from its parent's (a foot copying its IK handle's turn under a shin a capture scales).
        setters = [f"'{constraint.name}'" for constraint in obj.pose.bones[name].constraints]
        why, instead = ((f"Inherit Scale '{inherit}'", ", or set the bone's Inherit Scale to Full (Bone properties, "
                                                       "Relations)") if inherit != "FULL" else
                        (f"its constraint{'s' * (len(setters) > 1)} {', '.join(setters)} "
                         f"set{'s' * (len(setters) == 1)} its pose apart from its parent's", ""))
        found.append(f"the bone '{name}' plays up to {degrees[row, column]:.2g} degrees off in the file (frame "
                     f"{baked.frames[row]} of '{baked.name}'), and what hangs from it with it: {above} scales "
                     f"unevenly there, which '{name}' does not take ({why}), "
                     "a shear glTF and FBX cannot hold; scale the parent evenly (a foot copies its IK handle's "
                     f"scale with Copy Rotation & Scale or Copy Transforms){instead}")
    return found


def key_clip(copy: bpy.types.Object, names: Sequence[str], baked: BakedClip, channels: np.ndarray,
             action_name: str) -> bpy.types.Action:
    """A new action on ``copy`` keying ``names`` with ``channels`` (frames, bones, 10) on the clip's
    frames, linear between them; left assigned to ``copy``."""
    action = bpy.data.actions.new(action_name)
    copy.animation_data.action = action
    frames = np.asarray(baked.frames, dtype=np.float32)
    co = np.empty(2 * len(frames), dtype=np.float32)
    co[0::2] = frames
    linear = np.ones(len(frames), dtype=np.int32)  # the interpolation's enum value for LINEAR
    for column, name in enumerate(names):
        prefix = f'pose.bones["{records.quoted(name)}"].'
        value = 0
        for path, size in _CHANNELS:
            for index in range(size):
                curve = ensure_fcurve(action, copy, prefix + path, index, name)
                points = curve.keyframe_points
                points.add(len(frames))
                co[1::2] = channels[:, column, value]
                points.foreach_set("co", co)
                points.foreach_set("interpolation", linear)
                curve.update()
                value += 1
    return action
