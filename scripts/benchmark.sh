#!/usr/bin/env bash
# Benchmark IK Rigger against what Blender allows (build, evaluation, IK quality, batch),
# with the project's own Blender (the PyPI bpy), set up if missing. Prints a markdown
# table and writes latest.json and the plots to out/benchmarks/ (ignored by git). Not
# part of scripts/test.sh: timings belong to a machine, not to a pass or fail.
#   scripts/benchmark.sh                  the full run (several minutes on 2 cores)
#   scripts/benchmark.sh --quick          fewer repeats and targets (one to two minutes)
#   scripts/benchmark.sh --only matrix    build time of 4 to 1,024 legs, default and plain options, API and operator
#   scripts/benchmark.sh --only scaling   how the time grows with bones, characters, frames and files
#   scripts/benchmark.sh --update-docs    the full run; docs/speed.md's table and benchmarks/results/ refreshed
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/setup.sh blender-5.2 >/dev/null
exec .venvs/blender-5.2/bin/python benchmarks/run.py "$@"
