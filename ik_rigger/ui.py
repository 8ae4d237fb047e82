"""Menus (so F3 finds every operator) and the sidebar tab."""

from __future__ import annotations

import bpy

from . import operators


class IKRIG_MT_menu(bpy.types.Menu):
    """IK Rigger's operators, in the Pose and Armature menus."""

    bl_idname = "IKRIG_MT_menu"
    bl_label = "IK Rigger"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        for operator in operators.classes:
            layout.operator(operator.bl_idname)


def _draw_menu(self: bpy.types.Menu, context: bpy.types.Context) -> None:
    self.layout.separator()
    self.layout.menu(IKRIG_MT_menu.bl_idname)


_HOST_MENUS = ("VIEW3D_MT_pose", "VIEW3D_MT_edit_armature")


def register_menus() -> None:
    for name in _HOST_MENUS:
        getattr(bpy.types, name).append(_draw_menu)


def unregister_menus() -> None:
    for name in _HOST_MENUS:
        menu = getattr(bpy.types, name, None)
        # Menu.remove raises for a function it does not hold (unregister after a failed register).
        if menu is not None and _draw_menu in getattr(menu.draw, "_draw_funcs", ()):
            menu.remove(_draw_menu)


classes = (IKRIG_MT_menu,)
