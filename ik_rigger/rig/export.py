"""Export for game engines: the deform skeleton, its meshes and its motion as the rig plays it.

The user's scene is never changed (but for the frames played to read the motion, each put
back). Each clip is played alone and read once per frame (``export_bake``); the export is
built in a scene of its own, from copies: the armature's with only its deform bones and
their rest (no constraint, no driver, no custom shape, no bone IK Rigger made) keyed with
the poses read, one NLA track per clip named after it, and the meshes it deforms, sharing
their mesh data. Blender's own exporters write that scene's selection into a folder made
beside the file, and the files are moved into place: a failed export writes nothing.
Afterwards every copy, action and the scene are removed.

While they are exported the copies and the scene carry the user's names (the user's objects,
armature and scene are renamed aside for that moment and back), so the file names what the
user named.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import bpy
from mathutils import Matrix

from ..core.errors import RigError
from . import export_bake, export_meshes
from .export_formats import FORMATS, check_names, clash_warnings, unweighted_warnings, write, write_failure
from .export_meshes import local_copy
from .export_range import refuse_far_keys
from .output import held_output
from .scene_state import check_evaluated, in_pose_position, others_kept
from .windows import remove_scene

_SCENE = "IK Rigger export"


@dataclass(frozen=True)
class ExportedClip:
    """One clip written: its name (the glTF animation's, the FBX take's) and the frames baked."""

    name: str
    first: int
    last: int

    @property
    def frames(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote."""

    path: str  # the file asked for
    format: str  # "GLB", "GLTF" or "FBX"
    files: tuple[str, ...]  # every file written (a .gltf's .bin and images too)
    joints: tuple[str, ...]  # the deform bones, parents first
    clips: tuple[ExportedClip, ...]
    meshes: tuple[str, ...]  # the mesh objects skinned to the skeleton
    warnings: tuple[str, ...]


def file_stem(name: str) -> str:
    """``name`` (an armature's) as part of a file's name: the path separators a Blender name may hold
    replaced by '_'."""
    return name.replace("/", "_").replace("\\", "_")


def _format(filepath: str) -> str:
    suffix = Path(filepath).suffix.lower()
    if suffix not in FORMATS:
        raise RigError(f"the file '{filepath}' has the suffix '{suffix}', which names no format IK Rigger exports",
                       hint="End the file's name with .glb (glTF binary), .gltf (glTF with its .bin beside it) "
                            "or .fbx.")
    return FORMATS[suffix]


def _check_writable(filepath: str) -> Path:
    if filepath.startswith("//") and not bpy.data.filepath:
        raise RigError(f"the path '{filepath}' is relative to the .blend file, which is not saved yet",
                       hint="Save the .blend file first, or give a full path.")
    # '//' starts a path relative to the .blend file, as Blender's own fields give it.
    path = Path(bpy.path.abspath(filepath)).absolute()
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # bytes of a file name that are no text: Blender's exporters write names as UTF-8
        raise RigError(f"cannot write {str(path)!r}: its path is not valid text (UTF-8), and glTF and FBX files "
                       "hold their own names as text", hint="Rename the file or its folder, or choose another "
                       "name.") from None
    folder = path.parent
    if not folder.is_dir():
        raise RigError(f"cannot write '{path}': its folder does not exist", hint="Make the folder first, or "
                       "choose another.")
    if path.is_dir() or not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise RigError(f"cannot write '{path}': it is a folder or not writable", hint="Choose a file in a "
                       "folder you can write to.")
    return path


def _refuse_existing(target: Path, fmt: str) -> None:
    """Refuse a file the export would replace: the one asked for, and a .gltf's .bin beside it."""
    for path in (target, target.with_suffix(".bin")) if fmt == "GLTF" else (target,):
        if path.exists():
            raise RigError(f"'{path}' exists already, and the export was asked not to overwrite it",
                           hint="Choose another file name, delete that file, or export with overwrite=True.")


def _roots_warning(obj: bpy.types.Object, joints: Sequence[str]) -> list[str]:
    chosen = set(joints)
    roots = []
    for name in joints:
        parent = obj.data.bones[name].parent
        while parent is not None and parent.name not in chosen:
            parent = parent.parent
        if parent is None:
            roots.append(name)
    if len(roots) <= 1:
        return []
    listed = ", ".join(f"'{name}'" for name in roots[:4]) + (", ..." if len(roots) > 4 else "")
    return [f"the deform bones of '{obj.name}' have {len(roots)} roots ({listed}): Unreal and Unity's Humanoid "
            "want one root bone; parent them under one deform bone"]


def _refuse(obj: bpy.types.Object, fmt: str, joints: Sequence[str], clips: Sequence[str],
            meshes: Sequence[bpy.types.Object]) -> None:
    if obj.mode == "EDIT":
        raise RigError(f"the armature '{obj.name}' is in Edit mode, whose changes are not on its bones yet",
                       hint="Leave Edit mode, then export.")
    if obj.hide_viewport:
        raise RigError(f"the armature '{obj.name}' is disabled in viewports, where Blender does not play it",
                       hint="Enable it in viewports (the screen icon), then export.")
    check_evaluated(obj)  # a collection that keeps it out leaves its pose as last evaluated: named
    placed = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world.to_3x3()
    sizes = sorted(abs(size) for size in placed.to_scale())
    if abs(placed.determinant()) <= 1e-5 * sizes[2] ** 3:
        raise RigError(f"the armature '{obj.name}' is scaled to nothing along some axis where it stands (scale "
                       f"{', '.join(f'{size:g}' for size in placed.to_scale())}): both exporters place its bones "
                       "from its placement inverted, which it has none of, and they land far off",
                       hint="Give it (or its parent) a scale other than 0, 0.001 to hide it, then export.")
    if obj.animation_data is not None and obj.animation_data.use_tweak_mode:
        raise RigError(f"the armature '{obj.name}' is in NLA tweak mode, where its clips cannot be played "
                       "one by one", hint="Leave tweak mode (Tab in the NLA editor), then export.")
    if not joints:
        raise RigError(f"nothing to export: the armature '{obj.name}' has no bone of its own that deforms",
                       hint="Turn on Deform (Bone properties) for the bones the engine should get.")
    check_names(fmt, [("bone", name) for name in joints] + [("clip", name) for name in clips]
                + [("object", obj.name)] + [("object", mesh.name) for mesh in meshes])


def _deform_only(copy: bpy.types.Object, scene: bpy.types.Scene, joints: Sequence[str]) -> None:
    """Only the deform bones left in the copy, each under its nearest deforming ancestor: the
    exporters keep a bone that does not deform where one that does hangs from it (FBX), or hang
    the file's skin from it (glTF), and IK Rigger's bones must never reach the file. One Edit
    pass, on the copy alone, in its own scene: the user's objects keep their modes."""
    keep = set(joints)
    view_layer = scene.view_layers[0]
    view_layer.objects.active = copy
    with bpy.context.temp_override(scene=scene, view_layer=view_layer, active_object=copy, object=copy,
                                   selected_objects=[copy], selected_editable_objects=[copy]):
        bpy.ops.object.mode_set(mode="EDIT")
        try:
            bones = copy.data.edit_bones
            for name in joints:
                bone = bones[name]
                parent = bone.parent
                while parent is not None and parent.name not in keep:
                    parent = parent.parent
                # Each bone placed by its keyed location, as the files place it: Blender sets a connected
                # bone on its parent's tail instead, which a parent written thin along its length moves.
                bone.use_connect = False
                if parent != bone.parent:
                    bone.parent = parent
            for bone in [bone for bone in bones if bone.name not in keep]:
                bones.remove(bone)
        finally:
            bpy.ops.object.mode_set(mode="OBJECT")


def _copy(obj: bpy.types.Object, scene: bpy.types.Scene, joints: Sequence[str], made: list) -> bpy.types.Object:
    """The armature's copy in ``scene``: its deform bones and their rest, no constraint, driver,
    custom shape or motion, every bone inheriting fully (as the keys assume)."""
    data = obj.data.copy()
    made.append(data)
    copy = local_copy(obj)
    made.append(copy)
    copy.data = data
    copy.animation_data_clear()
    data.animation_data_clear()
    # No constraint, before Blender evaluates the copy: the object's own would move it again from
    # where it is placed (a Copy Location with offset, twice), the bones' follow bones the copy drops.
    for owner in (copy, *copy.pose.bones):
        for constraint in list(owner.constraints):
            owner.constraints.remove(constraint)
    for pose_bone in copy.pose.bones:
        pose_bone.custom_shape = None
        pose_bone.rotation_mode = "QUATERNION"
    copy.parent = None
    # Where Blender places it now (its own matrix_world is stale after a script's move, with no clip played).
    copy.matrix_world = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world
    scene.collection.objects.link(copy)
    data.pose_position = "POSE"
    _deform_only(copy, scene, joints)
    for bone in data.bones:
        bone.inherit_scale = "FULL"
        bone.use_inherit_rotation = True
        bone.use_local_location = True
    copy.animation_data_create()
    return copy


def _scene(user_scene: bpy.types.Scene, made: list) -> bpy.types.Scene:
    scene = bpy.data.scenes.new(_SCENE)
    made.append(scene)
    scene.render.fps = user_scene.render.fps
    scene.render.fps_base = user_scene.render.fps_base
    scene.unit_settings.system = user_scene.unit_settings.system
    scene.unit_settings.scale_length = user_scene.unit_settings.scale_length
    return scene


_Renamed = tuple[bpy.types.Action, bpy.types.Action]  # a clip's own action, and the action of its keys


def _tracks(obj: bpy.types.Object, copy: bpy.types.Object, names: Sequence[str],
            baked: Sequence[export_bake.BakedClip], made: list) -> tuple[list[str], list[_Renamed]]:
    """One NLA track per clip, holding one strip of its keys, both named after the clip; returns the
    warnings of bones the keys cannot place as the rig does (``export_bake.shear_warnings``), and each clip's own
    action beside the action of its keys, to be named as the clip's for the write: Blender 4.2's glTF exporter
    reads a track's interpolation from the action named as the track, the user's, whose keys may step (an
    imported glTF clip's scale), and wrote the keys' tracks STEP, playing in steps between frames."""
    data = copy.animation_data
    warnings: list[str] = []
    actions: list[_Renamed] = []
    for clip in baked:
        channels = export_bake.local_channels(copy, names, clip.poses)
        warnings += export_bake.shear_warnings(copy, obj, names, clip, channels)
        action = export_bake.key_clip(copy, names, clip, channels, f"{_SCENE} {clip.name}")
        made.append(action)
        original = bpy.data.actions.get(clip.name)
        if original is not None and original != action:
            actions.append((original, action))
        data.action = None
        track = data.nla_tracks.new()
        track.name = clip.name
        # Every clip from frame 1 (the files start each at time 0): frame 0 is before them all.
        strip = track.strips.new(clip.name, 1, action)
        strip.name = clip.name
        strip.extrapolation = "NOTHING"
    # Before every clip nothing plays: the copy shows its rest, which FBX writes as its nodes' own
    # transforms (what an FBX without a mesh's bind pose, and assimp, take for the rest); the
    # exporters play each clip themselves.
    for pose_bone in copy.pose.bones:
        pose_bone.matrix_basis = Matrix.Identity(4)
    copy.users_scene[0].frame_current = 0
    return warnings, actions


@contextmanager
def _named_as(pairs: Sequence[tuple]) -> Iterator[None]:
    """Each copy named as its original for the block; the originals named as they were after."""
    renamed = []
    try:
        for original, copy in pairs:
            name = original.name
            # A linked original keeps its name, which is the library's: this file's copy may take it as well.
            # A library override is this file's, renamed for the block as the rest are.
            if original.library is None:
                original.name = f"{_SCENE} original {name}"
                renamed.append((original, copy, name))
            copy.name = name
        yield
    finally:
        for original, copy, name in reversed(renamed):
            copy.name = f"{_SCENE} copy {name}"
            original.name = name


def _remove(made: Sequence[bpy.types.ID]) -> None:
    """Remove what the export made, the last made first (objects before their data)."""
    owners = {bpy.types.Object: bpy.data.objects, bpy.types.Armature: bpy.data.armatures,
              bpy.types.Mesh: bpy.data.meshes, bpy.types.Action: bpy.data.actions}
    for item in reversed(made):
        if isinstance(item, bpy.types.Scene):
            remove_scene(item)
        else:
            next(owner for kind, owner in owners.items() if isinstance(item, kind)).remove(item)


def _moved_into_place(folder: Path, target: Path) -> list[str]:
    """Move what the exporter wrote beside ``target``. The file asked for and its .bin replace theirs; any
    other (a .gltf's images) replaces only a file of the same bytes: one that differs (the character's own
    texture, painted since it was saved) is refused before anything is moved."""
    asked = {target.name, target.with_suffix(".bin").name}
    for produced in sorted(folder.iterdir()):
        destination = target.parent / produced.name
        if produced.name not in asked and destination.exists() and not filecmp.cmp(produced, destination,
                                                                                    shallow=False):
            raise RigError(f"the export would replace '{destination}', a file beside '{target.name}' that differs "
                           "from the one it writes there", hint="Export to another folder (a .gltf writes its "
                           "images beside it), or to .glb, which holds them.")
    written = []
    for produced in sorted(folder.iterdir()):
        destination = target.parent / produced.name
        os.replace(produced, destination)
        written.append(str(destination))
    return written


def _bake_and_write(obj: bpy.types.Object, fmt: str, target: Path, joints: list[str], chosen: list,
                    chosen_names: Sequence[str] | None, meshes: list[bpy.types.Object],
                    frame_range: tuple[int, int] | None) -> tuple[list[export_bake.BakedClip], list[str], list[str]]:
    span = (int(frame_range[0]), int(frame_range[1])) if frame_range is not None else None
    baked = export_bake.bake_clips(obj, chosen, span, joints)
    warnings = (_roots_warning(obj, joints) + export_bake.object_motion_warnings(obj, chosen)
                + export_bake.carrier_warnings(obj) + export_bake.solver_warnings(obj)
                + export_bake.passed_warnings(obj, chosen_names)
                + unweighted_warnings(fmt, meshes, joints)
                + clash_warnings(fmt, obj, meshes, joints))
    if not baked:
        none = "no clip was chosen" if chosen_names is not None else f"no clip animates the armature '{obj.name}'"
        warnings.append(f"{none}: the file holds its rest pose only")
    made: list = []
    folder = Path(tempfile.mkdtemp(prefix=".ik_rigger_export_", dir=target.parent))
    try:
        scene = _scene(bpy.context.scene, made)
        copy = _copy(obj, scene, joints, made)
        mesh_copies = export_meshes.mesh_copies(meshes, obj, copy, scene, made)
        tracked, actions = _tracks(obj, copy, joints, baked, made)
        warnings += tracked
        # A copy's own mesh (modifiers applied, Edit mode's) is named as the user's too, once for each mesh.
        own = {mesh.data: copied.data for mesh, copied in zip(meshes, mesh_copies) if copied.data != mesh.data}
        with _named_as([(bpy.context.scene, scene), (obj, copy), (obj.data, copy.data), *zip(meshes, mesh_copies),
                        *own.items(), *actions]):
            with held_output() as drop:
                try:
                    write(fmt, scene, copy, mesh_copies, str(folder / target.name))
                except RuntimeError as error:
                    failure = write_failure(error, target)
                    if failure is None:
                        raise
                    drop()  # the exporter's traceback: the failure says what it meant
                    raise failure from error
        files = _moved_into_place(folder, target)
    finally:
        _remove(made)
        shutil.rmtree(folder, ignore_errors=True)
    return baked, files, warnings


# The frames Blender plays (its scene's End Frame goes no further).
_LAST_FRAME = 1048574


def _frames(frame_range: object) -> tuple[int, int] | None:
    """``frame_range`` as the first and last frames to bake, or a RigError saying what is wrong with it."""
    if frame_range is None:
        return None
    hint = "Give the first frame, then the last one, as whole frames."
    try:
        if isinstance(frame_range, (str, bytes)):  # "15" is no pair of frames '1' and '5'
            raise TypeError
        first, last = (float(frame) for frame in frame_range)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise RigError(f"the frame range {frame_range!r} is not a (first, last) pair of frames", hint=hint) from None
    if not (first.is_integer() and last.is_integer()):
        raise RigError(f"the frame range ({first:g}, {last:g}) starts or ends between frames", hint=hint)
    if last < first:
        raise RigError(f"the frame range ({first:g}, {last:g}) runs backwards", hint=hint)
    if max(abs(first), abs(last)) > _LAST_FRAME:
        raise RigError(f"the frame range ({first:g}, {last:g}) reaches past frame {_LAST_FRAME}, the last Blender "
                       "plays", hint=hint)
    return int(first), int(last)


def export(obj: bpy.types.Object, filepath: str, clips: Sequence[str] | str | None = None,
           frame_range: tuple[int, int] | None = None, overwrite: bool = True) -> ExportReport:
    """Write ``obj``'s deform skeleton, its meshes and each clip baked (see the module); without
    ``overwrite``, a file at the path (or a .gltf's .bin beside it) is refused, not replaced."""
    fmt = _format(filepath)
    target = _check_writable(filepath)
    if not overwrite:
        _refuse_existing(target, fmt)
    frame_range = _frames(frame_range)
    joints = export_bake.deform_bones(obj)
    chosen = export_bake.chosen_clips(obj, clips)
    meshes, left_out = export_meshes.meshes(obj, joints)
    _refuse(obj, fmt, joints, [clip.name for clip in chosen], meshes)
    if frame_range is None:
        refuse_far_keys(obj, chosen)
    # The frames played set every other object from its keys: a pose changed by hand is given back.
    with others_kept(obj), export_bake.pose_kept(obj), in_pose_position(obj, "exported"):
        baked, files, warnings = _bake_and_write(obj, fmt, target, joints, chosen, clips, meshes, frame_range)
    return ExportReport(str(target), fmt, tuple(files), tuple(joints),
                        tuple(ExportedClip(clip.name, clip.frames[0], clip.frames[-1]) for clip in baked),
                        tuple(mesh.name for mesh in meshes), tuple(left_out + warnings))
