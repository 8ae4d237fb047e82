"""The build operators pass IK Rigger the options the call set (or the redo panel changed) alone: every
other one's property stands at its default, which is the option's own default to the bit."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, chain_length, make_armature, set_active_bone

from ik_rigger import api
from ik_rigger.limb.options import LimbOptions, schema


@pytest.mark.parametrize("operator", ["auto_rig", "build_ik"])
def test_every_option_property_defaults_to_the_options_default(operator):
    """Blender keeps a float property's default in single precision: each default reads back unchanged, so
    an option left unset is the same whether read from the operator or left to ``LimbOptions``."""
    defaults = LimbOptions()
    properties = getattr(bpy.ops.ik_rigger, operator).get_rna_type().properties
    for declared in schema():
        prop = properties[declared.name]
        assert prop.default == getattr(defaults, declared.name), declared.name
        assert type(prop.default) is type(getattr(defaults, declared.name)), declared.name


@pytest.mark.parametrize("given", [{}, {"shapes": False, "max_stretch": 1.0}, {"pole_distance": 0.75}])
def test_auto_rig_passes_the_options_it_was_given(monkeypatch, given):
    """What the call sets reaches ``api.auto_rig``, and nothing else; the legs are rigged with them."""
    obj = make_armature(both_legs(), mode="POSE")
    passed: list[dict[str, object]] = []
    real = api.auto_rig

    def recorded(obj_, **values):
        passed.append({key: value for key, value in values.items() if key not in ("skipped", "notes")})
        return real(obj_, **values)

    monkeypatch.setattr(api, "auto_rig", recorded)
    assert bpy.ops.ik_rigger.auto_rig(**given) == {"FINISHED"}
    assert passed == [given]
    assert [limb.name for limb in obj.ik_rigger.limbs] == ["shin.L", "shin.R"]
    stored = obj.ik_rigger.limbs["shin.L"].to_options()
    for key, value in given.items():
        assert getattr(stored, key) == pytest.approx(value), key
    assert stored.chain_length == 2 and stored.extremity_name == "foot.L"


# Blender remembers an operator's last values for its next call from F3, a menu or a button (not a script's
# ``bpy.ops`` call unless it asks, as the tests do with ``undo=True``) unless a property is SKIP_SAVE. The
# redo panel shows a remembered value: the build must then be built with it.
UI_CALL = ("INVOKE_DEFAULT", True)


def _foot_scale_on_a_scaled_handle(obj, limb: str) -> float:
    """The foot's evaluated scale once its limb's handle is scaled by 2: 2 where the foot copies the clone's
    transforms, 1 where it copies its rotation alone."""
    handle = obj.pose.bones[obj.ik_rigger.limbs[limb].handle]
    handle.scale = (2.0, 2.0, 2.0)
    bpy.context.view_layer.update()
    foot = "foot" + limb[-2:]
    return obj.pose.bones[foot].matrix.to_scale().length / obj.data.bones[foot].matrix_local.to_scale().length


def test_a_clone_mode_chosen_for_one_limb_is_the_next_limbs_from_f3():
    """Transforms chosen on the left leg, then Build IK Limb from F3 on the right one: the panel shows
    Transforms (remembered), and the right foot copies its clone's transforms, as a fresh build with it."""
    obj = make_armature(both_legs(), mode="POSE")
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(*UI_CALL, copy_mode="TRANSFORMS") == {"FINISHED"}
    set_active_bone(obj, "shin.R")
    assert bpy.ops.ik_rigger.build_ik(*UI_CALL) == {"FINISHED"}
    shown = bpy.context.window_manager.operator_properties_last("ik_rigger.build_ik")
    assert shown.copy_mode == "TRANSFORMS"
    assert obj.ik_rigger.limbs["shin.R"].copy_mode == "TRANSFORMS"
    assert _foot_scale_on_a_scaled_handle(obj, "shin.R") == pytest.approx(2.0, rel=1e-4)


def test_auto_rig_from_f3_builds_with_the_options_its_panel_shows():
    """Auto-Rig run with Maximum Stretch 1, then again on another character from F3: the second is built with
    Maximum Stretch 1 too (no stretch bones), as its redo panel says."""
    first = make_armature(both_legs(), name="First", mode="POSE")
    assert bpy.ops.ik_rigger.auto_rig(*UI_CALL, max_stretch=1.0) == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")
    second = make_armature(both_legs(), name="Second", mode="POSE")
    assert bpy.ops.ik_rigger.auto_rig(*UI_CALL) == {"FINISHED"}
    assert bpy.context.window_manager.operator_properties_last("ik_rigger.auto_rig").max_stretch == 1.0
    for obj in (first, second):
        assert obj.ik_rigger.limbs["shin.L"].max_stretch == 1.0, obj.name
        assert not any(bone.name.startswith("REACH") or "reach" in bone.name.lower() for bone in obj.data.bones)


def test_what_belongs_to_one_limb_is_not_remembered():
    """A bone name, the chain's length, a straight chain's bend and a manual pole angle are one limb's: none
    carries over to the next call, which would rig other bones or twist another limb."""
    obj = make_armature(both_legs(), mode="POSE")
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(*UI_CALL, extremity_mode="BONE", extremity_name="foot.L",
                                      handle_parent_mode="BONE", handle_parent="root", chain_length=2,
                                      bend_direction="Y_NEG", pole_angle_auto=False, pole_angle=0.1,
                                      pole_distance=0.75) == {"FINISHED"}
    set_active_bone(obj, "shin.R")
    assert bpy.ops.ik_rigger.build_ik(*UI_CALL) == {"FINISHED"}
    kept = set(bpy.context.window_manager.operator_properties_last("ik_rigger.build_ik").keys())
    assert kept & {"extremity_mode", "extremity_name", "handle_parent_mode", "handle_parent", "other_parent",
                   "chain_length", "bend_direction", "pole_angle_auto", "pole_angle"} == set()
    assert "pole_distance" in kept
    right = obj.ik_rigger.limbs["shin.R"]
    assert (right.extremity, right.pole_angle_auto, right.pole_distance) == ("foot.R", True, 0.75)


def test_rebuilding_from_f3_shows_and_keeps_the_limbs_own_options():
    """Build IK Limb from F3 on a rigged limb after another limb's build: its panel shows the limb's own
    options (not the last call's), and a change made there is the only one the limb gets."""
    obj = make_armature(both_legs(), mode="POSE")
    api.build(obj, "shin.L", foot_roll=True, copy_mode="ROTATION_SCALE")
    set_active_bone(obj, "shin.R")
    assert bpy.ops.ik_rigger.build_ik(*UI_CALL, copy_mode="TRANSFORMS", soft_ik=0.05) == {"FINISHED"}
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(*UI_CALL, pole_distance=1.0) == {"FINISHED"}
    shown = bpy.context.window_manager.operator_properties_last("ik_rigger.build_ik")
    left = obj.ik_rigger.limbs["shin.L"]
    assert (shown.copy_mode, shown.foot_roll, shown.soft_ik, shown.pole_distance) == ("ROTATION_SCALE", True,
                                                                                       0.0, 1.0)
    assert (left.copy_mode, left.foot_roll, left.soft_ik, left.pole_distance) == ("ROTATION_SCALE", True, 0.0, 1.0)
    right = obj.ik_rigger.limbs["shin.R"]
    assert (right.copy_mode, right.soft_ik) == ("TRANSFORMS", pytest.approx(0.05))


# (operator, property): what names another limb's, file's or range's data, or deletes or overwrites what the
# user did not ask for this time, is given for one call only.
NOT_REMEMBERED = [
    ("build_ik", "extremity_name"), ("build_ik", "chain_length"), ("auto_rig", "handle_parent"),
    ("remove_ik", "keep_motion"), ("snap_fk_to_ik", "keyframe"), ("snap_ik_to_fk", "keyframe"),
    ("switch_parent", "keyframe"), ("switch_parent", "parent"), ("bake", "frame_start"), ("bake", "clear_other"),
    ("bake", "all_limbs"), ("export", "filepath"), ("export", "frame_start"), ("export", "frame_end"),
    ("export", "clips"),
    ("plant_feet", "ground"), ("plant_feet", "frame_start"), ("remove_aim", "bone"),
]
REMEMBERED = [
    ("build_ik", "copy_mode"), ("build_ik", "both_sides"), ("auto_rig", "soft_ik"), ("snap_fk_to_ik", "switch"),
    ("bake", "direction"), ("bake", "key_switch"), ("export", "file_format"), ("export", "use_frame_range"),
]


@pytest.mark.parametrize(("operator", "name"), NOT_REMEMBERED + REMEMBERED)
def test_which_options_are_remembered(operator, name):
    prop = getattr(bpy.ops.ik_rigger, operator).get_rna_type().properties[name]
    assert prop.is_skip_save == ((operator, name) in NOT_REMEMBERED)


def test_the_plain_snap_after_snap_and_key_keys_only_while_auto_keying():
    """*Snap IK to FK and Key*, then the plain *Snap IK to FK* with auto-keying off: the second keys nothing
    (the remembered Insert Keyframes, shown in its panel, was the other button's)."""
    obj = make_armature(both_legs(), mode="POSE")
    api.build(obj, "shin.L")
    set_active_bone(obj, "shin.L")
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = False
    assert bpy.ops.ik_rigger.snap_ik_to_fk(*UI_CALL, keyframe=True) == {"FINISHED"}
    obj.animation_data.action = None
    assert bpy.ops.ik_rigger.snap_ik_to_fk(*UI_CALL) == {"FINISHED"}
    assert bpy.context.window_manager.operator_properties_last("ik_rigger.snap_ik_to_fk").keyframe is False
    assert obj.animation_data is None or obj.animation_data.action is None


def test_a_redo_with_a_changed_option_gives_the_fresh_build_with_it():
    """Build IK Limb from F3 on a rigged limb after another limb's build, then a redo with Pole Distance
    changed (the same call again on the armature as it was, with the panel's properties and that one changed):
    the limb is what a fresh rebuild with that option gives, on its record and in its evaluated pose."""
    made = []
    for name in ("Redone", "Fresh"):
        obj = make_armature(both_legs(), name=name, mode="POSE")
        api.build(obj, "shin.L", foot_roll=True, copy_mode="ROTATION_SCALE")
        made.append(obj)
        bpy.ops.object.mode_set(mode="OBJECT")
    redone, fresh = made
    bpy.context.view_layer.objects.active = redone
    bpy.ops.object.mode_set(mode="POSE")
    set_active_bone(redone, "shin.R")
    assert bpy.ops.ik_rigger.build_ik(*UI_CALL, copy_mode="TRANSFORMS") == {"FINISHED"}
    set_active_bone(redone, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(*UI_CALL, pole_distance=1.0) == {"FINISHED"}
    panel = bpy.context.window_manager.operator_properties_last("ik_rigger.build_ik")
    redo = {name: getattr(panel, name) for name in panel.keys()}
    redo["pole_distance"] = 0.8
    assert bpy.ops.ik_rigger.build_ik(**redo) == {"FINISHED"}
    api.build(fresh, "shin.L", pole_distance=0.8)
    for obj in (redone, fresh):
        handle = obj.pose.bones[obj.ik_rigger.limbs["shin.L"].handle]
        handle.location = (0.05, -0.1, 0.2)
    bpy.context.view_layer.update()
    for name in ("copy_mode", "foot_roll", "pole_distance", "soft_ik"):
        assert getattr(redone.ik_rigger.limbs["shin.L"], name) == getattr(fresh.ik_rigger.limbs["shin.L"], name)
    for bone in ("thigh.L", "shin.L", "foot.L"):
        difference = max(abs(a - b) for row_a, row_b in zip(redone.pose.bones[bone].matrix,
                                                            fresh.pose.bones[bone].matrix)
                         for a, b in zip(row_a, row_b))
        assert difference < 1e-5 * chain_length(redone, ["thigh.L", "shin.L"]), bone


def test_the_export_dialog_keeps_a_frame_range_it_is_given(monkeypatch):
    """A keymap's or a script's Start and End reach the export's dialog; those not given are the scene's
    (they were the scene's whatever was given)."""
    from types import SimpleNamespace

    from bpy_extras.io_utils import ExportHelper

    from ik_rigger import export_operators

    obj = make_armature(both_legs(), mode="OBJECT")
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 3, 40
    monkeypatch.setattr(ExportHelper, "invoke", lambda self, context, event: {"RUNNING_MODAL"})
    operator = SimpleNamespace(filepath="", frame_start=10, frame_end=250,
                               properties=SimpleNamespace(is_property_set=lambda name: name == "frame_start"))
    operator.clips = SimpleNamespace(clear=lambda: None, add=lambda: SimpleNamespace(name=""))
    context = SimpleNamespace(active_object=obj, scene=bpy.context.scene)
    assert export_operators.IKRIG_OT_export.invoke(operator, context, None) == {"RUNNING_MODAL"}
    assert (operator.frame_start, operator.frame_end) == (10, 40)
