#!/usr/bin/env bash
# The batch on a Dask cluster (docs/farm.md). Sets up the farm's environment if missing.
#   scripts/farm.sh scheduler [--port P]              a Dask scheduler, in the foreground
#   scripts/farm.sh worker ADDRESS [--nworkers N] [--blender BLENDER]
#                                                     N worker processes (default: one per core),
#                                                     each with its own Blender and one thread: the
#                                                     project's bpy, or each a BLENDER binary (a path,
#                                                     or a name on PATH) with Dask set up for its Python
# Then: scripts/rig_batch.sh IN... --out OUT --scheduler ADDRESS
# Both stay in the foreground (stop them by their process id, or Ctrl-C); extra options go to
# Dask's own 'dask scheduler' and 'dask worker' (not taken with --blender).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.venvs/farm/bin"

usage() {
    echo "usage: scripts/farm.sh scheduler [--port P] | scripts/farm.sh worker ADDRESS [--nworkers N]" \
        "[--blender BLENDER]" >&2
    exit 2
}

# The folder with the farm's pinned Dask for the Python of Blender binary $1, set up if missing
# (scripts/setup.sh farm-blender-X.Y); a usage error if $1 does not run as Blender.
blender_site() {
    local version
    version="$("$1" --background --factory-startup --python-expr \
        'import sys; print("IK-RIGGER-PYTHON %d.%d" % sys.version_info[:2])' 2>/dev/null \
        | sed -n 's/^IK-RIGGER-PYTHON //p')" || true
    if [ -z "$version" ]; then
        echo "farm: '$1' did not run as Blender (--background --python-expr): give --blender a Blender binary" >&2
        exit 2
    fi
    "$ROOT/scripts/setup.sh" "farm-blender-$version" >&2
    echo "$ROOT/.venvs/farm-blender-$version"
}

[ "$#" -ge 1 ] || usage
role="$1"
shift
"$ROOT/scripts/setup.sh" farm >/dev/null
# Workers import IK Rigger (and the preload its start-up helper) from this checkout.
export PYTHONPATH="$ROOT:$ROOT/scripts${PYTHONPATH:+:$PYTHONPATH}"
# One task in a worker at a time. The submitter sends a task only as a worker thread frees up
# (Dask applies this setting only to runs of many tasks, and sends a worker every task of a small
# one at once); this keeps a scheduler that other clients use to the same.
export DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION=1.0
# A worker busy with a file answers no heartbeat until the file is done (Blender runs on its
# main thread): a long file must not have it taken for dead. A worker that dies closes its
# connection, which the scheduler sees at once.
export DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL="2 hours"

case "$role" in
    scheduler)
        port=8786
        while [ "$#" -gt 0 ]; do
            case "$1" in
                --port) [ "$#" -ge 2 ] || usage; port="$2"; shift 2 ;;
                --port=*) port="${1#--port=}"; shift ;;
                *) break ;;
            esac
        done
        echo "farm: Dask scheduler on port $port (every interface, loopback too): rig with" \
            "--scheduler tcp://$(hostname):$port, or tcp://127.0.0.1:$port on this machine"
        exec "$BIN/dask" scheduler --port "$port" --no-dashboard "$@"
        ;;
    worker)
        [ "$#" -ge 1 ] || usage
        address="$1"
        shift
        nworkers="$(nproc)"
        blender=""
        while [ "$#" -gt 0 ]; do
            case "$1" in
                --nworkers) [ "$#" -ge 2 ] || usage; nworkers="$2"; shift 2 ;;
                --nworkers=*) nworkers="${1#--nworkers=}"; shift ;;
                --blender) [ "$#" -ge 2 ] || usage; blender="$2"; shift 2 ;;
                --blender=*) blender="${1#--blender=}"; shift ;;
                *) break ;;
            esac
        done
        # One worker process per core: each keeps to a core of its own (scripts/farm_worker.py), as
        # the batch's own processes do with --jobs at the core count.
        if [ "$nworkers" = "$(nproc)" ] && [ "$nworkers" -gt 1 ]; then
            export IK_RIGGER_FARM_ONE_PER_CORE=1
        fi
        # Dask samples each worker's stacks every 10 ms for its dashboard: time taken from Blender.
        export DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False
        # Nor does a worker give its memory back to the system after each allocation (Dask's
        # MALLOC_TRIM_THRESHOLD_): each file would take it anew, which costs on a virtual machine
        # whose host takes back what the system leaves free (README, Speed and quality).
        export DASK_DISTRIBUTED__NANNY__PRE_SPAWN_ENVIRON="{'MALLOC_TRIM_THRESHOLD_': None}"
        if [ -n "$blender" ]; then
            if [ "$#" -gt 0 ]; then
                echo "farm: with --blender, Dask's own worker options are not taken: $*" >&2
                exit 2
            fi
            site="$(blender_site "$blender")"
            exec "$BIN/python" "$ROOT/scripts/farm_blender.py" "$address" --blender "$blender" --site "$site" \
                --nworkers "$nworkers"
        fi
        exec "$BIN/dask" worker "$address" --nworkers "$nworkers" --nthreads 1 --no-dashboard \
            --preload "$ROOT/scripts/farm_worker.py" "$@"
        ;;
    *) usage ;;
esac
