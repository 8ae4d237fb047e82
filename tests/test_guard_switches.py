"""A limb's switch (the handle's ``ik_fk``, ``parent``, ``ik_weight``) made a text or a list, in the
bone's Custom Properties or by a script, or deleted: the snaps, the bake, the parent switch, the
limbs' listing and Plant Feet ended in a Python traceback, the Pose panel's draw too, and a rebuild
could not restore it. Now each refuses, changing nothing, naming the handle and the switch and what
to do, the panels draw, and a rebuild restores the switch (its value kept where it was a number)."""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, both_legs, chain_length, evaluate, make_armature, rotation_degrees
from test_ui import PANELS, draw

from ik_rigger import api, ui

HANDLE = "foot_IK.L"
BAD = {"text": "IK", "list": [1.0, 0.0]}


def _rig() -> bpy.types.Object:
    """Both legs rigged with parent switching, the left foot's handle moved and keyed on two frames."""
    obj = make_armature(both_legs(), mode="POSE")
    api.build(obj, "shin.L", both_sides=True, parent_switch=True)
    handle = obj.pose.bones[HANDLE]
    for frame, height in ((1, 0.1), (5, 0.25)):
        handle.location = (0.0, 0.0, height)
        handle.keyframe_insert("location", frame=frame)
    obj.data.bones.active = obj.data.bones["shin.L"]
    return obj


def _set(obj: bpy.types.Object, key: str, value) -> None:
    """As the Custom Properties panel's Edit Property does when the type is changed (Blender refuses to
    set a text over a number straight away)."""
    handle = obj.pose.bones[HANDLE]
    del handle[key]
    if value is not None:
        handle[key] = value


def _state(obj: bpy.types.Object) -> tuple:
    bases = tuple(tuple(v for row in bone.matrix_basis for v in row) for bone in obj.pose.bones)
    handle = obj.pose.bones[HANDLE]
    switches = {key: handle[key] if isinstance(handle[key], (str, int, float)) else handle[key].to_list()
                for key in handle.keys()}
    return bases, switches, sorted((curve.data_path, len(curve.keyframe_points)) for curve in all_fcurves(obj))


CALLS = {
    "snap FK to IK": lambda obj: api.snap_limb(obj, "shin.L", "FK"),
    "snap IK to FK keyed": lambda obj: api.snap_limb(obj, "shin.L", "IK", key=True),
    "bake FK to IK": lambda obj: api.bake(obj, "FK_TO_IK", range(1, 6), switch=True),
    "bake IK to FK": lambda obj: api.bake(obj, "IK_TO_FK", range(1, 6)),
    "switch parent": lambda obj: api.switch_parent(obj, "shin.L", 1),
    "list limbs": lambda obj: api.limbs(obj),
}


@pytest.mark.parametrize("call", CALLS, ids=list(CALLS))
@pytest.mark.parametrize("kind", BAD)
@pytest.mark.parametrize("key", ["ik_fk", "parent"])
def test_a_switch_that_is_no_number_is_refused_by_name_changing_nothing(key, kind, call):
    obj = _rig()
    _set(obj, key, BAD[kind])
    before = _state(obj)
    if key == "parent" and call == "list limbs":
        api.limbs(obj)  # the listing reads no parent choice
        return
    described = "the text 'IK'" if kind == "text" else "a list of 2 values"
    with pytest.raises(api.RigError, match=f"'{HANDLE}': its switch '{key}' holds {described}, not a number.*"
                                           "rebuild the limb"):
        CALLS[call](obj)
    assert _state(obj) == before


def test_the_snap_operator_reports_the_switch_instead_of_a_traceback():
    obj = _rig()
    _set(obj, "ik_fk", "IK")
    with pytest.raises(RuntimeError) as raised:
        bpy.ops.ik_rigger.snap_ik_to_fk()
    assert "its switch 'ik_fk' holds the text 'IK'" in str(raised.value)
    assert "Traceback" not in str(raised.value)


def test_plant_feet_refuses_a_switch_that_is_no_number():
    obj = _rig()
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.mesh.primitive_plane_add(size=20.0)
    ground = bpy.context.active_object
    _set(obj, "ik_fk", "IK")
    with pytest.raises(api.RigError, match=f"'{HANDLE}': its switch 'ik_fk'"):
        api.plant_feet(obj, ground)


@pytest.mark.parametrize("kind", [*BAD, "deleted"])
@pytest.mark.parametrize("key", ["ik_fk", "parent", "ik_weight"])
def test_the_panels_draw_whatever_the_switch_holds(key, kind):
    obj = _rig()
    _set(obj, key, BAD.get(kind))
    for panel in [*PANELS, ui.IKRIG_PT_aim, ui.IKRIG_PT_ground]:
        draw(panel, obj)


def test_a_deleted_switch_the_drivers_read_is_refused_and_a_deleted_ik_fk_made_again():
    obj = _rig()
    _set(obj, "ik_weight", None)
    with pytest.raises(api.RigError, match=f"'{HANDLE}': its switch 'ik_weight' was deleted.*Rebuild the limb"):
        api.snap_limb(obj, "shin.L", "FK")
    api.build(obj, "shin.L")
    assert obj.pose.bones[HANDLE]["ik_weight"] == 1.0
    _set(obj, "ik_fk", None)
    api.snap_limb(obj, "shin.L", "FK")  # the snap sets the switch: made again, with its range
    assert obj.pose.bones[HANDLE].id_properties_ui("ik_fk").as_dict()["max"] == 1.0


@pytest.mark.parametrize("value", ["IK", [1.0, 0.0], 0], ids=["text", "list", "whole number"])
def test_a_rebuild_restores_the_switch_and_the_rig_switches_again(value):
    obj = _rig()
    _set(obj, "ik_fk", value)
    api.build(obj, "shin.L")
    handle = obj.pose.bones[HANDLE]
    assert isinstance(handle["ik_fk"], float) and handle["ik_fk"] == (0.0 if value == 0 else 1.0)
    assert handle.id_properties_ui("ik_fk").as_dict()["max"] == 1.0
    # The drivers read it again: snapped to FK, the chain shows in FK what the IK showed.
    handle["ik_fk"] = 1.0
    ik = evaluate(obj)
    api.snap_limb(obj, "shin.L", "FK")
    handle.location = (0.3, 0.3, 0.3)  # the handle moves; in FK the chain stays
    fk = evaluate(obj)
    length = chain_length(obj, ["thigh.L", "shin.L"])
    for name in ("thigh.L", "shin.L", "foot.L"):
        assert (fk[name].translation - ik[name].translation).length < 1e-4 * length
        assert rotation_degrees(fk[name], ik[name]) < 0.01


def test_a_rebuild_restores_a_parent_choice_that_is_no_number():
    obj = _rig()
    _set(obj, "parent", "Root")
    api.build(obj, "shin.L")
    assert obj.pose.bones[HANDLE]["parent"] == 0 and isinstance(obj.pose.bones[HANDLE]["parent"], int)
    assert api.parent_choices(obj, "shin.L")[0].startswith("Origin")
    api.switch_parent(obj, "shin.L", 1)
    assert obj.pose.bones[HANDLE]["parent"] == 1


def test_a_rebuild_that_fails_gives_the_switch_back_as_it_was(monkeypatch):
    from ik_rigger.rig import motion_keep

    obj = _rig()
    _set(obj, "ik_fk", [1.0, 0.0])

    def fails(self) -> None:
        raise api.RigError("stopped on purpose", bone="shin.L", hint="Nothing.")

    monkeypatch.setattr(motion_keep.Keeping, "keep", fails)
    with pytest.raises(api.RigError, match="stopped on purpose"):
        api.build(obj, "shin.L")
    assert obj.pose.bones[HANDLE]["ik_fk"].to_list() == [1.0, 0.0]
