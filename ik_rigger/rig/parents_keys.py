"""Switch Parent on animated controls: the keys of the handle (and pole) on the frames the new choice
plays are written anew under it, so the controls play where they did.

A control's keys hold its pose under the parent it followed when they were made: after a switch, the
same values under another parent put it elsewhere on every keyed frame (the Mixamo capture's baked
foot went 1.6 leg lengths off). The poses are read with the old choice, frame by frame, and keyed
again on the same frames under the new one (``parents.switch_parent``). Runs in Object or Pose mode.
"""

from __future__ import annotations

from collections.abc import Sequence

import bpy
from mathutils import Matrix

from ..core.errors import RigError
from ..core.geometry import POSE_CHANNELS
from .animation import fcurve_owners, other_fcurve_owners
from .keys import Local, default_interpolation, evaluated_poses, key_transforms
from .records import quoted
from .scene_state import check_keyable


def _prefixes(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(f'pose.bones["{quoted(name)}"].{channel}' for name in names for channel in POSE_CHANNELS)


def other_clip_keying(obj: bpy.types.Object, names: Sequence[str]) -> str | None:
    """The name of an action of ``obj`` other than the active one (an NLA strip's, a stored clip) that keys
    the transforms of the bones ``names``, None when none does."""
    prefixes = _prefixes(names)
    return next((owner.id_data.name for owner in other_fcurve_owners(obj)
                 if any(curve.data_path.startswith(prefixes) for curve in owner.fcurves)), None)


def keyed_frames(obj: bpy.types.Object, names: Sequence[str], after: int | None) -> list[int]:
    """The whole frames on which the active action keys the transforms of the bones ``names`` (those
    after ``after`` only, when given), in order."""
    prefixes = _prefixes(names)
    frames = {round(point.co.x) for owner in fcurve_owners(obj) for curve in owner.fcurves
              if curve.data_path.startswith(prefixes) for point in curve.keyframe_points}
    return sorted(frame for frame in frames if after is None or frame > after)


class Rekeying:
    """The controls' poses on their keyed frames, read before a switch, to key them again after it."""

    def __init__(self, obj: bpy.types.Object, names: Sequence[str], after: int | None, limb: str = "") -> None:
        if after is None:
            # A choice not keyed holds in every clip, whose keys of the controls it would move: this one's only
            # are keyed again.
            clip = other_clip_keying(obj, names)
            if clip is not None:
                raise RigError(f"has its controls keyed in the clip '{clip}' too, where a switch that is not keyed "
                               "would move them", bone=limb, hint="Switch with Insert Keyframes on: the choice is then "
                               "keyed in the active clip only.")
        self.obj = obj
        self.names = list(names)
        self.frames = keyed_frames(obj, names, after)
        if self.frames:
            # Keys written at the scene's frames must play there (not in a tweaked strip's time), into a local action.
            check_keyable(obj)
        self.poses = evaluated_poses(obj, self.frames, self.names) if self.frames else {}

    def key(self) -> None:
        """Key the controls on the frames read, where the parents they follow now carry them."""
        if not self.frames:
            return
        bones = self.obj.data.bones
        parents = sorted({bones[name].parent.name for name in self.names if bones[name].parent is not None})
        carried = evaluated_poses(self.obj, self.frames, parents)
        for name in self.names:
            bone, parent = bones[name], bones[name].parent
            local = Local(bone.matrix_local, parent.matrix_local if parent is not None else None)
            bases: list[Matrix] = [local.basis(pose, carried[parent.name][number] if parent is not None else None)
                                   for number, pose in enumerate(self.poses[name])]
            key_transforms(self.obj, name, self.frames, bases, default_interpolation(), None)
