"""Reverse foot roll, planned as plain data: the foot rocks on its heel, its ball and its toe tip.

Under the IK handle hang the pivots, each a bone standing up at a point where the foot
meets the ground: the heel (under the ankle, at the back of the foot), the toe tip, the
two edges of the foot, and the ball (where the toe bends). One ROLL control drives them
through Transformation constraints (plain Blender data, no drivers): turning ROLL about
its X axis backwards (negative) rocks the foot onto the heel; forwards (positive) first
onto the ball, and past ``BALL_BREAK`` degrees onto the toe tip. Turning ROLL about its
Z axis spins the foot about the ball; about its Y axis (along it) banks the foot onto one
edge or the other. The IK target and the foot's clone hang from the ball pivot; the
toe's own clone hangs from the tip pivot, so the toe stays flat while the foot rolls on
the ball.

Every pivot's X axis is the foot's side axis, so a positive turn about X lifts the toes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from mathutils import Matrix, Vector

from ..core import naming
from ..core.errors import RigError
from ..core.geometry import cross, rotation_property
from ..core.model import PALETTE_CLONE, PALETTE_CONTROL, PALETTE_MECHANISM, ConstraintPlan, NewBone
from .base import Draft, Part, option
from .clone import TAG_CLONE
from .handle import RING, switch

ROLE_ROLL = "ROLL"
ROLE_HEEL = "HEEL"
ROLE_TOE_PIVOT = "TOE_PIVOT"
ROLE_TIP = "TIP"
ROLE_TOE_CLONE = "TOE_CLONE"
ROLE_BANK_OUT = "BANK_OUT"
ROLE_BANK_IN = "BANK_IN"
TAG_ROLL = "IK_roll"
TAG_HEEL = "IK_heel"
TAG_TIP = "IK_tip"
TAG_BALL = "IK_ball"
TAG_BANK = "IK_bank"
# The foot's width, as a share of its length from heel to toe tip, for the bank's edges.
FOOT_WIDTH = 0.3
CONSTRAINT_ROLL = "IK Rigger Foot Roll"
CONSTRAINT_TOE = "IK Rigger Toe"
# How far the foot rolls on its ball before it rolls on its toe tip.
BALL_BREAK = 45.0


@dataclass(frozen=True)
class FootPoints:
    """Where the foot meets the ground, in armature space, and its axes."""

    heel: Vector
    ball: Vector
    tip: Vector
    forward: Vector
    side: Vector
    up: Vector
    toe: str | None


def foot_points(ankle: Vector, foot_head: Vector, foot_tail: Vector, toe: tuple[str, Vector, Vector] | None,
                up: Vector, bone: str) -> FootPoints:
    """The heel, ball and toe tip of a foot from its bones; ``toe`` is (name, head, tail) when there is one."""
    ball = toe[1] if toe else foot_tail
    tip = toe[2] if toe else foot_tail
    up = up.normalized()
    forward = tip - ankle
    forward = forward - up * forward.dot(up)
    if forward.length < 1e-6:
        raise RigError("its foot does not reach forward from the ankle, so it has no heel and toe to roll on",
                       bone=bone, hint="Turn Foot Roll off for this limb.")
    forward.normalize()
    ground = min(point.dot(up) for point in (ball, tip, foot_tail))
    heel = ankle - up * (ankle.dot(up) - ground)
    # At the back of the foot: as far behind the ankle as the foot is long, by a fifth.
    heel = heel - forward * 0.2 * (tip - ankle).dot(forward)
    side = cross(forward, up).normalized()
    return FootPoints(heel, ball, tip, forward, side, up, toe[0] if toe else None)


@dataclass(frozen=True)
class FootRollPlan:
    """The foot roll's bones (role, name, head, tail, z axis, parent) and its constraints."""

    bones: tuple[tuple[str, str, Vector, Vector, Vector, str], ...]
    constraints: tuple[tuple[str, str, str, str, tuple[tuple[str, object], ...]], ...]  # owner, kind, name, target
    ball: str
    tip: str


def _transform(source_axis: str, target_axis: str, low: float, high: float, to_low: float,
               to_high: float) -> tuple[tuple[str, object], ...]:
    """Transformation settings mapping the ROLL's local rotation about one axis onto another's, clamped."""
    return (("map_from", "ROTATION"), ("map_to", "ROTATION"), ("owner_space", "LOCAL"), ("target_space", "LOCAL"),
            ("use_motion_extrapolate", False), ("mix_mode_rot", "ADD"),
            (f"map_to_{target_axis}_from", source_axis.upper()),
            (f"from_min_{source_axis}_rot", math.radians(low)), (f"from_max_{source_axis}_rot", math.radians(high)),
            (f"to_min_{target_axis}_rot", math.radians(to_low)), (f"to_max_{target_axis}_rot", math.radians(to_high)))


def plan_foot_roll(points: FootPoints, foot: str, handle: str, size: float,
                   new_name: Callable[[str, str], str]) -> FootRollPlan:
    """The reverse foot under ``handle`` for the foot bone ``foot``; ``size`` scales the bones."""
    up, side = points.up * size, points.side
    # Pivots stand up with X on the side axis: their Z is the foot's back.
    roll = new_name(foot, TAG_ROLL)
    heel = new_name(foot, TAG_HEEL)
    tip = new_name(foot, TAG_TIP)
    bank_a = new_name(foot, TAG_BANK + "_a")
    bank_b = new_name(foot, TAG_BANK + "_b")
    ball = new_name(foot, TAG_BALL)
    back = -points.forward
    # The edges the foot banks on, on the ground halfway from heel to ball, either side.
    middle = points.heel + (points.ball - points.heel) * 0.5
    middle = middle - points.up * (middle - points.heel).dot(points.up)
    half_width = 0.5 * FOOT_WIDTH * (points.tip - points.heel).length
    bones = [
        (ROLE_ROLL, roll, points.heel, points.heel + back * size * 1.5, cross(side, back), handle),
        (ROLE_HEEL, heel, points.heel, points.heel + up, back, handle),
        (ROLE_TIP, tip, points.tip, points.tip + up, back, heel),
        (ROLE_BANK_OUT, bank_a, middle - side * half_width, middle - side * half_width + up, back, tip),
        (ROLE_BANK_IN, bank_b, middle + side * half_width, middle + side * half_width + up, back, bank_a),
        (ROLE_TOE_PIVOT, ball, points.ball, points.ball + up, back, bank_b),
    ]
    constraints = [
        (heel, "TRANSFORM", CONSTRAINT_ROLL, roll, _transform("x", "x", -180.0, 0.0, 180.0, 0.0)),
        (tip, "TRANSFORM", CONSTRAINT_ROLL, roll, _transform("x", "x", BALL_BREAK, 180.0, 0.0, BALL_BREAK - 180.0)),
        # The ball takes the first part of a forward roll, and the spin about the ground's up.
        (ball, "TRANSFORM", CONSTRAINT_ROLL, roll, _transform("x", "x", 0.0, BALL_BREAK, 0.0, -BALL_BREAK)),
        (ball, "TRANSFORM", CONSTRAINT_ROLL + " Spin", roll, _transform("z", "y", -180.0, 180.0, 180.0, -180.0)),
        # Turned one way the foot tips up about its -side edge, the other way about its +side edge.
        (bank_a, "TRANSFORM", CONSTRAINT_ROLL, roll, _transform("y", "z", 0.0, 90.0, 0.0, 90.0)),
        (bank_b, "TRANSFORM", CONSTRAINT_ROLL, roll, _transform("y", "z", -90.0, 0.0, -90.0, 0.0)),
    ]
    return FootRollPlan(tuple(bones), tuple(constraints), ball, tip)


@dataclass(frozen=True)
class Options:
    foot_roll: bool = option(False, "Foot Roll", "A reverse foot for legs: a Roll control rocks the foot onto "
                             "its heel (turned back), its ball and then its toe tip (turned forward), and spins it "
                             "about the ball; the toe stays flat while the foot rolls on the ball")


def plan(draft: Draft) -> None:
    """The reverse foot under the handle; the IK target and the foot's clone then hang from its ball."""
    if not draft.options.foot_roll:
        return
    skeleton, extremity = draft.skeleton, draft.extremity
    if extremity is None:
        raise RigError("has no foot below it, so Foot Roll has nothing to roll", bone=draft.last,
                       hint="Set the extremity to the foot, or turn Foot Roll off.")
    foot = skeleton[extremity]
    children = sorted(skeleton.children(extremity), key=lambda child: (not child.connected, child.name))
    toe = children[0] if children else None
    points = foot_points(draft.joints[-1], foot.head, foot.tail, (toe.name, toe.head, toe.tail) if toe else None,
                         skeleton.up, extremity)
    roll = plan_foot_roll(points, extremity, draft.handle, 0.08 * draft.length, draft.new_name)
    for role, name, head, tail, z_axis, parent in roll.bones:
        control = role == ROLE_ROLL
        draft.bones.append(NewBone(role, name, head, tail, z_axis, parent,
                                   PALETTE_CONTROL if control else PALETTE_MECHANISM,
                                   naming.COLLECTION_CONTROLS if control else naming.COLLECTION_MECHANISM,
                                   hidden=not control))
    draft.constraints.extend(ConstraintPlan(owner, kind, name, target, settings)
                             for owner, kind, name, target, settings in roll.constraints)
    draft.follow = roll.ball
    if toe is None:
        return
    clone = draft.new_name(toe.name, TAG_CLONE)
    draft.bones.append(NewBone(ROLE_TOE_CLONE, clone, toe.head, toe.tail, toe.z_axis, roll.tip, PALETTE_CLONE,
                               naming.COLLECTION_MECHANISM))
    draft.constraints.append(ConstraintPlan(toe.name, "COPY_ROTATION", CONSTRAINT_TOE, clone,
                                            (("owner_space", "POSE"), ("target_space", "POSE")),
                                            influence=switch(draft.handle)))


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    """The Roll control's own rotation: X rolls heel to toe, Y banks, Z spins on the ball."""
    name = parts.made.get(ROLE_ROLL)
    roll = obj.pose.bones.get(name) if name else None
    if roll is None:
        return
    layout.label(text=f"Foot Roll ({name}): X roll, Y bank, Z spin")
    layout.prop(roll, rotation_property(roll.rotation_mode), text="Roll")


def _toe(obj: Any, parts: Any, poses: Any) -> tuple[str, str] | None:
    """(toe, its clone): the bone that copies the toe clone's turn, where ``poses`` holds it."""
    clone = parts.made.get(ROLE_TOE_CLONE)
    pose_bones = obj.pose.bones
    toe = next((owner for owner, name in parts.constraints if owner in pose_bones and owner in poses
                and getattr(pose_bones[owner].constraints.get(name), "subtarget", None) == clone), None)
    return None if clone is None or toe is None else (toe, clone)


def snap_to_fk(snap: Any) -> list[str]:
    """The toe's clone turned as the FK pose turns the toe (which copies its clone's turn in IK), where
    the handle and the pivots it hangs from now put it."""
    found = _toe(snap.obj, snap.parts, snap.fk)
    if found is None:
        return []
    toe, clone = found
    pose_bones = snap.obj.pose.bones
    snap.evaluate()
    standing = pose_bones[clone].matrix
    pose_bones[clone].matrix = Matrix.LocRotScale(standing.to_translation(), snap.fk[toe].to_quaternion(),
                                                  standing.to_scale())
    return [clone]


def bake_to_ik(bake: Any) -> None:
    """The toe's clone keyed on every frame to the toe's recorded turn, where the baked handle, with the
    pivots at rest on it (the roll is not keyed), puts it."""
    found = _toe(bake.obj, bake.parts, bake.recording.poses)
    if found is None:
        return
    toe, clone = found
    bones = bake.obj.data.bones
    tip = bones[clone].parent
    local = bake.local(bones[clone].matrix_local, tip.matrix_local)
    from_handle = bones[bake.parts.handle].matrix_local.inverted()
    bases = []
    for handle, turn in zip(bake.poses_of(bake.parts.handle), bake.poses_of(toe)):
        follow = handle @ from_handle
        standing = follow @ bones[clone].matrix_local
        wanted = Matrix.LocRotScale(standing.to_translation(), turn.to_quaternion(), standing.to_scale())
        bases.append(local.basis(wanted, follow @ tip.matrix_local))
    bake.key(clone, bases)


PART = Part("foot_roll", Options, plan,
            roles=(ROLE_ROLL, ROLE_HEEL, ROLE_TIP, ROLE_BANK_OUT, ROLE_BANK_IN, ROLE_TOE_PIVOT, ROLE_TOE_CLONE),
            shapes={ROLE_ROLL: replace(RING, label="IK Foot Roll", size=0.5)},
            targets={"TRANSFORM": (ROLE_ROLL,), "COPY_ROTATION": (ROLE_TOE_CLONE,)}, draw=draw, snap_to_fk=snap_to_fk,
            bake_to_ik=bake_to_ik,
            plans=lambda options: bool(options.foot_roll))
