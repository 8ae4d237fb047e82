"""Operators: read the context, call ``rig``, report. User mistakes become reports."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from mathutils import Vector

from . import api
from .core.chain import ChainSpec
from .core.errors import RigError
from .core.notes import is_warning
from .limb.options import BOTH_SIDES, schema
from .parts.chain import BEND_DIRECTION_ITEMS
from .props import OperatorSettings, blender_property
from .rig import records
from .rig.chain import add_chain, armature_point
from .rig.scene_state import check_keyable

AXIS_ITEMS = list(BEND_DIRECTION_ITEMS[1:])


def armature_in(cls: type[bpy.types.Operator], context: bpy.types.Context, modes: set[str]) -> bool:
    """Shared poll: the active object is an armature in one of ``modes``; says why not."""
    obj = context.active_object
    shown = obj.instance_collection if obj is not None and obj.instance_type == "COLLECTION" else None
    if shown is not None and any(item.type == "ARMATURE" for item in shown.all_objects):
        # The character as a collection instance: what it shows is Blender's copy.
        cls.poll_message_set(f"'{obj.name}' shows the collection '{shown.name}' as an instance, which no one can "
                             "pose: work on the collection's armature itself")
        return False
    if obj is None or obj.type != "ARMATURE":
        near = _armatures_near(context, obj)
        cls.poll_message_set(f"Make an armature the active object (click {near})" if near
                             else "Make an armature the active object")
        return False
    if obj.mode not in modes:
        named = [mode.title() for mode in ("POSE", "EDIT", "OBJECT") if mode in modes]
        cls.poll_message_set(f"Switch the armature to {' or '.join(named)} mode")
        return False
    return True


def _armatures_near(context: bpy.types.Context, obj: bpy.types.Object | None) -> str:
    """The armatures the user likely means, named: those selected, else those under the active object (an
    importer leaves the empty at a file's root active, its armature selected below it)."""
    found = [item.name for item in context.selected_objects if item.type == "ARMATURE"]
    if not found and obj is not None:
        found = [item.name for item in obj.children_recursive if item.type == "ARMATURE"]
    return " or ".join(f"'{name}'" for name in sorted(found)[:3])


def armature_poll(cls: type[bpy.types.Operator], context: bpy.types.Context, need_bone: bool = True) -> bool:
    """Shared poll: an editable armature in Pose or Edit mode, with an active bone."""
    if not armature_in(cls, context, {"POSE", "EDIT"}):
        return False
    if need_bone and context.active_bone is None:
        cls.poll_message_set("Make a bone active")
        return False
    return True


def unknown_in_edit_mode(cls: type[bpy.types.Operator], context: bpy.types.Context) -> bool:
    """Whether the active bone was renamed or added in Edit mode, and so is not known yet (Blender writes edit
    bones back on leaving it): says so, where 'not part of a limb' would be wrong for a renamed one."""
    obj, bone = context.active_object, context.active_bone
    if obj.mode != "EDIT" or bone is None or bone.name in obj.data.bones:
        return False
    cls.poll_message_set(f"Leave Edit mode once: the bone '{bone.name}' was renamed or added there")
    return True


def report_notes(operator: bpy.types.Operator, messages: Iterable[str], about: str = "",
                 capital: bool = False) -> None:
    """Each sentence the rig layer had for the user (after ``about``, what it is about; with ``capital``,
    starting with one): a warning as WARNING, something to act on; a note as INFO, a record of what was done."""
    for message in messages:
        text = message[0].upper() + message[1:] if capital else message
        operator.report({"WARNING"} if is_warning(message) else {"INFO"}, f"{about}: {text}" if about else text)


# The build options' names, each an operator property of the build operators (``props.OperatorSettings``).
_OPTION_NAMES = tuple(declared.name for declared in schema())


def given_options(operator: bpy.types.Operator, remembered: bool = True) -> dict[str, object]:
    """The build options the call set or the redo panel changed, and with ``remembered`` those Blender
    remembered from the operator's last call (its "ghosts": not set, yet what the redo panel shows), each
    read alone: the others are at their defaults, the options' own (``props.blender_property``). An option
    ``shown_from_record`` filled in from the limb's record is given only where the panel changed it. Only the
    options holding a value are read: Blender keeps one for each the call set or remembered, none for the
    others; one read through the operator, rather than its properties, is a Python look-up of its own. Asking
    each of an operator's thirty options took Auto-Rig a tenth of a millisecond."""
    properties = operator.properties
    # ``is_property_set(name, ghost=False)``, for every option at once: the properties holding a value.
    present = set(properties.keys())
    shown = json.loads(properties.shown_from_record or "{}") if "shown_from_record" in present else {}
    given: dict[str, object] = {}
    for name in _OPTION_NAMES:
        if name in present and (remembered or properties.is_property_set(name)):
            value = getattr(properties, name)
            if name not in shown or shown[name] != value:
                given[name] = value
    return given


def show_the_limbs_options(operator: bpy.types.Operator, limb) -> None:
    """Put the rigged ``limb``'s recorded options in what the call did not set, so the redo panel shows the
    limb as it is, not the operator's last call; they are not given to the rebuild unless changed there (a redo
    keeps the operator's properties, and with them what was filled in)."""
    recorded = limb.to_options()
    properties = operator.properties
    shown = {}
    for name in _OPTION_NAMES:
        if not properties.is_property_set(name):
            setattr(operator, name, getattr(recorded, name))
            shown[name] = getattr(operator, name)  # as Blender keeps it (a float in single precision)
    operator.shown_from_record = json.dumps(shown)


# The options a build operator filled in from the rigged limb's record (``show_the_limbs_options``), as JSON.
_SHOWN_FROM_RECORD = StringProperty(name="Shown from the Limb", description="The options shown as the rigged "
                                    "limb has them (JSON)", options={"HIDDEN", "SKIP_SAVE"})


def keys_asked(operator: bpy.types.Operator, context: bpy.types.Context, mapped: bool = False) -> bool:
    """The operator's Insert Keyframes as given, else on while Blender's auto-keying is: what it poses is
    then keyed, as Blender's own transforms and Rigify's snapping do, and scrubbing keeps it. Auto-keying
    an action linked from a library cannot key: the pose is set without keys, with a warning, as Blender's
    transforms do."""
    if operator.properties.is_property_set("keyframe"):
        return bool(operator.keyframe)
    if not context.scene.tool_settings.use_keyframe_insert_auto:
        return False
    try:
        check_keyable(context.active_object, mapped, shown=True)  # ``mapped``: as the operator's own keys go (a snap's)
    except RigError as error:
        operator.report({"WARNING"}, f"Not keyed, although auto-keying is on: {error.message}")
        return False
    return True


def report_error(operator: bpy.types.Operator, error: RigError) -> set[str]:
    operator.report({"ERROR"}, error.message)
    return {"CANCELLED"}


class IKRIG_OT_build_ik(OperatorSettings, bpy.types.Operator):
    """Rig the chain ending at the active bone with an IK handle, a pole target and a planted extremity.
Run it again on a rigged limb to update it in place"""

    bl_idname = "ik_rigger.build_ik"
    bl_label = "Build IK Limb"
    bl_options = {"REGISTER", "UNDO"}

    both_sides: blender_property(BOTH_SIDES)
    shown_from_record: _SHOWN_FROM_RECORD

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return armature_poll(cls, context)

    def draw(self, context: bpy.types.Context) -> None:
        """The redo panel: options in Blender's split layout, bone names picked from the armature."""
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.prop(self, "both_sides")
        self.draw_options(layout, context.active_object.data)

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        last = context.active_bone.name
        limb = records.limb_of(obj, last)
        if limb is not None:
            chain = records.resolve(obj, limb).chain
            if chain:
                last = chain[-1]
        if limb is not None and not self.shown_from_record:  # the first run, not a redo from the panel
            show_the_limbs_options(self, limb)
        try:
            # Only what the call sets (or the redo panel changed): a rigged limb keeps the rest of its options,
            # and no other limb's remembered by Blender; a new one is built as the panel shows.
            given = given_options(self, remembered=limb is None)
            built = api.build(obj, last, both_sides=self.both_sides, **given)
        except RigError as error:
            return report_error(self, error)
        for limb in built:
            report_notes(self, limb.notes)
        self.report({"INFO"}, f"Rigged {', '.join(' > '.join(limb.chain) for limb in built)}")
        return {"FINISHED"}


class IKRIG_OT_auto_rig(OperatorSettings, bpy.types.Operator):
    """Find the legs and arms of the active armature by their names and hierarchy and rig them all.
Limbs it is not sure of are skipped and listed, never guessed"""

    bl_idname = "ik_rigger.auto_rig"
    bl_label = "Auto-Rig Limbs"
    bl_options = {"REGISTER", "UNDO"}

    shown_from_record: _SHOWN_FROM_RECORD

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        # Object mode too: an armature just imported is in it (the Object menu holds this, for F3).
        return armature_in(cls, context, {"POSE", "EDIT", "OBJECT"})

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        skipped: list[tuple[str, str]] = []
        notes: list[str] = []
        try:
            built = api.auto_rig(obj, skipped=skipped, notes=notes, **given_options(self))
        except RigError as error:
            for bone, reason in skipped:
                self.report({"WARNING"}, f"Skipped '{bone}': {reason}")
            if error.problem.startswith("no limbs found"):
                why = error.problem.partition(": ")[2]  # what no bone's name said, when that is why
                self.report({"ERROR"}, f"No limbs found on '{obj.name}'" + (f": {why}" if why else "")
                            + "; rig them one by one with Build IK Limb")
                return {"CANCELLED"}
            return report_error(self, error)
        for bone, reason in skipped:
            self.report({"WARNING"}, f"Skipped '{bone}': {reason}")
        for limb in built:
            report_notes(self, limb.notes, about=limb.name)
        report_notes(self, notes)
        self.report({"INFO"}, f"Rigged {len(built)} limb(s): " + ", ".join(limb.name for limb in built))
        return {"FINISHED"}


class IKRIG_OT_remove_ik(bpy.types.Operator):
    """Remove everything IK Rigger made for the limb of the active bone, leaving the armature as before"""

    bl_idname = "ik_rigger.remove_ik"
    bl_label = "Remove IK Limb"
    bl_options = {"REGISTER", "UNDO"}

    # Not remembered: a removal that dropped the motion once would drop the next limb's too.
    keep_motion: BoolProperty(name="Keep the Motion", description="Bake what the limb's IK plays onto the chain's "
                              "own keys first, so the animation plays the same without the rig", default=True,
                              options={"SKIP_SAVE"})

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if not armature_poll(cls, context) or unknown_in_edit_mode(cls, context):
            return False
        if records.limb_of(context.active_object, context.active_bone.name) is None:
            cls.poll_message_set("The active bone is not part of a limb rigged by IK Rigger")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        name = records.limb_of(obj, context.active_bone.name).name
        try:
            messages = api.remove(obj, context.active_bone.name, keep_motion=self.keep_motion)
        except RigError as error:
            return report_error(self, error)
        report_notes(self, messages, capital=True)
        self.report({"INFO"}, f"Removed the IK limb ending at '{name}'")
        return {"FINISHED"}


class IKRIG_OT_add_chain(bpy.types.Operator):
    """Add a new chain of bones at the 3D cursor, slightly bent the way it should bend, ready for IK"""

    bl_idname = "ik_rigger.add_chain"
    bl_label = "Add IK Chain Bones"
    bl_options = {"REGISTER", "UNDO"}

    base_name: StringProperty(name="Name", description="Base name of the new bones", default="leg")
    side: EnumProperty(name="Side", description="Side suffix of the new bones", items=[
        ("NONE", "None", "No side suffix"), ("L", "Left", "Names end in .L"), ("R", "Right", "Names end in .R")])
    bone_count: IntProperty(name="Bones", description="Number of chain bones", default=2, min=2, soft_max=16)
    bone_length: FloatProperty(name="Length", description="Length of the first chain bone", default=0.5, min=0.001,
                               subtype="DISTANCE")
    length_ratio: FloatProperty(name="Length Ratio", description="Each bone's length over the one before it",
                                default=1.0, min=0.05, max=20.0)
    direction: EnumProperty(name="Direction", description="Which way the chain runs from its root",
                            items=AXIS_ITEMS, default="Z_NEG")
    bend_direction: EnumProperty(name="Bend Direction", description="Which way the chain is pre-bent",
                                 items=AXIS_ITEMS, default="Y_NEG")
    bend_angle: FloatProperty(name="Pre-bend", description="How far each bone is turned toward the bend direction",
                              default=0.0872665, min=0.0, max=0.5, subtype="ANGLE")
    extremity: BoolProperty(name="Extremity", description="Add a foot or hand bone at the chain's end", default=True)
    parents: BoolProperty(name="Origin and Hip", description="Add the guide's Origin and Hip parent bones",
                          default=True)

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return armature_poll(cls, context, need_bone=False)

    def execute(self, context: bpy.types.Context) -> set[str]:
        obj = context.active_object
        try:
            start = armature_point(obj, context.scene.cursor.location)
            spec = ChainSpec(
                base_name=self.base_name, side="" if self.side == "NONE" else self.side,
                bone_count=self.bone_count, bone_length=self.bone_length,
                length_ratio=self.length_ratio, start=Vector(start), direction=self.direction,
                bend_direction=self.bend_direction, bend_degrees=math.degrees(self.bend_angle),
                extremity=self.extremity, parents=self.parents,
            )
            names = add_chain(obj, spec)
        except RigError as error:
            return report_error(self, error)
        self.report({"INFO"}, f"Added {', '.join(names)}")
        return {"FINISHED"}


classes = (IKRIG_OT_build_ik, IKRIG_OT_auto_rig, IKRIG_OT_remove_ik, IKRIG_OT_add_chain)
