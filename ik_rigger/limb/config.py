"""The batch command's TOML config: which limbs to rig on which armature, with which options.

    [defaults]                 # build options for every limb (any LimbOptions field)
    copy_mode = "ROTATION"

    [[armature]]
    name = "Hero"              # armature object name; "*" for any
    file = "hero*.blend"       # optional: only files whose name matches this glob
    detect = false             # rig only the limbs below (default: also detect the others)

    [[armature.limb]]
    last = "shin.L"            # the chain's last bone
    both_sides = true
    pole_parent = "HANDLE"

    [import.fbx]               # settings for an importer (fbx, gltf, bvh), over the batch's own
    global_scale = 0.01

Every value is checked against the schema the caller passes in: the build options as
their one declaration says (``option_specs``: type, range, allowed values), so a config
can never ask for what the panel could not. A mistake is a usage error: the whole run stops before any
file opens, naming the key, where it is and what is allowed. A key an earlier release used
(``extremity``, now ``extremity_name``) is read as the option it became, with a note.
"""

from __future__ import annotations

import difflib
import fnmatch
import math
import os
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.errors import RigError
from .options import BOTH_SIDES, Declared, LimbOptions, current_keys, fits, schema

# Blender stores integer properties in 32 bits.
_INT_LIMIT = 2**31 - 1


@dataclass(frozen=True)
class OptionSpec:
    """One option as its declaration states it: kind, default, hard limits, allowed values."""

    kind: str  # "bool", "int", "float", "str" or "enum"
    default: Any = None
    description: str = ""
    minimum: float | None = None
    maximum: float | None = None
    items: tuple[str, ...] = ()

    def allowed(self) -> str:
        """What this option accepts, in words."""
        if self.kind == "enum":
            return "one of " + ", ".join(f'"{item}"' for item in self.items)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "str":
            return "a string"
        low = "" if self.minimum is None else f" from {self.minimum:g}"
        high = "" if self.maximum is None else f" up to {self.maximum:g}"
        kind = "an integer" if self.kind == "int" else "a finite number"
        return kind + (low + high if low or high else "")


@dataclass(frozen=True)
class Schema:
    """What a config may say: the build options, a limb's own ``both_sides`` and each importer's settings.

    ``importer`` gives one input format's settings; it is asked only when the config
    sets some, so a run without an ``[import]`` section never loads an importer.
    """

    options: Mapping[str, OptionSpec]
    both_sides: OptionSpec
    formats: tuple[str, ...] = ()
    importer: Callable[[str], Mapping[str, OptionSpec]] | None = None


@dataclass(frozen=True)
class LimbRequest:
    """One limb the config asks for."""

    last: str
    options: LimbOptions
    both_sides: bool = BOTH_SIDES.default


@dataclass(frozen=True)
class ArmatureConfig:
    """What the config says about the armatures one section matches."""

    name: str = "*"
    file: str = "*"
    detect: bool = True
    limbs: tuple[LimbRequest, ...] = ()
    where: str = "[[armature]]"  # the section's place in the config, for messages

    def matches(self, armature: str, filename: str) -> bool:
        return fnmatch.fnmatchcase(armature, self.name) and fnmatch.fnmatchcase(filename, self.file)


@dataclass(frozen=True)
class Config:
    """The whole config; an empty one means "detect limbs, default options"."""

    defaults: LimbOptions = LimbOptions()
    armatures: tuple[ArmatureConfig, ...] = ()
    # Per input format (fbx, gltf, bvh), importer settings over the batch's own.
    imports: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # keys of an earlier release, read as today's options

    def with_animation(self, animation: str) -> Config:
        """This config with every limb's ``animation`` set (the batch command's ``--animation``)."""
        return replace(self, defaults=replace(self.defaults, animation=animation), armatures=tuple(
            replace(section, limbs=tuple(replace(limb, options=replace(limb.options, animation=animation))
                                         for limb in section.limbs))
            for section in self.armatures))

    def for_armature(self, armature: str, filename: str) -> ArmatureConfig | None:
        """The section that matches, if any; two that match are a ``RigError`` naming both (which
        one the user meant, no order can tell)."""
        found = [section for section in self.armatures if section.matches(armature, filename)]
        if len(found) > 1:
            raise RigError(f"{found[0].where} and {found[1].where} both match the armature '{armature}' in "
                           f"'{filename}'", hint="Make their 'name' (or 'file') patterns match apart, or merge them.")
        return found[0] if found else None

    def names_armature(self, armature: str, filename: str) -> bool:
        """True when a section names this armature explicitly (not through "*")."""
        return any(section.name == armature and section.matches(armature, filename) for section in self.armatures)


def _unknown(where: str, key: str, known: Mapping[str, Any] | tuple[str, ...], what: str) -> RigError:
    names = sorted(known)
    close = difflib.get_close_matches(key, names, n=1)
    guess = f" (did you mean '{close[0]}'?)" if close else ""
    return RigError(f"{where}: unknown {what} '{key}'{guess}", hint=f"Use one of: {', '.join(names)}.")


def check_value(key: str, value: Any, spec: OptionSpec, where: str) -> Any:
    """``value`` as the option's type, or a ``RigError`` naming the key and what it accepts."""
    wrong = RigError(f"{where}: '{key}' = {value!r} is not allowed", hint=f"'{key}' takes {spec.allowed()}.")
    if not fits(spec.kind, value) or (spec.kind == "enum" and value not in spec.items):
        raise wrong
    if spec.kind not in ("int", "float"):
        return value
    if spec.kind == "int":
        low = -_INT_LIMIT if spec.minimum is None else spec.minimum
        high = _INT_LIMIT if spec.maximum is None else spec.maximum
    else:
        value = float(value)
        low = -math.inf if spec.minimum is None else spec.minimum
        high = math.inf if spec.maximum is None else spec.maximum
    if not low <= value <= high:
        raise wrong
    return value


def _table(value: Any, where: str, example: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RigError(f"{where} should be a table, not {value!r}", hint=f"Write it as {example}.")
    return value


def _tables(value: Any, where: str, example: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise RigError(f"{where} should be a list of tables, not {value!r}", hint=f"Write each one as {example}.")
    return value


def _options(table: dict[str, Any], base: LimbOptions, schema: Schema, where: str, notes: list[str]) -> LimbOptions:
    values: dict[str, Any] = {}
    table, renamed = current_keys(table, where)
    notes.extend(renamed)
    for key, value in table.items():
        if key not in schema.options:
            raise _unknown(where, key, schema.options, "option")
        values[key] = check_value(key, value, schema.options[key], where)
    return replace(base, **values)


def _armature(table: dict[str, Any], defaults: LimbOptions, schema: Schema, where: str,
              notes: list[str]) -> ArmatureConfig:
    keys = {"name": OptionSpec("str"), "file": OptionSpec("str"), "detect": OptionSpec("bool")}
    for key in table:
        if key not in (*keys, "limb"):
            raise _unknown(where, key, (*keys, "limb"), "key")
    plain = {key: check_value(key, table[key], spec, where) for key, spec in keys.items() if key in table}
    limbs = []
    for number, limb in enumerate(_tables(table.get("limb", []), f"{where} 'limb'", "[[armature.limb]]")):
        limb = dict(limb)
        place = f"{where} limb #{number + 1}"
        last = limb.pop("last", None)
        if not isinstance(last, str) or not last.strip():
            raise RigError(f"{place}: needs 'last', the name of the chain's last bone",
                           hint='Add last = "shin.L" (for example).')
        sides = schema.both_sides
        both_sides = check_value("both_sides", limb.pop("both_sides", sides.default), sides, place)
        limbs.append(LimbRequest(last, _options(limb, defaults, schema, place, notes), both_sides))
    return ArmatureConfig(**plain, limbs=tuple(limbs), where=where)


def _imports(table: dict[str, Any], schema: Schema, where: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for fmt, settings in table.items():
        if fmt not in schema.formats or schema.importer is None:
            raise _unknown(where, fmt, schema.formats, "input format")
        place = f"{where}.{fmt}"
        specs = schema.importer(fmt)
        checked = {}
        for key, value in _table(settings, place, f"[import.{fmt}]").items():
            if key not in specs:
                raise _unknown(place, key, specs, "importer setting")
            checked[key] = check_value(key, value, specs[key], place)
        found[fmt] = checked
    return found


_WHERE = re.compile(r"at line (\d+), column \d+")


def _key_at(text: str, error: str) -> str:
    """For a key given twice (tomllib names only the line): ': the key 'NAME' is given twice'."""
    where = _WHERE.search(error)
    if "overwrite a value" not in error or where is None:
        return ""
    lines = text.removeprefix("\ufeff").splitlines()
    number = int(where.group(1))
    key = lines[number - 1].split("=", 1)[0].strip() if number <= len(lines) else ""
    return f": the key '{key}' is given twice" if key else ""


def parse_config(text: str, schema: Schema, source: str = "config") -> Config:
    """Read a config from TOML text; raises ``RigError`` naming what is wrong and where."""
    try:
        data = tomllib.loads(text.removeprefix("\ufeff"))  # an editor's byte order mark is no statement
    except tomllib.TOMLDecodeError as error:
        raise RigError(f"{source} is not valid TOML ({error}{_key_at(text, str(error))})",
                       hint="Fix the file's syntax.") from error
    for key in data:
        if key not in ("defaults", "armature", "import"):
            raise _unknown(source, key, ("armature", "defaults", "import"), "section")
    notes: list[str] = []
    defaults = _options(_table(data.get("defaults", {}), f"{source} 'defaults'", "[defaults]"), LimbOptions(),
                        schema, f"{source} [defaults]", notes)
    sections = [_armature(table, defaults, schema, f"{source} [[armature]] #{index + 1}", notes)
                for index, table in enumerate(_tables(data.get("armature", []), f"{source} 'armature'",
                                                      "[[armature]]"))]
    for index, section in enumerate(sections):
        twin = next((other for other in sections[:index] if (other.name, other.file) == (section.name, section.file)),
                    None)
        if twin is not None:
            raise RigError(f"{twin.where} and {section.where} both match name = '{section.name}', file = "
                           f"'{section.file}'", hint="Merge them into one section.")
    imports = _imports(_table(data.get("import", {}), f"{source} 'import'", "[import.fbx]"), schema,
                       f"{source} [import]")
    return Config(defaults=defaults, armatures=tuple(sections), imports=imports, notes=tuple(notes))


# A config names limbs and options: far below this. The limit keeps a wrong path (a log, a
# disk image) from being read into memory.
CONFIG_LIMIT = 1024 * 1024


def _config_bytes(path: Path) -> bytes:
    """The file's bytes: only a regular file (a FIFO or a device such as /dev/zero could be read
    forever), and at most CONFIG_LIMIT of them."""
    # Not blocking on open: a FIFO with no writer would wait forever.
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise RigError(f"the config file '{path}' is not a regular file", hint="Give a TOML file to --config.")
        data = stream.read(CONFIG_LIMIT + 1)
    if len(data) > CONFIG_LIMIT:
        raise RigError(f"the config file '{path}' is larger than {CONFIG_LIMIT // 1024 // 1024} MB",
                       hint="Check the path given to --config: a config is a small TOML file.")
    return data


def load_config(path: Path, schema: Schema) -> Config:
    """Read a config file; a missing, unreadable, non-UTF-8, too large or not regular file is a ``RigError``."""
    try:
        data = _config_bytes(path)
    except OSError as error:
        raise RigError(f"cannot read the config file '{path}' ({error.strerror or error})",
                       hint="Check the path given to --config.") from error
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RigError(f"the config file '{path}' is not UTF-8 text (byte {error.start})",
                       hint="Save it as UTF-8.") from error
    return parse_config(text, schema, path.name)


def spec_of(declared: Declared) -> OptionSpec:
    """An option as a config may set it, read from its one declaration (``limb.options``)."""
    return OptionSpec("enum" if declared.option.items else declared.kind, default=declared.default,
                      description=declared.option.description, minimum=declared.option.minimum,
                      maximum=declared.option.maximum, items=tuple(item[0] for item in declared.option.items))


def option_specs() -> dict[str, OptionSpec]:
    """The build options as a config may set them."""
    return {declared.name: spec_of(declared) for declared in schema()}
