"""How many times Auto-Rig switches the armature's mode: each switch converts every bone between
edit bones and bones and updates the scene, the largest cost of a build on a large armature."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, evaluate, make_armature
from test_bake import animated_leg

from ik_rigger import api
from ik_rigger.rig import modes


@pytest.fixture
def switches(monkeypatch) -> list[tuple[str, str]]:
    """Every mode switch IK Rigger makes (``rig/modes.set_mode`` is the only place it switches), as
    (the mode before, the mode after), in order."""
    made: list[tuple[str, str]] = []
    set_mode = modes.set_mode

    def counted(obj: bpy.types.Object, mode: str) -> None:
        before = obj.mode
        set_mode(obj, mode)
        if obj.mode != before:
            made.append((before, obj.mode))

    monkeypatch.setattr(modes, "set_mode", counted)
    return made


def _auto_rig(obj: bpy.types.Object) -> None:
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}  # from Object, Pose or Edit mode


def _rigged(obj: bpy.types.Object) -> None:
    """Both legs rigged, their handles moving the feet (evaluated), the bones' rest untouched."""
    assert [limb.name for limb in obj.ik_rigger.limbs] == ["shin.L", "shin.R"]
    if obj.mode == "EDIT":
        bpy.ops.object.mode_set(mode="POSE")
    foot = obj.pose.bones["foot.L"]
    before = evaluate(obj)["foot.L"].translation.copy()
    handle = obj.pose.bones[obj.ik_rigger.limbs["shin.L"].handle]
    handle.location.z += 0.2  # the handle's local Y points along the foot, Z up or down: either moves it
    after = evaluate(obj)["foot.L"].translation
    assert (after - before).length > 0.05 * foot.bone.length


@pytest.mark.parametrize("mode, expected", [
    ("POSE", [("POSE", "EDIT"), ("EDIT", "POSE")]),
    ("OBJECT", [("OBJECT", "EDIT"), ("EDIT", "OBJECT")]),
    # Out of Edit mode to read the bones, into it for the new bones, out for the constraints, back.
    ("EDIT", [("EDIT", "OBJECT"), ("OBJECT", "EDIT"), ("EDIT", "OBJECT"), ("OBJECT", "EDIT")]),
])
def test_auto_rig_switches_into_edit_mode_once_from_any_mode(switches, mode, expected):
    obj = make_armature(both_legs(), mode=mode)
    _auto_rig(obj)
    assert switches == expected
    assert obj.mode == mode
    _rigged(obj)


def test_auto_rig_from_edit_mode_leaves_another_character_posed_as_it_was(switches):
    other, _ = animated_leg()
    other.name = "Other"
    bpy.ops.object.mode_set(mode="OBJECT")
    obj = make_armature(both_legs(), mode="EDIT")
    bone = other.pose.bones["shin.L"]
    bone.rotation_euler = (1.1, 0.2, -0.3)  # posed by the animator, not keyed
    _auto_rig(obj)
    assert len(switches) == 4  # two of them into Edit mode, which sets every object from its keys
    assert tuple(bone.rotation_euler) == pytest.approx((1.1, 0.2, -0.3), abs=1e-6)
    assert obj.mode == "EDIT"
    _rigged(obj)


def test_rebuilding_both_legs_from_edit_mode_switches_into_edit_mode_once(switches):
    obj = make_armature(both_legs(), mode="EDIT")
    obj.data.edit_bones.active = obj.data.edit_bones["shin.L"]
    assert bpy.ops.ik_rigger.build_ik(both_sides=True) == {"FINISHED"}
    switches.clear()
    # The limbs' records and the other side are read, then both rebuilt with a longer pole distance.
    assert bpy.ops.ik_rigger.build_ik(both_sides=True, pole_distance=0.8) == {"FINISHED"}
    assert switches == [("EDIT", "OBJECT"), ("OBJECT", "EDIT"), ("EDIT", "OBJECT"), ("OBJECT", "EDIT")]
    assert obj.mode == "EDIT"
    assert [limb.pole_distance for limb in obj.ik_rigger.limbs] == pytest.approx([0.8, 0.8])
    _rigged(obj)


def test_rebuilding_a_limb_from_the_panel_in_edit_mode_switches_into_edit_mode_once(switches):
    obj = make_armature(both_legs(), mode="EDIT")
    _auto_rig(obj)
    switches.clear()
    assert bpy.ops.ik_rigger.rebuild_limb(limb="shin.L") == {"FINISHED"}
    assert switches == [("EDIT", "OBJECT"), ("OBJECT", "EDIT"), ("EDIT", "OBJECT"), ("OBJECT", "EDIT")]
    assert obj.mode == "EDIT"
    _rigged(obj)


@pytest.mark.parametrize("named", ["mesh", "nothing"])
def test_a_build_switches_the_armature_where_the_context_names_another_object(named):
    """A context naming another object as the one to work on (a pinned Properties editor, a script's own
    override) or none: the build still switches the armature's modes, not that object's, and leaves both
    as they were."""
    obj = make_armature(both_legs(), mode="POSE")
    mesh = bpy.data.objects.new("Named", bpy.data.meshes.new("Named"))
    bpy.context.scene.collection.objects.link(mesh)
    other = mesh if named == "mesh" else None
    with bpy.context.temp_override(object=other, active_object=other):
        assert bpy.context.object is other
        api.build(obj, "shin.L")
    assert obj.mode == "POSE" and mesh.mode == "OBJECT"
    limb = obj.ik_rigger.limbs["shin.L"]
    assert limb.handle in obj.pose.bones
    before = evaluate(obj)["foot.L"].translation.copy()
    obj.pose.bones[limb.handle].location.z += 0.2
    assert (evaluate(obj)["foot.L"].translation - before).length > 0.05 * obj.data.bones["foot.L"].length
