"""README and docs/ name what a user sees and types as IK Rigger has it.

Each command line's flags are flags of that command; each `api.NAME(...)` and
`bpy.ops.ik_rigger.NAME(...)` exists and takes the keywords shown; each menu path
through *IK Rigger* ends at an entry of that menu; and an operator is named by its whole
label (*Auto-Rig Limbs*, not *Auto-Rig*), as F3 finds it.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import bpy
import pytest

from ik_rigger import aim_operators, api, export_operators, ground_operators, operators, pose_operators, ui
from ik_rigger.limb import options

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# The pages beside the code they describe, checked as the docs are.
READMES = [ROOT / "benchmarks" / "README.md", ROOT / "tests" / "data" / "README.md"]
CHECKED = PAGES + READMES
FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
# *An italic span*, which may run over one line break.
ITALIC = re.compile(r"(?<![*\w])\*([^*\s][^*\n]*?(?:\n[^*\n]+?)?)\*(?![*\w])")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")

# Blender's own command-line flags, and pip's, as the pages use them beside IK Rigger's.
BLENDER_FLAGS = {"--background", "--factory-startup", "--python", "--python-expr", "--python-exit-code",
                 "--command"}
PIP_FLAGS = {"--target", "--python-version"}


def _parsed_flags(path: str) -> set[str]:
    """The flags a Python script's argparse declares (``add_argument("--x"``), read from its source."""
    text = (ROOT / path).read_text(encoding="utf-8")
    return {"--help", *re.findall(r"add_argument\([^)]*?\"(--[a-z][a-z0-9-]*)\"", text)}


def _shell_flags(path: str) -> set[str]:
    """The flags a shell script's ``case`` takes (``--port)``)."""
    return set(re.findall(r"^\s*(--[a-z][a-z0-9-]*)\)", (ROOT / path).read_text(encoding="utf-8"), re.MULTILINE))


COMMANDS = {
    "scripts/rig_batch.sh": _parsed_flags("ik_rigger/batch/command.py"),
    "scripts/rig_batch.py": _parsed_flags("ik_rigger/batch/command.py") | BLENDER_FLAGS,
    "--command ik_rigger": _parsed_flags("ik_rigger/batch/command.py") | BLENDER_FLAGS,
    "scripts/farm.sh": _shell_flags("scripts/farm.sh"),
    "scripts/benchmark.sh": _parsed_flags("benchmarks/run.py"),
    "benchmarks/run.py": _parsed_flags("benchmarks/run.py"),
    "scripts/rig_sample.sh": _parsed_flags("scripts/rig_sample.py"),
    # Dask's own commands, as scripts/farm.sh starts them.
    "dask scheduler": {"--port", "--no-dashboard"},
    "dask worker": {"--nworkers", "--nthreads", "--preload", "--no-dashboard"},
}
EVERY_FLAG = set().union(*COMMANDS.values(), PIP_FLAGS)


def _code(text: str) -> list[str]:
    """The lines of every fenced block and every code span of a page."""
    lines = [line for block in FENCE.findall(text) for line in block.splitlines()]
    return lines + CODE_SPAN.findall(FENCE.sub("", text))


def _prose(text: str) -> str:
    return CODE_SPAN.sub("", FENCE.sub("", text))


def wrong_flags(text: str) -> list[str]:
    """Flags no command takes; and, on a line or span that starts a command, flags that command does not take."""
    found = []
    for line in _code(text):
        line = re.sub(r"#.*", "", line)
        command = next((name for name in COMMANDS if name in line), None)
        for flag in FLAG.findall(line.split(command, 1)[1] if command else line):
            if flag not in (COMMANDS[command] if command else EVERY_FLAG):
                found.append(f"{flag} ({command or 'no command'})")
    return found


def _signature_keywords(function) -> tuple[set[str], bool]:
    parameters = inspect.signature(function).parameters.values()
    return ({parameter.name for parameter in parameters},
            any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters))


OPTION_NAMES = {declared.name for declared in options.schema()}


def wrong_api_calls(text: str) -> list[str]:
    """``api.NAME`` that the API does not have, and ``api.NAME(..., key=...)`` keywords it does not take."""
    found = []
    for code in _code(text):
        for name, arguments in re.findall(r"(?<![\w/.])api\.(?!py\b)(\w+)(\([^()]*(?:\([^()]*\)[^()]*)*\))?", code):
            if not hasattr(api, name) or name.startswith("_"):
                found.append(f"api.{name}")
                continue
            function = getattr(api, name)
            if not arguments or not callable(function) or isinstance(function, type):
                continue
            named, takes_options = _signature_keywords(function)
            for keyword in re.findall(r"[(,]\s*(\w+)=", arguments):
                if keyword not in named and not (takes_options and keyword in OPTION_NAMES):
                    found.append(f"api.{name}({keyword}=...)")
    return found


def internal_calls(text: str) -> list[str]:
    """Calls into IK Rigger's own layers (``rig.aim.add_aim(...)``): no path a user's Blender imports, and no
    promise to stay; the API has what a user calls."""
    return [match for code in _code(text)
            for match in re.findall(r"(?<![\w.])((?:rig|core|limb|parts|batch)\.[\w.]+)\(", code)]


def wrong_operator_calls(text: str) -> list[str]:
    """``bpy.ops.ik_rigger.NAME(key=...)`` with an operator or a keyword that is not there."""
    found = []
    for code in _code(text):
        for name, arguments in re.findall(r"bpy\.ops\.ik_rigger\.(\w+)\(([^()]*)\)", code):
            if name not in dir(bpy.ops.ik_rigger):
                found.append(f"bpy.ops.ik_rigger.{name}")
                continue
            properties = getattr(bpy.ops.ik_rigger, name).get_rna_type().properties.keys()
            found += [f"{name}({keyword}=...)" for keyword in re.findall(r"(\w+)=", arguments)
                      if keyword not in properties]
    return found


def _labels(classes) -> set[str]:
    """The labels of the operators among ``classes``."""
    return {cls.bl_label for cls in classes if issubclass(cls, bpy.types.Operator)}


OPERATOR_LABELS = _labels(operators.classes + pose_operators.classes + aim_operators.classes
                          + ground_operators.classes + export_operators.classes)
MENUS = {
    "Pose > IK Rigger": _labels(operators.classes + pose_operators.classes + aim_operators.classes
                                + ground_operators.classes) | {export_operators.IKRIG_OT_export.bl_label},
    "Object > IK Rigger": _labels(ui.OBJECT_MODE_OPERATORS),
    "Armature > IK Rigger": _labels(operators.classes + pose_operators.classes + aim_operators.classes
                                    + ground_operators.classes) | {export_operators.IKRIG_OT_export.bl_label},
    "File > Export": {export_operators.IKRIG_OT_export.bl_label},
}
PANEL_LABELS = {cls.bl_label for cls in ui.classes if issubclass(cls, bpy.types.Panel)}


def _operator_words() -> set[str]:
    """What the operators' redo panels and buttons show: their options' names and choices."""
    words = set()
    for name in dir(bpy.ops.ik_rigger):
        for prop in getattr(bpy.ops.ik_rigger, name).get_rna_type().properties:
            words.add(prop.name)
            if prop.type == "ENUM":
                words.update(item.name for item in prop.enum_items)
    return words


def wrong_names(text: str) -> list[str]:
    """Menu paths through IK Rigger's menus to an entry they do not hold; an operator named by part of its label."""
    found = []
    shown = OPERATOR_LABELS | PANEL_LABELS | _operator_words()
    for span in (" ".join(found.split()) for found in ITALIC.findall(_prose(text))):
        menu = next((menu for menu in MENUS if span.startswith(menu + " > ")), None)
        if menu is not None and span[len(menu) + 3:] not in MENUS[menu]:
            found.append(span)
        elif span not in shown and any(
                label.startswith(span + " ") for label in OPERATOR_LABELS):
            found.append(span)
    return found


def wrong_panels(text: str) -> list[str]:
    """The panels a page names ("sidebar *Limbs > Joints*", "the sidebar's *Pose Helpers*") that are not
    panels of IK Rigger's tab, each under the one named before it."""
    parents = {cls.bl_label: getattr(cls, "bl_parent_id", "") for cls in ui.classes if issubclass(cls, bpy.types.Panel)}
    ids = {cls.__name__: cls.bl_label for cls in ui.classes if issubclass(cls, bpy.types.Panel)}
    found = []
    for span in re.findall(r"sidebar(?:'s)? \*([^*]+)\*", " ".join(_prose(text).split())):
        path = span.split(" > ")
        if any(name not in parents for name in path) or any(
                ids.get(parents[child]) != parent for parent, child in zip(path, path[1:])):
            found.append(span)
    return found


def test_the_checks_find_what_is_wrong() -> None:
    page = ("Run `scripts/rig_batch.sh in/ --out o/ --jbos 2` or `--nowhere`; `scripts/farm.sh worker A --out x`.\n"
            "```sh\nscripts/benchmark.sh --only matrix --quik   # --anything in a comment\n```\n"
            "`api.build(obj, 'shin.L', pole_parent='HANDLE', both_sides=True, pole_paren='X')`, `api.nothing()`,\n"
            "`api.bake(obj, 'IK_TO_FK', frames, switch=True)`, `bpy.ops.ik_rigger.build_ik(both_side=True)`,\n"
            "`bpy.ops.ik_rigger.auto_rig()`, `bpy.ops.ik_rigger.no_such()`.\n"
            "*Pose > IK Rigger > Bake IK/FK*, *Pose > IK Rigger > Bake*, *Object > IK Rigger > Build IK Limb*,\n"
            "*Auto-Rig Limbs*, *Auto-Rig*, *Remove*, *Build*, *Limbs*, *Snap FK*, *Snap FK to IK*.\n")
    assert wrong_flags(page) == ["--quik (scripts/benchmark.sh)", "--jbos (scripts/rig_batch.sh)",
                                 "--nowhere (no command)", "--out (scripts/farm.sh)"]
    assert wrong_api_calls(page) == ["api.build(pole_paren=...)", "api.nothing"]
    assert wrong_operator_calls(page) == ["build_ik(both_side=...)", "bpy.ops.ik_rigger.no_such"]
    assert internal_calls("In Python: `rig.aim.add_aim(obj, 'EYES')`, `api.add_aim(obj, 'EYES')`.") == [
        "rig.aim.add_aim"]
    assert wrong_panels("the sidebar *Limbs > Joints*, the sidebar's *Pose Helpers*, sidebar *Joints > Limbs*,\n"
                        "the sidebar's *Snapping*.") == ["Joints > Limbs", "Snapping"]
    assert wrong_names(page) == ["Pose > IK Rigger > Bake", "Object > IK Rigger > Build IK Limb", "Auto-Rig",
                                 "Remove", "Snap FK"]


@pytest.mark.parametrize("page", CHECKED, ids=[page.relative_to(ROOT).as_posix() for page in CHECKED])
def test_every_flag_is_its_commands(page: Path) -> None:
    assert wrong_flags(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", CHECKED, ids=[page.relative_to(ROOT).as_posix() for page in CHECKED])
def test_every_api_call_and_operator_call_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert wrong_api_calls(text) == []
    assert wrong_operator_calls(text) == []
    if page.name not in ("design.md", "speed.md"):  # the pages about the code itself
        assert internal_calls(text) == []


@pytest.mark.parametrize("page", CHECKED, ids=[page.relative_to(ROOT).as_posix() for page in CHECKED])
def test_operators_menus_and_panels_are_named_as_blender_shows_them(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert wrong_names(text) == []
    assert wrong_panels(text) == []


def test_every_benchmark_section_named_is_one() -> None:
    """``scripts/benchmark.sh --only build`` and ``--series bones``: a section and series the benchmark has
    (``NAME``, in capitals, stands for one)."""
    from benchmarks import run, scaling

    for page in CHECKED:
        for code in _code(page.read_text(encoding="utf-8")):
            for section in re.findall(r"--only ([a-z_][a-z_ ]*)", code):
                assert set(section.split()) <= set(run.SECTIONS), (page.name, code)
            for series in re.findall(r"--series ([a-z_][a-z_ ]*)", code):
                assert set(series.split()) <= {item.name for item in scaling.SERIES}, (page.name, code)
