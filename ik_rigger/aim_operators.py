"""Aim rigs: give a head, a neck or the eyes a target to look at, and take it back out."""

from __future__ import annotations

import bpy
from bpy.props import EnumProperty, FloatProperty, StringProperty

from .core import aim
from .core.errors import RigError
from .operators import armature_poll, report_error, report_notes
from .rig.aim import add_aim, aim_rig_of, find_aim_rigs, remove_aim

PART_ITEMS = [
    ("AUTO", "Automatic", "The active bone when its name says head, neck or eye (both eyes), else the head"),
    (aim.KIND_HEAD, "Head", "The bone named like 'head' (head, mixamorig:Head, spine.006...)"),
    (aim.KIND_NECK, "Neck", "The neck bone nearest the head"),
    (aim.KIND_EYES, "Eyes", "Both eyes (eye.L and eye.R, LeftEye and RightEye...), with one shared target"),
    ("ACTIVE", "Active Bone", "The active bone, whatever its name"),
]


class IKRIG_OT_add_aim(bpy.types.Operator):
    """Give the head, the neck or the eyes an aim target in front of the face that they look at.
The rest pose does not move; the control's Aim property blends the aim in. Run it again to update it in place"""

    bl_idname = "ik_rigger.add_aim"
    bl_label = "Add Aim"
    bl_options = {"REGISTER", "UNDO"}

    part: EnumProperty(name="Aim", description="What looks at the target", items=PART_ITEMS)
    distance: FloatProperty(name="Distance", description="How far in front of the face the target stands, in "
                            "head sizes", default=aim.DEFAULT_DISTANCE, min=0.1, soft_max=20.0)
    influence: FloatProperty(name="Influence", description="The aim switch's value: 1 looks at the target, 0 "
                             "leaves the bone's own rotation (0 where the animation moves the aimed bone, to play "
                             "as before)", default=1.0, min=0.0, max=1.0, subtype="FACTOR")

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return armature_poll(cls, context, need_bone=False)

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        bone = context.active_bone
        notes: list[str] = []
        try:
            aim_plan, updated = add_aim(obj, self.part, bone.name if bone is not None else None, self.distance,
                                        self.influence, notes)
        except RigError as error:
            return report_error(self, error)
        report_notes(self, notes, capital=True)
        verb = "Updated the aim of" if updated else "Aimed"
        self.report({"INFO"}, f"{verb} {', '.join(aim_plan.aimed)}: move '{aim_plan.control}' to aim")
        return {"FINISHED"}


class IKRIG_OT_remove_aim(bpy.types.Operator):
    """Remove the aim rig of the active bone (an aimed bone or one of its targets), leaving the armature as before"""

    bl_idname = "ik_rigger.remove_aim"
    bl_label = "Remove Aim"
    bl_options = {"REGISTER", "UNDO"}

    bone: StringProperty(name="Bone", description="A bone of the aim rig to remove; the active bone when empty",
                         options={"SKIP_SAVE"})

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if not armature_poll(cls, context, need_bone=False):
            return False
        if not find_aim_rigs(context.active_object):
            cls.poll_message_set("This armature has no aim rig")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> set[str]:
        bone = self.bone or (context.active_bone.name if context.active_bone is not None else "")
        if not bone or aim_rig_of(context.active_object, bone) is None:
            self.report({"ERROR"}, f"'{bone}' is not part of an aim rig. Make an aimed bone or its target active"
                        if bone else "No active bone. Make an aimed bone or its target active")
            return {"CANCELLED"}
        try:
            aimed, messages = remove_aim(context.active_object, bone)
        except RigError as error:
            return report_error(self, error)
        report_notes(self, messages, capital=True)
        self.report({"INFO"}, f"Removed the aim of {', '.join(aimed)}")
        return {"FINISHED"}


classes = (IKRIG_OT_add_aim, IKRIG_OT_remove_aim)
