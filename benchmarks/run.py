"""IK Rigger against what Blender allows: build, evaluation, IK quality and batch, side by side in one run.

    scripts/benchmark.sh [--quick] [--only SECTION ...] [--profile] [--out DIR]
    .venvs/blender-5.2/bin/python benchmarks/run.py [the same]

Writes ``latest.json`` and one PNG per section into ``benchmarks/results/`` (or --out)
and prints a markdown table. Every ratio compares things measured in this run, on this
machine; absolute times are printed with the machine they came from. See
benchmarks/README.md for what each section measures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import batch, build_speed, common, evaluation, plots, quality  # noqa: E402

SECTIONS: dict[str, Callable[[Path, common.Settings], dict]] = {
    "build": build_speed.run,
    "evaluation": evaluation.run,
    "quality": quality.run,
    "batch": batch.run,
}
PLOTS: dict[str, Callable[[dict, str, Path], None]] = {
    "build": plots.build,
    "evaluation": plots.evaluation,
    "quality": plots.quality,
    "batch": plots.batch,
}


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and targets: about a minute")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), help="run only these sections")
    parser.add_argument("--profile", action="store_true",
                        help="profile IK Rigger's build even when it meets its target")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results",
                        help="folder for latest.json and the plots")
    return parser.parse_args(argv)


def checks(results: dict) -> list[dict[str, object]]:
    """Every target the issue sets, with this run's value."""
    found: list[dict[str, object]] = []

    def check(name: str, value: float, target: float, shown: str) -> None:
        found.append({"name": name, "value": value, "target": target, "met": value <= target, "shown": shown})

    if "build" in results:
        build = results["build"]
        ratios, target = build["ratios"], build["target"]
        check("build, API over floor", ratios["api_over_floor"], target, f"<= {target}x")
        check("build, Auto-Rig operator over floor (both from Pose mode)", ratios["operator_over_floor"], target,
              f"<= {target}x")
    if "evaluation" in results:
        ratios, target = results["evaluation"]["ratios"], results["evaluation"]["target"]
        check("per frame, keyframed playback, over floor", ratios["ik_rigger_over_floor_keyframed_net"], target,
              f"<= {target}x")
        check("per update, Python-driven, over floor", ratios["ik_rigger_over_floor_python_net"], target,
              f"<= {target}x")
    if "quality" in results:
        worst, targets = results["quality"]["worst"], results["quality"]["targets"]
        check("rotation at rest after building (degrees)", worst["rest_degrees"], targets["rest_degrees"],
              f"0 (<= {targets['rest_degrees']})")
        check("worst reach error (fraction of chain)", worst["reach_fraction"], targets["reach_fraction"],
              f"<= {targets['reach_fraction']:g}")
        check("knee/elbow flips", worst["flips"], targets["flips"], "0")
    return found


def _ms(stats: dict) -> str:
    return f"{stats['median'] * 1e3:.2f} ms (min {stats['min'] * 1e3:.2f})"


def _us(stats: dict) -> str:
    return f"{stats['median'] * 1e6:.0f} us (min {stats['min'] * 1e6:.0f})"


def _met(value: float, target: float) -> str:
    return "yes" if value <= target else "**NO**"


def table(results: dict) -> str:
    """The markdown summary: IK Rigger, the floor, their ratio, the target."""
    rows = ["| Measure | IK Rigger | Floor | Ratio | Target | Met |", "|---|---|---|---|---|---|"]
    if "build" in results:
        build = results["build"]
        seconds, ratios, target = build["seconds"], build["ratios"], build["target"]
        rows.append(f"| Build 4 limbs, `build_limbs` API (Object mode) | {_ms(seconds['ik_rigger_api'])} | "
                    f"{_ms(seconds['floor'])} | {ratios['api_over_floor']:.2f}x | <= {target}x | "
                    f"{_met(ratios['api_over_floor'], target)} |")
        rows.append(f"| Build 4 limbs, Auto-Rig operator (Pose mode) | {_ms(seconds['ik_rigger_operator'])} | "
                    f"{_ms(seconds['floor_from_pose'])} | {ratios['operator_over_floor']:.2f}x | <= {target}x | "
                    f"{_met(ratios['operator_over_floor'], target)} |")
        rows.append(f"| Build 4 limbs, `build_limbs` API (Pose mode; diagnostic) | "
                    f"{_ms(seconds['ik_rigger_api_from_pose'])} | {_ms(seconds['floor_from_pose'])} | "
                    f"{ratios['api_from_pose_over_floor_from_pose']:.2f}x | - | - |")
        rows.append(f"| Build 4 limbs, Auto-Rig operator over floor + one depsgraph update (diagnostic) | "
                    f"{_ms(seconds['ik_rigger_operator'])} | {_ms(seconds['floor_from_pose_and_update'])} | "
                    f"{ratios['operator_over_floor_from_pose_and_update']:.2f}x | - | - |")
        for label, key in (("human", "human"), ("basic human", "basic_human")):
            rows.append(f"| Rigify generate, {label} metarig (context) | Rigify: "
                        f"{_ms(build['rigify_generate_seconds'][key])} | {_ms(seconds['floor'])} | "
                        f"{ratios[f'rigify_{key}_over_floor']:.0f}x | - | - |")
    if "evaluation" in results:
        evaluation_result = results["evaluation"]
        frames, ratios, target = (evaluation_result["seconds_per_frame"], evaluation_result["ratios"],
                                  evaluation_result["target"])
        for mode, label in (("keyframed", "Frame step, keyframed playback"),
                            ("python", "Update, handles set from Python")):
            net = ratios[f"ik_rigger_over_floor_{mode}_net"]
            rows.append(f"| {label} | {_us(frames['ik_rigger'][mode])} | {_us(frames['floor'][mode])} | "
                        f"{net:.3f}x | <= {target}x | {_met(net, target)} |")
        for mode, label in (("keyframed", "keyframed"), ("python", "Python-driven")):
            rows.append(f"| Rigify's rig, {label} (context) | Rigify: {_us(frames['rigify'][mode])} | "
                        f"{_us(frames['floor'][mode])} | {ratios[f'rigify_over_floor_{mode}_net']:.1f}x | - | - |")
        for name, label in (("ik_rigger_without_drivers", "IK Rigger's rig less its influence drivers"),
                            ("ik_rigger_without_drivers_and_record", "IK Rigger's rig less its drivers and record")):
            keyframed, python = (ratios[f"{name}_over_floor_{mode}_net"] for mode in ("keyframed", "python"))
            rows.append(f"| {label} (diagnostic) | - | - | keyframed {keyframed:.3f}x, Python {python:.3f}x | - | - |")
        empty = frames["empty"]
        rows.append(f"| Empty scene step, taken out of the ratios | - | keyframed {_us(empty['keyframed'])}, "
                    f"Python {_us(empty['python'])} | - | - | - |")
    if "quality" in results:
        result = results["quality"]
        worst, targets = result["worst"], result["targets"]
        skeletons = len(result["skeletons"])
        targets_total = sum(entry["targets"] for entry in result["skeletons"])
        rows.append(f"| Rotation at rest after building, worst bone of {skeletons} skeletons | "
                    f"{worst['rest_degrees']:.2g} deg | - | - | 0 (<= {targets['rest_degrees']}) | "
                    f"{_met(worst['rest_degrees'], targets['rest_degrees'])} |")
        rows.append(f"| Reach error, worst of {targets_total} reachable targets | "
                    f"{worst['reach_fraction']:.2g} of chain | - | - | <= {targets['reach_fraction']:g} | "
                    f"{_met(worst['reach_fraction'], targets['reach_fraction'])} |")
        rows.append(f"| Knee/elbow flips over the same targets | {worst['flips']} | - | - | 0 | "
                    f"{_met(worst['flips'], targets['flips'])} |")
    if "batch" in results:
        result = results["batch"]
        for size in result["sizes"]:
            count = size["files"]
            floor_rate = size["files_per_second"]["floor"]
            for jobs in result["job_counts"]:
                key = f"jobs_{jobs}"
                rows.append(f"| Batch, {count} files, --jobs {jobs} | {size['files_per_second'][key]:.1f} files/s | "
                            f"{floor_rate:.1f} files/s (open+save) | {size['wall_over_floor'][key]:.2f}x time | "
                            "- | - |")
        largest = result["sizes"][-1]
        per_file = largest["per_file_seconds"]
        rows.append(f"| Rigging per file, beyond open+save ({largest['files']} files) | "
                    f"{per_file['rig_ik_rigger'] * 1e3:.1f} ms | "
                    f"{per_file['open_plus_save_ik_rigger'] * 1e3:.1f} ms open+save | "
                    f"{largest['rig_over_open_save']:.2f}x | - | - |")
        rows.append(f"| Blender start-up, paid by every process | - | {result['startup_seconds']['median']:.2f} s | "
                    "- | - | - |")
    return "\n".join(rows)


def floor_check(build: dict) -> str:
    """Whether the floor made IK Rigger's rig: without that the build ratios compare different work."""
    entries = build["same_rig"].values()
    matrix = max(entry["max_matrix_difference"] for entry in entries)
    angle = max(entry["max_pole_angle_difference_degrees"] for entry in entries)
    if all(entry["same"] for entry in entries):
        return (f"Floor check: the floor made the same bones and constraints as IK Rigger (largest rest matrix "
                f"difference {matrix:.1g}, pole angles within {angle:.1g} degree).")
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
            results[name] = SECTIONS[name](sources, settings)
            print(f"  {name} took {time.perf_counter() - section_started:.0f} s", flush=True)
        profiles = {}
        if "build" in results:
            ratios, target = results["build"]["ratios"], results["build"]["target"]
            for variant, ratio in (("ik_rigger_api", ratios["api_over_floor"]),
                                   ("ik_rigger_operator", ratios["operator_over_floor"])):
                if args.profile or ratio > target:
                    profiles[variant] = build_speed.profile(sources, variant, settings.build_repeats)
            results["build"]["profile"] = profiles
    found = checks(results)
    seconds = time.perf_counter() - started
    document = {"machine": info, "quick": args.quick, "settings": asdict(settings), "seconds": seconds,
                "checks": found, **results}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    machine = common.machine_line(info)
    for name in results:
        PLOTS[name](results[name], machine, args.out / f"{name}.png")

    print()
    print(f"Machine: {machine}" + (" (--quick)" if args.quick else ""))
    print()
    print(table(results))
    missed = [entry for entry in found if not entry["met"]]
    print()
    if "build" in results:
        print(floor_check(results["build"]))
    if missed:
        print(f"IK Rigger MISSES {len(missed)} of {len(found)} targets:")
        for entry in missed:
            print(f"  - {entry['name']}: {entry['value']:.3g} (target {entry['shown']})")
    else:
        print(f"IK Rigger meets all {len(found)} targets.")
    for variant, rows in profiles.items():
        print(f"\nWhere {variant} spends its build time (cProfile, {settings.build_repeats} builds):\n")
        print(_profile_text(rows))
    print(f"\nWrote {len(results)} plot(s) and latest.json to {args.out} in {seconds:.0f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
