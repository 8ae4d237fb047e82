"""Custom bone shapes for the controls, made in code: no asset files.

One wire mesh object per kind of control, as its part declares it (a ring for the IK
handle, a diamond for the pole, a line from the knee to the pole), shared by every limb of every rig in the file
and kept in one hidden collection.
Objects and collection carry the ID property ``_ik_rigger_shape`` so they are found
again after renames, never made twice, and removed with the last bone that uses them.
A custom shape is plain Blender data: it shows where IK Rigger is not installed.
"""

from __future__ import annotations

from array import array
from collections.abc import Container, Iterable

import bpy

from .. import parts
from ..parts.base import Shape
from .journal import Journal

MARK = "_ik_rigger_shape"
COLLECTION = "IK Rigger Shapes"


def _collection(obj: bpy.types.Object, journal: Journal) -> bpy.types.Collection:
    """The hidden collection of the shapes, made on first use in a scene of ``obj`` (else the context's);
    looked for once per build."""
    found = journal.read.get("shape collection")
    if found is not None:
        return found
    found = next((collection for collection in bpy.data.collections if collection.get(MARK)), None)
    if found is None:
        found = bpy.data.collections.new(COLLECTION)
        found[MARK] = "collection"
        found.hide_viewport = True
        found.hide_render = True
        scenes = obj.users_scene  # walks every scene: asked only when the collection is made
        (scenes[0] if scenes else bpy.context.scene).collection.children.link(found)
        journal.data(lambda collection=found: bpy.data.collections.remove(collection))
    journal.read["shape collection"] = found
    return found


# The shape objects last found or made, so a build does not search the file's objects per bone.
_FOUND: dict[str, bpy.types.Object] = {}


def _known(role: str) -> bpy.types.Object | None:
    obj = _FOUND.get(role)
    try:
        if obj is not None and obj.get(MARK) == role and obj.name in bpy.data.objects:
            return obj
    except ReferenceError:  # removed, or another file was loaded since
        pass
    _FOUND.pop(role, None)
    return None


def shape(role: str, planned: Shape, obj: bpy.types.Object, journal: Journal) -> bpy.types.Object:
    """The shared shape object for a control of ``role`` (``planned`` as its part declares it), made on
    first use (its collection in a scene of ``obj``). The file's objects are searched once per build."""
    found = _known(role)
    if found is None:
        marked = journal.read.get("marked shapes")
        if marked is None:
            marked = journal.read["marked shapes"] = {}
            for there in bpy.data.objects:
                mark = there.get(MARK)
                if isinstance(mark, str) and there.library is None:
                    marked.setdefault(mark, there)
        found = marked.get(role)
    if found is not None:
        _FOUND[role] = found
        return found
    mesh = bpy.data.meshes.new(f"{planned.label} Shape")
    _wire(mesh, planned)
    made = bpy.data.objects.new(f"{planned.label} Shape", mesh)
    made[MARK] = role
    _collection(obj, journal).objects.link(made)
    _FOUND[role] = made
    journal.data(lambda: _forget(made, mesh))
    return made


def _wire(mesh: bpy.types.Mesh, planned: Shape) -> None:
    """Give the new, empty ``mesh`` the wire ``planned`` declares: its points joined by its edges.
    ``Mesh.from_pydata`` would also add (no) corners and faces and shade those flat, which is most
    of its cost; the points and edges go in as typed columns, copied without converting each value."""
    mesh.vertices.add(len(planned.points))
    mesh.edges.add(len(planned.edges))
    mesh.vertices.foreach_set("co", array("f", [value for point in planned.points for value in point]))
    mesh.edges.foreach_set("vertices", array("i", [index for edge in planned.edges for index in edge]))
    mesh.update(calc_edges_loose=True)


def _forget(obj: bpy.types.Object, mesh: bpy.types.Mesh) -> None:
    bpy.data.objects.remove(obj)
    bpy.data.meshes.remove(mesh)


def give_shapes(obj: bpy.types.Object, made: dict[str, str], journal: Journal, kept: Container[str]) -> None:
    """Pose or Object mode: the made controls (role -> bone) get their custom shapes. Those in ``kept`` (a
    rebuilt limb's own) that have a shape keep it and its size as they are; those with none get one, which a
    rollback takes back (it deletes the other bones). A shape
    made anew goes to a collection in the object's first scene (else the context's)."""
    # What each control looks like (role -> shape), as the parts declare, and the objects found for
    # them: read once per build, for all of its limbs.
    declared = journal.read.get("shapes")
    if declared is None:
        declared = journal.read["shapes"] = parts.shapes()
    found = journal.read.setdefault("shape objects", {})
    for role, name in made.items():
        if role not in declared:
            continue
        pose_bone = journal.pose_bone(name)
        if name in kept and pose_bone.custom_shape is not None:
            # Kept with a shape: ours, sized as the user may have (the handle's size is in the panel), or one
            # of their own.
            continue
        if name in kept:
            before: tuple = pose_bone.custom_shape, tuple(pose_bone.custom_shape_scale_xyz)

            def undo(name: str = name, before: tuple = before) -> None:
                restored = obj.pose.bones.get(name)
                if restored is not None:
                    restored.custom_shape, restored.custom_shape_scale_xyz = before

            journal.data(undo)
        if role not in found:
            found[role] = shape(role, declared[role], obj, journal)
        pose_bone.custom_shape = found[role]
        if name in kept and tuple(pose_bone.custom_shape_scale_xyz) != (1.0, 1.0, 1.0):
            # Its shape taken by a rebuild with shapes off, which left the size: the user's, or ours.
            continue
        size = declared[role].size
        pose_bone.custom_shape_scale_xyz = (size, size, size)


def take_shapes(obj: bpy.types.Object, names: Iterable[str], journal: Journal) -> None:
    """Pose or Object mode: the named bones lose IK Rigger's shapes (a rebuild with shapes off)."""
    for name in names:
        pose_bone = obj.pose.bones[name]
        current = pose_bone.custom_shape
        if current is None or not current.get(MARK):
            continue
        journal.data(lambda name=name, current=current: setattr(obj.pose.bones[name], "custom_shape", current))
        pose_bone.custom_shape = None


def drop_unused() -> None:
    """Remove shape objects no bone uses any more, and their collection once empty."""
    used = {shape for obj in bpy.data.objects if obj.type == "ARMATURE" and obj.pose is not None
            for bone in obj.pose.bones if (shape := bone.custom_shape) is not None}
    for obj in [obj for obj in bpy.data.objects if obj.get(MARK) and obj not in used and obj.library is None]:
        mesh = obj.data
        bpy.data.objects.remove(obj)
        if mesh is not None and mesh.users == 0:
            bpy.data.meshes.remove(mesh)
    for collection in [collection for collection in bpy.data.collections if collection.get(MARK)]:
        if not collection.objects and collection.library is None:
            bpy.data.collections.remove(collection)
