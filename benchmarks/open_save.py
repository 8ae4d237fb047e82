"""The batch floor: open and save .blend files in one Blender, rigging nothing.

    python benchmarks/open_save.py OUT_DIR FILE.blend...

Plain bpy with the same open and save calls the batch command makes (each file saved
compressed when it was read compressed, as the batch does), so the batch command's time
beyond this is what rigging (and its bookkeeping) costs. Blender evaluates every visible
object as a file loads; the batch keeps the objects it does not rig out of that (and of
the save's scene update), so its own open and save can take less than these. Prints one line
``OPEN-SAVE-RESULT {json}`` with the seconds each file took to open and to save.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from blender_startup import deferred_downloader  # noqa: E402

with deferred_downloader():  # Blender starts as the batch command's processes do
    import bpy

RESULT_MARK = "OPEN-SAVE-RESULT "
_COMPRESSED = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd")  # gzip, zstd: what Blender writes compressed


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    bpy.context.preferences.filepaths.use_scripts_auto_execute = False
    timings = []
    for name in argv[1:]:
        started = time.perf_counter()
        with open(name, "rb") as stream:
            compress = stream.read(4).startswith(_COMPRESSED)
        bpy.ops.wm.open_mainfile(filepath=name, load_ui=False, use_scripts=False)
        opened = time.perf_counter()
        bpy.ops.wm.save_as_mainfile(filepath=str(out / Path(name).name), copy=True, check_existing=False,
                                    compress=compress)
        timings.append({"seconds_open": opened - started, "seconds_save": time.perf_counter() - opened})
    sys.stdout.write(RESULT_MARK + json.dumps(timings) + "\n")
    return 0


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    # Leave as the batch command does (scripts/rig_batch.py), skipping Blender's exit cleanup so that
    # both pay the same; that cleanup is also what deletes Blender's session folder, so do that here.
    shutil.rmtree(bpy.app.tempdir, ignore_errors=True)
    os._exit(status)
