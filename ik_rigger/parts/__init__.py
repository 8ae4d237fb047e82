"""The parts a limb is made of, in the order they plan (see ``base`` for what a part is).

Adding a part is one module here that declares its ``PART``, and its name in ``REGISTERED``.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import import_module

from .base import Part, Shape

# The registry: each name is a module of this package declaring ``PART``.
REGISTERED = ("chain", "parents", "handle", "foot_roll", "stretch", "pole", "pole_line", "ik", "distance", "soft_ik",
              "clone", "hinge", "hidden")
PARTS: tuple[Part, ...] = tuple(import_module(f"{__name__}.{name}").PART for name in REGISTERED)


def roles() -> tuple[str, ...]:
    """Every role a made bone may have, part by part."""
    return tuple(role for part in PARTS for role in part.roles)


def shapes() -> dict[str, Shape]:
    """Role -> the custom shape of the controls that have one."""
    return {role: shape for part in PARTS for role, shape in part.shapes.items()}


def targets() -> dict[str, tuple[str, ...]]:
    """Constraint type -> the roles IK Rigger's constraints of that type aim at."""
    found: dict[str, tuple[str, ...]] = {}
    for part in PARTS:
        for kind, aimed in part.targets.items():
            found[kind] = found.get(kind, ()) + tuple(role for role in aimed if role not in found.get(kind, ()))
    return found


def with_hook(hook: str) -> Iterator[Part]:
    """The parts that offer ``hook`` ("draw", "snap_to_fk", "bake_to_ik", "named"...), in order."""
    return (part for part in PARTS if getattr(part, hook) is not None)


__all__ = ["PARTS", "REGISTERED", "roles", "shapes", "targets", "with_hook"]
