"""Pytest setup: a factory-fresh Blender per test with IK Rigger registered.

Runs inside the PyPI ``bpy`` module (``scripts/test.sh``) or inside a Blender
binary (``tests/run_in_blender.py``).
"""

from __future__ import annotations

import sys
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


@pytest.fixture(autouse=True)
def blender():
    """Empty factory scene, add-on registered; unregistered afterwards."""
    ik_rigger.unregister()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ik_rigger.register()
    yield bpy
    ik_rigger.unregister()
