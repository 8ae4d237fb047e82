"""Stretch done right: one value per limb (the handle's ``stretch``), a maximum, clean scales at 0."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, chain_length, evaluate, make_armature, rotation_degrees, same, set_active_bone, snapshot
from mathutils import Vector
from test_build import move_handle

from ik_rigger import api
from ik_rigger.rig import records

CHAIN = ["thigh.L", "shin.L"]


def rig(**options) -> bpy.types.Object:
    obj = make_armature(both_legs(bend=0.08))
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(**options) == {"FINISHED"}
    return obj


def pull(obj: bpy.types.Object, reach: float) -> tuple[Vector, Vector, dict]:
    """Move the handle straight away from the hip to ``reach`` chain lengths; return the handle, the chain end
    and the evaluated pose."""
    bones = obj.data.bones
    root = bones["thigh.L"].head_local
    end = bones["shin.L"].tail_local
    length = chain_length(obj, CHAIN)
    direction = (end - root).normalized()
    move_handle(obj, "foot_IK.L", root + direction * reach * length - end)
    posed = evaluate(obj)
    tip = posed["shin.L"] @ Vector((0.0, bones["shin.L"].length, 0.0))
    return posed["foot_IK.L"].translation, tip, posed


def set_stretch(obj: bpy.types.Object, value: float) -> None:
    obj.pose.bones["foot_IK.L"]["stretch"] = value
    obj.update_tag()


def test_at_zero_nothing_stretches_and_deforming_scales_stay_one():
    obj = rig()
    set_stretch(obj, 0.0)
    _, _, posed = pull(obj, 1.5)
    for name in CHAIN + ["foot.L"]:
        scale = posed[name].to_scale()
        assert max(abs(value - 1.0) for value in scale) < 1e-5, name
        length = (posed[name] @ Vector((0.0, obj.data.bones[name].length, 0.0)) - posed[name].translation).length
        assert length == pytest.approx(obj.data.bones[name].length, abs=1e-5)


@pytest.mark.parametrize("reach", [1.1, 1.3, 1.49])
def test_at_one_the_chain_reaches_the_handle_up_to_the_maximum(reach):
    obj = rig(max_stretch=1.5)
    set_stretch(obj, 1.0)
    handle, tip, _ = pull(obj, reach)
    assert (tip - handle).length < 1e-4 * chain_length(obj, CHAIN)


def test_beyond_the_maximum_the_chain_stops_there_and_the_handle_moves_on():
    obj = rig(max_stretch=1.25)
    set_stretch(obj, 1.0)
    handle, tip, _ = pull(obj, 2.0)
    length = chain_length(obj, CHAIN)
    root = obj.data.bones["thigh.L"].head_local
    assert (handle - root).length == pytest.approx(2.0 * length, rel=1e-4)  # the control itself is free
    assert (tip - root).length == pytest.approx(1.25 * length, abs=1e-4 * length)


def test_the_handle_value_is_the_only_source_and_remove_gives_everything_back():
    obj = make_armature(both_legs(bend=0.08))
    obj.pose.bones["shin.L"].ik_stretch = 0.2  # the user's own
    before = snapshot(obj)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    set_stretch(obj, 0.7)
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    bpy.context.view_layer.update()
    assert [evaluated.pose.bones[name].ik_stretch for name in CHAIN] == pytest.approx([0.7, 0.7])
    assert bpy.ops.ik_rigger.build_ik(max_stretch=2.0) == {"FINISHED"}  # a rebuild keeps the value
    assert obj.pose.bones["foot_IK.L"]["stretch"] == pytest.approx(0.7)
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert obj.pose.bones["shin.L"].ik_stretch == pytest.approx(0.2)
    assert same(snapshot(obj), before)


def made_roles(obj: bpy.types.Object) -> dict[str, str]:
    return {role: name for limb in obj.ik_rigger.limbs for name, role in records.inventory(limb).made}


def stretch_drivers(obj: bpy.types.Object) -> list[str]:
    data = obj.animation_data
    return [curve.data_path for curve in (data.drivers if data else ()) if curve.data_path.endswith("ik_stretch")]


def assert_without_stretch(obj: bpy.types.Object) -> None:
    """No TARGET, REACH, reach limit or stretch driver; the IK aims at the handle; the chain reaches the
    handle within its length and stops at its length beyond."""
    roles = made_roles(obj)
    assert "TARGET" not in roles and "REACH" not in roles
    assert not any(name.endswith(("_IK_target.L", "_IK_reach.L")) for name in obj.data.bones.keys())
    assert stretch_drivers(obj) == []
    assert obj.pose.bones["shin.L"].constraints["IK Rigger IK"].subtarget == "foot_IK.L"
    length = chain_length(obj, CHAIN)
    handle, tip, _ = pull(obj, 0.9)
    assert (tip - handle).length < 1e-4 * length
    set_stretch(obj, 1.0)  # a value kept from a build with stretch does nothing now
    handle, tip, _ = pull(obj, 1.4)
    root = obj.data.bones["thigh.L"].head_local
    assert (tip - root).length == pytest.approx(length, abs=1e-4 * length)
    assert (tip - root).normalized().dot((handle - root).normalized()) == pytest.approx(1.0, abs=1e-6)


def assert_stretches(obj: bpy.types.Object) -> None:
    roles = made_roles(obj)
    assert {"TARGET", "REACH"} <= set(roles)
    assert sorted(stretch_drivers(obj)) == sorted(f'pose.bones["{name}"].ik_stretch' for name in CHAIN)
    set_stretch(obj, 1.0)
    handle, tip, _ = pull(obj, 1.3)
    assert (tip - handle).length < 1e-4 * chain_length(obj, CHAIN)


def test_at_maximum_stretch_one_the_limb_has_no_stretch_and_reaches_the_handle():
    assert_without_stretch(rig(max_stretch=1.0))


def test_a_rebuild_takes_stretch_away_and_gives_it_back_and_remove_gives_everything_back():
    obj = make_armature(both_legs(bend=0.08))
    obj.pose.bones["shin.L"].ik_stretch = 0.2  # the user's own
    before = snapshot(obj)
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    assert_stretches(obj)
    assert bpy.ops.ik_rigger.build_ik(max_stretch=1.0) == {"FINISHED"}
    assert obj.pose.bones["shin.L"].ik_stretch == pytest.approx(0.2)
    assert_without_stretch(obj)
    assert bpy.ops.ik_rigger.build_ik(max_stretch=1.5) == {"FINISHED"}
    assert_stretches(obj)
    assert bpy.ops.ik_rigger.build_ik(max_stretch=1.0) == {"FINISHED"}
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}
    assert same(snapshot(obj), before)


def test_a_rebuild_that_drops_the_stretch_target_leaves_blender_nothing_to_report(capfd, monkeypatch):
    """The IK aimed at the stretch target the rebuild deletes: it aims at the handle before the target goes,
    so Blender reports no failed relation on leaving Edit mode; a rebuild that fails after that gives the IK
    its target back."""
    from ik_rigger.limb.options import LimbOptions
    from ik_rigger.rig import build

    obj = make_armature(both_legs(bend=0.08))
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    before = snapshot(obj)
    ik = obj.pose.bones["shin.L"].constraints["IK Rigger IK"]
    target = ik.subtarget
    assert made_roles(obj)["TARGET"] == target
    capfd.readouterr()

    def fail(*_args) -> None:
        raise RuntimeError("injected after the passes")

    monkeypatch.setattr(build, "_set_version", fail)
    with pytest.raises(RuntimeError, match="injected"):
        build.build_limbs(obj, [("shin.L", LimbOptions(max_stretch=1.0))])
    assert same(snapshot(obj), before)
    assert obj.pose.bones["shin.L"].constraints["IK Rigger IK"].subtarget == target
    monkeypatch.undo()
    assert bpy.ops.ik_rigger.build_ik(max_stretch=1.0) == {"FINISHED"}
    assert_without_stretch(obj)
    out, err = capfd.readouterr()
    assert "Failed to add relation" not in out + err


def test_a_users_own_stretch_driver_on_the_chain_stays_through_a_build_without_stretch_and_remove():
    """The user drives the thigh's IK stretch from a "stretch" property of their own: a limb built at
    Maximum Stretch 1 plans no stretch driver there, so it leaves the user's alone, and so does remove."""
    obj = make_armature(both_legs(bend=0.08))
    obj.pose.bones["hips"]["stretch"] = 0.3
    driver = obj.pose.bones["thigh.L"].driver_add("ik_stretch").driver
    variable = driver.variables.new()
    variable.targets[0].id = obj
    variable.targets[0].data_path = 'pose.bones["hips"]["stretch"]'
    driver.type = "AVERAGE"
    bpy.context.view_layer.update()  # the driven value, as Blender writes it back
    assert obj.pose.bones["thigh.L"].ik_stretch == pytest.approx(0.3)
    before = snapshot(obj)
    api.build(obj, "shin.L", max_stretch=1.0)
    assert stretch_drivers(obj) == ['pose.bones["thigh.L"].ik_stretch']
    api.remove(obj, "shin.L")
    assert stretch_drivers(obj) == ['pose.bones["thigh.L"].ik_stretch']
    assert same(snapshot(obj), before)


@pytest.mark.parametrize("options", [{"foot_roll": True}, {"use_rotation": True}, {"distance_limit": "OUTSIDE"}],
                         ids=["foot_roll", "use_rotation", "distance"])
def test_without_stretch_a_part_that_needs_a_target_gets_one_and_no_reach(options):
    obj = rig(max_stretch=1.0, **options)
    roles = made_roles(obj)
    assert "TARGET" in roles and "REACH" not in roles and stretch_drivers(obj) == []
    assert "stretch" not in api.limbs(obj)[0].parts
    assert obj.pose.bones["shin.L"].constraints["IK Rigger IK"].subtarget == roles["TARGET"]
    posed = evaluate(obj)
    for name in CHAIN + ["foot.L"]:  # at rest as built
        assert (posed[name].translation - obj.data.bones[name].head_local).length < 1e-4 * chain_length(obj, CHAIN)
        assert rotation_degrees(posed[name], obj.data.bones[name].matrix_local) < 1e-3
