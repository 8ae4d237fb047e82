"""Operators an animator uses every day: IK/FK snapping, the FK pivot helper,
selecting a limb's bones, and tuning a built limb."""

from __future__ import annotations

import time
from dataclasses import replace

import bpy
from bpy.props import BoolProperty, EnumProperty, IntProperty, StringProperty

from . import api
from .core.errors import RigError
from .operators import armature_in, keys_asked, report_error, report_notes
from .parts.pole import ROLE_POLE
from .rig import records, selection
from .rig.build import refuse_gone
from .rig.modes import kept_mode, leave_edit_mode
from .rig.scene_state import check_posable
from .rig.scene_time import keys_range
from .rig.upgrade import needs_upgrade, prepared, upgrade


def find_limb(context: bpy.types.Context, name: str = ""):
    """The limb an operator works on: the named one, else the active bone's, else the panel's."""
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE":
        return None
    rig = obj.ik_rigger
    if name:
        return rig.limbs.get(name) or records.limb_of(obj, name)
    bone = context.active_bone
    if bone is not None:
        limb = records.limb_of(obj, bone.name)
        if limb is not None:
            return limb
    if 0 <= rig.active_limb_index < len(rig.limbs):
        return rig.limbs[rig.active_limb_index]
    return None


def chosen_limb(context: bpy.types.Context, name: str = ""):
    """``find_limb``'s limb, or a RigError naming what was asked for (a limb of another character, say,
    when the operator is run again with that one active)."""
    limb = find_limb(context, name)
    if limb is None:
        raise RigError(f"is no limb rigged by IK Rigger on the armature '{context.active_object.name}'",
                       bone=name, hint="Name a limb (its last chain bone) or one of its bones, or make the "
                       "armature that has it active.")
    return limb


def limb_poll(cls: type[bpy.types.Operator], context: bpy.types.Context, modes: set[str] | None = None) -> bool:
    """Shared poll: an armature in an allowed mode with a rigged limb to work on."""
    if not armature_in(cls, context, modes or {"POSE", "OBJECT", "EDIT"}):
        return False
    if find_limb(context) is None:
        cls.poll_message_set("Make a bone of a limb rigged by IK Rigger active")
        return False
    return True


class LimbOperator:
    """Mixin: the ``limb`` property that names the limb (empty: the active bone's)."""

    limb: StringProperty(name="Limb", description="Name of the limb (its last chain bone) or of one of its bones; "
                         "empty for the active bone's limb", options={"SKIP_SAVE"})
    # The modes the operator works in.
    modes = {"POSE", "OBJECT", "EDIT"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return limb_poll(cls, context, cls.modes)


class SnapOperator(LimbOperator):
    """Mixin: snap one way, optionally switch the blend, optionally key it all."""

    # Not remembered: unless the call sets it (*... and Key*), auto-keying decides, whatever the last snap did.
    keyframe: BoolProperty(name="Insert Keyframes", description="Key what changed at the current frame (unless "
                           "set, on while auto-keying is)", options={"SKIP_SAVE"})
    # Set by each snap: which way it snaps ("FK": FK takes the IK pose; "IK": the other way).
    direction = "FK"
    modes = {"POSE", "OBJECT"}

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        frame = context.scene.frame_current
        try:
            names = api.snap_limb(obj, chosen_limb(context, self.limb).name, self.direction,
                                  key=keys_asked(self, context, mapped=True), frame=frame, switch=self.switch)
        except RigError as error:
            return report_error(self, error)
        self.report({"INFO"}, f"{self.bl_label}: {', '.join(names)}")
        return {"FINISHED"}


class IKRIG_OT_snap_fk_to_ik(SnapOperator, bpy.types.Operator):
    """Copy the limb's visual IK pose into its chain bones' own rotations, so switching to FK does not jump"""

    bl_idname = "ik_rigger.snap_fk_to_ik"
    bl_label = "Snap FK to IK"
    bl_options = {"REGISTER", "UNDO"}

    switch: BoolProperty(name="Switch to FK", description="Also set the limb's IK/FK to full FK", default=True)
    direction = "FK"


class IKRIG_OT_snap_ik_to_fk(SnapOperator, bpy.types.Operator):
    """Move the limb's IK handle and pole to match its FK pose, so switching to IK does not jump"""

    bl_idname = "ik_rigger.snap_ik_to_fk"
    bl_label = "Snap IK to FK"
    bl_options = {"REGISTER", "UNDO"}

    switch: BoolProperty(name="Switch to IK", description="Also set the limb's IK/FK to full IK", default=True)
    direction = "IK"


class IKRIG_OT_fk_pivot(bpy.types.Operator):
    """FK rotation inside an IK chain: select the limb's IK handle and the active chain bone and pivot
around the active element. Run again to give back the previous pivot point and selection"""

    bl_idname = "ik_rigger.fk_pivot"
    bl_label = "FK Pivot in IK Chain"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        if obj is not None and obj.type == "ARMATURE" and obj.ik_rigger.pivot_saved:
            return True
        if not limb_poll(cls, context, {"POSE"}):
            return False
        bone = context.active_bone
        limb = find_limb(context)
        if bone is None or bone.name not in records.resolve(obj, limb).chain:
            cls.poll_message_set("Make a chain bone of a rigged limb active")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        rig = obj.ik_rigger
        tool_settings = context.scene.tool_settings
        if rig.pivot_saved:
            tool_settings.transform_pivot_point = rig.saved_pivot
            names = [item.name for item in rig.saved_selection if item.name in obj.data.bones]
            active = rig.saved_active if rig.saved_active in obj.data.bones else None
            selection.select_only(obj, names, active)
            rig.saved_selection.clear()
            rig.pivot_saved = False
            self.report({"INFO"}, "Gave back the pivot point and selection")
            return {"FINISHED"}
        bone = context.active_bone.name
        limb = find_limb(context)
        handle = records.resolve(obj, limb).handle
        if handle is None:  # refused before anything is stored: a refusal pushes no undo step to take it back
            self.report({"ERROR"}, f"'{limb.name}': the limb's IK handle is gone; rebuild the limb")
            return {"CANCELLED"}
        rig.saved_pivot = tool_settings.transform_pivot_point
        rig.saved_active = bone
        rig.saved_selection.clear()
        for name in selection.selected_bones(obj):
            rig.saved_selection.add().name = name
        selection.select_only(obj, [handle, bone], bone)
        tool_settings.transform_pivot_point = "ACTIVE_ELEMENT"
        rig.pivot_saved = True
        self.report({"INFO"}, f"Rotate now to turn '{bone}' with the IK handle; run again to give back the pivot")
        return {"FINISHED"}


class IKRIG_OT_select_limb_bones(LimbOperator, bpy.types.Operator):
    """Select the limb's IK handle, its pole target or its whole chain"""

    bl_idname = "ik_rigger.select_limb_bones"
    bl_label = "Select Limb Bones"
    bl_options = {"REGISTER", "UNDO"}

    part: EnumProperty(name="Part", description="Which bones to select", items=[
        ("HANDLE", "IK Handle", "The IK handle at the chain's end"),
        ("POLE", "Pole", "The pole target"),
        ("CHAIN", "Chain", "The chain bones"),
    ])
    modes = {"POSE"}

    def execute(self, context: bpy.types.Context) -> set[str]:
        try:
            limb = chosen_limb(context, self.limb)
        except RigError as error:
            return report_error(self, error)
        parts = records.resolve(context.active_object, limb)
        names = {"HANDLE": [parts.handle], "POLE": [parts.pole], "CHAIN": parts.chain}[self.part]
        names = [name for name in names if name]
        if not names:
            self.report({"ERROR"}, f"'{limb.name}': the limb has no {self.part.lower()} (never made, or deleted); "
                        "rebuild it with one")
            return {"CANCELLED"}
        selection.select_only(context.active_object, names, names[-1])
        return {"FINISHED"}


class IKRIG_OT_reset_pole_angle(LimbOperator, bpy.types.Operator):
    """Set the limb's pole angle back to the automatic value computed from the rest pose"""

    bl_idname = "ik_rigger.reset_pole_angle"
    bl_label = "Automatic Pole Angle"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        try:
            check_posable(obj)
            limb = chosen_limb(context, self.limb)
            parts = records.require(obj, limb, ROLE_POLE, ik=True)
        except RigError as error:
            return report_error(self, error)
        if parts.pole is None:
            self.report({"ERROR"}, f"'{limb.name}': the limb has no pole; rebuild it with one")
            return {"CANCELLED"}
        # From Edit mode, left once: the rest pose is then the one edited, and Blender stores the constraint's
        # change for Ctrl+Z (an Edit-mode undo step holds only the edit bones, the file only once Edit mode was
        # left since it was last stored).
        with kept_mode(obj):
            leave_edit_mode(obj)
            records.refresh(obj)
            records.ik_constraint(obj, parts).pole_angle = records.rest_pole_angle(obj, limb)
            limb.pole_angle_auto = True
        return {"FINISHED"}


class IKRIG_OT_rebuild_limb(LimbOperator, bpy.types.Operator):
    """Rebuild the limb with the settings stored on it (pole parent, extremity copy mode...)"""

    bl_idname = "ik_rigger.rebuild_limb"
    bl_label = "Rebuild Limb"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        try:
            limb = chosen_limb(context, self.limb)
            with kept_mode(obj):  # one block for the records and the build: from Edit mode, left once
                leave_edit_mode(obj)
                with prepared(obj):
                    parts = records.resolve(obj, limb)
                    refuse_gone(limb, parts)
                    if not parts.chain:
                        raise RigError("the limb's chain bones are gone", bone=limb.name, hint="Remove the limb.")
                    name = parts.chain[-1]
                    options = limb.to_options()
                    ik = records.ik_constraint(obj, parts)
                    if ik is not None:
                        # The panel edits the constraint itself: a pole angle tuned there is kept as a manual one.
                        automatic = (parts.pole is not None
                                     and abs(ik.pole_angle - records.rest_pole_angle(obj, limb)) < 1e-6)
                        options = replace(options, iterations=ik.iterations, pole_angle=ik.pole_angle,
                                          pole_angle_auto=options.pole_angle_auto and (automatic
                                                                                       or parts.pole is None))
                    built = api.build_many(obj, [(name, options)])
        except RigError as error:
            return report_error(self, error)
        report_notes(self, built[0].notes)
        remade = list(parts.missing)
        self.report({"INFO"}, f"Rebuilt the limb ending at '{name}'" + (f"; made again {', '.join(remade)}"
                                                                         if remade else ""))
        return {"FINISHED"}


def _take_the_scenes_range(operator, context: bpy.types.Context) -> None:
    """A bake's Start and End, where its caller gave none (a menu, F3, a script), from the scene's (or preview)
    range as it is now; a keymap's or a script's range is kept, and the redo panel then shows it."""
    scene = context.scene
    preview = scene.use_preview_range
    # The keys' frames the range plays (a scene that stretches time plays others).
    first, last = keys_range(scene, scene.frame_preview_start if preview else scene.frame_start,
                             scene.frame_preview_end if preview else scene.frame_end)
    if not operator.properties.is_property_set("frame_start"):
        operator.frame_start = first
    if not operator.properties.is_property_set("frame_end"):
        operator.frame_end = last


class IKRIG_OT_bake(LimbOperator, bpy.types.Operator):
    """Bake a frame range between FK and IK: key the IK controls from the FK motion, or the chain's own
rotations from what the IK shows (visual keying), as Rigify's IK/FK bake does"""

    bl_idname = "ik_rigger.bake"
    bl_label = "Bake IK/FK"
    bl_options = {"REGISTER", "UNDO"}

    direction: EnumProperty(name="Direction", description="Which side receives the keys", items=[
        ("FK_TO_IK", "FK to IK", "Key the limb's handle, pole and clone so the IK plays the FK motion"),
        ("IK_TO_FK", "IK to FK", "Key the chain's and extremity's own transforms with what the IK shows"),
    ])
    # Not remembered from the last run (SKIP_SAVE): unless given, each run starts from the scene's range.
    frame_start: IntProperty(name="Start", description="First frame to bake (unless given, the scene's or preview "
                             "range's when the operator starts)", default=1, options={"SKIP_SAVE"})
    frame_end: IntProperty(name="End", description="Last frame to bake (unless given, the range's)", default=250,
                           options={"SKIP_SAVE"})
    # Neither is remembered: each would overwrite or delete keys the next bake was not asked to touch.
    all_limbs: BoolProperty(name="All Limbs", description="Bake every limb of the armature, not only the active "
                            "bone's", default=False, options={"SKIP_SAVE"})
    key_switch: BoolProperty(name="Key IK/FK", description="Key each limb's IK/FK (constant) so the result plays "
                             "in the mode baked to", default=True)
    clear_other: BoolProperty(name="Clear the Other Side", description="Delete, over the range, the keys of the "
                              "side baked away from (the chain's for FK to IK, the controls' for IK to FK)",
                              default=False, options={"SKIP_SAVE"})
    modes = {"POSE", "OBJECT"}

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        _take_the_scenes_range(self, context)
        return self.execute(context)

    def execute(self, context: bpy.types.Context) -> set[str]:
        _take_the_scenes_range(self, context)  # a script's call (EXEC) too, where invoke does not run
        obj = context.active_object
        if self.frame_end < self.frame_start:
            self.report({"ERROR"}, f"The frame range {self.frame_start} to {self.frame_end} is empty: "
                        "set the start before the end")
            return {"CANCELLED"}
        try:
            began = time.perf_counter()
            limbs = None if self.all_limbs else [chosen_limb(context, self.limb).name]
            warnings: list[str] = []
            results = api.bake(obj, self.direction, range(self.frame_start, self.frame_end + 1), limbs,
                               switch=self.key_switch, clear=self.clear_other, notes=warnings)
        except RigError as error:
            return report_error(self, error)
        total = time.perf_counter() - began
        self.report({"INFO"}, f"Baked {len(results)} limb(s), frames {self.frame_start} to {self.frame_end}, "
                    f"{self.direction.replace('_', ' ').lower()}, in {total:.2f} s")
        report_notes(self, warnings)
        return {"FINISHED"}


class IKRIG_OT_upgrade_rig(bpy.types.Operator):
    """Upgrade a rig made by an earlier IK Rigger: one from 0.1 then plays where IK Rigger is not installed, one
from 0.2 keeps smaller records and updates quicker when posed. Playback stays the same"""

    bl_idname = "ik_rigger.upgrade_rig"
    bl_label = "Upgrade Rig"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if not armature_in(cls, context, {"POSE", "OBJECT", "EDIT"}):
            return False
        if not needs_upgrade(context.active_object):
            cls.poll_message_set("The active armature has no rig from an earlier IK Rigger")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        try:
            with kept_mode(obj):
                leave_edit_mode(obj)
                messages = upgrade(obj)
        except RigError as error:
            return report_error(self, error)
        for message in messages:
            self.report({"INFO"}, message)
        return {"FINISHED"}


class IKRIG_OT_switch_parent(LimbOperator, bpy.types.Operator):
    """Make the limb's IK handle (and its pole) follow another parent without moving them (the limb must
be built with Parent Switching)"""

    bl_idname = "ik_rigger.switch_parent"
    bl_label = "Switch Parent"
    bl_options = {"REGISTER", "UNDO"}

    # Neither is remembered: the numbers are each limb's own, and unless set auto-keying decides.
    parent: IntProperty(name="Parent", description="What to follow, by number: 0 is the origin; the limb's "
                        "panel lists the rest", min=0, default=0, options={"SKIP_SAVE"})
    keyframe: BoolProperty(name="Insert Keyframes", description="Key the switch and the handle and pole where they "
                           "are, at the current frame (unless set, on while auto-keying is)", options={"SKIP_SAVE"})
    modes = {"POSE", "OBJECT"}

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        try:
            limb = chosen_limb(context, self.limb)
            kept = api.switch_parent(obj, limb.name, self.parent, key=keys_asked(self, context),
                                     frame=context.scene.frame_current)
        except RigError as error:
            return report_error(self, error)
        self.report({"INFO"}, f"{limb.name} follows parent {self.parent}; kept in place: {', '.join(kept)}")
        return {"FINISHED"}


classes = (IKRIG_OT_snap_fk_to_ik, IKRIG_OT_snap_ik_to_fk, IKRIG_OT_fk_pivot, IKRIG_OT_select_limb_bones,
           IKRIG_OT_reset_pole_angle, IKRIG_OT_rebuild_limb, IKRIG_OT_bake, IKRIG_OT_upgrade_rig,
           IKRIG_OT_switch_parent)
