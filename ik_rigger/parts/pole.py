"""The pole target in front of the middle joint, and the pole angle that keeps the chain from twisting."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..core import geometry, naming
from ..core.model import PALETTE_CONTROL, BoneEdit, BoneInfo, NewBone
from .base import Draft, Item, Part, Shape, option

ROLE_POLE = "POLE"
TAG_POLE = naming.TAG_POLE
POLE_PARENT_ITEMS: tuple[Item, ...] = (
    ("ORIGIN", "Origin", "The pole follows the handle's parent, so it stays put when the handle moves"),
    ("HANDLE", "Handle", "The pole follows the IK handle, so the knee or elbow turns with the foot or hand"),
)
DIAMOND = Shape("IK Pole", ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, 1.0),
                            (0.0, 0.0, -1.0)),
                tuple((a, b) for a in range(6) for b in range(a + 1, 6) if a // 2 != b // 2), 0.4)


@dataclass(frozen=True)
class Options:
    use_pole: bool = option(True, "Pole Target", "Add a pole target in front of the middle joint", panel="basic")
    pole_parent: str = option("ORIGIN", "Pole Parent", "What the pole target follows", items=POLE_PARENT_ITEMS,
                              panel="basic")
    pole_distance: float = option(0.5, "Pole Distance", "How far the pole stands from the middle joint, as a "
                                  "fraction of the chain's length", minimum=0.05, maximum=100.0, soft_maximum=3.0)
    pole_angle_auto: bool = option(True, "Automatic Pole Angle", "Compute the pole angle from the rest pose so "
                                   "nothing twists", per_limb=True)
    pole_angle: float = option(0.0, "Pole Angle", "The pole angle when not automatic", minimum=-math.pi,
                               maximum=math.pi, subtype="ANGLE", shown_when=("pole_angle_auto", False),
                               per_limb=True)


def plan(draft: Draft) -> None:
    options, joints, chain = draft.options, draft.joints, draft.chain
    draft.pole_angle = options.pole_angle
    if not options.use_pole:
        return
    pole = draft.new_name(draft.middle[0], TAG_POLE)
    position = geometry.pole_position(draft.bending_joints, draft.bend,
                                      max(options.pole_distance, 0.05) * draft.length)
    # At the origin, the pole hangs from what the handle does: the parents part has refused an origin in or
    # below the chain, or below the chain's parent (``parents.resolve_origin``), so it is not asked again.
    parent = draft.handle if options.pole_parent == "HANDLE" else draft.controls_parent
    draft.bones.append(NewBone(ROLE_POLE, pole, position, position + draft.bend * 0.1 * draft.length,
                               (joints[-1] - joints[0]).normalized(), parent, PALETTE_CONTROL,
                               naming.COLLECTION_CONTROLS))
    if options.pole_angle_auto:
        root = draft.skeleton.bones[chain[0]]
        edit = draft.solved_edit(chain[0])
        head, tail = (edit.head, edit.tail) if edit else (root.head, root.tail)
        draft.pole_angle = geometry.pole_angle(head, tail, _rest_x_axis(root, edit), joints[-1], position)


def _rest_x_axis(bone: BoneInfo, edit: BoneEdit | None) -> Any:
    """The bone's X axis at rest, after its edit if it has one (Blender's X is Y cross Z)."""
    if edit is None:
        return bone.x_axis
    return geometry.cross((edit.tail - edit.head).normalized(), edit.z_axis)


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    layout.prop(limb, "pole_parent")


def snap_to_fk(snap: Any) -> list[str]:
    """The pole in the FK chain's bend plane, as far from the root as at rest."""
    parts = snap.parts
    if not parts.pole:
        return []
    snap.evaluate()  # the pole may be the handle's child: let the new handle pose land first
    bones, chain = snap.obj.data.bones, parts.chain
    root = snap.root
    distance = (bones[parts.pole].head_local - bones[chain[0]].head_local).length
    position = geometry.pole_for(root.translation, root.col[1].xyz.normalized(), root.col[0].xyz.normalized(),
                                 snap.end, snap.ik.pole_angle, max(distance, 1e-6))
    pose_bone = snap.obj.pose.bones[parts.pole]
    pose = pose_bone.matrix.copy()
    pose.translation = position
    pose_bone.matrix = pose
    return [parts.pole]


def bake_to_ik(bake: Any) -> None:
    """The pole in the chain's plane on every frame, as its root turns."""
    parts = bake.parts
    if not parts.pole:
        return
    bones, chain = bake.obj.data.bones, parts.chain
    rest = bones[parts.pole].matrix_local
    parent = bones[parts.pole].parent
    distance = max((rest.translation - bones[chain[0]].head_local).length, 1e-6)
    local = bake.local(rest, parent.matrix_local if parent is not None else None)
    roots = bake.roots
    parent_poses = bake.poses_of(parent.name) if parent is not None else None
    bases = []
    for number, end in enumerate(bake.ends):
        root = roots[number]
        position = geometry.pole_for(root.translation, root.col[1].xyz.normalized(), root.col[0].xyz.normalized(),
                                     end, bake.ik.pole_angle, distance)
        parent_pose = parent_poses[number] if parent_poses is not None else None
        placed = (parent_pose @ local.offset) if parent_pose is not None and local.offset is not None \
            else rest.copy()
        placed.translation = position
        bases.append(local.basis(placed, parent_pose))
    bake.key(parts.pole, bases)


PART = Part("pole", Options, plan, roles=(ROLE_POLE,), shapes={ROLE_POLE: DIAMOND}, draw=draw,
            snap_to_fk=snap_to_fk, bake_to_ik=bake_to_ik)
