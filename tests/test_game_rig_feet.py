"""A game rig whose deform bones copy a control chain's transforms, but whose deform foot follows nothing
(it hangs from the deform shin): Auto-Rig rigs the control chain with its own foot, saying so."""

from __future__ import annotations

import bpy
import pytest
from helpers import evaluate, rotation_degrees, same, snapshot
from mathutils import Euler, Matrix
from test_sweep_other_rigs import _game_rig

from ik_rigger import api


def _feet_following_nothing(deform: str, control: str) -> bpy.types.Object:
    obj = _game_rig(deform, control)
    for side in "LR":
        constraints = obj.pose.bones[f"{deform}foot.{side}"].constraints
        constraints.remove(constraints[0])
    return obj


@pytest.mark.parametrize(("deform", "control"), [("", "CTRL_"), ("DEF-", "")])
def test_the_control_foot_is_rigged_where_the_deform_foot_follows_nothing(deform: str, control: str) -> None:
    obj = _feet_following_nothing(deform, control)
    before = snapshot(obj)
    notes: list[str] = []
    built = api.auto_rig(obj, notes=notes)
    assert sorted((limb.chain, limb.extremity) for limb in built) == [
        ((f"{control}thigh.{side}", f"{control}shin.{side}"), f"{control}foot.{side}") for side in "LR"]
    note = next(note for note in notes if f"'{deform}foot.L' follows no bone there" in note)
    assert f"the foot rigged is '{control}foot.L'" in note and not api.is_warning(note)
    for limb in built:
        side = limb.name[-1]
        handle = obj.pose.bones[limb.bones["HANDLE"]]
        rested = evaluate(obj)
        handle.matrix = Matrix.Translation((0.0, -0.1, 0.2)) @ rested[handle.name] @ \
            Euler((0.4, 0.0, 0.2)).to_matrix().to_4x4()
        posed = evaluate(obj)
        length = obj.data.bones[f"{control}shin.{side}"].length
        foot = f"{control}foot.{side}"
        # The control foot planted on the handle, turned with it; the deform shin on the control shin.
        assert (posed[foot].translation - posed[handle.name].translation).length < 1e-4 * length
        assert rotation_degrees(posed[foot], posed[handle.name] @ (rested[handle.name].inverted() @ rested[foot])) \
            < 0.01
        assert same(posed[f"{deform}shin.{side}"], posed[f"{control}shin.{side}"], 1e-5)
        handle.matrix_basis = Matrix.Identity(4)
    assert [c.type for c in obj.pose.bones[f"{deform}foot.L"].constraints] == []
    for limb in built:
        api.remove(obj, limb.name)
    assert same(snapshot(obj), before)
