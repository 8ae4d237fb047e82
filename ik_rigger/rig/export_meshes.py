"""The meshes an export writes with the skeleton, and their copies in the export's scene.

A mesh goes with the armature when it is the armature's child or its Armature modifier names the
armature, shown or not. One hanging from a bone the file does not hold (an IK handle, a bone that
does not deform) has nothing to hang from there: it is left out, and a warning says so. Each
copy shares its mesh data, but where modifiers other than Armature act on it (a Mirror before
the Armature modifier): those are applied into a mesh of the copy's own, as Blender's FBX
exporter applies them (glTF's would write the mesh without them), and the copy keeps only its
Armature modifiers, which the file holds as its skin; and where its shape keys are animated, whose
motion is not the clips': the copy's own mesh holds them still.
"""

from __future__ import annotations

from collections.abc import Sequence

import bpy

from .export_followers import moving_followers


def local_copy(obj: bpy.types.Object) -> bpy.types.Object:
    """A copy of ``obj`` of the file's own: the copy of a library override is one too, which no
    Edit pass may change (an animator exports the character overridden in the shot)."""
    copy = obj.copy()
    assert copy is not None
    if copy.override_library is not None:
        copy.make_local()
    return copy


# Objects with a shape the exporters would write, were they meshes.
_SHAPES = {"CURVE": "curve", "SURFACE": "surface", "FONT": "text", "META": "metaball"}


def meshes(obj: bpy.types.Object, joints: Sequence[str]) -> tuple[list[bpy.types.Object], list[str]]:
    """The meshes ``obj`` moves (see the module), and a warning for each left out."""
    chosen, warnings, kept = [], [], set(joints)
    for other in bpy.data.objects:
        if not (other.parent == obj or any(modifier.type == "ARMATURE" and modifier.object == obj
                                           for modifier in getattr(other, "modifiers", ()))):
            continue
        if other.type in _SHAPES:
            warnings.append(f"the {_SHAPES[other.type]} '{other.name}' moves with the armature but is not a mesh: it "
                            "is left out of the file (Object > Convert > Mesh makes it one)")
            continue
        if other.type != "MESH":
            continue  # an empty, a camera, a light: no part of the character's skin
        if other.parent == obj and other.parent_type == "BONE" and other.parent_bone not in kept:
            warnings.append(f"the mesh '{other.name}' hangs from the bone '{other.parent_bone}', which is not "
                            "exported: it is left out of the file (parent it to a deform bone to export it)")
            continue
        chosen.append(other)
        warnings += moving_followers(other, obj, bpy.context.scene.frame_current)
        applied = ", ".join(modifier.name for modifier in other.modifiers
                            if modifier.type != "ARMATURE" and modifier.show_viewport)
        keys = other.data.shape_keys
        if applied and keys is not None and len(keys.key_blocks) > 1:
            warnings.append(f"the mesh '{other.name}' has modifiers besides Armature ({applied}), applied in the "
                            f"file, which then holds none of its {len(keys.key_blocks) - 1} shape keys (apply the "
                            "modifiers to the mesh, or turn them off, to keep them)")
    return chosen, warnings


def _applied(copy: bpy.types.Object, scene: bpy.types.Scene, made: list) -> None:
    """The copy's modifiers other than Armature applied into a mesh of its own (see the module)."""
    others = [modifier for modifier in copy.modifiers if modifier.type != "ARMATURE"]
    if not any(modifier.show_viewport for modifier in others):
        return
    skins = [(modifier, modifier.show_viewport) for modifier in copy.modifiers if modifier.type == "ARMATURE"]
    for modifier, _ in skins:
        modifier.show_viewport = False
    depsgraph = scene.view_layers[0].depsgraph
    depsgraph.update()
    mesh = bpy.data.meshes.new_from_object(copy.evaluated_get(depsgraph), preserve_all_data_layers=True,
                                           depsgraph=depsgraph)
    made.insert(0, mesh)  # removed after the copy that uses it
    copy.data = mesh
    for modifier in others:
        copy.modifiers.remove(modifier)
    for modifier, shown in skins:
        modifier.show_viewport = shown


def mesh_copies(chosen: Sequence[bpy.types.Object], obj: bpy.types.Object, armature: bpy.types.Object,
                scene: bpy.types.Scene, made: list) -> list[bpy.types.Object]:
    """A copy of each mesh in ``scene``, moved by ``armature`` (the armature's copy) where it was by ``obj``."""
    copies = []
    for mesh in chosen:
        copy = local_copy(mesh)  # shares the mesh data, which nothing here changes
        made.append(copy)
        if mesh.mode == "EDIT":
            # The exporters cannot read a mesh in Edit mode: a copy of it as the user sees it
            # (written to the mesh as a save would), and the user stays in Edit mode.
            mesh.update_from_editmode()
            copy.data = mesh.data.copy()
            made.insert(0, copy.data)
        copy.animation_data_clear()
        keys = copy.data.shape_keys
        if keys is not None and keys.animation_data is not None:
            # Shape-key animation is not the clips' (FBX's exporter would bake it into each take on the
            # scene's frames): a mesh of the copy's own, its shape keys still, as they stand.
            if copy.data == mesh.data:
                copy.data = mesh.data.copy()
                made.insert(0, copy.data)
            copy.data.shape_keys.animation_data_clear()
        if copy.parent == obj:
            copy.parent = armature
        elif copy.parent is not None:
            # Where Blender places it now: its own matrix_world is stale for a mesh kept out of the bake's
            # evaluation (parented since the last update, as a script does).
            world = mesh.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world.copy()
            copy.parent = None
            copy.matrix_world = world
        for modifier in copy.modifiers:
            if modifier.type == "ARMATURE" and modifier.object == obj:
                modifier.object = armature
        copy.hide_viewport = False
        scene.collection.objects.link(copy)
        _applied(copy, scene, made)
        copies.append(copy)
    return copies
