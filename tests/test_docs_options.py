"""The docs state the build options as the schema declares them.

docs/rigging.md's table of every build option has one row per option of the schema (and
*Both Sides*), each with its label, panel, default, range or choices as declared; every option
set to a value on a page (`copy_mode = "TRANSFORMS"`, `api.build(..., soft_ik=0.05)`, a config's
key) is an option and the value one it takes; a default a page states beside one option's name
is that option's default; and a name in code that reads almost like an option's is one. docs/design.md's
table of parts is the registry's, in its order, and its Roles name every role the parts declare.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import math
import re
from pathlib import Path
from typing import Any

import bpy
import pytest

from ik_rigger.core.errors import RigError
from ik_rigger.limb import options
from ik_rigger.parts import PARTS, REGISTERED

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# The pages beside the code they describe, checked as the docs are.
READMES = [ROOT / "benchmarks" / "README.md", ROOT / "tests" / "data" / "README.md"]
CHECKED = PAGES + READMES
RIGGING = ROOT / "docs" / "rigging.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
DECLARED = {declared.name: declared for declared in (*options.schema(), options.BOTH_SIDES)}
# What the sidebar's Build panel shows besides the basic options: Both Sides (ui.IKRIG_PT_build).
PANELS = {"basic": "Build", "advanced": "Advanced"}
SHOWN_IN_BUILD = {"both_sides"}
# A config's keys that are no option: an armature's and a limb's own (limb/config.py).
CONFIG_KEYS = {"name", "file", "detect", "last"}


def _number(text: str) -> float:
    """A number as a page writes it: ``10000``, ``0.05``, ``-pi``."""
    text = text.replace(",", "")
    named = {"pi": math.pi, "-pi": -math.pi}
    try:
        return named[text] if text in named else float(text)
    except ValueError:
        return math.nan


def option_rows(text: str) -> dict[str, list[str]]:
    """The rows of the table under "### Every build option", by option name: its cells after the name."""
    section = text.split("### Every build option", 1)[1].split("\n#", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def _default_text(declared: options.Declared) -> str:
    if declared.kind == "bool":
        return "on" if declared.default else "off"
    if declared.kind == "str":
        return f'"{declared.default}"' if declared.default or not declared.option.items else '""'
    return f"{declared.default:g}"


def _choices_text(declared: options.Declared) -> str:
    return ", ".join(f'`"{name}"` ({label})' for name, label, _ in declared.option.items)


def wrong_rows(rows: dict[str, list[str]]) -> list[str]:
    """What the table says that the schema does not: a missing or unknown option, a label, panel,
    default, range or set of choices other than declared."""
    found = [f"{name}: no row" for name in DECLARED if name not in rows]
    found += [f"{name}: no such option" for name in rows if name not in DECLARED]
    for name, (label, panel, default, takes) in rows.items():
        declared = DECLARED.get(name)
        if declared is None:
            continue
        spec = declared.option
        if label != f"*{spec.label}*":
            found.append(f"{name}: label {label}, not *{spec.label}*")
        shown = "Build" if name in SHOWN_IN_BUILD else PANELS[spec.panel]
        if panel != shown:
            found.append(f"{name}: panel {panel}, not {shown}")
        wanted = _default_text(declared)
        if (default.strip("`") != wanted if declared.kind != "float" and declared.kind != "int"
                else not math.isclose(_number(default), declared.default, abs_tol=1e-9)):
            found.append(f"{name}: default {default}, not {wanted}")
        if spec.items and not takes.startswith(_choices_text(declared)):
            found.append(f"{name}: takes {takes}, not {_choices_text(declared)}")
        elif spec.items and takes != _choices_text(declared):
            found.append(f"{name}: more choices than {_choices_text(declared)}")
        elif declared.kind == "bool" and not takes.startswith("on or off"):
            found.append(f"{name}: takes {takes}, not on or off")
        elif declared.kind in ("int", "float"):
            bounds = re.match(r"(-?[\w.,]+) to (-?[\w.,]+)", takes)
            if bounds is None or not (math.isclose(_number(bounds[1]), spec.minimum, rel_tol=1e-6)
                                      and math.isclose(_number(bounds[2]), spec.maximum, rel_tol=1e-6)):
                found.append(f"{name}: takes {takes}, not {spec.minimum:g} to {spec.maximum:g}")
    return found


def _value(text: str) -> Any:
    """A value as Python or TOML writes it."""
    text = text.strip().rstrip(",")
    return ast.literal_eval({"true": "True", "false": "False"}.get(text, text))


def _assignments(text: str) -> list[tuple[str, str]]:
    """Every ``name = value`` and ``name=value`` in a page's code: its fenced blocks' lines and code spans."""
    code = [line for _, block in FENCE.findall(text) for line in block.splitlines()]
    code += CODE_SPAN.findall(FENCE.sub("", text))
    found = []
    for line in code:
        line = re.sub(r"#.*", "", line)
        found += re.findall(r"(?<![\w.\"'])(\w+)\s*=\s*(\"[^\"]*\"|'[^']*'|[-\w.]+)", line)
    return found


def wrong_values(text: str) -> list[str]:
    """Options set to a value they do not take (a choice not declared, a number out of range)."""
    found = []
    for name, value in _assignments(text):
        if name not in DECLARED or name == "both_sides":
            continue
        try:
            options.check(options.LimbOptions(**{name: _value(value)}))
        except (RigError, ValueError, SyntaxError):
            found.append(f"{name} = {value}")
    return found


def unknown_config_keys(text: str) -> list[str]:
    """Keys of a TOML config's ``[defaults]`` and ``[[armature...]]`` tables that are no option."""
    found = []
    for language, block in FENCE.findall(text):
        if language != "toml":
            continue
        table = ""
        for line in block.splitlines():
            line = re.sub(r"#.*", "", line).strip()
            if line.startswith("["):
                table = line
            elif "=" in line and (table == "[defaults]" or table.startswith("[[armature")):
                key = line.split("=", 1)[0].strip()
                if key not in DECLARED and key not in CONFIG_KEYS:
                    found.append(f"{table} {key}")
    return found


def _sentences(text: str) -> list[str]:
    prose = " ".join(FENCE.sub("", text).split())
    return re.split(r"(?<=[.;:])\s+(?=[A-Z*`(])", prose)


def _operator_defaults() -> dict[str, tuple[str, Any]]:
    """The operators' own properties (*Keep the Motion*, *Key IK/FK*, *Add Aim*'s *Distance*) by label,
    as kind and default: those whose label means one thing across the operators."""
    found: dict[str, set[tuple[str, Any]]] = {}
    for name in dir(bpy.ops.ik_rigger):
        for prop in getattr(bpy.ops.ik_rigger, name).get_rna_type().properties:
            if prop.identifier in DECLARED or prop.type not in ("BOOLEAN", "INT", "FLOAT", "ENUM"):
                continue
            kind = {"BOOLEAN": "bool", "INT": "int", "FLOAT": "float", "ENUM": "str"}[prop.type]
            found.setdefault(f"*{prop.name}*", set()).add((kind, prop.default))
    return {label: kinds.pop() for label, kinds in found.items() if len(kinds) == 1}


def wrong_defaults(text: str, named_defaults: dict[str, tuple[str, Any]] | None = None) -> list[str]:
    """A default a page states ("1.5 by default", "on by default") for the option or operator property it
    named last before it in the sentence (its *Label* or `name`), that is not its default."""
    defaults = {f"*{declared.option.label}*": (declared.kind, declared.default) for declared in DECLARED.values()}
    defaults |= {f"`{name}`": (declared.kind, declared.default) for name, declared in DECLARED.items()}
    defaults |= named_defaults or {}
    found = []
    for sentence in _sentences(text):
        for match in re.finditer(r"([-\w.]+) by default\b", sentence):
            named = [(place.start(), place[0]) for place in re.finditer(r"\*[^*]+\*|`[^`]+`", sentence[:match.start()])
                     if place[0] in defaults]
            if not named:
                continue
            label = named[-1][1]
            kind, default = defaults[label]
            stated = match[1].lower()
            if kind == "bool":
                right = stated == ("on" if default else "off")
            elif kind in ("int", "float"):
                right = re.fullmatch(r"-?[\d.]+", stated) is not None and math.isclose(float(stated), default,
                                                                                        rel_tol=1e-6)
            else:
                right = stated in (str(default).lower(), "automatic" if default == "AUTO" else str(default).lower())
            if not right:
                said = ("on" if default else "off") if kind == "bool" else f"{default:g}" if kind != "str" else default
                found.append(f"{label}: {match[1]} by default, not {said}")
    return found


def _floor_switches() -> set[str]:
    """The benchmark floor's switches, named after the options they stand for (``pole_lines``: Pole Line)."""
    from benchmarks import floor

    return set(inspect.signature(floor.rig_limbs).parameters)


def near_misses(text: str) -> list[str]:
    """Names in code that read almost like an option's and are none (``soft_iks``, ``maximum_stretch``); the
    benchmark floor's switches are its own."""
    found = []
    known = _floor_switches()
    for span in CODE_SPAN.findall(FENCE.sub("", text)) + [
            line for _, block in FENCE.findall(text) for line in block.splitlines()]:
        for word in re.findall(r"(?<![\w.])[a-z]+_[a-z_]+(?![\w(])", span):
            if word in DECLARED or word in known:
                continue
            if difflib.get_close_matches(word, DECLARED, n=1, cutoff=0.85):
                found.append(word)
    return found


def test_the_checks_find_what_is_wrong() -> None:
    rows = option_rows(RIGGING.read_text(encoding="utf-8"))
    rows.pop("hinge_joints")
    rows["soft_ik"] = ["*Soft IK*", "Advanced", "0.05", "0 to 0.5 of the chain's length"]
    rows["max_stretch"] = ["*Max Stretch*", "Build", "1.5", "1 to 10 times the chain's length"]
    rows["copy_mode"] = ["*Extremity Copies*", "Build", '`"ROTATION"`', '`"ROTATION"` (Rotation), `"SCALE"` (Scale)']
    rows["shapes"] = ["*Bone Shapes*", "Advanced", "off", "on or off"]
    rows["pole_paren"] = ["*Pole Parent*", "Build", '`"ORIGIN"`', '`"ORIGIN"` (Origin)']
    assert sorted(wrong_rows(rows)) == sorted([
        "hinge_joints: no row", "pole_paren: no such option", "soft_ik: default 0.05, not 0",
        "soft_ik: takes 0 to 0.5 of the chain's length, not 0 to 0.25", "max_stretch: label *Max Stretch*, "
        "not *Maximum Stretch*", "max_stretch: panel Build, not Advanced", "shapes: default off, not on",
        'copy_mode: takes `"ROTATION"` (Rotation), `"SCALE"` (Scale), not `"ROTATION"` (Rotation), '
        '`"ROTATION_SCALE"` (Rotation and Scale), `"TRANSFORMS"` (Transforms)'])
    page = ("Set `copy_mode = \"SCALE\"`, `soft_ik=0.3`, `distance_method = \"ITASC\"`; "
            "`api.build(obj, 'shin.L', pole_distance=200, iterations=50)`.\n"
            "```toml\n[defaults]\nmax_stretch = 0.5\npole_paren = \"HANDLE\"\n[[armature.limb]]\nlast = \"x\"\n"
            "hinge_joint = true\n[import.gltf]\nbone_heuristic = \"TEMPERANCE\"\n```\n"
            "The *Maximum Stretch* goes up to 10 (2 by default). *Bone Shapes* (off by default) draws rings. "
            "*Pole Distance* is 0.5 by default. `soft_iks` and `maximum_stretch` are no names.\n")
    assert wrong_values(page) == ['max_stretch = 0.5', 'copy_mode = "SCALE"', "soft_ik = 0.3", "pole_distance = 200"]
    assert unknown_config_keys(page) == ["[defaults] pole_paren", "[[armature.limb]] hinge_joint"]
    assert wrong_defaults(page) == ["*Maximum Stretch*: 2 by default, not 1.5", "*Bone Shapes*: off by default, not on"]
    assert near_misses(page) == ["soft_iks", "pole_paren", "hinge_joint"]
    operators = _operator_defaults()
    assert operators["*Keep the Motion*"] == ("bool", True)
    assert wrong_defaults("*Remove IK Limb* keeps the motion (*Keep the Motion*, off by default). *Add Aim* puts it "
                          "*Distance* head sizes away (2.5 by default).", operators) == [
        "*Keep the Motion*: off by default, not on", "*Distance*: 2.5 by default, not 3"]


def test_the_table_of_build_options_is_the_schema() -> None:
    assert wrong_rows(option_rows(RIGGING.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize("page", CHECKED, ids=[page.relative_to(ROOT).as_posix() for page in CHECKED])
def test_every_option_named_with_a_value_takes_it(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert wrong_values(text) == []
    assert unknown_config_keys(text) == []
    assert wrong_defaults(text, _operator_defaults()) == []
    assert near_misses(text) == []


DESIGN = ROOT / "docs" / "design.md"


def _roles() -> set[str]:
    """Every made bone's role, a hidden chain's numbered ones as ``JOINT.n``."""
    return {re.sub(r"\.\d+$", ".n", role) for part in PARTS for role in part.roles}


def wrong_parts(text: str) -> list[str]:
    """design.md's table of parts in another order than the registry's, and its Roles section naming a role
    no part declares, or leaving one out."""
    section = text.split("## Parts", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE)
    found = [] if tuple(rows) == REGISTERED else [f"parts table: {', '.join(rows)}"]
    roles = text.split("## Roles", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"\b[A-Z][A-Z_]+[A-Z](?:\.n)?\b", roles))
    found += [f"no such role: {role}" for role in sorted(named - _roles())]
    found += [f"role not named: {role}" for role in sorted(_roles() - named)]
    return found


def test_the_parts_check_finds_what_is_wrong() -> None:
    text = DESIGN.read_text(encoding="utf-8")
    swapped = text.replace("| `pole` |", "| `POLE_ROW` |").replace("| `stretch` |", "| `pole` |").replace(
        "| `POLE_ROW` |", "| `stretch` |")
    order = list(REGISTERED)
    first, second = order.index("stretch"), order.index("pole")
    order[first], order[second] = order[second], order[first]
    assert wrong_parts(swapped) == [f"parts table: {', '.join(order)}"]
    assert wrong_parts(text.replace("DISTANCE_CENTER (", "CENTRE (")) == ["no such role: CENTRE",
                                                                          "role not named: DISTANCE_CENTER"]


def test_design_names_the_parts_in_order_and_every_role() -> None:
    assert wrong_parts(DESIGN.read_text(encoding="utf-8")) == []
