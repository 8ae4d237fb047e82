"""Where the chain's own IK settings keep a bake's IK from playing the FK motion.

A chain bone's IK limits and locks (``use_ik_limit_x`` with ``ik_min_x``/``ik_max_x``, ``lock_ik_x``...)
and stiffness are Blender's IK's, set by the user or by Hinge Joints: IK cannot bend a bone past them,
while the FK motion a bake reads may. Blender applies them to the solved chain before the pole turns
it, so what they hold back cannot be told from the FK poses alone: on a limb with any such setting
the baked IK is played over the frames and compared with the FK motion, and where it stands off, a
warning names the bone, its IK settings and the worst angle and frame. On a hidden chain the settings
are on its solving bones (Hinge Joints'). A distance limit holds the IK
target within, on or outside its sphere, which the FK motion may leave: a limb with one is played and
compared too. A limb without either is not played (the bake reads keys, see docs/speed.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import bpy
from mathutils import Matrix

from ..core.geometry import turn_degrees
from ..core.notes import warning
from ..parts.distance import ROLE_DISTANCE_CENTER
from . import records
from .animation import existing_fcurve
from .keys import evaluated_poses

# The most a baked chain bone may stand off the FK motion before the bake warns: well above what
# Blender's single-precision IK leaves (0.026 degree, docs/animating.md), well below what shows.
OFF_DEGREES = 0.1
AXES = "xyz"


def limited(obj: bpy.types.Object, parts: records.Parts) -> list[str]:
    """The bones IK solves with limits, locks or stiffness: the chain's own, or on a hidden chain its
    solving bones (IK Rigger's, as Hinge Joints set them)."""
    pose_bones = obj.pose.bones
    return [name for name in (parts.solver or parts.chain) if _settings(pose_bones[name])]


def _settings(pose_bone: bpy.types.PoseBone) -> list[str]:
    """A bone's IK settings, in the words of Blender's Bone > Inverse Kinematics panel."""
    said = []
    for axis in AXES:
        if getattr(pose_bone, f"lock_ik_{axis}"):
            said.append(f"Lock IK {axis.upper()}")
        elif getattr(pose_bone, f"use_ik_limit_{axis}"):
            low, high = (math.degrees(getattr(pose_bone, f"ik_{end}_{axis}")) for end in ("min", "max"))
            said.append(f"IK Limit {axis.upper()} {low:.0f} to {high:.0f} degrees")
        if getattr(pose_bone, f"ik_stiffness_{axis}") > 0.0:
            said.append(f"IK Stiffness {axis.upper()} {getattr(pose_bone, f'ik_stiffness_{axis}'):.2f}")
    return said


def check(obj: bpy.types.Object, parts: records.Parts, frames: Sequence[int],
          fk: dict[str, list[Matrix]]) -> list[str]:
    """Warnings for the chain bones the baked IK shows more than ``OFF_DEGREES`` off ``fk`` (the FK motion's
    armature-space poses per frame), played in IK; none when no chain bone has IK settings of its own and
    the limb has no distance limit (which holds the IK target within, on or outside its sphere)."""
    bones = limited(obj, parts)
    distance = ROLE_DISTANCE_CENTER in parts.made
    if not (bones or distance) or parts.handle is None:
        return []
    names = [name for name in parts.chain if name in fk]
    with in_ik(obj, parts):
        shown = evaluated_poses(obj, frames, names)
    worst: tuple[float, str, int] = (0.0, "", 0)
    for name in names:
        for number, frame in enumerate(frames):
            off = turn_degrees(shown[name][number], fk[name][number])
            if off > worst[0]:
                worst = (off, name, frame)
    if worst[0] <= OFF_DEGREES:
        return []
    off, name, frame = worst
    if not bones:
        return [warning(f"'{parts.chain[-1]}': its distance limit keeps the baked IK from playing the FK motion: "
                        f"'{name}' stands up to {off:.1f} degrees off it (frame {frame}). Widen its radius or turn "
                        "the limit off and build again, or keep this limb in FK")]
    if parts.solver:
        solving = dict(zip(parts.solver, parts.chain))
        blamed = next((joint for joint in bones if solving[joint] == name), bones[0])
        settings = ", ".join(_settings(obj.pose.bones[blamed]))
        return [warning(f"'{solving[blamed]}': the IK settings of its hidden chain ({settings}, as Hinge Joints "
                        f"set them) keep the baked IK from playing the FK motion: '{name}' stands up to {off:.1f} "
                        f"degrees off it (frame {frame}). Turn Hinge Joints off and build again, or keep this limb "
                        "in FK")]
    blamed = name if name in bones else bones[0]
    return [warning(f"'{blamed}': its own IK settings ({', '.join(_settings(obj.pose.bones[blamed]))}) keep the "
                    f"baked IK from playing the FK motion: '{name}' stands up to {off:.1f} degrees off it "
                    f"(frame {frame}). Widen or turn off those settings and bake again, or keep this limb in FK")]


@contextmanager
def in_ik(obj: bpy.types.Object, parts: records.Parts) -> Iterator[None]:
    """The limb shown in IK while its baked keys play: ``ik_fk`` at 1, its F-curve muted; given back after."""
    curve = existing_fcurve(obj, records.ik_fk_path(parts.handle or ""))
    blend, muted = records.ik_fk(obj, parts), curve.mute if curve is not None else False
    if curve is not None:
        curve.mute = True
    records.set_ik_fk(obj, parts, 1.0)
    try:
        yield
    finally:
        if curve is not None:
            curve.mute = muted
        records.set_ik_fk(obj, parts, blend)
