"""Armatures that already carry someone else's rig: soloed bone collections, a game rig whose deform
bones follow its control bones, a rig Rigify generated. Each limb is rigged harmlessly, or refused
naming the bone and what to do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import bpy
import pytest
from helpers import both_legs, evaluate, make_armature, rigify_generated, rotation_degrees, same, snapshot
from mathutils import Matrix

from ik_rigger import api


def _legs_in_collections(solo: bool) -> bpy.types.Object:
    """Both legs, the leg bones in 'Legs' (soloed with ``solo``), the root and hips in 'Body'."""
    obj = make_armature(both_legs())
    armature = obj.data
    legs, body = armature.collections.new("Legs"), armature.collections.new("Body")
    for bone in armature.bones:
        (legs if "." in bone.name else body).assign(bone)
    legs.is_solo = solo
    return obj


def _shown(obj: bpy.types.Object, bone: str) -> bool:
    return any(collection.is_visible_effectively for collection in obj.data.bones[bone].collections)


def test_controls_show_beside_a_soloed_collection() -> None:
    """With one of the user's bone collections soloed, Blender shows only soloed collections: the
    controls go in it too, so the handles and poles show; the user's collections keep their own solo
    and visibility, and Remove takes the controls' collection away (tests/test_solo_controls.py)."""
    obj = _legs_in_collections(solo=True)
    before = snapshot(obj)
    solos = {collection.name: collection.is_solo for collection in obj.data.collections_all}
    for limb in api.auto_rig(obj):
        for role in ("HANDLE", "POLE"):
            assert _shown(obj, limb.bones[role]), (limb.name, role)
        assert not any(_shown(obj, limb.bones[role]) for role in ("TARGET", "REACH", "CLONE"))  # the mechanism
    assert {name: obj.data.collections_all[name].is_solo for name in solos} == solos
    assert _shown(obj, "shin.L") and not _shown(obj, "hips")
    for limb in api.limbs(obj):
        api.remove(obj, limb.name)
    assert same(snapshot(obj), before)
    assert {collection.name: collection.is_solo for collection in obj.data.collections_all} == solos


def test_controls_are_not_soloed_where_nothing_is() -> None:
    obj = _legs_in_collections(solo=False)
    limb = api.build(obj, "shin.L")[0]
    assert not any(collection.is_solo for collection in obj.data.collections_all)
    assert _shown(obj, limb.bones["HANDLE"])


def _game_rig(deform: str, control: str) -> bpy.types.Object:
    """A game rig: both legs twice, the deform bones (``deform`` before each name) following the control
    bones (``control`` before it) by a Copy Transforms each, as exporters want them."""
    specs = both_legs()
    bones = [(f"{prefix}{name}", head, tail, f"{prefix}{parent}" if parent else None, connected)
             for prefix in (deform, control) for name, head, tail, parent, connected in specs]
    obj = make_armature(bones, mode="OBJECT")
    for name, *_ in specs:
        obj.data.bones[f"{control}{name}"].use_deform = False
        follow = obj.pose.bones[f"{deform}{name}"].constraints.new("COPY_TRANSFORMS")
        follow.target, follow.subtarget = obj, f"{control}{name}"
    return obj


@pytest.mark.parametrize(("deform", "control"), [("", "CTRL_"), ("DEF-", "")])
def test_auto_rig_rigs_the_controls_a_game_rig_s_deform_bones_follow(deform: str, control: str) -> None:
    """Where each deform bone copies the transforms of a control bone, the limb a rigger means is the
    control chain: Auto-Rig rigs it (where it refused the deform legs for their feet's Copy Transforms,
    or skipped both chains as rivals), and the deform bones, their constraints untouched, follow it:
    moving the handle brings the deform foot there and bends the deform knee toward the pole."""
    obj = _game_rig(deform, control)
    before = snapshot(obj)
    notes: list[str] = []
    built = api.auto_rig(obj, notes=notes)
    assert sorted((limb.chain, limb.extremity) for limb in built) == [
        ((f"{control}thigh.{side}", f"{control}shin.{side}"), f"{control}foot.{side}") for side in "LR"]
    assert any(f"'{deform}shin.L'" in note and f"'{control}shin.L'" in note for note in notes), notes
    for limb in built:
        side = limb.name[-1]
        handle = obj.pose.bones[limb.bones["HANDLE"]]
        rested = evaluate(obj)
        handle.matrix = Matrix.Translation((0.0, -0.1, 0.2)) @ rested[handle.name]
        posed = evaluate(obj)
        length = obj.data.bones[f"{deform}shin.{side}"].length
        assert (posed[f"{deform}foot.{side}"].translation - posed[handle.name].translation).length < 1e-4 * length
        assert rotation_degrees(posed[f"{deform}foot.{side}"], posed[handle.name] @ (
            rested[handle.name].inverted() @ rested[f"{deform}foot.{side}"])) < 0.01
        knee, hip = posed[f"{deform}shin.{side}"].translation, posed[f"{deform}thigh.{side}"].translation
        pole = posed[limb.bones["POLE"]].translation
        line = (posed[handle.name].translation - hip).normalized()
        bend, aim = knee - hip, pole - hip
        bend -= line * bend.dot(line)
        aim -= line * aim.dot(line)
        assert bend.length > 0.02 * length and bend.angle(aim) < 0.01, side
        handle.matrix_basis = Matrix.Identity(4)
    for side in "LR":
        follow = obj.pose.bones[f"{deform}shin.{side}"].constraints
        assert [(c.type, c.subtarget) for c in follow] == [("COPY_TRANSFORMS", f"{control}shin.{side}")]
    for limb in built:
        api.remove(obj, limb.name)
    assert same(snapshot(obj), before)


@pytest.fixture(scope="module")
def rigify_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A .blend of Rigify's basic human metarig and the rig Rigify generates from it (``rigify_generated``)."""
    return rigify_generated(tmp_path_factory.mktemp("rigify") / "rigify.blend")


def _rigify_rig(path: Path) -> tuple[bpy.types.Object, bpy.types.Object]:
    """The metarig and the rig of ``rigify_file``, brought into the scene."""
    with bpy.data.libraries.load(str(path)) as (_source, target):
        target.objects = ["metarig", "rig"]
    for item in target.objects:
        bpy.context.scene.collection.objects.link(item)
    metarig, rig = target.objects
    return metarig, rig


def test_a_rig_rigify_generated_is_refused_as_one_and_its_metarig_rigged_beside_it(rigify_file: Path) -> None:
    """Auto-Rig on the generated rig finds its limbs only as ORG- and DEF- bones its own IK/FK drives:
    the refusal says the rig was generated and has its own IK (not to build the limbs one by one), by the
    API and the operator alike, and changes nothing. Its metarig beside it is rigged, the rig untouched."""
    metarig, rig = _rigify_rig(rigify_file)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    before = snapshot(rig)
    skipped: list[tuple[str, str]] = []
    with pytest.raises(api.RigError, match=f"'{rig.name}' is a generated rig.*own IK") as refused:
        api.auto_rig(rig, skipped=skipped)
    assert "one by one" not in str(refused.value)
    assert {bone for bone, _ in skipped} >= {"ORG-shin.L", "ORG-forearm.R"}
    with pytest.raises(RuntimeError, match="is a generated rig"):
        bpy.ops.ik_rigger.auto_rig()
    assert same(snapshot(rig), before)
    assert sorted(limb.name for limb in api.auto_rig(metarig)) == ["forearm.L", "forearm.R", "shin.L", "shin.R"]
    assert same(snapshot(rig), before)


def test_a_game_rig_s_controls_with_their_own_ik_are_skipped_naming_it_and_helpers_are_not_followed() -> None:
    """Where the left leg's controls already carry an IK of the user's, that leg is skipped naming it (the
    right one rigged on its controls); deform bones that follow a generated rig's MCH- helpers are not
    moved onto them: that rig's own controls drive those."""
    obj = _game_rig("", "CTRL_")
    own = obj.pose.bones["CTRL_shin.L"].constraints.new("IK")
    own.target, own.subtarget, own.chain_count = obj, "CTRL_root", 2
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert [limb.chain for limb in built] == [("CTRL_thigh.R", "CTRL_shin.R")]
    assert dict(skipped)["CTRL_shin.L"].startswith("already has an IK constraint 'IK'")
    helped = _game_rig("", "MCH-")
    skipped.clear()
    with pytest.raises(api.RigError, match="is a generated rig"):
        api.auto_rig(helped, skipped=skipped)
    # The deform legs, for their feet's Copy Transforms, and the helpers, as a generated rig's.
    assert {bone for bone, _ in skipped} == {"foot.L", "foot.R", "MCH-shin.L", "MCH-shin.R"}


def _driven_leg(driven: str) -> tuple[bpy.types.Object, bpy.types.FCurve, api.Limb]:
    """Both legs, the bone ``driven``'s X rotation set by a driver of the user's (reading a property on the
    hips), the left leg rigged."""
    obj = make_armature(both_legs())
    bone = obj.pose.bones[driven]
    bone.rotation_mode = "XYZ"
    obj.pose.bones["hips"]["bend"] = 0.3
    driver = bone.driver_add("rotation_euler", 0)
    variable = driver.driver.variables.new()
    variable.targets[0].id, variable.targets[0].data_path = obj, 'pose.bones["hips"]["bend"]'
    driver.driver.type = "AVERAGE"
    return obj, driver, api.build(obj, "shin.L")[0]


@pytest.mark.parametrize("driven", ["shin.L", "foot.L"])
def test_snap_fk_to_ik_is_refused_where_a_driver_sets_a_bone_it_would_turn(driven: str) -> None:
    """A driver of the user's on a chain bone's or the foot's rotation sets it whatever the snap writes:
    Snap FK to IK left the FK leg up to 30 degrees off the IK pose and switched to it, saying nothing.
    It is refused naming the driver and its bone, nothing changed; with the driver muted it lands."""
    obj, driver, limb = _driven_leg(driven)
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    handle.matrix = Matrix.Translation((0.05, -0.15, 0.25)) @ evaluate(obj)[handle.name]
    ik_pose = evaluate(obj)
    bases = {name: obj.pose.bones[name].matrix_basis.copy() for name in ("thigh.L", "shin.L", "foot.L")}
    with pytest.raises(api.RigError, match=f"'{driven}'.*driver.*rotation_euler\\[0\\].*Mute the driver"):
        api.snap_limb(obj, "shin.L", "FK")
    assert handle["ik_fk"] == 1.0
    assert all(obj.pose.bones[name].matrix_basis == basis for name, basis in bases.items())
    driver.mute = True
    api.snap_limb(obj, "shin.L", "FK")
    fk_pose = evaluate(obj)
    length = obj.data.bones["shin.L"].length
    for name in ("thigh.L", "shin.L", "foot.L"):
        assert rotation_degrees(fk_pose[name], ik_pose[name]) < 0.01, name
        assert (fk_pose[name].translation - ik_pose[name].translation).length < 1e-4 * length, name


@pytest.mark.parametrize("driven", ["shin.L", "foot.L"])
def test_bake_ik_to_fk_is_refused_where_a_driver_sets_a_bone_it_would_key(driven: str) -> None:
    """Keys baked onto a channel a driver sets do not play: Bake IK to FK played the leg 30 degrees off
    what the IK showed, saying nothing. It is refused naming the driver, before any key is written."""
    obj, driver, limb = _driven_leg(driven)
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    for frame, height in ((1, 0.0), (10, 0.3)):
        handle.location = (0.0, 0.0, height)
        handle.keyframe_insert("location", frame=frame)
    before = snapshot(obj)
    with pytest.raises(api.RigError, match=f"'{driven}'.*rotation_euler\\[0\\] is set by a driver.*Mute the driver"):
        api.bake(obj, "IK_TO_FK", range(1, 11), switch=True)
    assert same(snapshot(obj), before) and handle["ik_fk"] == 1.0
    driver.mute = True
    assert api.bake(obj, "IK_TO_FK", range(1, 11), switch=True) == {"shin.L": 10}


def test_remove_warns_where_a_driver_sets_a_bone_the_kept_motion_is_keyed_on() -> None:
    """Remove keys what the IK played onto the chain: where a driver sets the shin's rotation those keys do
    not play, and Remove said it kept the motion. It warns, naming the driver's bone and channel."""
    obj, driver, limb = _driven_leg("shin.L")
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    for frame, height in ((1, 0.0), (10, 0.3)):
        handle.location = (0.0, 0.0, height)
        handle.keyframe_insert("location", frame=frame)
    warned = [message for message in api.remove(obj, "shin.L") if api.is_warning(message)]
    assert len(warned) == 1 and "'shin.L''s rotation_euler[0] is set by a driver" in warned[0], warned


def test_remove_warns_of_the_user_s_b_bone_handles_and_drivers_on_the_bones_it_deletes() -> None:
    """A B-bone chain whose shin eases into the IK handle (its end handle set to it), a driver of the user's
    reading the handle's height: Remove deletes the handle, so Blender clears that B-bone handle and leaves
    the driver reading nothing, and Remove said nothing. It warns of each, naming it; the user's own B-bone
    settings stay as they were, and a limb without such readers is removed without a warning."""
    obj = make_armature(both_legs())
    limb = api.build(obj, "shin.L")[0]
    handle = limb.bones["HANDLE"]
    bpy.ops.object.mode_set(mode="EDIT")
    shin = obj.data.edit_bones["shin.L"]
    shin.bbone_segments, shin.bbone_handle_type_end = 4, "ABSOLUTE"
    shin.bbone_custom_handle_end = obj.data.edit_bones[handle]
    bpy.ops.object.mode_set(mode="POSE")
    obj.pose.bones["hips"]["reach"] = 0.0
    driver = obj.pose.bones["hips"].driver_add('["reach"]').driver
    variable = driver.variables.new()
    variable.type = "TRANSFORMS"
    variable.targets[0].id, variable.targets[0].bone_target = obj, handle
    warned = [message for message in api.remove(obj, "shin.L") if api.is_warning(message)]
    assert len(warned) == 2, warned
    assert f"'shin.L''s B-Bone end handle was '{handle}'" in warned[0]
    assert f"""driver of 'pose.bones["hips"]["reach"]' on 'Rig' reads '{handle}'""" in warned[1]
    assert obj.data.bones["shin.L"].bbone_segments == 4
    api.build(obj, "shin.R")
    assert not [message for message in api.remove(obj, "shin.R") if api.is_warning(message)]


def _b_bones(obj: bpy.types.Object) -> None:
    bpy.ops.object.mode_set(mode="EDIT")
    bones = obj.data.edit_bones
    for name in ("thigh.L", "shin.L"):
        bones[name].bbone_segments, bones[name].bbone_easeout = 4, 0.5
    bones["shin.L"].bbone_handle_type_start, bones["shin.L"].bbone_custom_handle_start = "ABSOLUTE", bones["thigh.L"]
    bones["shin.L"].bbone_handle_type_end, bones["shin.L"].bbone_custom_handle_end = "TANGENT", bones["foot.L"]
    bpy.ops.object.mode_set(mode="POSE")
    obj.pose.bones["shin.L"].bbone_curveinx = 0.1


def _locked(obj: bpy.types.Object) -> None:
    for name in ("thigh.L", "shin.L", "foot.L"):
        bone = obj.pose.bones[name]
        bone.lock_location = bone.lock_scale = (True, True, True)
        bone.lock_rotation = (True, False, True)
        bone.lock_rotation_w = True


def _inherit_scale(mode: str):
    def given(obj: bpy.types.Object) -> None:
        for name in ("shin.L", "foot.L"):
            obj.data.bones[name].inherit_scale = mode
        obj.pose.bones["hips"].scale = (1.2, 1.2, 1.2)
    return given


def _collection_hidden(obj: bpy.types.Object) -> None:
    legs = obj.data.collections.new("Legs")
    for name in ("thigh.L", "shin.L", "foot.L", "toe.L"):
        legs.assign(obj.data.bones[name])
    legs.is_visible = False


def _child_of(obj: bpy.types.Object) -> None:
    mover = bpy.data.objects.new("Mover", None)
    bpy.context.scene.collection.objects.link(mover)
    mover.location, mover.rotation_euler, mover.scale = (1.0, 2.0, 0.5), (0.3, 0.1, 0.7), (1.5, 1.5, 1.5)
    obj.constraints.new("CHILD_OF").target = mover


_SETTINGS = ("bbone_segments", "bbone_easeout", "bbone_handle_type_start", "bbone_handle_type_end", "inherit_scale",
             "use_inherit_rotation")
_POSE_SETTINGS = ("lock_location", "lock_rotation", "lock_rotation_w", "lock_scale", "bbone_curveinx")


def _settings(obj: bpy.types.Object) -> dict:
    handles = {name: (bone.bbone_custom_handle_start, bone.bbone_custom_handle_end)
               for name, bone in obj.data.bones.items()}
    return {name: ([getattr(bone, setting) for setting in _SETTINGS],
                   [tuple(value) if hasattr(value := getattr(obj.pose.bones[name], setting), "__len__") else value
                    for setting in _POSE_SETTINGS],
                   tuple(handle.name if handle else None for handle in handles[name]))
            for name, bone in obj.data.bones.items()}


@pytest.mark.parametrize("layout", [_b_bones, _locked, _inherit_scale("NONE"), _inherit_scale("ALIGNED"),
                                    _collection_hidden, _child_of],
                         ids=["b-bones", "locked", "inherit-scale-none", "inherit-scale-aligned",
                              "collection-hidden", "object-child-of"])
def test_a_leg_with_the_user_s_own_settings_is_rigged_snapped_and_removed_as_it_was(layout) -> None:
    """Already true, kept so: a leg of B-bones with handles of their own, one with its transforms locked,
    one not inheriting scale under scaled hips, one in a hidden collection, an armature a Child Of carries.
    The handle brings the foot and bends the knee toward the pole, Snap FK to IK lands, and Remove gives
    back every bone setting as it was."""
    obj = make_armature(both_legs())
    layout(obj)
    bpy.context.view_layer.update()
    before, settings = snapshot(obj), _settings(obj)
    limb = api.build(obj, "shin.L")[0]
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    handle.matrix = Matrix.Translation((0.05, -0.15, 0.25)) @ evaluate(obj)[handle.name]
    ik_pose = evaluate(obj)
    length = obj.data.bones["thigh.L"].length + obj.data.bones["shin.L"].length
    hip, knee, ankle = (ik_pose[name].translation for name in ("thigh.L", "shin.L", "foot.L"))
    assert (ankle - ik_pose[handle.name].translation).length < 1e-4 * length
    line = (ankle - hip).normalized()
    bend, aim = knee - hip, ik_pose[limb.bones["POLE"]].translation - hip
    assert (bend - line * bend.dot(line)).angle(aim - line * aim.dot(line)) < 0.01
    api.snap_limb(obj, "shin.L", "FK")
    fk_pose = evaluate(obj)
    for name in ("thigh.L", "shin.L", "foot.L"):
        assert (fk_pose[name].translation - ik_pose[name].translation).length < 1e-4 * length, name
        assert rotation_degrees(fk_pose[name], ik_pose[name]) < 0.01, name
    for name in ("thigh.L", "shin.L", "foot.L"):
        obj.pose.bones[name].matrix_basis = Matrix.Identity(4)
    api.remove(obj, "shin.L")
    assert same(snapshot(obj), before) and _settings(obj) == settings


def test_build_on_a_rigify_rig_s_fk_controls_ends_at_the_fk_foot_not_its_helper(rigify_file: Path) -> None:
    """Build IK Limb on Rigify's FK shin (the one chain of its leg that no constraint drives): the foot it
    ends at is the FK foot control, not the MCH- helper Rigify puts between it and the shin. The handle
    turns the FK foot and brings it along, and Remove gives the rig back as it was."""
    _, rig = _rigify_rig(rigify_file)
    before = snapshot(rig)
    limb = api.build(rig, "shin_fk.L")[0]
    assert (limb.chain, limb.extremity) == (("thigh_fk.L", "shin_fk.L"), "foot_fk.L")
    handle = rig.pose.bones[limb.bones["HANDLE"]]
    rested = evaluate(rig)
    handle.matrix = Matrix.Translation((0.0, -0.1, 0.15)) @ Matrix.Rotation(0.4, 4, "X") @ rested[handle.name]
    posed = evaluate(rig)
    length = rig.data.bones["shin_fk.L"].length
    assert (posed["foot_fk.L"].translation - posed[handle.name].translation).length < 1e-3 * length
    assert rotation_degrees(posed["foot_fk.L"] @ rested["foot_fk.L"].inverted(),
                            posed[handle.name] @ rested[handle.name].inverted()) < 0.01
    handle.matrix_basis = Matrix.Identity(4)
    api.remove(rig, "shin_fk.L")
    assert same(snapshot(rig), before)


def _vroid_with_spring_bones() -> bpy.types.Object:
    """A VRoid body (J_Bip_ bones) with the spring bones its VRM add-on moves (J_Sec_: a skirt hanging from
    the hips, the bust, sleeves on the upper arm and by the wrist)."""
    bones: list = [("Root", (0, 0, 0), (0, 0.1, 0), None), ("J_Bip_C_Hips", (0, 0, 1.0), (0, 0, 1.1), "Root"),
                   ("J_Bip_C_Spine", (0, 0, 1.1), (0, 0, 1.3), "J_Bip_C_Hips"),
                   ("J_Bip_C_UpperChest", (0, 0, 1.3), (0, 0, 1.45), "J_Bip_C_Spine")]
    for side, x in (("L", 1.0), ("R", -1.0)):
        def at(*point: float, flip: float = x) -> tuple[float, float, float]:
            return (point[0] * flip, point[1], point[2])
        bones += [
            (f"J_Bip_{side}_UpperLeg", at(0.1, 0, 1.0), at(0.1, -0.02, 0.55), "J_Bip_C_Hips"),
            (f"J_Bip_{side}_LowerLeg", at(0.1, -0.02, 0.55), at(0.1, 0, 0.1), f"J_Bip_{side}_UpperLeg"),
            (f"J_Bip_{side}_Foot", at(0.1, 0, 0.1), at(0.1, -0.12, 0.02), f"J_Bip_{side}_LowerLeg"),
            (f"J_Bip_{side}_Shoulder", at(0.03, 0, 1.42), at(0.15, 0, 1.42), "J_Bip_C_UpperChest"),
            (f"J_Bip_{side}_UpperArm", at(0.15, 0, 1.42), at(0.42, 0.02, 1.42), f"J_Bip_{side}_Shoulder"),
            (f"J_Bip_{side}_LowerArm", at(0.42, 0.02, 1.42), at(0.68, 0, 1.42), f"J_Bip_{side}_UpperArm"),
            (f"J_Bip_{side}_Hand", at(0.68, 0, 1.42), at(0.76, 0, 1.42), f"J_Bip_{side}_LowerArm"),
            (f"J_Sec_{side}_Bust1", at(0.08, -0.05, 1.3), at(0.08, -0.1, 1.3), "J_Bip_C_UpperChest"),
            (f"J_Sec_{side}_TopsUpperArmInside", at(0.2, 0, 1.4), at(0.4, 0, 1.4), f"J_Bip_{side}_UpperArm"),
            (f"J_Sec_{side}_TopsLowerArmCuff", at(0.66, 0, 1.42), at(0.7, 0, 1.38), f"J_Bip_{side}_LowerArm")]
        bones += [(f"J_Sec_{side}_SkirtBack{row}_01", at(0.08, 0.05, 1.0 - 0.2 * row), at(0.08, 0.06, 0.8 - 0.2 * row),
                   f"J_Sec_{side}_SkirtBack{row - 1}_01" if row else "J_Bip_C_Hips") for row in range(3)]
    return make_armature([(name, head, tail, parent, False) for name, head, tail, parent in bones])


def test_a_vroid_body_s_spring_bones_are_no_limbs_and_ride_along_untouched() -> None:
    """Already true, kept so: the skirt, bust and sleeve spring bones are neither limbs nor a hand or foot;
    Auto-Rig rigs the legs and arms to the feet and hands, the spring bones keep their parents and get no
    constraint, and the hand's handle brings the hand, not the sleeve by the wrist."""
    obj = _vroid_with_spring_bones()
    springs = {bone.name: bone.parent.name for bone in obj.data.bones if bone.name.startswith("J_Sec_")}
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert sorted((limb.chain[-1], limb.extremity) for limb in built) == sorted(
        (f"J_Bip_{side}_Lower{segment}", f"J_Bip_{side}_{end}") for side in "LR"
        for segment, end in (("Leg", "Foot"), ("Arm", "Hand")))
    assert skipped == []
    assert {name: obj.data.bones[name].parent.name for name in springs} == springs
    assert not any(obj.pose.bones[name].constraints for name in springs)
    arm = next(limb for limb in built if limb.name == "J_Bip_L_LowerArm")
    handle = obj.pose.bones[arm.bones["HANDLE"]]
    rested = evaluate(obj)
    handle.matrix = Matrix.Translation((-0.1, -0.1, -0.1)) @ rested[handle.name]
    posed = evaluate(obj)
    length = obj.data.bones["J_Bip_L_LowerArm"].length
    assert (posed["J_Bip_L_Hand"].translation - posed[handle.name].translation).length < 1e-4 * length


_METARIG = """
import json
import os
import sys
import bpy
import addon_utils
sys.path.insert(0, sys.argv[-1])
import ik_rigger
from ik_rigger import api
bpy.ops.wm.read_factory_settings(use_empty=True)
ik_rigger.register()
addon_utils.enable("rigify", default_set=True)
bpy.ops.object.armature_basic_human_metarig_add()
said = {limb.name: list(limb.notes) for limb in api.auto_rig(bpy.context.active_object)}
bare = bpy.data.objects.new("Bare", bpy.data.armatures.new("Bare"))
bpy.context.scene.collection.objects.link(bare)
bpy.context.view_layer.objects.active = bare
bpy.ops.object.mode_set(mode="EDIT")
for name, head, tail, parent in (("hips", (0, 0, 1), (0, 0, 1.1), None),
                                 ("thigh.L", (0.1, 0, 1), (0.1, -0.05, 0.55), "hips"),
                                 ("shin.L", (0.1, -0.05, 0.55), (0.1, 0, 0.1), "thigh.L")):
    bone = bare.data.edit_bones.new(name)
    bone.head, bone.tail = head, tail
    bone.parent = bare.data.edit_bones.get(parent or "")
bpy.ops.object.mode_set(mode="POSE")
said["bare"] = [note for note in api.build(bare, "shin.L")[0].notes if "Rigify" in note]
print(json.dumps(said))
sys.stdout.flush()
os._exit(0)  # bpy 4.2 as a module crashes in its exit cleanup once an add-on was registered (conftest.py)
"""


def test_rigging_a_rigify_metarig_notes_that_generate_rig_would_copy_the_rig() -> None:
    """Rigify's Generate Rig copies every bone and constraint of a metarig into the rig it makes: generated
    after Auto-Rig on the metarig, the rig's ORG-shin.L carried IK Rigger's IK beside Rigify's own IK/FK,
    and nothing had said so. Each limb of a metarig notes it, naming its Rigify type (a note, not a warning:
    rigging a metarig is fine, generating from it afterwards is not); a limb of an armature that is no
    metarig does not. Run in a Blender of its own, Rigify enabled there."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", _METARIG, str(root)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(said) == ["bare", "forearm.L", "forearm.R", "shin.L", "shin.R"]
    for limb in ("shin.L", "forearm.R"):
        kind = "limbs.leg" if limb.startswith("shin") else "limbs.arm"
        assert [note for note in said[limb] if f"a Rigify metarig's '{kind}': Generate Rig would copy" in note
                and not api.is_warning(note)], said
    assert said["bare"] == []
