"""Adding chain bones from scratch, and every operator reachable from a menu (F3)."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import evaluate, make_armature, rest, rotation_degrees, same, set_active_bone, snapshot
from mathutils import Vector

import ik_rigger
from ik_rigger import ui


def empty_armature_in_edit_mode() -> bpy.types.Object:
    return make_armature([], mode="EDIT")


def test_add_chain_makes_a_prebent_sided_chain_with_parents():
    obj = empty_armature_in_edit_mode()
    bpy.context.scene.cursor.location = (0.3, 0.0, 1.0)
    result = bpy.ops.ik_rigger.add_chain(base_name="leg", side="L", bone_count=3, bone_length=0.4,
                                         bend_angle=math.radians(5))
    assert result == {"FINISHED"}
    assert obj.mode == "EDIT"
    bpy.ops.object.mode_set(mode="OBJECT")
    bones = obj.data.bones
    assert {"origin", "leg_root.L", "leg_01.L", "leg_02.L", "leg_03.L", "leg_end.L"} <= set(bones.keys())
    assert bones["leg_01.L"].parent.name == "leg_root.L"
    assert bones["leg_root.L"].parent.name == "origin"
    assert bones["leg_02.L"].use_connect
    assert bones["leg_01.L"].head_local == Vector((0.3, 0.0, 1.0))
    # Ends on the line straight down, inner joints bowed forward (-Y), no bone turned past 5 degrees.
    assert bones["leg_03.L"].tail_local.y == pytest.approx(0.0, abs=1e-6)
    assert bones["leg_02.L"].head_local.y < -1e-3
    for name in ("leg_01.L", "leg_02.L", "leg_03.L"):
        direction = bones[name].tail_local - bones[name].head_local
        assert math.degrees(direction.angle(Vector((0, 0, -1)))) <= 5.0 + 1e-4
    assert not bones["origin"].use_deform and bones["leg_01.L"].use_deform
    assert bones["leg_01.L"].color.palette == "THEME01" and bones["origin"].color.palette == "THEME03"


def test_added_chain_rigs_cleanly():
    obj = empty_armature_in_edit_mode()
    assert bpy.ops.ik_rigger.add_chain(side="R") == {"FINISHED"}
    bpy.ops.object.mode_set(mode="POSE")
    before = rest(obj)
    set_active_bone(obj, "leg_02.R")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    record = obj.ik_rigger.limb_of("leg_02.R")
    assert obj.data.bones[record.handle].parent.name == "origin"
    assert record.extremity == "leg_end.R"
    assert not record.prebent
    posed = evaluate(obj)
    for name, matrix in before.items():
        assert rotation_degrees(matrix, posed[name]) < 0.01


def test_add_chain_reuses_the_origin_and_never_overwrites():
    obj = empty_armature_in_edit_mode()
    assert bpy.ops.ik_rigger.add_chain(side="L") == {"FINISHED"}
    assert bpy.ops.ik_rigger.add_chain(side="L") == {"FINISHED"}
    names = set(obj.data.edit_bones.keys())
    assert {"leg_01.L", "leg_012.L", "leg_root.L", "leg_root2.L"} <= names
    assert sum(1 for name in names if name.startswith("origin")) == 1


def test_add_chain_refuses_a_bend_along_the_chain():
    empty_armature_in_edit_mode()
    with pytest.raises(RuntimeError, match="lies along the chain direction"):
        bpy.ops.ik_rigger.add_chain(direction="Z_NEG", bend_direction="Z_POS")


def test_every_operator_is_in_a_menu_for_f3():
    drawn: list[str] = []

    class Layout:
        def operator(self, idname: str, **_):
            drawn.append(idname)

    # draw() only reads self.layout: give it a recording stand-in.
    ui.IKRIG_MT_menu.draw(type("Menu", (), {"layout": Layout()})(), bpy.context)
    operators = {cls.bl_idname for cls in ik_rigger.operators.classes + ik_rigger.pose_operators.classes}
    assert operators <= set(drawn)
    for host in ("VIEW3D_MT_pose", "VIEW3D_MT_edit_armature"):
        assert ui._draw_menu in getattr(bpy.types, host).draw._draw_funcs


def test_register_twice_and_unregister_twice_are_safe():
    ik_rigger.register()
    ik_rigger.register()
    assert hasattr(bpy.types.Object, "ik_rigger")
    ik_rigger.unregister()
    ik_rigger.unregister()
    assert not hasattr(bpy.types.Object, "ik_rigger")
    assert not hasattr(bpy.types, "IKRIG_OT_build_ik")
    ik_rigger.register()


@pytest.mark.parametrize(("scale", "options", "message"), [
    ((1.0, 1.0, 0.0), {}, r"the armature object 'Rig' is scaled to 0 on Z"),
    # Within the panel's own limits: the last bone would vanish in single precision.
    ((1.0, 1.0, 1.0), {"bone_count": 16, "length_ratio": 0.05}, r"bone 16 of 16 would be 1\.53e-20 long, too short"),
    ((1.0, 1.0, 1.0), {"bone_length": 1e30}, r"would make a chain 2e\+30 long, past the 1e\+06 Blender can hold"),
    ((1.0, 1.0, 1.0), {"bone_count": 60, "length_ratio": 20.0}, r"a chain 3\.03e\+76 long"),
])
def test_add_chain_refuses_what_blender_cannot_hold(scale, options, message):
    """Before: a traceback (no inverse, division by zero) or success with NaN or zero-length bones."""
    obj = make_armature([("root", (0, 0, 0), (0, 0.5, 0), None, False)])
    obj.scale = scale
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.ik_rigger.add_chain(**options)
    assert same(snapshot(obj), before)
    assert list(obj.data.bones.keys()) == ["root"]
