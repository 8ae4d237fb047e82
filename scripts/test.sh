#!/usr/bin/env bash
# Set up what is missing, then run every test: the suite on Blender 5.2 LTS (the
# newest), on 4.2 LTS (the oldest supported), on 4.5 LTS (between, its API unlike
# either's) and on 4.4 (the first with slotted actions, with bugs of its own), the packaging
# test with each, the farm's
# tests (a Dask cluster, Open Job Description) in the farm's environment, and lint plus type
# check. Extra arguments go to pytest (e.g. -k rebuild -x). The suite runs the whole option
# matrix (tests/test_option_matrix.py) on 5.2 and 4.2, not the sample a plain pytest takes (4.5, 4.4).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/setup.sh
scripts/setup.sh farm

status=0
run() {
    echo
    echo "== $1"
    shift
    "$@" || status=1
}
run "Blender 5.2 LTS (bpy 5.2)" env IK_RIGGER_FULL_MATRIX=1 .venvs/blender-5.2/bin/python -m pytest "$@"
run "Blender 4.2 LTS (bpy 4.2)" env IK_RIGGER_FULL_MATRIX=1 .venvs/blender-4.2/bin/python -m pytest "$@"
run "Blender 4.5 LTS (bpy 4.5)" .venvs/blender-4.5/bin/python -m pytest "$@"
run "Blender 4.4 (bpy 4.4)" .venvs/blender-4.4/bin/python -m pytest "$@"
# Elsewhere the farm's tests skip; here they alone run. Arguments that select none of them
# (pytest's exit code 5) leave nothing to fail.
farm_tests() {
    local code=0
    .venvs/farm/bin/python -m pytest tests/test_farm.py tests/test_farm_nodes.py "$@" || code=$?
    [ "$code" -eq 0 ] || [ "$code" -eq 5 ]
}
run "farm: Dask and Open Job Description (bpy 5.2)" farm_tests "$@"
run "lint (ruff)" .venvs/lint/bin/ruff check .
run "type check (mypy with fake-bpy-module)" .venvs/lint/bin/mypy

echo
if [ "$status" -eq 0 ]; then
    echo "all checks passed"
else
    echo "some checks FAILED (see above)"
fi
exit "$status"
