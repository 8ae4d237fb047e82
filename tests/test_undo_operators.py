"""Undo and redo after every IK Rigger operator, as an animator presses Ctrl+Z and Ctrl+Shift+Z: each operator
is run as a button runs it (its own undo step), then undone (the file exactly as before: rest pose, evaluated pose
on several frames, constraints, drivers, keys, the limbs' records, bone collections, selection, active object and
mode), then redone (exactly its result, a rig that snaps); from Pose, Object and Edit mode, with another armature
posed beside it. An operator that refuses pushes no step: Ctrl+Z then undoes the user's previous one."""

from __future__ import annotations

import bpy
import pytest
from helpers import (
    DATA,
    all_fcurves,
    both_legs,
    chain_length,
    evaluate,
    keys_by_curve,
    leg_bones,
    make_armature,
    rotation_degrees,
    same,
    set_active_bone,
    snapshot,
)
from mathutils import Euler, Matrix
from test_ui import draw

from ik_rigger import api, ui
from ik_rigger.parts.soft_ik import SOFT_IK
from ik_rigger.parts.stretch import STRETCH
from ik_rigger.rig.aim import add_aim
from ik_rigger.rig.selection import select_only, selected_bones

RIG = "Rig"
FRAMES = (1, 6, 12)
HEAD = [("neck", (0, 0, 1.3), (0, 0, 1.45), "hips", False), ("head", (0, 0, 1.45), (0, 0, 1.7), "neck", True),
        ("eye.L", (0.04, -0.08, 1.55), (0.04, -0.1, 1.55), "head", False),
        ("eye.R", (-0.04, -0.08, 1.55), (-0.04, -0.1, 1.55), "head", False)]


def _flat(matrix) -> tuple[float, ...]:
    return tuple(value for row in matrix for value in row)


def _constraints(obj: bpy.types.Object) -> dict:
    found = {}
    for pose_bone in obj.pose.bones:
        for constraint in pose_bone.constraints:
            found[(pose_bone.name, constraint.name)] = (
                constraint.type, constraint.influence, constraint.mute,
                *(getattr(getattr(constraint, name, None), "name", getattr(constraint, name, None))
                  for name in ("target", "subtarget", "pole_target", "pole_subtarget", "pole_angle", "chain_count")))
    return found


def _drivers(obj: bpy.types.Object) -> tuple:
    data = obj.animation_data
    if data is None:
        return ()
    return tuple(sorted((curve.data_path, curve.array_index, curve.driver.expression,
                         tuple((variable.name, *((target.id.name if target.id else None, target.data_path,
                                                  target.bone_target) for target in variable.targets))
                               for variable in curve.driver.variables)) for curve in data.drivers))


def state(name: str = RIG, frames: tuple[int, ...] = FRAMES) -> dict:
    """Everything of the file an animator would see change about the armature ``name``, the evaluated pose on
    ``frames`` included (the frame shown is set back); in Edit mode the edit bones stand for the rest pose and
    the pose is not read."""
    obj = bpy.data.objects[name]
    context = bpy.context
    scene = context.scene
    editing = obj.mode == "EDIT"
    found = {
        "snapshot": snapshot(obj), "constraints": _constraints(obj), "drivers": _drivers(obj),
        "keys": keys_by_curve(all_fcurves(obj)),
        "limbs": [(limb.name, limb.chain, tuple(sorted(limb.bones.items())), limb.ik_fk) for limb in api.limbs(obj)]
        if not editing else len(obj.ik_rigger.limbs),
        "records": (obj.ik_rigger.version, obj.ik_rigger.active_limb_index, obj.ik_rigger.pivot_saved,
                    obj.ik_rigger.saved_pivot, obj.ik_rigger.saved_active,
                    [item.name for item in obj.ik_rigger.saved_selection],
                    [repr(limb.to_options()) for limb in obj.ik_rigger.limbs]),
        "collections": {collection.name: (collection.is_visible, None if editing else
                                          tuple(sorted(bone.name for bone in collection.bones)))
                        for collection in obj.data.collections_all},
        "selected": selected_bones(obj) if not editing else None,
        "active bone": obj.data.bones.active.name if obj.data.bones.active else None,
        "objects": {item.name: (item.mode, item.select_get(), _flat(item.matrix_world)) for item in scene.objects},
        "active": context.view_layer.objects.active.name if context.view_layer.objects.active else None,
        "mode": context.mode,
        "actions": sorted((action.name, action.users) for action in bpy.data.actions),
        "scenes": sorted(item.name for item in bpy.data.scenes),
        "pivot": scene.tool_settings.transform_pivot_point,
        "frame": scene.frame_current,
    }
    if editing:
        del found["snapshot"]["bones"]  # as Edit mode was entered: the edit bones below are what the user sees
        found["edit bones"] = {bone.name: (tuple(bone.head), tuple(bone.tail), bone.roll,
                                           bone.parent.name if bone.parent else None, bone.select)
                               for bone in obj.data.edit_bones}
        found["edit active"] = obj.data.edit_bones.active.name if obj.data.edit_bones.active else None
        return found
    shown = scene.frame_current
    found["pose"] = {name: _flat(matrix) for name, matrix in evaluate(obj).items()}
    for frame in frames:
        scene.frame_set(frame)
        found[f"pose {frame}"] = {name: _flat(obj.matrix_world @ matrix) for name, matrix in evaluate(obj).items()}
    scene.frame_set(shown)
    return found


def differences(a: dict, b: dict, tolerance: float) -> list[str]:
    return [key for key in a.keys() | b.keys() if not same(a.get(key), b.get(key), tolerance)]


def tolerance(name: str = RIG) -> float:
    """A hundred-thousandth of the armature's longest bone."""
    return 1e-5 * max(bone.length for bone in bpy.data.objects[name].data.bones)


def undone_and_redone(run, *, changes: bool = True, not_undone: tuple[str, ...] = (), name: str = RIG) -> dict:
    """Push the user's step, run ``run`` (one operator as a button runs it), undo, redo: the file as before
    after the undo (but what Blender's undo leaves as it is, ``not_undone``), as after the operator after
    the redo. The state after the operator."""
    before = state(name)
    bpy.ops.ed.undo_push(message="the user's last step")
    assert run() == {"FINISHED"}
    after = state(name)
    assert not changes or differences(after, before, tolerance(name))
    bpy.ops.ed.undo()
    assert differences(state(name), before, tolerance(name)) == list(not_undone)
    bpy.ops.ed.redo()
    assert differences(state(name), after, tolerance(name)) == []
    return after


def snaps(obj: bpy.types.Object | None = None) -> None:
    """The first limb's rig plays its FK pose through IK after Snap IK to FK: the chain shows the pose."""
    obj = obj or bpy.data.objects[RIG]
    if obj.mode == "EDIT":
        bpy.ops.object.mode_set(mode="POSE")
    limb = api.limbs(obj)[0]
    obj.pose.bones[limb.bones["HANDLE"]]["ik_fk"] = 0.0
    for name, turn in zip(limb.chain, [(0.4, 0.1, 0.05), (-0.6, 0.0, 0.0), (0.2, 0.1, 0.0)]):
        obj.pose.bones[name].matrix_basis = Euler(turn).to_matrix().to_4x4()
    fk = evaluate(obj)
    api.snap_limb(obj, limb.name, "IK")
    shown = evaluate(obj)
    length = chain_length(obj, limb.chain[:2])
    for name in limb.chain:
        assert (shown[name].translation - fk[name].translation).length <= 1e-4 * length
        assert rotation_degrees(shown[name], fk[name]) <= 0.01


def character(rigged: bool = True, head: bool = False, aimed: bool = False, keyed: bool = True,
              autokey: bool = False, mode: str = "POSE", **options) -> bpy.types.Object:
    """Two legs (a head and eyes with ``head``, aimed with ``aimed``), both rigged from shin.L unless not
    ``rigged``, the left handle keyed on two frames unless not ``keyed``, a mesh to stand on and another
    armature beside it, left in ``mode``; Blender's auto-keying on with ``autokey``."""
    ground = bpy.data.objects.new("Ground", bpy.data.meshes.new("Ground"))
    ground.data.from_pydata([(-5, -5, -0.02), (5, -5, -0.02), (5, 5, -0.02), (-5, 5, -0.02)], [], [(0, 1, 2, 3)])
    bpy.context.scene.collection.objects.link(ground)
    make_armature(leg_bones("L", 1.5), name="Other", mode="OBJECT").location = (2.0, 0.0, 0.0)
    obj = make_armature(both_legs() + (HEAD if head or aimed else []), name=RIG)
    if aimed:
        add_aim(obj, "EYES")
    set_active_bone(obj, "shin.L")
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = autokey
    if rigged:
        assert bpy.ops.ik_rigger.build_ik(both_sides=True, **options) == {"FINISHED"}
    if rigged and keyed:
        handle = obj.pose.bones[api.limbs(obj)[0].bones["HANDLE"]]
        for frame, height in ((1, 0.0), (12, 0.2)):
            handle.location = (0.0, 0.0, height)
            handle.keyframe_insert("location", frame=frame)
        bpy.context.scene.frame_set(6)
    select_only(obj, ["shin.L"], "shin.L")
    if mode != "POSE":
        bpy.ops.object.mode_set(mode=mode)
    return obj


def button(name: str, **properties):
    """The operator ``ik_rigger.name`` as a button runs it: with its own undo step (a script's call has none)."""
    return lambda: getattr(bpy.ops.ik_rigger, name)("EXEC_DEFAULT", True, **properties)


# (the case's name, the character's keywords, the operator and its properties)
CASES = [
    ("auto-rig", {"rigged": False}, "auto_rig", {}),
    ("auto-rig, bones turned", {"rigged": False}, "auto_rig", {"fix_orientation": True}),
    ("build both sides", {"rigged": False}, "build_ik", {"both_sides": True}),
    ("build again with soft IK and stretch", {}, "build_ik", {"soft_ik": 0.2, "max_stretch": 1.2}),
    ("remove", {}, "remove_ik", {}),
    ("remove dropping the motion", {}, "remove_ik", {"keep_motion": False}),
    ("rebuild", {}, "rebuild_limb", {}),
    ("snap FK to IK and key", {}, "snap_fk_to_ik", {"keyframe": True}),
    ("snap IK to FK and key", {}, "snap_ik_to_fk", {"keyframe": True}),
    ("bake FK to IK", {}, "bake", {"direction": "FK_TO_IK", "frame_start": 1, "frame_end": 12}),
    ("bake IK to FK, the other side cleared", {}, "bake", {"direction": "IK_TO_FK", "frame_start": 1,
                                                           "frame_end": 12, "clear_other": True}),
    ("snap FK to IK, auto-keying", {"autokey": True}, "snap_fk_to_ik", {}),
    ("bake onto a character without motion", {"keyed": False}, "bake", {"direction": "FK_TO_IK", "frame_start": 1,
                                                                         "frame_end": 12}),
    ("plant feet", {}, "plant_feet", {"ground": "Ground", "keyframe": True}),
    ("plant feet, auto-keying", {"autokey": True}, "plant_feet", {"ground": "Ground"}),
    ("plant feet over the range", {}, "plant_feet", {"ground": "Ground", "frames": "RANGE", "frame_start": 1,
                                                     "frame_end": 12}),
    ("switch parent", {"parent_switch": True}, "switch_parent", {"parent": 1, "keyframe": True}),
    ("aim", {"head": True}, "add_aim", {"part": "EYES"}),
    ("aim removed", {"aimed": True}, "remove_aim", {"bone": "eye.L"}),
    ("FK pivot", {}, "fk_pivot", {}),
    ("select the chain", {}, "select_limb_bones", {"part": "CHAIN"}),
    ("automatic pole angle", {}, "reset_pole_angle", {}),
    ("add a chain", {"rigged": False}, "add_chain", {"base_name": "tail"}),
]


@pytest.mark.parametrize(("character_options", "name", "properties"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_undo_gives_back_the_file_and_redo_the_result_in_pose_mode(character_options, name, properties):
    obj = character(**character_options)
    if name == "reset_pole_angle":
        obj.pose.bones["shin.L"].constraints[0].pole_angle += 0.3  # tuned by hand, so the reset changes it
    keys = keys_by_curve(all_fcurves(obj))
    # Rebuilding an intact limb changes nothing. Blender keeps its tool settings through undo, the pivot point
    # among them: FK Pivot's undone gives back the selection, and the pivot stays.
    after = undone_and_redone(button(name, **properties), changes=name != "rebuild_limb",
                              not_undone=("pivot",) if name == "fk_pivot" else ())
    if character_options.get("autokey") or properties.get("keyframe") or name == "bake":
        assert after["keys"] != keys
    if name not in {"remove_ik", "add_chain", "fk_pivot", "select_limb_bones", "remove_aim"}:
        snaps()


OBJECT_MODE = [case for case in CASES if case[2] in {"auto_rig", "snap_ik_to_fk", "bake", "plant_feet",
                                                      "switch_parent"}]


@pytest.mark.parametrize(("character_options", "name", "properties"),
                         [case[1:] for case in OBJECT_MODE], ids=[case[0] for case in OBJECT_MODE])
def test_undo_and_redo_in_object_mode(character_options, name, properties):
    character(mode="OBJECT", **character_options)
    bpy.data.objects["Ground"].select_set(True)  # selected with the armature, which is active
    undone_and_redone(button(name, **properties))
    assert bpy.data.objects[RIG].mode == "OBJECT"
    snaps()


EDIT_MODE = [case for case in CASES if case[2] in {"auto_rig", "build_ik", "remove_ik", "rebuild_limb", "add_aim",
                                                    "remove_aim", "reset_pole_angle", "add_chain"}]


@pytest.mark.parametrize(("character_options", "name", "properties"),
                         [case[1:] for case in EDIT_MODE], ids=[case[0] for case in EDIT_MODE])
def test_undo_and_redo_in_edit_mode(character_options, name, properties):
    obj = character(**character_options)
    if name == "reset_pole_angle":
        obj.pose.bones["shin.L"].constraints[0].pole_angle += 0.3
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.active = obj.data.edit_bones["shin.L"]
    undone_and_redone(button(name, **properties), changes=name != "rebuild_limb")
    assert bpy.context.mode == "EDIT_ARMATURE"
    if name not in {"remove_ik", "add_chain", "remove_aim"}:
        snaps()


def test_the_next_operator_after_an_undo_works_on_either_armature():
    obj = character(rigged=False)
    bpy.ops.ed.undo_push(message="the user's last step")
    assert button("auto_rig")() == {"FINISHED"}
    bpy.ops.ed.undo()
    obj = bpy.data.objects[RIG]  # undo gives Blender's data anew
    assert not obj.ik_rigger.limbs
    set_active_bone(obj, "shin.L")
    assert button("build_ik", both_sides=True, foot_roll=True)() == {"FINISHED"}
    snaps()
    assert button("remove_ik")() == {"FINISHED"}
    bpy.ops.ed.undo()
    bpy.ops.object.mode_set(mode="OBJECT")
    other = bpy.data.objects["Other"]
    bpy.context.view_layer.objects.active = other
    bpy.ops.object.mode_set(mode="POSE")
    set_active_bone(other, "shin.L")
    assert button("build_ik")() == {"FINISHED"}
    snaps(other)
    assert [limb.name for limb in api.limbs(other)] == ["shin.L"]
    assert len(api.limbs(bpy.data.objects[RIG])) == 2


def test_two_armatures_in_pose_mode_undo_and_redo_a_build_of_the_active_one():
    character(rigged=False)
    other = bpy.data.objects["Other"]
    other.select_set(True)
    bpy.context.view_layer.objects.active = other
    bpy.ops.object.mode_set(mode="POSE")
    bpy.context.view_layer.objects.active = bpy.data.objects[RIG]
    other_before = snapshot(other)
    undone_and_redone(button("build_ik", both_sides=True))
    assert same(snapshot(bpy.data.objects["Other"]), other_before)
    assert bpy.data.objects["Other"].mode == "POSE"
    snaps()


def _user_step() -> dict:
    """The user's last step, pushed: the hips moved. What the file was before it."""
    before = state()
    bpy.ops.ed.undo_push(message="before the user's step")
    bpy.data.objects[RIG].pose.bones["hips"].location = (0.0, 0.05, -0.1)
    bpy.ops.ed.undo_push(message="the user's step")
    return before


# (the case's name, the character's keywords, the operator and its properties, what the refusal says)
REFUSALS = [
    ("sides meeting", {"rigged": False}, "build_ik", {"chain_length": 3, "both_sides": True}, "both limbs"),
    ("no pole to select", {"use_pole": False}, "select_limb_bones", {"part": "POLE"}, "no pole"),
    ("an empty frame range", {}, "bake", {"frame_start": 9, "frame_end": 2}, "empty"),
    ("a ground not in the file", {}, "plant_feet", {"ground": "Nowhere"}, "Nowhere"),
    ("a parent not there", {"parent_switch": True}, "switch_parent", {"parent": 7}, "7"),
    ("no limb named so", {}, "rebuild_limb", {"limb": "tail"}, "tail"),
    ("FK pivot without a handle", {}, "fk_pivot", {}, "handle is gone"),
]


@pytest.mark.parametrize(("character_options", "name", "properties", "says"),
                         [case[1:] for case in REFUSALS], ids=[case[0] for case in REFUSALS])
def test_a_refusal_pushes_no_step_so_undo_takes_back_the_users_last_one(character_options, name, properties, says):
    obj = character(**character_options)
    if name == "fk_pivot":  # the user deleted the limb's handle
        handle = api.limbs(obj)[0].bones["HANDLE"]
        bpy.ops.object.mode_set(mode="EDIT")
        obj.data.edit_bones.remove(obj.data.edit_bones[handle])
        bpy.ops.object.mode_set(mode="POSE")
        select_only(obj, ["shin.L", "foot.L"], "shin.L")
    before = _user_step()
    moved = state()
    with pytest.raises(RuntimeError, match=says):
        button(name, **properties)()
    assert differences(state(), moved, tolerance()) == []
    bpy.ops.ed.undo()
    assert differences(state(), before, tolerance()) == []


def test_a_refusal_in_edit_mode_pushes_no_step():
    obj = character(rigged=False, mode="EDIT")
    obj.data.edit_bones.active = obj.data.edit_bones["shin.L"]
    bpy.ops.ed.undo_push(message="before the user's step")
    before = state()
    obj.data.edit_bones["toe.L"].tail.z += 0.05
    bpy.ops.ed.undo_push(message="the user's step")
    moved = state()
    with pytest.raises(RuntimeError, match="both limbs"):
        button("build_ik", chain_length=3, both_sides=True)()
    assert differences(state(), moved, tolerance()) == []
    bpy.ops.ed.undo()
    assert differences(state(), before, tolerance()) == []


@pytest.mark.parametrize("mode", ["POSE", "OBJECT"])
def test_export_undone_leaves_the_file_as_before(tmp_path, mode):
    character(mode=mode)
    path = tmp_path / "rig.glb"
    before = state()
    after = undone_and_redone(button("export", filepath=str(path)), changes=False)
    assert differences(after, before, tolerance()) == []  # the scene left as it was, its step changing nothing
    assert path.stat().st_size > 0
    snaps()


@pytest.mark.parametrize("release", ["0.1.0", "0.2.0"])
@pytest.mark.parametrize("mode", ["POSE", "EDIT"])
def test_an_upgrade_of_an_earlier_rig_undone_and_redone(release, mode):
    bpy.ops.wm.open_mainfile(filepath=str(DATA / f"rigged_by_{release}.blend"))
    obj = bpy.data.objects["Hero"]
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode=mode)
    undone_and_redone(button("upgrade_rig"), name="Hero")
    assert not bpy.ops.ik_rigger.upgrade_rig.poll()
    snaps(bpy.data.objects["Hero"])


def test_a_bake_from_its_button_undone_and_redone():
    character()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 12
    undone_and_redone(lambda: bpy.ops.ik_rigger.bake("INVOKE_DEFAULT", True, direction="IK_TO_FK"))
    snaps()


def test_edit_mode_steps_undone_one_by_one_and_redone():
    """In Edit mode the user moves a bone (a step of Edit mode's own undo), builds, and undoes twice."""
    obj = character(rigged=False, mode="EDIT")
    bpy.ops.ed.undo_push(message="edit mode")
    first = state()
    obj.data.edit_bones["toe.L"].tail.z += 0.05
    obj.data.edit_bones.active = obj.data.edit_bones["shin.L"]
    bpy.ops.ed.undo_push(message="toe moved")
    moved = state()
    assert button("build_ik", both_sides=True)() == {"FINISHED"}
    built = state()
    assert button("auto_rig", foot_roll=True)() == {"FINISHED"}
    rolled = state()
    for wanted in (built, moved, first):
        bpy.ops.ed.undo()
        assert differences(state(), wanted, tolerance()) == []
    for wanted in (moved, built, rolled):
        bpy.ops.ed.redo()
        assert differences(state(), wanted, tolerance()) == []
    snaps()


def test_the_build_panel_after_an_undo_says_what_build_would_do_now():
    """Its preview is kept per armature and bone: after an undo, Blender's data is new and the limb gone."""
    obj = character(rigged=False)
    unrigged = [entry for entry in draw(ui.IKRIG_PT_build, obj) if entry[0] == "label"]
    bpy.ops.ed.undo_push(message="the user's last step")
    assert button("build_ik", both_sides=True)() == {"FINISHED"}
    rigged = [entry for entry in draw(ui.IKRIG_PT_build, bpy.data.objects[RIG]) if entry[0] == "label"]
    assert rigged != unrigged
    bpy.ops.ed.undo()
    assert [entry for entry in draw(ui.IKRIG_PT_build, bpy.data.objects[RIG]) if entry[0] == "label"] == unrigged
    bpy.ops.ed.redo()
    assert [entry for entry in draw(ui.IKRIG_PT_build, bpy.data.objects[RIG]) if entry[0] == "label"] == rigged


@pytest.mark.parametrize("then", ["", "remove", "bake IK to FK"])
def test_a_motion_capture_rigged_with_its_motion_undone_and_redone(then):
    """The BVH importer's defaults; Auto-Rig keys the controls from the capture's motion, a new action's worth."""
    bpy.ops.import_anim.bvh(filepath=str(DATA / "pymo_walk.bvh"))
    obj = bpy.context.active_object
    obj.name = RIG
    bpy.ops.object.mode_set(mode="POSE")
    frames = (1, 20, 40)
    if then:
        assert button("auto_rig")() == {"FINISHED"}
        select_only(obj, [api.limbs(obj)[0].name], api.limbs(obj)[0].name)
    before = state(frames=frames)
    bpy.ops.ed.undo_push(message="the user's last step")
    run = {"": button("auto_rig"), "remove": button("remove_ik"),
           "bake IK to FK": button("bake", direction="IK_TO_FK", frame_start=1, frame_end=40, all_limbs=True)}[then]
    assert run() == {"FINISHED"}
    after = state(frames=frames)
    assert differences(after, before, tolerance())
    bpy.ops.ed.undo()
    assert differences(state(frames=frames), before, tolerance()) == []
    bpy.ops.ed.redo()
    assert differences(state(frames=frames), after, tolerance()) == []
    if then != "remove":
        snaps()


def test_two_armatures_in_edit_mode_undo_and_redo_a_build_of_the_active_one():
    character(rigged=False, mode="OBJECT")
    other = bpy.data.objects["Other"]
    for item in (other, bpy.data.objects[RIG]):
        item.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    other.data.edit_bones["toe.L"].tail.z += 0.05  # an edit of the other armature's, not yet stored
    bpy.data.objects[RIG].data.edit_bones.active = bpy.data.objects[RIG].data.edit_bones["shin.L"]
    other_before = state("Other")
    undone_and_redone(button("build_ik", both_sides=True))
    other_after = state("Other")
    # The build's shapes (the controls' looks) are objects of the file's own.
    assert differences(other_after, other_before, tolerance()) == ["objects"]
    assert other_after["objects"]["Other"] == other_before["objects"]["Other"]
    snaps()


@pytest.mark.parametrize("mode", ["OBJECT", "EDIT"])
def test_an_imported_character_on_a_hidden_chain_rigged_and_removed_undone_and_redone(mode):
    """The glTF importer's defaults (Y-up, tails off the joints, its clips): Auto-Rig as imported, Ctrl+Z and
    Ctrl+Shift+Z; then Remove of a leg from ``mode``, the same."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / "godot_platformer_robot.glb"))
    obj = next(found for found in bpy.data.objects if found.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    name = obj.name
    undone_and_redone(button("auto_rig"), name=name)
    obj = bpy.data.objects[name]  # undo gives Blender's data anew
    assert {limb.name for limb in api.limbs(obj)} == {"l-leg", "r-leg", "l-forearm", "r-forearm"}
    bpy.ops.object.mode_set(mode=mode)
    if mode == "EDIT":
        obj.data.edit_bones.active = obj.data.edit_bones["l-leg"]
    else:
        obj.data.bones.active = obj.data.bones["l-leg"]
    if mode == "OBJECT":
        bpy.ops.object.mode_set(mode="POSE")
    undone_and_redone(button("remove_ik"), name=name)
    obj = bpy.data.objects[name]
    assert {limb.name for limb in api.limbs(obj)} == {"r-leg", "l-forearm", "r-forearm"}
    snaps(obj)


@pytest.mark.parametrize(("setting", "value"), [(SOFT_IK, 0.9), (STRETCH, 1.0)])
def test_a_live_setting_changed_in_the_limbs_panel_undone_and_redone(setting, value):
    """The Limbs panel's Soft IK and Stretch sliders (the handle's own properties, which drivers read), the handle
    pulled past the leg's reach: Ctrl+Z gives back the pose they made, Ctrl+Shift+Z the new one."""
    obj = character(soft_ik=0.3, max_stretch=1.3)
    handle = api.limbs(obj)[1].bones["HANDLE"]  # not keyed: the frames the state plays keep it where it is put
    pose_bone = obj.pose.bones[handle]
    pose_bone.matrix = Matrix.Translation((0.0, 0.0, -0.3)) @ pose_bone.matrix
    assert setting in obj.pose.bones[handle]

    def slide() -> set[str]:
        bpy.data.objects[RIG].pose.bones[handle][setting] = value
        bpy.data.objects[RIG].update_tag()  # as a slider's edit tags the object, and pushes its step
        bpy.ops.ed.undo_push(message=setting)
        return {"FINISHED"}

    undone_and_redone(slide)
    snaps()


def test_a_chain_added_then_rigged_in_edit_mode_undone_step_by_step():
    """Add IK Chain Bones, then Build IK Limb on its new bones without leaving Edit mode (they are not yet the
    armature's bones), then Ctrl+Z twice and Ctrl+Shift+Z twice."""
    obj = character(rigged=False, mode="EDIT")
    bpy.context.scene.cursor.location = (0.0, 1.0, 1.0)
    bpy.ops.ed.undo_push(message="the user's last step")
    first = state()
    assert button("add_chain", base_name="tail", side="NONE", extremity=False, parents=False)() == {"FINISHED"}
    added = state()
    obj = bpy.data.objects[RIG]
    names = [bone.name for bone in obj.data.edit_bones if bone.name.startswith("tail")]
    assert len(names) == 2 and not any(name in obj.data.bones for name in names)
    obj.data.edit_bones.active = obj.data.edit_bones[names[-1]]
    assert button("build_ik", use_pole=False)() == {"FINISHED"}
    built = state()
    assert built["limbs"] == 1
    for wanted in (added, first):
        bpy.ops.ed.undo()
        assert differences(state(), wanted, tolerance()) == []
    for wanted in (added, built):
        bpy.ops.ed.redo()
        assert differences(state(), wanted, tolerance()) == []
    bpy.ops.object.mode_set(mode="POSE")
    assert [limb.chain for limb in api.limbs(bpy.data.objects[RIG])] == [tuple(names)]


def test_a_rebuild_in_place_changed_from_its_redo_panel_keeps_the_limbs_other_options():
    """The redo panel undoes the operator's step and runs it again with its properties as they were, one
    changed (Blender's own redo needs a window; here its two halves): a rigged limb's recorded options shown
    there stay as they are, and the one changed is taken."""
    obj = character(foot_roll=True)
    select_only(obj, ["shin.L"], "shin.L")
    bpy.ops.ed.undo_push(message="the user's last step")
    first = state()
    assert button("build_ik")() == {"FINISHED"}
    last = bpy.context.window_manager.operators[-1].properties
    shown = {name: getattr(last, name) for name in last.keys()}
    assert shown["foot_roll"] is True
    bpy.ops.ed.undo()
    assert differences(state(), first, tolerance()) == []
    assert button("build_ik", **(shown | {"soft_ik": 0.2}))() == {"FINISHED"}
    limbs = {limb.name: limb for limb in api.limbs(bpy.data.objects[RIG])}
    assert "soft_ik" in limbs["shin.L"].parts and "foot_roll" in limbs["shin.L"].parts
    assert "soft_ik" not in limbs["shin.R"].parts and "foot_roll" in limbs["shin.R"].parts
    snaps()


def test_a_refusal_with_another_object_active_pushes_no_step():
    """The mesh made active by a click, the armatures still selected: Auto-Rig says which armatures to click
    and changes nothing; Ctrl+Z twice then takes back the click and the user's step before it."""
    character(rigged=False, mode="OBJECT")
    bpy.data.objects[RIG].select_set(True)
    before = _user_step()
    ground = bpy.data.objects["Ground"]
    ground.select_set(True)
    bpy.context.view_layer.objects.active = ground
    bpy.ops.ed.undo_push(message="the mesh clicked")
    clicked = state()
    with pytest.raises(RuntimeError, match="click 'Other' or 'Rig'"):
        button("auto_rig")()
    assert differences(state(), clicked, tolerance()) == []
    bpy.ops.ed.undo()
    bpy.ops.ed.undo()
    assert differences(state(), before, tolerance()) == []
