"""The floor: the least Blender work that makes IK Rigger's four limbs on Rigify's human metarig.

Written plainly, the way a rigger would script it by hand, and on purpose without
anything from IK Rigger: one Edit-mode pass adds a handle, a pole and a clone per limb,
one pass over the pose bones adds the IK constraint and the Copy Rotation. The bones,
names, parents and constraint settings are the ones IK Rigger makes with its default
options (``build_speed.compare`` proves it on every run), so the time IK Rigger
takes beyond this is the price of its planning, checks, records and drivers.

``BENCHMARK_OT_floor`` runs the same script as an operator, so comparing it with IK
Rigger's Auto-Rig operator leaves out what both pay for being operators (the call, the
undo step, the scene update after it).
"""

from __future__ import annotations

import bpy
from mathutils import Vector

# (first chain bone, last chain bone, foot or hand) per limb, in the order IK Rigger is asked.
LIMBS = (
    ("thigh.L", "shin.L", "foot.L"),
    ("thigh.R", "shin.R", "foot.R"),
    ("upper_arm.L", "forearm.L", "hand.L"),
    ("upper_arm.R", "forearm.R", "hand.R"),
)
POLE_DISTANCE = 0.5  # of the chain's length, in front of the knee or behind the elbow
POLE_LENGTH = 0.1


def _split_side(name: str) -> tuple[str, str]:
    """'shin.L' -> ('shin', '.L'): the metarig's names all end in .L or .R."""
    return name[:-2], name[-2:]


def _pole_angle(root_head: Vector, root_tail: Vector, root_x: Vector, end: Vector, pole: Vector) -> float:
    """The pole angle that keeps the chain at rest: the signed angle about the root bone from its
    X axis to the direction toward the pole, in the plane of root, end and pole (Blender counts it
    clockwise looking down the bone, hence the minus)."""
    axis = root_tail - root_head
    toward_pole = (end - root_head).cross(pole - root_head).cross(axis)
    unit = axis.normalized()
    x_side = root_x - unit * root_x.dot(unit)
    angle = x_side.angle(toward_pole)
    return angle if x_side.cross(toward_pole).dot(axis) < 0.0 else -angle


def rig_four_limbs(obj: bpy.types.Object) -> None:
    """Rig both legs and both arms of the active metarig ``obj``; leaves it in the mode it was in."""
    mode = "POSE" if obj.mode == "POSE" else "OBJECT"
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    wiring = []
    for first_name, last_name, end_name in LIMBS:
        first, last, end = edit_bones[first_name], edit_bones[last_name], edit_bones[end_name]
        base, side = _split_side(last_name)
        end_base = _split_side(end_name)[0]
        length = first.length + last.length
        along = last.tail - first.head
        knee = last.head - first.head
        bend = (knee - along * (knee.dot(along) / along.length_squared)).normalized()
        # Controls hang from the bone above the chain's parent, so the body carries them
        # but the hip or shoulder does not drag them.
        control_parent = first.parent.parent if first.parent else None

        handle = edit_bones.new(f"{end_base}_IK{side}")
        handle.head, handle.tail, handle.roll = end.head, end.tail, end.roll
        handle.parent = control_parent
        handle.use_deform = False

        pole = edit_bones.new(f"{base}_IK_pole{side}")
        pole.head = last.head + bend * POLE_DISTANCE * length
        pole.tail = pole.head + bend * POLE_LENGTH * length
        pole.align_roll(along.normalized())
        pole.parent = control_parent
        pole.use_deform = False

        clone = edit_bones.new(f"{end_base}_IK_clone{side}")
        clone.head, clone.tail, clone.roll = end.head, end.tail, end.roll
        clone.parent = handle
        clone.use_deform = False

        angle = _pole_angle(first.head, first.tail, first.x_axis, last.tail, pole.head)
        wiring.append((last_name, end_name, handle.name, pole.name, clone.name, angle))

    bpy.ops.object.mode_set(mode=mode)
    pose_bones = obj.pose.bones
    for last_name, end_name, handle, pole, clone, angle in wiring:
        ik = pose_bones[last_name].constraints.new("IK")
        ik.target = obj
        ik.subtarget = handle
        ik.pole_target = obj
        ik.pole_subtarget = pole
        ik.pole_angle = angle
        ik.chain_count = 2
        ik.use_stretch = False  # no bone stretches by default anyway; set so the constraints match exactly
        copy = pose_bones[end_name].constraints.new("COPY_ROTATION")
        copy.target = obj
        copy.subtarget = clone
        # Armature space, as IK Rigger uses: world space shears under a non-uniformly scaled object.
        copy.owner_space = "POSE"
        copy.target_space = "POSE"


class BENCHMARK_OT_floor(bpy.types.Operator):
    """The floor as an operator: rig both legs and both arms of the active metarig"""

    bl_idname = "benchmark.floor"
    bl_label = "Floor: Rig Four Limbs"
    # As IK Rigger's operators: Blender pushes an undo step after each call.
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> set[str]:
        rig_four_limbs(context.active_object)
        return {"FINISHED"}


def register() -> None:
    bpy.utils.register_class(BENCHMARK_OT_floor)
