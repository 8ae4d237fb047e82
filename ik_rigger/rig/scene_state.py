"""The user's scene as IK Rigger finds it: linked data it must not write, an armature Blender is not
evaluating, and the other objects a frame step would move.

Blender evaluates no object disabled in viewports, nor any in a collection disabled in viewports or
excluded from the view layer: its evaluated pose stays whatever it was last, so an operation reading
poses there would read stale ones. An armature disabled in viewports itself is shown for the
operation and given back (as builds do, ``modes.kept_mode``); one kept out by its collection is
refused, naming the collection, for every operation alike: turning a collection on would evaluate all
it holds, in every scene that uses it, which is the user's call.
"""

from __future__ import annotations

import math
import operator
import os
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager

import bpy

from ..core.errors import RigError
from .animation import action_fcurves
from .scene_time import check_unstretched
from .windows import shown


def library_path(data: bpy.types.ID) -> str:
    """The file ``data`` is linked from, as an absolute path (empty for local data)."""
    return library_file(data.library) if data.library is not None else ""


def library_file(library: bpy.types.Library) -> str:
    """The file of ``library`` as an absolute path, relative parts resolved (``//../chars/hero.blend``)."""
    return os.path.normpath(bpy.path.abspath(library.filepath, library=library.library))


def check_local(obj: bpy.types.Object) -> None:
    """Refuse an armature object linked from a library: its pose, switches and keys are read-only there,
    and what IK Rigger wrote would be lost on save. (A library override's pose is its own to write, though
    its armature data stays linked.)"""
    if obj.library is not None:
        raise RigError(f"the armature '{obj.name}' is linked from the library '{library_path(obj)}', so it is "
                       "read-only here", hint="Make a library override of it (Object > Library Override > Make) "
                       "to animate it, or open the library file to rig it.")


def check_posable(obj: bpy.types.Object) -> None:
    """``check_local``, and refuse a library override Blender made uneditable (a system override), whose
    pose is not the animator's to write."""
    check_local(obj)
    override = obj.override_library
    if override is not None and override.is_system_override:
        # Blender keeps such an override out of Pose mode; Blender 4.2 also drops keys written to it.
        raise RigError(f"the armature '{obj.name}' is a library override that is not editable (one Blender made "
                       "for the hierarchy of another object overridden)", hint="Select it and use Object > Library "
                       "Override > Make to make it editable, then try again.")


def check_frames(frames: Iterable[int]) -> list[int]:
    """``frames`` as a list of whole frames (``whole_frame``: 2.0 or a numpy integer is frame 2), refused
    (before a list of them is made: a range to 2**31 would fill the memory) where one lies between frames,
    is no number, or lies outside the frames Blender has, those of its scene's current frame."""
    if isinstance(frames, range):
        ends = [frames[0], frames[-1]] if frames else []
        _check_within(ends)
        return list(frames)
    if isinstance(frames, (str, bytes)):  # "15" is no frames 1 and 5
        raise RigError(f"the frames {frames!r} are text, not frame numbers", hint="Give a list of whole frames.")
    listed = list(frames)
    if not all(type(frame) is int for frame in listed):  # a script's floats or numpy integers: each checked
        listed = [whole_frame(frame) for frame in listed]
    _check_within(listed)
    return listed


def whole_frame(frame: object) -> int:
    """``frame`` as a frame number: an integer of any type, or a float that is whole; a RigError naming it
    where it is no number or lies between frames (keys and bakes go on whole frames)."""
    if isinstance(frame, (str, bytes)):
        raise RigError(f"the frame {frame!r} is text, not a frame number", hint="Give whole frame numbers.")
    try:
        return operator.index(frame)  # type: ignore[arg-type]
    except TypeError:
        pass
    try:
        number = float(frame)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise RigError(f"the frame {frame!r} is not a frame number", hint="Give whole frame numbers.") from None
    if not math.isfinite(number):
        raise RigError(f"the frame {number} is not a frame number", hint="Give whole frame numbers.")
    if not number.is_integer():
        raise RigError(f"the frame {number:g} lies between frames, where no key goes",
                       hint="Give whole frame numbers (round it).")
    return int(number)


def _check_within(frames: Collection[int]) -> None:
    """Refuse frames outside those Blender has (its scene's current frame's limits)."""
    limits = bpy.types.Scene.bl_rna.properties["frame_current"]
    low, high = limits.hard_min, limits.hard_max
    outside = [frame for frame in frames if not low <= frame <= high]
    if outside:
        raise RigError(f"the frame {outside[0]} lies outside Blender's frames, {low} to {high}",
                       hint="Give frames within them.")


def check_keyable(obj: bpy.types.Object, mapped: bool = False, frame: object = None, shown: bool = False) -> int | None:
    """Refuse to key an armature whose action is linked from a library (keys written there are lost on
    save), or one whose keys would not play as keyed (``check_keys_play``; ``mapped``: its keys are
    inserted as Blender's own, at the scene's frames, which it maps into a tweaked strip's time), or at a
    ``frame`` that is none of Blender's (``check_frames``), where no key plays; ``shown``: keys of the pose shown
    on ``frame`` (default: the current one), refused while the scene stretches time (``check_unstretched``).
    Returns ``frame`` as a whole frame (``whole_frame``), None for none."""
    if frame is not None:
        frame = check_frames([whole_frame(frame)])[0]
    if shown:
        scene = bpy.context.scene
        check_unstretched(scene, scene.frame_current if frame is None else frame)
    data = obj.animation_data
    action = data.action if data is not None else None
    if action is not None and action.library is not None:
        raise RigError(f"the action '{action.name}' of '{obj.name}' is linked from the library "
                       f"'{library_path(action)}', so no key can be written into it",
                       hint="Give the armature a local action (a copy of this one: the Action editor's Duplicate), "
                       "then try again.")
    check_keys_play(obj, mapped)
    return frame


def check_keys_play(obj: bpy.types.Object, mapped: bool = False, instead: str = "") -> None:
    """Refuse to key an armature where keys written at the scene's frames would not play as keyed: in NLA
    tweak mode (they go into a strip's action, played through its timing and blending), or where its action
    plays over its NLA strips at part of its influence or blended other than Replace (a key for a bone
    nothing else moves plays at that part, or added to its rest). Keys ``mapped`` into a tweaked strip's
    time (inserted as Blender's own, a snap's) play as keyed there when the strip replaces what is below
    it at full influence. ``instead``: what else the user may do, where the caller has a way without keys."""
    data = obj.animation_data
    otherwise = f"; or {instead}" if instead else ""
    if data is None:
        return
    if data.use_tweak_mode and not (mapped and _tweaked_strips_replace(data)):
        raise RigError(f"the armature '{obj.name}' is in NLA tweak mode, where keys go into the strip's action and "
                       "play through its timing and blending", hint="Leave tweak mode (Tab in the NLA editor), then "
                       f"try again{otherwise}.")
    nla = data.use_nla and any(not track.mute and len(track.strips) for track in data.nla_tracks)
    if nla and (data.action_blend_type != "REPLACE" or data.action_influence < 1.0):
        what = f"its action '{data.action.name}'" if data.action is not None else "its action"
        raise RigError(f"{what} plays over the NLA strips of '{obj.name}' blended as "
                       f"{data.action_blend_type.title()} at {data.action_influence:.0%} influence, so keys written "
                       "into it would not play as keyed",
                       hint="Set its blending to Replace and its influence to 100% (the NLA editor's sidebar, on "
                       f"its track), or push it down onto a strip, then try again{otherwise}.")


def check_strip_keys_play(obj: bpy.types.Object, actions: Collection[bpy.types.Action], instead: str = "") -> None:
    """Refuse to key anew, in ``actions`` played from ``obj``'s NLA strips, a pose read from each played alone,
    where a strip playing one blends it other than Replace, or at an animated influence (a strip's own is
    full): there the keys
    would play added, combined or at part of their influence, not as keyed (``check_keys_play`` for the
    armature's own action). ``instead``: what else the user may do."""
    data = obj.animation_data
    if data is None or not data.use_nla or not actions:
        return
    for track in data.nla_tracks:
        for strip in track.strips if not track.mute else ():
            if strip.mute or strip.action not in actions or (strip.blend_type == "REPLACE"
                                                             and not strip.use_animated_influence):
                continue
            influence = "an animated" if strip.use_animated_influence else "100%"
            raise RigError(f"the NLA strip '{strip.name}' of '{obj.name}' plays its action '{strip.action.name}' "
                           f"blended as {strip.blend_type.title()} at {influence} influence, so keys written into "
                           "that action anew would not play as keyed",
                           hint="Set the strip's blending to Replace and its influence to 100% (the NLA editor's "
                           f"sidebar), then try again{f'; or {instead}' if instead else ''}.")


def check_keys_over_strips(obj: bpy.types.Object, bones: Iterable[str]) -> None:
    """Refuse to key ``bones`` of an armature with no action of its own whose NLA strips move them: the keys
    would go into a new action played over the strips, holding the bones keyed there on every frame."""
    data = obj.animation_data
    if data is None or data.action is not None or not data.use_nla:
        return
    prefixes = tuple(f'pose.bones["{bpy.utils.escape_identifier(name)}"]' for name in bones)
    for track in data.nla_tracks:
        for strip in track.strips if not track.mute else ():
            action = strip.action
            if strip.mute or action is None or not any(curve.data_path.startswith(prefixes)
                                                       for curve in action_fcurves(action)):
                continue
            raise RigError(f"the armature '{obj.name}' has no action of its own and plays its motion from the NLA "
                           f"strip '{strip.name}': keys written now would go into a new action played over the "
                           "strips, holding the bones keyed on every frame of the shot",
                           hint=f"Give it back its action '{action.name}' (Dope Sheet > Action Editor) and mute that "
                           "strip's track, or, to snap, key into the strip in tweak mode (Tab in the NLA editor); then "
                           "try again.")


def holds(objects: Iterable[bpy.types.Object], obj: bpy.types.Object) -> bool:
    """Whether ``objects`` (a collection's, a view layer's) hold ``obj`` itself: a name may also be that of
    an object linked from a library (the character a shot links, beside its override)."""
    return any(item == obj for item in objects)


def _collection_off(obj: bpy.types.Object, view_layer: bpy.types.ViewLayer) -> tuple[str, str] | None:
    """The first collection keeping ``obj`` out of evaluation, and how (None when none does)."""
    found: tuple[str, str] | None = None

    def visit(layer: bpy.types.LayerCollection, off: tuple[str, str] | None) -> bool:
        nonlocal found
        collection = layer.collection
        if off is None and layer.exclude:
            off = (collection.name, "excluded from the view layer")
        elif off is None and collection.hide_viewport:
            off = (collection.name, "disabled in viewports")
        if holds(collection.objects, obj):
            if off is None:
                return True
            found = found or off
        return any(visit(child, off) for child in layer.children)

    return None if visit(view_layer.layer_collection, None) else found


def _tweaked_strips_replace(data: bpy.types.AnimData) -> bool:
    """Whether every strip playing the tweaked action plays it as keyed: blended as Replace, at full
    influence (none animated)."""
    strips = [strip for track in data.nla_tracks for strip in track.strips
              if data.action is not None and strip.action == data.action]
    return bool(strips) and all(strip.blend_type == "REPLACE" and not strip.use_animated_influence
                                for strip in strips)


def instancing(view_layer: bpy.types.ViewLayer, obj: bpy.types.Object) -> tuple[str, str] | None:
    """The first object of ``view_layer`` showing a collection that holds ``obj`` as an instance, with that
    collection's name; None when none does."""
    for item in view_layer.objects:
        collection = item.instance_collection if item.instance_type == "COLLECTION" else None
        if collection is not None and holds(collection.all_objects, obj):
            return item.name, collection.name
    return None


def _check_not_instanced(obj: bpy.types.Object, view_layer: bpy.types.ViewLayer, what_to_do: str) -> None:
    """Refuse an armature kept out of ``view_layer`` and shown there through a collection instance only, naming
    the instance: what the user sees is Blender's copy, which no one can pose."""
    shown = instancing(view_layer, obj)
    if shown is not None:
        raise RigError(f"the armature '{obj.name}' is shown in the view layer '{view_layer.name}' only through the "
                       f"collection instance '{shown[0]}', a copy of the collection '{shown[1]}' that Blender "
                       "evaluates and no one can pose", hint=f"{what_to_do}, hide the instance while you rig and "
                       "animate, then try again.")


def check_evaluated(obj: bpy.types.Object) -> None:
    """Refuse, naming the collection, an armature Blender cannot evaluate in the current view layer
    because of its collections (or because no collection of this scene holds it); one a collection instance
    shows there, naming the instance."""
    view_layer = bpy.context.view_layer
    if obj.visible_get(view_layer=view_layer):
        return  # shown in this view layer: in it, and no collection keeps it out (nor need its collections be walked)
    off = _collection_off(obj, view_layer)
    if off is not None:
        name, how = off
        what_to_do = "Include it in the view layer (its checkbox in the Outliner)" if how.startswith("excluded") \
            else "Enable it in viewports (its screen icon in the Outliner)"
        _check_not_instanced(obj, view_layer,
                             f"Work on the collection '{name}' itself: {what_to_do[0].lower()}{what_to_do[1:]}")
        raise RigError(f"the armature '{obj.name}' is in the collection '{name}', {how}, so Blender does not "
                       "evaluate its poses", hint=f"{what_to_do}, then try again.")
    if not holds(view_layer.objects, obj):
        scene = bpy.context.scene
        where = next((collection.name for collection in obj.users_collection), "")
        _check_not_instanced(obj, view_layer, f"Work on the collection '{where}' itself: link it into the scene "
                             f"'{scene.name}'")
        others = [other.name for other in obj.users_scene if other != scene]
        where = f"in the scene '{others[0]}'" if others else "in no scene"
        instead = f", or open the file on the scene '{others[0]}'" if others else ""
        raise RigError(f"the armature '{obj.name}' is not in the view layer '{view_layer.name}' of the scene "
                       f"'{scene.name}' ({where}), so Blender does not evaluate its poses",
                       hint=f"Link it into a collection of the scene '{scene.name}'{instead}, then try again.")


@contextmanager
def in_its_scene(obj: bpy.types.Object) -> Iterator[str]:
    """The block in a scene and view layer that hold ``obj``, where the file opens on another: a file need
    not open on its character's scene (a layout scene first, the character in its own), and a batch has no
    scene to switch to. Yields a note naming that scene; '' where the view layer the file opens on holds
    ``obj``, or none does (there ``check_evaluated`` refuses, naming both). The file opens on its scene after."""
    here = bpy.context.view_layer.objects
    if here.get(obj.name) == obj or holds(here, obj):  # by name first: a file's thousands of objects
        yield ""
        return
    layers = [(scene, layer) for scene in obj.users_scene for layer in scene.view_layers if holds(layer.objects, obj)]
    # One that shows it first (a view layer may keep its collection out); then the scene's rendered one.
    layers.sort(key=lambda found: (not obj.visible_get(view_layer=found[1]), not found[1].use))
    if not layers:
        yield ""
        return
    scene, layer = layers[0]
    note = (f"worked on in the scene '{scene.name}' (view layer '{layer.name}'), which holds it; the file opens on "
            f"the scene '{bpy.context.scene.name}' as before")
    with shown(scene, layer):
        yield note


@contextmanager
def on_frame(frame: int | None) -> Iterator[int]:
    """The scene on ``frame`` for the block, so a pose read there is the one it plays there (a snap or switch
    keyed on another frame than the current one), then back on the frame it was on; None: the current one."""
    scene = bpy.context.scene
    current, subframe = scene.frame_current, scene.frame_subframe
    if frame is None or (frame == current and not subframe):
        yield current
        return
    scene.frame_set(frame)
    try:
        yield frame
    finally:
        scene.frame_set(current, subframe=subframe)


@contextmanager
def in_pose_position(obj: bpy.types.Object, done: str = "rigged or animated") -> Iterator[None]:
    """The armature in Pose Position for the block: in Rest Position (Armature properties), which an
    animator turns on to look at the rest, Blender plays no pose, and every pose read (a kept motion, a
    bake, a snap, a clip exported) would be the rest. ``done``: what the caller does, for a refusal."""
    data = obj.data
    rest = data.pose_position == "REST"
    if rest and data.library is not None:
        raise RigError(f"the armature '{obj.name}' shows its rest position, and its data is linked from a library, "
                       f"so its poses cannot be played to be {done}", hint="Set its Pose Position (Armature "
                       "properties, Skeleton) in the library file, then try again.")
    if rest:
        data.pose_position = "POSE"
    try:
        yield
    finally:
        if rest:
            data.pose_position = "REST"


@contextmanager
def evaluated(obj: bpy.types.Object) -> Iterator[None]:
    """For the block, ``obj`` evaluated by Blender: refused (``check_evaluated``) when its collections
    keep it out; shown when disabled in viewports itself (its keys evaluated at the current frame, as
    showing it again would), and disabled again after, selected as it was; in Pose Position
    (``in_pose_position``)."""
    check_evaluated(obj)
    hidden = obj.hide_viewport
    selected = obj.select_get()
    if hidden:
        obj.hide_viewport = False
        # Its animation was not evaluated while it was off, whatever frames the user went to since.
        obj.update_tag(refresh={"TIME"})
    try:
        with in_pose_position(obj):
            yield
    finally:
        if hidden:
            obj.hide_viewport = True
            if selected != obj.select_get():
                obj.select_set(selected)


def _animated_ids(obj: bpy.types.Object) -> Iterator[bpy.types.ID]:
    for other in bpy.data.objects:
        if other == obj or other.library is not None:
            continue
        yield other
        data = other.data
        if data is not None and data.library is None and data != obj.data:
            yield data
            keys = getattr(data, "shape_keys", None)
            if keys is not None:
                yield keys


def _paths(owner: bpy.types.ID) -> dict[str, set[int]]:
    """Each data path ``owner``'s action and NLA strips animate, with the array indexes they animate."""
    data = getattr(owner, "animation_data", None)
    if data is None:
        return {}
    actions = [data.action] if data.action is not None else []
    actions += [strip.action for track in data.nla_tracks for strip in track.strips if strip.action is not None]
    return animated_paths(actions)


def animated_paths(actions: Iterable[bpy.types.Action]) -> dict[str, set[int]]:
    """Each data path ``actions`` animate, with the array indexes they animate (an action once)."""
    paths: dict[str, set[int]] = {}
    for action in dict.fromkeys(actions):
        for path, index in action_paths_indexed(action):
            paths.setdefault(path, set()).add(index)
    return paths


def action_paths_indexed(action: bpy.types.Action) -> Iterator[tuple[str, int]]:
    """(data path, array index) of every F-curve of ``action``, for any slot."""
    return ((curve.data_path, curve.array_index) for curve in action_fcurves(action))


def _read(owner: bpy.types.ID, path: str) -> object:
    """The value at ``path``: a number, or an array's values as a tuple; None where it leads to neither.
    One look-up for all of an array's values (a location's three F-curves)."""
    try:
        value = owner.path_resolve(path)
    except ValueError:
        return None
    if isinstance(value, (bool, int, float, str)):
        return value
    try:
        return tuple(value)
    except TypeError:
        return None


def _write(owner: bpy.types.ID, path: str, index: int, value: object) -> None:
    """Write ``value`` where ``path`` (and ``index``, in an array) point."""
    if path.endswith('"]'):  # a custom property: 'pose.bones["foot"]["ik_fk"]', '["prop"]'
        holder_path, _, key = path[:-2].rpartition('["')
        name = bpy.utils.unescape_identifier(key)
    else:
        holder_path, _, name = path.rpartition(".")
    try:
        holder = owner.path_resolve(holder_path) if holder_path else owner
    except ValueError:
        return
    custom = path.endswith('"]')
    current = holder[name] if custom else getattr(holder, name)
    if not isinstance(current, (bool, int, float, str)):
        current[index] = value
    elif custom:
        holder[name] = value
    else:
        setattr(holder, name, value)


def _give_back(owner: bpy.types.ID, path: str, indexes: set[int], before: object) -> None:
    """Write back what ``_read`` gave at ``path`` before, where it changed: of an array, the animated
    ``indexes`` alone."""
    now = _read(owner, path)
    if now == before:
        return
    if not isinstance(before, tuple):
        _write(owner, path, 0, before)
        return
    for index in sorted(indexes):
        if index < len(before) and (not isinstance(now, tuple) or index >= len(now) or now[index] != before[index]):
            _write(owner, path, index, before[index])


Saved = list[tuple[bpy.types.ID, str, set[int], object]]


def values_at(owner: bpy.types.ID, paths: dict[str, set[int]]) -> Saved:
    """What ``owner`` holds at each of ``paths`` (data path -> the array indexes animated), for ``give_back``."""
    return [(owner, path, indexes, _read(owner, path)) for path, indexes in paths.items()]


def give_back(saved: Saved) -> None:
    """Each value ``values_at`` read written back where it changed since."""
    for owner, path, indexes, before in saved:
        if before is not None:
            _give_back(owner, path, indexes, before)


@contextmanager
def others_kept(obj: bpy.types.Object) -> Iterator[None]:
    """For a block that steps frames, every other object's animated values given back after it as they
    were: a frame step sets them from their keys, which would throw away a pose the user has not keyed
    (another character posed in Pose mode)."""
    # Only actions animate: a file without any has no animated value to give back.
    saved = [item for owner in _animated_ids(obj) for item in values_at(owner, _paths(owner))] \
        if bpy.data.actions else []
    try:
        yield
    finally:
        give_back(saved)
