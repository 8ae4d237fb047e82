#!/usr/bin/env bash
# Batch-rig .blend files with the project's own Blender (the PyPI bpy), set up if missing.
#   scripts/rig_batch.sh characters/ --out rigged/ --report rigged/report.json
# With --scheduler ADDRESS (a Dask cluster, docs/farm.md) it runs in the farm's environment,
# which has Dask beside the same Blender.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
env=blender-5.2
for argument in "$@"; do
    case "$argument" in
        --scheduler|--scheduler=*) env=farm ;;
    esac
done
"$ROOT/scripts/setup.sh" "$env" >/dev/null
exec "$ROOT/.venvs/$env/bin/python" "$ROOT/scripts/rig_batch.py" "$@"
