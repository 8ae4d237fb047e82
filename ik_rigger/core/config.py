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

A mistake in the config is a usage error: the whole run stops before any file opens.
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, cast

from .errors import RigError
from .plan import LimbOptions

_OPTION_TYPES = {field.name: field.type for field in fields(LimbOptions)}
_PYTHON_TYPES: dict[str, type | tuple[type, ...]] = {"int": int, "float": (int, float), "bool": bool, "str": str}


@dataclass(frozen=True)
class LimbRequest:
    """One limb the config asks for."""

    last: str
    options: LimbOptions
    both_sides: bool = False


@dataclass(frozen=True)
class ArmatureConfig:
    """What the config says about the armatures one section matches."""

    name: str = "*"
    file: str = "*"
    detect: bool = True
    limbs: tuple[LimbRequest, ...] = ()

    def matches(self, armature: str, filename: str) -> bool:
        return fnmatch.fnmatchcase(armature, self.name) and fnmatch.fnmatchcase(filename, self.file)


@dataclass(frozen=True)
class Config:
    """The whole config; an empty one means "detect limbs, default options"."""

    defaults: LimbOptions = LimbOptions()
    armatures: tuple[ArmatureConfig, ...] = ()

    def for_armature(self, armature: str, filename: str) -> ArmatureConfig | None:
        """The first section that matches, if any."""
        return next((section for section in self.armatures if section.matches(armature, filename)), None)

    def names_armature(self, armature: str, filename: str) -> bool:
        """True when a section names this armature explicitly (not through "*")."""
        return any(section.name == armature and section.matches(armature, filename) for section in self.armatures)


def _options(table: dict[str, Any], base: LimbOptions, where: str) -> LimbOptions:
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _OPTION_TYPES:
            raise RigError(f"{where}: unknown option '{key}'",
                           hint=f"Use one of: {', '.join(sorted(_OPTION_TYPES))}.")
        wanted = _PYTHON_TYPES[str(_OPTION_TYPES[key])]
        if not isinstance(value, wanted) or (wanted is not bool and isinstance(value, bool)):
            raise RigError(f"{where}: option '{key}' should be {_OPTION_TYPES[key]}, not {value!r}",
                           hint="Fix the value in the config file.")
        values[key] = float(cast(float, value)) if _OPTION_TYPES[key] == "float" else value
    return replace(base, **values)


def parse_config(text: str, source: str = "config") -> Config:
    """Read a config from TOML text; raises ``RigError`` naming what is wrong and where."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RigError(f"{source} is not valid TOML ({error})", hint="Fix the file's syntax.") from error
    unknown = set(data) - {"defaults", "armature"}
    if unknown:
        raise RigError(f"{source}: unknown section(s) {', '.join(sorted(unknown))}",
                       hint="Use [defaults] and [[armature]] sections.")
    defaults = _options(data.get("defaults", {}), LimbOptions(), f"{source} [defaults]")
    sections = []
    for index, table in enumerate(data.get("armature", [])):
        where = f"{source} [[armature]] #{index + 1}"
        unknown = set(table) - {"name", "file", "detect", "limb"}
        if unknown:
            raise RigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}",
                           hint="Use name, file, detect and [[armature.limb]].")
        limbs = []
        for number, limb in enumerate(table.get("limb", [])):
            limb = dict(limb)
            place = f"{where} limb #{number + 1}"
            last = limb.pop("last", None)
            if not isinstance(last, str) or not last:
                raise RigError(f"{place}: needs 'last', the name of the chain's last bone",
                               hint='Add last = "shin.L" (for example).')
            both_sides = limb.pop("both_sides", False)
            limbs.append(LimbRequest(last, _options(limb, defaults, place), bool(both_sides)))
        sections.append(ArmatureConfig(name=str(table.get("name", "*")), file=str(table.get("file", "*")),
                                       detect=bool(table.get("detect", True)), limbs=tuple(limbs)))
    return Config(defaults=defaults, armatures=tuple(sections))


def load_config(path: Path) -> Config:
    """Read a config file; a missing or unreadable file is a ``RigError``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise RigError(f"cannot read the config file '{path}' ({error.strerror})",
                       hint="Check the path given to --config.") from error
    return parse_config(text, path.name)
