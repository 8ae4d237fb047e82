"""Export for game engines from Blender's window: File > Export and IK Rigger's menu (``api.export``)."""

from __future__ import annotations

from pathlib import Path

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper

from . import api
from .core.errors import RigError
from .operators import armature_in, report_error
from .rig.export import file_stem
from .rig.export_bake import rig_clips

_SUFFIXES = {"GLB": ".glb", "GLTF": ".gltf", "FBX": ".fbx"}


class IKRIG_PG_export_clip(bpy.types.PropertyGroup):
    """One clip offered by the export's panel (a group of the operator's own: it lives only as long
    as the file browser that shows it)."""

    name: StringProperty(name="Clip", description="The clip (action) that animates the armature")
    use: BoolProperty(name="Export", description="Bake this clip into the file as one animation (glTF) or "
                      "take (FBX)", default=True)


def _take_the_scenes_range(operator, context: bpy.types.Context) -> None:
    """Start and End from the scene's range where the caller gave none: a keymap's or a script's is kept."""
    if not operator.properties.is_property_set("frame_start"):
        operator.frame_start = context.scene.frame_start
    if not operator.properties.is_property_set("frame_end"):
        operator.frame_end = context.scene.frame_end


class IKRIG_OT_export(bpy.types.Operator, ExportHelper):
    """Export the active armature for a game engine: its deform bones, the meshes they deform and each
clip baked on every frame as the rig plays it, without the IK controls. The scene is left as it was"""

    bl_idname = "ik_rigger.export"
    bl_label = "IK Rigger: Game Engine (.glb/.fbx)"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".glb"
    filepath: StringProperty(name="File Path", description="The file to write (.glb, .gltf or .fbx)",
                             subtype="FILE_PATH", options={"SKIP_SAVE"})
    filter_glob: StringProperty(name="Filter", description="The files the browser shows",
                                default="*.glb;*.gltf;*.fbx", options={"HIDDEN"})
    file_format: EnumProperty(name="Format", description="The file's format (its suffix follows)", items=[
        ("GLB", "glTF Binary (.glb)", "One file: Godot, three.js, Unity (glTFast), Unreal (glTF importer)"),
        ("GLTF", "glTF Separate (.gltf + .bin)", "A JSON file with its binary data beside it"),
        ("FBX", "FBX (.fbx)", "Unity's and Unreal's own importers"),
    ], default="GLB")
    # Not remembered: another armature's or file's clips (the dialog lists this one's).
    clips: CollectionProperty(type=IKRIG_PG_export_clip, name="Clips",
                              description="The clips to bake (all when none is listed)", options={"SKIP_SAVE"})
    use_frame_range: BoolProperty(name="Frame Range", description="Bake every clip over the same frames "
                                  "rather than each over its own range", default=False)
    # Not remembered (another file's frames): unless given, the scene's range.
    frame_start: IntProperty(name="Start", description="First frame baked for every clip", default=1,
                             options={"SKIP_SAVE"})
    frame_end: IntProperty(name="End", description="Last frame baked for every clip", default=250,
                           options={"SKIP_SAVE"})

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return armature_in(cls, context, {"POSE", "OBJECT"})

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        obj = context.active_object
        self.clips.clear()
        for clip in rig_clips(obj):
            self.clips.add().name = clip.name
        _take_the_scenes_range(self, context)
        if not self.filepath:
            # Beside the .blend file, named as the armature.
            self.filepath = str(Path(bpy.data.filepath or "untitled").with_name(file_stem(obj.name) + ".glb"))
        return ExportHelper.invoke(self, context, event)

    def check(self, context: bpy.types.Context) -> bool:
        """The file's suffix follows the format chosen."""
        wanted = _SUFFIXES[self.file_format]
        path = Path(self.filepath)
        if path.suffix.lower() == wanted or not path.name:
            return False
        self.filepath = str(path.with_suffix(wanted) if path.suffix.lower() in _SUFFIXES.values()
                            else path.with_name(path.name + wanted))
        return True

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "file_format")
        if self.clips:
            column = layout.column(heading="Clips", align=True)
            for clip in self.clips:
                column.prop(clip, "use", text=clip.name)
        else:
            layout.label(text="No clip animates the armature: its rest pose only")
        layout.prop(self, "use_frame_range")
        row = layout.row(align=True)
        row.enabled = self.use_frame_range
        row.prop(self, "frame_start")
        row.prop(self, "frame_end")

    def execute(self, context: bpy.types.Context) -> set[str]:
        _take_the_scenes_range(self, context)  # a script's call (EXEC) too, where invoke does not run
        clips = [clip.name for clip in self.clips if clip.use] if len(self.clips) else None
        frames = (self.frame_start, self.frame_end) if self.use_frame_range else None
        try:
            report = api.export(context.active_object, self.filepath, clips=clips, frame_range=frames)
        except RigError as error:
            return report_error(self, error)
        for warning in report.warnings:
            self.report({"WARNING"}, warning)
        frames_written = sum(clip.frames for clip in report.clips)
        self.report({"INFO"}, f"Exported {len(report.joints)} joints, {len(report.clips)} clips "
                              f"({frames_written} frames) and {len(report.meshes)} meshes to {report.path}")
        return {"FINISHED"}


def draw_export_menu(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    """File > Export's entry."""
    self.layout.operator(IKRIG_OT_export.bl_idname, text=IKRIG_OT_export.bl_label)


classes = (IKRIG_PG_export_clip, IKRIG_OT_export)
