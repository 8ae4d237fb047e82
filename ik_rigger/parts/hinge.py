"""Hinge joints: the middle joints bend only about their hinge, within a natural range.

The plan holds each middle joint's hinge axis and range (``core.joints``); the build sets
them as the bones' own IK locks and limits, keeping what they had to give back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core import geometry, joints
from ..core.notes import warning
from .base import Draft, Part, option

# A joint bent less than this at rest gives Blender's standard solver too little to start from when
# its IK limit holds it (measured: an imported knee bent 2 degrees stays straight for a handle moved
# out of the leg's line, 30% of the leg short); the pole turns the chain so it need not.
NEARLY_STRAIGHT_DEGREES = 5.0


@dataclass(frozen=True)
class Options:
    hinge_joints: bool = option(False, "Hinge Joints", "The middle joints bend only about their hinge, from "
                                "straight to 150 degrees: a knee or elbow never bends backwards or sideways")


def plan(draft: Draft) -> None:
    if not draft.options.hinge_joints:
        return
    rests = []
    for name in draft.chain:
        bone = draft.skeleton[name]
        edit = draft.solved_edit(name)
        if edit is None:
            rests.append(joints.JointRest(name, bone.direction, bone.x_axis, bone.z_axis))
        else:
            direction = edit.tail - edit.head
            rests.append(joints.JointRest(name, direction, geometry.cross(direction.normalized(), edit.z_axis),
                                          edit.z_axis))
    # The second half of a split segment twists.
    hinged = joints.hinges(rests, draft.bend, draft.halves, turnable=not draft.options.fix_orientation)
    draft.hinges.extend(hinged)
    if draft.options.use_pole:
        return
    for hinge in hinged:
        bent = math.degrees(min(abs(hinge.minimum), abs(hinge.maximum)))
        if bent < NEARLY_STRAIGHT_DEGREES:
            draft.notes.append(warning(
                f"{hinge.bone} is bent only {bent:.1f} degrees at rest and hinged with no pole: Blender's IK may "
                "leave it straight when the handle moves out of the limb's line; turn the pole on, or Hinge "
                "Joints off"))


PART = Part("hinge", Options, plan, used=lambda options: bool(options.hinge_joints),
            plans=lambda options: bool(options.hinge_joints))
