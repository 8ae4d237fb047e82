"""``core.model.quick_init``: a frozen dataclass made faster stays the same dataclass."""

from __future__ import annotations

import dataclasses

import pytest
from mathutils import Vector

from ik_rigger.core.model import ConstraintPlan, NewBone, quick_init


def test_fields_defaults_equality_and_frozenness_hold() -> None:
    head, tail, z_axis = Vector((0.0, 0.0, 1.0)), Vector((0.0, 0.0, 2.0)), Vector((0.0, 1.0, 0.0))
    bone = NewBone("pole", "shin_pole.L", head, tail, z_axis, None, "THEME04", "Controls")
    assert (bone.hidden, bone.selectable, bone.roll_like) == (False, True, None)
    assert bone == NewBone("pole", "shin_pole.L", head.copy(), tail.copy(), z_axis.copy(), None, "THEME04",
                           "Controls", hidden=False)
    assert dataclasses.replace(bone, hidden=True).hidden
    with pytest.raises(dataclasses.FrozenInstanceError):
        bone.name = "other"  # type: ignore[misc]
    planned = ConstraintPlan("shin.L", "IK", "IK", "foot_IK.L", settings=(("chain_count", 2),))
    assert hash(planned) == hash(ConstraintPlan("shin.L", "IK", "IK", "foot_IK.L", (("chain_count", 2),)))
    assert (planned.pole_subtarget, planned.influence) == ("", None)
    with pytest.raises(TypeError):
        NewBone("pole", "shin_pole.L")  # type: ignore[call-arg]


def test_refuses_a_default_factory() -> None:
    @dataclasses.dataclass(frozen=True)
    class Made:
        items: list[int] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match="plain defaults"):
        quick_init(Made)


def test_refuses_a_post_init() -> None:
    @dataclasses.dataclass(frozen=True)
    class Checked:
        size: float = 1.0

        def __post_init__(self) -> None:
            if self.size < 0.0:
                raise ValueError("negative")

    with pytest.raises(TypeError, match="__post_init__"):
        quick_init(Checked)
