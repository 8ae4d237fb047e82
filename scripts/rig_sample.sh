#!/usr/bin/env bash
# Set up what is missing, then rig the sample character headless: out/sample_rigged.blend
# and out/sample_rig.png (or --out DIR); --update-docs also refreshes docs/sample_rig.png,
# the picture README shows.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh" blender-5.2
exec "$ROOT/.venvs/blender-5.2/bin/python" "$ROOT/scripts/rig_sample.py" "$@"
