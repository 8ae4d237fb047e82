"""Feet on the ground: plant a rigged character's feet on a mesh, for one frame or over a range."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty

from . import api
from .core.errors import RigError
from .operators import armature_in, keys_asked, report_error
from .rig.scene_time import keys_range


def _mesh_names(_self: bpy.types.Operator, context: bpy.types.Context, _text: str) -> list[str]:
    """The scene's meshes, offered when typing the ground's name."""
    return sorted(obj.name for obj in context.scene.objects if obj.type == "MESH")


class IKRIG_OT_plant_feet(bpy.types.Operator):
    """Put the feet of the active armature's rigged legs on the ground below them, flat on its slope.
The hips go down where a leg cannot reach; over a frame range each foot is held still while it is down"""

    bl_idname = "ik_rigger.plant_feet"
    bl_label = "Plant Feet"
    bl_options = {"REGISTER", "UNDO"}

    # Not remembered: another character's ground (the sidebar's is each armature's own).
    ground: StringProperty(name="Ground", description="Mesh object the feet stand on; empty for the armature's "
                           "ground picked in the sidebar", search=_mesh_names, options={"SKIP_SAVE"})
    frames: EnumProperty(name="Frames", description="Which frames to plant the feet on", items=[
        ("CURRENT", "Current Frame", "Pose the handles (and hips) on the current frame, keyed there with "
         "Insert Keyframes"),
        ("RANGE", "Frame Range", "Key the handles (and hips) on every frame of the range"),
    ], default="CURRENT")
    # Not remembered: unless the call sets it, auto-keying decides, as for the snaps.
    keyframe: BoolProperty(name="Insert Keyframes", description="Key what moved on the current frame (unless set, "
                           "on while auto-keying is); a frame range is always keyed", options={"SKIP_SAVE"})
    # Not remembered from the last run (SKIP_SAVE): unless given, each run takes the scene's (or preview) range.
    frame_start: IntProperty(name="Start", description="First frame to bake (unless set, the scene's or preview "
                             "range's)", default=1, options={"SKIP_SAVE"})
    frame_end: IntProperty(name="End", description="Last frame to bake (unless set, the range's)", default=250,
                           options={"SKIP_SAVE"})

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if not armature_in(cls, context, {"POSE", "OBJECT"}):
            return False
        if not len(context.active_object.ik_rigger.limbs):
            cls.poll_message_set("Rig the legs first (Auto-Rig or Build)")
            return False
        return True

    def _ground(self, context: bpy.types.Context) -> bpy.types.Object | None:
        if not self.ground:
            return context.active_object.ik_rigger.ground
        found = bpy.data.objects.get(self.ground)
        if found is None:
            raise RigError("is not an object of this file", bone=self.ground, hint="Pick the ground by its name.")
        return found

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        scene = context.scene
        frames = None
        if self.frames == "RANGE":
            preview = scene.use_preview_range  # the frames the animator works on, as Bake IK/FK takes them
            first, last = keys_range(scene, scene.frame_preview_start if preview else scene.frame_start,
                                     scene.frame_preview_end if preview else scene.frame_end)
            start = self.frame_start if self.properties.is_property_set("frame_start") else first
            end = self.frame_end if self.properties.is_property_set("frame_end") else last
            if end < start:
                self.report({"ERROR"}, f"The frame range {start} to {end} is empty: set the start before the end")
                return {"CANCELLED"}
            frames = range(start, end + 1)
        try:
            result = api.plant_feet(obj, self._ground(context), frames,
                                    key=frames is None and keys_asked(self, context, mapped=True))
        except RigError as error:
            return report_error(self, error)
        lowered = f", hips '{result.hips}' lowered up to {result.drop:.4g}" if result.hips else ""
        when = f"over {result.frames} frames" if frames is not None else "on this frame"
        notes = "".join(f"; {note}" for note in result.notes)
        self.report({"INFO"}, f"Planted {len(result.feet)} feet {when}{lowered}{notes}")
        return {"FINISHED"}


classes = (IKRIG_OT_plant_feet,)
