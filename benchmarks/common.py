"""Shared pieces of the benchmarks: the machine, timing statistics, scene resets, source files."""

from __future__ import annotations

import datetime
import gc
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import bpy

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# One way to keep Blender's own lines off stdout, the batch command's.
from ik_rigger.rig.output import quiet  # noqa: E402

METARIG = "metarig"  # the object name Rigify's metarig operators give
HUMAN_FILE = "human_metarig.blend"
RIGIFY_RIG_FILE = "rigify_human_rig.blend"
RIGIFY_RIG = "rig"  # the object name rigify_generate gives


@dataclass(frozen=True)
class Settings:
    """How much of each benchmark to run: the full run or ``--quick``."""

    build_repeats: int
    rigify_repeats: int
    eval_repeats: int
    eval_passes: int  # times each timed sample plays the frame range
    eval_frames: int
    quality_targets: int
    batch_sizes: tuple[int, ...]  # files per batch run; small ones show the start-up cost
    batch_repeats: int


FULL = Settings(build_repeats=40, rigify_repeats=3, eval_repeats=11, eval_passes=3, eval_frames=100,
                quality_targets=200, batch_sizes=(16, 64), batch_repeats=3)
QUICK = Settings(build_repeats=7, rigify_repeats=1, eval_repeats=3, eval_passes=1, eval_frames=100,
                 quality_targets=50, batch_sizes=(16,), batch_repeats=2)
# What each takes on 2 cores, as measured; the run prints its own time, and docs/speed.md's table says
# how long the run behind it took.
FULL_TAKES = "several minutes"
QUICK_TAKES = "one to two minutes"


@dataclass(frozen=True)
class Stats:
    """Repeated measurements of one thing (seconds, or a ratio): the median and the spread."""

    median: float
    min: float
    max: float
    repeats: int

    @classmethod
    def of(cls, samples: list[float]) -> Stats:
        return cls(statistics.median(samples), min(samples), max(samples), len(samples))

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def paired_ratios(numerators: list[float], denominators: list[float]) -> Stats:
    """The per-repeat ratios: their median, and their spread over the repeats.

    The things compared run back to back within each repeat, so a shared machine
    slowing down for a while (a neighbour's job) scales both sides of a ratio
    alike; the median then drops the repeats it hit unevenly.
    """
    return Stats.of([a / b for a, b in zip(numerators, denominators, strict=True)])


def paired_ratio(numerators: list[float], denominators: list[float]) -> float:
    """The median of per-repeat ratios (see ``paired_ratios``)."""
    return paired_ratios(numerators, denominators).median


def cpu_model() -> str:
    """The CPU's marketing name from /proc/cpuinfo, else what the platform module knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown"


def machine() -> dict[str, object]:
    """Where the absolute times came from (no host names or paths)."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count() or 1,
        "blender": bpy.app.version_string,
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.machine()}",
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def machine_line(info: dict[str, object]) -> str:
    return (f"{info['cpu']}, {info['cores']} cores, Blender {info['blender']} (Python {info['python']}), "
            f"{info['system']}, {info['date']}")


def timed(action: Callable[[], object]) -> float:
    """CPU seconds ``action`` takes (``timed_both``): what every target is judged on."""
    return timed_both(action)[0]


def timed_both(action: Callable[[], object]) -> tuple[float, float]:
    """The CPU seconds ``action`` takes, this process's and all its threads' (``time.process_time``),
    and its wall seconds; garbage from earlier work is collected first so it is not billed here.

    The CPU time is what the work cost: on a busy machine the wall time also holds the time the
    process waited for a core, which other people's work decides.
    """
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    action()
    return time.process_time() - cpu, time.perf_counter() - wall


def children_cpu() -> float:
    """CPU seconds of this process's children that have ended and been waited for (and of theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def stop_processes(processes: Iterable[subprocess.Popen]) -> None:
    """Stop each process by its id (SIGTERM, then SIGKILL if it lingers a minute), and wait for it."""
    for process in processes:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def reset() -> None:
    """An empty factory scene: nothing from the last repeat can make this one faster or slower."""
    with quiet():
        bpy.ops.wm.read_factory_settings(use_empty=True)


def enable_rigify() -> None:
    """Rigify ships with Blender but is off in factory settings (and a reset turns it off again)."""
    import addon_utils  # Blender's own module, importable only once bpy is

    with quiet():
        addon_utils.enable("rigify", default_set=True)


def register_ik_rigger() -> None:
    import ik_rigger

    ik_rigger.register()


def append_object(path: Path, name: str) -> bpy.types.Object:
    """Append object ``name`` from ``path`` into the scene, active and selected, in Object mode."""
    with bpy.data.libraries.load(str(path), link=False) as (_, into):
        into.objects = [name]
    obj = into.objects[0]
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def save_copy(path: Path) -> None:
    with quiet():
        bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True, check_existing=False, compress=False)


def make_sources(folder: Path) -> None:
    """Save Rigify's human metarig and the rig Rigify generates from it, read back by every repeat.

    A factory reset turns Rigify off, so they are made once and appended after each
    reset rather than re-made through Rigify's operators.
    """
    reset()
    enable_rigify()
    bpy.ops.object.armature_human_metarig_add()
    save_copy(folder / HUMAN_FILE)
    with quiet():
        bpy.ops.pose.rigify_generate()
    # Keep the generated rig alone in its scene: the metarig would only add its own evaluation.
    bpy.data.objects.remove(bpy.data.objects[METARIG])
    save_copy(folder / RIGIFY_RIG_FILE)
