"""Scene states a character is met in (hidden, not active, beside another armature in Edit or Pose mode,
another character posed and keyed, a later frame, a unit scale, an animated parent), set up on a character
already made, and what of the scene a user sees: it must come out of every operation as it went in."""

from __future__ import annotations

from collections.abc import Callable

import bpy
from helpers import all_fcurves, evaluate_world, leg_bones, make_armature

OTHER = "Other"


def other_character() -> bpy.types.Object:
    """A second character, keyed on frames 1 and 10 and posed off its keys at the current frame (not keyed
    yet): the pose it shows must stay, and so must its keys."""
    current = bpy.context.view_layer.objects.active
    mode = current.mode if current is not None else "OBJECT"
    if mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    other = make_armature([(name.replace(".L", ".X"), head, tail, parent and parent.replace(".L", ".X"), connected)
                           for name, head, tail, parent, connected in leg_bones(x=2.0)], name=OTHER, mode="OBJECT")
    shin = other.pose.bones["shin.X"]
    shin.rotation_mode = "XYZ"
    for frame, turn in ((1, 0.1), (10, 0.6)):
        shin.rotation_euler = (turn, 0.0, 0.0)
        shin.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.scene.frame_set(bpy.context.scene.frame_current)
    other.pose.bones["hips"].location = (0.0, 0.03, 0.01)  # posed, not keyed
    other.select_set(False)
    if current is not None:
        bpy.context.view_layer.objects.active = current
        current.select_set(True)
        if mode != "OBJECT":
            bpy.ops.object.mode_set(mode=mode)
    return other


def _in_collection(obj: bpy.types.Object, name: str) -> bpy.types.LayerCollection:
    collection = bpy.data.collections.new(name)
    bpy.context.scene.collection.children.link(collection)
    collection.objects.link(obj)
    for owner in list(obj.users_collection):
        if owner != collection:
            owner.objects.unlink(obj)
    return bpy.context.view_layer.layer_collection.children[collection.name]


def _object_mode() -> None:
    if bpy.context.object is not None and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")


def _both_in(obj: bpy.types.Object, other: bpy.types.Object, mode: str, active: bpy.types.Object) -> None:
    """Both armatures in ``mode`` at once (multi-object editing), ``active`` the active one."""
    _object_mode()
    for item in bpy.context.view_layer.objects:
        item.select_set(item in (obj, other))
    bpy.context.view_layer.objects.active = active
    bpy.ops.object.mode_set(mode=mode)
    assert obj.mode == other.mode == mode


def _parented(obj: bpy.types.Object) -> None:
    """The armature parented to an empty that turns and travels over frames 1 to 20."""
    carrier = bpy.data.objects.new("Carrier", None)
    bpy.context.scene.collection.objects.link(carrier)
    for frame, (x, turn) in ((1, (0.0, 0.0)), (20, (1.5, 0.8))):
        carrier.location = (x, 0.5, 0.5)
        carrier.rotation_euler = (0.0, 0.0, turn)
        carrier.keyframe_insert("location", frame=frame)
        carrier.keyframe_insert("rotation_euler", frame=frame)
    obj.parent = carrier
    bpy.context.scene.frame_set(bpy.context.scene.frame_current)


def _unit_scale(_obj: bpy.types.Object) -> None:
    bpy.context.scene.unit_settings.system = "METRIC"
    bpy.context.scene.unit_settings.scale_length = 0.01


def _later_frame(_obj: bpy.types.Object) -> None:
    bpy.context.scene.frame_set(7)


def _hidden(obj: bpy.types.Object) -> None:
    _object_mode()
    obj.hide_set(True)


def _disabled_in_viewports(obj: bpy.types.Object) -> None:
    _object_mode()
    obj.hide_viewport = True


def _collection_hidden(obj: bpy.types.Object) -> None:
    _object_mode()
    _in_collection(obj, "Hero Hidden").hide_viewport = True  # the eye of its collection


def _collection_excluded(obj: bpy.types.Object) -> None:
    _object_mode()
    _in_collection(obj, "Hero Excluded").exclude = True


def _not_active(obj: bpy.types.Object) -> None:
    _object_mode()
    obj.select_set(False)
    other = bpy.data.objects[OTHER]
    bpy.context.view_layer.objects.active = other
    other.select_set(True)


# Each state as the API meets it: set on the character made, the other character there.
STATES: dict[str, Callable[[bpy.types.Object], None]] = {
    "hidden": _hidden,
    "disabled in viewports": _disabled_in_viewports,
    "its collection hidden": _collection_hidden,
    "its collection excluded": _collection_excluded,
    "not active": _not_active,
    "another in Edit mode": lambda obj: _both_in(obj, bpy.data.objects[OTHER], "EDIT", bpy.data.objects[OTHER]),
    "another in Pose mode": lambda obj: _both_in(obj, bpy.data.objects[OTHER], "POSE", bpy.data.objects[OTHER]),
    "a later frame": _later_frame,
    "unit scale": _unit_scale,
    "parent animated": _parented,
}

# As the UI meets them: the character active (its operators act on the active object), in Pose mode
# unless said.
UI_STATES: dict[str, Callable[[bpy.types.Object], None]] = {
    "Pose mode beside another in Pose mode": lambda obj: _both_in(obj, bpy.data.objects[OTHER], "POSE", obj),
    "Object mode beside another selected": lambda obj: _both_in(obj, bpy.data.objects[OTHER], "OBJECT", obj),
    "Object mode, hidden and active": _hidden,
    "Edit mode beside another in Edit mode": lambda obj: _both_in(obj, bpy.data.objects[OTHER], "EDIT", obj),
    "a later frame": _later_frame,
    "unit scale": _unit_scale,
    "parent animated": _parented,
}


def _keys(obj: bpy.types.Object) -> list[tuple]:
    return sorted((curve.data_path, curve.array_index, tuple(tuple(point.co) for point in curve.keyframe_points))
                  for curve in all_fcurves(obj))


def _rounded(matrix) -> tuple[float, ...]:
    return tuple(round(value, 5) for row in matrix for value in row)


def scene_seen(objects: set[str], collections: set[str]) -> dict:
    """What of the scene a user sees: the modes, selection and visibility of ``objects`` and of the view
    layer's ``collections``, the active object, the frame, the units, and the other character's pose (its
    bases and as it plays) and keys. (A build adds its shapes' objects, in a collection of their own.)"""
    layer = bpy.context.view_layer
    other = bpy.data.objects.get(OTHER)
    seen = {
        "mode": bpy.context.mode,
        "modes": {item.name: item.mode for item in bpy.data.objects if item.name in objects},
        "active": layer.objects.active.name if layer.objects.active else None,
        "selected": sorted(item.name for item in layer.objects if item.select_get() and item.name in objects),
        "hidden": {item.name: (item.hide_get(), item.hide_viewport) for item in layer.objects if item.name in objects},
        "collections": {child.name: (child.exclude, child.hide_viewport) for child in layer.layer_collection.children
                        if child.name in collections},
        "frame": bpy.context.scene.frame_current,
        "units": bpy.context.scene.unit_settings.scale_length,
    }
    if other is not None:
        seen["other bases"] = {bone.name: _rounded(bone.matrix_basis) for bone in other.pose.bones}
        seen["other keys"] = _keys(other)
        if other.mode != "EDIT":
            seen["other shown"] = {name: _rounded(matrix) for name, matrix in evaluate_world(other).items()}
    return seen


def rig_seen(obj: bpy.types.Object) -> tuple:
    """The character's own pose, switches, keys and bones: a refusal leaves them as they were."""
    bases = tuple((bone.name, _rounded(bone.matrix_basis)) for bone in obj.pose.bones)
    switches = tuple((bone.name, bone.get("ik_fk")) for bone in obj.pose.bones)
    return bases, switches, tuple(_keys(obj)), tuple(sorted(obj.data.bones.keys()))
