"""Rules the code keeps, read from the source: they fail loudly when broken."""

from __future__ import annotations

import ast
from pathlib import Path

import bpy
import pytest

import ik_rigger

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ik_rigger"
SOURCES = sorted(PACKAGE.rglob("*.py")) + sorted((ROOT / "scripts").glob("*.py"))
PREFIXES = {"Operator": "IKRIG_OT_", "Panel": "IKRIG_PT_", "Menu": "IKRIG_MT_", "UIList": "IKRIG_UL_",
            "PropertyGroup": "IKRIG_PG_"}
PROPERTY_FUNCTIONS = {"BoolProperty", "IntProperty", "FloatProperty", "StringProperty", "EnumProperty",
                      "FloatVectorProperty", "CollectionProperty", "PointerProperty"}


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_bare_except(path):
    tree = ast.parse(path.read_text())
    bare = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler) and node.type is None]
    assert not bare, f"bare except at lines {bare}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "core").glob("*.py")) + sorted((PACKAGE / "parts").glob("*.py")),
                         ids=lambda path: f"{path.parent.name}/{path.name}")
def test_core_and_parts_are_pure(path):
    tree = ast.parse(path.read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.level == 0}
    assert "bpy" not in imported


def test_every_property_has_a_name_and_a_description():
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in PROPERTY_FUNCTIONS:
                keywords = {keyword.arg for keyword in node.keywords}
                if not {"name", "description"} <= keywords:
                    missing.append(f"{path.name}:{node.lineno}")
    assert not missing


def test_registered_classes_follow_blender_naming_and_document_themselves():
    for module in ik_rigger._modules:
        for cls in module.classes:
            base = next(name for name in PREFIXES if issubclass(cls, getattr(bpy.types, name)))
            assert cls.__name__.startswith(PREFIXES[base]), cls.__name__
            assert cls.__doc__ and cls.__doc__.strip(), cls.__name__
            if base == "Operator":
                assert cls.bl_idname.startswith("ik_rigger."), cls.bl_idname
                assert {"REGISTER", "UNDO"} <= cls.bl_options, cls.__name__
                assert "poll" in dir(cls), cls.__name__


def test_operator_tooltips_come_from_docstrings():
    for module in ik_rigger._modules:
        for cls in module.classes:
            if issubclass(cls, bpy.types.Operator):
                module_name, name = cls.bl_idname.split(".")
                description = getattr(getattr(bpy.ops, module_name), name).get_rna_type().description
                assert description and not description.endswith("."), cls.bl_idname


@pytest.mark.parametrize("path", sorted((PACKAGE / "rig").glob("*.py")), ids=lambda path: f"rig/{path.name}")
def test_the_rig_layer_reaches_no_layer_above_it(path):
    """``rig`` builds on ``core`` and Blender only: the API, the batch and the interface build on it."""
    above = {"api", "batch", "operators", "pose_operators", "aim_operators", "ground_operators", "ui", "props"}
    reached = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 2:
            reached |= {(node.module or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("ik_rigger."):
            reached.add(node.module.split(".")[1])
    assert not reached & above, sorted(reached & above)
