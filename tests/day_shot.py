"""A shot an animator works on operation after operation, and what each step must leave as it was.

``Shot`` remembers what the armature plays (every bone's evaluated pose on each frame checked) and its keys
(every F-curve's keyframes); ``step`` checks, after an operation, that the frames it was not asked to touch
play exactly as before, that the keys it did not own are untouched and that the limbs' switches are as
they were, and returns what changed for the test to judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import bpy
from helpers import all_fcurves, evaluate, rotation_degrees
from mathutils import Matrix

from ik_rigger import api

Played = dict[int, dict[str, Matrix]]
Keys = dict[tuple[str, int], tuple[tuple[float, ...], ...]]

# The same pose, played again: double precision of Blender's single-precision evaluation.
SAME_MOVE = 1e-5  # of the character's size
SAME_TURN = 0.01  # degrees


def played(obj: bpy.types.Object, frames: Iterable[int], bones: Iterable[str] | None = None) -> Played:
    """Each bone's evaluated armature-space pose on each of ``frames`` (the scene's current frame put back)."""
    scene = bpy.context.scene
    current = scene.frame_current
    wanted = None if bones is None else set(bones)
    shown: Played = {}
    for frame in frames:
        scene.frame_set(frame)
        shown[frame] = {name: matrix for name, matrix in evaluate(obj).items() if wanted is None or name in wanted}
    scene.frame_set(current)
    return shown


def keys(obj: bpy.types.Object) -> Keys:
    """Every keyframe of the armature's action: (data path, index) -> ((frame, value, interpolation...), ...)."""
    found: Keys = {}
    for curve in all_fcurves(obj):
        found[(curve.data_path, curve.array_index)] = tuple(
            (point.co.x, point.co.y, point.handle_left.x, point.handle_left.y, point.handle_right.x,
             point.handle_right.y, hash(point.interpolation)) for point in curve.keyframe_points)
    return found


def gaps(before: Played, after: Played, size: float) -> dict[int, dict[str, tuple[float, float]]]:
    """Per frame, the bones whose pose moved (relative to ``size``) or turned (degrees) beyond the same pose's."""
    found: dict[int, dict[str, tuple[float, float]]] = {}
    for frame, poses in before.items():
        for name, matrix in poses.items():
            if name not in after[frame]:
                continue  # a bone removed (a limb's made bone): what moved the mesh is compared
            other = after[frame][name]
            moved = (matrix.translation - other.translation).length / size
            turned = rotation_degrees(matrix, other)
            if moved > SAME_MOVE or turned > SAME_TURN:
                found.setdefault(frame, {})[name] = (moved, turned)
    return found


def bone_path(path: str) -> str | None:
    """The bone a pose bone's data path animates, else None."""
    if path.startswith('pose.bones["'):
        return path[len('pose.bones["'):].split('"]', 1)[0]
    return None


@dataclass
class Shot:
    """The armature, its size and the frames checked, with what it played and keyed after the last step."""

    obj: bpy.types.Object
    frames: Sequence[int]
    size: float
    shown: Played = field(default_factory=dict)
    keyed: Keys = field(default_factory=dict)
    switches: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.remember()

    def remember(self) -> None:
        self.shown = played(self.obj, self.frames)
        self.keyed = keys(self.obj)
        self.switches = self.read_switches()

    def read_switches(self) -> dict[str, float]:
        """Each limb handle's switches as they are set now (not as keys play them)."""
        found = {}
        for limb in api.limbs(self.obj):
            handle = self.obj.pose.bones.get(limb.bones.get("HANDLE", ""))
            if handle is None:
                continue
            for key in handle.keys():
                if isinstance(handle[key], (int, float)):
                    found[f"{handle.name}[{key}]"] = float(handle[key])
        return found

    def step(self, where: str, frames: Iterable[int] = (), bones: Iterable[str] = (),
             owned: Iterable[str] = (), switches: bool = True) -> dict[int, dict[str, tuple[float, float]]]:
        """Check the step ``where`` changed nothing but what it may: the poses of ``bones`` (by default every
        bone) on ``frames``, and the keys of the bones in ``owned``; returns what changed there.

        Every other frame plays as before, every other F-curve keeps its keys exactly, and the switches are
        as they were (unless ``switches`` is False)."""
        allowed_frames = set(frames)
        allowed_bones = set(bones)
        moved = gaps(self.shown, after := played(self.obj, self.frames), self.size)
        outside = {frame: {name: gap for name, gap in poses.items()
                           if frame not in allowed_frames or (allowed_bones and name not in allowed_bones)}
                   for frame, poses in moved.items()}
        outside = {frame: poses for frame, poses in outside.items() if poses}
        assert not outside, (where, "played differently", {f: sorted(p.items())[:4] for f, p in outside.items()})
        now = keys(self.obj)
        mine = set(owned)
        changed = sorted(path for path in set(self.keyed) | set(now)
                         if self.keyed.get(path) != now.get(path) and bone_path(path[0]) not in mine)
        assert not changed, (where, "keys changed that the step does not own", changed[:8])
        if switches:
            now_set = self.read_switches()  # a rebuild may add a switch; those there keep their values
            assert {name: now_set.get(name) for name in self.switches} == self.switches, (where, self.switches, now_set)
        self.shown, self.keyed, self.switches = after, now, self.read_switches()
        return moved
