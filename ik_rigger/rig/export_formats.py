"""The formats an export writes, each through Blender's own exporter, and the names each can hold.

glTF (``.glb``, or ``.gltf`` with its ``.bin`` beside it): Y up, the skeleton's deform bones
only, one animation per NLA track (each clip's), sampled on every frame and starting at 0.
FBX: Y up, -Z forward, bones along their Y (primary) axis with X secondary, as Blender's
(the FBX default for Unity and Unreal), no leaf bones, one take per NLA strip (each
clip's), textures embedded.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import bpy
from mathutils import Matrix

from ..core.errors import RigError
from .gltf_tracks import tracks_grouped
from .windows import shown

FORMATS = {".glb": "GLB", ".gltf": "GLTF", ".fbx": "FBX"}


def _unwritable(fmt: str, name: str) -> str | None:
    """Why ``fmt`` cannot hold ``name``, or None."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not valid text (UTF-8)"
    if fmt == "FBX" and any(ord(character) < 32 for character in name):
        # FBX separates a name from its class with the bytes 0 and 1 in the same string.
        return "FBX cannot hold the control characters in it"
    return None


def check_names(fmt: str, names: Sequence[tuple[str, str]]) -> None:
    """Refuse the first (kind, name) the format cannot hold, naming it."""
    for kind, name in names:
        why = _unwritable(fmt, name)
        if why is not None:
            raise RigError(f"the {kind} {name!r} cannot be written to {fmt}: {why}",
                           bone=name if kind == "bone" else "",
                           hint=f"Rename the {kind}, or export to glTF (.glb).")


def clash_warnings(fmt: str, obj: bpy.types.Object, meshes: Sequence[bpy.types.Object],
                   joints: Sequence[str]) -> list[str]:
    """FBX names each node, bone or mesh, and readers that find a take's bones by name (assimp's
    FindNode, the first found depth first) may move a mesh named as a bone instead (a glTF import's
    'Torso' mesh hanging from the bone 'Body', above the bone 'Torso'): say which names clash."""
    if fmt != "FBX":
        return []
    bones = set(joints)
    return [f"the {kind} '{name}' is named as a bone of the skeleton: FBX readers that find a take's bones by "
            f"name (assimp, and engines built on it) may move the {kind} instead; rename the {kind} or the bone"
            for kind, name in [("armature object", obj.name), *(("mesh", mesh.name) for mesh in meshes)]
            if name in bones]


def unweighted_warnings(fmt: str, meshes: Sequence[bpy.types.Object], joints: Sequence[str]) -> list[str]:
    """glTF gives the vertices no joint moves a joint of their own (its exporter's
    'neutral_bone'): say which mesh has them, as they are one joint more than the skeleton's."""
    if fmt == "FBX":
        return []
    found = []
    for mesh in meshes:
        if mesh.data is None or not any(modifier.type == "ARMATURE" for modifier in mesh.modifiers):
            continue
        weighted = {group.index for group in mesh.vertex_groups if group.name in set(joints)}
        loose = sum(not any(item.group in weighted and item.weight > 0.0 for item in vertex.groups)
                    for vertex in mesh.data.vertices)
        if loose:
            found.append(f"{loose} vertices of '{mesh.name}' are weighted to no deform bone: glTF gives them a "
                         "joint of their own, 'neutral_bone' (weight them to a deform bone to avoid it)")
    return found


def _gltf_rate(scene: bpy.types.Scene) -> None:
    """Blender's glTF exporter (4.2 to 5.2) times frame n at n / (fps * fps_base) seconds, where Blender
    plays it at n / (fps / fps_base): 30.03 frames a second for NTSC's 29.97 (fps 30, base 1.001). On the
    export's own scene, the base that makes that product the rate the user's scene plays at."""
    rate = scene.render.fps / scene.render.fps_base
    scene.render.fps_base = rate / scene.render.fps


def _gltf_metres(scene: bpy.types.Scene) -> None:
    """glTF is in metres, and Blender's glTF exporter writes a Blender unit as one whatever the scene's Unit
    Scale (its importer reads a metre as 1 / Unit Scale units; the FBX exporter writes the Unit Scale): on the
    export's own scene, its objects without a parent scaled by the Unit Scale, so the file holds the character
    at its size. The skeleton's root node carries that scale; its bones and their motion are as in Blender."""
    units = scene.unit_settings
    if units.system == "NONE" or units.scale_length == 1.0:
        return
    metres = Matrix.Scale(units.scale_length, 4)
    for obj in scene.objects:
        if obj.parent is None:
            obj.matrix_world = metres @ obj.matrix_world


def _gltf(filepath: str, fmt: str) -> None:
    bpy.ops.export_scene.gltf(
        filepath=filepath, check_existing=False, export_format="GLB" if fmt == "GLB" else "GLTF_SEPARATE",
        use_selection=True, use_active_scene=True, export_yup=True, export_apply=False,
        export_skins=True, export_def_bones=True, export_rest_position_armature=True,
        export_animations=True, export_animation_mode="NLA_TRACKS", export_force_sampling=True,
        export_frame_step=1, export_anim_slide_to_zero=True, export_optimize_animation_size=False,
        export_reset_pose_bones=True, export_morph_animation=False, export_cameras=False,
        export_lights=False, export_extras=False, export_hierarchy_flatten_bones=False,
        export_leaf_bone=False)


def _fbx(filepath: str) -> None:
    bpy.ops.export_scene.fbx(
        filepath=filepath, check_existing=False, use_selection=True, object_types={"ARMATURE", "MESH"},
        use_armature_deform_only=True, add_leaf_bones=False, primary_bone_axis="Y", secondary_bone_axis="X",
        armature_nodetype="NULL", axis_forward="-Z", axis_up="Y", apply_scale_options="FBX_SCALE_NONE",
        use_mesh_modifiers=True, mesh_smooth_type="FACE", use_custom_props=False,
        bake_anim=True, bake_anim_use_all_bones=True, bake_anim_use_nla_strips=True,
        bake_anim_use_all_actions=False, bake_anim_force_startend_keying=True, bake_anim_step=1.0,
        bake_anim_simplify_factor=0.0, path_mode="COPY", embed_textures=True)


def write(fmt: str, scene: bpy.types.Scene, armature: bpy.types.Object, meshes: Sequence[bpy.types.Object],
          filepath: str) -> None:
    """Export ``armature`` and ``meshes``, the selection of ``scene`` (its only view layer), to
    ``filepath`` with the exporter of ``fmt``."""
    view_layer = scene.view_layers[0]
    for obj in (armature, *meshes):
        obj.select_set(True, view_layer=view_layer)
    view_layer.objects.active = armature
    selection = {"active_object": armature, "object": armature, "selected_objects": [armature, *meshes]}
    if fmt == "FBX":  # the FBX exporter writes the context's scene
        with bpy.context.temp_override(scene=scene, view_layer=view_layer, **selection):
            _fbx(filepath)
        return
    _gltf_rate(scene)
    _gltf_metres(scene)
    # Blender's glTF exporter shows the scene it writes in the window (and leaves it there): it is shown for the
    # write, and the window given back (``shown``).
    with shown(scene, view_layer), bpy.context.temp_override(**selection), tracks_grouped():
        _gltf(filepath, fmt)


# The file system's error in the text of an exporter's failure (Blender turns its OSError into a RuntimeError).
_OS_ERROR = re.compile(r"\[Errno (\d+)\] ([^\n:']*)")


def write_failure(error: RuntimeError, target: Path) -> RigError | None:
    """What to say when an exporter failed writing ``target`` for the file system (a full disk, a folder
    made read-only meanwhile); None for any other failure, which is a bug to show as it is."""
    found = _OS_ERROR.search(str(error))
    if found is None:
        return None
    number, reason = int(found[1]), found[2].strip()
    if number in (errno.ENOSPC, errno.EDQUOT):
        try:
            free = f"; its disk has {shutil.disk_usage(target.parent).free / 1e6:.1f} MB free"
        except OSError:
            free = ""
        return RigError(f"could not write '{target}': {reason}{free}; nothing was written there",
                        hint="Make room on its disk, or export to another disk.")
    return RigError(f"could not write '{target}': {reason} ({os.strerror(number)}); nothing was written there",
                    hint="Export to a folder you can write in.")
