"""Bake motion between FK and IK over frame ranges, so rigging never loses animation.

- FK to IK: the motion the chain plays (its own keys, its parents', the NLA) is keyed
  onto the limb's handle, pole and extremity clone, so the IK rig plays the same;
- IK to FK: what the IK rig shows is keyed onto the chain's and extremity's own
  transforms (visual keying), so the limb plays the same in FK or without its rig.

The motion is worked out from the keys where only keys move the bones read, else read with
one scene evaluation per frame (``keys.Recording``); keys are written per F-curve in bulk.
Runs in Object or Pose mode; no mode switch.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

import bpy
from mathutils import Matrix, Vector

from .. import parts as limb_parts
from ..core.errors import RigError
from ..core.geometry import POSE_CHANNELS, rotation_property
from ..core.switches import number
from ..parts.pole_line import ROLE_POLE_LINE
from . import bake_cleared, bake_limits, held, records, snap_guard, soft_measure, solver, switches
from .animation import existing_fcurve, fcurve_owners, keyed_values
from .clip_hold import hold_in_other_clips
from .journal import Journal
from .keys import Local, Recording, default_interpolation, drop_range, key_transforms, log_curve, write_keys


@dataclass
class BakeResult:
    """What one limb's bake did, for the report."""

    limb: str
    frames: int
    seconds: float = 0.0
    from_keys: bool = False  # the motion was worked out from the keys, not played frame by frame
    warnings: tuple[str, ...] = ()  # where the baked IK does not play the FK motion (``bake_limits``)


# FK to IK ------------------------------------------------------------------------------


def fk_bones(obj: bpy.types.Object, parts: records.Parts) -> set[str]:
    """The bones whose motion an FK-to-IK bake reads: chain, extremity, the user's other bones the limb
    puts a constraint on (a foot roll's toe), and the user's bones the made bones hang from or follow
    (their parents, a parent socket's choices)."""
    names = set(parts.chain)
    if parts.extremity:
        names.add(parts.extremity)
    made = set(parts.made.values())
    names.update(owner for owner, _ in parts.constraints if owner in obj.data.bones and owner not in made)
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

    @cached_property
    def joint_poses(self) -> list[list[Matrix]]:
        """A hidden chain's poses on each frame that show the recorded chain (``solver.joint_poses``), joint by
        joint; none without one."""
        parts = self.parts
        if not parts.solver:
            return []
        frames = solver.joint_poses(self.obj, parts, list(zip(*(self.poses_of(name) for name in parts.chain))))
        return [[poses[index] for poses in frames] for index in range(len(parts.solver))]

    @property
    def roots(self) -> list[Matrix]:
        """Where IK's root stands on each frame: the chain's first bone, or its hidden chain's."""
        return self.joint_poses[0] if self.joint_poses else self.poses_of(self.parts.chain[0])

    @property
    def frames(self) -> Sequence[int]:
        return self.recording.frames

    def poses_of(self, name: str) -> list[Matrix]:
        """A bone's poses on each frame: worked out by a hook, else as recorded."""
        return self.made[name] if name in self.made else self.recording.poses[name]

    @staticmethod
    def local(rest: Matrix, parent_rest: Matrix | None) -> Local:
        return Local(rest, parent_rest)

    def played_switch(self, bone: str, name: str, default: float) -> list[float]:
        """The switch ``name`` of ``bone`` (a custom property) on each frame, as the active action's keys play it
        there, else as it is now (``default`` where there is none): a keyed parent switch changes on the way."""
        pose_bone = self.obj.pose.bones[bone]
        played = keyed_values(self.obj, pose_bone.path_from_id(f'["{name}"]'), self.frames)
        return played if played is not None else [number(pose_bone, name, default)] * len(self.frames)

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
    bake = Bake(obj, parts, ik, recording, [], interpolation, journal, {})
    joints = bake.joint_poses
    bake.ends = solver.chain_ends(obj, parts, recording.poses[parts.chain[-1]], joints[-1] if joints else [])
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
        if bone.use_inherit_rotation and bone.inherit_scale == "FULL" and bone.use_local_location:
            local = Local(bone.matrix_local, parent.matrix_local if parent else None)
            bases = [local.basis(pose, poses[parent.name][number] if parent else None)
                     for number, pose in enumerate(poses[name])]
        else:  # a bone not inheriting its parent's rotation or scale fully: as Blender reads its own keys
            bases = [_basis_as_blender(bone, pose, poses[parent.name][number] if parent else None)
                     for number, pose in enumerate(poses[name])]
        stretched = any(abs(value - 1.0) > 1e-5 for basis in bases for value in basis.to_scale())
        key_transforms(obj, name, recording.frames, bases, interpolation, journal,
                        location=not bone.use_connect, scale=stretched)
    return len(recording.frames)


def driven_channels(obj: bpy.types.Object, limbs: Sequence[records.Parts]) -> list[tuple[str, str]]:
    """(bone, channel) of the limbs' chain and extremity channels ``key_chain`` keys (the rotation, the location
    of a bone not connected) that a driver of the user's sets: keys there do not play. The drivers are read
    once for all the limbs."""
    names = [name for parts in limbs for name in parts.chain + ([parts.extremity] if parts.extremity else [])]
    found = []
    for bone, channel in snap_guard.user_drivers(obj, names):
        keyed = {rotation_property(obj.pose.bones[bone].rotation_mode)}
        if not obj.data.bones[bone].use_connect:
            keyed.add("location")
        if channel.partition("[")[0] in keyed:
            found.append((bone, channel))
    return found


def _check_driven(obj: bpy.types.Object, limbs: Sequence[records.Parts]) -> None:
    """Refuse to key FK where a driver of the user's sets the channel: the keys would not play."""
    for bone, channel in driven_channels(obj, limbs)[:1]:
        raise RigError(f"its {channel} is set by a driver, so the keys Bake IK to FK would write there would "
                       "not play what the IK shows; nothing was changed", bone=bone,
                       hint="Mute the driver (Drivers editor) or delete it, then bake again.")


def ik_bones(obj: bpy.types.Object, parts: records.Parts) -> set[str]:
    """The bones an IK-to-FK bake reads: chain, extremity and their parents (an extremity may hang
    from another bone than the chain: glTF's RobotExpressive's feet hang from the root)."""
    names = set(parts.chain)
    if parts.extremity:
        names.add(parts.extremity)
    bones = obj.data.bones
    names |= {bones[name].parent.name for name in list(names) if name in bones and bones[name].parent is not None}
    return names


def _basis_as_blender(bone: bpy.types.Bone, pose: Matrix, parent_pose: Matrix | None) -> Matrix:
    """The local pose that puts ``bone`` at ``pose`` under its parent at ``parent_pose``, by Blender's own
    rules for its Inherit Rotation, Inherit Scale and Local Location."""
    if parent_pose is None or bone.parent is None:
        return bone.convert_local_to_pose(pose, bone.matrix_local, invert=True)
    return bone.convert_local_to_pose(pose, bone.matrix_local, parent_matrix=parent_pose,
                                      parent_matrix_local=bone.parent.matrix_local, invert=True)




def _log_poses(obj: bpy.types.Object, limbs: Sequence[records.Parts], journal: Journal) -> None:
    """Log what gives the limbs' bones their pose values back: the keys a bake writes set them as frames play,
    and removing those keys again would leave them so."""
    names = {name for parts in limbs for name in [*parts.chain, *parts.made.values(), parts.extremity] if name}
    pose_bones = obj.pose.bones
    saved = {name: [tuple(getattr(pose_bones[name], channel)) for channel in POSE_CHANNELS]
             for name in names if name in pose_bones}

    def undo() -> None:
        for name, values in saved.items():
            for channel, value in zip(POSE_CHANNELS, values):
                setattr(obj.pose.bones[name], channel, value)

    journal.data(undo)


def _bake_one(obj: bpy.types.Object, parts: records.Parts, direction: str, recording: Recording, mode: str, *,
              switch: bool, clear: bool, journal: Journal) -> list[str]:
    """Bake one limb over ``recording`` (``bake_limbs``); returns its warnings."""
    frames = recording.frames
    warned: list[str] = []
    if direction == "FK_TO_IK":
        key_controls(obj, parts, recording, mode, journal)
        held.check(obj, [parts], frames, "Bake FK to IK", "the FK motion", ik=True)
        held.check_chain(obj, parts, frames, recording.poses)
        warned = bake_limits.check(obj, parts, frames, recording.poses)
        if clear:
            clear_keys(obj, parts.chain + ([parts.extremity] if parts.extremity else []), frames, journal)
            bake_cleared.check(obj, parts, frames, recording.poses)
    else:
        key_chain(obj, parts, recording, mode, journal)
        if clear:
            clear_keys(obj, parts.made.values(), frames, journal)
    if switch:
        key_switch(obj, parts, frames, 1.0 if direction == "FK_TO_IK" else 0.0, journal, cut=True)
    return warned


# The switch ------------------------------------------------------------------------------


def key_switch(obj: bpy.types.Object, parts: records.Parts, frames: Sequence[int], value: float,
               journal: Journal | None = None, cut: bool = False) -> None:
    """Key the limb's ``ik_fk`` to ``value`` over ``frames`` (constant, so it plays in one mode); ``cut``: and
    the value it played on the frame before and after them there, where it differs, so the rest of the shot
    plays as it did (two keys alone would hold ``value`` over the whole shot)."""
    handle = parts.handle
    if handle is None:
        raise RigError("has lost its IK handle", bone=parts.chain[-1] if parts.chain else "", hint="Rebuild the limb.")
    path = records.ik_fk_path(handle)
    # Read before the keys are written: a key on the first frame bends a Bezier curve before it.
    sides = _played_around(obj, parts, path, frames) if cut else []
    held = records.ik_fk(obj, parts)
    if journal is not None:
        before = obj.pose.bones[handle].get(records.IK_FK)
        journal.data(lambda: obj.pose.bones[handle].__setitem__(records.IK_FK, before)
                     if before is not None and handle in obj.pose.bones else None)
    obj.pose.bones[handle][records.IK_FK] = float(value)
    write_keys(obj, path, 0, handle, [frames[0], frames[-1]], [value, value], "CONSTANT", journal)
    curve = existing_fcurve(obj, path)
    for frame, played, interpolation in sides:
        if played != value and curve is not None:
            curve.keyframe_points.insert(frame, played, options={"FAST"}).interpolation = interpolation
    if curve is not None and sides:
        curve.update()
    if cut:
        hold_in_other_clips(obj, parts, records.IK_FK, held, journal)
    obj.update_tag()


def _played_around(obj: bpy.types.Object, parts: records.Parts, path: str,
                   frames: Sequence[int]) -> list[tuple[int, float, str]]:
    """The frames just before and after ``frames``, the value the switch plays on each (its curve's, else its
    own) and the interpolation a key there takes: constant before (a cut into the frames), after as the key
    that played there did toward the next (a switch blending on after them still blends)."""
    curve = existing_fcurve(obj, path)
    first, last = frames[0] - 1, frames[-1] + 1
    if curve is None:
        value = records.ik_fk(obj, parts)
        return [(first, value, "CONSTANT"), (last, value, "CONSTANT")]
    playing = [point for point in curve.keyframe_points if point.co.x <= last + 1e-3]
    after = playing[-1].interpolation if playing else "CONSTANT"
    return [(first, curve.evaluate(first), "CONSTANT"), (last, curve.evaluate(last), after)]


def clear_keys(obj: bpy.types.Object, names: Iterable[str], frames: Sequence[int],
               journal: Journal | None = None) -> None:
    """Delete the transform keys of the named bones between the first and last frame."""
    prefixes = tuple(f'pose.bones["{records.quoted(name)}"].' for name in names)
    for owner in fcurve_owners(obj):
        for curve in list(owner.fcurves):
            if not curve.data_path.startswith(prefixes):
                continue
            if journal is not None:
                log_curve(obj, curve, journal)
            points = curve.keyframe_points
            drop_range(curve, frames[0], frames[-1])
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
    # Baked to IK, a control deleted by hand (the pole, the IK's target) leaves the IK playing another motion.
    to_ik = direction == "FK_TO_IK"
    parts_list = [records.require(obj, limb, records.ROLE_HANDLE, ik=True, every=to_ik, spared=(ROLE_POLE_LINE,))
                  for limb in limbs]
    for parts in parts_list:
        switches.check(obj, parts, restored=(records.IK_FK,) if switch else ())
        if direction == "FK_TO_IK":
            soft_measure.check(obj, parts, "baking FK to IK")
    if direction == "IK_TO_FK":
        _check_driven(obj, parts_list)
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
        journal = Journal(obj)  # a limb refused gives back what the bake wrote to every limb before it
        _log_poses(obj, parts_list, journal)
        try:
            for limb, parts in zip(limbs, parts_list):
                began = time.perf_counter()
                warned = _bake_one(obj, parts, direction, recording, mode, switch=switch, clear=clear,
                                   journal=journal)
                result = BakeResult(limb.name, len(frames), read + time.perf_counter() - began, recording.from_keys,
                                    tuple(warned))
                results.append(result)
                progress.step()
                progress.say(f"baked {limb.name}: {result.frames} frames {direction.replace('_', ' ').lower()} "
                             f"in {result.seconds:.2f} s")
        except BaseException:
            journal.rollback()
            raise
    finally:
        progress.end()
    return results
