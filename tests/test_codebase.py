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


# The sizes the structure keeps to (issue of the layers): a module holds one job, a function one step.
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def test_no_product_module_or_function_outgrows_its_job():
    """No module of the add-on over 500 lines, no function over 80: a larger one holds several jobs."""
    large = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        name = path.relative_to(ROOT)
        if len(text.splitlines()) > MAX_MODULE_LINES:
            large.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    (length := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES):
                large.append(f"{name}: {node.name} is {length} lines")
    assert not large, "split by job: " + "; ".join(large)


@pytest.mark.parametrize("path", [path for layer in ("core", "parts", "limb")
                                  for path in sorted((PACKAGE / layer).glob("*.py"))],
                         ids=lambda path: f"{path.parent.name}/{path.name}")
def test_core_parts_and_limb_are_pure(path):
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


# The package's layers, lowest first: a module imports only from its own layer and those below it.
# What is not named here (the API, the batch, the operators, panels and properties) is the top layer:
# the ways in.
LAYERS = ("core", "parts", "limb", "rig")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> str:
    """The layer of a module of the package: its folder in ``LAYERS``, else "ways in"."""
    folder = module.split(".")[1] if "." in module else ""
    return folder if folder in LAYERS else "ways in"


def _rank(module: str) -> int:
    return (*LAYERS, "ways in").index(_layer(module))


def _imports(module: str) -> list[tuple[str, int]]:
    """Every module of the package that ``module`` imports, anywhere in it (in functions too), with the line."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[:len(package.split(".")) + 1 - node.level]) if node.level else ""
            base = ".".join(filter(None, (base, node.module)))
            # ``from package import name`` imports the module ``package.name`` where there is one.
            found += [(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base, node.lineno)
                      for alias in node.names]
    return sorted({(name, line) for name, line in found if name in MODULES and name != module})


def test_every_import_keeps_to_the_layers():
    """``core`` (pure maths, naming, model, detection) < ``parts`` < ``limb`` (options, planning, requests) <
    ``rig`` (Blender) < the ways in: nothing reaches a layer above its own."""
    wrong = [f"{module} ({_layer(module)}) imports {name} ({_layer(name)}) at line {line}"
             for module in MODULES for name, line in _imports(module) if _rank(name) > _rank(module)]
    assert not wrong, "\n".join(wrong)


def test_no_module_imports_itself_back():
    """No circle of imports between the package's modules (``a`` imports ``b`` which imports ``a``)."""
    # The package itself (``ik_rigger``: registration) is loaded before any of its modules, so a
    # module that imports it (the farm's worker registers the add-on) adds no order between them.
    graph = {module: sorted({name for name, _ in _imports(module) if name != "ik_rigger"}) for module in MODULES}
    circles: list[str] = []
    state: dict[str, str] = {}  # "open" while on the current path, "done" once all it reaches is walked

    def walk(module: str, path: list[str]) -> None:
        state[module] = "open"
        for name in graph[module]:
            if state.get(name) == "open":
                circles.append(" -> ".join(path[path.index(name):] + [name]))
            elif name not in state:
                walk(name, [*path, name])
        state[module] = "done"

    for module in graph:
        if module not in state:
            walk(module, [module])
    assert not circles, "\n".join(circles)


@pytest.mark.parametrize("module", ["ik_rigger.rig.build", "ik_rigger.rig.edit_pass", "ik_rigger.rig.pose_pass"])
def test_the_build_knows_no_particular_part(module):
    """The build reaches the parts through their registry only (``ik_rigger.parts``): a part's
    planning and what a rebuild keeps (``Part.keep``) are the part's own."""
    particular = [f"{name} at line {line}" for name, line in _imports(module) if name.startswith("ik_rigger.parts.")]
    assert not particular, particular
