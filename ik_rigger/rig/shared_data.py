"""Armature data other objects share (a linked duplicate, Alt+D): edits of its bones that they would show.

Bones, their rest and their collections live on the armature data; constraints, drivers and the
pose on each object. Adding a limb to shared data gives the other objects its bones, doing nothing
there, and the build warns of it. Changing or deleting bones that are there already (rebuilding or
removing a limb, adding or removing an aim control) would move or break what the other objects
show, their own rig included when they were duplicated rigged: that is refused, before anything
changes, naming them and what to do. So is rigging an object whose data another object's rig is in already
(an unrigged linked duplicate of it): a second set of the same limbs, which both would show.
"""

from __future__ import annotations

import bpy

from ..core.errors import RigError


def sharing(obj: bpy.types.Object) -> list[str]:
    """The other objects using ``obj``'s armature data, by name."""
    if obj.data.users <= 1:
        return []  # data with one user has no other object to look for among the file's
    return sorted(other.name for other in bpy.data.objects if other.data == obj.data and other != obj)


def refuse_shared(obj: bpy.types.Object, doing: str) -> None:
    """Refuse ``doing`` (what the edit does to the bones) on armature data other objects share."""
    others = sharing(obj)
    if not others:
        return
    named = ", ".join(f"'{name}'" for name in others[:4]) + (", ..." if len(others) > 4 else "")
    them = "it" if len(others) == 1 else "them"
    raise RigError(f"the armature data '{obj.data.name}' of '{obj.name}' is shared with {named} (a linked "
                   f"duplicate, Alt+D): {doing}, which would change {them} too",
                   hint=f"Give '{obj.name}' its own data first: select it, then Object > Relations > Make Single "
                   "User > Object & Data, and try again.")


def refuse_rigged_by_another(obj: bpy.types.Object) -> None:
    """Refuse new limbs on ``obj`` where its armature data holds another object's rig: a limb rigged on an
    object sharing the data that ``obj``'s own rig does not hold (a duplicate made rigged holds the same limbs)."""
    if obj.data.users <= 1:
        return
    own = {limb.uid for limb in obj.ik_rigger.limbs}
    rigged = sorted(other.name for other in bpy.data.objects if other.data == obj.data and other != obj
                    and any(limb.uid not in own for limb in other.ik_rigger.limbs))
    if not rigged:
        return
    named = ", ".join(f"'{name}'" for name in rigged[:4]) + (", ..." if len(rigged) > 4 else "")
    raise RigError(f"the armature data '{obj.data.name}' of '{obj.name}' is shared with {named} (a linked duplicate, "
                   f"Alt+D), which IK Rigger rigged: that rig's bones are in the data already, and rigging "
                   f"'{obj.name}' too would add a second set of them, which both would show",
                   hint=f"Give '{obj.name}' its own data first: select it, then Object > Relations > Make Single User "
                   f"> Object & Data, and rig it then; or duplicate {named} rigged (Alt+D copies its rig).")
