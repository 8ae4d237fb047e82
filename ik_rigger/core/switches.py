"""The switches a limb keeps as custom properties on its handle (``ik_fk``, ``ik_weight``, ``stretch``,
``soft_ik``, ``parent``) and an aim rig on its control (``aim``), read as numbers.

They sit in the bone's Custom Properties, where a user or a script can make one a text, a list or a
group, or delete it. The rig's drivers then stop working, and IK Rigger's readers would fail with a
Python error: every reader goes through ``number``, which names the bone, the switch and what to do.
"""

from __future__ import annotations

from typing import Any

from .errors import RigError

# What restores a switch: a rebuild plans it again (``records.ensure_property`` replaces a value that is
# not a number).
REBUILD_HINT = ("Set it back to a number in the bone's Custom Properties, or rebuild the limb (Build IK on its "
                "last chain bone), which restores it.")
DELETED_HINT = "Rebuild the limb (Build IK on its last chain bone) to make it again."


def is_number(value: Any) -> bool:
    """Whether a custom property's value is a number a driver reads (a float, an int or a bool)."""
    return isinstance(value, (int, float))


def describe(value: Any) -> str:
    """What a custom property holds, in a user's words."""
    if isinstance(value, str):
        return f"the text '{value[:40]}'"
    if hasattr(value, "keys"):
        return "a group of properties"
    if hasattr(value, "__len__"):
        return f"a list of {len(value)} values"
    return f"a {type(value).__name__}"


def not_a_number(bone: str, key: str, value: Any) -> RigError:
    """The error for the switch ``key`` on ``bone`` holding ``value``, which is no number."""
    return RigError(f"its switch '{key}' holds {describe(value)}, not a number, so the rig's drivers cannot read it",
                    bone=bone, hint=REBUILD_HINT)


def number(owner: Any, key: str, default: float) -> float:
    """The switch ``key`` of ``owner`` (a pose bone) as a float, ``default`` where it is not there;
    a ``RigError`` naming the bone and the switch where it is no number."""
    value = owner.get(key)
    if value is None:
        return default
    if not is_number(value):
        raise not_a_number(owner.name, key, value)
    return float(value)
