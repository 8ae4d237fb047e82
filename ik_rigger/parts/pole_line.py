"""The pole line: a thin, non-deforming line from the knee or elbow to the pole target,
so animators see where the pole is (a Stretch To constraint keeps it on the pole)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core import naming
from ..core.model import PALETTE_CONTROL, ConstraintPlan, NewBone
from .base import Draft, Part, Shape, option
from .pole import ROLE_POLE

ROLE_POLE_LINE = "POLE_LINE"
TAG_POLE_LINE = "IK_pole_line"
CONSTRAINT_POLE_LINE = "IK Rigger Pole Line"
LINE = Shape("IK Pole Line", ((0.0, 0.0, 0.0), (0.0, 1.0, 0.0)), ((0, 1),), 1.0)


@dataclass(frozen=True)
class Options:
    pole_line: bool = option(True, "Pole Line", "Draw a thin line from the knee or elbow to the pole target, so "
                             "animators see where the pole is", shown_when=("use_pole", True))


def plan(draft: Draft) -> None:
    if not draft.options.pole_line:
        return
    pole = next((bone for bone in draft.bones if bone.role == ROLE_POLE), None)
    if pole is None:
        return
    middle, knee = draft.middle
    line = draft.new_name(middle, TAG_POLE_LINE)
    draft.bones.append(NewBone(ROLE_POLE_LINE, line, knee, pole.head, (draft.joints[-1] - draft.joints[0]).normalized(),
                               middle, PALETTE_CONTROL, naming.COLLECTION_CONTROLS, selectable=False))
    # The line's rest length, as Blender measures it at rest: left to Blender (0), it was measured on the pose
    # the next update showed (a posed limb's line ran short of its pole) and kept by a rebuild that moved the
    # pole (the line ran past it).
    draft.constraints.append(ConstraintPlan(line, "STRETCH_TO", CONSTRAINT_POLE_LINE, pole.name,
                                            (("rest_length", (pole.head - knee).length),)))


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    """Hide or show the line (Blender's own bone visibility)."""
    name = parts.made.get(ROLE_POLE_LINE)
    line = obj.data.bones.get(name) if name else None
    if line is not None:
        layout.prop(line, "hide", text="Hide Pole Line")


PART = Part("pole_line", Options, plan, roles=(ROLE_POLE_LINE,), shapes={ROLE_POLE_LINE: LINE},
            targets={"STRETCH_TO": (ROLE_POLE,)}, draw=draw, plans=lambda options: bool(options.pole_line))
