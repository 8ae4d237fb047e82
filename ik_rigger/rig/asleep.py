"""Objects IK Rigger never reads, kept out of Blender's evaluation while it works.

A character's skinned meshes, with their shape keys, are most of what Blender evaluates
on each frame and at each mode switch, and rigging reads none of them. Disabled in
viewports, they are not evaluated; what an armature depends on (a constraint's target,
its parent) Blender still evaluates, as its dependency. Linked and overridden objects are
left alone: a change to those would be saved as an override.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import bpy


def _may_sleep(obj: bpy.types.Object) -> bool:
    return obj.library is None and obj.override_library is None and not obj.hide_viewport


def sleepers() -> list[bpy.types.Object]:
    """Every object shown in viewports but the armatures: what a headless batch, which saves
    the file next, keeps asleep from its load to its save."""
    return [obj for obj in bpy.data.objects if obj.type != "ARMATURE" and _may_sleep(obj)]


def followers(armature: bpy.types.Object) -> list[bpy.types.Object]:
    """The objects shown in viewports that move with ``armature``, which Blender evaluates
    again on every frame it plays: its children and what its Armature modifiers deform."""
    return [obj for obj in bpy.data.objects
            if obj is not armature and _may_sleep(obj)
            and (obj.parent == armature or any(modifier.type == "ARMATURE" and modifier.object == armature
                                               for modifier in obj.modifiers))]


def _plays(obj: bpy.types.Object) -> bool:
    """True when Blender evaluates ``obj`` again on a frame change: it is an armature (a character,
    posed by its keys, constraints and drivers), it is animated, or an armature moves it."""
    animation = obj.animation_data
    return (obj.type == "ARMATURE" or (animation is not None and (
        animation.action is not None or len(animation.drivers) > 0 or len(animation.nla_tracks) > 0))
        or (obj.parent is not None and obj.parent.type == "ARMATURE")
        or any(modifier.type == "ARMATURE" for modifier in obj.modifiers))


def bystanders(armature: bpy.types.Object, shown: Iterable[bpy.types.Object]) -> list[bpy.types.Object]:
    """Those of ``shown`` (a view layer's objects) that may sleep while the poses of ``armature`` alone
    are read frame by frame, and that Blender would play on each frame: its followers and the other
    characters of the scene (their armatures, what they move, what is animated). What ``armature``
    depends on Blender still evaluates; a still object costs a frame nothing, so it is left awake
    (waking it costs its evaluation). Objects in another mode (Pose mode with several armatures) stay
    awake too."""
    return [obj for obj in shown
            if obj is not armature and obj.mode == "OBJECT" and _may_sleep(obj) and _plays(obj)]


def selected(objects: Sequence[bpy.types.Object]) -> list[bpy.types.Object]:
    """Those of ``objects`` selected in the current view layer: Blender deselects an object it
    disables in viewports, so whoever shows it again selects these again (``reselect``)."""
    return [obj for obj in objects if obj.select_get()]


def reselect(objects: Sequence[bpy.types.Object]) -> None:
    for obj in objects:
        obj.select_set(True)


@contextmanager
def asleep(objects: Sequence[bpy.types.Object]) -> Iterator[None]:
    """For the block, ``objects`` disabled in viewports; shown again after it, whatever
    happens, selected as they were, and evaluated again at the next update."""
    chosen = selected(objects)
    for obj in objects:
        obj.hide_viewport = True
    try:
        yield
    finally:
        for obj in objects:
            obj.hide_viewport = False
        reselect(chosen)
