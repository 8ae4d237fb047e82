"""Chain bones' own IK settings (locks, limits and stiffness), which Hinge Joints and split segments
set and Remove gives back."""

from __future__ import annotations

import json
import math

import bpy

from ..core.joints import IN_LINE, IN_LINE_STIFFNESS, Hinge

IK_KEYS = tuple(f"{prefix}_{axis}" for prefix in ("lock_ik", "use_ik_limit", "ik_min", "ik_max", "ik_stiffness")
                for axis in "xyz")

# Blender's own for a new bone: no lock, no limit, no stiffness.
DEFAULTS: dict[str, object] = {
    **{f"lock_ik_{axis}": False for axis in "xyz"}, **{f"use_ik_limit_{axis}": False for axis in "xyz"},
    **{f"ik_min_{axis}": -math.pi for axis in "xyz"}, **{f"ik_max_{axis}": math.pi for axis in "xyz"},
    **{f"ik_stiffness_{axis}": 0.0 for axis in "xyz"}}


def ik_settings(pose_bone: bpy.types.PoseBone) -> dict[str, object]:
    """The pose bone's IK locks, limits and stiffness."""
    return {key: getattr(pose_bone, key) for key in IK_KEYS}


def set_ik_settings(pose_bone: bpy.types.PoseBone, settings: dict[str, object]) -> None:
    for key, value in settings.items():
        if getattr(pose_bone, key) != value:
            setattr(pose_bone, key, value)


def hinged(settings: dict[str, object], hinge: Hinge) -> dict[str, object]:
    """``settings`` with the hinge's: other axes locked, the hinge axis free within its range; or, for a
    bone kept in line, its bending axes stiff and unlocked."""
    changed = dict(settings)
    if hinge.axis == IN_LINE:
        for axis in "xz":
            changed[f"lock_ik_{axis}"] = False
            changed[f"ik_stiffness_{axis}"] = IN_LINE_STIFFNESS
        return changed
    for axis in "xyz":
        changed[f"lock_ik_{axis}"] = axis in hinge.locked
    changed[f"use_ik_limit_{hinge.axis}"] = True
    changed[f"ik_min_{hinge.axis}"] = hinge.minimum
    changed[f"ik_max_{hinge.axis}"] = hinge.maximum
    return changed


def dumps(settings: dict[str, object]) -> str:
    return json.dumps(settings, sort_keys=True)


def loads(text: str) -> dict[str, object]:
    return {key: value for key, value in json.loads(text).items() if key in IK_KEYS} if text else {}
