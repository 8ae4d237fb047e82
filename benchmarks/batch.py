"""Section 4, batch: files per second of ``scripts/rig_batch.py`` against opening and saving alone.

N copies of Rigify's human metarig are rigged by the batch command with 1, 2 and all
cores' worth of worker processes, and opened and saved by ``open_save.py`` in one
process. Each run is a fresh process, timed from outside (wall clock), so each pays
Blender's start-up, which is measured on its own too; every worker pays it again.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import common
from benchmarks.open_save import RESULT_MARK

BATCH_SCRIPT = common.ROOT / "scripts" / "rig_batch.py"
FLOOR_SCRIPT = Path(__file__).resolve().parent / "open_save.py"
LIMBS_PER_FILE = 4


def _run(command: list[str]) -> tuple[float, str]:
    """Wall seconds of one process and what it printed; a failure stops the benchmark."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{Path(command[1]).name} exited with {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return seconds, done.stdout


def _make_files(sources: Path, folder: Path, count: int) -> list[Path]:
    folder.mkdir()
    common.reset()
    common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    paths = [folder / f"character_{index:02d}.blend" for index in range(count)]
    for path in paths:
        common.save_copy(path)
    return paths


# Starts Blender and leaves as the batch command does (without Blender's exit cleanup), deleting the
# session folder that cleanup would have.
_STARTUP_ONLY = "import os, shutil, bpy; shutil.rmtree(bpy.app.tempdir, ignore_errors=True); os._exit(0)"


def _startup(repeats: int) -> common.Stats:
    """A new Blender (this bpy) starting and exiting, doing nothing."""
    return common.Stats.of([_run([sys.executable, "-c", _STARTUP_ONLY])[0] for _ in range(repeats)])


def _batch(inputs: Path, work: Path, jobs: int) -> tuple[float, list[dict]]:
    out = Path(tempfile.mkdtemp(dir=work))
    report = out / "report.json"
    seconds, _ = _run([sys.executable, str(BATCH_SCRIPT), str(inputs), "--out", str(out / "rigged"),
                       "--jobs", str(jobs), "--report", str(report)])
    files = json.loads(report.read_text(encoding="utf-8"))["files"]
    for entry in files:
        limbs = sum(len(armature["limbs"]) for armature in entry["armatures"])
        if entry["status"] != "rigged" or limbs != LIMBS_PER_FILE:
            raise RuntimeError(f"the batch command rigged {limbs} limb(s) with status {entry['status']}: "
                               f"{entry['error']}")
    return seconds, files


def _floor(paths: list[Path], work: Path) -> tuple[float, list[dict]]:
    out = Path(tempfile.mkdtemp(dir=work))
    seconds, printed = _run([sys.executable, str(FLOOR_SCRIPT), str(out), *map(str, paths)])
    line = next(line for line in printed.splitlines() if line.startswith(RESULT_MARK))
    return seconds, json.loads(line[len(RESULT_MARK):])


def _median(files: list[list[dict]], key: str) -> float:
    return statistics.median(entry[key] for run in files for entry in run)


def _size(sources: Path, work: Path, count: int, job_counts: list[int], repeats: int) -> dict[str, object]:
    """One batch size: every way of processing the same ``count`` files, taking turns per repeat."""
    folder = work / f"characters_{count}"
    paths = _make_files(sources, folder, count)
    walls: dict[str, list[float]] = {"floor": [], **{f"jobs_{jobs}": [] for jobs in job_counts}}
    per_file: dict[str, list[list[dict]]] = {"floor": [], "jobs_1": []}
    for _ in range(repeats):
        seconds, timings = _floor(paths, work)
        walls["floor"].append(seconds)
        per_file["floor"].append(timings)
        for jobs in job_counts:
            seconds, files = _batch(folder, work, jobs)
            walls[f"jobs_{jobs}"].append(seconds)
            if jobs == 1:
                per_file["jobs_1"].append(files)
    stats = {name: common.Stats.of(values) for name, values in walls.items()}
    open_save = {name: _median(per_file[name], "seconds_open") + _median(per_file[name], "seconds_save")
                 for name in per_file}
    rig = _median(per_file["jobs_1"], "seconds_rig")
    return {
        "files": count,
        "wall_seconds": {name: value.as_dict() for name, value in stats.items()},
        "files_per_second": {name: count / value.median for name, value in stats.items()},
        # Per repeat, each run's time over the floor's in the same repeat.
        "wall_over_floor": {name: common.paired_ratio(walls[name], walls["floor"]) for name in walls
                            if name != "floor"},
        "speedup_over_one_job": {name: common.paired_ratio(walls["jobs_1"], walls[name]) for name in walls
                                 if name != "floor"},
        "per_file_seconds": {
            "open_plus_save_floor": open_save["floor"],
            "open_plus_save_ik_rigger": open_save["jobs_1"],
            "rig_ik_rigger": rig,
        },
        "rig_over_open_save": rig / open_save["jobs_1"],
    }


def run(sources: Path, settings: common.Settings) -> dict[str, object]:
    job_counts = sorted({1, 2, os.cpu_count() or 1})
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        startup = _startup(max(settings.batch_repeats, 3))
        sizes = [_size(sources, work, count, job_counts, settings.batch_repeats) for count in settings.batch_sizes]
    return {
        "job_counts": job_counts,
        "startup_seconds": startup.as_dict(),
        "sizes": sizes,
    }
