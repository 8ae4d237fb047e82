"""A knee or elbow modelled nearly straight but bent a little the wrong way (importers leave knees a degree
behind their line): pre-bent toward the side it should bend to, as a straight chain is, within the promised
2 degrees; one clearly bent keeps bending its own way."""

from __future__ import annotations

import math

import bpy
import pytest
from helpers import evaluate, make_armature, rest, rotation_degrees
from mathutils import Vector
from test_imports_more import bend_forward

from ik_rigger import api

FRONT = Vector((0.0, -1.0, 0.0))  # where leg_bones' feet point


def _leg(backwards: float) -> bpy.types.Object:
    """A root > hips > thigh > shin > foot leg, hip to ankle along -Z, the knee ``backwards`` degrees behind
    that line (+Y), seen from the hip."""
    knee_back = 0.45 * math.tan(math.radians(backwards))
    return make_armature([
        ("root", (0, 0, 0), (0, 0.5, 0), None, False),
        ("hips", (0, 0, 1.0), (0, 0, 1.2), "root", False),
        ("thigh.L", (0.2, 0, 1.0), (0.2, knee_back, 0.55), "hips", False),
        ("shin.L", (0.2, knee_back, 0.55), (0.2, 0, 0.1), "thigh.L", True),
        ("foot.L", (0.2, 0, 0.1), (0.2, -0.2, 0.0), "shin.L", True),
        ("toe.L", (0.2, -0.2, 0.0), (0.2, -0.3, 0.0), "foot.L", True),
    ])


def _turned(obj: bpy.types.Object, before: dict) -> dict[str, float]:
    return {name: rotation_degrees(before[name], obj.data.bones[name].matrix_local) for name in ("thigh.L", "shin.L")}


@pytest.mark.parametrize("backwards", [0.5, 0.9])
def test_a_knee_bent_slightly_backwards_is_pre_bent_forward_and_comes_forward(backwards):
    obj = _leg(backwards)
    before = rest(obj)
    hip, ankle = obj.data.bones["thigh.L"].head_local.copy(), obj.data.bones["shin.L"].tail_local.copy()
    built = api.build(obj, "shin.L")
    bpy.ops.object.mode_set(mode="POSE")
    bones = obj.data.bones
    # Its ends kept, each bone turned within the promised 2 degrees in all, the knee now ahead of its line.
    assert (bones["thigh.L"].head_local - hip).length < 1e-6 and (bones["shin.L"].tail_local - ankle).length < 1e-6
    assert all(0.1 < turned <= 2.0 for turned in _turned(obj, before).values()), _turned(obj, before)
    assert bones["shin.L"].head_local.y < -1e-4
    assert any(f"was bent {backwards:.1f} degree the other way" in note and "was pre-bent 1 degree toward -Y" in note
               for note in built[0].notes), built[0].notes
    assert not built[0].warnings
    # The pole in front of the knee, and the knee comes forward as the foot comes up.
    assert evaluate(obj)[built[0].bones["POLE"]].translation.y < bones["shin.L"].head_local.y
    assert bend_forward(obj, built[0], FRONT) > 0.05
    # Removed, the leg gets its rest back.
    api.remove(obj, "shin.L")
    assert max(_turned(obj, before).values()) < 1e-4


def test_a_knee_bent_clearly_backwards_is_left_as_modelled():
    obj = _leg(5.0)
    before = rest(obj)
    built = api.build(obj, "shin.L")
    bpy.ops.object.mode_set(mode="POSE")
    assert max(_turned(obj, before).values()) < 1e-4
    assert not any("pre-bent" in note for note in built[0].notes)
    assert bend_forward(obj, built[0], FRONT) < -0.05


@pytest.mark.parametrize("fix_orientation", [False, True])
def test_a_knee_bent_against_by_more_than_the_promise_allows_on_its_own_bones_is_left_as_modelled_and_told(
        fix_orientation):
    """Pre-bent a degree forward, a knee 1.5 degrees back would turn its bones 2.5 degrees: too far. Its bones keep
    their rest, the knee bends on back, and a warning says so and what to do (it said nothing)."""
    obj = _leg(1.5)
    before = rest(obj)
    built = api.build(obj, "shin.L", fix_orientation=fix_orientation)
    assert max(_turned(obj, before).values()) < 1e-4
    assert not any("pre-bent" in note for note in built[0].notes)
    assert any("thigh.L > shin.L is bent 1.5 degree the other way" in text and "in Edit mode" in text
               for text in built[0].warnings), built[0].warnings
    bpy.ops.object.mode_set(mode="POSE")
    assert bend_forward(obj, built[0], FRONT) < -0.05


def test_with_pre_bending_off_it_bends_its_own_way_and_says_so():
    obj = _leg(0.5)
    before = rest(obj)
    built = api.build(obj, "shin.L", prebend_straight=False)
    bpy.ops.object.mode_set(mode="POSE")
    assert max(_turned(obj, before).values()) < 1e-4
    assert any("thigh.L > shin.L is bent slightly the other way" in warning for warning in built[0].warnings)
    # Pole and bend agree: the pole behind the knee, which goes back.
    assert evaluate(obj)[built[0].bones["POLE"]].translation.y > 0.0
    assert bend_forward(obj, built[0], FRONT) < -0.05


def test_the_bend_direction_set_decides_which_side_is_against():
    """Bent slightly back: asked to bend back, it is left so; asked to bend to +X, it is pre-bent so."""
    obj = _leg(0.5)
    before = rest(obj)
    api.build(obj, "shin.L", bend_direction="Y_POS")
    assert max(_turned(obj, before).values()) < 1e-4
    api.remove(obj, "shin.L")
    built = api.build(obj, "shin.L", bend_direction="X_POS")
    assert obj.data.bones["shin.L"].head_local.x > 0.2 + 1e-4
    assert any("was pre-bent 1 degree toward +X" in note for note in built[0].notes)


def test_a_motion_that_bends_it_keeps_it_unbent_and_plays_as_before():
    obj = _leg(0.5)
    shin = obj.pose.bones["shin.L"]
    shin.rotation_mode = "XYZ"
    for frame, bend in ((1, 0.0), (11, 0.6), (21, 0.0)):
        shin.rotation_euler = (bend, 0.0, 0.0)
        shin.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 21
    played = {}
    for frame in (1, 6, 11, 16, 21):
        bpy.context.scene.frame_set(frame)
        played[frame] = evaluate(obj)
    before = rest(obj)
    built = api.build(obj, "shin.L")
    assert max(_turned(obj, before).values()) < 1e-4
    assert not built[0].warnings
    assert any("is bent slightly the other way at rest but its motion bends it" in note for note in built[0].notes)
    for frame, poses in played.items():
        bpy.context.scene.frame_set(frame)
        now = evaluate(obj)
        for name in ("thigh.L", "shin.L", "foot.L"):
            assert (now[name].translation - poses[name].translation).length < 1e-4 * 0.9, (frame, name)
            assert rotation_degrees(now[name], poses[name]) < 0.01, (frame, name)


def test_a_knee_off_its_joints_bent_slightly_backwards_is_pre_bent_forward_on_its_hidden_chain_only():
    """Bones pointing off their joints (as importers leave them), the knee 1.5 degrees behind its line: too far
    to pre-bend the user's own bones within 2 degrees, but the hidden chain bends alone; the user's bones keep
    their rest, nothing moves at rest, and the knee comes forward."""
    knee_back = 0.45 * math.tan(math.radians(1.5))
    obj = make_armature([
        ("root", (0, 0, 0), (0, 0.5, 0), None, False),
        ("hips", (0, 0, 1.0), (0, 0, 1.2), "root", False),
        ("thigh.L", (0.2, 0, 1.0), (0.5, 0, 0.8), "hips", False),
        ("shin.L", (0.2, knee_back, 0.55), (0.2, 0.3, 0.5), "thigh.L", False),
        ("foot.L", (0.2, 0, 0.1), (0.2, -0.2, 0.0), "shin.L", False),
        ("toe.L", (0.2, -0.2, 0.0), (0.2, -0.3, 0.0), "foot.L", True),
    ])
    before = rest(obj)
    built = api.build(obj, "shin.L")
    assert any("was bent 1.5 degree the other way" in note and "its hidden chain was pre-bent" in note
               for note in built[0].notes), built[0].notes
    bpy.ops.object.mode_set(mode="POSE")
    posed = evaluate(obj)
    for name, matrix in before.items():
        assert obj.data.bones[name].matrix_local == matrix, name
        assert rotation_degrees(posed[name], matrix) < 0.01, name
        assert (posed[name].translation - matrix.translation).length < 1e-4 * 0.9, name
    assert bend_forward(obj, built[0], FRONT) > 0.05
