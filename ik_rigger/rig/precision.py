"""Where Blender's IK runs out of precision: a chain far from the world's origin for its size.

Blender's IK solves from world-space matrices in single precision (a step of 2**-24 of a value): the
target's place comes back rounded by its distance from the world's origin times that step, so the chain's
end misses the handle by a share of the chain that grows with that distance over the chain's world length.
Measured on Blender 4.2 and 5.2, Standard and iTaSC, at object scales from 0.001 to 10 and with the
character placed by its object or by its bones: the miss is 0.3 to 2.3 times that distance in chain lengths
times the step, whatever the scale; an object scale applied (the same size in the world) misses the same.
"""

from __future__ import annotations

import bpy
from mathutils import Matrix

from ..core.model import Skeleton
from ..core.notes import WarningNote, warning

_STEP = 2.0 ** -24
# The worst measured miss over the distance in chain lengths times the step.
_WORST = 2.3
# The miss, as a share of the chain, a rig is warned of: about where Blender's IK stops short anyway at
# the origin (1e-4) times ten.
WARNED_MISS = 1e-3


def worlds(obj: bpy.types.Object) -> tuple[Matrix, ...]:
    """Where ``obj`` stands: its world matrix, current only after a depsgraph update (a location just
    typed in shows in the next one), and its own and its parents' transforms, current always; the one
    matrix where the two agree, as they do but after such a change. Read once for all the limbs a build
    plans."""
    world, transforms = obj.matrix_world.copy(), _by_transforms(obj)
    # Compared float by float: Matrix's own == allows a difference in the last place.
    if all(world[row][:] == transforms[row][:] for row in range(4)):
        return (world,)
    return world, transforms


def placed(obj: bpy.types.Object, skeleton: Skeleton, chain: tuple[str, ...],
           seen: tuple[Matrix, ...] | None = None) -> tuple[float, float]:
    """How far ``chain`` reaches from the world's origin where ``obj`` stands now, and its length in the world,
    where that is the farther in chain lengths of the places ``worlds`` reads (``seen``, when read)."""
    bones = skeleton.bones
    ends = [(bone.head, bone.tail) for bone in map(bones.__getitem__, chain)]
    found = []
    for world in seen or worlds(obj):
        reach: list[float] = []
        length = 0.0
        for head, tail in ends:  # a loop, not generators: every limb of a build asks
            head, tail = world @ head, world @ tail
            reach += (head.length, tail.length)
            length += (tail - head).length
        found.append((max(reach), length))
    return found[0] if len(found) == 1 else max(found, key=lambda item: expected_miss(*item))


def _by_transforms(obj: bpy.types.Object) -> Matrix:
    """``obj``'s world matrix from its own and its parents' transforms (their constraints aside)."""
    own = obj.matrix_parent_inverse @ obj.matrix_basis if obj.parent is not None else obj.matrix_basis
    return _by_transforms(obj.parent) @ own if obj.parent is not None else own


def expected_miss(far: float, length: float) -> float:
    """The share of a chain's ``length`` by which Blender's IK may miss its handle ``far`` from the origin."""
    return _WORST * _STEP * far / length if length > 0.0 else 0.0


def far_warning(obj: bpy.types.Object, skeleton: Skeleton, chain: tuple[str, ...],
                seen: tuple[Matrix, ...] | None = None) -> WarningNote | None:
    """A warning where ``chain`` stands so far from the world's origin, for its length in the world, that
    Blender's IK will miss its handle by more than ``WARNED_MISS`` of the chain; none on an ordinary
    character (a leg of 0.9 m is warned of beyond about 6.5 km from the origin)."""
    far, length = placed(obj, skeleton, chain, seen)
    miss = expected_miss(far, length)
    if miss <= WARNED_MISS:
        return None
    return warning(
        f"the armature '{obj.name}' has its chain '{chain[0]}' > '{chain[-1]}' {far:.4g} units from the world's "
        f"origin, {far / length:,.0f} times the chain's length there: Blender's IK, in single precision, may miss "
        f"the handle by up to {min(miss, 1.0):.2%} of the chain; move the character nearer the world's origin "
        "(applying the object's scale changes nothing: what counts is the distance in chain lengths)")
