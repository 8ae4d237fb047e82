"""The sidebar tab, the limb list and the menus (so F3 finds every operator).

``draw`` methods only read: the one thing they write is operator properties of
the buttons they draw, which is how a button carries its options.
"""

from __future__ import annotations

import bpy

from . import aim_operators, export_operators, ground_operators, operators, pose_operators
from . import parts as limb_parts
from .core.aim import AIM
from .core.errors import RigError
from .limb import options
from .limb.plan import plan_limb
from .rig import records
from .rig.aim import find_aim_rigs
from .rig.skeleton import read_skeleton
from .rig.upgrade import needs_upgrade

# Every build option's name: what the Build button carries and the preview depends on.
# What the sidebar's settings give its buttons: every build option to Auto-Rig (which sets each
# limb's chain and extremity from what it finds), and Both Sides too to Build.
_LIMB_OPTIONS = tuple(declared.name for declared in options.schema())
_ALL_OPTIONS = (*_LIMB_OPTIONS, "both_sides")


class IKRIG_PT_sidebar:
    """Mixin: where IK Rigger's panels live and when they show."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "IK Rigger"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and obj.type == "ARMATURE" and obj.mode in {"POSE", "EDIT"}


class IKRIG_PT_main(IKRIG_PT_sidebar, bpy.types.Panel):
    """IK Rigger's tab."""

    bl_label = "IK Rigger"

    def draw(self, context: bpy.types.Context) -> None:
        rig = context.active_object.ik_rigger
        self.layout.label(text=f"{len(rig.limbs)} limb(s) rigged on {context.active_object.name}", icon="ARMATURE_DATA")


# What the Build panel shows, computed once per (armature, bone, settings, limbs) and
# dropped whenever any armature's data changes: planning reads the whole skeleton
# (18 ms on a 1,500-bone character), far too slow to run on every redraw.
_PREVIEWS: dict[tuple, tuple[list[str], str | None]] = {}


def _preview_key(obj: bpy.types.Object, bone: str, settings) -> tuple:
    return (obj.as_pointer(), obj.data.as_pointer(), obj.mode, bone, len(obj.ik_rigger.limbs),
            tuple(getattr(settings, name) for name in _ALL_OPTIONS))


def preview(obj: bpy.types.Object, bone: str, settings) -> tuple[list[str], str | None]:
    """What Build would do for ``bone`` (cached; see ``_PREVIEWS``)."""
    key = _preview_key(obj, bone, settings)
    shown = _PREVIEWS.get(key)
    if shown is None:
        shown = _PREVIEWS[key] = _preview(obj, bone, settings)
    return shown


# The aim rigs the Aim panel lists, per armature: finding them reads every bone's mark, too slow for each
# redraw of a big armature. Forgotten on any update of an armature or its object (bones, constraints).
_AIM_RIGS: dict[tuple[int, int, int], list] = {}


def aim_rigs(obj: bpy.types.Object) -> list:
    """``find_aim_rigs`` of ``obj``, cached until the next update of an armature (see ``_AIM_RIGS``)."""
    key = (obj.as_pointer(), obj.data.as_pointer(), len(obj.data.bones))
    found = _AIM_RIGS.get(key)
    if found is None:
        found = _AIM_RIGS[key] = find_aim_rigs(obj)
    return found


@bpy.app.handlers.persistent
def _forget_previews(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    """After an update: an armature's bones may have changed, so the previews may be stale."""
    if not (_PREVIEWS or _AIM_RIGS):
        return
    armatures = [update.id for update in depsgraph.updates if isinstance(update.id, bpy.types.Armature)]
    if armatures:
        _PREVIEWS.clear()
    if _AIM_RIGS and (armatures or any(isinstance(update.id, bpy.types.Object) and update.id.type == "ARMATURE"
                                       for update in depsgraph.updates)):
        _AIM_RIGS.clear()


@bpy.app.handlers.persistent
def _forget_all_previews(*_args: object) -> None:
    _PREVIEWS.clear()
    _AIM_RIGS.clear()


def _preview(obj: bpy.types.Object, bone: str, settings) -> tuple[list[str], str | None]:
    """Lines saying what Build would do for the active bone, or the reason it can't."""
    skeleton = read_skeleton(obj)
    if bone not in skeleton.bones:
        return [], "Leave Edit mode once so the new bone is known"
    limb = records.limb_of(obj, bone)
    if limb is not None:
        parts = records.resolve(obj, limb)
        skeleton = skeleton.without(set(parts.made.values()))
        if parts.chain:
            bone = parts.chain[-1]
    try:
        planned = plan_limb(skeleton, bone, settings.to_options(), records.made_by_limbs(obj))  # as a build
    except RigError as error:
        return [], error.message
    lines = [f"Chain: {' > '.join(planned.chain)}", f"Extremity: {planned.extremity or 'none'}",
             f"Side: {planned.side or 'none'}", "Shape: straight (will be pre-bent)" if planned.straight
             else "Shape: bent"]
    if limb is not None:
        lines.append("Already rigged: Build updates it in place")
    return lines, None


class IKRIG_PT_build(IKRIG_PT_sidebar, bpy.types.Panel):
    """Build a limb from the active bone, with what was detected shown first."""

    bl_label = "Build"
    bl_parent_id = "IKRIG_PT_main"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        obj = context.active_object
        settings = obj.ik_rigger.build_settings
        bone = context.active_bone
        box = layout.box()
        if bone is None:
            box.label(text="Make the chain's last bone active", icon="INFO")
        else:
            lines, problem = preview(obj, bone.name, settings)
            if problem:
                box.label(text=problem, icon="ERROR")
            for line in lines:
                box.label(text=line)
        layout.use_property_split = True
        layout.use_property_decorate = False
        settings.draw_options(layout, obj.data, "basic")
        layout.prop(settings, "both_sides")
        for idname, icon, names in ((operators.IKRIG_OT_build_ik.bl_idname, "CON_KINEMATIC", _ALL_OPTIONS),
                                    (operators.IKRIG_OT_auto_rig.bl_idname, "OUTLINER_OB_ARMATURE", _LIMB_OPTIONS)):
            button = layout.operator(idname, icon=icon)
            for name in names:
                setattr(button, name, getattr(settings, name))
        row = layout.row(align=True)
        row.operator(operators.IKRIG_OT_add_chain.bl_idname, icon="BONE_DATA")
        row.operator(operators.IKRIG_OT_remove_ik.bl_idname, icon="X")


class IKRIG_PT_build_advanced(IKRIG_PT_sidebar, bpy.types.Panel):
    """Build options most limbs never need."""

    bl_label = "Advanced"
    bl_parent_id = "IKRIG_PT_build"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        obj = context.active_object
        settings = obj.ik_rigger.build_settings
        settings.draw_options(layout, obj.data, "advanced")


class IKRIG_UL_limbs(bpy.types.UIList):
    """The limbs rigged on the armature."""

    bl_idname = "IKRIG_UL_limbs"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        chain = " > ".join(records.inventory(item).chain)
        layout.label(text=chain or item.name, icon="CON_KINEMATIC")
        handle = data.id_data.pose.bones.get(item.handle)
        if handle is not None and records.IK_FK in handle:
            layout.prop(handle, f'["{records.IK_FK}"]', text="IK", slider=True, emboss=False)


class IKRIG_PT_limbs(IKRIG_PT_sidebar, bpy.types.Panel):
    """The rigged limbs, and the live settings of the selected one."""

    bl_label = "Limbs"
    bl_parent_id = "IKRIG_PT_main"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        obj = context.active_object
        rig = obj.ik_rigger
        layout.template_list(IKRIG_UL_limbs.bl_idname, "", rig, "limbs", rig, "active_limb_index", rows=3)
        if not 0 <= rig.active_limb_index < len(rig.limbs):
            return
        limb = rig.limbs[rig.active_limb_index]
        if needs_upgrade(obj):
            if rig.version < 1:
                layout.label(text="Rigged by an earlier IK Rigger: it plays only with the add-on", icon="ERROR")
            else:
                layout.label(text="Rigged by IK Rigger 0.2: Upgrade Rig makes posing it quicker", icon="INFO")
            layout.operator(pose_operators.IKRIG_OT_upgrade_rig.bl_idname, icon="FILE_REFRESH")
        parts = records.resolve(obj, limb)
        for missing in parts.missing:
            layout.label(text=f"Gone: {missing}; Rebuild Limb makes it again", icon="ERROR")
        column = layout.column()
        column.use_property_split = True
        column.use_property_decorate = False
        # Each part draws its own live settings: switches on the handle, the IK constraint's, its options.
        for part in limb_parts.with_hook("draw"):
            part.draw(column, obj, limb, parts)
        column.operator(pose_operators.IKRIG_OT_rebuild_limb.bl_idname, icon="FILE_REFRESH").limb = limb.name
        row = layout.row(align=True)
        for which, text in (("HANDLE", "Handle"), ("POLE", "Pole"), ("CHAIN", "Chain")):
            button = row.operator(pose_operators.IKRIG_OT_select_limb_bones.bl_idname, text=text)
            button.part = which
            button.limb = limb.name


class IKRIG_PT_joints(IKRIG_PT_sidebar, bpy.types.Panel):
    """Per chain bone IK settings of the selected limb: Blender's own pose-bone properties."""

    bl_label = "Joints"
    bl_parent_id = "IKRIG_PT_limbs"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if not super().poll(context):
            return False
        rig = context.active_object.ik_rigger
        return 0 <= rig.active_limb_index < len(rig.limbs)

    def draw(self, context: bpy.types.Context) -> None:
        obj = context.active_object
        rig = obj.ik_rigger
        parts = records.resolve(obj, rig.limbs[rig.active_limb_index])
        for name in parts.chain:
            pose_bone = obj.pose.bones[name]
            box = self.layout.box()
            box.label(text=name, icon="BONE_DATA")
            row = box.row(align=True)
            row.label(text="Lock")
            for axis in "xyz":
                row.prop(pose_bone, f"lock_ik_{axis}", text=axis.upper(), toggle=True)
            row = box.row(align=True)
            row.label(text="Stiffness")
            for axis in "xyz":
                row.prop(pose_bone, f"ik_stiffness_{axis}", text=axis.upper())
            for axis in "xyz":
                row = box.row(align=True)
                row.prop(pose_bone, f"use_ik_limit_{axis}", text=f"Limit {axis.upper()}")
                sub = row.row(align=True)
                sub.active = getattr(pose_bone, f"use_ik_limit_{axis}")
                sub.prop(pose_bone, f"ik_min_{axis}", text="Min")
                sub.prop(pose_bone, f"ik_max_{axis}", text="Max")
            box.prop(pose_bone, "ik_stretch", slider=True)


class IKRIG_PT_solver(IKRIG_PT_sidebar, bpy.types.Panel):
    """The armature's IK solver (Blender's own setting): Standard or iTaSC, with iTaSC's settings."""

    bl_label = "IK Solver"
    bl_parent_id = "IKRIG_PT_main"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        pose = context.active_object.pose
        layout.prop(pose, "ik_solver")
        if pose.ik_solver == "ITASC":
            # Blender's iTaSC leaves constraint influence aside: the ik_fk and ik_weight drivers do nothing.
            layout.label(text="iTaSC ignores constraint influence: IK/FK and IK Weight need Standard",
                         icon="INFO")
        if pose.ik_solver == "ITASC" and pose.ik_param is not None:
            itasc = pose.ik_param
            for name in ("mode", "precision", "iterations", "solver"):
                layout.prop(itasc, name)
            if itasc.solver == "DLS":
                layout.prop(itasc, "damping_max")
                layout.prop(itasc, "damping_epsilon")


class IKRIG_PT_pose(IKRIG_PT_sidebar, bpy.types.Panel):
    """Pose helpers: the FK pivot and IK/FK snapping."""

    bl_label = "Pose Helpers"
    bl_parent_id = "IKRIG_PT_main"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        obj = context.active_object
        rig = obj.ik_rigger
        text = "Give Back Pivot" if rig.pivot_saved else "FK Pivot in IK Chain"
        layout.operator(pose_operators.IKRIG_OT_fk_pivot.bl_idname, text=text, icon="PIVOT_ACTIVE")
        column = layout.column(align=True)
        column.operator(pose_operators.IKRIG_OT_snap_fk_to_ik.bl_idname, icon="SNAP_ON")
        column.operator(pose_operators.IKRIG_OT_snap_ik_to_fk.bl_idname, icon="SNAP_ON")
        keyed = column.operator(pose_operators.IKRIG_OT_snap_fk_to_ik.bl_idname, text="Snap FK to IK and Key")
        keyed.keyframe = True
        keyed = column.operator(pose_operators.IKRIG_OT_snap_ik_to_fk.bl_idname, text="Snap IK to FK and Key")
        keyed.keyframe = True
        column = layout.column(align=True)
        column.operator(pose_operators.IKRIG_OT_bake.bl_idname, text="Bake FK to IK", icon="REC").direction = \
            "FK_TO_IK"
        column.operator(pose_operators.IKRIG_OT_bake.bl_idname, text="Bake IK to FK", icon="REC").direction = \
            "IK_TO_FK"


class IKRIG_PT_aim(IKRIG_PT_sidebar, bpy.types.Panel):
    """Aim rigs: heads, necks and eyes that look at a target, with their aim switches."""

    bl_label = "Aim"
    bl_parent_id = "IKRIG_PT_main"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        obj = context.active_object
        layout.operator(aim_operators.IKRIG_OT_add_aim.bl_idname, icon="HIDE_OFF").part = "AUTO"
        row = layout.row(align=True)
        for part, text in (("HEAD", "Head"), ("NECK", "Neck"), ("EYES", "Eyes")):
            row.operator(aim_operators.IKRIG_OT_add_aim.bl_idname, text=text).part = part
        for aim_rig in aim_rigs(obj):
            box = layout.box()
            row = box.row(align=True)
            row.label(text=", ".join(sorted(aim_rig.aimed)) or "(aimed bones gone)", icon="CON_TRACKTO")
            row.operator(aim_operators.IKRIG_OT_remove_aim.bl_idname, text="", icon="X").bone = \
                next(iter(aim_rig.made_bones()))
            control = obj.pose.bones.get(aim_rig.control) if aim_rig.control else None
            if control is not None and AIM in control:
                box.prop(control, f'["{AIM}"]', text=f"Aim ({control.name})", slider=True)


class IKRIG_PT_ground(IKRIG_PT_sidebar, bpy.types.Panel):
    """Feet on the ground: the character's ground mesh and planting its feet on it."""

    bl_label = "Ground"
    bl_parent_id = "IKRIG_PT_main"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        layout.prop(context.active_object.ik_rigger, "ground")
        column = layout.column(align=True)
        column.operator(ground_operators.IKRIG_OT_plant_feet.bl_idname, icon="SNAP_FACE").frames = "CURRENT"
        column.operator(ground_operators.IKRIG_OT_plant_feet.bl_idname, text="Plant Feet over Frame Range",
                        icon="REC").frames = "RANGE"


class IKRIG_MT_menu(bpy.types.Menu):
    """IK Rigger's operators, in the Pose and Armature menus."""

    bl_idname = "IKRIG_MT_menu"
    bl_label = "IK Rigger"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        for operator in (operators.classes + pose_operators.classes + aim_operators.classes
                         + ground_operators.classes):
            layout.operator(operator.bl_idname)
        layout.operator(export_operators.IKRIG_OT_export.bl_idname)


def _draw_menu(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.separator()
    self.layout.menu(IKRIG_MT_menu.bl_idname)


_HOST_MENUS = ("VIEW3D_MT_pose", "VIEW3D_MT_edit_armature")


# The operators that work on an armature in Object mode, as they do from the API: F3 finds an
# operator only in a menu, and the one above sits in Pose and Edit mode's.
OBJECT_MODE_OPERATORS = (operators.IKRIG_OT_auto_rig, pose_operators.IKRIG_OT_snap_fk_to_ik,
                         pose_operators.IKRIG_OT_snap_ik_to_fk, pose_operators.IKRIG_OT_bake,
                         pose_operators.IKRIG_OT_switch_parent, ground_operators.IKRIG_OT_plant_feet,
                         pose_operators.IKRIG_OT_upgrade_rig, export_operators.IKRIG_OT_export)


class IKRIG_MT_object_menu(bpy.types.Menu):
    """IK Rigger's operators for an armature in Object mode, in the Object menu and its context menu."""

    bl_idname = "IKRIG_MT_object_menu"
    bl_label = "IK Rigger"

    def draw(self, context: bpy.types.Context) -> None:
        for operator in OBJECT_MODE_OPERATORS:
            self.layout.operator(operator.bl_idname)


def _draw_object_menu(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    """Only with an armature active: the menu has nothing for a mesh or a camera."""
    obj = context.active_object
    if obj is not None and obj.type == "ARMATURE":
        self.layout.separator()
        self.layout.menu(IKRIG_MT_object_menu.bl_idname)


_OBJECT_MENUS = ("VIEW3D_MT_object", "VIEW3D_MT_object_context_menu")


_HANDLERS = ((bpy.app.handlers.depsgraph_update_post, _forget_previews),
             (bpy.app.handlers.load_post, _forget_all_previews), (bpy.app.handlers.undo_post, _forget_all_previews),
             (bpy.app.handlers.redo_post, _forget_all_previews))


# File > Export holds the export for game engines.
_EXPORT_MENU = "TOPBAR_MT_file_export"


def register_menus() -> None:
    for name in _HOST_MENUS:
        getattr(bpy.types, name).append(_draw_menu)
    for name in _OBJECT_MENUS:
        getattr(bpy.types, name).append(_draw_object_menu)
    getattr(bpy.types, _EXPORT_MENU).append(export_operators.draw_export_menu)
    for handlers, handler in _HANDLERS:
        if handler not in handlers:
            handlers.append(handler)


def unregister_menus() -> None:
    for handlers, handler in _HANDLERS:
        while handler in handlers:
            handlers.remove(handler)
    _PREVIEWS.clear()
    export_menu = getattr(bpy.types, _EXPORT_MENU, None)
    if export_menu is not None and export_operators.draw_export_menu in getattr(export_menu.draw, "_draw_funcs", ()):
        export_menu.remove(export_operators.draw_export_menu)
    for names, draw in ((_HOST_MENUS, _draw_menu), (_OBJECT_MENUS, _draw_object_menu)):
        for name in names:
            menu = getattr(bpy.types, name, None)
            # Menu.remove raises for a function it does not hold (unregister after a failed register).
            if menu is not None and draw in getattr(menu.draw, "_draw_funcs", ()):
                menu.remove(draw)


classes = (IKRIG_PT_main, IKRIG_PT_build, IKRIG_PT_build_advanced, IKRIG_UL_limbs, IKRIG_PT_limbs, IKRIG_PT_joints,
           IKRIG_PT_solver, IKRIG_PT_pose,
           IKRIG_PT_aim, IKRIG_PT_ground, IKRIG_MT_menu, IKRIG_MT_object_menu)
