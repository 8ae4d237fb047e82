"""Plan new chain bones from scratch (the guide's "Chain Bones"), as plain data."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mathutils import Vector

from . import geometry, naming
from .errors import RigError
from .model import PALETTE_CHAIN, PALETTE_ORIGIN

# A bone shorter than this, or than this share of its chain, is lost in Blender's single-precision
# coordinates (bowing the chain would divide by a length of 0); a chain longer than MAX_LENGTH overflows
# them (its length squared is past their range).
MIN_LENGTH = 1e-4
MIN_SHARE = 1e-4
MAX_LENGTH = 1e6


@dataclass(frozen=True)
class ChainSpec:
    """What the user asked for: how many bones, how long, which way, which extras."""

    base_name: str = "leg"
    side: str = ""  # "", "L" or "R": written as a ".L"/".R" suffix
    bone_count: int = 2
    bone_length: float = 0.5
    length_ratio: float = 1.0  # each bone is this times the one before it
    start: Vector = Vector((0.0, 0.0, 1.0))
    direction: str = "Z_NEG"
    bend_direction: str = "Y_NEG"
    bend_degrees: float = 5.0
    extremity: bool = True
    parents: bool = True


@dataclass(frozen=True)
class ChainBone:
    """One bone of a new chain, in armature space."""

    name: str
    head: Vector
    tail: Vector
    parent: str | None
    connected: bool
    deform: bool
    palette: str
    z_axis: Vector


def _lengths(spec: ChainSpec) -> list[float]:
    """Each chain bone's length, refused when Blender could not hold the chain."""
    start = (spec.start.x, spec.start.y, spec.start.z)
    if not all(math.isfinite(value) for value in (spec.bone_length, spec.length_ratio, *start)):
        raise RigError(f"the length {spec.bone_length:g}, length ratio {spec.length_ratio:g} and start {start} "
                       "must all be finite numbers", hint="Give each a finite number.")
    try:
        lengths = [spec.bone_length * spec.length_ratio ** index for index in range(spec.bone_count)]
    except OverflowError:
        lengths = [math.inf]
    total = sum(lengths)
    if not total <= MAX_LENGTH:
        raise RigError(f"{spec.bone_count} bones from {spec.bone_length:g} long at a length ratio of "
                       f"{spec.length_ratio:g} would make a chain {total:.3g} long, past the {MAX_LENGTH:g} "
                       "Blender can hold", hint="Use a shorter length, fewer bones or a length ratio nearer 1.")
    shortest = min(lengths)
    if shortest < MIN_LENGTH or shortest < MIN_SHARE * total:
        raise RigError(f"at a length ratio of {spec.length_ratio:g}, bone {lengths.index(shortest) + 1} of "
                       f"{spec.bone_count} would be {shortest:.3g} long, too short beside a chain {total:.3g} long "
                       f"(at least {max(MIN_LENGTH, MIN_SHARE * total):.3g})",
                       hint="Use fewer bones, a longer length or a length ratio nearer 1.")
    return lengths


def plan_chain(spec: ChainSpec, taken: set[str]) -> list[ChainBone]:
    """Bones for ``spec``: origin, hip, chain (pre-bent), extremity; parents first.

    An existing bone named "origin" is reused as the origin rather than doubled.
    """
    if spec.bone_count < 2:
        raise RigError(f"a chain needs at least 2 bones, {spec.bone_count} was asked", hint="Ask for 2 or more bones.")
    if spec.bone_length <= 0 or spec.length_ratio <= 0:
        raise RigError("bone lengths must be positive", hint="Set a positive length and length ratio.")
    lengths = _lengths(spec)
    if not spec.base_name.strip():
        raise RigError("the chain needs a name", hint="Type a name such as 'leg' or 'tail'.")
    axis = geometry.AXES[spec.direction]
    bend = geometry.perpendicular(geometry.AXES[spec.bend_direction], axis)
    if bend.length < 1e-6:
        raise RigError(f"the bend direction {spec.bend_direction} lies along the chain direction {spec.direction}",
                       hint="Pick a bend direction at right angles to the chain.")
    suffix = f".{spec.side}" if spec.side else ""
    names = set(taken)

    def unique(tag: str) -> str:
        name = naming.unique_name(spec.base_name, f"_{tag}", suffix, names)
        names.add(name)
        return name

    joints = [spec.start.copy()]
    for length in lengths:
        joints.append(joints[-1] + axis * length)
    joints = geometry.prebent_joints(joints, bend, spec.bend_degrees)
    up = bend.normalized()
    bones: list[ChainBone] = []
    parent = None
    if spec.parents:
        if "origin" in taken:
            parent = "origin"
        else:
            parent = "origin"
            names.add(parent)
            # On the floor under the chain, or as low as a chain that reaches below the floor: the
            # guide's Origin stands at the ground, where IK Rigger looks for it (parts.parents).
            ground = Vector((spec.start.x, spec.start.y, min(0.0, *(joint.z for joint in joints))))
            if (ground - spec.start).length < 1e-6:  # a chain rising from the floor
                ground = spec.start - axis
            bones.append(ChainBone(parent, ground, ground + up * 0.5 * lengths[0], None, False, False,
                                   PALETTE_ORIGIN, axis * -1.0))
        hip = unique(naming.TAG_HIP)
        bones.append(ChainBone(hip, spec.start - axis * 0.25 * lengths[0], spec.start.copy(), parent, False, False,
                               PALETTE_ORIGIN, up))
        parent = hip
    for index in range(spec.bone_count):
        name = unique(f"{index + 1:02d}")
        bones.append(ChainBone(name, joints[index], joints[index + 1], parent, index > 0, True, PALETTE_CHAIN, up))
        parent = name
    if spec.extremity:
        name = unique("end")
        tip = joints[-1] + up * 0.4 * lengths[-1]
        bones.append(ChainBone(name, joints[-1], tip, parent, True, True, PALETTE_CHAIN, axis * -1.0))
    return bones
