"""Bake motion between FK and IK over frame ranges, so rigging never loses animation.

- FK to IK: the motion the chain plays (its own keys, its parents', the NLA) is keyed
  onto the limb's handle, pole and extremity clone, so the IK rig plays the same;
- IK to FK: what the IK rig shows is keyed onto the chain's and extremity's own
  transforms (visual keying), so the limb plays the same in FK or without its rig.

Cost is one scene evaluation per frame (reading every bone's matrix at once) and keys
written per F-curve in bulk, never a ``keyframe_insert`` per bone per frame.
Runs in Object or Pose mode; no mode switch.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import bpy
from mathutils import Matrix, Quaternion, Vector

from .. import parts as limb_parts
from ..core.errors import RigError
from . import records
from .animation import (
    action_paths,
    bone_of_path,
    claimed_clips,
    existing_fcurve,
    fcurve_owners,
    stored_clips,
    strip_actions,
)
from .asleep import asleep, followers
from .journal import Journal

# Less than this off a whole frame is on it (a range end stored as 6.0000001).
_SUBFRAME = 1e-4
# Rest matrices closer than this, entry by entry, are the same rest.
_SAME_REST = 1e-7
# Below this, a pose's 3x3 part (its scale cubed) has no usable inverse in single precision.
_FLAT = 1e-12
# Interpolation enum values, as foreach_set wants them.
_INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}
_ROTATION_PATHS = {"QUATERNION": ("rotation_quaternion", 4), "AXIS_ANGLE": ("rotation_axis_angle", 4)}


@dataclass
class BakeResult:
    """What one limb's bake did, for the report."""

    limb: str
    frames: int
    seconds: float = 0.0


# What plays -----------------------------------------------------------------------------


def _actions(obj: bpy.types.ID) -> list[tuple[bpy.types.Action, float, float]]:
    """Each action that plays on ``obj`` (an object, or an object's data) with the scene frames it covers."""
    data = getattr(obj, "animation_data", None)
    if data is None:
        return []
    found = []
    if data.action is not None:
        found.append((data.action, data.action.frame_range[0], data.action.frame_range[1]))
    for track in data.nla_tracks:
        if track.mute:
            continue
        for strip in track.strips:
            if strip.action is not None and not strip.mute:
                found.append((strip.action, strip.frame_start, strip.frame_end))
    return found


def uses_nla(obj: bpy.types.Object) -> bool:
    """True when NLA strips play on ``obj`` (a bake then keys what they play)."""
    data = obj.animation_data
    return data is not None and any(not track.mute and len(track.strips) for track in data.nla_tracks)


def played_frames(obj: bpy.types.Object, bones: Iterable[str] | None = None) -> list[int]:
    """The whole frames over which ``obj``'s action and NLA strips play, and those of the other
    objects whose motion reaches ``bones`` (default: any of its bones; see ``followed``);
    none when nothing of it is animated."""
    others = followed(obj, [bone.name for bone in obj.data.bones] if bones is None else bones)[1]
    ranges = [(start, end) for source in [obj, *(owner for other in others for owner in _owners(other))]
              for _, start, end in _actions(source)]
    if not ranges:
        return []
    return _whole_frames(min(start for start, _ in ranges), max(end for _, end in ranges))


def _targets(constraint: bpy.types.Constraint) -> Iterator[tuple[bpy.types.Object, str]]:
    """The objects ``constraint`` follows, each with the bone of it named (or "")."""
    for target, bone in ((getattr(constraint, "target", None), getattr(constraint, "subtarget", "")),
                         (getattr(constraint, "pole_target", None), getattr(constraint, "pole_subtarget", ""))):
        if isinstance(target, bpy.types.Object):
            yield target, bone
    for item in getattr(constraint, "targets", ()):  # the Armature constraint's
        if isinstance(item.target, bpy.types.Object):
            yield item.target, item.subtarget


def _driven_by(owner: bpy.types.ID) -> dict[str, list[tuple[bpy.types.Object, str]]]:
    """Per data path that ``owner``'s drivers drive, the objects their variables read, each with the bone of it read."""
    data = getattr(owner, "animation_data", None)
    found: dict[str, list[tuple[bpy.types.Object, str]]] = {}
    for curve in data.drivers if data is not None else ():
        for variable in curve.driver.variables:
            for target in variable.targets:
                if isinstance(target.id, bpy.types.Object):
                    found.setdefault(curve.data_path, []).append((target.id, target.bone_target))
    return found


def _enabled(constraint: bpy.types.Constraint) -> bool:
    return getattr(constraint, "enabled", not getattr(constraint, "mute", False))


def followed(obj: bpy.types.Object, bones: Iterable[str]) -> tuple[set[str], list[bpy.types.Object]]:
    """What moves ``bones`` of the armature ``obj``: its bones (them, the bones above them, and the
    bones their constraints and drivers follow, all the way) and the other objects they follow
    (and what those follow in turn: parents, constraint targets, driver variables)."""
    driven: dict[str, list[tuple[bpy.types.Object, str]]] = {}
    for path, sources in _driven_by(obj).items():
        bone = bone_of_path(path)
        if bone is not None:
            driven.setdefault(bone, []).extend(sources)
    names: set[str] = set()
    others: list[bpy.types.Object] = []
    work = list(bones)
    while work:
        bone = obj.data.bones.get(work.pop())
        while bone is not None and bone.name not in names:
            names.add(bone.name)
            pose_bone = obj.pose.bones[bone.name]
            sources = [*(source for constraint in pose_bone.constraints if _enabled(constraint)
                         for source in _targets(constraint)), *driven.get(bone.name, ())]
            for target, name in sources:
                if target == obj:
                    work.extend([name] if name else [])
                elif target not in others:
                    others.append(target)
            bone = bone.parent
    for other in others:  # grows as it goes: what each one follows is followed too
        leaders: list[bpy.types.Object | None] = [other.parent]
        leaders += [leader for constraint in other.constraints if _enabled(constraint)
                    for leader, _ in _targets(constraint)]
        leaders += [leader for found in _driven_by(other).values() for leader, _ in found]
        for leader in leaders:
            if leader is not None and leader != obj and leader not in others:
                others.append(leader)
    return names, others


def _whole_frames(start: float, end: float) -> list[int]:
    """The whole frames from ``start`` to ``end``. Keys between frames (a glTF clip's, kept in
    seconds) widen them to the frame before the first and the one after the last: the motion
    holds its ends beyond them, and so must what is keyed from it."""
    return list(range(math.floor(start + _SUBFRAME), math.ceil(end - _SUBFRAME) + 1))


def _animated_paths(obj: bpy.types.Object) -> Iterable[str]:
    data = obj.animation_data
    for action, _, _ in _actions(obj):
        yield from action_paths(action)
    if data is not None:
        yield from (curve.data_path for curve in data.drivers)


def _moving(names: Iterable[str], paths: Iterable[str]) -> bool:
    """True when one of ``paths`` animates one of the bones ``names``."""
    prefixes = tuple(f'pose.bones["{records.quoted(name)}"]' for name in names)
    return any(path.startswith(prefixes) for path in paths if path.startswith("pose.bones["))


def _owners(obj: bpy.types.Object) -> list[bpy.types.ID]:
    """``obj`` and its data (a curve's path, say, animates there)."""
    return [obj, *([obj.data] if isinstance(obj.data, bpy.types.ID) else [])]


def _animated(obj: bpy.types.Object) -> bool:
    """True when actions or drivers play on ``obj`` or its data."""
    return any(bool(_actions(owner)) or (owner.animation_data is not None and len(owner.animation_data.drivers) > 0)
               for owner in _owners(obj))


def moves(obj: bpy.types.Object, bones: Iterable[str]) -> bool:
    """True when animation moves any of ``bones``: the armature's own (on them, a bone above them,
    or a bone they follow) or another object's that they follow (see ``followed``)."""
    names, others = followed(obj, bones)
    return _moving(names, _animated_paths(obj)) or any(_animated(other) for other in others)


@dataclass(frozen=True)
class Clip:
    """One of the file's other clips, played by making it the active action: an action of a
    muted NLA strip or track that no playing strip holds (glTF's importer leaves them so), or
    one kept in the file for the armature without playing (FBX's other takes)."""

    action: bpy.types.Action
    slot: object | None  # the strip's slot of the action (Blender 4.4 and later), else None

    @property
    def name(self) -> str:
        return self.action.name

    @property
    def frames(self) -> list[int]:
        return _whole_frames(*self.action.frame_range)

    def moves(self, names: Iterable[str]) -> bool:
        """True when the clip moves one of the bones ``names``: a limb's bones and what they follow
        (``followed``'s first part), read once for all the clips."""
        return _moving(names, action_paths(self.action))


def other_clips(obj: bpy.types.Object) -> list[Clip]:
    """``obj``'s clips that do not play (see ``Clip``), by name, but for those linked from a
    library. None in NLA tweak mode, where the active action cannot change."""
    data = obj.animation_data
    if data is None or data.use_tweak_mode:
        return []
    playing = {action for action, _, _ in _actions(obj)}
    clips: dict[str, Clip] = {}
    for action, slot in [*strip_actions(data), *stored_clips(obj)]:
        # A linked clip is the library's: it cannot take keys here.
        if action not in playing and action.library is None and action.name not in clips:
            clips[action.name] = Clip(action, slot)
    return [clips[name] for name in sorted(clips)]


def passed_clips(obj: bpy.types.Object) -> list[tuple[Clip, str]]:
    """The file's actions that key bones of ``obj`` but are not among its clips to key, each with
    why: one another armature fits as well (``animation.claimed_clips``), or a clip linked from a
    library, which cannot take keys here. A build names those that move a limb."""
    data = obj.animation_data
    clips = [*strip_actions(data), *stored_clips(obj)] if data is not None else stored_clips(obj)
    linked = {action.name: (Clip(action, slot), f"it is linked from the library '{action.library.filepath}' and "
                            "cannot take keys here: make it local to key the controls into it")
              for action, slot in clips if action.library is not None}
    return [*linked.values(), *((Clip(action, None), why) for action, why in claimed_clips(obj)[1]
                                if action.library is None)]


# The pose bone transforms a clip played alone may leave behind (see playing_alone), with their
# rest values.
_TRANSFORMS = {"location": (0.0, 0.0, 0.0), "rotation_quaternion": (1.0, 0.0, 0.0, 0.0),
               "rotation_euler": (0.0, 0.0, 0.0), "rotation_axis_angle": (0.0, 0.0, 1.0, 0.0),
               "scale": (1.0, 1.0, 1.0)}


@contextmanager
def playing_alone(obj: bpy.types.Object, clip: Clip) -> Iterator[None]:
    """``clip`` as the active action with the NLA off, so it alone plays (and takes the keys
    written meanwhile), from the rest pose: what it does not key stays at rest, as in the
    engines clips are made for, whatever was shown before. Afterwards the armature's
    action, slot and NLA are as they were, and so is every pose bone's transform."""
    # A removal may have taken the armature's last curves, and its animation data with them.
    created = obj.animation_data is None
    data = obj.animation_data_create()
    bones = obj.pose.bones
    saved = {}
    for name, rest in _TRANSFORMS.items():
        values = [0.0] * (len(rest) * len(bones))
        bones.foreach_get(name, values)
        saved[name] = values
        bones.foreach_set(name, rest * len(bones))
    slotted = hasattr(data, "action_slot")
    action, slot, nla = data.action, data.action_slot if slotted else None, data.use_nla
    data.use_nla = False
    data.action = clip.action
    if slotted and clip.slot is not None:
        data.action_slot = clip.slot
    try:
        yield
    finally:
        data.action = action
        if slotted and slot is not None:
            data.action_slot = slot
        data.use_nla = nla
        for name, values in saved.items():
            bones.foreach_set(name, values)
        if created and data.action is None and not data.drivers and not data.nla_tracks:
            obj.animation_data_clear()
        obj.update_tag()


# Reading and writing in bulk ----------------------------------------------------------


class Recording:
    """Armature-space pose matrices of chosen bones on each frame: one evaluation per frame."""

    def __init__(self, obj: bpy.types.Object, frames: Sequence[int], names: Iterable[str],
                 progress: Callable[[int], None] | None = None) -> None:
        self.frames = list(frames)
        wanted = set(names)
        pose_bones = obj.pose.bones
        indexes = [index for index, bone in enumerate(pose_bones) if bone.name in wanted]
        self.names = [pose_bones[index].name for index in indexes]
        self.poses: dict[str, list[Matrix]] = {name: [] for name in self.names}
        # The bones' rests as recorded: a build may change them (see follow_rests).
        self.rests = {name: obj.data.bones[name].matrix_local.copy() for name in self.names}
        scene = bpy.context.scene
        current = scene.frame_current, scene.frame_subframe
        flat = [0.0] * (16 * len(pose_bones))
        try:
            # The frames evaluate the armature without the meshes it moves, which would cost far more.
            with asleep(followers(obj)):
                for number, frame in enumerate(self.frames):
                    scene.frame_set(frame)
                    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
                    evaluated.pose.bones.foreach_get("matrix", flat)
                    for index, name in zip(indexes, self.names):
                        # Blender stores matrices column by column.
                        column = flat[16 * index:16 * index + 16]
                        self.poses[name].append(Matrix((column[0::4], column[1::4], column[2::4], column[3::4])))
                    if progress is not None:
                        progress(number)
        finally:
            scene.frame_set(current[0], subframe=current[1])

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


def _forget_action(obj: bpy.types.Object, action: bpy.types.Action) -> None:
    if obj.animation_data is not None and obj.animation_data.action == action:
        obj.animation_data.action = None
    bpy.data.actions.remove(action)


def _fcurve(obj: bpy.types.Object, action: bpy.types.Action, path: str, index: int, group: str):
    if hasattr(action, "fcurve_ensure_for_datablock"):
        return action.fcurve_ensure_for_datablock(obj, path, index=index, group_name=group)
    curve = action.fcurves.find(path, index=index)
    return curve if curve is not None else action.fcurves.new(path, index=index, action_group=group)


def _snapshot_points(curve) -> dict[str, list]:
    points = curve.keyframe_points
    count = len(points)
    saved: dict[str, list] = {}
    for key, size in (("co", 2), ("handle_left", 2), ("handle_right", 2), ("interpolation", 1),
                      ("handle_left_type", 1), ("handle_right_type", 1)):
        values = [0.0 if size == 2 else 0] * (count * size)
        points.foreach_get(key, values)
        saved[key] = values
    return saved


def _set_points(curve, saved: dict[str, list]) -> None:
    points = curve.keyframe_points
    points.clear()
    points.add(len(saved["interpolation"]))
    for key, values in saved.items():
        points.foreach_set(key, values)
    curve.update()


def _drop_range(curve, first: float, last: float) -> None:
    """Delete the keys between ``first`` and ``last``, keeping every other key exactly as it was."""
    saved = _snapshot_points(curve)
    co = saved["co"]
    keep = [index for index in range(len(co) // 2) if not first - 1e-3 <= co[2 * index] <= last + 1e-3]
    if len(keep) == len(co) // 2:
        return
    kept = {}
    for key, values in saved.items():
        size = 2 if len(values) == len(co) else 1
        kept[key] = [values[size * index + part] for index in keep for part in range(size)]
    _set_points(curve, kept)


def _restore_points(owners: Sequence[bpy.types.bpy_struct], path: str, index: int, saved: dict[str, list]) -> None:
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
    curve = existing if existing is not None else _fcurve(obj, action, path, index, group)
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
    _drop_range(curve, frames[0], frames[-1])
    start = len(points)
    points.add(len(frames))
    co = [0.0] * (2 * len(points))
    points.foreach_get("co", co)
    for offset, (frame, value) in enumerate(zip(frames, values)):
        co[2 * (start + offset)] = frame
        co[2 * (start + offset) + 1] = value
    points.foreach_set("co", co)
    modes = [0] * len(points)
    points.foreach_get("interpolation", modes)
    modes[start:] = [_INTERPOLATION[interpolation]] * len(frames)
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


class _Local:
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
    return _Local(rest, parent_rest).basis(pose, parent_pose)



# FK to IK ------------------------------------------------------------------------------


def fk_bones(obj: bpy.types.Object, parts: records.Parts) -> set[str]:
    """The bones whose motion an FK-to-IK bake reads: chain, extremity, and the user's bones the made
    bones hang from or follow (their parents, a parent socket's choices)."""
    names = set(parts.chain)
    if parts.extremity:
        names.add(parts.extremity)
    made = set(parts.made.values())
    for name in made:
        parent = obj.data.bones[name].parent
        if parent is not None and parent.name not in made:
            names.add(parent.name)
        for constraint in obj.pose.bones[name].constraints:
            names.update(target.subtarget for target in getattr(constraint, "targets", ())
                         if constraint.type == "ARMATURE" and target.subtarget in obj.data.bones
                         and target.subtarget not in made)
    return names


@dataclass
class Bake:
    """What the parts' ``bake_to_ik`` hooks read and write, for one limb over a recording."""

    obj: bpy.types.Object
    parts: records.Parts
    ik: bpy.types.Constraint
    recording: Recording
    ends: list[Vector]  # where the FK chain ends on each frame
    interpolation: str
    journal: Journal | None
    made: dict[str, list[Matrix]]  # made bones' armature-space poses, as the hooks worked them out

    @property
    def frames(self) -> Sequence[int]:
        return self.recording.frames

    def poses_of(self, name: str) -> list[Matrix]:
        """A bone's poses on each frame: worked out by a hook, else as recorded."""
        return self.made[name] if name in self.made else self.recording.poses[name]

    @staticmethod
    def local(rest: Matrix, parent_rest: Matrix | None) -> _Local:
        return _Local(rest, parent_rest)

    def key(self, name: str, bases: Sequence[Matrix]) -> None:
        key_transforms(self.obj, name, self.recording.frames, bases, self.interpolation, self.journal)


def key_controls(obj: bpy.types.Object, parts: records.Parts, recording: Recording, interpolation: str = "LINEAR",
                 journal: Journal | None = None) -> int:
    """Key the limb's controls so its IK plays what ``recording`` shows, part by part.

    ``recording`` holds the FK motion (the chain and extremity as they played, and what
    the made bones hang from); each part's ``bake_to_ik`` keys its own controls: the
    handle at the chain's end turned like the extremity, the clone onto the extremity,
    the pole into the chain's plane as its root turns. Returns the frames keyed.
    """
    ik = records.ik_constraint(obj, parts)
    if ik is None or parts.handle is None:
        raise RigError("has lost its IK handle or constraint", bone=parts.chain[-1] if parts.chain else "",
                       hint="Rebuild the limb.")
    last = obj.data.bones[parts.chain[-1]]
    tip = Vector((0.0, last.length, 0.0))
    bake = Bake(obj, parts, ik, recording, [pose @ tip for pose in recording.poses[last.name]], interpolation,
                journal, {})
    for part in limb_parts.with_hook("bake_to_ik"):
        part.bake_to_ik(bake)
    return len(recording.frames)


# IK to FK ------------------------------------------------------------------------------


def key_chain(obj: bpy.types.Object, parts: records.Parts, recording: Recording, interpolation: str = "LINEAR",
              journal: Journal | None = None, only: Collection[str] | None = None) -> int:
    """Key the chain's and extremity's own transforms (``only`` those named, when given) with what
    ``recording`` shows (visual keying)."""
    bones = obj.data.bones
    names = [name for name in parts.chain + ([parts.extremity] if parts.extremity else [])
             if only is None or name in only]
    poses = recording.poses
    for name in names:
        bone = bones[name]
        parent = bone.parent
        local = _Local(bone.matrix_local, parent.matrix_local if parent else None)
        bases = [local.basis(pose, poses[parent.name][number] if parent else None)
                 for number, pose in enumerate(poses[name])]
        stretched = any(abs(value - 1.0) > 1e-5 for basis in bases for value in basis.to_scale())
        key_transforms(obj, name, recording.frames, bases, interpolation, journal,
                        location=not bone.use_connect, scale=stretched)
    return len(recording.frames)


def ik_bones(obj: bpy.types.Object, parts: records.Parts) -> set[str]:
    """The bones an IK-to-FK bake reads: chain, extremity and their parents (an extremity may hang
    from another bone than the chain: glTF's RobotExpressive's feet hang from the root)."""
    names = set(parts.chain)
    if parts.extremity:
        names.add(parts.extremity)
    bones = obj.data.bones
    names |= {bones[name].parent.name for name in list(names) if name in bones and bones[name].parent is not None}
    return names


# The switch ------------------------------------------------------------------------------


def key_switch(obj: bpy.types.Object, parts: records.Parts, frames: Sequence[int], value: float,
               journal: Journal | None = None) -> None:
    """Key the limb's ``ik_fk`` to ``value`` over ``frames`` (constant, so it plays in one mode)."""
    handle = parts.handle
    if handle is None:
        raise RigError("has lost its IK handle", bone=parts.chain[-1] if parts.chain else "", hint="Rebuild the limb.")
    if journal is not None:
        before = obj.pose.bones[handle].get(records.IK_FK)
        journal.data(lambda: obj.pose.bones[handle].__setitem__(records.IK_FK, before)
                     if before is not None and handle in obj.pose.bones else None)
    obj.pose.bones[handle][records.IK_FK] = float(value)
    write_keys(obj, records.ik_fk_path(handle), 0, handle, [frames[0], frames[-1]], [value, value], "CONSTANT",
               journal)
    obj.update_tag()


def clear_keys(obj: bpy.types.Object, names: Iterable[str], frames: Sequence[int]) -> None:
    """Delete the transform keys of the named bones between the first and last frame."""
    prefixes = tuple(f'pose.bones["{records.quoted(name)}"].' for name in names)
    for owner in fcurve_owners(obj):
        for curve in list(owner.fcurves):
            if not curve.data_path.startswith(prefixes):
                continue
            points = curve.keyframe_points
            _drop_range(curve, frames[0], frames[-1])
            if len(points):
                curve.update()
            else:
                owner.fcurves.remove(curve)


class Progress:
    """Blender's window progress when a window exists; a line per limb headless."""

    def __init__(self, total: int) -> None:
        manager = bpy.context.window_manager
        self.manager = manager if manager is not None and len(manager.windows) else None
        self.total = max(total, 1)
        self.done = 0
        if self.manager is not None:
            self.manager.progress_begin(0, self.total)

    def step(self, count: int = 1) -> None:
        self.done += count
        if self.manager is not None:
            self.manager.progress_update(min(self.done, self.total))

    def say(self, line: str) -> None:
        if self.manager is None:
            print(line, file=sys.stdout, flush=True)

    def end(self) -> None:
        if self.manager is not None:
            self.manager.progress_end()


@contextmanager
def rig_muted(obj: bpy.types.Object, limbs: Sequence[records.Parts]) -> Iterator[None]:
    """IK Rigger's constraints of ``limbs`` muted for the block, so the chains show their FK."""
    muted = []
    for parts in limbs:
        for _, constraint in records.constraints_of(obj, parts):
            if not constraint.mute:
                constraint.mute = True
                muted.append(constraint)
    try:
        yield
    finally:
        for constraint in muted:
            constraint.mute = False


def default_interpolation() -> str:
    """The user's interpolation for new keys (Preferences > Animation)."""
    mode = bpy.context.preferences.edit.keyframe_new_interpolation_type
    return mode if mode in _INTERPOLATION else "BEZIER"


def bake_limbs(obj: bpy.types.Object, limbs: Sequence, direction: str, frames: Sequence[int], *,
               switch: bool = False, clear: bool = False, interpolation: str | None = None) -> list[BakeResult]:
    """Bake each limb one way over ``frames`` (whole frames, ascending).

    ``direction`` 'FK_TO_IK' keys the handle, pole and clone from the FK motion;
    'IK_TO_FK' keys the chain and extremity from what the rig shows. ``switch`` keys
    ``ik_fk`` so the result plays in the mode baked to; ``clear`` deletes, over the
    range, the keys of the side baked away from.
    """
    if direction not in ("FK_TO_IK", "IK_TO_FK"):
        raise RigError(f"unknown bake direction '{direction}'", hint="Use FK_TO_IK or IK_TO_FK.")
    frames = sorted(set(frames))
    if not frames:
        raise RigError("no frames to bake", hint="Set a frame range with the start before the end.")
    mode = interpolation or default_interpolation()
    parts_list = [records.require(obj, limb, records.ROLE_HANDLE, ik=True) for limb in limbs]
    progress = Progress(len(frames) + len(parts_list))
    started = time.perf_counter()
    results = []
    try:
        if direction == "FK_TO_IK":
            names = set().union(*(fk_bones(obj, parts) for parts in parts_list))
            with rig_muted(obj, parts_list):
                recording = Recording(obj, frames, names, lambda _: progress.step())
        else:
            names = set().union(*(ik_bones(obj, parts) for parts in parts_list))
            recording = Recording(obj, frames, names, lambda _: progress.step())
        read = (time.perf_counter() - started) / max(len(parts_list), 1)
        for limb, parts in zip(limbs, parts_list):
            began = time.perf_counter()
            if direction == "FK_TO_IK":
                key_controls(obj, parts, recording, mode)
                if clear:
                    clear_keys(obj, parts.chain + ([parts.extremity] if parts.extremity else []), frames)
            else:
                key_chain(obj, parts, recording, mode)
                if clear:
                    clear_keys(obj, parts.made.values(), frames)
            if switch:
                key_switch(obj, parts, frames, 1.0 if direction == "FK_TO_IK" else 0.0)
            result = BakeResult(limb.name, len(frames), read + time.perf_counter() - began)
            results.append(result)
            progress.step()
            progress.say(f"baked {limb.name}: {result.frames} frames {direction.replace('_', ' ').lower()} "
                         f"in {result.seconds:.2f} s")
    finally:
        progress.end()
    return results
