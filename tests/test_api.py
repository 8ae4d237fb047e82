"""The public Python API (ik_rigger.api): what pipeline scripts use, without the context."""

from __future__ import annotations

from dataclasses import replace

import bpy
import pytest
from helpers import DATA, both_legs, chain_length, evaluate, make_armature, rotation_degrees, same, snapshot
from mathutils import Matrix, Vector

from ik_rigger import api


def test_build_list_snap_and_remove_without_the_context():
    obj = make_armature(both_legs(), mode="OBJECT")
    bpy.context.view_layer.objects.active = None  # the API never reads it
    built = api.build(obj, "shin.L", both_sides=True, pole_parent="HANDLE")
    assert [limb.name for limb in built] == ["shin.L", "shin.R"]
    limb = api.limbs(obj)[0]
    assert limb.chain == ("thigh.L", "shin.L") and limb.extremity == "foot.L" and limb.side == "L"
    assert limb.parts == ("chain", "handle", "stretch", "pole", "pole_line", "ik", "clone")
    assert {"HANDLE", "POLE", "CLONE", "TARGET", "REACH", "POLE_LINE"} == set(limb.bones)
    assert limb.bones == {"HANDLE": "foot_IK.L", "POLE": "shin_IK_pole.L", "CLONE": "foot_IK_clone.L",
                          "POLE_LINE": "shin_IK_pole_line.L", "TARGET": "foot_IK_target.L",
                          "REACH": "thigh_IK_reach.L"}
    assert limb.ik_fk == 1.0 and limb.missing == ()
    assert obj.data.bones["shin_IK_pole.L"].parent.name == "foot_IK.L"
    # Snap: FK takes the IK pose exactly and the switch goes to FK.
    obj.pose.bones["foot_IK.L"].location = (0.0, -0.1, 0.2)
    ik = evaluate(obj)
    changed = api.snap_limb(obj, "foot_IK.L", "FK")
    assert changed == ["thigh.L", "shin.L", "foot.L"]
    assert api.limbs(obj)[0].ik_fk == 0.0
    fk = evaluate(obj)
    length = chain_length(obj, limb.chain)
    for name in changed:
        assert rotation_degrees(ik[name], fk[name]) < 0.01
        assert (ik[name].translation - fk[name].translation).length < 1e-4 * length
    messages = api.remove(obj, "thigh.L")
    assert messages == [] and [limb.name for limb in api.limbs(obj)] == ["shin.R"]


def test_unknown_options_are_refused_with_a_did_you_mean():
    obj = make_armature(both_legs(), mode="OBJECT")
    with pytest.raises(api.RigError, match="unknown build option 'pole_parnet'. Did you mean 'pole_parent'"):
        api.build(obj, "shin.L", pole_parnet="HANDLE")
    assert len(obj.ik_rigger.limbs) == 0
    with pytest.raises(api.RigError, match="'hips': is not part of a limb"):
        api.remove(obj, "hips")


def _legs_with_users_ik_on_the_right() -> bpy.types.Object:
    obj = make_armature(both_legs(), mode="OBJECT")
    users = obj.pose.bones["shin.R"].constraints.new("IK")
    users.name = "User IK"
    return obj


def test_build_found_skips_the_found_limbs_the_build_refuses_and_rigs_the_others():
    """A found limb the build refuses (here the file's own IK constraint) is skipped with the
    build's reason; the other limbs, named or found, are rigged, and they work."""
    obj = _legs_with_users_ik_on_the_right()
    built, refused = api.build_found(obj, [("shin.L", api.options())], [("shin.R", api.options())])
    assert [limb.name for limb in built] == ["shin.L"]
    assert refused == [("shin.R", "already has an IK constraint 'User IK'; delete that constraint, or rig another "
                                  "chain")]
    assert [c.name for c in obj.pose.bones["shin.R"].constraints] == ["User IK"]
    assert {"foot_IK.R", "shin_IK_pole.R"}.isdisjoint(obj.data.bones.keys())
    # The rigged leg follows its handle: the shin's end reaches the IK target the handle carries.
    at_rest = evaluate(obj)["shin.L"]
    handle = obj.pose.bones[built[0].bones["HANDLE"]]
    handle.matrix = Matrix.Translation((0.0, -0.1, 0.25)) @ handle.matrix  # up and forward, within reach
    posed = evaluate(obj)
    length = chain_length(obj, built[0].chain)
    reached = posed["shin.L"].translation + posed["shin.L"].col[1].xyz * obj.data.bones["shin.L"].length
    assert (reached - posed[built[0].bones["TARGET"]].translation).length < 1e-3 * length
    assert rotation_degrees(at_rest, posed["shin.L"]) > 5.0
    # Every found limb refused and nothing named: nothing is built.
    again = _legs_with_users_ik_on_the_right()
    before = snapshot(again)
    assert api.build_found(again, [], [("shin.R", api.options())]) == ([], refused)
    assert same(snapshot(again), before)


def test_build_found_raises_what_no_found_limb_explains():
    """A limb the caller named is never skipped: its refusal is raised, and nothing changes."""
    obj = _legs_with_users_ik_on_the_right()
    before = snapshot(obj)
    with pytest.raises(api.RigError, match="already has an IK constraint 'User IK'") as raised:
        api.build_found(obj, [("shin.R", api.options())], [("shin.L", api.options())])
    assert raised.value.bone == "shin.R"
    assert same(snapshot(obj), before)


def test_auto_rig_plans_a_limb_it_skips_alone_once(monkeypatch):
    """Auto-Rig on two legs, one of which the build refuses: once the build of both is refused, each leg is
    planned alone to tell which (not both together first, as that build just did), then the other is built."""
    from ik_rigger.rig import build

    obj = _legs_with_users_ik_on_the_right()
    planned: list[str] = []
    plan_limb = build.plan_limb
    monkeypatch.setattr(build, "plan_limb", lambda skeleton, last, *rest: planned.append(last)
                        or plan_limb(skeleton, last, *rest))
    skipped: list[tuple[str, str]] = []
    assert [limb.name for limb in api.auto_rig(obj, skipped=skipped)] == ["shin.L"]
    assert [bone for bone, _ in skipped] == ["shin.R"]
    # The build of both, each alone, the build of the left one.
    assert planned == ["shin.L", "shin.R", "shin.L", "shin.R", "shin.L"]


def test_the_bones_followed_read_one_by_one_are_those_read_at_once():
    """Auto-Rig asks which bone each bone follows as detection needs it (``FollowedBones``), the batch reads
    them all at once (``followed_bones``): the same answers, a muted Copy Transforms following nothing."""
    from test_sweep_other_rigs import _game_rig

    from ik_rigger.rig.skeleton import FollowedBones, followed_bones

    obj = _game_rig("DEF-", "")
    obj.pose.bones["DEF-shin.R"].constraints[0].mute = True
    at_once = followed_bones(obj)
    assert at_once == {bone.name: bone.name[4:] for bone in obj.data.bones
                       if bone.name.startswith("DEF-") and bone.name != "DEF-shin.R"}
    one_by_one = FollowedBones(obj)
    assert [one_by_one.get(bone.name) for bone in obj.data.bones] == [at_once.get(bone.name)
                                                                      for bone in obj.data.bones]
    assert "DEF-shin.L" in one_by_one and "DEF-shin.R" not in one_by_one and None not in one_by_one
    assert dict(one_by_one) == at_once and dict(FollowedBones(obj)) == at_once


def test_bake_and_auto_rig_on_motion_capture():
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    bpy.context.scene.frame_set(30)
    knee = evaluate(obj)["mixamorig:LeftLeg"].translation.copy()
    limbs = api.auto_rig(obj)
    assert {"mixamorig:LeftLeg", "mixamorig:RightLeg"} <= {limb.name for limb in limbs}
    baked = api.bake(obj, "IK_TO_FK", bones=["mixamorig:LeftLeg"], switch=True)
    assert baked == {"mixamorig:LeftLeg": 69}
    bpy.context.scene.frame_set(30)
    assert (evaluate(obj)["mixamorig:LeftLeg"].translation - knee).length < 1e-3
    handle = api.limbs(obj)[0].bones["HANDLE"]
    assert obj.pose.bones[handle]["ik_fk"] == 0.0
    obj.pose.bones[handle].location += Vector((0.0, 0.0, 10.0))
    bpy.context.scene.frame_set(30)
    assert (evaluate(obj)["mixamorig:LeftLeg"].translation - knee).length < 1e-3  # FK: the handle moves nothing


def test_upgrade_through_the_api():
    bpy.ops.wm.open_mainfile(filepath=str(DATA / "rigged_by_0.1.0.blend"))
    obj = bpy.data.objects["Hero"]
    assert api.upgrade(obj)
    assert api.limbs(obj)[1].ik_fk == pytest.approx(0.5)
    assert api.upgrade(obj) == []


def test_aim_through_the_api():
    from helpers import set_active_bone

    obj = make_armature([("root", (0, 0, 0), (0, 0.3, 0), None, False),
                         ("neck", (0, 0, 1.5), (0, 0, 1.6), "root", False),
                         ("head", (0, 0, 1.6), (0, 0, 1.85), "neck", True)], mode="OBJECT")
    before = evaluate(obj)
    assert api.add_aim(obj, "HEAD") == ["head"]
    posed = evaluate(obj)
    assert rotation_degrees(before["head"], posed["head"]) < 0.01
    set_active_bone(obj, "head")
    assert api.remove_aim(obj, "head") == []
    with pytest.raises(api.RigError):
        api.remove_aim(obj, "head")


def test_foot_roll_bones_by_role():
    obj = make_armature(both_legs(), mode="OBJECT")
    limb = api.build(obj, "shin.L", foot_roll=True)[0]
    assert {"ROLL", "HEEL", "TOE_PIVOT", "TIP", "TOE_CLONE", "POLE_LINE"} <= set(limb.bones)
    assert limb.parts[:3] == ("chain", "handle", "foot_roll") and "ROLL" in limb.bones


@pytest.mark.parametrize("values", [{}, {"foot_roll": True, "parent_switch": True, "pole_parent": "HANDLE"},
                                    {"max_stretch": 1.0, "use_pole": False, "extremity_mode": "NONE"},
                                    {"distance_limit": "INSIDE", "hinge_joints": True}])
def test_what_a_build_returns_is_what_the_records_say(values):
    """The limbs a build returns (read from its plans) equal those read back from the armature,
    for fresh limbs and for a rebuild that renamed a control meanwhile."""
    obj = make_armature(both_legs(), mode="OBJECT")
    built = api.build(obj, "shin.L", both_sides=True, **values)
    assert [limb.notes for limb in built] and built == [
        replace(limb, notes=returned.notes) for limb, returned in zip(api.limbs(obj), built)]
    obj.pose.bones[built[0].bones["HANDLE"]].name = "Left Foot Control"
    again = api.build(obj, "shin.L", **values)
    assert again[0].bones["HANDLE"] == "Left Foot Control"
    assert again[0] == replace(api.limbs(obj)[0], notes=again[0].notes)


def test_a_rebuild_with_other_parts_returns_what_the_records_say():
    """Parts turned on and off by a rebuild: the returned limb lists what is there afterwards (a rebuild
    keeps the options it is not given)."""
    obj = make_armature(both_legs(), mode="OBJECT")
    api.build(obj, "shin.L")
    kept: dict[str, object] = {}
    for values in ({"use_pole": False, "foot_roll": True}, {"parent_switch": True, "max_stretch": 1.0}, {},
                   {"use_pole": True, "foot_roll": False}):
        again = api.build(obj, "shin.L", **values)[0]
        kept.update(values)
        assert again == replace(api.limbs(obj)[0], notes=again.notes), values
        assert ("POLE" in again.bones) == kept.get("use_pole", True)
        assert ("ROLL" in again.bones) == kept.get("foot_roll", False)
        assert ("SOCKET" in again.bones) == kept.get("parent_switch", False)


ENTRY_POINTS = {
    "auto_rig": (), "build": ("shin.L",), "build_many": ([],), "build_found": ([], []), "limbs": (),
    "remove": ("shin.L",), "snap_limb": ("shin.L", "FK"), "switch_parent": ("shin.L", 0),
    "parent_choices": ("shin.L",), "bake": ("IK_TO_FK",), "plant_feet": (None,), "add_aim": (),
    "remove_aim": ("head",), "upgrade": (), "export": ("character.glb",),
}


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_every_entry_point_refuses_what_is_not_an_armature(name):
    """Before: AttributeError ('Mesh' object has no attribute 'bones') from auto_rig, snap_limb, bake..."""
    mesh = bpy.data.objects.new("Cube", bpy.data.meshes.new("Cube"))
    bpy.context.scene.collection.objects.link(mesh)
    function = getattr(api, name)
    with pytest.raises(api.RigError, match=rf"api\.{name} needs an armature object and was given the mesh 'Cube'\. "
                                           r"Pass the armature object"):
        function(mesh, *ENTRY_POINTS[name])
    with pytest.raises(api.RigError, match=rf"api\.{name} needs an armature object and was given None"):
        function(None, *ENTRY_POINTS[name])
    assert set(ENTRY_POINTS) == {entry for entry in api.__all__ if entry not in ("PARTS", "ROLES", "Limb", "RigError",
                                                                                "options", "is_warning")}


def test_other_objects_keep_their_modes():
    """Before: building took the active mesh out of Edit mode, and left it out."""
    obj = make_armature(both_legs(), mode="OBJECT")
    mesh = bpy.data.objects.new("Body", bpy.data.meshes.new("Body"))
    bpy.context.scene.collection.objects.link(mesh)
    bpy.context.view_layer.objects.active = mesh
    bpy.ops.object.mode_set(mode="EDIT")
    api.build(obj, "shin.L", both_sides=True)
    assert (mesh.mode, obj.mode, bpy.context.view_layer.objects.active) == ("EDIT", "OBJECT", mesh)
    api.remove(obj, "shin.R")
    assert (mesh.mode, obj.mode, bpy.context.view_layer.objects.active) == ("EDIT", "OBJECT", mesh)


def test_removing_a_limb_whose_thigh_was_deleted_by_hand_leaves_no_driver():
    """Before, on Blender 4.2 (which keeps a deleted bone's drivers): thigh.L's ik_stretch driver stayed,
    invalid, reading the removed handle."""
    obj = make_armature(both_legs())
    api.build(obj, "shin.L")
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.remove(obj.data.edit_bones["thigh.L"])
    bpy.ops.object.mode_set(mode="POSE")
    api.remove(obj, "shin.L")
    bpy.context.view_layer.update()
    data = obj.animation_data
    assert data is None or not list(data.drivers), [curve.data_path for curve in data.drivers]
