"""One PNG per section, drawn from the results alone: ratios against their targets, and counts.

A ratio's bar is its median over the repeats; its whisker spans the repeats' min to max.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display, and the same output everywhere

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullLocator  # noqa: E402

MET, MISSED, CONTEXT = "#3a7d44", "#c0392b", "#7f8c8d"


def _bars(axes: Axes, labels: list[str], values: list[float], target: float | list[float] | None, title: str,
          ylabel: str, *, log: bool = False, fmt: str = "{:.2f}x", spreads: list[dict | None] | None = None) -> None:
    """Bars against one target (a dashed line) or a target per bar (a dashed stroke over each)."""
    targets = target if isinstance(target, list) else [target] * len(values)
    colours = [CONTEXT if goal is None else (MET if value <= goal else MISSED) for value, goal in zip(values, targets)]
    bars = axes.bar(labels, values, color=colours)
    if spreads:
        for index, (value, spread) in enumerate(zip(values, spreads)):
            if spread is not None:
                axes.errorbar(index, value, yerr=[[value - spread["min"]], [spread["max"] - value]], color="black",
                              capsize=4, linewidth=1)
    axes.bar_label(bars, labels=[fmt.format(value) for value in values], padding=2, fontsize=8)
    if isinstance(target, list):
        for index, goal in enumerate(target):
            axes.hlines(goal, index - 0.45, index + 0.45, color="black", linestyle="--", linewidth=1,
                        label="target" if index == 0 else None)
        axes.legend(loc="upper left", fontsize=8)
    elif target is not None:
        axes.axhline(target, color="black", linestyle="--", linewidth=1, label=f"target {fmt.format(target)}")
        axes.legend(loc="upper left", fontsize=8)
    if log:
        axes.set_yscale("log")
    else:
        highs = [spread["max"] for spread in spreads or [] if spread is not None]
        axes.set_ylim(0, max([*values, *highs, *(goal or 0.0 for goal in targets)]) * 1.25 or 1.0)
    axes.set_title(title, fontsize=10)
    axes.set_ylabel(ylabel, fontsize=9)
    axes.tick_params(axis="x", labelsize=8)


def _save(figure: Figure, machine: str, path: Path) -> None:
    figure.text(0.01, 0.01, machine, fontsize=7, color="#555555")
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    figure.savefig(path, dpi=90)
    plt.close(figure)


def build(result: dict, machine: str, path: Path) -> None:
    ratios, spreads = result["ratios"], result["ratio_spreads"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    compared = [name for name in ("api_over_floor", "api_plain_over_floor_plain", "operator_over_floor_operator",
                                  "operator_plain_over_floor_operator_plain") if name in ratios]
    labels = {"api_over_floor": "API", "api_plain_over_floor_plain": "API,\nplain options",
              "operator_over_floor_operator": "Auto-Rig operator", "operator_plain_over_floor_operator_plain":
              "Auto-Rig operator,\nplain options"}
    # A run from before the API's own target has one for both.
    targets = [result["targets"][name] if "targets" in result else result["target"] for name in compared]
    _bars(left, [labels[name] for name in compared], [ratios[name] for name in compared], targets,
          "IK Rigger's build time over the floor making the same", "time / floor",
          spreads=[spreads[name] for name in compared])
    _bars(right, ["IK Rigger API", "Rigify, basic human", "Rigify, human"],
          [ratios["api_over_floor"], ratios["rigify_basic_human_over_floor"], ratios["rigify_human_over_floor"]],
          None, "For context: Rigify's generator (log scale)", "time / floor", log=True, fmt="{:.1f}x")
    _save(figure, machine, path)


def evaluation(result: dict, machine: str, path: Path) -> None:
    ratios, spreads = result["ratios"], result["ratio_spreads"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    compared = ("ik_rigger_over_floor_keyframed_net", "ik_rigger_over_floor_python_net")
    _bars(left, ["keyframed\nplayback", "Python-driven\nupdates"], [ratios[name] for name in compared],
          result["target"], "IK Rigger's rig: time per frame over the floor rig's", "time / floor (empty scene out)",
          spreads=[spreads[name] for name in compared])
    _bars(right, ["IK Rigger,\nkeyframed", "Rigify,\nkeyframed", "IK Rigger,\nPython", "Rigify,\nPython"],
          [ratios["ik_rigger_over_floor_keyframed_net"], ratios["rigify_over_floor_keyframed_net"],
           ratios["ik_rigger_over_floor_python_net"], ratios["rigify_over_floor_python_net"]],
          None, "For context: Rigify's generated rig", "time / floor (empty scene out)", fmt="{:.1f}x")
    _save(figure, machine, path)


def quality(result: dict, machine: str, path: Path) -> None:
    skeletons = result["skeletons"]
    labels = [entry["skeleton"].replace("_", "\n", 1) for entry in skeletons]
    targets = result["targets"]
    figure, axes = plt.subplots(1, 3, figsize=(12, 4))
    _bars(axes[0], labels, [entry["rest_degrees"] for entry in skeletons], targets["rest_degrees"],
          "Largest rotation at rest after building", "degrees", fmt="{:.3g}")
    _bars(axes[1], labels, [entry["worst_reach_fraction"] for entry in skeletons], targets["reach_fraction"],
          "Worst reach error over the sweep", "fraction of chain length", fmt="{:.2g}")
    _bars(axes[2], labels, [entry["flips"] for entry in skeletons], targets["flips"],
          f"Knee/elbow flips ({skeletons[0]['targets']} targets each)", "count", fmt="{:.0f}")
    _save(figure, machine, path)


def batch(result: dict, machine: str, path: Path) -> None:
    figure, axes = plt.subplots(figsize=(7, 4))
    jobs = result["job_counts"]
    for size in result["sizes"]:
        # Throughput relative to opening and saving the same files in one process.
        relative = [1.0 / size["wall_over_floor"][f"jobs_{count}"] for count in jobs]
        axes.plot(jobs, relative, marker="o", label=f"{size['files']} files")
        for count, value in zip(jobs, relative):
            axes.annotate(f"{value:.2f}", (count, value), textcoords="offset points", xytext=(5, 5), fontsize=8)
    axes.axhline(1.0, color="black", linestyle="--", linewidth=1, label="open + save only, 1 process")
    axes.set_xticks(jobs)
    axes.set_xlabel("worker processes (--jobs)")
    axes.set_ylabel("files per second / open+save floor's")
    top = max(1.0 / ratio for size in result["sizes"] for ratio in size["wall_over_floor"].values())
    axes.set_ylim(0, max(1.3, top * 1.2))
    axes.set_title("Batch rigging throughput (each process pays Blender's start-up)", fontsize=10)
    axes.legend(fontsize=8, loc="lower right")
    _save(figure, machine, path)


def scaling(result: dict, machine: str, path: Path) -> None:
    """Each series: CPU time per unit against the size, log-log, IK Rigger's and the floor's; a flat line
    grows linearly, a rising one faster. The legend gives each line's growth exponent."""
    series = result["series"]
    columns = min(3, len(series)) or 1
    rows = (len(series) + columns - 1) // columns or 1
    figure, grid = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.6 * rows), squeeze=False)
    for axes, (name, entry) in zip(grid.flat, series.items()):
        sizes, unit = entry["sizes"], entry["unit"]
        for who, label, colour in (("ik_rigger", "IK Rigger", MET), ("floor", "floor", CONTEXT),
                                   ("switches", "mode switches alone", "#2c6fbb"),
                                   ("switches_constraint", "switches and one constraint", "#7a5cc0")):
            if who not in entry["cpu_seconds"]:
                continue
            stats = [entry["cpu_seconds"][who][str(size)] for size in sizes]
            per_unit = [value["median"] / size for value, size in zip(stats, sizes)]
            low = [middle - value["min"] / size for middle, value, size in zip(per_unit, stats, sizes)]
            high = [value["max"] / size - middle for middle, value, size in zip(per_unit, stats, sizes)]
            axes.errorbar(sizes, [value * 1e3 for value in per_unit],
                          yerr=[[value * 1e3 for value in low], [value * 1e3 for value in high]], marker="o",
                          color=colour, capsize=3, linewidth=1.2,
                          label=f"{label}: exponent {entry['exponents'][who]:.2f}")
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.minorticks_off()
        axes.set_xticks(sizes, [f"{size:,}" for size in sizes], fontsize=8)
        axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axes.set_xlabel(f"{name} (log)", fontsize=9)
        axes.set_ylabel(f"CPU ms per {unit} (log)", fontsize=9)
        axes.set_title(f"{name}: time per {unit}", fontsize=10)
        axes.legend(fontsize=8)
    for axes in list(grid.flat)[len(series):]:
        axes.axis("off")
    _save(figure, machine, path)


def matrix(result: dict, machine: str, path: Path) -> None:
    """Each cell (options, route): CPU time per leg against the legs, log-log, IK Rigger's and the floor's,
    each point labelled with IK Rigger's ratio over the floor (red above the cell's target)."""
    cells = list(result["cells"].values())
    figure, grid = plt.subplots(2, 2, figsize=(10, 7.2), squeeze=False)
    for axes, cell in zip(grid.flat, cells):
        title = f"{cell['route']}, {cell['options']} options (target {cell['target']}x)"
        sizes = [size for size in cell["sizes"] if str(size) not in cell["invalid"]]
        axes.set_title(title, fontsize=10)
        if not sizes:
            first = next(iter(cell["invalid"].values()))
            axes.text(0.5, 0.5, "not measured:\n" + "\n".join(textwrap.wrap(first[:200], 50)), ha="center",
                      va="center", fontsize=8, transform=axes.transAxes)
            axes.axis("off")
            continue
        for who, label, colour in (("ik_rigger", "IK Rigger", MET), ("floor", "floor", CONTEXT)):
            per_leg = [cell["cpu_seconds"][who][str(size)]["median"] / size * 1e3 for size in sizes]
            exponent = cell["exponents"].get(who)
            shown = f"{label}: exponent {exponent:.2f}" if exponent is not None else label
            axes.plot(sizes, per_leg, marker="o", color=colour, linewidth=1.2, label=shown)
        for size in sizes:
            ratio = cell["ratios"][str(size)]["median"]
            top = cell["cpu_seconds"]["ik_rigger"][str(size)]["median"] / size * 1e3
            axes.annotate(f"{ratio:.2f}x", (size, top), textcoords="offset points", xytext=(0, 6), ha="center",
                          fontsize=8, color=MISSED if ratio > cell["target"] else MET)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.xaxis.set_minor_locator(NullLocator())
        axes.set_xticks(sizes, [f"{size:,}" for size in sizes], fontsize=8)
        # A narrow range has no power of ten on it: the minor ticks are labelled too.
        for formatter in (axes.yaxis.set_major_formatter, axes.yaxis.set_minor_formatter):
            formatter(FuncFormatter(lambda value, _: f"{value:.3g}"))
        axes.tick_params(axis="y", which="both", labelsize=7)
        axes.margins(x=0.15, y=0.2)
        axes.set_xlabel("legs (log)", fontsize=9)
        axes.set_ylabel("CPU ms per leg (log)", fontsize=9)
        axes.legend(fontsize=8, loc="best")
    _save(figure, machine, path)
