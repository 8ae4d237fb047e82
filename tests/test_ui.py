"""Panels, the limb list and menus drawn headless against a layout that checks every
property and operator against Blender's real RNA, and never changes data."""

from __future__ import annotations

from types import MethodType, SimpleNamespace

import bpy
import pytest
from helpers import both_legs, make_armature, same, set_active_bone, snapshot

import ik_rigger
from ik_rigger import ui
from ik_rigger.limb import options


class OperatorButton:
    """What ``layout.operator`` returns: only real operator properties may be set."""

    def __init__(self, idname: str) -> None:
        module, name = idname.split(".")
        operator = getattr(getattr(bpy.ops, module), name)
        object.__setattr__(self, "_properties", operator.get_rna_type().properties)
        object.__setattr__(self, "_idname", idname)

    def __setattr__(self, name: str, value) -> None:
        assert name in self._properties, f"{self._idname} has no property '{name}'"
        object.__setattr__(self, name, value)

    def given(self) -> dict:
        """The properties the panel set on the button."""
        return {name: value for name, value in vars(self).items() if not name.startswith("_")}


class RecordingLayout:
    """A stand-in for UILayout that fails on a property or operator Blender does not have."""

    def __init__(self, log: list) -> None:
        self.log = log
        self.use_property_split = False
        self.use_property_decorate = True
        self.enabled = True
        self.active = True

    def _child(self, *args, **kwargs) -> RecordingLayout:
        return RecordingLayout(self.log)

    row = column = box = split = column_flow = grid_flow = _child

    def prop(self, data, name: str, **kwargs) -> None:
        if name.startswith('["') and name.endswith('"]'):
            assert name[2:-2] in data, f"{data.bl_rna.identifier} has no custom property {name}"
        else:
            assert name in data.bl_rna.properties, f"{data.bl_rna.identifier} has no property '{name}'"
        self.log.append(("prop", data.bl_rna.identifier, name))

    def prop_search(self, data, name: str, search_data, search_name: str, **kwargs) -> None:
        self.prop(data, name)
        assert search_name in search_data.bl_rna.properties, search_name

    def operator(self, idname: str, **kwargs) -> OperatorButton:
        self.log.append(("operator", idname))
        button = OperatorButton(idname)
        self.log.append(("button", idname, button))
        return button

    def menu(self, idname: str, **kwargs) -> None:
        assert hasattr(bpy.types, idname), idname
        self.log.append(("menu", idname))

    def template_list(self, list_type, list_id, data, name, active_data, active_name, **kwargs) -> None:
        assert hasattr(bpy.types, list_type), list_type
        assert name in data.bl_rna.properties and active_name in active_data.bl_rna.properties
        self.log.append(("list", name))

    def label(self, **kwargs) -> None:
        self.log.append(("label", kwargs.get("text", "")))

    def separator(self, **kwargs) -> None:
        pass


def draw(panel: type, obj: bpy.types.Object) -> list:
    log: list = []
    context = SimpleNamespace(active_object=obj, active_bone=obj.data.bones.active, scene=bpy.context.scene)
    panel.draw(SimpleNamespace(layout=RecordingLayout(log)), context)
    return log


@pytest.fixture
def rigged():
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    return obj


PANELS = [ui.IKRIG_PT_main, ui.IKRIG_PT_build, ui.IKRIG_PT_build_advanced, ui.IKRIG_PT_limbs, ui.IKRIG_PT_joints,
          ui.IKRIG_PT_solver, ui.IKRIG_PT_pose]


@pytest.mark.parametrize("panel", PANELS, ids=lambda panel: panel.__name__)
def test_panels_draw_real_properties_and_change_nothing(rigged, panel):
    settings = rigged.ik_rigger.build_settings
    settings.extremity_mode = "BONE"
    settings.handle_parent_mode = "BONE"
    settings.pole_angle_auto = False
    before = snapshot(rigged)
    log = draw(panel, rigged)
    assert log
    assert same(snapshot(rigged), before)


def test_build_panel_shows_what_was_detected():
    obj = make_armature(both_legs(bend=0.0))
    set_active_bone(obj, "shin.R")
    labels = [entry[1] for entry in draw(ui.IKRIG_PT_build, obj) if entry[0] == "label"]
    assert "Chain: thigh.R > shin.R" in labels
    assert "Extremity: foot.R" in labels
    assert "Side: R" in labels
    assert "Shape: straight (will be pre-bent)" in labels
    set_active_bone(obj, "root")
    labels = [entry[1] for entry in draw(ui.IKRIG_PT_build, obj) if entry[0] == "label"]
    assert any("'root'" in label and "parent" in label for label in labels)


def test_build_and_auto_rig_buttons_take_the_panels_settings():
    """Build IK Limb and Auto-Rig Limbs take what the panel shows (Auto-Rig finds each limb's chain
    and extremity itself), so an option set there, Fix Bone Orientation among them, applies."""
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    settings = obj.ik_rigger.build_settings
    settings.fix_orientation = True
    settings.copy_mode = "TRANSFORMS"
    settings.both_sides = True
    buttons = {entry[1]: entry[2].given() for entry in draw(ui.IKRIG_PT_build, obj) if entry[0] == "button"}
    for declared in options.schema():
        assert buttons["ik_rigger.build_ik"][declared.name] == getattr(settings, declared.name)
        assert buttons["ik_rigger.auto_rig"][declared.name] == getattr(settings, declared.name)
    assert buttons["ik_rigger.auto_rig"]["fix_orientation"] is True
    assert buttons["ik_rigger.build_ik"]["both_sides"] is True


def test_limbs_panel_edits_blenders_own_ik_data(rigged):
    log = draw(ui.IKRIG_PT_limbs, rigged)
    assert ("prop", "KinematicConstraint", "pole_angle") in log
    assert ("prop", "KinematicConstraint", "chain_count") in log
    assert ("prop", "PoseBone", '["ik_fk"]') in log
    assert ("list", "limbs") in log


def test_limb_list_items_draw():
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    bpy.ops.ik_rigger.build_ik()
    log: list = []
    limb = obj.ik_rigger.limbs[0]
    ui.IKRIG_UL_limbs.draw_item(None, bpy.context, RecordingLayout(log), obj.ik_rigger, limb, 0, None, "", 0)
    assert ("label", "thigh.L > shin.L") in log


def test_recording_layout_catches_a_missing_property(rigged):
    with pytest.raises(AssertionError, match="no property 'pole_angel'"):
        RecordingLayout([]).prop(rigged.ik_rigger.limbs[0], "pole_angel")
    with pytest.raises(AssertionError, match="no property 'nope'"):
        RecordingLayout([]).operator("ik_rigger.build_ik").nope = 1


def test_every_operator_is_in_the_menu_and_the_menu_in_pose_and_armature_menus():
    log: list = []
    ui.IKRIG_MT_menu.draw(SimpleNamespace(layout=RecordingLayout(log)), bpy.context)
    drawn = {entry[1] for entry in log if entry[0] == "operator"}
    registered = {cls.bl_idname for cls in ik_rigger.operators.classes + ik_rigger.pose_operators.classes
                  + ik_rigger.aim_operators.classes + ik_rigger.ground_operators.classes}
    registered.add(ik_rigger.export_operators.IKRIG_OT_export.bl_idname)
    assert registered == drawn
    assert {name for name in dir(bpy.ops.ik_rigger)} >= {idname.split(".")[1] for idname in registered}
    for host in ("VIEW3D_MT_pose", "VIEW3D_MT_edit_armature"):
        log = []
        ui._draw_menu(SimpleNamespace(layout=RecordingLayout(log)), bpy.context)
        assert ("menu", "IKRIG_MT_menu") in log
        assert ui._draw_menu in getattr(bpy.types, host).draw._draw_funcs


def test_build_operator_redo_panel_draws_real_properties(rigged):
    log: list = []
    values = {declared.name: declared.default for declared in options.schema()}
    values.update(pole_angle_auto=False, handle_parent_mode="BONE", extremity_mode="BONE")
    operator = SimpleNamespace(layout=RecordingLayout(log), bl_rna=bpy.ops.ik_rigger.build_ik.get_rna_type(),
                               **values)
    operator.draw_options = MethodType(ik_rigger.props.LimbSettings.draw_options, operator)
    ik_rigger.operators.IKRIG_OT_build_ik.draw(operator, SimpleNamespace(active_object=rigged))
    drawn = {entry[2] for entry in log if entry[0] == "prop"}
    assert {"chain_length", "pole_angle", "handle_parent", "extremity_name", "copy_mode"} <= drawn


def test_build_panel_plans_once_per_change_not_per_redraw(monkeypatch):
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    calls = []
    original = ui._preview
    monkeypatch.setattr(ui, "_preview", lambda *args: calls.append(1) or original(*args))
    for _ in range(5):
        draw(ui.IKRIG_PT_build, obj)
    assert len(calls) == 1
    obj.ik_rigger.build_settings.chain_length = 3  # another option: planned again
    draw(ui.IKRIG_PT_build, obj)
    assert len(calls) == 2
    obj.data.bones["thigh.L"].name = "upper.L"  # the armature changed: planned again
    bpy.context.view_layer.update()
    labels = [entry[1] for entry in draw(ui.IKRIG_PT_build, obj) if entry[0] == "label"]
    assert len(calls) == 3
    assert any("upper.L" in label for label in labels)


def test_joint_and_solver_panels_show_blenders_own_settings(rigged):
    log = draw(ui.IKRIG_PT_joints, rigged)
    for name in ("lock_ik_x", "ik_stiffness_z", "use_ik_limit_y", "ik_min_x", "ik_max_z", "ik_stretch"):
        assert ("prop", "PoseBone", name) in log
    rigged.pose.ik_solver = "ITASC"
    log = draw(ui.IKRIG_PT_solver, rigged)
    assert ("prop", "Pose", "ik_solver") in log and ("prop", "Itasc", "precision") in log


def test_the_limbs_panel_shows_every_part_a_limb_has_and_changes_nothing():
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(foot_roll=True, parent_switch=True, distance_limit="INSIDE",
                                      hinge_joints=True) == {"FINISHED"}
    before = snapshot(obj)
    log = draw(ui.IKRIG_PT_limbs, obj)
    assert same(snapshot(obj), before)
    shown = {entry[2] for entry in log if entry[0] == "prop"}
    assert {'["ik_fk"]', '["ik_weight"]', '["stretch"]', "pole_parent", "copy_mode", "pole_angle",
            "custom_shape_scale_xyz", "hide", "limit_mode", "distance"} <= shown
    assert any(entry[0] == "prop" and entry[2].startswith("rotation_") for entry in log)  # the foot roll
    assert ("operator", "ik_rigger.switch_parent") in log  # parent switching
