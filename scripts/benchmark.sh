#!/usr/bin/env bash
# Benchmark IK Rigger against what Blender allows (build, evaluation, IK quality, batch),
# with the project's own Blender (the PyPI bpy), set up if missing. Writes
# benchmarks/results/latest.json and the plots; prints a markdown table. Not part of
# scripts/test.sh: timings belong to a machine, not to a pass or fail.
#   scripts/benchmark.sh            the full run (about a minute and a half on 2 cores)
#   scripts/benchmark.sh --quick    about half a minute
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/setup.sh blender-5.2 >/dev/null
exec .venvs/blender-5.2/bin/python benchmarks/run.py "$@"
