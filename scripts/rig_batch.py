"""Batch-rig characters headless: the entry script for Blender and for the project's bpy.

    blender --background --factory-startup --python scripts/rig_batch.py -- ARGS
    scripts/rig_batch.sh ARGS             (the project's own bpy; sets it up first)

ARGS: input files (.blend, .fbx, .glb/.gltf, .bvh), folders and globs; --out DIR [--overwrite] |
--in-place | --dry-run; --config FILE.toml; --armature NAME; --allow-newer; --jobs N;
--report FILE.json. See README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ik_rigger  # noqa: E402
from ik_rigger import cli  # noqa: E402


def main() -> int:
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    ik_rigger.register()
    return cli.main(argv, cli.worker_command_for(Path(__file__).resolve()))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from blender_exit import leave

    leave(main())
