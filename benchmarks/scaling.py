"""Scaling: how IK Rigger's time grows with the size of the work, beside the floor's.

Four series, each timed at several sizes, IK Rigger and its floor taking turns within each
repeat (in the reverse order every other repeat), on CPU time (``common.timed_both``; the
batch's processes by their own CPU time); the fifth, limbs (4 to 1,024 legs of a many-legged
creature), is the matrix section's (``matrix.py``), which gives each of its cells' growth
exponents beside the floor's:

- bones: the Auto-Rig operator from Pose mode on Rigify's basic human metarig among loose
  bones, against the floor as an operator making its four limbs (its mode switches, undo
  step and scene update included), and beside an operator that only switches modes three
  times (Edit, Object, Pose), and the same adding one constraint: the least any build pays,
  and what any new constraint or driver adds to it (Blender builds the armature's dependency
  graph again and evaluates it in the scene update after the operator);
- characters: keyframed playback, time per frame, of that many rigged metarigs in one scene,
  against as many floor rigs;
- frames: the FK-to-IK bake of the motion capture's four limbs over that many frames,
  against playing the frames;
- files: ``scripts/rig_batch.py --jobs 1`` on that many metarig files, against opening and
  saving them in one process.

Each series gives its time per unit (limb, bone, character, frame, file) at every size and
its growth exponent: the slope of log time against log size, least squares over the sizes'
medians (1 is linear, 2 quadratic), IK Rigger's beside the floor's. The target: IK Rigger's
exponent at most the floor's plus ``EXPONENT_MARGIN`` (what the repeats' spread moves it by),
so no stage of IK Rigger grows faster than the floor's own steps.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bpy

from benchmarks import bake, batch, common, creature, evaluation, floor
from benchmarks.build_speed import LASTS

EXPONENT_MARGIN = 0.1
# Auto-Rig on a large armature: at most this many times three mode switches alone (issue 37's measure; the
# floor operator making the same four limbs is shown beside it, and is itself above it).
BONES_TARGET = 1.2
BONES_TARGET_SIZES = (100, 1000, 10000)
# The batch's cost per file beyond its run's fixed cost (the slope of its time against the files): at most
# this many times the floor's, opening and saving a file (issue 37's measure).
FILES_TARGET = 2.0
PLAYED_FRAMES = 60  # frames played per sample of the characters series


@dataclass(frozen=True)
class Series:
    """One scaling series: what grows, and how to time IK Rigger and the floor at a size."""

    name: str
    unit: str
    what: str
    sizes: tuple[int, ...]
    quick_sizes: tuple[int, ...]
    # (size, folder, one of ``who``) -> seconds (CPU, wall) of one timed run at that size
    time: Callable[[int, Path, str], tuple[float, float]]
    prepare: Callable[[int, Path, Path], None] = lambda size, sources, folder: None
    # What is timed: IK Rigger, its floor, and any other reference (IK Rigger's ratio over it is kept too).
    who: tuple[str, ...] = ("ik_rigger", "floor")


def _armature_file(folder: Path, size: int) -> Path:
    return folder / f"bones_{size}.blend"


def _prepare_bones(size: int, sources: Path, folder: Path) -> None:
    common.reset()
    common.enable_rigify()
    bpy.ops.object.armature_basic_human_metarig_add()
    creature.add_loose_bones(bpy.context.active_object, size)
    common.save_copy(_armature_file(folder, size))


def _time_bones(size: int, folder: Path, who: str) -> tuple[float, float]:
    common.reset()
    common.append_object(_armature_file(folder, size), common.METARIG)
    bpy.ops.object.mode_set(mode="POSE")
    operator = {"floor": bpy.ops.benchmark.floor, "switches": bpy.ops.benchmark.mode_switches,
                "switches_constraint": lambda: bpy.ops.benchmark.mode_switches(constraint=True),
                "ik_rigger": bpy.ops.ik_rigger.auto_rig}[who]

    def run() -> None:
        with common.quiet():
            if operator() != {"FINISHED"}:
                raise RuntimeError(f"{who} did not finish on {size} bones")

    return common.timed_both(run)


def _time_characters(size: int, sources: Path, who: str) -> tuple[float, float]:
    """Seconds per frame of keyframed playback of ``size`` rigged metarigs in one scene."""
    from ik_rigger.limb.options import LimbOptions
    from ik_rigger.rig.build import build_limbs

    common.reset()
    limbs = evaluation.RIGS["floor"].limbs
    for _ in range(size):
        obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
        if who == "floor":
            floor.rig_four_limbs(obj)
        else:
            build_limbs(obj, [(last, LimbOptions()) for last in LASTS])
        obj.select_set(False)
        evaluation.Mover(obj, limbs, PLAYED_FRAMES).keyframe()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 0, PLAYED_FRAMES
    scene.frame_set(0)  # the first step after keying builds the animation's relations: not billed

    def play() -> None:
        for frame in range(1, PLAYED_FRAMES + 1):
            scene.frame_set(frame)

    cpu, wall = common.timed_both(play)
    return cpu / PLAYED_FRAMES, wall / PLAYED_FRAMES


def _time_frames(size: int, folder: Path, who: str) -> tuple[float, float]:
    rig = bake._rigged_capture(size)
    if who == "floor":
        return common.timed_both(lambda: bake._play(rig, size))
    results: list = []
    timing = common.timed_both(lambda: results.extend(bake._bake(rig, size)))
    bake._check(rig, results, size)
    return timing


def _files_folder(folder: Path, size: int) -> Path:
    return folder / f"characters_{size}"


def _prepare_files(size: int, sources: Path, folder: Path) -> None:
    batch._make_files(sources, _files_folder(folder, size), size)
    batch._startup(1)  # untimed: fills the compiled modules' cache


def _time_files(size: int, folder: Path, who: str) -> tuple[float, float]:
    inputs = _files_folder(folder, size)
    batch._settle([])
    if who == "floor":
        wall, _, cpu = batch._floor(sorted(inputs.glob("*.blend")), folder)
    else:
        wall, _, cpu = batch._batch(inputs, folder, 1)
    return cpu, wall


SERIES = (
    Series("bones", "bone", "the Auto-Rig operator on a basic human among loose bones against the floor "
           "operator making its four limbs", (100, 300, 1000, 3000, 10000), (100, 1000), _time_bones,
           _prepare_bones, ("ik_rigger", "floor", "switches", "switches_constraint")),
    Series("characters", "character", "keyframed playback (time per frame) of rigged metarigs in one scene "
           "against as many floor rigs", (1, 2, 4, 8, 16, 32), (1, 4), _time_characters),
    Series("frames", "frame", "the FK-to-IK bake of a capture's four limbs against playing the frames",
           (100, 300, 1000, 5000), (100, 1000), _time_frames),
    Series("files", "file", "`rig_batch.py --jobs 1` on metarig files against opening and saving them in one "
           "process", (6, 12, 24, 48), (6, 12), _time_files, _prepare_files),
)


def exponent(sizes: list[int], seconds: list[float]) -> float:
    """The slope of log seconds against log size, least squares: how the time grows with the size."""
    xs = [math.log(size) for size in sizes]
    ys = [math.log(value) for value in seconds]
    middle_x, middle_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - middle_x) ** 2 for x in xs)
    return sum((x - middle_x) * (y - middle_y) for x, y in zip(xs, ys)) / spread if spread else 0.0


def per_unit(sizes: list[int], seconds: list[float]) -> tuple[float, float]:
    """The time each further unit adds and the time of none, (slope, intercept) of time against size, least
    squares: a run's fixed cost (a process starting, its first file) apart from what each unit costs."""
    middle_x, middle_y = sum(sizes) / len(sizes), sum(seconds) / len(seconds)
    spread = sum((x - middle_x) ** 2 for x in sizes)
    slope = sum((x - middle_x) * (y - middle_y) for x, y in zip(sizes, seconds)) / spread if spread else 0.0
    return slope, middle_y - slope * middle_x


def _repeats(size: int, sizes: tuple[int, ...], repeats: int) -> int:
    """Fewer repeats at the larger sizes, whose runs are long and steady: at least 3."""
    return max(3, repeats - sizes.index(size))


def measure(series: Series, sources: Path, work: Path, sizes: tuple[int, ...], repeats: int) -> dict[str, object]:
    """One series: at each size, IK Rigger and the floor in turns; medians, ratios and exponents."""
    folder = work / series.name
    folder.mkdir()
    everyone = series.who
    cpu: dict[str, dict[int, list[float]]] = {who: {size: [] for size in sizes} for who in everyone}
    wall: dict[str, dict[int, list[float]]] = {who: {size: [] for size in sizes} for who in everyone}
    # The characters series reads the metarig from the sources; the others from their own files.
    where = sources if series.name == "characters" else folder
    for size in sizes:
        series.prepare(size, sources, folder)
    # The sizes take turns within each repeat, as IK Rigger and the floor do (each in the reverse order every
    # other repeat): a machine that drifts slower or faster over the series, or a first run that pays for a
    # cold start, then moves every size alike rather than the first or the last, which tilted the slope.
    for repeat in range(max(_repeats(size, sizes, repeats) for size in sizes)):
        for size in sizes if repeat % 2 == 0 else sizes[::-1]:
            if repeat >= _repeats(size, sizes, repeats):
                continue
            for who in everyone if repeat % 2 == 0 else everyone[::-1]:
                taken_cpu, taken_wall = series.time(size, where, who)
                cpu[who][size].append(taken_cpu)
                wall[who][size].append(taken_wall)
    shutil.rmtree(folder, ignore_errors=True)
    stats = {who: {str(size): common.Stats.of(cpu[who][size]).as_dict() for size in sizes} for who in everyone}
    walls = {who: {str(size): common.Stats.of(wall[who][size]).as_dict() for size in sizes} for who in everyone}
    ratios = {str(size): common.paired_ratios(cpu["ik_rigger"][size], cpu["floor"][size]).as_dict()
              for size in sizes}
    # IK Rigger over each other reference, by its name.
    others = {who: {str(size): common.paired_ratios(cpu["ik_rigger"][size], cpu[who][size]).as_dict()
                    for size in sizes} for who in everyone[2:]}
    wall_ratios = {str(size): common.paired_ratios(wall["ik_rigger"][size], wall["floor"][size]).as_dict()
                   for size in sizes}
    exponents = {who: exponent(list(sizes), [stats[who][str(size)]["median"] for size in sizes])
                 for who in everyone}
    wall_exponents = {who: exponent(list(sizes), [walls[who][str(size)]["median"] for size in sizes])
                      for who in everyone}
    # Of the medians: the sizes have different numbers of repeats, so no per-repeat pairs.
    fitted = {who: per_unit(list(sizes), [stats[who][str(size)]["median"] for size in sizes]) for who in everyone}
    return {"unit": series.unit, "what": series.what, "sizes": list(sizes), "cpu_seconds": stats,
            "wall_seconds": walls, "ratios": ratios, "ratios_over_others": others, "wall_ratios": wall_ratios,
            "exponents": exponents,
            "wall_exponents": wall_exponents,
            "per_unit": {who: slope for who, (slope, _) in fitted.items()},
            "fixed": {who: fixed for who, (_, fixed) in fitted.items()},
            "met": exponents["ik_rigger"] <= exponents["floor"] + EXPONENT_MARGIN}


def run(sources: Path, settings: common.Settings, only: list[str] | None = None) -> dict[str, object]:
    """Every series (or those named in ``only``) at the full run's sizes, or ``--quick``'s."""
    quick = settings == common.QUICK
    repeats = 3 if quick else 5
    found: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        try:
            for series in SERIES:
                if only and series.name not in only:
                    continue
                sizes = series.quick_sizes if quick else series.sizes
                found[series.name] = measure(series, sources, work, sizes, repeats)
        finally:
            shutil.rmtree(batch._PYCACHE, ignore_errors=True)
    return {"series": found, "exponent_margin": EXPONENT_MARGIN, "bones_target": BONES_TARGET,
            "bones_target_sizes": list(BONES_TARGET_SIZES), "files_target": FILES_TARGET}
