#!/usr/bin/env bash
# Create the project's virtual environments under .venvs/ (git-ignored), pinned by
# requirements/*.txt. Idempotent: an environment whose requirements have not changed
# since it was built is left alone, so a second run takes a second.
#
#   scripts/setup.sh            all environments (blender-5.2, blender-4.5, blender-4.4, blender-4.2, lint) and node
#   scripts/setup.sh blender-5.2  only the named ones
#   scripts/setup.sh node         the export tests' readers in tests/node (glTF Validator, three.js; npm ci)
#   scripts/setup.sh farm         the farm's (Dask, Open Job Description; on demand only)
#   scripts/setup.sh farm-blender-X.Y  the farm's Dask for a Blender binary whose Python is X.Y
#                                 (scripts/farm.sh worker --blender; a folder for its PYTHONPATH)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENVS="$ROOT/.venvs"

python_version_for() {
    case "$1" in
        blender-5.2) echo 3.13 ;;
        blender-4.5) echo 3.11 ;;
        blender-4.4) echo 3.11 ;;
        blender-4.2) echo 3.11 ;;
        lint) echo 3.13 ;;
        farm) echo 3.13 ;;
        *) echo "setup: unknown environment '$1' (known: blender-5.2 blender-4.5 blender-4.4 blender-4.2 lint farm)" >&2; exit 2 ;;
    esac
}

# Find an interpreter of the wanted minor version: python3.X on PATH, then pyenv.
find_python() {
    local want="$1" candidate
    for candidate in "python$want" \
        "$(command -v pyenv >/dev/null 2>&1 && ls -d "$(pyenv root)"/versions/"$want".*/bin/python3 2>/dev/null | sort -V | tail -n 1)"; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 || [ -x "$candidate" ]; then
            if "$candidate" -c "import sys; sys.exit(0 if '%d.%d' % sys.version_info[:2] == '$want' else 1)" 2>/dev/null \
                && "$candidate" -c "import venv, ensurepip" 2>/dev/null; then
                echo "$candidate"
                return 0
            fi
        fi
    done
    return 1
}

# Modules that must import once an environment is built (pip's exit status is
# hidden by the filter above, so this is what proves the install worked).
requirement_modules() {
    case "$1" in
        blender-5.2) echo bpy pytest matplotlib ;;
        blender-4.5) echo bpy pytest matplotlib ;;
        blender-4.4) echo bpy pytest matplotlib ;;
        blender-4.2) echo bpy pytest matplotlib ;;
        lint) echo ruff mypy ;;
        farm) echo bpy pytest distributed openjd.cli ;;
    esac
}

build_env() {
    local name="$1" req="$ROOT/requirements/$1.txt" env="$VENVS/$1"
    local want stamp digest python
    want="$(python_version_for "$name")"
    digest="$(sha256sum "$req" | cut -d' ' -f1)"
    stamp="$env/.requirements.sha256"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ] && [ -x "$env/bin/python" ]; then
        echo "setup: $name is up to date"
        return 0
    fi
    if ! python="$(find_python "$want")"; then
        echo "setup: $name needs Python $want with venv and pip, and none was found." >&2
        echo "       Install it, e.g. 'pyenv install $want' or your system's python$want-venv package," >&2
        echo "       then run scripts/setup.sh again." >&2
        return 1
    fi
    echo "setup: building $name with $python (Python $want)"
    rm -rf "$env"
    "$python" -m venv "$env"
    # pip warns about every empty local index it is configured to look in; keep real errors only.
    "$env/bin/python" -m pip install --quiet --upgrade pip 2>&1 | grep -v "is ignored: it is neither" || true
    "$env/bin/python" -m pip install --quiet -r "$req" 2>&1 | grep -v "is ignored: it is neither" || true
    "$env/bin/python" -c "import importlib, sys; [importlib.import_module(m) for m in sys.argv[1:]]" \
        $(requirement_modules "$name")
    echo "$digest" > "$stamp"
    echo "setup: $name ready"
}

# The farm's pinned Dask for another Python (a Blender binary's own), installed by the farm
# environment's pip into .venvs/farm-blender-X.Y: the wheels for Python X.Y on this system.
build_blender_site() {
    local version="$1" dir="$VENVS/farm-blender-$1" req="$ROOT/requirements/farm.txt" digest stamp
    if ! [[ "$version" =~ ^[0-9]+\.[0-9]+$ ]]; then
        echo "setup: 'farm-blender-$version' names no Python version (farm-blender-3.11, for one)" >&2
        exit 2
    fi
    digest="$(sha256sum "$req" | cut -d' ' -f1)"
    stamp="$dir/.requirements.sha256"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
        echo "setup: farm-blender-$version is up to date"
        return 0
    fi
    build_env farm
    echo "setup: installing the farm's Dask for Python $version in $dir"
    rm -rf "$dir"
    "$VENVS/farm/bin/python" -m pip install --quiet --target "$dir" --python-version "$version" \
        --only-binary=:all: "$(grep -E '^dask\[' "$req")" 2>&1 | grep -v "is ignored: it is neither" || true
    if [ ! -d "$dir/distributed" ]; then
        echo "setup: Dask could not be installed for Python $version (see pip's lines above)" >&2
        return 1
    fi
    echo "$digest" > "$stamp"
    echo "setup: farm-blender-$version ready"
}

# The export tests' readers that are not Blender's (tests/node), pinned by its package-lock.json:
# installed by npm ci when missing or when the lock file changed since.
build_node() {
    local dir="$ROOT/tests/node" digest stamp
    digest="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
    stamp="$dir/node_modules/.package-lock.sha256"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
        echo "setup: node is up to date"
        return 0
    fi
    if ! command -v npm >/dev/null 2>&1; then
        echo "setup: node needs Node.js 20 or later with npm, and none was found; the export tests need it." >&2
        return 1
    fi
    echo "setup: installing tests/node's readers with npm ci"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$digest" > "$stamp"
    echo "setup: node ready"
}

mkdir -p "$VENVS"
if [ "$#" -eq 0 ]; then
    set -- blender-5.2 blender-4.5 blender-4.4 blender-4.2 lint node
fi
for name in "$@"; do
    case "$name" in
        node) build_node ;;
        farm-blender-*) build_blender_site "${name#farm-blender-}" ;;
        *) build_env "$name" ;;
    esac
done
