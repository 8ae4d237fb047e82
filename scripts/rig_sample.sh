#!/usr/bin/env bash
# Set up what is missing, then rig the sample characters headless: their rigged .blend files
# and pictures in out/ (or --out DIR); --update-docs also refreshes the pictures in docs/
# (sample_rig.png, sample_render.png, sample_motion.webp), the ones README and docs/ show.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh" blender-5.2
exec "$ROOT/.venvs/blender-5.2/bin/python" "$ROOT/scripts/rig_sample.py" "$@"
