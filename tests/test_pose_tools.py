"""IK/FK blend, exact snapping both ways, the FK pivot helper and the limb buttons."""

from __future__ import annotations

import math
import random

import bpy
import pytest
from helpers import (
    both_legs,
    chain_length,
    evaluate,
    import_bvh,
    leg_bones,
    make_armature,
    rotation_degrees,
    set_active_bone,
)
from mathutils import Euler, Matrix, Vector
from test_build import move_handle, tentacle
from test_imported import make_character, split_limbs

from ik_rigger.rig import records, selection
from ik_rigger.rig.animation import fcurve_owners


def ik_fk(obj: bpy.types.Object, limb) -> float:
    """The limb's IK/FK switch: the custom property on its handle."""
    return obj.pose.bones[limb.handle]["ik_fk"]


def set_ik_fk(obj: bpy.types.Object, limb, value: float) -> None:
    obj.pose.bones[limb.handle]["ik_fk"] = value
    obj.update_tag()


def rig_leg(rolls: dict[str, float] | None = None, transform: bool = False, **options) -> bpy.types.Object:
    obj = make_armature(leg_bones(bend=0.08), rolls=rolls)
    if transform:
        obj.location = (1.0, -2.0, 0.5)
        obj.rotation_euler = (0.4, -0.3, 1.2)
        obj.scale = (2.0, 2.0, 2.0)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(**options) == {"FINISHED"}
    return obj


def assert_same_pose(obj, expected, actual, names, length):
    for name in names:
        assert rotation_degrees(expected[name], actual[name]) < 0.01, name
        assert (expected[name].translation - actual[name].translation).length < 1e-4 * length, name


def fk_pose(obj: bpy.types.Object, names: list[str], seed: int) -> None:
    """Turn each bone by its own rotation: an FK pose with twists and all."""
    rng = random.Random(seed)
    for name in names:
        pose_bone = obj.pose.bones[name]
        pose_bone.rotation_mode = "XYZ"
        pose_bone.rotation_euler = Euler([rng.uniform(-0.6, 0.6) for _ in range(3)])


CASES = {
    "plain": dict(),
    "rolled": dict(rolls={"thigh.L": 1.1, "shin.L": -2.0, "foot.L": 0.7}),
    "transformed": dict(rolls={"thigh.L": 0.4}, transform=True),
    "pole on handle": dict(pole_parent="HANDLE"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_snap_both_ways_on_a_leg(case):
    obj = rig_leg(**CASES[case])
    limb = obj.ik_rigger.limbs[0]
    names = ["thigh.L", "shin.L", "foot.L"]
    length = chain_length(obj, names[:2])
    # IK pose -> FK: the chain's own rotations take the IK result.
    move_handle(obj, limb.handle, Vector((0.05, -0.1, 0.25)))
    ik = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_fk_to_ik() == {"FINISHED"}
    assert ik_fk(obj, limb) == 0.0
    assert_same_pose(obj, ik, evaluate(obj), names, length)
    # FK pose (with twists) -> IK: the handle and pole move so IK shows the same.
    fk_pose(obj, names, seed=len(case))
    fk = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    assert ik_fk(obj, limb) == 1.0
    assert_same_pose(obj, fk, evaluate(obj), names, length)


def test_snap_on_a_three_bone_chain():
    obj = make_armature(tentacle(3))
    chain = ["tentacle_01", "tentacle_02", "tentacle_03"]
    set_active_bone(obj, chain[-1])
    assert bpy.ops.ik_rigger.build_ik(chain_length=3) == {"FINISHED"}
    length = chain_length(obj, chain)
    limb = obj.ik_rigger.limbs[0]
    move_handle(obj, limb.handle, Vector((0.1, -0.2, 0.3)))
    ik = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_fk_to_ik() == {"FINISHED"}
    assert_same_pose(obj, ik, evaluate(obj), chain, length)
    fk_pose(obj, chain, seed=7)
    fk = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    assert_same_pose(obj, fk, evaluate(obj), chain, length)


def test_snap_on_a_real_arm():
    obj = import_bvh("mixamo_freebvh.bvh")
    bpy.ops.object.mode_set(mode="POSE")
    set_active_bone(obj, "mixamorig:LeftForeArm")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    names = ["mixamorig:LeftArm", "mixamorig:LeftForeArm", "mixamorig:LeftHand"]
    length = chain_length(obj, names[:2])
    fk_pose(obj, names, seed=3)
    set_ik_fk(obj, obj.ik_rigger.limbs[0], 0.0)
    fk = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    assert_same_pose(obj, fk, evaluate(obj), names, length)


def test_snapping_keys_what_changed_at_the_current_frame():
    obj = rig_leg()
    limb = obj.ik_rigger.limbs[0]
    bpy.context.scene.frame_set(12)
    move_handle(obj, limb.handle, Vector((0.0, -0.1, 0.2)))
    assert bpy.ops.ik_rigger.snap_fk_to_ik(keyframe=True) == {"FINISHED"}
    paths = {curve.data_path for curve in _all_fcurves(obj)}
    for name in ("thigh.L", "shin.L", "foot.L"):
        assert f'pose.bones["{name}"].rotation_quaternion' in paths
    assert f'pose.bones["{limb.handle}"]["ik_fk"]' in paths
    assert f'pose.bones["{limb.handle}"].location' not in paths
    switch = f'pose.bones["{limb.handle}"]["ik_fk"]'
    assert {point.co.x for curve in _all_fcurves(obj) if curve.data_path != switch
            for point in curve.keyframe_points} == {12.0}
    # The switch is a cut: the frame before holds what it was.
    assert {(point.co.x, point.co.y, point.interpolation) for curve in _all_fcurves(obj) if curve.data_path == switch
            for point in curve.keyframe_points} == {(11.0, 1.0, "CONSTANT"), (12.0, 0.0, "CONSTANT")}


def _all_fcurves(obj: bpy.types.Object) -> list:
    return [curve for owner in fcurve_owners(obj) for curve in owner.fcurves]


def test_ik_fk_blend_drives_ik_and_extremity_together():
    obj = rig_leg()
    limb = obj.ik_rigger.limbs[0]
    move_handle(obj, limb.handle, Vector((0.0, -0.1, 0.25)))
    obj.pose.bones["thigh.L"].rotation_quaternion = Euler((0.3, 0.0, 0.0)).to_quaternion()
    set_ik_fk(obj, limb, 0.0)
    posed = evaluate(obj)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    kinds = {c.type: c.influence for owner, name in records.inventory(limb).constraints
             for c in [evaluated.pose.bones[owner].constraints[name]]}
    # The IK and the foot's copy follow the switch; the pole line and the stretch limit keep working.
    assert kinds == {"IK": 0.0, "COPY_ROTATION": 0.0, "STRETCH_TO": 1.0, "LIMIT_DISTANCE": 1.0}
    rest_thigh = obj.data.bones["thigh.L"].matrix_local
    expected = rest_thigh @ Euler((0.3, 0.0, 0.0)).to_matrix().to_4x4()
    assert rotation_degrees(expected, posed["thigh.L"]) < 0.01
    set_ik_fk(obj, limb, 1.0)
    end = evaluate(obj)["shin.L"] @ Vector((0.0, obj.data.bones["shin.L"].length, 0.0))
    assert (end - evaluate(obj)[limb.handle].translation).length < 1e-3


def test_stretch_reaches_past_the_chain_length():
    obj = rig_leg()
    limb = obj.ik_rigger.limbs[0]
    length = chain_length(obj, ["thigh.L", "shin.L"])
    move_handle(obj, limb.handle, Vector((0.0, 0.0, -0.3)))
    target = evaluate(obj)[limb.handle].translation
    end = evaluate(obj)["shin.L"] @ Vector((0.0, obj.data.bones["shin.L"].length, 0.0))
    assert (end - target).length > 0.1 * length
    handle = obj.pose.bones[limb.handle]
    handle["stretch"] = 0.5
    obj.update_tag()
    posed = evaluate(obj)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    assert evaluated.pose.bones["thigh.L"].ik_stretch == pytest.approx(0.5)
    shin = posed["shin.L"]
    end = shin @ Vector((0.0, obj.data.bones["shin.L"].length, 0.0))
    assert (end - target).length < 1e-2 * length


def test_fk_pivot_selects_handle_and_bone_then_gives_everything_back():
    obj = rig_leg()
    tool_settings = bpy.context.scene.tool_settings
    tool_settings.transform_pivot_point = "MEDIAN_POINT"
    selection.select_only(obj, ["toe.L", "hips"], "thigh.L")
    assert bpy.ops.ik_rigger.fk_pivot() == {"FINISHED"}
    assert tool_settings.transform_pivot_point == "ACTIVE_ELEMENT"
    assert selection.selected_bones(obj) == ["thigh.L", "foot_IK.L"] or set(selection.selected_bones(obj)) == {
        "thigh.L", "foot_IK.L"}
    assert obj.data.bones.active.name == "thigh.L"
    assert bpy.ops.ik_rigger.fk_pivot() == {"FINISHED"}
    assert tool_settings.transform_pivot_point == "MEDIAN_POINT"
    assert set(selection.selected_bones(obj)) == {"toe.L", "hips"}
    assert obj.data.bones.active.name == "thigh.L"


def test_fk_pivot_needs_a_chain_bone():
    obj = rig_leg()
    set_active_bone(obj, "hips")
    with pytest.raises(RuntimeError, match="rigged by IK Rigger|chain bone"):
        bpy.ops.ik_rigger.fk_pivot()


def test_select_buttons():
    obj = rig_leg()
    set_active_bone(obj, "hips")
    assert bpy.ops.ik_rigger.select_limb_bones(limb="shin.L", part="CHAIN") == {"FINISHED"}
    assert set(selection.selected_bones(obj)) == {"thigh.L", "shin.L"}
    assert bpy.ops.ik_rigger.select_limb_bones(limb="shin.L", part="POLE") == {"FINISHED"}
    assert selection.selected_bones(obj) == ["shin_IK_pole.L"]


def test_reset_pole_angle_and_rebuild_from_the_panel_settings():
    obj = rig_leg()
    limb = obj.ik_rigger.limbs[0]
    ik = obj.pose.bones["shin.L"].constraints[0]
    automatic = ik.pole_angle
    ik.pole_angle = automatic + 1.0
    assert bpy.ops.ik_rigger.reset_pole_angle() == {"FINISHED"}
    assert ik.pole_angle == pytest.approx(automatic, abs=1e-6)
    ik.pole_angle = math.radians(33)
    limb.copy_mode = "TRANSFORMS"
    assert bpy.ops.ik_rigger.rebuild_limb(limb="shin.L") == {"FINISHED"}
    assert [c.type for c in obj.pose.bones["foot.L"].constraints] == ["COPY_TRANSFORMS"]
    assert obj.pose.bones["shin.L"].constraints[0].pole_angle == pytest.approx(math.radians(33), abs=1e-5)


def test_an_animated_blend_plays_back_through_drivers():
    obj = rig_leg()
    limb = obj.ik_rigger.limbs[0]
    move_handle(obj, limb.handle, Vector((0.0, -0.1, 0.25)))
    handle = obj.pose.bones[limb.handle]
    handle["ik_fk"] = 1.0
    handle.keyframe_insert('["ik_fk"]', frame=1)
    handle["ik_fk"] = 0.0
    handle.keyframe_insert('["ik_fk"]', frame=10)
    scene = bpy.context.scene
    scene.frame_set(1)
    ik_end = evaluate(obj)["shin.L"].translation.copy()
    scene.frame_set(10)
    fk_knee = evaluate(obj)["shin.L"].translation.copy()
    assert (fk_knee - obj.data.bones["shin.L"].head_local).length < 1e-5
    assert (ik_end - fk_knee).length > 1e-3
    constraint = obj.pose.bones["shin.L"].constraints[0]
    assert obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones["shin.L"].constraints[0].influence \
        == pytest.approx(0.0)
    assert constraint.type == "IK"


def test_keys_follow_their_limb_through_rebuild_and_removal():
    obj = make_armature(both_legs())
    for last in ("shin.L", "shin.R"):
        set_active_bone(obj, last)
        assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    left, right = obj.ik_rigger.limbs["shin.L"], obj.ik_rigger.limbs["shin.R"]
    for limb, value in ((right, 0.25), (left, 0.75)):
        handle = obj.pose.bones[limb.handle]
        handle["ik_fk"] = value
        handle.keyframe_insert('["ik_fk"]', frame=1)
    # Rebuilding keeps the handle bone itself, so its switch and keys stay.
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(copy_mode="TRANSFORMS") == {"FINISHED"}
    assert [limb.name for limb in obj.ik_rigger.limbs] == ["shin.L", "shin.R"]
    bpy.context.scene.frame_set(2)
    bpy.context.scene.frame_set(1)
    assert ik_fk(obj, obj.ik_rigger.limbs["shin.L"]) == pytest.approx(0.75)
    assert ik_fk(obj, obj.ik_rigger.limbs["shin.R"]) == pytest.approx(0.25)
    # Removing the first limb drops its keys and leaves the second one's.
    assert bpy.ops.ik_rigger.remove_ik(keep_motion=False) == {"FINISHED"}
    paths = {curve.data_path for curve in _all_fcurves(obj)}
    assert paths == {'pose.bones["foot_IK.R"]["ik_fk"]'}
    bpy.context.scene.frame_set(2)
    bpy.context.scene.frame_set(1)
    assert ik_fk(obj, obj.ik_rigger.limbs["shin.R"]) == pytest.approx(0.25)


def test_a_limb_whose_bones_were_renamed_still_snaps():
    obj = rig_leg()
    obj.data.bones["foot.L"].name = "paw.L"
    obj.data.bones["thigh.L"].name = "upper leg"
    obj.data.bones["foot_IK.L"].name = "paw handle"
    limb = obj.ik_rigger.limbs[0]
    move_handle(obj, "paw handle", Vector((0.05, -0.1, 0.25)))
    ik = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_fk_to_ik(limb="shin.L") == {"FINISHED"}
    names = ["upper leg", "shin.L", "paw.L"]
    assert_same_pose(obj, ik, evaluate(obj), names, chain_length(obj, names[:2]))
    assert obj.pose.bones["paw handle"]["ik_fk"] == 0.0
    assert bpy.ops.ik_rigger.select_limb_bones(limb="shin.L", part="CHAIN") == {"FINISHED"}
    assert set(selection.selected_bones(obj)) == {"upper leg", "shin.L"}
    assert limb.handle == "paw handle" and list(records.inventory(limb).chain) == ["upper leg", "shin.L"]


@pytest.mark.parametrize("family", ["daz", "makehuman"])
def test_snap_both_ways_on_segments_split_in_two(family):
    """The second halves take their bend and twist from FK, and IK keeps them so."""
    obj = make_character(Matrix.Identity(4), Matrix.Identity(4), 0.05, family=family).obj
    bpy.ops.object.mode_set(mode="POSE")
    limb_spec = next(limb for limb in split_limbs(family) if limb.bends == "BACK")
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    set_active_bone(obj, limb_spec.last)
    limb = obj.ik_rigger.limb_of(limb_spec.last)
    chain = list(records.inventory(limb).chain)
    assert len(chain) == 4
    names = [*chain, limb.extremity]
    length = chain_length(obj, chain)
    move_handle(obj, limb.handle, Vector((-0.1, 0.05, -0.15)))
    ik = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_fk_to_ik() == {"FINISHED"}
    assert_same_pose(obj, ik, evaluate(obj), names, length)
    fk_pose(obj, names, seed=5)
    for half in (chain[1], chain[3]):  # a twist bone twists most, and motion capture bends it a little
        obj.pose.bones[half].rotation_euler = Euler((0.1, 0.4, -0.05))
    fk = evaluate(obj)
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    assert ik_fk(obj, limb) == 1.0
    assert_same_pose(obj, fk, evaluate(obj), names, length)
