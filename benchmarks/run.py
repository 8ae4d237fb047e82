"""IK Rigger against what Blender allows: build, evaluation, IK quality and batch, side by side in one run.

    scripts/benchmark.sh [--quick] [--only SECTION ...] [--profile] [--out DIR] [--update-docs]
    .venvs/blender-5.2/bin/python benchmarks/run.py [the same]

Writes ``latest.json`` and a PNG for each section that has a plot into ``out/benchmarks/``
(ignored by git; or --out) and prints a markdown table. ``--update-docs`` writes them into
the tracked ``benchmarks/results/`` instead and puts the table into docs/speed.md, between
its benchmark-table markers. Every ratio compares things measured in this run, on this
machine; every figure is a median with its spread (min to max over the repeats), and
absolute times come with the machine they came from. See benchmarks/README.md for
what each section measures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Blender sizes its thread pools to the cores the process may use when it loads: here one, so that it
# works in this thread alone. Otherwise its worker threads spin while they wait for work, CPU time
# that a busy machine's other work decides (per-frame ratios spread from 0.75x to 1.24x on a loaded
# 2-core machine, 1.09x to 1.17x in one thread). The processes it starts (the batch's) may use every
# core again, as a user's do.
_CORES = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
if len(_CORES) > 1:
    os.sched_setaffinity(0, {min(_CORES)})
from benchmarks import (  # noqa: E402
    bake,
    batch,
    build_speed,
    common,
    evaluation,
    export,
    floor,
    hidden_chain,
    matrix,
    panel,
    plots,
    quality,
    scaling,
    soft_ik,
)

if len(_CORES) > 1:
    os.sched_setaffinity(0, _CORES)

SECTIONS: dict[str, Callable[[Path, common.Settings], dict]] = {
    "build": build_speed.run,
    "matrix": matrix.run,
    "evaluation": evaluation.run,
    "quality": quality.run,
    "bake": lambda sources, settings: bake.run(settings),
    "export": lambda sources, settings: export.run(settings),
    "panel": lambda sources, settings: panel.run(settings),
    "batch": batch.run,
    "soft_ik": soft_ik.run,
    "scaling": scaling.run,
}
PLOTS: dict[str, Callable[[dict, str, Path], None]] = {
    "build": plots.build,
    "matrix": plots.matrix,
    "evaluation": plots.evaluation,
    "quality": plots.quality,
    "batch": plots.batch,
    "scaling": plots.scaling,
}
DEFAULT_OUT = ROOT / "out" / "benchmarks"
TRACKED_OUT = ROOT / "benchmarks" / "results"
SPEED_PAGE = ROOT / "docs" / "speed.md"
TABLE_START = "<!-- benchmark table: written by scripts/benchmark.sh --update-docs -->"
TABLE_END = "<!-- end of benchmark table -->"
# README shows the rows with a speed target of building and posing: the rest is on the speed page.
README_PAGE = ROOT / "README.md"
README_ROWS = ("| Build 4 limbs", "| Build a many-legged", "| Frame step", "| Update, handles", "| Scaling")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"fewer repeats and targets: {common.QUICK_TAKES} instead of {common.FULL_TAKES}")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), help="run only these sections")
    parser.add_argument("--series", nargs="+", choices=[series.name for series in scaling.SERIES],
                        help="with the scaling section: only these of its series")
    parser.add_argument("--profile", action="store_true",
                        help="profile IK Rigger's build even when it meets its target")
    parser.add_argument("--out", type=Path, help=f"folder for latest.json and the plots (default: "
                        f"{DEFAULT_OUT.relative_to(ROOT)}/, or {TRACKED_OUT.relative_to(ROOT)}/ with --update-docs)")
    parser.add_argument("--update-docs", action="store_true",
                        help=f"refresh {SPEED_PAGE.relative_to(ROOT)}'s table and the tracked results with this run")
    args = parser.parse_args(argv)
    if args.update_docs and args.only:
        parser.error(f"--update-docs puts one whole run in {SPEED_PAGE.relative_to(ROOT)}: leave out --only")
    if args.out is None:
        args.out = TRACKED_OUT if args.update_docs else DEFAULT_OUT
    return args


def checks(results: dict) -> list[dict[str, object]]:
    """Every target the issue sets, with this run's value; each name says which way is better."""
    found: list[dict[str, object]] = []

    def check(name: str, value: float, target: float, shown: str, higher: bool = False) -> None:
        better = "higher" if higher else "lower"
        found.append({"name": f"{name} ({better} is better)", "value": value, "target": target, "better": better,
                      "met": value >= target if higher else value <= target, "shown": shown})

    if "build" in results:
        build = results["build"]
        for ratio, label in BUILD_ROWS:
            if ratio in build["ratios"]:
                target = build_target(build, ratio)
                check(f"build time of {label}", build["ratios"][ratio], target, f"<= {target}x")
    if "matrix" in results:
        found.extend(matrix.checks(results["matrix"]))
    if "evaluation" in results:
        ratios, target = results["evaluation"]["ratios"], results["evaluation"]["target"]
        check("time per frame, keyframed playback, over the floor", ratios["ik_rigger_over_floor_keyframed_net"],
              target, f"<= {target}x")
        check("time per update, handles set from Python, over the floor", ratios["ik_rigger_over_floor_python_net"],
              target, f"<= {target}x")
        for mode, label in (("keyframed", "time per frame, keyframed playback"),
                            ("python", "time per update, handles set from Python")):
            check(f"{label}, without stretch, over the floor without stretch",
                  ratios[f"ik_rigger_without_stretch_over_floor_without_stretch_{mode}_net"], target, f"<= {target}x")
            if f"ik_rigger_hidden_chain_over_floor_hidden_chain_{mode}_net" in ratios:
                check(f"{label}, limbs on hidden chains, over the floor making the same hidden chains",
                      ratios[f"ik_rigger_hidden_chain_over_floor_hidden_chain_{mode}_net"], hidden_chain.TARGET,
                      f"<= {hidden_chain.TARGET}x")
    if "soft_ik" in results:
        ratios, target = results["soft_ik"]["ratios"], results["soft_ik"]["target"]
        for mode, label in (("keyframed", "time per frame, keyframed playback"),
                            ("python", "time per update, handles set from Python")):
            check(f"{label}, 4 limbs with soft IK, over the floor with the same soft IK",
                  ratios[f"soft_over_floor_{mode}_net"], target, f"<= {target}x")
    if "quality" in results:
        worst, targets = results["quality"]["worst"], results["quality"]["targets"]
        check("rotation at rest after building (degrees)", worst["rest_degrees"], targets["rest_degrees"],
              f"0 (<= {targets['rest_degrees']})")
        check("worst reach error (fraction of chain)", worst["reach_fraction"], targets["reach_fraction"],
              f"<= {targets['reach_fraction']:g}")
        check("knee/elbow flips (count)", worst["flips"], targets["flips"], "0")
    if "batch" in results and results["batch"].get("realistic"):
        heavy = results["batch"]["realistic"]
        targets = heavy["targets"]
        share = heavy["rig_over_open_save_per_file"]["median"]
        check("batch: rigging's share of open and save, realistic files", share, targets["rig_over_open_save"],
              f"<= {targets['rig_over_open_save']:.0%}")
        check("batch: how many times faster --jobs 2 is than --jobs 1, realistic files",
              heavy["speedup_over_one_job"]["jobs_2"], targets["speedup_jobs_2"],
              f">= {targets['speedup_jobs_2']}x", higher=True)
    if "bake" in results:
        result = results["bake"]
        check("bake time of four limbs over playing the frames", result["bake_over_play"]["median"],
              bake.TARGET_PLAY, f"<= {bake.TARGET_PLAY}x")
        check("how many times slower the snap-and-key loop is than the bake", result["loop_over_bake"]["median"],
              bake.TARGET_LOOP, f">= {bake.TARGET_LOOP}x", higher=True)
        check("how many times slower the bare frame_set and keyframe_insert loop is than the bake",
              result["bare_over_bake"]["median"], bake.TARGET_BARE, f">= {bake.TARGET_BARE}x", higher=True)
    if "export" in results:
        check("export of a four-limb rig's 455-frame clip to .glb over a plain bake-and-export script",
              results["export"]["export_over_plain"]["median"], export.TARGET, f"<= {export.TARGET}x")
    if "scaling" in results:
        result = results["scaling"]
        for name, series in result["series"].items():
            exponents = series["exponents"]
            check(f"scaling with {name}: growth exponent of the time, over the floor's", exponents["ik_rigger"],
                  exponents["floor"] + result["exponent_margin"], f"<= floor's + {result['exponent_margin']}")
        bones = result["series"].get("bones")
        for size in result["bones_target_sizes"] if bones else ():
            if str(size) in bones["ratios"]:
                check(f"Auto-Rig on {size} bones over three mode switches alone",
                      bones["ratios_over_others"]["switches"][str(size)]["median"], result["bones_target"],
                      f"<= {result['bones_target']}x")
        files = result["series"].get("files")
        if files and "per_unit" in files and "files_target" in result:
            check("the batch's cost per file beyond its fixed cost, over opening and saving a file",
                  _slope_ratio(files), result["files_target"], f"<= {result['files_target']}x")
    if "panel" in results:
        draw_ms = results["panel"]["draw"]["median"] * 1e3
        check("Build panel redraw time, 1,500 bones (ms)", draw_ms, panel.TARGET_MS, f"<= {panel.TARGET_MS} ms")
        if "aim" in results["panel"]:
            aim_ms = results["panel"]["aim"]["draw"]["median"] * 1e3
            check("Aim panel redraw time, 1,500 bones and an aim rig (ms)", aim_ms, panel.TARGET_MS,
                  f"<= {panel.TARGET_MS} ms")
    return found


# The build section's ratios with a target, and what each compares (in the checks and the table).
BUILD_ROWS = (
    ("api_over_floor", "4 limbs, API over the floor"),
    ("operator_over_floor_operator", "4 limbs, Auto-Rig operator over the floor as an operator"),
    ("api_without_stretch_over_floor_without_stretch",
     "4 limbs without stretch, API over the floor without stretch"),
    ("api_plain_over_floor_plain", "4 limbs with a plain script's options, API over the floor making the same"),
    ("operator_plain_over_floor_operator_plain",
     "4 limbs with a plain script's options, Auto-Rig operator over the floor making the same as an operator"),
)


def build_target(build: dict, ratio: str) -> float:
    """The target of one of the build section's ratios (a run from before the API's own target has one)."""
    return build["targets"][ratio] if "targets" in build else build["target"]


def _spread(stats: dict, scale: float, unit: str, digits: int) -> str:
    """``median unit (min–max)``: the figure and how far the repeats spread around it."""
    low, middle, high = (f"{stats[key] * scale:.{digits}f}" for key in ("min", "median", "max"))
    return f"{middle}{unit} ({low}–{high})"


def _ms(stats: dict) -> str:
    return _spread(stats, 1e3, " ms", 2)


def _us(stats: dict) -> str:
    return _spread(stats, 1e6, " us", 0)


def _x(stats: dict, digits: int = 2) -> str:
    return _spread(stats, 1.0, "x", digits)


def _rate(files: int, wall: dict) -> str:
    """Files per second from wall times: the slowest repeat gives the low end."""
    return f"{files / wall['median']:.1f} files/s ({files / wall['max']:.1f}–{files / wall['min']:.1f})"


def _met(value: float, target: float, spread: dict | None = None) -> str:
    """Whether the median meets the target: the median alone, so that a busy machine, which widens
    the spread (shown beside the figure), gives the same answer as an idle one."""
    return "yes" if value <= target else "**NO**"


def _per(stats: dict, size: int) -> str:
    """A time per unit of work with its spread, in the unit that suits it."""
    middle = stats["median"] / size
    scale, unit = (1.0, " s") if middle >= 1.0 else (1e3, " ms") if middle >= 1e-3 else (1e6, " us")
    digits = 2 if middle * scale < 100 else 0
    return _spread({key: stats[key] / size for key in ("min", "median", "max")}, scale, unit, digits)


def _slope_ratio(series: dict) -> float:
    """IK Rigger's time per further unit over the floor's (``scaling.per_unit``)."""
    slopes = series["per_unit"]
    return slopes["ik_rigger"] / slopes["floor"] if slopes["floor"] > 0 else math.inf


def _fixed_and_slope(series: dict, who: str) -> str:
    slope, fixed = series["per_unit"][who], series["fixed"][who]
    return f"{slope * 1e3:.2f} ms (of medians) a file, beyond a fixed {fixed:.2f} s (of medians)"


def scaling_rows(result: dict, diagnostics: bool = True) -> list[str]:
    """A row per scaling series (its growth exponent, IK Rigger's beside the floor's), and one per
    size with a target of its own (Auto-Rig on many bones)."""
    rows = []
    margin = result["exponent_margin"]
    for series in result["series"].values():
        sizes, unit, exponents = series["sizes"], series["unit"], series["exponents"]

        shown = sizes if diagnostics else [sizes[0], sizes[-1]]

        def per_unit(who: str, series: dict = series, shown: list = shown) -> str:
            return ", ".join(f"{_per(series['cpu_seconds'][who][str(size)], size)} at {size:,}" for size in shown)

        ratios = ", ".join(f"{_x(series['ratios'][str(size)])} at {size:,}" for size in shown)
        wall = series["wall_exponents"]
        shown_wall = f"; wall time's exponents {wall['ik_rigger']:.2f} and {wall['floor']:.2f}" if diagnostics else ""
        rows.append(f"| Scaling, {sizes[0]:,}–{sizes[-1]:,} {unit}s: {series['what']}; growth exponent of the CPU "
                    f"time (1: linear), lower is better | exponent {exponents['ik_rigger']:.2f}; per {unit}: "
                    f"{per_unit('ik_rigger')} | exponent {exponents['floor']:.2f}; per {unit}: {per_unit('floor')} | "
                    f"{ratios}{shown_wall} | <= floor's + {margin} | "
                    f"{_met(exponents['ik_rigger'], exponents['floor'] + margin)} |")
    bones = result["series"].get("bones")
    for size in result["bones_target_sizes"] if bones else ():
        if str(size) not in bones["ratios"]:
            continue
        cpu, ratio, target = bones["cpu_seconds"], bones["ratios"][str(size)], result["bones_target"]
        switches = bones["ratios_over_others"]["switches"][str(size)]
        # Runs of an earlier release measured no switches with a constraint.
        constrained = bones["ratios_over_others"].get("switches_constraint", {}).get(str(size))
        with_one = "" if constrained is None else (
            f"; switches and one constraint {_ms(cpu['switches_constraint'][str(size)])}")
        over_one = "" if constrained is None else f"; over switches and one constraint {_x(constrained)}"
        rows.append(f"| Scaling, Auto-Rig operator on {size:,} bones (a basic human among loose bones) against "
                    f"three mode switches alone (Edit, Object, Pose, as an operator), and beside the same with one "
                    f"constraint added (what any new constraint or driver costs Blender) and the floor operator "
                    f"making its four limbs: CPU time, lower is better | {_ms(cpu['ik_rigger'][str(size)])} | "
                    f"switches {_ms(cpu['switches'][str(size)])}{with_one}; floor operator "
                    f"{_ms(cpu['floor'][str(size)])} | {_x(switches)}{over_one}; over the floor operator {_x(ratio)} "
                    f"| <= {target}x | {_met(switches['median'], target)} |")
    files = result["series"].get("files")
    if files and "per_unit" in files and "files_target" in result:
        sizes, ratio, target = files["sizes"], _slope_ratio(files), result["files_target"]
        rows.append(f"| Batch, {sizes[0]}–{sizes[-1]} metarig files, `rig_batch.py --jobs 1` against opening and "
                    f"saving them in one process: the cost of each further file (the slope of CPU time against "
                    f"the files; the fixed cost apart), lower is better | {_fixed_and_slope(files, 'ik_rigger')} | "
                    f"{_fixed_and_slope(files, 'floor')} | {ratio:.2f}x (of medians) | <= {target}x | "
                    f"{_met(ratio, target)} |")
    return rows


def table(results: dict, diagnostics: bool = True) -> str:
    """The markdown summary: IK Rigger, the floor, their ratio, the target.

    Without ``diagnostics``, only the rows docs/speed.md shows: the targets and the context.
    """
    rows = ["| Measure | IK Rigger | Floor | Ratio | Target | Met |", "|---|---|---|---|---|---|"]
    if "build" in results:
        build = results["build"]
        seconds, ratios, spreads = build["seconds"], build["ratios"], build["ratio_spreads"]
        for label, top, bottom, ratio in (
                ("Build 4 limbs, `build_limbs` API: CPU time, lower is better", "ik_rigger_api", "floor",
                 "api_over_floor"),
                ("Build 4 limbs, Auto-Rig operator (finds the limbs too) against the floor as an operator: CPU time, "
                 "lower is better",
                 "ik_rigger_operator", "floor_operator", "operator_over_floor_operator"),
                ("Build 4 limbs without stretch (Maximum Stretch 1), `build_many` API, against the floor without "
                 "stretch, which makes the same drivers too: CPU time, lower is better",
                 "ik_rigger_api_without_stretch", "floor_without_stretch",
                 "api_without_stretch_over_floor_without_stretch"),
                ("Build 4 limbs with a plain script's options (no shapes, no pole lines, Maximum Stretch 1), "
                 "`build_many` API, against the floor making the same: CPU time, lower is better",
                 "ik_rigger_api_plain", "floor_plain", "api_plain_over_floor_plain"),
                ("Build 4 limbs with a plain script's options, Auto-Rig operator against the floor making the same as "
                 "an operator: CPU time, lower is better",
                 "ik_rigger_operator_plain", "floor_operator_plain", "operator_plain_over_floor_operator_plain")):
            if ratio not in ratios:  # a run from before the plain options' rows
                continue
            target = build_target(build, ratio)
            wall = build.get("wall_ratio_spreads", {}).get(ratio)
            shown_wall = f"; wall time {wall['median']:.2f}x" if diagnostics and wall else ""
            rows.append(f"| {label} | {_ms(seconds[top])} | {_ms(seconds[bottom])} | "
                        f"{_x(spreads[ratio])}{shown_wall} | <= {target}x | "
                        f"{_met(ratios[ratio], target, spreads[ratio])} |")
        if "plan_over_floor" in spreads:  # a run from before the row
            rows.append("| Planning alone, 4 limbs (`plan_limbs`, a dry run: the skeleton read, every check and each "
                        "limb's plan, nothing changed) against the floor's whole build: CPU time (context, no "
                        "target: within 1.25x, all IK Rigger does beyond the floor's work fits in a quarter of the "
                        "floor's time) | "
                        f"{_ms(seconds['ik_rigger_plan'])} | {_ms(seconds['floor'])} | "
                        f"{_x(spreads['plan_over_floor'])} | - | - |")
        if diagnostics:
            rows.append(f"| Build 4 limbs, `build_limbs` API from Pose mode: time (diagnostic) | "
                        f"{_ms(seconds['ik_rigger_api_from_pose'])} | {_ms(seconds['floor_from_pose'])} | "
                        f"{_x(spreads['api_from_pose_over_floor_from_pose'])} | - | - |")
            rows.append("| The floor as an operator over the floor script: time (diagnostic: what an operator costs) "
                        f"| - | {_ms(seconds['floor_operator'])} | "
                        f"{_x(spreads['floor_operator_over_floor_from_pose'])} | - | - |")
        contexts = (("human", "human"), ("basic human", "basic_human")) if diagnostics else (("human", "human"),)
        for label, key in contexts:
            rigify = build["rigify_generate_seconds"][key]
            runs = f"{rigify['repeats']} run" + ("s" if rigify["repeats"] != 1 else "")
            rows.append(f"| Rigify generate, {label} metarig ({runs}): time (context, no target) | Rigify: "
                        f"{_spread(rigify, 1.0, ' s', 2)} | {_ms(seconds['floor'])} | "
                        f"{ratios[f'rigify_{key}_over_floor']:.0f}x (of medians) | - | - |")
    if "matrix" in results:
        rows.extend(matrix.table_rows(results["matrix"], _per, _x))
    if "evaluation" in results:
        evaluation_result = results["evaluation"]
        frames, ratios, spreads, target = (evaluation_result["seconds_per_frame"], evaluation_result["ratios"],
                                           evaluation_result["ratio_spreads"], evaluation_result["target"])
        for mode, label in (("keyframed", "Frame step, keyframed playback: CPU time per frame, lower is better"),
                            ("python", "Update, handles set from Python: CPU time per update, lower is better")):
            for rig, floor_rig, what in (("ik_rigger", "floor", ""),
                                         ("ik_rigger_without_stretch", "floor_without_stretch",
                                          " (without stretch, against the floor without stretch with the same "
                                          "drivers)")):
                name = f"{rig}_over_{floor_rig}_{mode}_net"
                rows.append(f"| {label}{what} | {_us(frames[rig][mode])} | {_us(frames[floor_rig][mode])} | "
                            f"{_x(spreads[name], 3)} | <= {target}x | {_met(ratios[name], target, spreads[name])} |")
            name, hidden = f"ik_rigger_hidden_chain_over_floor_hidden_chain_{mode}_net", hidden_chain.TARGET
            if name in ratios:  # a run from before the hidden chain's rows has none
                rows.append(f"| {label} (limbs on hidden chains, bones off their joints, against the floor making "
                            f"the same hidden chains) | {_us(frames['ik_rigger_hidden_chain'][mode])} | "
                            f"{_us(frames['floor_hidden_chain'][mode])} | {_x(spreads[name], 3)} | <= {hidden}x | "
                            f"{_met(ratios[name], hidden, spreads[name])} |")
        contexts = (("keyframed", "keyframed"), ("python", "Python-driven")) if diagnostics else (
            ("keyframed", "keyframed"),)
        for mode, label in contexts:
            rows.append(f"| Rigify's rig, {label}: time per frame (context, no target) | "
                        f"Rigify: {_us(frames['rigify'][mode])} | "
                        f"{_us(frames['floor'][mode])} | {_x(spreads[f'rigify_over_floor_{mode}_net'], 1)} | - | - |")
        if diagnostics:
            for name, label in (("ik_rigger_without_drivers",
                                 "IK Rigger's rig less its drivers: time per frame"),
                                ("ik_rigger_without_drivers_and_record",
                                 "IK Rigger's rig less its drivers and record: time per frame")):
                # Over the floor less its drivers (a run from before it: over the floor).
                other = "floor_without_drivers" if "floor_without_drivers" in frames else "floor"
                keyframed, python = (_x(spreads[f"{name}_over_{other}_{mode}_net"], 3)
                                     for mode in ("keyframed", "python"))
                rows.append(f"| {label}, over the floor {'less its drivers ' if other != 'floor' else ''}"
                            f"(diagnostic) | - | - | keyframed {keyframed}, Python {python} | - | - |")
            empty = frames["empty"]
            rows.append(f"| Empty scene step: time, taken out of the ratios | - | keyframed {_us(empty['keyframed'])}, "
                        f"Python {_us(empty['python'])} | - | - | - |")
    if "soft_ik" in results:
        rows.extend(soft_ik.table_rows(results["soft_ik"], _us, _x, _met))
    if "quality" in results:
        result = results["quality"]
        worst, targets = result["worst"], result["targets"]
        skeletons = len(result["skeletons"])
        targets_total = sum(entry["targets"] for entry in result["skeletons"])
        rows.append(f"| Rotation at rest after building, worst bone of {skeletons} skeletons: lower is better | "
                    f"{worst['rest_degrees']:.2g} deg | - | - | 0 (<= {targets['rest_degrees']}) | "
                    f"{_met(worst['rest_degrees'], targets['rest_degrees'])} |")
        rows.append(f"| Reach error, worst of {targets_total} reachable targets (fixed seed): lower is better | "
                    f"{worst['reach_fraction']:.2g} of chain | - | - | <= {targets['reach_fraction']:g} | "
                    f"{_met(worst['reach_fraction'], targets['reach_fraction'])} |")
        rows.append(f"| Knee/elbow flips over the same targets: fewer is better | {worst['flips']} | - | - | 0 | "
                    f"{_met(worst['flips'], targets['flips'])} |")
    if "bake" in results:
        result = results["bake"]
        frames, limbs = result["frames"], result["limbs"]
        rows.append(f"| Bake {limbs} limbs of a {frames}-frame capture, FK to IK: time, lower is better | "
                    f"{_ms(result['bake'])} | "
                    f"playing the frames: {_ms(result['play'])} | {_x(result['bake_over_play'])} | "
                    f"<= {bake.TARGET_PLAY}x | {_met(result['bake_over_play']['median'], bake.TARGET_PLAY)} |")
        rows.append(f"| The same bake by snapping and keying each frame: how many times slower that loop is, higher is "
                    f"better | {_ms(result['bake'])} | "
                    f"loop: {_ms(result['key_loop'])} | loop / bake {_x(result['loop_over_bake'], 1)} | "
                    f">= {bake.TARGET_LOOP}x | "
                    f"{'yes' if result['loop_over_bake']['median'] >= bake.TARGET_LOOP else '**NO**'} |")
        rows.append(f"| The same bake by the bare loop a user writes (`frame_set` on each frame, each limb's handle "
                    f"and pole set to the chain end's pose and keyed with `keyframe_insert`): how many times slower "
                    f"that loop is, higher is better | {_ms(result['bake'])} | "
                    f"bare loop: {_ms(result['bare_loop'])} | loop / bake {_x(result['bare_over_bake'], 1)} | "
                    f">= {bake.TARGET_BARE}x | "
                    f"{'yes' if result['bare_over_bake']['median'] >= bake.TARGET_BARE else '**NO**'} |")
    if "export" in results:
        result = results["export"]
        rows.append(f"| Export {result['limbs']} limbs' rig with a {result['frames']}-frame clip to .glb "
                    f"(`api.export`) against a plain script (a copy, `nla.bake` of its deform bones, the rest "
                    f"deleted, glTF's exporter): time, lower is better | {_ms(result['export'])} | "
                    f"script: {_ms(result['plain_script'])} | {_x(result['export_over_plain'])} | "
                    f"<= {export.TARGET}x | {_met(result['export_over_plain']['median'], export.TARGET)} |")
    if "panel" in results:
        result = results["panel"]
        draw_ms = result["draw"]["median"] * 1e3
        rows.append(f"| Build panel redraw, {result['bones']} bones (first draw after a change: "
                    f"{result['first_draw'] * 1e3:.1f} ms): time, lower is better | "
                    f"{_spread(result['draw'], 1e3, ' ms', 3)} | - | - | "
                    f"<= {panel.TARGET_MS} ms | {_met(draw_ms, panel.TARGET_MS)} |")
    if "batch" in results:
        result = results["batch"]
        for size in result["sizes"]:
            count = size["files"]
            walls = size["wall_seconds"]
            for jobs in result["job_counts"]:
                key = f"jobs_{jobs}"
                # The batch section keeps the median of its per-repeat ratios only: no spread to show.
                ratio = f"{size['wall_over_floor'][key]:.2f}x time" if diagnostics else "-"
                rows.append(f"| Batch, {count} files, --jobs {jobs} ({walls[key]['repeats']} runs): files per second, "
                            "higher is better | "
                            f"{_rate(count, walls[key])} | open+save: {_rate(count, walls['floor'])} | {ratio} | "
                            "- | - |")
        if diagnostics:
            largest = result["sizes"][-1]
            per_file = largest["per_file_seconds"]
            rows.append(f"| Rigging per file, beyond open+save ({largest['files']} files; medians over files): time | "
                        f"{per_file['rig_ik_rigger'] * 1e3:.1f} ms | "
                        f"{per_file['open_plus_save_ik_rigger'] * 1e3:.1f} ms open+save | "
                        f"{largest['rig_over_open_save']:.2f}x | - | - |")
        heavy = result.get("realistic")
        if heavy:
            share, targets = heavy["rig_over_open_save_per_file"], heavy["targets"]
            label = (f"{heavy['files']} characters of {heavy['file_megabytes']:.0f} MB ({heavy['mesh_vertices']:,} "
                     f"vertices, {heavy['shape_keys']} shape keys)")
            rows.append(f"| Batch, {label}: rigging's share of each file's open and save, lower is better | "
                        f"{_spread(share, 100.0, ' %', 1)} | - | - | <= {targets['rig_over_open_save'] * 100:.0f} % | "
                        f"{_met(share['median'], targets['rig_over_open_save'], share)} |")
            speedup = heavy["speedup_over_one_job"]["jobs_2"]
            spread = heavy["speedup_over_one_job_spread"]["jobs_2"]
            ceiling = heavy.get("floor_speedup_in_two_processes_spread")
            shown = f"open+save alone in two processes: {_x(ceiling)} faster" if ceiling else "-"
            rows.append("| Batch, same characters: how many times faster --jobs 2 is than --jobs 1 "
                        f"({heavy['cores']} cores), higher is better | "
                        f"{_x(spread)} faster | {shown} | - | >= {targets['speedup_jobs_2']}x | "
                        f"{'yes' if speedup >= targets['speedup_jobs_2'] else '**NO**'} |")
            started = heavy.get("speedup_after_startup_spread", {}).get("jobs_2")
            if started:
                rows.append("| Batch, the same runs from the first file to the last (Blender started): how many times "
                            f"faster --jobs 2 is than --jobs 1 (context, no target) | {_x(started)} faster "
                            "| - | - | - | - |")
        rows.append(f"| Blender start-up, paid by every process: time (context, no target) | - | "
                    f"{_spread(result['startup_seconds'], 1.0, ' s', 2)} | - | - | - |")
    if "scaling" in results:
        rows.extend(scaling_rows(results["scaling"], diagnostics))
    return "\n".join(rows)


def table_block(results: dict, machine: str, quick: bool, seconds: float) -> str:
    """What goes between the speed page's markers: how to read the table, the machine, the table."""
    kind = "`scripts/benchmark.sh --quick`" if quick else "`scripts/benchmark.sh`"
    return (f"Latest run, {kind}, which took {seconds:.0f} s on: {machine}. Each timing and ratio is the median "
            "of its repeats with their min–max in brackets; a ratio is the median of per-repeat ratios.\n\n"
            f"{table(results, diagnostics=False)}")


def readme_block(results: dict, machine: str) -> str:
    """What goes between README's markers: the rows of ``README_ROWS`` from the same run, and the machine."""
    rows = table(results, diagnostics=False).splitlines()
    shown = rows[:2] + [row for row in rows[2:] if row.startswith(README_ROWS)]
    return (f"From the latest full run on {machine} (medians, min–max in brackets; "
            "[docs/speed.md](docs/speed.md) has the whole table):\n\n" + "\n".join(shown))


def update_page(text: str, block: str, page: str = SPEED_PAGE.name) -> str:
    """``text`` with what lies between the benchmark-table markers replaced by ``block``."""
    if text.count(TABLE_START) != 1 or text.count(TABLE_END) != 1 or text.index(TABLE_START) > text.index(TABLE_END):
        raise SystemExit(f"{page} must hold the lines {TABLE_START!r} and {TABLE_END!r} once each, "
                         "in that order")
    before, rest = text.split(TABLE_START)
    _, after = rest.split(TABLE_END)
    return f"{before}{TABLE_START}\n{block}\n{TABLE_END}{after}"


def write_plots(results: dict, machine: str, out: Path) -> list[Path]:
    """One PNG for each section of ``results`` that has a plot (not every section does); the paths written."""
    written = []
    for name in results:
        if name in PLOTS:
            PLOTS[name](results[name], machine, out / f"{name}.png")
            written.append(out / f"{name}.png")
    return written


def floor_check(build: dict) -> str:
    """Whether the floor made IK Rigger's rig: without that the build ratios compare different work."""
    entries = build["same_rig"].values()
    matrix = max(entry["max_matrix_difference"] for entry in entries)
    angle = max(entry["max_pole_angle_difference_degrees"] for entry in entries)
    if all(entry["same"] for entry in entries):
        return (f"Floor check: the floors made the same bones, constraints, shapes and drivers as IK Rigger "
                f"(largest rest matrix difference {matrix:.1g}, pole angles within {angle:.1g} degree).")
    problems = "; ".join(problem for entry in entries for problem in entry["problems"])
    return f"Floor check FAILED: the floor's rig is not IK Rigger's, so the build ratios mean nothing ({problems})."


def _profile_text(rows: list[dict]) -> str:
    lines = ["| function | calls per build | own time | with callees |", "|---|---|---|---|"]
    lines.extend(f"| `{row['function']}` | {row['calls']} | {row['own_share']:.0%} | {row['cumulative_share']:.0%} |"
                 for row in rows)
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = parse(argv)
    settings = common.QUICK if args.quick else common.FULL
    chosen = args.only or list(SECTIONS)
    common.register_ik_rigger()
    floor.register()
    info = common.machine()
    started = time.perf_counter()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as temporary:
        sources = Path(temporary)
        print("preparing Rigify's metarigs and generated rig...", flush=True)
        common.make_sources(sources)
        for name in chosen:
            section_started = time.perf_counter()
            print(f"running {name}...", flush=True)
            results[name] = (scaling.run(sources, settings, args.series) if name == "scaling"
                             else SECTIONS[name](sources, settings))
            print(f"  {name} took {time.perf_counter() - section_started:.0f} s", flush=True)
        profiles = {}
        if "build" in results:
            build = results["build"]
            for variant, ratio in (("ik_rigger_api", "api_over_floor"),
                                   ("ik_rigger_operator", "operator_over_floor_operator")):
                if args.profile or build["ratios"][ratio] > build_target(build, ratio):
                    profiles[variant] = build_speed.profile(sources, variant, settings.build_repeats)
            results["build"]["profile"] = profiles
    found = checks(results)
    seconds = time.perf_counter() - started
    document = {"machine": info, "quick": args.quick, "settings": asdict(settings), "seconds": seconds,
                "checks": found, **results}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    machine = common.machine_line(info)
    plotted = write_plots(results, machine, args.out)

    print()
    print(f"Machine: {machine}" + (" (--quick)" if args.quick else ""))
    print()
    print(table(results))
    missed = [entry for entry in found if not entry["met"]]
    print()
    if "build" in results:
        print(floor_check(results["build"]))
    if "matrix" in results:
        print(matrix.floor_check(results["matrix"]))
    if missed:
        print(f"IK Rigger MISSES {len(missed)} of {len(found)} targets:")
        for entry in missed:
            value = "no value" if entry["value"] is None else f"{entry['value']:.3g}"
            print(f"  - {entry['name']}: {value} (target {entry['shown']})")
    else:
        print(f"IK Rigger meets all {len(found)} targets.")
    for variant, rows in profiles.items():
        print(f"\nWhere {variant} spends its build time (cProfile, {settings.build_repeats} builds):\n")
        print(_profile_text(rows))
    print(f"\nWrote {len(plotted)} plot(s) and latest.json to {_shown(args.out)} in {seconds:.0f} s.")
    if args.update_docs:
        block = table_block(results, machine, args.quick, seconds)
        SPEED_PAGE.write_text(update_page(SPEED_PAGE.read_text(encoding="utf-8"), block), encoding="utf-8")
        if not args.quick:  # README shows a full run's figures only
            README_PAGE.write_text(update_page(README_PAGE.read_text(encoding="utf-8"), readme_block(results, machine),
                                               README_PAGE.name), encoding="utf-8")
        print(f"Updated the table in {_shown(SPEED_PAGE)}" + ("." if args.quick else f" and {_shown(README_PAGE)}."))
    return 0


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it: no machine paths in what is printed."""
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
