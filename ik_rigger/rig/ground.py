"""Put a character's feet on a ground mesh, for one frame or baked over a frame range.

Each leg's foot is found under itself on the evaluated ground (its modifiers
included) by rays cast down along the character's up, turned flat on the slope and
moved along up until the lowest point of its sole touches the surface; its limb's IK
handle takes it there (the foot copies the handle's clone). When a leg cannot reach,
the hips (the bone above both legs) go down just enough. The sole is the mesh skinned
to the foot and toes where one exists, else the foot and toe bones themselves.

Everything is read and worked out before anything is written, so a refusal leaves the
armature as it was. Runs in Object or Pose mode; no mode switch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import bpy
from mathutils import Matrix, Vector

from ..core import geometry, naming
from ..core import ground as plan
from ..core.errors import RigError
from ..parts.handle import ROLE_HANDLE
from . import records
from .keys import Recording, default_interpolation, key_transforms, local_basis
from .snap import evaluated_pose

# A vertex belongs to the sole when at least this much of its weight is the foot's and toes'.
_SOLE_WEIGHT = 0.5
# Only this many of a sole's lowest points are tested against the ground: the others
# are far above any surface a foot can stand on.
_SOLE_SAMPLES = 48
# A chain this close to hanging straight down at rest (the cosine of its angle to
# down) is a leg even when its names do not say so.
_HANGING = 0.8
# Rays start this fraction of the leg's length above the ground's highest point.
_RAY_MARGIN = 0.1
# Flattening a foot moves its sole's centre sideways a little; up to this many passes
# find the slope under where the centre ends up (on a faceted terrain, one facet).
_FLATTEN_PASSES = 8
# A foot planted within this fraction of the leg's length of where it stands already stands there.
_STAYS = 1e-5


@dataclass
class Foot:
    """One leg to plant, read from the armature before anything changes."""

    limb: str
    parts: records.Parts
    bone: str | None  # the foot bone laid on the ground; None: the chain's end is the sole
    # The sole: points each in the axes of its bone (the foot or a toe), so a toe that
    # bends over an animation carries its part of the sole along.
    pieces: list[tuple[str, Vector]]
    normal: Vector  # the sole's normal in the foot bone's axes
    length: float  # the chain's length, armature units


@dataclass
class PlantResult:
    """What planting did, for the report."""

    feet: list[str]  # the limbs planted
    hips: str | None  # the bone lowered, None when no leg needed it
    drop: float  # the most the hips went down, world units
    frames: int


# The ground ---------------------------------------------------------------------------


def check_ground(obj: bpy.types.Object, ground: bpy.types.Object | None) -> bpy.types.Object:
    """The ground object, refusing what cannot be stood on."""
    if ground is None:
        raise RigError("no ground picked", hint="Pick the ground object (a mesh) in the sidebar's Ground box.")
    if ground.type != "MESH":
        raise RigError(f"is a {ground.type.lower()}, not a mesh, so feet cannot stand on it", bone=ground.name,
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


# The legs and their soles ----------------------------------------------------------------


def _is_leg(obj: bpy.types.Object, parts: records.Parts, up: Vector) -> bool:
    """A leg by its names, else by a chain hanging along the character's up at rest."""
    names = parts.chain + ([parts.extremity] if parts.extremity else [])
    kind = naming.limb_kind(names)
    if kind is not None:
        return kind == "LEG"
    bones = obj.data.bones
    hang = bones[parts.chain[-1]].tail_local - bones[parts.chain[0]].head_local
    return hang.length > 0.0 and hang.dot(-up) >= _HANGING * hang.length


def _sole_bones(obj: bpy.types.Object, foot: str) -> list[str]:
    """The foot and the user's bones below it (the toes), not the bones IK Rigger made."""
    found = []
    pending = [obj.data.bones[foot]]
    while pending:
        bone = pending.pop()
        if records.marker(bone) is None:
            found.append(bone.name)
            pending.extend(bone.children)
    return found


def _skinned_pieces(obj: bpy.types.Object, bones: list[str], pose: dict[str, Matrix],
                    depsgraph: bpy.types.Depsgraph) -> list[tuple[str, Vector]]:
    """The vertices of the meshes this armature deforms that are mostly the sole bones',
    each in the axes of the sole bone weighing most on it."""
    pieces = []
    wanted = set(bones)
    to_bone = {name: (obj.matrix_world @ pose[name]).inverted() for name in bones}
    for mesh_object in bpy.data.objects:
        if mesh_object.type != "MESH" or not any(
                modifier.type == "ARMATURE" and modifier.object == obj and modifier.show_viewport
                for modifier in mesh_object.modifiers):
            continue
        groups = {group.index: group.name for group in mesh_object.vertex_groups if group.name in wanted}
        if not groups:
            continue
        evaluated = mesh_object.evaluated_get(depsgraph)
        mesh = evaluated.to_mesh()
        try:
            for vertex in mesh.vertices:
                weights = [(item.weight, groups[item.group]) for item in vertex.groups if item.group in groups]
                if sum(weight for weight, _ in weights) >= _SOLE_WEIGHT:
                    bone = max(weights)[1]
                    pieces.append((bone, to_bone[bone] @ evaluated.matrix_world @ vertex.co))
        finally:
            evaluated.to_mesh_clear()
    return pieces


def _chain_end(obj: bpy.types.Object, parts: records.Parts, pose: dict[str, Matrix]) -> Vector:
    last = parts.chain[-1]
    return pose[last] @ Vector((0.0, obj.data.bones[last].length, 0.0))


def _foot_pose(obj: bpy.types.Object, foot: Foot, pose: dict[str, Matrix]) -> Matrix:
    """The armature-space pose of the foot's frame: the foot bone's, or the chain end's."""
    if foot.bone is not None:
        return pose[foot.bone]
    return Matrix.Translation(_chain_end(obj, foot.parts, pose))


def _sole(obj: bpy.types.Object, foot: Foot, pose: dict[str, Matrix]) -> list[Vector]:
    """The sole in the foot's frame (see ``_foot_pose``) as ``pose`` bends the toes."""
    if foot.bone is None:
        return [Vector((0.0, 0.0, 0.0))]
    to_foot = pose[foot.bone].inverted()
    return [to_foot @ pose[bone] @ point for bone, point in foot.pieces]


def read_feet(obj: bpy.types.Object, up: Vector, depsgraph: bpy.types.Depsgraph,
              pose: dict[str, Matrix]) -> list[Foot]:
    """The legs to plant with their soles, from the pose now; refuses when there are none.

    ``up`` is the character's up in world space, ``pose`` the evaluated armature-space pose.
    """
    world = obj.matrix_world
    up_armature = (world.inverted().to_3x3() @ up).normalized()
    feet = []
    for limb in obj.ik_rigger.limbs:
        parts = records.resolve(obj, limb)
        if len(parts.chain) < 2 or not _is_leg(obj, parts, up_armature):
            continue
        parts = records.require(obj, limb, ROLE_HANDLE, ik=True)
        if parts.handle is None:
            raise RigError("has no IK handle to move", bone=limb.name, hint="Rebuild the limb.")
        if records.ik_fk(obj, parts) < 1.0 - 1e-6:
            raise RigError("is not fully in IK, and planting moves its IK handle", bone=limb.name,
                           hint="Switch the leg to IK (its IK/FK switch at 1) first.")
        length = sum(obj.data.bones[name].length for name in parts.chain)
        bone = parts.extremity if parts.extremity and parts.clone else None
        if bone is None:
            feet.append(Foot(limb.name, parts, None, [], up_armature, length))
            continue
        sole = _sole_bones(obj, bone)
        pieces = _skinned_pieces(obj, sole, pose, depsgraph) or [
            (name, Vector((0.0, along, 0.0))) for name in sole for along in (0.0, obj.data.bones[name].length)]
        normal = plan.sole_normal(obj.data.bones[bone].matrix_local, up_armature)
        feet.append(Foot(limb.name, parts, bone, pieces, normal, length))
    if not feet:
        raise RigError(f"'{obj.name}' has no rigged legs to plant", hint="Rig the legs first (Auto-Rig or Build), "
                       "then plant their feet.")
    return feet


def _hips(obj: bpy.types.Object, feet: Sequence[Foot]) -> str | None:
    """The bone above every leg that can move down: their nearest shared parent, or the
    first one above it that is not connected to its own parent."""
    bones = obj.data.bones

    def above(name: str) -> list[str]:
        chain = []
        bone = bones[name].parent
        while bone is not None:
            chain.append(bone.name)
            bone = bone.parent
        return chain

    shared = [name for name in above(feet[0].parts.chain[0])
              if all(name in above(foot.parts.chain[0]) for foot in feet[1:])]
    for name in shared:
        if not bones[name].use_connect:
            return name
    return None


# Planting one foot ------------------------------------------------------------------------


def _sole_world(sole: Sequence[Vector], matrix: Matrix) -> list[Vector]:
    return [matrix @ point for point in sole]


def _centre(points: Sequence[Vector]) -> Vector:
    total = Vector((0.0, 0.0, 0.0))
    for point in points:
        total += point
    return total / len(points)


def _touch(foot: Foot, sole: Sequence[Vector], matrix: Matrix, surface: Surface, normal: Vector,
           lift_only: bool) -> Matrix:
    """``matrix`` moved along up until the sole's lowest point is on the surface (only up when ``lift_only``)."""
    up = surface.up
    points = sorted(_sole_world(sole, matrix), key=lambda point: point.dot(normal))[:_SOLE_SAMPLES]
    heights = []
    for point in points:
        hit = surface.below(point)
        if hit is not None:
            heights.append((point - hit[0]).dot(up))
    if not heights:
        raise RigError("has no ground below its foot", bone=foot.limb,
                       hint="Put the ground under the character, or pick the mesh it stands on.")
    lift = -min(heights)
    if lift_only and lift <= 0.0:
        return matrix
    moved = matrix.copy()
    moved.translation = matrix.translation + up * lift
    return moved


def _spread(points: Sequence[Vector], centre: Vector, up: Vector) -> float:
    """How far the sole reaches from its centre, across the ground (ignoring height)."""
    return max(((point - centre) - up * (point - centre).dot(up)).length for point in points)


def plant(foot: Foot, sole: Sequence[Vector], matrix: Matrix, surface: Surface) -> Matrix:
    """The world matrix that puts the foot now at world ``matrix`` flat on the ground below it.

    ``sole`` is the sole in the foot's frame (``_sole``).
    """
    location, rotation, scale = matrix.decompose()
    turn = rotation
    for _ in range(_FLATTEN_PASSES):
        current = Matrix.LocRotScale(location, turn, scale)
        points = _sole_world(sole, current)
        centre = _centre(points)
        hit = surface.below(centre)
        if hit is None:
            raise RigError("has no ground below its foot", bone=foot.limb,
                           hint="Put the ground under the character, or pick the mesh it stands on.")
        if foot.bone is None:
            break
        forward = current.to_3x3() @ Vector((0.0, 1.0, 0.0))
        normal = surface.slope(centre, forward, _spread(points, centre, surface.up)) or hit[1]
        flat = plan.flat_rotation(rotation, foot.normal, normal)
        settled = abs(flat.dot(turn)) > 1.0 - 1e-12
        turn = flat
        if settled:
            break
    flat_pose = Matrix.LocRotScale(location, turn, scale)
    return _touch(foot, sole, flat_pose, surface, turn @ foot.normal, lift_only=False)


# From feet to handles and hips ------------------------------------------------------------


@dataclass
class _Frame:
    """One frame's evaluated pose and the armature's world matrix."""

    pose: dict[str, Matrix]
    world: Matrix


def _handle_pose(obj: bpy.types.Object, foot: Foot, frame: _Frame, target: Matrix) -> Matrix:
    """The armature-space handle pose that brings the foot frame to the armature-space ``target``."""
    pose = frame.pose
    handle = foot.parts.handle
    assert handle is not None  # read_feet refuses limbs without one
    location, rotation, scale = pose[handle].decompose()
    current = _foot_pose(obj, foot, pose)
    end = target.translation
    if foot.bone is not None:
        # The foot copies its clone's rotation: turning the handle turns the foot by as much.
        rotation = target.to_quaternion() @ current.to_quaternion().inverted() @ rotation
        end = end - (current.translation - _chain_end(obj, foot.parts, pose))
    return Matrix.LocRotScale(end, rotation, scale)


def _drop(obj: bpy.types.Object, feet: Sequence[Foot], frame: _Frame, ends: Sequence[Vector],
          up: Vector) -> float:
    """How far (armature units, along ``up``) the hips go down so every leg reaches its new end."""
    drop = 0.0
    for foot, end in zip(feet, ends):
        root = frame.pose[foot.parts.chain[0]].translation
        now = _chain_end(obj, foot.parts, frame.pose)
        reach = plan.REACH * foot.length
        if (end - now).length <= _STAYS * foot.length:
            # A foot that already stands where it is planted keeps its leg as it is, even straighter
            # than REACH (a metarig's, at rest): lowering the hips to bend it would move the body.
            reach = max(reach, (now - root).length)
        needed = plan.hips_drop(root, end, reach, up)
        if needed is None:
            raise RigError("cannot reach the ground below its foot, however low the hips go", bone=foot.limb,
                           hint="Move the character over the ground, or pick a flatter ground.")
        drop = max(drop, needed)
    return drop


def _below(obj: bpy.types.Object, name: str, top: str) -> bool:
    bone = obj.data.bones[name]
    while bone is not None:
        if bone.name == top:
            return True
        bone = bone.parent
    return False


def _bases(obj: bpy.types.Object, feet: Sequence[Foot], frame: _Frame, handles: Sequence[Matrix],
           hips: str | None, drop: float, up: Vector) -> dict[str, Matrix]:
    """Local (basis) matrices of the hips and handles for their new armature-space poses."""
    bones = obj.data.bones
    shift = Matrix.Translation(-up * drop)
    pose = frame.pose

    def new_pose(name: str) -> Matrix:
        return shift @ pose[name] if hips is not None and drop > 0.0 and _below(obj, name, hips) else pose[name]

    bases = {}
    if hips is not None:
        parent = bones[hips].parent
        bases[hips] = local_basis(new_pose(hips), bones[hips].matrix_local, pose[parent.name] if parent else None,
                             parent.matrix_local if parent else None)
    for foot, handle_pose in zip(feet, handles):
        handle = foot.parts.handle
        assert handle is not None
        parent = bones[handle].parent
        bases[handle] = local_basis(handle_pose, bones[handle].matrix_local, new_pose(parent.name) if parent else None,
                               parent.matrix_local if parent else None)
    return bases


def _solve(obj: bpy.types.Object, feet: Sequence[Foot], frame: _Frame, targets: Sequence[Matrix],
           hips: str | None, up: Vector) -> tuple[dict[str, Matrix], float]:
    """The bases for one frame from the feet's world targets, and the hips' drop (armature units)."""
    to_armature = frame.world.inverted()
    up_armature = (to_armature.to_3x3() @ up).normalized()
    handles = [_handle_pose(obj, foot, frame, to_armature @ target) for foot, target in zip(feet, targets)]
    drop = _drop(obj, feet, frame, [handle.translation for handle in handles], up_armature)
    if drop > 0.0 and hips is None:
        raise RigError("cannot reach the ground, and its legs share no parent bone to lower",
                       bone=feet[0].limb, hint="Parent the legs to a hips bone, or move the character down.")
    return _bases(obj, feet, frame, handles, hips, drop, up_armature), drop


# Entry point ------------------------------------------------------------------------------


def plant_feet(obj: bpy.types.Object, ground: bpy.types.Object | None,
               frames: Iterable[int] | None = None) -> PlantResult:
    """Put the feet of ``obj``'s rigged legs on ``ground``; lower the hips where a leg cannot reach.

    ``frames`` None poses the current frame; otherwise every frame in ``frames`` is
    baked into keys of the handles (and of the hips when they go down), each foot held
    still where it is down and carried over the ground between.
    """
    surface_object = check_ground(obj, ground)
    pose = evaluated_pose(obj)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    world = obj.evaluated_get(depsgraph).matrix_world.copy()
    up = ground_up(surface_object, depsgraph, world.translation)
    feet = read_feet(obj, up, depsgraph, pose)
    hips = _hips(obj, feet)
    surface = Surface(surface_object, depsgraph, up, _RAY_MARGIN * max(foot.length for foot in feet) * _scale(world))
    if frames is None:
        frame = _Frame(pose, world)
        targets = [plant(foot, _sole(obj, foot, pose), world @ _foot_pose(obj, foot, pose), surface)
                   for foot in feet]
        bases, drop = _solve(obj, feet, frame, targets, hips, up)
        for name, basis in bases.items():
            if name != hips or drop > 0.0:
                obj.pose.bones[name].matrix_basis = basis
        obj.update_tag()
        return PlantResult([foot.limb for foot in feet], hips if drop > 0.0 else None,
                           _world_length(world, up, drop), 1)
    return _bake(obj, feet, sorted(set(frames)), surface, hips, up)


def _scale(world: Matrix) -> float:
    """The armature object's scale as one number (its mean axis scale)."""
    scale = world.to_scale()
    return (scale.x + scale.y + scale.z) / 3.0


def _world_length(world: Matrix, up: Vector, drop: float) -> float:
    up_armature = (world.inverted().to_3x3() @ up).normalized()
    return (world.to_3x3() @ (up_armature * drop)).length


def _bake(obj: bpy.types.Object, feet: Sequence[Foot], frames: list[int], surface: Surface, hips: str | None,
          up: Vector) -> PlantResult:
    if not frames:
        raise RigError("no frames to plant", hint="Set a frame range with the start before the end.")
    names: set[str] = set()
    for foot in feet:
        names.update(foot.parts.chain)
        handle = foot.parts.handle
        assert handle is not None
        names.add(handle)
        names.update(bone for bone, _ in foot.pieces)
        parent = obj.data.bones[handle].parent
        if parent is not None:
            names.add(parent.name)
    if hips is not None:
        names.add(hips)
        parent = obj.data.bones[hips].parent
        if parent is not None:
            names.add(parent.name)
    worlds: list[Matrix] = []

    def keep_world(_number: int) -> None:
        # Called on each frame while the scene is there: the armature object may move too.
        worlds.append(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world.copy())

    recording = Recording(obj, frames, names, keep_world)
    timeline = [_Frame({name: recording.poses[name][number] for name in recording.names}, worlds[number])
                for number in range(len(frames))]
    targets_per_foot = [_foot_targets(obj, foot, timeline, surface) for foot in feet]
    per_bone: dict[str, list[Matrix]] = {}
    drops = []
    for number, frame in enumerate(timeline):
        bases, drop = _solve(obj, feet, frame, [targets[number] for targets in targets_per_foot], hips, up)
        drops.append(drop)
        for name, basis in bases.items():
            per_bone.setdefault(name, []).append(basis)
    interpolation = default_interpolation()
    lowered = any(drop > 0.0 for drop in drops)
    for foot in feet:
        handle = foot.parts.handle
        assert handle is not None
        key_transforms(obj, handle, frames, per_bone[handle], interpolation, None)
    if lowered and hips is not None:
        # Every frame keyed, the ones the hips stay on too: their motion there is kept as it played.
        key_transforms(obj, hips, frames, per_bone[hips], interpolation, None)
    obj.update_tag()
    most = max((_world_length(frame.world, up, drop) for frame, drop in zip(timeline, drops)), default=0.0)
    return PlantResult([foot.limb for foot in feet], hips if lowered else None, most, len(frames))


def _foot_targets(obj: bpy.types.Object, foot: Foot, timeline: Sequence[_Frame], surface: Surface) -> list[Matrix]:
    """The foot's world target on each frame: planted and held still while it is down,
    carried over the ground (never through it) while it is up."""
    shown = [frame.world @ _foot_pose(obj, foot, frame.pose) for frame in timeline]
    up = surface.up
    length = foot.length * _scale(timeline[0].world)
    known: dict[int, plan.Correction] = {}
    for first, last in plan.contact_runs([matrix.translation for matrix in shown], up, length):
        anchor = (first + last) // 2
        planted = plant(foot, _sole(obj, foot, timeline[anchor].pose), shown[anchor], surface)
        for number in range(first, last + 1):
            turn = planted.to_quaternion() @ shown[number].to_quaternion().inverted()
            known[number] = (turn, planted.translation - shown[number].translation)
    corrections = plan.blended_corrections(len(timeline), known)
    targets = []
    for number, matrix in enumerate(shown):
        turn, shift = corrections[number]
        location, rotation, scale = matrix.decompose()
        moved = Matrix.LocRotScale(location + shift, turn @ rotation, scale)
        if number not in known:
            moved = _touch(foot, _sole(obj, foot, timeline[number].pose), moved, surface, up, lift_only=True)
        targets.append(moved)
    return targets
