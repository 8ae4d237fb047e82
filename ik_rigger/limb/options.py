"""The build options, each declared once, by the part it belongs to.

Each part (``ik_rigger.parts``) declares its options as the fields of a small frozen
dataclass: name, type and default, and in its metadata (``option(...)``) the rest:
label, description, range, choices, where the panel shows it. ``LimbOptions`` gathers
every part's fields, in the parts' order. Everything else is derived from it:

- the Blender properties of the build operators, the sidebar's settings and each
  limb's record (``props.LimbSettings``);
- the panel and redo-panel layout (``panel``, ``shown_when``);
- the validation of values from scripts and the batch config (``check``, ``fits``: each
  value of its declared type first);
- earlier releases' keys, read as today's options (``current_keys``, from ``Option.old_names``
  and ``Part.retired``);
- the bones options name, mirrored by Both Sides and renamed with the bones (``renamed_bones``,
  from ``Option.bone``).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields, make_dataclass, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ..core.errors import RigError
from ..parts import PARTS
from ..parts.base import Option


def _assemble() -> type:
    """``LimbOptions``: every part's options as one frozen dataclass, in the parts' order."""
    found: list[tuple[str, Any, Any]] = []
    owners: dict[str, str] = {}
    for part in PARTS:
        for entry in fields(part.options):
            if entry.name in owners:
                raise TypeError(f"the option {entry.name} is declared by both {owners[entry.name]} and {part.name}")
            owners[entry.name] = part.name
            found.append((entry.name, entry.type, field(default=entry.default, metadata=entry.metadata)))
    assembled = make_dataclass("LimbOptions", found, frozen=True)
    assembled.__module__ = __name__
    assembled.__doc__ = ("What a user can choose for one limb, every part's options together; the defaults are "
                         "the guide's rig.")
    return assembled


if TYPE_CHECKING:
    # What ``_assemble`` makes, spelled out for the type checker: a dataclass's fields come from its bases
    # last to first, so the parts are listed in reverse registry order (``tests/test_options.py`` checks it).
    from ..parts import (
        chain,
        clone,
        distance,
        foot_roll,
        handle,
        hidden,
        hinge,
        ik,
        parents,
        pole,
        pole_line,
        soft_ik,
        stretch,
    )

    @dataclass(frozen=True)
    class LimbOptions(hidden.Options, hinge.Options, clone.Options, soft_ik.Options, distance.Options, ik.Options,
                      pole_line.Options, pole.Options, stretch.Options, foot_roll.Options, handle.Options,
                      parents.Options, chain.Options):
        """What a user can choose for one limb, every part's options together."""
else:
    LimbOptions = _assemble()


@dataclass(frozen=True)
class Declared:
    """One option as declared: its field's name, type and default, and its ``Option``."""

    name: str
    kind: str  # "bool", "int", "float" or "str"
    default: Any
    option: Option


# No limb's option (a limb is one side) but a build's: the operator, the sidebar, the API and the
# batch config all read it from here.
BOTH_SIDES = Declared("both_sides", "bool", False, Option(
    "Both Sides", "Also rig the mirrored chain when the bone names carry a side (.L/.R, _l/_r, Left/Right)"))


def _declared() -> tuple[Declared, ...]:
    found = []
    for entry in fields(LimbOptions):
        kind = entry.type if isinstance(entry.type, str) else entry.type.__name__
        default = entry.default if entry.default is not MISSING else None
        found.append(Declared(entry.name, kind, default, entry.metadata["option"]))
    return tuple(found)


_SCHEMA = _declared()
# Every value of a set of options, in the schema's (the fields') order, read in one call: hashing or
# comparing the frozen dataclass itself reads its fields one by one in Python, which a build of many
# limbs pays at each limb.
values_of = attrgetter(*(declared.name for declared in _SCHEMA))


def schema() -> Iterator[Declared]:
    """Every build option, in the order the panels show them."""
    return iter(_SCHEMA)


# The keys of earlier releases: each option's old names, and the keys parts retired (with why).
_RENAMED = {old: declared.name for declared in _SCHEMA for old in declared.option.old_names}
_RETIRED = {key: why for part in PARTS for key, why in part.retired.items()}


def current_keys(values: Mapping[str, Any], where: str = "") -> tuple[dict[str, Any], list[str]]:
    """``values`` keyed by today's option names, and a note for each key an earlier release used.

    A key an option had before (``Option.old_names``) is read as that option; one a part retired
    (``Part.retired``) is dropped. Other keys pass as they are, for the caller to check.
    """
    place = f"{where}: " if where else ""
    current: dict[str, Any] = {}
    given: dict[str, str] = {}  # option -> the key that set it
    notes = []
    for key, value in values.items():
        if key in _RETIRED:
            notes.append(f"{place}'{key}' is an option of an earlier release, left unused: {_RETIRED[key]}")
            continue
        name = _RENAMED.get(key, key)
        if name in given:
            raise RigError(f"{place}'{given[name]}' and '{key}' both set the option {name}",
                           hint=f"Keep only '{name}' (the other is its name in an earlier release).")
        if name != key:
            notes.append(f"{place}'{key}' is read as '{name}', its name now: rename it so")
        current[name], given[name] = value, key
    return current, notes


def renamed_bones(options: LimbOptions, rename: Callable[[str], str | None]) -> LimbOptions:
    """``options`` with each bone an option names (``Option.bone``) passed through ``rename``: the
    other side's bone for Both Sides, a bone's new name after a rename; kept where it gives None."""
    changes = {declared.name: rename(value) for declared in schema() if declared.option.bone
               for value in (getattr(options, declared.name),) if value}
    renamed: dict[str, Any] = {name: value for name, value in changes.items() if value}
    return replace(options, **renamed)


def fits(kind: str, value: Any) -> bool:
    """Whether ``value`` is of a declared kind: "bool" takes only True and False, "int" a whole number
    (not a bool), "float" a finite number, "str" and "enum" text."""
    if kind == "bool":
        return isinstance(value, bool)
    if kind in ("str", "enum"):
        return isinstance(value, str)
    if isinstance(value, bool):
        return False
    if kind == "int":
        return isinstance(value, int)
    return isinstance(value, int | float) and math.isfinite(value)


_KINDS = {"bool": "true or false", "int": "a whole number", "float": "a finite number", "str": "text"}


def check_kinds(options: LimbOptions, bone: str = "") -> None:
    """Refuse a value not of its option's declared type (a chain length of 2.5, a pole of 1, an
    infinite distance), naming the option: before anything reads it."""
    for declared in schema():
        value = getattr(options, declared.name)
        if not fits(declared.kind, value):
            raise RigError(f"{declared.name} must be {_KINDS[declared.kind]}, not {value!r}", bone=bone,
                           hint=f"Give {declared.option.label} {_KINDS[declared.kind]}.")


def check(options: LimbOptions, bone: str = "") -> None:
    """Refuse values of the wrong type, outside an option's choices or range, with the option and what is allowed."""
    check_kinds(options, bone)
    check_values(options, bone)


def _stored(bound: float) -> float:
    """``bound`` as Blender stores a float property, in single precision: the end of the option's slider in
    the redo panel gives this (pi, 180 degrees, is 3.1415927 there, past Python's 3.141592653589793)."""
    if not abs(bound) < 3e38:  # an unbounded end, or one past single precision's (none is)
        return bound
    return struct.unpack("f", struct.pack("f", bound))[0]


def check_values(options: LimbOptions, bone: str = "") -> None:
    """Refuse values outside an option's choices or range (of the right types: ``check_kinds`` first)."""
    for declared in schema():
        value = getattr(options, declared.name)
        spec = declared.option
        if spec.items:
            allowed = [item[0] for item in spec.items]
            if value not in allowed:
                raise RigError(f"unknown {spec.label.lower()} '{value}' (option {declared.name})", bone=bone,
                               hint=f"Use one of: {', '.join(allowed)}.")
        elif declared.kind in ("int", "float"):
            low = spec.minimum if spec.minimum is not None else -math.inf
            high = spec.maximum if spec.maximum is not None else math.inf
            if not min(low, _stored(low)) <= value <= max(high, _stored(high)):
                raise RigError(f"{spec.label.lower()} {value:g} is outside {low:g} to {high:g} (option "
                               f"{declared.name})", bone=bone,
                               hint=f"Set {declared.name} between {low:g} and {high:g}.")
