"""Section 2, evaluation cost: depsgraph time per frame while the four IK handles move.

Three rigs of the same human metarig, each alone in a fresh factory scene: IK Rigger's,
the floor script's (the same bones, constraints, shapes and drivers), and Rigify's
generated rig (its IK controls; Rigify's limbs start in IK). The handles follow one fixed
path, as keyframes played back with ``frame_set`` and as locations set from Python
followed by ``view_layer.update``. An empty scene's step is
timed the same way, so its share can be taken out of the ratios. Three more rigs, with no
target, are IK Rigger's less parts of what it adds and the floor less its drivers, to show
what costs what.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bpy
from mathutils import Vector

from benchmarks import common, floor, hidden_chain
from benchmarks.build_speed import LASTS

TARGET = 1.1
KEY_STEP = 10  # frames between keyframes; Blender interpolates the rest


@dataclass(frozen=True)
class Limb:
    """One limb of a rig as the benchmark moves it: its handle and the chain that follows."""

    handle: str
    chain: tuple[str, str]
    side: float  # +1 left, -1 right: the path is mirrored across the body


@dataclass(frozen=True)
class Rig:
    """How to put a rig into the empty scene, and its limbs."""

    load: Callable[[Path], bpy.types.Object]
    limbs: tuple[Limb, ...]


def _ik_rigger(sources: Path) -> bpy.types.Object:
    from ik_rigger.limb.options import LimbOptions
    from ik_rigger.rig.build import build_limbs

    obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    build_limbs(obj, [(last, LimbOptions()) for last in LASTS])
    return obj


def _ik_rigger_without_stretch(sources: Path) -> bpy.types.Object:
    """IK Rigger's rig at Maximum Stretch 1: no stretch target, reach limit or stretch drivers."""
    from ik_rigger import api

    obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    chosen = api.options(max_stretch=1.0)
    api.build_many(obj, [(last, chosen) for last in LASTS])
    return obj


def _floor_without_stretch(sources: Path) -> bpy.types.Object:
    """The floor of the rig without stretch: the same bones, constraints, shapes and drivers."""
    obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    floor.rig_four_limbs(obj, stretch=False)
    return obj


def _floor_without_drivers(sources: Path) -> bpy.types.Object:
    """Diagnostic: the floor less its drivers, to compare IK Rigger's rig less its drivers with."""
    obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    floor.rig_four_limbs(obj, drivers=False)
    return obj


def _without_drivers(sources: Path) -> bpy.types.Object:
    """Diagnostic: IK Rigger's rig less the drivers that tie each constraint to the limb's IK/FK blend."""
    obj = _ik_rigger(sources)
    obj.animation_data_clear()
    return obj


def _without_drivers_and_record(sources: Path) -> bpy.types.Object:
    """Diagnostic: less the drivers and the record of what IK Rigger built, which it keeps on the object
    (the drivers go first: they read the record, and would fail without it)."""
    obj = _without_drivers(sources)
    obj.property_unset("ik_rigger")
    return obj


def _floor(sources: Path) -> bpy.types.Object:
    obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    floor.rig_four_limbs(obj)
    return obj


def _rigify(sources: Path) -> bpy.types.Object:
    return common.append_object(sources / common.RIGIFY_RIG_FILE, common.RIGIFY_RIG)


def _metarig_limbs(prefix: str = "", handles: tuple[str, str] = ("foot_IK", "hand_IK")) -> tuple[Limb, ...]:
    limbs = []
    for (first, last, _), handle in zip(floor.LIMBS, (handles[0], handles[0], handles[1], handles[1])):
        side = last[-2:]
        limbs.append(Limb(f"{handle}{side}", (prefix + first, prefix + last), 1.0 if side == ".L" else -1.0))
    return tuple(limbs)


RIGS = {
    "ik_rigger": Rig(_ik_rigger, _metarig_limbs()),
    "floor": Rig(_floor, _metarig_limbs()),
    "rigify": Rig(_rigify, _metarig_limbs("ORG-", ("foot_ik", "hand_ik"))),
    # Not targets: they show which part of IK Rigger's rig costs what beyond the floor.
    "ik_rigger_without_drivers": Rig(_without_drivers, _metarig_limbs()),
    "ik_rigger_without_drivers_and_record": Rig(_without_drivers_and_record, _metarig_limbs()),
    "floor_without_drivers": Rig(_floor_without_drivers, _metarig_limbs()),
    "ik_rigger_without_stretch": Rig(_ik_rigger_without_stretch, _metarig_limbs()),
    "floor_without_stretch": Rig(_floor_without_stretch, _metarig_limbs()),
    # Bones turned off their joints: limbs on hidden chains, against a floor making the same (hidden_chain.py).
    "ik_rigger_hidden_chain": Rig(hidden_chain.ik_rigger, _metarig_limbs()),
    "floor_hidden_chain": Rig(hidden_chain.floor_rig, _metarig_limbs()),
}
# Rigs also compared with a floor of their own, which makes what they make (every rig is compared with "floor").
OWN_FLOOR = {"ik_rigger_without_stretch": "floor_without_stretch", "ik_rigger_hidden_chain": "floor_hidden_chain",
             "ik_rigger_without_drivers": "floor_without_drivers",
             "ik_rigger_without_drivers_and_record": "floor_without_drivers"}


def path_offset(frame: int, frames: int, length: float, side: float) -> Vector:
    """Armature-space offset of a handle from its rest at ``frame``: a loop forward, up and out."""
    turn = 2.0 * math.pi * frame / frames
    return length * Vector((0.08 * side * math.sin(turn), -0.12 * (1.0 - math.cos(turn)),
                            0.10 * (1.0 - math.cos(turn))))


class Mover:
    """Puts a rig's handles where the path says, as pose locations in each handle's own rest frame."""

    def __init__(self, obj: bpy.types.Object, limbs: tuple[Limb, ...], frames: int) -> None:
        self.frames = frames
        self.entries = []
        for limb in limbs:
            bone = obj.data.bones[limb.handle]
            length = sum(obj.data.bones[name].length for name in limb.chain)
            # The handles' parents stay at rest, so an armature-space offset only needs
            # turning into the handle's rest orientation.
            to_local = bone.matrix_local.to_3x3().inverted()
            self.entries.append((obj.pose.bones[limb.handle], to_local, length, limb.side))

    def place(self, frame: int) -> None:
        for pose_bone, to_local, length, side in self.entries:
            pose_bone.location = to_local @ path_offset(frame, self.frames, length, side)

    def keyframe(self) -> None:
        for frame in range(0, self.frames + 1, KEY_STEP):
            self.place(frame)
            for pose_bone, *_ in self.entries:
                pose_bone.keyframe_insert("location", frame=frame)


def _check_follows(obj: bpy.types.Object, rig: Rig, mover: Mover) -> None:
    """Refuse to time a rig whose chains ignore the handles (a limb left in FK, say)."""
    before = _chain_poses(obj, rig)
    mover.place(mover.frames // 2)
    after = _chain_poses(obj, rig)
    mover.place(0)
    bpy.context.view_layer.update()
    for name in before:
        if (before[name] - after[name]).length < 1e-3:
            raise RuntimeError(f"'{name}' does not follow its IK handle; the timing would be meaningless")


def _chain_poses(obj: bpy.types.Object, rig: Rig) -> dict[str, Vector]:
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    # The middle joint: it moves only when the IK solver bends the chain.
    return {limb.chain[1]: evaluated.pose.bones[limb.chain[1]].head.copy() for limb in rig.limbs}


def _per_frame(step: Callable[[int], None], frames: int, passes: int) -> tuple[float, float]:
    """CPU and wall seconds per frame."""
    def run() -> None:
        for _ in range(passes):
            for frame in range(1, frames + 1):
                step(frame)

    cpu, wall = common.timed_both(run)
    return cpu / (frames * passes), wall / (frames * passes)


def _time_rig(sources: Path, rig: Rig | None, frames: int,
              passes: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """CPU and wall seconds per frame (python-driven, keyframed) for ``rig`` in a fresh scene; None is
    the empty scene."""
    common.reset()
    scene = bpy.context.scene
    view_layer = bpy.context.view_layer
    if rig is None:
        def driven(_frame: int) -> None:
            view_layer.update()
    else:
        obj = rig.load(sources)
        mover = Mover(obj, rig.limbs, frames)
        _check_follows(obj, rig, mover)

        def driven(frame: int) -> None:
            mover.place(frame)
            view_layer.update()

    view_layer.update()
    python_driven = _per_frame(driven, frames, passes)
    if rig is not None:
        mover.keyframe()
    scene.frame_start, scene.frame_end = 0, frames
    scene.frame_set(0)  # the first step after keying builds the animation's relations: not billed
    keyframed = _per_frame(scene.frame_set, frames, passes)
    return python_driven, keyframed


def run(sources: Path, settings: common.Settings) -> dict[str, object]:
    frames = settings.eval_frames
    names = ["empty", *RIGS]
    # CPU time (what the ratios judge), and wall time beside it ("..._wall").
    samples: dict[str, dict[str, list[float]]] = {
        name: {"python": [], "keyframed": [], "python_wall": [], "keyframed_wall": []} for name in names}
    for _ in range(settings.eval_repeats):
        for name in names:
            python_driven, keyframed = _time_rig(sources, RIGS.get(name), frames, settings.eval_passes)
            for mode, (cpu, wall) in (("python", python_driven), ("keyframed", keyframed)):
                samples[name][mode].append(cpu)
                samples[name][f"{mode}_wall"].append(wall)
    stats = {name: {mode: common.Stats.of(values) for mode, values in modes.items()}
             for name, modes in samples.items()}
    spreads: dict[str, common.Stats] = {}
    for mode in ("keyframed", "python"):
        empty = samples["empty"][mode]
        for name in RIGS:
            for floor_name in {"floor", OWN_FLOOR.get(name, "floor")} - {name}:
                own, floor_times = samples[name][mode], samples[floor_name][mode]
                spreads[f"{name}_over_{floor_name}_{mode}"] = common.paired_ratios(own, floor_times)
                spreads[f"{name}_over_{floor_name}_{mode}_net"] = common.paired_ratios(
                    [rig - blank for rig, blank in zip(own, empty)],
                    [rig - blank for rig, blank in zip(floor_times, empty)])
    ratios = {name: spread.median for name, spread in spreads.items()}
    return {
        "frames": frames,
        "passes": settings.eval_passes,
        "seconds_per_frame": {name: {mode: value.as_dict() for mode, value in modes.items()}
                              for name, modes in stats.items()},
        "ratios": ratios,
        "ratio_spreads": {name: spread.as_dict() for name, spread in spreads.items()},
        "target": TARGET,
        # What the hidden chains' floor makes otherwise than IK Rigger (bones, parents, constraint kinds): none.
        "hidden_chain_floor_differs": hidden_chain.differences(sources),
    }
