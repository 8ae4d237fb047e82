"""Batch-rig characters headless: the entry script for Blender and for the project's bpy.

    blender --background --factory-startup --python scripts/rig_batch.py -- ARGS
    scripts/rig_batch.sh ARGS             (the project's own bpy; sets it up first)

ARGS: input files (.blend, .fbx, .glb/.gltf, .bvh), folders and globs; --out DIR [--overwrite] |
--in-place | --dry-run; --config FILE.toml; --armature NAME; --allow-newer; --jobs N;
--report FILE.json. See README.md.
"""

from __future__ import annotations

import os
import shutil
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
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    import bpy

    if not bpy.app.binary_path:
        # As the PyPI module, leave without Blender's exit cleanup: bpy 4.2 crashes in it
        # after an add-on has been registered, which would turn any status into 139.
        # That cleanup would also remove Blender's temporary folder, so do it here.
        shutil.rmtree(bpy.app.tempdir, ignore_errors=True)
        os._exit(status)
    sys.exit(status)
