"""Build speed at every size, on the options users actually use: IK Rigger against a floor making the same rig.

The many-legged creature (``creature.py``) with 4 to 1,024 legs, rigged:

- with the default options (stretch, pole lines, shapes) and with a plain script's (``build_speed.PLAIN``:
  no shapes, no pole lines, Maximum Stretch 1), against ``floor.rig_limbs`` with the same switches
  (``floor.PLAIN``), so that each floor makes the same bones, constraints, shapes and drivers;
- through the API (``api.build_many`` from Object mode, target ``TARGETS["api"]``) against the floor
  script, and through the Auto-Rig operator (from Pose mode, with the matching operator properties,
  target ``TARGETS["operator"]``) against the floor run as an operator (``bpy.ops.benchmark.floor``,
  told the legs), so that both pay the operator call, its undo step and the scene update after it.

Every size's first repeat compares the two rigs (``build_speed.compare``): a size whose rigs differ, or
at which Auto-Rig does not rig every leg, is invalid, and its row says why. IK Rigger and the floor take
turns within each repeat (in the reverse order every other time); a ratio is the median of the per-repeat
ratios of CPU time. Each cell also gives its growth exponent beside the floor's (``scaling.exponent``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import bpy

from benchmarks import build_speed, common, creature, floor
from benchmarks.scaling import EXPONENT_MARGIN, exponent

SIZES = (4, 16, 64, 256, 1024)
QUICK_SIZES = (4, 16, 64)
REPEATS = 5  # at the smallest size: one fewer at each larger one, at least 3 (the largest builds are steady)
QUICK_REPEATS = 3
TARGETS = build_speed.TARGETS
# (IK Rigger's options, the floor's switches) for each set of options.
OPTIONS = {"default": ({}, {}), "plain": (build_speed.PLAIN, floor.PLAIN)}
ROUTES = ("api", "operator")
WHO = ("ik_rigger", "floor")
SAYS = {"default": "default options (stretch, pole lines, shapes)",
        "plain": "a plain script's options (no shapes, no pole lines, Maximum Stretch 1)",
        "api": "`api.build_many` against the floor script",
        "operator": "the Auto-Rig operator from Pose mode against the floor as an operator"}


class RefusedError(Exception):
    """Auto-Rig did not rig every leg of the creature: there is nothing to compare at that size."""


def _creature_file(folder: Path, size: int) -> Path:
    return folder / f"creature_{size}.blend"


def _prepare(size: int, folder: Path) -> None:
    common.reset()
    creature.make(size)
    common.save_copy(_creature_file(folder, size))


def _load(folder: Path, size: int, route: str) -> bpy.types.Object:
    common.reset()
    obj = common.append_object(_creature_file(folder, size), "creature")
    if route == "operator":
        bpy.ops.object.mode_set(mode="POSE")
    return obj


def _action(obj: bpy.types.Object, size: int, options: str, route: str, who: str) -> Callable[[], object]:
    """What is timed: its arguments are made before, untimed, as a script has them at hand."""
    chosen, switches = OPTIONS[options]
    if who == "floor":
        if route == "api":
            legs = creature.legs(size)
            return lambda: floor.rig_limbs(obj, legs, origin=creature.ROOT, **switches)
        return lambda: _finished(bpy.ops.benchmark.floor(legs=size, **switches), "the floor operator")
    if route == "api":
        from ik_rigger import api

        requests = [(last, api.options(**chosen)) for _, last, _ in creature.legs(size)]
        return lambda: api.build_many(obj, requests)
    return lambda: _auto_rig(chosen)


def _finished(result: set[str], who: str) -> None:
    if result != {"FINISHED"}:
        raise RuntimeError(f"{who} did not finish on the creature: {result}")


def _auto_rig(chosen: dict[str, object]) -> None:
    try:
        result = bpy.ops.ik_rigger.auto_rig(**chosen)
    except RuntimeError as error:  # its error report: no limbs found
        raise RefusedError(str(error).strip()) from error
    if result != {"FINISHED"}:
        raise RefusedError(f"Auto-Rig returned {result}")


def _why(folder: Path, size: int, options: str) -> str:
    """How many legs Auto-Rig rigs on the creature, and the first reason it gives for a leg it skips."""
    from ik_rigger import api

    obj = _load(folder, size, "api")
    skipped: list[tuple[str, str]] = []
    try:
        rigged = len(api.auto_rig(obj, skipped=skipped, **OPTIONS[options][0]))
    except api.RigError:
        rigged = 0
    reason = f"; the first of {len(skipped)} it skipped: '{skipped[0][0]}': {skipped[0][1]}" if skipped else ""
    return f"Auto-Rig rigs {rigged} of the {size} legs{reason[:300]}"


def _timed(folder: Path, size: int, options: str, route: str, who: str,
           signatures: dict | None) -> tuple[float, float]:
    """CPU and wall seconds of one build; with ``signatures``, what it made goes there under ``who``."""
    obj = _load(folder, size, route)
    cpu, wall = common.timed_both(_action(obj, size, options, route, who))
    if who == "ik_rigger" and route == "operator" and len(obj.ik_rigger.limbs) != size:
        raise RefusedError(f"Auto-Rig rigged {len(obj.ik_rigger.limbs)} legs")
    if signatures is not None:
        signatures[who] = build_speed.signature(obj, {name for name, *_ in creature.bones(size)})
    return cpu, wall


def repeats_at(size: int, sizes: tuple[int, ...], repeats: int) -> int:
    """Fewer repeats at the larger sizes, whose builds are long and steady: at least 3."""
    return max(3, repeats - sizes.index(size))


def _measure(folder: Path, sizes: tuple[int, ...], repeats: int) -> dict[str, dict]:
    """Every cell (options, route) at every size, IK Rigger and the floor in turns: their samples, and per
    size the rigs' comparison or why the size was refused."""
    cells = {f"{options}_{route}": (options, route) for options in OPTIONS for route in ROUTES}
    found = {cell: {"cpu": {who: {size: [] for size in sizes} for who in WHO},
                    "wall": {who: {size: [] for size in sizes} for who in WHO},
                    "same_rig": {}, "refused": {}} for cell in cells}
    for size in sizes:
        for repeat in range(repeats_at(size, sizes, repeats)):
            for index, (cell, (options, route)) in enumerate(cells.items()):
                entry = found[cell]
                if size in entry["refused"]:
                    continue
                signatures: dict | None = {} if repeat == 0 else None
                order = WHO if (repeat + index) % 2 == 0 else WHO[::-1]
                try:
                    taken = {who: _timed(folder, size, options, route, who, signatures) for who in order}
                except RefusedError:
                    entry["refused"][size] = _why(folder, size, options)
                    continue
                if signatures is not None:
                    entry["same_rig"][size] = build_speed.compare(signatures["floor"], signatures["ik_rigger"])
                for who, (cpu, wall) in taken.items():
                    entry["cpu"][who][size].append(cpu)
                    entry["wall"][who][size].append(wall)
    return {cell: {**entry, "options": cells[cell][0], "route": cells[cell][1]} for cell, entry in found.items()}


def _summary(entry: dict, sizes: tuple[int, ...]) -> dict[str, object]:
    """One cell's figures: medians and spreads, ratios, exponents over its valid sizes, and whether it met."""
    target = TARGETS[entry["route"]]
    invalid = {str(size): reason for size, reason in entry["refused"].items()}
    invalid.update({str(size): "the floor's rig is not IK Rigger's: " + "; ".join(same["problems"])[:300]
                    for size, same in entry["same_rig"].items() if not same["same"]})
    valid = [size for size in sizes if str(size) not in invalid]
    cpu, wall = entry["cpu"], entry["wall"]
    stats = {who: {str(size): common.Stats.of(cpu[who][size]).as_dict() for size in valid} for who in WHO}
    ratios = {str(size): common.paired_ratios(cpu["ik_rigger"][size], cpu["floor"][size]).as_dict()
              for size in valid}
    exponents = ({who: exponent(valid, [stats[who][str(size)]["median"] for size in valid]) for who in WHO}
                 if len(valid) > 1 else {})
    return {
        "options": entry["options"], "route": entry["route"], "target": target, "sizes": list(sizes),
        "cpu_seconds": stats,
        "wall_seconds": {who: {str(size): common.Stats.of(wall[who][size]).as_dict() for size in valid}
                         for who in WHO},
        "ratios": ratios,
        "wall_ratios": {str(size): common.paired_ratios(wall["ik_rigger"][size], wall["floor"][size]).as_dict()
                        for size in valid},
        "exponents": exponents,
        "same_rig": {str(size): same for size, same in entry["same_rig"].items()},
        "invalid": invalid,
        "met": not invalid and all(ratio["median"] <= target for ratio in ratios.values()),
    }


def run(sources: Path, settings: common.Settings) -> dict[str, object]:
    """Every cell at the full run's sizes, or ``--quick``'s."""
    quick = settings == common.QUICK
    sizes, repeats = (QUICK_SIZES, QUICK_REPEATS) if quick else (SIZES, REPEATS)
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        for size in sizes:
            _prepare(size, folder)
        with common.quiet():  # Auto-Rig reports what it rigged on stdout
            measured = _measure(folder, sizes, repeats)
    return {"cells": {cell: _summary(entry, sizes) for cell, entry in measured.items()}, "targets": TARGETS,
            "exponent_margin": EXPONENT_MARGIN}


def _label(cell: dict) -> str:
    return f"{SAYS[cell['route']]}, {SAYS[cell['options']]}"


def checks(result: dict) -> list[dict[str, object]]:
    """Each cell's ratio at each size against its target, and its growth exponent against the floor's; an
    invalid size is a missed target (``value`` None) that says why."""
    found: list[dict[str, object]] = []
    margin = result["exponent_margin"]
    for cell in result["cells"].values():
        target, label = cell["target"], f"build time per leg of a many-legged creature, {_label(cell)}"
        for size in cell["sizes"]:
            key = str(size)
            if key in cell["invalid"]:
                found.append({"name": f"{label}, {size:,} legs (lower is better)", "value": None, "target": target,
                              "better": "lower", "met": False,
                              "shown": f"<= {target}x; invalid: {cell['invalid'][key]}"})
                continue
            value = cell["ratios"][key]["median"]
            found.append({"name": f"{label}, {size:,} legs, over the floor (lower is better)", "value": value,
                          "target": target, "better": "lower", "met": value <= target, "shown": f"<= {target}x"})
        if cell["exponents"]:
            value, limit = cell["exponents"]["ik_rigger"], cell["exponents"]["floor"] + margin
            found.append({"name": f"{label}: growth exponent of the time, over the floor's (lower is better)",
                          "value": value, "target": limit, "better": "lower", "met": value <= limit,
                          "shown": f"<= floor's + {margin}"})
    return found


def table_rows(result: dict, per: Callable[[dict, int], str], x: Callable[..., str]) -> list[str]:
    """A row per cell (``per`` and ``x`` are run.py's formatters): per leg at each size, IK Rigger's and the
    floor's, their ratio, and the growth exponents."""
    rows = []
    for cell in result["cells"].values():
        valid = [size for size in cell["sizes"] if str(size) not in cell["invalid"]]
        target = cell["target"]

        def per_leg(who: str, cell: dict = cell, valid: list = valid) -> str:
            return ", ".join(f"{per(cell['cpu_seconds'][who][str(size)], size)} at {size:,}" for size in valid) or "-"

        ratios = ", ".join(f"{x(cell['ratios'][str(size)])} at {size:,}" for size in valid)
        shown = [ratios] if ratios else []
        exponents = cell["exponents"]
        if exponents:
            shown.append(f"growth exponents {exponents['ik_rigger']:.2f} and the floor's {exponents['floor']:.2f}")
        invalid = cell["invalid"]
        if invalid:  # the reasons are much alike from size to size: the first one's is shown
            first = next(iter(invalid))
            shown.append(f"invalid at {', '.join(f'{int(size):,}' for size in invalid)} legs (at {int(first):,}: "
                         f"{invalid[first]})")
        met = "yes" if cell["met"] else ("invalid" if cell["invalid"] and not valid else "**NO**")
        rows.append(f"| Build a many-legged creature's legs, {cell['sizes'][0]:,} to {cell['sizes'][-1]:,}, "
                    f"{_label(cell)}, each against a floor making the same rig: CPU time per leg, lower is better | "
                    f"{per_leg('ik_rigger')} | {per_leg('floor')} | {'; '.join(shown).replace('|', '/')} | "
                    f"<= {target}x at every size | {met} |")
    return rows



def floor_check(result: dict) -> str:
    """Whether each floor made IK Rigger's rig at every size compared, and which sizes are invalid."""
    compared = [(name, size, same) for name, cell in result["cells"].items()
                for size, same in cell["same_rig"].items()]
    different = [f"{name} at {size}" for name, size, same in compared if not same["same"]]
    refused = [f"{name} at {size}" for name, cell in result["cells"].items() for size in cell["invalid"]
               if size not in cell["same_rig"]]
    said = (f"Matrix floor check: the floors made the same bones, constraints, shapes and drivers as IK Rigger in "
            f"{len(compared) - len(different)} of {len(compared)} builds compared")
    said += f"; NOT the same in {', '.join(different)}" if different else ""
    return said + (f"; not measured (Auto-Rig did not rig every leg): {', '.join(refused)}." if refused else ".")
