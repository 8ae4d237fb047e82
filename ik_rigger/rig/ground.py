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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import bpy
from mathutils import Matrix, Vector

from ..core import ground as plan
from ..core.errors import RigError
from ..parts.handle import ROLE_HANDLE
from . import held
from .ground_feet import Foot, Frame, foot_pose, foot_sole, hips_bone, read_feet
from .ground_plant import foot_targets, plant
from .ground_solve import solve
from .ground_surface import Surface, check_ground, ground_up
from .journal import Journal
from .keys import Recording, default_interpolation, key_transforms
from .snap import evaluated_pose, key_pose

# Rays start this fraction of the leg's length above the ground's highest point.
_RAY_MARGIN = 0.1


@dataclass
class PlantResult:
    """What planting did, for the report."""

    feet: list[str]  # the limbs planted
    hips: str | None  # the bone lowered, None when no leg needed it
    drop: float  # the most the hips went down, world units
    frames: int
    notes: list[str] = field(default_factory=list)  # what each sole was read from, where bone tails were left out


def plant_feet(obj: bpy.types.Object, ground: bpy.types.Object | None,
               frames: Iterable[int] | None = None, key: bool = False) -> PlantResult:
    """Put the feet of ``obj``'s rigged legs on ``ground``; lower the hips where a leg cannot reach.

    ``frames`` None poses the current frame (``key``: and keys what it moved there, as a snap does, so
    the next frame change does not play the old keys back); otherwise every frame in ``frames`` is
    baked into keys of the handles (and of the hips when they go down), each foot held
    still where it is down and carried over the ground between.
    """
    surface_object = check_ground(obj, ground)
    pose = evaluated_pose(obj)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    world = obj.evaluated_get(depsgraph).matrix_world.copy()
    up = ground_up(surface_object, depsgraph, world.translation)
    frames = None if frames is None else sorted(set(frames))
    feet = read_feet(obj, up, depsgraph, pose, frames)
    hips = hips_bone(obj, feet)
    margin = _RAY_MARGIN * max(foot.length for foot in feet) * plan.mean_scale(world)
    surface = Surface(surface_object, depsgraph, up, margin)
    if frames is None:
        frame = Frame(pose, world)
        targets = [plant(foot, foot_sole(obj, foot, pose), foot_pose(obj, foot, pose), world, surface)
                   for foot in feet]
        bases, drop = solve(obj, feet, frame, targets, hips, up)
        pose_back = _pose_now(obj, bases)
        for name, basis in bases.items():
            if name != hips or drop > 0.0:
                obj.pose.bones[name].matrix_basis = basis
        obj.update_tag()
        try:
            held.check(obj, [foot.parts for foot in feet], None, "Plant Feet", "the pose planted",
                       roles=(ROLE_HANDLE,),
                       also=[hips] if hips and drop > 0.0 else [])
        except RigError:
            pose_back()
            raise
        if key:
            key_pose(obj, [name for name in bases if name != hips or drop > 0.0], bpy.context.scene.frame_current)
        return PlantResult([foot.limb for foot in feet], hips if drop > 0.0 else None,
                           plan.world_length(world, up, drop), 1, _notes(feet))
    return _bake(obj, feet, frames, surface, hips, up)


def _bake(obj: bpy.types.Object, feet: Sequence[Foot], frames: list[int], surface: Surface, hips: str | None,
          up: Vector) -> PlantResult:
    if not frames:
        raise RigError("no frames to plant", hint="Set a frame range with the start before the end.")
    worlds: list[Matrix] = []

    def keep_world(_number: int) -> None:
        # Called on each frame while the scene is there: the armature object may move too.
        worlds.append(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world.copy())

    recording = Recording(obj, frames, _recorded_bones(obj, feet, hips), keep_world)
    timeline = [Frame({name: recording.poses[name][number] for name in recording.names}, worlds[number])
                for number in range(len(frames))]
    targets_per_foot = [foot_targets(obj, foot, timeline, surface) for foot in feet]
    per_bone: dict[str, list[Matrix]] = {}
    drops = []
    for number, frame in enumerate(timeline):
        bases, drop = solve(obj, feet, frame, [targets[number] for targets in targets_per_foot], hips, up)
        drops.append(drop)
        for name, basis in bases.items():
            per_bone.setdefault(name, []).append(basis)
    interpolation = default_interpolation()
    lowered = any(drop > 0.0 for drop in drops)
    journal = Journal(obj)  # a constraint of the user's holding a handle off gives back every key written
    # The keys given back, their bones take the pose they had, not the keys' last.
    journal.data(_pose_now(obj, per_bone))
    try:
        for foot in feet:
            handle = foot.parts.handle
            assert handle is not None
            key_transforms(obj, handle, frames, per_bone[handle], interpolation, journal)
        if lowered and hips is not None:
            # Every frame keyed, the ones the hips stay on too: their motion there is kept as it played.
            key_transforms(obj, hips, frames, per_bone[hips], interpolation, journal)
        obj.update_tag()
        held.check(obj, [foot.parts for foot in feet], frames, "Plant Feet", "the pose planted",
                       roles=(ROLE_HANDLE,), also=[hips] if hips and lowered else [])
    except BaseException:
        journal.rollback()
        raise
    most = max((plan.world_length(frame.world, up, drop) for frame, drop in zip(timeline, drops)), default=0.0)
    return PlantResult([foot.limb for foot in feet], hips if lowered else None, most, len(frames), _notes(feet))


def _notes(feet: Sequence[Foot]) -> list[str]:
    return [foot.note for foot in feet if foot.note]


def _pose_now(obj: bpy.types.Object, names: Iterable[str]) -> Callable[[], None]:
    """What gives ``names`` back the poses (their own transforms) they have now."""
    was = {name: obj.pose.bones[name].matrix_basis.copy() for name in names}

    def pose_back() -> None:
        for name, basis in was.items():
            obj.pose.bones[name].matrix_basis = basis
        obj.update_tag()

    return pose_back


def _recorded_bones(obj: bpy.types.Object, feet: Sequence[Foot], hips: str | None) -> set[str]:
    """The bones whose poses planting reads on every frame: the legs, their soles, handles and
    hips, and the parents the handles and hips move in."""
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
    return names
