"""The modifiers of an exported mesh that follow something that moves, which the file cannot play.

A mesh's modifiers besides Armature are applied for the export (``export_meshes``): the file holds the
shape they give on the current frame, on every frame, for glTF and FBX carry no Hook, Mesh Deform,
Shrinkwrap or other modifier following an object, only the skin. Where what such a modifier follows
moves (the armature itself or one of its bones, an object hanging from it or deformed by it, or one with
motion or constraints of its own), the mesh plays otherwise in the file than in Blender (a Hook on a bone
of the legs' character: 16% of its height off on the frames farthest from the current one), and a
warning names the mesh, the modifier and what it follows.
"""

from __future__ import annotations

from collections.abc import Iterator

import bpy


def _followed(modifier: bpy.types.Modifier) -> Iterator[bpy.types.Object]:
    """The objects a modifier reads (its object, target, cage...), read off its properties."""
    for prop in modifier.bl_rna.properties:
        if prop.type == "POINTER" and getattr(prop, "fixed_type", None) is not None \
                and prop.fixed_type.identifier == "Object":
            found = getattr(modifier, prop.identifier, None)
            if found is not None:
                yield found


def _animated(item: bpy.types.Object) -> bool:
    data = item.animation_data
    return data is not None and (data.action is not None or len(data.drivers) > 0
                                 or any(not track.mute and len(track.strips) for track in data.nla_tracks))


def _moves(item: bpy.types.Object, armature: bpy.types.Object) -> bool:
    """Whether ``item`` moves as the clips play or the scene's frames go by: it is the armature, hangs from
    it, is deformed by it, or it or an object it hangs from is animated or constrained."""
    found: bpy.types.Object | None = item
    while found is not None:
        if found == armature or _animated(found) or len(found.constraints) or any(
                other.type == "ARMATURE" and other.object == armature for other in getattr(found, "modifiers", ())):
            return True
        found = found.parent
    return False


def _what(item: bpy.types.Object, modifier: bpy.types.Modifier) -> str:
    bone = getattr(modifier, "subtarget", "")
    return f"the bone '{bone}' of '{item.name}'" if bone and item.type == "ARMATURE" else f"'{item.name}'"


def moving_followers(mesh: bpy.types.Object, armature: bpy.types.Object, frame: int) -> list[str]:
    """A warning for each shown modifier of ``mesh`` (but Armature) following something that moves."""
    warnings = []
    for modifier in mesh.modifiers:
        if modifier.type == "ARMATURE" or not modifier.show_viewport:
            continue
        moving = [item for item in _followed(modifier) if item != mesh and _moves(item, armature)]
        if moving:
            warnings.append(
                f"the mesh '{mesh.name}' has the modifier '{modifier.name}' following "
                f"{' and '.join(_what(item, modifier) for item in moving)}, which moves: the file holds the shape "
                f"it gives on the current frame ({frame}) on every frame of every clip (glTF and FBX carry no such "
                "modifier, only the skin); weight the mesh to the bones instead, or apply the modifier")
    return warnings
