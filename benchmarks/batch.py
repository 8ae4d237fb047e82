"""Section 4, batch: ``scripts/rig_batch.py`` against opening and saving alone, on small and realistic files.

Small files: N copies of Rigify's human metarig, rigged with 1, 2 and all cores' worth of
worker processes; they show what Blender's start-up costs each process.

Realistic files: characters the benchmark makes, files of tens of MB: the metarig skinning
a body with shape keys and a few garments (armature modifiers, vertex groups). On
them the batch must keep two promises: rigging adds at most 10% to opening and saving
each file, and ``--jobs 2`` runs at least 1.7 times faster than ``--jobs 1`` on two cores
(workers start once, with the main process, and each takes many files). Next to the
speed-up stands its ceiling: the floor in two processes, each opening and saving half the
files.

Every run is a fresh process, timed from outside (wall clock); ``open_save.py`` is the
floor: one process opening and saving the same files with the same calls, rigging
nothing (the batch also keeps the meshes asleep, unevaluated, from each file's load to its
save, so its open and save can take less than the floor's).

Alone: ``.venvs/blender-5.2/bin/python -m benchmarks.batch [--quick]`` (the realistic files
only; prints their figures as JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bpy

from benchmarks import common
from benchmarks.open_save import RESULT_MARK

BATCH_SCRIPT = common.ROOT / "scripts" / "rig_batch.py"
FLOOR_SCRIPT = Path(__file__).resolve().parent / "open_save.py"
LIMBS_PER_FILE = 4
# The realistic character: a body of BODY_GRID x BODY_GRID vertices with BODY_SHAPE_KEYS
# shape keys (a face's expressions), and CLOTHES garments, all skinned: a file of about 60 MB.
BODY_GRID = 320
BODY_SHAPE_KEYS = 40
CLOTHES = 3
CLOTHES_GRID = 160
REALISTIC_FILES = {"full": 32, "quick": 16}
# More repeats than the small files: the --jobs 2 promise is a ratio of two wall times, each
# with the machine's and the disk's noise in it.
REALISTIC_REPEATS = {"full": 5, "quick": 3}
REALISTIC_JOBS = (1, 2)
TARGETS = {"rig_over_open_save": 0.10, "speedup_jobs_2": 1.7}


# Python's compiled modules, cached for the timed processes as on a user's machine: a shell that
# forbids writing them makes every process compile IK Rigger and Blender's scripts anew, start-up
# that each run pays. In a folder of the benchmark's own, removed at its end.
_PYCACHE = Path(tempfile.gettempdir()) / f"ik_rigger_benchmark_pycache_{os.getpid()}"
_ENVIRONMENT = {**{name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"},
                "PYTHONPYCACHEPREFIX": str(_PYCACHE)}


def _run(command: list[str]) -> tuple[float, str, float]:
    """Wall seconds of one process, what it printed, and the CPU seconds it and its own processes
    (the batch's workers) took; a failure stops the benchmark."""
    cpu = common.children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=_ENVIRONMENT)
    seconds = time.perf_counter() - started
    cpu = common.children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"{Path(command[1]).name} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return seconds, done.stdout, cpu


def _make_files(sources: Path, folder: Path, count: int) -> list[Path]:
    folder.mkdir()
    common.reset()
    common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    paths = [folder / f"character_{index:02d}.blend" for index in range(count)]
    for path in paths:
        common.save_copy(path)
    return paths


def _skinned_mesh(rig: bpy.types.Object, name: str, grid: int, height: float) -> bpy.types.Object:
    """A grid standing in front of the rig, each deforming bone weighting a band of it."""
    with common.quiet():
        bpy.ops.mesh.primitive_grid_add(x_subdivisions=grid, y_subdivisions=grid, size=2.0,
                                        location=(0.0, 0.0, height), rotation=(1.5708, 0.0, 0.0))
    mesh = bpy.context.active_object
    mesh.name = name
    bones = [bone.name for bone in rig.data.bones if bone.use_deform]
    total = len(mesh.data.vertices)
    band = total // len(bones) + 1
    for index, bone in enumerate(bones):
        mesh.vertex_groups.new(name=bone).add(list(range(index * band, min(total, (index + 1) * band))), 1.0,
                                              "REPLACE")
    mesh.modifiers.new("Armature", "ARMATURE").object = rig
    mesh.parent = rig
    mesh.data.materials.append(bpy.data.materials.new(f"{name} material"))
    return mesh


def _make_realistic(sources: Path, folder: Path, count: int) -> list[Path]:
    """``count`` characters of tens of MB, each in its own file: Rigify's metarig skinning a body
    with shape keys and a few garments."""
    folder.mkdir()
    common.reset()
    rig = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    body = _skinned_mesh(rig, "Body", BODY_GRID, 1.0)
    body.shape_key_add(name="Basis")
    for index in range(BODY_SHAPE_KEYS):
        body.shape_key_add(name=f"expression_{index:02d}", from_mix=False)
    for index in range(CLOTHES):
        _skinned_mesh(rig, f"Garment {index}", CLOTHES_GRID, 0.8 + 0.2 * index)
    first = folder / "character_00.blend"
    common.save_copy(first)
    paths = [first]
    for index in range(1, count):
        paths.append(folder / f"character_{index:02d}.blend")
        shutil.copy(first, paths[-1])
    return paths


# Starts Blender as the batch command's processes do (scripts/blender_startup.py) and leaves as they
# do (without Blender's exit cleanup), deleting the session folder that cleanup would have.
_STARTUP_ONLY = "\n".join([
    "import os, shutil, sys",
    f"sys.path.insert(0, {str(BATCH_SCRIPT.parent)!r})",
    "from blender_startup import deferred_downloader",
    "with deferred_downloader():",
    "    import bpy",
    "shutil.rmtree(bpy.app.tempdir, ignore_errors=True)",
    "os._exit(0)",
])


def _startup(repeats: int) -> common.Stats:
    """A new Blender (this bpy) starting and exiting, doing nothing."""
    return common.Stats.of([_run([sys.executable, "-c", _STARTUP_ONLY])[0] for _ in range(repeats)])


def _batch(inputs: Path, work: Path, jobs: int) -> tuple[float, dict, float]:
    out = Path(tempfile.mkdtemp(dir=work))
    report = work / f"report_{out.name}.json"
    try:
        seconds, _, cpu = _run([sys.executable, str(BATCH_SCRIPT), str(inputs), "--out", str(out / "rigged"),
                           "--jobs", str(jobs), "--report", str(report)])
    finally:
        shutil.rmtree(out)  # realistic outputs are large: keep one run's at a time
    written = json.loads(report.read_text(encoding="utf-8"))
    for entry in written["files"]:
        limbs = sum(len(armature["limbs"]) for armature in entry["armatures"])
        if entry["status"] != "rigged" or limbs != LIMBS_PER_FILE:
            raise RuntimeError(f"the batch command rigged {limbs} limb(s) with status {entry['status']}: "
                               f"{entry['error']}")
    return seconds, written, cpu


def _floor(paths: list[Path], work: Path) -> tuple[float, list[dict], float]:
    out = Path(tempfile.mkdtemp(dir=work))
    try:
        seconds, printed, cpu = _run([sys.executable, str(FLOOR_SCRIPT), str(out), *map(str, paths)])
    finally:
        shutil.rmtree(out)
    line = next(line for line in printed.splitlines() if line.startswith(RESULT_MARK))
    return seconds, json.loads(line[len(RESULT_MARK):]), cpu


def _floor_in_two(paths: list[Path], work: Path) -> float:
    """Wall seconds of two floor processes at once, each opening and saving half the files: how much
    faster two processes can be on this machine at all (memory and disk are shared too). Where two
    processes take every core, each keeps to a core of its own from its start, as the batch's do."""
    outs = [Path(tempfile.mkdtemp(dir=work)) for _ in range(2)]
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    pinned = 1 < len(cores) <= 2

    def keep_to(core: int) -> Callable[[], None] | None:
        return (lambda: os.sched_setaffinity(0, {core})) if pinned else None

    started = time.perf_counter()
    processes = [subprocess.Popen([sys.executable, str(FLOOR_SCRIPT), str(out), *map(str, paths[half::2])],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_ENVIRONMENT,
                                  preexec_fn=keep_to(cores[half] if pinned else 0))
                 for half, out in enumerate(outs)]
    codes = [process.wait() for process in processes]
    seconds = time.perf_counter() - started
    for out in outs:
        shutil.rmtree(out)
    if any(codes):
        raise RuntimeError(f"open_save.py exited with {codes}")
    return seconds


def _settle(paths: list[Path]) -> None:
    """Every run starts alike: no earlier run's writes still going to disk (the kernel's writing
    would take a core from the run, more from the faster one), and the inputs in memory."""
    os.sync()
    for path in paths:
        with path.open("rb") as stream:
            while stream.read(1 << 24):
                pass


def _median(files: list[list[dict]], key: str) -> float:
    return statistics.median(entry[key] for run in files for entry in run)


def _measure(paths: list[Path], work: Path, job_counts: list[int], repeats: int,
             ceiling: bool = False) -> dict[str, object]:
    """Every way of processing the same files, taking turns per repeat (with ``ceiling``, the floor
    in two processes too), in the reverse order every other repeat so that no way always runs
    first or last; each run starts settled (``_settle``)."""
    folder = paths[0].parent
    walls: dict[str, list[float]] = {"floor": [], **{f"jobs_{jobs}": [] for jobs in job_counts}}
    # The batch's own time from its first file to its last (its report's), without Blender's start-up.
    loops: dict[str, list[float]] = {f"jobs_{jobs}": [] for jobs in job_counts}
    floor_in_two: list[float] = []
    per_file: dict[str, list[list[dict]]] = {"floor": [], "jobs_1": []}

    def floor() -> None:
        seconds, timings, _ = _floor(paths, work)
        walls["floor"].append(seconds)
        per_file["floor"].append(timings)

    def batch(jobs: int) -> None:
        seconds, report, _ = _batch(folder, work, jobs)
        walls[f"jobs_{jobs}"].append(seconds)
        loops[f"jobs_{jobs}"].append(report["seconds"])
        if jobs == 1:
            per_file["jobs_1"].append(report["files"])

    ways: list[Callable[[], None]] = [floor, *([lambda: floor_in_two.append(_floor_in_two(paths, work))]
                                               if ceiling else []),
                                      *[lambda jobs=jobs: batch(jobs) for jobs in job_counts]]
    for repeat in range(repeats):
        for way in ways if repeat % 2 == 0 else ways[::-1]:
            _settle(paths)
            way()
    stats = {name: common.Stats.of(values) for name, values in walls.items()}
    open_save = {name: _median(per_file[name], "seconds_open") + _median(per_file[name], "seconds_save")
                 for name in per_file}
    rig = _median(per_file["jobs_1"], "seconds_rig")
    # Per file of each --jobs 1 run: rigging over that same file's opening and saving.
    rig_shares = [entry["seconds_rig"] / (entry["seconds_open"] + entry["seconds_save"])
                  for run in per_file["jobs_1"] for entry in run]
    measured: dict[str, object] = {
        "files": len(paths),
        "wall_seconds": {name: value.as_dict() for name, value in stats.items()},
        "wall_seconds_each_repeat": {**walls, **({"floor_in_two": floor_in_two} if ceiling else {})},
        "files_per_second": {name: len(paths) / value.median for name, value in stats.items()},
        # Per repeat, each run's time over the floor's in the same repeat.
        "wall_over_floor": {name: common.paired_ratio(walls[name], walls["floor"]) for name in walls
                            if name != "floor"},
        "speedup_over_one_job": {name: common.paired_ratio(walls["jobs_1"], walls[name]) for name in walls
                                 if name != "floor"},
        "speedup_over_one_job_spread": {name: common.paired_ratios(walls["jobs_1"], walls[name]).as_dict()
                                        for name in walls if name != "floor"},
        # The same once Blender has started: the files themselves, from the batch's reports.
        "speedup_after_startup_spread": {name: common.paired_ratios(loops["jobs_1"], loops[name]).as_dict()
                                         for name in loops},
        "per_file_seconds": {
            "open_plus_save_floor": open_save["floor"],
            "open_plus_save_ik_rigger": open_save["jobs_1"],
            "rig_ik_rigger": rig,
        },
        "rig_over_open_save": rig / open_save["jobs_1"],
        # The batch's whole time per file (medians) over the floor's open and save: what a file costs
        # rigged against plainly opened and saved.
        "batch_over_floor_per_file": (open_save["jobs_1"] + rig) / open_save["floor"],
        "rig_over_open_save_per_file": common.Stats.of(rig_shares).as_dict(),
    }
    if ceiling:
        measured["floor_speedup_in_two_processes"] = common.paired_ratio(walls["floor"], floor_in_two)
        measured["floor_speedup_in_two_processes_spread"] = common.paired_ratios(walls["floor"],
                                                                                 floor_in_two).as_dict()
    return measured


def realistic(sources: Path, work: Path, count: int, repeats: int) -> dict[str, object]:
    """The two promises on characters with meshes of tens of MB, and whether this run kept them."""
    paths = _make_realistic(sources, work / "realistic", count)
    _batch(paths[0].parent, work, 2)  # a first run, untimed: Blender's and the files' first reads
    measured = _measure(paths, work, list(REALISTIC_JOBS), repeats, ceiling=True)
    speedup = measured["speedup_over_one_job"]
    assert isinstance(speedup, dict)
    share = measured["rig_over_open_save_per_file"]
    assert isinstance(share, dict)
    measured["file_megabytes"] = paths[0].stat().st_size / 1e6
    measured["mesh_vertices"] = (BODY_GRID + 1) ** 2 + CLOTHES * (CLOTHES_GRID + 1) ** 2
    measured["shape_keys"] = BODY_SHAPE_KEYS
    measured["cores"] = os.cpu_count()
    measured["targets"] = TARGETS
    measured["met"] = {"rig_over_open_save": share["median"] <= TARGETS["rig_over_open_save"],
                       "speedup_jobs_2": speedup["jobs_2"] >= TARGETS["speedup_jobs_2"]}
    shutil.rmtree(work / "realistic")
    return measured


def run(sources: Path, settings: common.Settings) -> dict[str, object]:
    job_counts = sorted({1, 2, os.cpu_count() or 1})
    kind = "quick" if settings == common.QUICK else "full"
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        try:
            _startup(1)  # untimed: fills the compiled modules' cache
            startup = _startup(max(settings.batch_repeats, 3))
            sizes = [_measure(_make_files(sources, work / f"characters_{size}", size), work, job_counts,
                              settings.batch_repeats) for size in settings.batch_sizes]
            heavy = realistic(sources, work, REALISTIC_FILES[kind], REALISTIC_REPEATS[kind])
        finally:
            shutil.rmtree(_PYCACHE, ignore_errors=True)
    return {
        "job_counts": job_counts,
        "startup_seconds": startup.as_dict(),
        "sizes": sizes,
        "realistic": heavy,
    }


def main(argv: list[str]) -> int:
    usage = argparse.ArgumentParser(prog="python -m benchmarks.batch",
                                    description="The batch promises on realistic characters.")
    usage.add_argument("--quick", action="store_true",
                       help=f"{REALISTIC_FILES['quick']} files, {REALISTIC_REPEATS['quick']} repeats")
    args = usage.parse_args(argv)
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        sources = work / "sources"
        sources.mkdir()
        common.make_sources(sources)
        kind = "quick" if args.quick else "full"
        try:
            result = realistic(sources, work, REALISTIC_FILES[kind], REALISTIC_REPEATS[kind])
        finally:
            shutil.rmtree(_PYCACHE, ignore_errors=True)
    print(json.dumps({"machine": common.machine_line(common.machine()), **result}, indent=2))
    met = result["met"]
    assert isinstance(met, dict)
    return 0 if all(met.values()) else 1


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    # Leave as the batch command does, skipping Blender's exit cleanup (bpy 4.2 crashes in it);
    # that cleanup would also remove Blender's session folder, so do that here.
    shutil.rmtree(bpy.app.tempdir, ignore_errors=True)
    os._exit(status)
