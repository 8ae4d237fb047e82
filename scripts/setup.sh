#!/usr/bin/env bash
# Create the project's virtual environments under .venvs/ (git-ignored), pinned by
# requirements/*.txt. Idempotent: an environment whose requirements have not changed
# since it was built is left alone, so a second run takes a second.
#
#   scripts/setup.sh            all environments (blender-5.2, blender-4.2, lint)
#   scripts/setup.sh blender-5.2  only the named ones
#   scripts/setup.sh farm         the farm's (Dask, Open Job Description; on demand only)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENVS="$ROOT/.venvs"

python_version_for() {
    case "$1" in
        blender-5.2) echo 3.13 ;;
        blender-4.2) echo 3.11 ;;
        lint) echo 3.13 ;;
        farm) echo 3.13 ;;
        *) echo "setup: unknown environment '$1' (known: blender-5.2 blender-4.2 lint farm)" >&2; exit 2 ;;
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

mkdir -p "$VENVS"
if [ "$#" -eq 0 ]; then
    set -- blender-5.2 blender-4.2 lint
fi
for name in "$@"; do
    build_env "$name"
done
