"""Hinge joints: the middle joints bend only about their hinge, within a natural range.

The plan holds each middle joint's hinge axis and range (``core.joints``); the build sets
them as the bones' own IK locks and limits, keeping what they had to give back.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core import geometry, joints
from .base import Draft, Part, option


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
        edit = draft.edited.get(name)
        if edit is None:
            rests.append(joints.JointRest(name, bone.direction, bone.x_axis, bone.z_axis))
        else:
            direction = edit.tail - edit.head
            rests.append(joints.JointRest(name, direction, geometry.cross(direction.normalized(), edit.z_axis),
                                          edit.z_axis))
    draft.hinges = joints.hinges(rests, draft.bend, draft.halves)  # the second half of a split segment twists


PART = Part("hinge", Options, plan, used=lambda options: bool(options.hinge_joints))
