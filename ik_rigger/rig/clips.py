"""What plays on an armature: the frames, the bones a motion moves, the file's other clips.

Read before anything changes (a build keeps the motion, a bake reads it); a clip can be
made to play alone (``playing_alone``) to be recorded and keyed in its own action.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import bpy

from ..core.geometry import POSE_CHANNELS
from . import records
from .animation import action_fcurves, action_paths, bone_of_path, claimed_clips, stored_clips, strip_actions

# Less than this off a whole frame is on it (a range end stored as 6.0000001).
_SUBFRAME = 1e-4


def _actions(obj: bpy.types.ID) -> list[tuple[bpy.types.Action, float, float]]:
    """Each action that plays on ``obj`` (an object, or an object's data) with the scene frames it covers."""
    data = getattr(obj, "animation_data", None)
    if data is None:
        return []
    found = []
    action = data.action
    if action is not None:
        start, end = action.frame_range
        if action.use_frame_range:
            # A manual range (a game clip's) does not stop the active action's keys outside it from playing.
            start, end = min(start, action.curve_frame_range[0]), max(end, action.curve_frame_range[1])
        found.append((action, start, end))
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
    if not bpy.data.actions:
        return []  # no action anywhere: nothing plays, whatever the bones follow
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


def enabled(constraint: bpy.types.Constraint) -> bool:
    """True when ``constraint`` acts (is not muted)."""
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
            sources = [*(source for constraint in pose_bone.constraints if enabled(constraint)
                         for source in _targets(constraint)), *driven.get(bone.name, ())]
            for target, name in sources:
                if target == obj:
                    work.extend([name] if name else [])
                elif target not in others:
                    others.append(target)
            bone = bone.parent
    for other in others:  # grows as it goes: what each one follows is followed too
        leaders: list[bpy.types.Object | None] = [other.parent]
        leaders += [leader for constraint in other.constraints if enabled(constraint)
                    for leader, _ in _targets(constraint)]
        leaders += [leader for found in _driven_by(other).values() for leader, _ in found]
        for leader in leaders:
            if leader is not None and leader != obj and leader not in others:
                others.append(leader)
    return names, others


def carriers(obj: bpy.types.Object) -> list[bpy.types.Object]:
    """The animated objects that move the object ``obj`` itself: its parents and what its constraints
    follow, and what those follow in turn (parents, constraint targets, driver variables)."""
    found: list[bpy.types.Object] = []
    work = [obj]
    while work:
        item = work.pop()
        leaders: list[bpy.types.Object | None] = [item.parent]
        leaders += [leader for constraint in item.constraints if enabled(constraint)
                    for leader, _ in _targets(constraint)]
        if item is not obj:  # the armature's own drivers move its bones, read by the export
            leaders += [leader for sources in _driven_by(item).values() for leader, _ in sources]
        for leader in leaders:
            if leader is not None and leader != obj and leader not in found:
                found.append(leader)
                work.append(leader)
    return [item for item in found if _animated(item)]


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


def animated_paths_of(obj: bpy.types.Object) -> set[str]:
    """Every data path of ``obj`` its actions, NLA strips and drivers animate."""
    return set(_animated_paths(obj))


def animating_curves(obj: bpy.types.Object, prefix: str) -> list[bpy.types.FCurve]:
    """The F-curves of the actions that play on ``obj`` and its drivers whose data path starts with ``prefix``."""
    data = obj.animation_data
    curves = [curve for action, _, _ in _actions(obj) for curve in action_fcurves(action)
              if curve.data_path.startswith(prefix)]
    drivers = data.drivers if data is not None else ()
    return curves + [curve for curve in drivers if curve.data_path.startswith(prefix)]


def _moving(names: Iterable[str], paths: Iterable[str], channels_only: bool = False) -> bool:
    """True when one of ``paths`` animates one of the bones ``names`` (``channels_only``: one of their transform
    channels, not a constraint's setting or a property of theirs)."""
    prefixes = tuple(f'pose.bones["{records.quoted(name)}"]' for name in names)
    return any(path.startswith(prefixes) and (not channels_only or path.rpartition(".")[2] in POSE_CHANNELS)
               for path in paths if path.startswith("pose.bones["))


def _owners(obj: bpy.types.Object) -> list[bpy.types.ID]:
    """``obj`` and its data (a curve's path, say, animates there)."""
    return [obj, *([obj.data] if isinstance(obj.data, bpy.types.ID) else [])]


def _animated(obj: bpy.types.Object) -> bool:
    """True when actions or drivers play on ``obj`` or its data."""
    return any(bool(_actions(owner)) or (owner.animation_data is not None and len(owner.animation_data.drivers) > 0)
               for owner in _owners(obj))


def moves(obj: bpy.types.Object, bones: Iterable[str], carried: Iterable[str] = (),
          channels_only: bool = False) -> bool:
    """True when animation moves any of ``bones``: the armature's own (on them, a bone above them,
    or a bone they follow) or another object's that they follow (see ``followed``). Not what moves the bones
    ``carried`` (those that carry what the bones are read against too); ``channels_only``: by their transform
    channels alone (a rig's own drivers on their constraints move nothing of the motion)."""
    names, others = followed(obj, bones)
    names.difference_update(carried)
    return _moving(names, _animated_paths(obj), channels_only) or any(_animated(other) for other in others)


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


def strip_clips(obj: bpy.types.Object) -> list[Clip]:
    """The actions ``obj``'s playing NLA strips hold, but its active action and those linked from a library,
    as clips, by name: keys made for the bones' rests and parents, which a rebuild that changes those keys
    anew in each clip. None in NLA tweak mode, where the active action cannot change."""
    data = obj.animation_data
    if data is None or data.use_tweak_mode:
        return []
    clips: dict[str, Clip] = {}
    for track in data.nla_tracks:
        for strip in track.strips if not track.mute else ():
            action = strip.action
            if (action is not None and not strip.mute and action != data.action and action.library is None
                    and action.name not in clips):
                clips[action.name] = Clip(action, getattr(strip, "action_slot", None))
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
