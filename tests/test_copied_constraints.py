"""A build's new constraints after the first of each kind and name are copies of it: each still
carries its own limb's targets and settings, takes a name free on its bone, and goes on removal."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, evaluate, make_armature, rotation_degrees
from mathutils import Euler, Matrix, Vector

from ik_rigger import api
from ik_rigger.parts.clone import CONSTRAINT_COPY_ROTATION
from ik_rigger.parts.ik import CONSTRAINT_IK
from ik_rigger.rig import records

SKIPPED = ("name", "subtarget", "pole_subtarget", "pole_angle", "active", "is_valid", "error_location",
           "error_rotation")


def _settings(constraint: bpy.types.Constraint) -> dict:
    """The constraint's own settings, without what names a side (targets, name) or follows from them."""
    return {prop.identifier: getattr(constraint, prop.identifier) for prop in constraint.bl_rna.properties
            if prop.identifier not in SKIPPED and prop.type in {"BOOLEAN", "INT", "FLOAT", "ENUM", "STRING"}
            and not getattr(prop, "is_array", False)}


def _pose_handle(obj: bpy.types.Object, handle: str, offset: Vector, turn: Euler) -> None:
    rest_matrix = obj.data.bones[handle].matrix_local
    target = Matrix.Translation(rest_matrix.translation + offset) @ turn.to_matrix().to_4x4() @ \
        rest_matrix.to_3x3().to_4x4()
    obj.pose.bones[handle].matrix = target


@pytest.mark.parametrize("user_side", ["L", "R"])
def test_copies_follow_their_own_limb(user_side: str) -> None:
    """Both legs in one build; one foot already has a constraint of the user's under the name IK Rigger
    gives its Copy Rotation (the first leg's, which is then not copied, or the second's): each leg's
    constraints aim at its own bones, with the same settings, each foot turns with its own handle, and
    removing the leg gives the user's foot its constraint back alone (kept before IK Rigger's)."""
    obj = make_armature(both_legs())
    users = obj.pose.bones[f"foot.{user_side}"].constraints.new("LIMIT_ROTATION")
    users.name = CONSTRAINT_COPY_ROTATION
    api.build_many(obj, [(f"shin.{side}", api.options(keep_extremity_constraints=True)) for side in "LR"])
    assert users.name == CONSTRAINT_COPY_ROTATION and users.type == "LIMIT_ROTATION"

    by_side = {}
    for side in "LR":
        record = obj.ik_rigger.limb_of(f"shin.{side}")
        listed = records.inventory(record).constraints
        found = {(owner, name): obj.pose.bones[owner].constraints[name] for owner, name in listed}
        copy = [constraint for (owner, _), constraint in found.items()
                if owner == f"foot.{side}" and constraint.type == "COPY_ROTATION"]
        assert len(copy) == 1, listed
        assert copy[0].subtarget == record.clone
        assert copy[0].name == (f"{CONSTRAINT_COPY_ROTATION}.001" if side == user_side else CONSTRAINT_COPY_ROTATION)
        ik = obj.pose.bones[f"shin.{side}"].constraints[CONSTRAINT_IK]
        assert ik.pole_subtarget == record.pole and ik.subtarget in record.bones()
        by_side[side] = {constraint.type: _settings(constraint) for constraint in found.values()}
    assert by_side["L"] == by_side["R"]

    turn = Euler((0.5, 0.0, 0.3))
    for side in "LR":
        _pose_handle(obj, obj.ik_rigger.limb_of(f"shin.{side}").handle, Vector((0.0, -0.1, 0.15)), turn)
    posed = evaluate(obj)
    for side in "LR":
        record = obj.ik_rigger.limb_of(f"shin.{side}")
        assert rotation_degrees(posed[f"foot.{side}"], posed[record.clone]) < 0.01, side
        reach = (posed[f"shin.{side}"].translation - posed[f"foot.{side}"].translation).length
        assert abs(reach - obj.data.bones[f"shin.{side}"].length) < 1e-4 * obj.data.bones[f"shin.{side}"].length

    api.remove(obj, f"shin.{user_side}")
    left = obj.pose.bones[f"foot.{user_side}"].constraints
    assert [(constraint.name, constraint.type) for constraint in left] == [(CONSTRAINT_COPY_ROTATION,
                                                                              "LIMIT_ROTATION")]


def test_copied_drivers_read_their_own_handle() -> None:
    """The second leg's drivers are copies of the first's: each reads its own handle's switches. IK off
    on one handle leaves that leg at rest while the other reaches its moved handle."""
    obj = make_armature(both_legs())
    api.build_many(obj, [(f"shin.{side}", api.options()) for side in "LR"])
    handles = {side: obj.ik_rigger.limb_of(f"shin.{side}").handle for side in "LR"}
    for curve in obj.animation_data.drivers:
        side = "L" if ".L" in curve.data_path else "R"
        read = {target.data_path for variable in curve.driver.variables for target in variable.targets
                if target.data_path}
        assert read and all(handles[side] in path for path in read), (curve.data_path, read)
    rested = evaluate(obj)
    obj.pose.bones[handles["R"]]["ik_fk"] = 0.0
    for side in "LR":
        _pose_handle(obj, handles[side], Vector((0.0, -0.1, 0.15)), Euler((0.0, 0.0, 0.0)))
    posed = evaluate(obj)
    length = obj.data.bones["shin.L"].length
    assert (posed["shin.L"].translation - rested["shin.L"].translation).length > 0.05 * length
    for name in ("thigh.R", "shin.R", "foot.R"):
        assert rotation_degrees(posed[name], rested[name]) < 0.01, name
