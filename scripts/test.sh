#!/usr/bin/env bash
# Set up what is missing, then run every test: the suite on Blender 5.2 LTS (the
# newest) and on 4.2 LTS (the oldest supported), the packaging test with both, and
# lint plus type check. Extra arguments go to pytest (e.g. -k rebuild -x). The suite runs
# the whole option matrix (tests/test_option_matrix.py), not the sample a plain pytest takes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/setup.sh

status=0
run() {
    echo
    echo "== $1"
    shift
    "$@" || status=1
}
run "Blender 5.2 LTS (bpy 5.2)" env IK_RIGGER_FULL_MATRIX=1 .venvs/blender-5.2/bin/python -m pytest "$@"
run "Blender 4.2 LTS (bpy 4.2)" env IK_RIGGER_FULL_MATRIX=1 .venvs/blender-4.2/bin/python -m pytest "$@"
run "lint (ruff)" .venvs/lint/bin/ruff check .
run "type check (mypy with fake-bpy-module)" .venvs/lint/bin/mypy

echo
if [ "$status" -eq 0 ]; then
    echo "all checks passed"
else
    echo "some checks FAILED (see above)"
fi
exit "$status"
