"""The bones a limb's options name, as the rig follows them now.

Blender renames a bone everywhere the armature names it (its children's parent, the constraints aiming at it),
but not in IK Rigger's options: a handle parent or other parent named by hand keeps the old name, and a rebuild
would refuse it as no bone of the armature. Each part that names bones in its options reads them off what it
made (``Part.named``), so ``records.refresh`` renames them with the user's bones.
"""

from __future__ import annotations

from typing import Any

import bpy

from .. import parts as limb_parts

# The parts whose options name bones the rig follows (``Part.named``), read once.
_NAMING = tuple(limb_parts.with_hook("named"))


def renamed_in_options(obj: bpy.types.Object, limb: Any, parts: Any) -> dict[str, str]:
    """Old name -> new of the bones ``limb``'s options name that are no bone any more, where the rig follows a
    bone in their place: the user renamed it. ``parts``: the limb's as they are now (``records.resolve``)."""
    bones = obj.data.bones
    renamed = {}
    for part in _NAMING:
        for option, bone in part.named(obj, parts, limb).items():
            recorded = getattr(limb, option)
            if recorded and recorded != bone and recorded not in bones:
                renamed[recorded] = bone
    return renamed
