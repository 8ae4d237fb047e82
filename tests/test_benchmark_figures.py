"""The benchmark's derived figures: what each row says follows from the times measured. Nothing here is timed."""

from __future__ import annotations

import pytest

from benchmarks import run, scaling


def _stats(seconds: float) -> dict[str, float]:
    return {"min": seconds, "median": seconds, "max": seconds}


def _files_series(ours: tuple[float, float], floors: tuple[float, float], sizes=(6, 12, 24, 48)) -> dict:
    """A files series whose times are exactly a fixed cost plus a cost per file, for IK Rigger and the floor."""
    times = {"ik_rigger": {size: ours[0] + ours[1] * size for size in sizes},
             "floor": {size: floors[0] + floors[1] * size for size in sizes}}
    fitted = {who: scaling.per_unit(list(sizes), [times[who][size] for size in sizes]) for who in times}
    one = {"median": 1.0, "min": 1.0, "max": 1.0}
    return {"unit": "file", "what": "files", "sizes": list(sizes),
            "cpu_seconds": {who: {str(size): _stats(value) for size, value in by_size.items()}
                            for who, by_size in times.items()},
            "ratios": {str(size): one for size in sizes}, "wall_exponents": {"ik_rigger": 1.0, "floor": 1.0},
            "exponents": {"ik_rigger": 1.0, "floor": 1.0},
            "per_unit": {who: slope for who, (slope, _) in fitted.items()},
            "fixed": {who: fixed for who, (_, fixed) in fitted.items()}}


def test_the_cost_per_unit_is_told_apart_from_the_fixed_cost():
    slope, fixed = scaling.per_unit([6, 12, 24, 48], [1.0 + 0.012 * n for n in (6, 12, 24, 48)])
    assert slope == pytest.approx(0.012)
    assert fixed == pytest.approx(1.0)
    # Noise around the line moves the fit by little: least squares, not the two ends.
    slope, _ = scaling.per_unit([6, 12, 24, 48], [1.07, 1.14, 1.29, 1.58])
    assert slope == pytest.approx(0.0121, abs=0.0005)


@pytest.mark.parametrize(("per_file", "met"), [(0.0105, "yes"), (0.0119, "**NO**")])
def test_the_batch_row_judges_the_cost_of_a_further_file_not_the_fixed_one(per_file, met):
    # IK Rigger's run starts two Blenders (the fixed cost twice the floor's): only the cost per file is judged.
    series = _files_series((1.0, per_file), (0.4, 0.0055))
    result = {"series": {"files": series}, "exponent_margin": 0.1, "bones_target_sizes": [], "files_target": 2.0}
    rows = [row for row in run.scaling_rows(result) if row.startswith("| Batch,")]
    assert len(rows) == 1
    assert f"{per_file / 0.0055:.2f}x" in rows[0]
    assert rows[0].rstrip(" |").endswith(met)
    assert f"{per_file * 1e3:.2f} ms (of medians) a file, beyond a fixed 1.00 s (of medians)" in rows[0]
    checked = [found for found in run.checks({"scaling": result}) if "cost per file" in str(found["name"])]
    assert [found["met"] for found in checked] == [met == "yes"]


def test_a_run_of_an_earlier_release_without_the_figure_still_makes_its_table():
    series = _files_series((1.0, 0.012), (0.4, 0.0055))
    del series["per_unit"], series["fixed"]
    result = {"series": {"files": series}, "exponent_margin": 0.1, "bones_target_sizes": []}
    assert not [row for row in run.scaling_rows(result) if row.startswith("| Batch,")]
    assert not [found for found in run.checks({"scaling": result}) if "cost per file" in str(found["name"])]
