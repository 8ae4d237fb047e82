"""How the project's scripts leave Blender, under the PyPI module and a Blender binary alike."""

from __future__ import annotations

import os
import shutil
import sys


def leave(status: int) -> None:
    """Exit with ``status``.

    As the PyPI module, leave without Blender's exit cleanup: bpy 4.2 crashes in it after an
    add-on has been registered, which would turn any status into 139. That cleanup would
    also remove Blender's temporary folder, so do it here. A Blender binary exits normally.
    """
    import bpy

    sys.stdout.flush()
    sys.stderr.flush()
    if not bpy.app.binary_path:
        shutil.rmtree(bpy.app.tempdir, ignore_errors=True)
        os._exit(status)
    sys.exit(status)
