"""IK Rigger: turn a bare armature into an animator-ready IK rig in one click.

Registration goes over each module's ``classes`` tuple in a fixed order and
unregisters in reverse. Imports are relative so the same package works imported
directly (tests) and installed as an extension (``bl_ext.<repository>.ik_rigger``).
"""

from __future__ import annotations

import bpy

from . import aim_operators, export_operators, ground_operators, operators, pose_operators, props, ui
from .batch import command

# Order matters: property groups before the pointer that uses them, operators
# before the menus and panels that draw them.
_modules = (props, operators, pose_operators, aim_operators, ground_operators, export_operators, ui)
# Handles of the registered "blender --command ik_rigger" entries.
_cli_commands: list = []


def _classes() -> list[type]:
    return [cls for module in _modules for cls in module.classes]


def register() -> None:
    # A second register (reloading scripts, a test registering again) first clears
    # what the earlier one left, so Blender never sees a class twice.
    unregister()
    for cls in _classes():
        bpy.utils.register_class(cls)
    props.register_properties()
    ui.register_menus()
    _cli_commands.append(bpy.utils.register_cli_command("ik_rigger", command.command))


def unregister() -> None:
    """Undo ``register``; safe after a failed or partial register, and when not registered."""
    while _cli_commands:
        bpy.utils.unregister_cli_command(_cli_commands.pop())
    ui.unregister_menus()
    props.unregister_properties()
    for cls in reversed(_classes()):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
