"""The ground feet are planted on: the mesh picked, checked, and the rays cast down onto it.

Reads the evaluated ground (its modifiers included); writes nothing (see ``rig.ground``).
"""

from __future__ import annotations

import bpy
from mathutils import Vector

from ..core import geometry
from ..core import ground as plan
from ..core.errors import RigError, a_kind


def check_ground(obj: bpy.types.Object, ground: bpy.types.Object | None) -> bpy.types.Object:
    """The ground object, refusing what cannot be stood on."""
    if ground is None:
        raise RigError("no ground picked", hint="Pick the ground mesh in the sidebar's IK Rigger tab, Ground panel.")
    if ground.type != "MESH":
        raise RigError(f"is {a_kind(ground.type)}, not a mesh, so feet cannot stand on it", bone=ground.name,
                       hint="Pick a mesh object as the ground.")
    if any(modifier.type == "ARMATURE" and modifier.object == obj for modifier in ground.modifiers):
        raise RigError(f"is deformed by '{obj.name}' itself, so it cannot be its ground", bone=ground.name,
                       hint="Pick the floor or terrain mesh, not the character's body.")
    return ground


class Surface:
    """Rays cast straight down along up onto the evaluated ground (modifiers included)."""

    def __init__(self, ground: bpy.types.Object, depsgraph: bpy.types.Depsgraph, up: Vector,
                 margin: float) -> None:
        self.ground = ground
        self.depsgraph = depsgraph
        self.up = up.normalized()
        evaluated = ground.evaluated_get(depsgraph)
        self.matrix = evaluated.matrix_world.copy()
        self.inverse = self.matrix.inverted()
        self.normal_matrix = self.inverse.transposed().to_3x3()
        corners = [self.matrix @ Vector(corner) for corner in evaluated.bound_box]
        self.top = max(corner.dot(self.up) for corner in corners) + margin

    def below(self, point: Vector) -> tuple[Vector, Vector] | None:
        """Where the ground is straight below (or above) ``point`` and its normal there, world space."""
        origin = point + self.up * (self.top - point.dot(self.up))
        local_origin = self.inverse @ origin
        local_direction = self.inverse.to_3x3() @ -self.up
        hit, location, normal, _ = self.ground.ray_cast(local_origin, local_direction, depsgraph=self.depsgraph)
        if not hit:
            return None
        world_normal = (self.normal_matrix @ normal).normalized()
        if world_normal.dot(self.up) < 0.0:
            world_normal.negate()  # a ground whose faces point down is stood on from above all the same
        return self.matrix @ location, world_normal

    def slope(self, centre: Vector, forward: Vector, radius: float) -> Vector | None:
        """The ground's normal across a foot: the plane through the ground below the points
        ``radius`` ahead, behind and to each side of ``centre`` (``forward`` is the foot's way).

        Unlike one face's normal, it changes smoothly as the foot moves over a faceted terrain,
        so turning the foot flat settles instead of hopping between two faces.
        """
        ahead = forward - self.up * forward.dot(self.up)
        if ahead.length < 1e-9 or radius <= 0.0:
            return None
        ahead.normalize()
        side = geometry.cross(self.up, ahead)
        hits = [self.below(centre + direction * radius) for direction in (ahead, -ahead, side, -side)]
        if any(hit is None for hit in hits):
            return None
        front, back, left, right = (hit[0] for hit in hits if hit is not None)
        normal = geometry.cross(front - back, left - right)
        if normal.length < 1e-12:
            return None
        normal.normalize()
        return normal if normal.dot(self.up) > 0.0 else -normal


def ground_up(ground: bpy.types.Object, depsgraph: bpy.types.Depsgraph, character: Vector) -> Vector:
    """The character's up, world space: +Z unless the ground mostly faces along X or Y."""
    evaluated = ground.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        count = len(mesh.polygons)
        normals = [0.0] * (3 * count)
        areas = [0.0] * count
        mesh.polygons.foreach_get("normal", normals)
        mesh.polygons.foreach_get("area", areas)
    finally:
        evaluated.to_mesh_clear()
    total = Vector((0.0, 0.0, 0.0))
    for index in range(count):
        total += Vector(normals[3 * index:3 * index + 3]) * areas[index]
    matrix = evaluated.matrix_world
    mean = matrix.inverted().transposed().to_3x3() @ total
    return plan.up_axis(mean, character - matrix.translation)
