"""Mode switches: the only place IK Rigger changes an object's mode.

Every switch costs a depsgraph update and a conversion between edit bones and
bones, so callers batch their work into one Edit pass and one Object/Pose pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import bpy

from ..core.errors import RigError
from .scene_state import check_evaluated, in_pose_position, others_kept

# Object.mode values and the mode_set argument that returns to them.
_MODE_SET = {"EDIT_ARMATURE": "EDIT", "EDIT": "EDIT", "POSE": "POSE", "OBJECT": "OBJECT"}


def set_mode(obj: bpy.types.Object, mode: str) -> None:
    """Put ``obj`` (made active) into ``mode`` ('OBJECT', 'EDIT' or 'POSE')."""
    if _MODE_SET.get(obj.mode) == mode:
        return
    context = bpy.context
    view_layer = context.view_layer
    if view_layer.objects.active != obj:
        view_layer.objects.active = obj
    try:
        if context.object == obj and context.active_object == obj:
            bpy.ops.object.mode_set(mode=mode)  # an override costs a third of a switch, when none is needed
        else:  # a context naming another object (a pinned Properties editor, a caller's override)
            with context.temp_override(active_object=obj, object=obj):
                bpy.ops.object.mode_set(mode=mode)
    except RuntimeError as error:
        what = "armature" if obj.type == "ARMATURE" else "object"
        raise RigError(f"Blender could not put the {what} '{obj.name}' into {mode.lower()} mode ({error})",
                       hint=f"Make sure the {what} and its collection are visible and not excluded.") from error


def leave_edit_mode(obj: bpy.types.Object) -> None:
    """Make ``Bone`` data current: Blender writes edit bones back only on leaving Edit mode."""
    if obj.mode == "EDIT":
        set_mode(obj, "OBJECT")


def data_mode(original: str) -> str:
    """The mode for the constraint stage: Pose if the user was there, else Object.

    Constraints can be added in either, so staying in Pose mode saves a switch.
    """
    return "POSE" if original == "POSE" else "OBJECT"


def _isolating_view(obj: bpy.types.Object) -> bpy.types.SpaceView3D | None:
    """The context's 3D Viewport where its Local View leaves ``obj`` out (the mesh isolated, the armature
    active): Blender edits and poses only what that view shows, as it does only objects not hidden."""
    space = getattr(bpy.context, "space_data", None)
    if space is None or space.type != "VIEW_3D" or space.local_view is None:
        return None
    # Blender 4.2 to 4.5 keep an object's place in a Local View current on its evaluated copy alone.
    return None if obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).local_view_get(space) else space


def _restore_visibility(obj: bpy.types.Object, view_layer: bpy.types.ViewLayer, hidden: bool,
                        hidden_viewport: bool, isolated: bpy.types.SpaceView3D | None = None) -> None:
    if isolated is not None:
        obj.local_view_set(isolated, False)
    if obj.hide_viewport != hidden_viewport:
        obj.hide_viewport = hidden_viewport
    if obj.hide_get(view_layer=view_layer) != hidden:
        obj.hide_set(hidden, view_layer=view_layer)


def _hiding_collection(obj: bpy.types.Object, view_layer: bpy.types.ViewLayer) -> str | None:
    """The name of the first collection hidden in ``view_layer`` (its eye in the Outliner) that holds ``obj``
    or a collection holding it."""

    def visit(layer: bpy.types.LayerCollection, hidden: str | None) -> str | None:
        hidden = hidden or (layer.collection.name if layer.hide_viewport else None)
        if hidden and any(item == obj for item in layer.collection.objects):
            return hidden
        return next((found for child in layer.children if (found := visit(child, hidden))), None)

    return visit(view_layer.layer_collection, None)


# The objects (by their pointer) inside a ``kept_mode`` block now.
_KEEPING: set[int] = set()


@contextmanager
def kept_mode(obj: bpy.types.Object) -> Iterator[str]:
    """Run a block that may switch modes and leave ``obj`` as the user had it.

    Yields the mode ``obj`` was in ('OBJECT', 'EDIT' or 'POSE'). Restores the mode,
    the active object (and the mode it was in: a mesh in Edit mode or Weight Paint leaves
    it while the armature changes modes) and the object's visibility. A hidden armature
    is shown for the duration, since Blender cannot edit hidden objects, and one in Rest Position
    is in Pose Position (``scene_state.in_pose_position``). Every other
    object's animated values are given back as they were: Blender sets them from their
    keys on entering Edit mode and on each frame step, which would lose a pose not keyed.
    A block inside another for the same object gives back the mode it finds and leaves the
    rest to the outer one: work in steps (reading the skeleton, then building) leaves Edit
    mode once for them all.
    """
    key = obj.as_pointer()
    if key in _KEEPING:
        # Inside a block keeping ``obj`` already (Auto-Rig's reading, then its build): that block checked
        # it and gives the other objects back; this one keeps the mode it finds, switching no more.
        with _kept_mode(obj) as mode:
            yield mode
        return
    check_evaluated(obj)  # named as every operation names it: the collection that keeps it out
    _KEEPING.add(key)
    try:
        with others_kept(obj), in_pose_position(obj), _kept_mode(obj) as mode:
            yield mode
    finally:
        _KEEPING.discard(key)


@contextmanager
def _kept_mode(obj: bpy.types.Object) -> Iterator[str]:
    view_layer = bpy.context.view_layer
    active = view_layer.objects.active
    mode = _MODE_SET.get(obj.mode, "OBJECT")
    hidden = obj.hide_get(view_layer=view_layer)
    hidden_viewport = obj.hide_viewport
    other_mode = active.mode if active is not None and active != obj else "OBJECT"
    # Others in Pose or Edit mode besides: one not selected leaves it when ``obj`` does, and Blender takes
    # back only the selected ones (two armatures in Pose mode, one deselected in the Outliner).
    besides = [(item, item.mode) for item in view_layer.objects
               if item.mode in _MODE_SET and item.mode != "OBJECT" and item not in (obj, active)]
    if other_mode != "OBJECT":
        set_mode(active, "OBJECT")
    # Touch the flags only when set: each change rebuilds the scene's dependency graph.
    if hidden:
        obj.hide_set(False, view_layer=view_layer)
    if hidden_viewport:
        obj.hide_viewport = False
    isolated = _isolating_view(obj)
    if isolated is not None:
        obj.local_view_set(isolated, True)
    if not obj.visible_get(view_layer=view_layer):
        # Hidden by its collection: Blender would refuse Edit mode halfway through a build.
        _restore_visibility(obj, view_layer, hidden, hidden_viewport, isolated)
        hiding = _hiding_collection(obj, view_layer)
        where = f"the hidden collection '{hiding}'" if hiding else "a hidden collection"
        raise RigError(f"the armature '{obj.name}' is in {where}, and Blender cannot edit it there",
                       hint="Show its collection in the viewport (its eye in the Outliner), then try again.")
    try:
        yield mode
    finally:
        set_mode(obj, mode)
        for item, item_mode in besides:
            set_mode(item, _MODE_SET[item_mode])
        _restore_visibility(obj, view_layer, hidden, hidden_viewport, isolated)
        if active is not None and view_layer.objects.active != active:
            view_layer.objects.active = active
        if other_mode != "OBJECT":
            set_mode(active, other_mode)


@contextmanager
def mirror_off(obj: bpy.types.Object) -> Iterator[None]:
    """Turn the armature's X-Axis Mirror off for the block: with it on, every bone IK Rigger
    moves in Edit mode would move its mirror image too, unrecorded."""
    armature = obj.data
    mirrored = armature.use_mirror_x
    if mirrored:
        armature.use_mirror_x = False
    try:
        yield
    finally:
        if mirrored:
            armature.use_mirror_x = True
