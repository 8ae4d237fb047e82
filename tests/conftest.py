"""Pytest setup: a factory-fresh Blender per test with IK Rigger registered.

Runs inside the PyPI ``bpy`` module (``scripts/test.sh``) or inside a Blender
binary (``tests/run_in_blender.py``).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import bpy
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

import ik_rigger  # noqa: E402

# The Blenders the tests start keep their session folders in a temporary folder of the
# tests' own, removed at the end: one killed on purpose, or leaving without Blender's exit
# cleanup, would otherwise leave one in the system's temporary folder each run.
_SUBPROCESS_TEMP = tempfile.mkdtemp(prefix="ik_rigger_tests_")
os.environ["TMPDIR"] = _SUBPROCESS_TEMP


@pytest.fixture(autouse=True)
def blender():
    """Empty factory scene, add-on registered; unregistered afterwards."""
    ik_rigger.unregister()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ik_rigger.register()
    yield bpy
    ik_rigger.unregister()


# bpy 4.2 and 4.3 as a Python module crash while the process exits once an add-on class
# with Python callbacks has been registered (in Blender's own cleanup, after Python
# has shut down), turning a green run into exit code 139; and bpy 4.5 can hang there for good,
# its thread closing read files waiting on a condition its own static state destroys. Leave
# with pytest's own status before that cleanup runs, as the project's scripts leave the module.
_exit_status: list[int] = []


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _exit_status.append(int(exitstatus))
    shutil.rmtree(_SUBPROCESS_TEMP, ignore_errors=True)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    # Only the module has the problem: inside a Blender binary, Blender itself exits.
    if _exit_status and not bpy.app.binary_path:
        sys.stdout.flush()
        sys.stderr.flush()
        shutil.rmtree(bpy.app.tempdir, ignore_errors=True)  # Blender's exit cleanup would have
        os._exit(_exit_status[-1])
