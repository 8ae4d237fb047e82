#!/usr/bin/env bash
# Batch-rig .blend files with the project's own Blender (the PyPI bpy), set up if missing.
#   scripts/rig_batch.sh characters/ --out rigged/ --report rigged/report.json
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh" blender-5.2 >/dev/null
exec "$ROOT/.venvs/blender-5.2/bin/python" "$ROOT/scripts/rig_batch.py" "$@"
