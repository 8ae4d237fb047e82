"""What a build changed, so a build that fails part way gives everything back.

Each change is logged with the step that undoes it, by name (Blender replaces its
Python objects across mode switches). Edit-mode steps run in Edit mode; the others in
the mode the failure left.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import bpy

from . import modes

EditUndo = Callable[[Any], None]  # takes the armature's edit bones
DataUndo = Callable[[], None]


class Journal:
    """The undo log of one build."""

    def __init__(self, obj: bpy.types.Object) -> None:
        self.obj = obj
        self._edit: list[EditUndo] = []
        self._data: list[DataUndo] = []
        self._late: list[DataUndo] = []
        # What the build read once for its later steps (``pose_pass``: the paths driven before it).
        self.read: dict[str, Any] = {}

    def pose_bone(self, name: str) -> bpy.types.PoseBone:
        """The armature's pose bone ``name``, looked up once per build: a look-up by name makes a new
        Python object each time. Only for the constraint stage, after the build's last mode switch (which
        replaces every pose bone's Python object); the undo steps look theirs up anew."""
        found = self.read.get("pose bones")
        if found is None:
            found = self.read["pose bones"] = {}
        bone = found.get(name)
        if bone is None:
            bone = found[name] = self.obj.pose.bones[name]
        return bone

    def edit(self, undo: EditUndo) -> None:
        """Log an Edit-mode change (bones, their rest, collections)."""
        self._edit.append(undo)

    def data(self, undo: DataUndo) -> None:
        """Log any other change (constraints, drivers, pose bones, records)."""
        self._data.append(undo)

    def after_bones(self, undo: DataUndo) -> None:
        """Log a change to the pose data of a bone the build deletes: given back once the bone is back."""
        self._late.append(undo)

    def rollback(self) -> None:
        """Undo every logged change, newest first."""
        for undo in reversed(self._data):
            undo()
        self._data.clear()
        if self._edit:
            modes.set_mode(self.obj, "EDIT")
            edit_bones = self.obj.data.edit_bones
            for edit_undo in reversed(self._edit):
                edit_undo(edit_bones)
            self._edit.clear()
        if self._late:
            modes.set_mode(self.obj, "OBJECT")  # bones made again get their pose bones on leaving Edit mode
            for undo in reversed(self._late):
                undo()
            self._late.clear()
