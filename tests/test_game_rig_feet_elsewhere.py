"""A game rig whose deform foot is not where the deform leg leaves it: it hangs from another bone than the
deform shin, follows a foot control outside the chain (an Unreal-like ``ik_foot``), or the control chain has
no foot at all. Auto-Rig rigs the control chain with the foot that moves the character's foot and its clone,
or says plainly, as a warning, that the deform foot stays behind, naming it and what to do; never a leg
rigged with no foot or a wrong word. On evaluated poses."""

from __future__ import annotations

import bpy
import pytest
from helpers import evaluate, rotation_degrees, same, snapshot
from mathutils import Euler, Matrix
from test_sweep_other_rigs import _game_rig

from ik_rigger import api

GAME_RIGS = [("", "CTRL_"), ("DEF-", "")]


def _reparented(obj: bpy.types.Object, bone: str, parent: str | None) -> None:
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    edit_bones[bone].use_connect = False
    edit_bones[bone].parent = edit_bones[parent] if parent else None
    bpy.ops.object.mode_set(mode="POSE")


def _followed_by_nothing(obj: bpy.types.Object, bone: str) -> None:
    constraints = obj.pose.bones[bone].constraints
    constraints.remove(constraints[0])


def _moved_with_handle(obj: bpy.types.Object, limb: api.Limb, foot: str, shin: str) -> tuple[float, float]:
    """How far ``foot`` stands from the handle once the handle is moved and turned (a share of the shin), and
    how far it turns from it (degrees)."""
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    rested = evaluate(obj)
    handle.matrix = Matrix.Translation((0.0, -0.1, 0.2)) @ rested[handle.name] @ \
        Euler((0.4, 0.0, 0.2)).to_matrix().to_4x4()
    posed = evaluate(obj)
    handle.matrix_basis = Matrix.Identity(4)
    off = (posed[foot].translation - posed[handle.name].translation).length / obj.data.bones[shin].length
    turn = rotation_degrees(posed[foot], posed[handle.name] @ (rested[handle.name].inverted() @ rested[foot]))
    return off, turn


@pytest.mark.parametrize(("deform", "control"), GAME_RIGS)
@pytest.mark.parametrize("parent", ["root", "hips", None])
def test_a_deform_foot_hanging_from_another_bone_is_a_warning_naming_it(deform: str, control: str,
                                                                         parent: str | None) -> None:
    obj = _game_rig(deform, control)
    for side in "LR":
        _followed_by_nothing(obj, f"{deform}foot.{side}")
        _reparented(obj, f"{deform}foot.{side}", f"{deform}{parent}" if parent else None)
    notes: list[str] = []
    built = api.auto_rig(obj, notes=notes)
    assert sorted((limb.chain, limb.extremity) for limb in built) == [
        ((f"{control}thigh.{side}", f"{control}shin.{side}"), f"{control}foot.{side}") for side in "LR"]
    warned = [note for note in notes if api.is_warning(note)]
    assert len(warned) == 2, notes
    hangs = f"from '{deform}{parent}'" if parent else "from no bone"
    said = (f"'{deform}foot.L' follows no bone and hangs {hangs}, not from the left leg: it stays there as the "
            f"left leg moves; a Copy Transforms of '{control}foot.L' on it makes it follow the handle")
    assert said in warned[0], warned
    assert not any("turns with" in note for note in notes)
    limb = next(limb for limb in built if limb.name.endswith("L"))
    assert _moved_with_handle(obj, limb, f"{control}foot.L", f"{control}shin.L")[0] < 1e-4


@pytest.mark.parametrize(("deform", "control"), GAME_RIGS)
def test_a_deform_foot_hanging_from_the_control_foot_follows_it_without_a_word(deform: str, control: str) -> None:
    obj = _game_rig(deform, control)
    for side in "LR":
        _followed_by_nothing(obj, f"{deform}foot.{side}")
        _reparented(obj, f"{deform}foot.{side}", f"{control}foot.{side}")
    notes: list[str] = []
    built = api.auto_rig(obj, notes=notes)
    assert sorted(limb.extremity for limb in built) == [f"{control}foot.L", f"{control}foot.R"]
    assert not any(api.is_warning(note) or "follows no bone" in note for note in notes), notes
    limb = next(limb for limb in built if limb.name.endswith("L"))
    off, turn = _moved_with_handle(obj, limb, f"{deform}foot.L", f"{deform}shin.L")
    assert off < 1e-4 and turn < 0.01


def _foot_controls_outside(deform: str, control: str) -> bpy.types.Object:
    """The deform feet copy free foot controls ``ik_foot.L``/``.R`` (from the root, at the feet's rest), as
    an Unreal-like rig's do, not the control chain's feet."""
    obj = _game_rig(deform, control)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    for side in "LR":
        foot = edit_bones[f"{deform}foot.{side}"]
        free = edit_bones.new(f"ik_foot.{side}")
        free.head, free.tail, free.roll = foot.head, foot.tail, foot.roll
        free.parent = edit_bones[f"{control}root"]
    bpy.ops.object.mode_set(mode="POSE")
    for side in "LR":
        obj.pose.bones[f"{deform}foot.{side}"].constraints[0].subtarget = f"ik_foot.{side}"
    return obj


@pytest.mark.parametrize(("deform", "control"), GAME_RIGS)
def test_a_deform_foot_following_a_foot_control_outside_the_chain_has_that_control_rigged(deform: str,
                                                                                        control: str) -> None:
    obj = _foot_controls_outside(deform, control)
    before = snapshot(obj)
    notes: list[str] = []
    built = api.auto_rig(obj, notes=notes)
    assert sorted((limb.chain, limb.extremity) for limb in built) == [
        ((f"{control}thigh.{side}", f"{control}shin.{side}"), f"ik_foot.{side}") for side in "LR"]
    assert any(f"'{deform}foot.L' follows 'ik_foot.L'" in note and not api.is_warning(note) for note in notes), notes
    limb = next(limb for limb in built if limb.name.endswith("L"))
    off, turn = _moved_with_handle(obj, limb, f"{deform}foot.L", f"{deform}shin.L")
    assert off < 1e-4 and turn < 0.01
    for limb in built:
        api.remove(obj, limb.name)
    assert same(snapshot(obj), before)


@pytest.mark.parametrize(("deform", "control"), GAME_RIGS)
def test_a_control_chain_with_no_foot_has_the_deform_foot_rigged(deform: str, control: str) -> None:
    obj = _game_rig(deform, control)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    for side in "LR":
        for name in (f"{control}toe.{side}", f"{control}foot.{side}"):
            obj.data.edit_bones.remove(obj.data.edit_bones[name])
    bpy.ops.object.mode_set(mode="POSE")
    for side in "LR":
        for name in (f"{deform}toe.{side}", f"{deform}foot.{side}"):
            for constraint in list(obj.pose.bones[name].constraints):
                obj.pose.bones[name].constraints.remove(constraint)
    notes: list[str] = []
    built = api.auto_rig(obj, notes=notes)
    assert sorted((limb.chain, limb.extremity) for limb in built) == [
        ((f"{control}thigh.{side}", f"{control}shin.{side}"), f"{deform}foot.{side}") for side in "LR"]
    assert any(f"the foot rigged is '{deform}foot.L' itself" in note for note in notes), notes
    limb = next(limb for limb in built if limb.name.endswith("L"))
    off, turn = _moved_with_handle(obj, limb, f"{deform}foot.L", f"{deform}shin.L")
    assert off < 1e-4 and turn < 0.01


def test_a_deform_foot_copying_the_control_shin_has_the_control_foot_rigged() -> None:
    """A bone of the chain followed is no foot: the control foot is rigged, as where the deform foot follows
    nothing."""
    obj = _game_rig("", "CTRL_")
    for side in "LR":
        obj.pose.bones[f"foot.{side}"].constraints[0].subtarget = f"CTRL_shin.{side}"
    built = api.auto_rig(obj)
    assert sorted(limb.extremity for limb in built) == ["CTRL_foot.L", "CTRL_foot.R"]
