"""The ways in (operators from F3 and Python, the API) called as users and scripts do, at the edges: each is
refused with a report naming what and what to do, the data as it was."""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

import bpy
import pytest
from helpers import (
    all_fcurves,
    both_legs,
    both_legs_rigged,
    evaluate,
    make_armature,
    rotation_degrees,
    same,
    set_active_bone,
    snapshot,
)

from ik_rigger import api
from ik_rigger.pose_operators import IKRIG_OT_bake
from ik_rigger.rig.skeleton import check_editable

# Blender's frames run from -1048574 to 1048574 (the scene's current frame's limits).
LAST_FRAME = 1048574


@pytest.fixture
def rigged() -> bpy.types.Object:
    return both_legs_rigged()


@pytest.mark.parametrize("start, end", [(LAST_FRAME - 3, LAST_FRAME + 3), (1, 2**31 - 1), (-(2**31), 3)])
def test_a_bake_outside_blenders_frames_is_refused_at_once(rigged, start, end):
    """A range to 2**31 listed every frame first (Python filled the memory until the process was killed); one
    a few frames past Blender's last was baked, keyed where Blender cannot play."""
    before = snapshot(rigged)
    began = time.process_time()
    with pytest.raises(RuntimeError, match="outside Blender's frames, -1048574 to 1048574"):
        bpy.ops.ik_rigger.bake(frame_start=start, frame_end=end)
    with pytest.raises(api.RigError, match="outside Blender's frames"):
        api.bake(rigged, "IK_TO_FK", range(start, end + 1))
    assert time.process_time() - began < 5.0
    assert same(before, snapshot(rigged))


def test_plant_feet_outside_blenders_frames_is_refused(rigged):
    bpy.ops.mesh.primitive_plane_add(size=10)
    ground = bpy.context.active_object
    bpy.context.view_layer.objects.active = rigged
    before = snapshot(rigged)
    with pytest.raises(api.RigError, match="frame 1048575 lies outside Blender's frames"):
        api.plant_feet(rigged, ground, [1, LAST_FRAME + 1])
    with pytest.raises(api.RigError, match="outside Blender's frames"):
        api.plant_feet(rigged, ground, range(1, 2**40))
    assert same(before, snapshot(rigged))


@pytest.mark.parametrize("angle", [math.pi, -math.pi])
def test_the_pole_angle_at_the_end_of_its_slider_builds(angle):
    """Blender keeps a float property in single precision: the redo panel's Pole Angle at 180 degrees gives
    3.1415927, past Python's pi, and the build refused it as 'pole angle 3.14159 is outside -3.14159 to
    3.14159'. It builds as the API does with Python's pi."""
    obj = make_armature(both_legs())
    twin = make_armature(both_legs(), name="Twin")
    api.build(twin, "shin.L", pole_angle=angle, pole_angle_auto=False)
    bpy.context.view_layer.objects.active = obj
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik(pole_angle=angle, pole_angle_auto=False) == {"FINISHED"}
    for rig in (obj, twin):  # a turn of the pole the angle acts on
        rig.pose.bones[rig.ik_rigger.limbs[0].pole].location.x += 0.3
    ours, theirs = evaluate(obj), evaluate(twin)
    length = obj.data.bones["shin.L"].length
    for name in ("thigh.L", "shin.L", "foot.L"):
        assert same(ours[name], theirs[name], 1e-5 * length), name
    assert abs(rotation_degrees(ours["shin.L"], obj.data.bones["shin.L"].matrix_local)) > 1.0


def test_auto_rig_names_an_option_out_of_its_range(rigged):
    """Every limb refused the value alike, and Auto-Rig said no limbs were found on the armature."""
    before = snapshot(rigged)
    with pytest.raises(api.RigError, match=r"iterations 0 is outside 1 to 10000 \(option iterations\)"):
        api.auto_rig(rigged, iterations=0)
    with pytest.raises(api.RigError, match=r"soft ik 0.5 is outside 0 to 0.25 \(option soft_ik\)"):
        api.auto_rig(rigged, soft_ik=0.5)
    assert same(before, snapshot(rigged))
    # The chain's length Auto-Rig takes from each limb it finds, whatever is given.
    assert [limb.chain for limb in api.auto_rig(rigged, chain_length=300)] == [("thigh.L", "shin.L"),
                                                                               ("thigh.R", "shin.R")]


def test_a_script_naming_no_bone_is_told_so(rigged):
    """None for a bone raised Blender's SystemError from its bone lookup."""
    before = snapshot(rigged)
    for call in (lambda: api.snap_limb(rigged, None, "FK"), lambda: api.remove(rigged, None),
                 lambda: api.switch_parent(rigged, None, 1), lambda: api.bake(rigged, "IK_TO_FK", range(1, 3), [None])):
        with pytest.raises(api.RigError, match="is not part of a limb rigged by IK Rigger"):
            call()
    assert same(before, snapshot(rigged))
    bpy.context.view_layer.update()
    assert same(evaluate(rigged)["shin.L"], rigged.pose.bones["shin.L"].matrix)


def test_a_ground_of_the_wrong_kind_is_named_with_its_article(rigged):
    empty = bpy.data.objects.new("Marker", None)
    bpy.context.scene.collection.objects.link(empty)
    with pytest.raises(RuntimeError, match="'Rig': is an armature, not a mesh"):
        bpy.ops.ik_rigger.plant_feet(ground="Rig")
    with pytest.raises(api.RigError, match="'Marker': is an empty, not a mesh"):
        api.plant_feet(rigged, empty)
    with pytest.raises(api.RigError, match="the active object 'Marker' is an empty, not an armature"):
        check_editable(empty)


def _invoked_bake(given: dict[str, int]) -> tuple[int, int]:
    """The range Bake IK/FK's invoke (F3, a button, a keymap) bakes with ``given`` set by the caller; Blender
    calls invoke only where it has a window, so it is called here on a stand-in holding the properties."""
    standin = SimpleNamespace(**({"frame_start": 1, "frame_end": 250} | given))
    standin.properties = SimpleNamespace(is_property_set=lambda name: name in given)
    standin.execute = lambda context: {"FINISHED"}
    assert IKRIG_OT_bake.invoke(standin, bpy.context, None) == {"FINISHED"}
    return standin.frame_start, standin.frame_end


def test_bake_from_a_keymap_or_script_bakes_the_range_it_gives(rigged):
    """Invoke replaced a range the caller gave with the scene's; and a range typed in the redo panel was
    remembered for the next run (as set), so it would not take the scene's either."""
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 40
    assert _invoked_bake({}) == (1, 40)
    assert _invoked_bake({"frame_start": 10, "frame_end": 12}) == (10, 12)
    assert _invoked_bake({"frame_end": 12}) == (1, 12)
    scene.use_preview_range = True
    scene.frame_preview_start, scene.frame_preview_end = 5, 8
    assert _invoked_bake({}) == (5, 8)
    for operator in (bpy.ops.ik_rigger.bake, bpy.ops.ik_rigger.plant_feet):
        for name in ("frame_start", "frame_end"):
            assert operator.get_rna_type().properties[name].is_skip_save, (operator, name)
    handle = rigged.ik_rigger.limbs[0].handle
    assert bpy.ops.ik_rigger.bake(direction="FK_TO_IK", frame_start=10, frame_end=12) == {"FINISHED"}
    keyed = {round(point.co.x) for curve in all_fcurves(rigged) if f'"{handle}"' in curve.data_path
             for point in curve.keyframe_points}
    assert keyed == {10, 11, 12}


def test_keys_asked_outside_blenders_frames_are_refused(rigged):
    """A snap or a parent switch keyed at frame 2**40 wrote keys there, where no frame of Blender plays."""
    set_active_bone(rigged, "shin.L")
    assert bpy.ops.ik_rigger.rebuild_limb(limb="shin.L") == {"FINISHED"}
    api.build(rigged, "shin.L", parent_switch=True)
    before = snapshot(rigged)
    with pytest.raises(api.RigError, match="frame 1099511627776 lies outside Blender's frames"):
        api.snap_limb(rigged, "shin.L", "FK", key=True, frame=2**40)
    with pytest.raises(api.RigError, match="frame -1048575 lies outside Blender's frames"):
        api.switch_parent(rigged, "shin.L", 1, key=True, frame=-LAST_FRAME - 1)
    assert same(before, snapshot(rigged))
    assert api.snap_limb(rigged, "shin.L", "FK", key=True, frame=LAST_FRAME)
    keyed = {point.co.x for curve in all_fcurves(rigged) for point in curve.keyframe_points}
    assert LAST_FRAME in keyed and keyed <= {LAST_FRAME - 1, LAST_FRAME}  # the switch held the frame before


@pytest.mark.parametrize("frame, problem", [(2.5, "frame 2.5 lies between frames"), ("3", "frame '3' is text"),
                                            (None, None), (math.nan, "frame nan is not a frame number"),
                                            (object(), "is not a frame number")])
def test_frames_between_frames_or_not_numbers_are_refused(rigged, frame, problem):
    """A script's frame 2.5 reached Blender's frame_set as it was: a TypeError's traceback, not a refusal."""
    api.build(rigged, "shin.L", parent_switch=True)
    bpy.ops.mesh.primitive_plane_add(size=10)
    ground = bpy.context.active_object
    bpy.context.view_layer.objects.active = rigged
    before = snapshot(rigged)
    calls = [lambda: api.bake(rigged, "IK_TO_FK", [1, frame]),
             lambda: api.plant_feet(rigged, ground, [frame])]
    if frame is not None:
        calls += [lambda: api.snap_limb(rigged, "shin.L", "FK", key=True, frame=frame),
                  lambda: api.switch_parent(rigged, "shin.L", 1, key=True, frame=frame)]
    for call in calls:
        with pytest.raises(api.RigError, match=problem or "frame None is not a frame number"):
            call()
    assert same(before, snapshot(rigged))
    assert bpy.context.scene.frame_current == 1


def test_whole_frames_of_any_number_type_are_taken(rigged):
    """A whole float (a script's 3.0) or a numpy integer is that frame: keyed there."""
    import numpy as np

    handle = rigged.ik_rigger.limbs[0].handle
    api.snap_limb(rigged, "shin.L", "FK", key=True, frame=np.int64(4))
    api.snap_limb(rigged, "shin.L", "IK", key=True, frame=6.0)
    assert api.bake(rigged, "FK_TO_IK", np.arange(8, 10), bones=["shin.L"]) == {"shin.L": 2}
    api.bake(rigged, "FK_TO_IK", [11.0], bones=["shin.L"])
    keyed = {point.co.x for curve in all_fcurves(rigged) if f'"{handle}"' in curve.data_path
             for point in curve.keyframe_points}
    assert {8.0, 9.0, 11.0} <= keyed
    assert {4.0, 6.0} <= {point.co.x for curve in all_fcurves(rigged) for point in curve.keyframe_points}
    assert bpy.context.scene.frame_current == 1


def test_an_option_naming_a_made_bone_says_so(rigged):
    """Naming the limb's own IK handle as its extremity said the handle 'is not a bone of this armature'."""
    handle = rigged.ik_rigger.limbs[0].handle
    before = snapshot(rigged)
    with pytest.raises(api.RigError, match=rf"^'{handle}': was made by IK Rigger, so Extremity Bone cannot be it "
                       r"\(option extremity_name\)\. Name one of the character's own bones"):
        api.build(rigged, "shin.L", extremity_mode="BONE", extremity_name=handle)
    assert same(before, snapshot(rigged))


def test_bake_takes_one_bone_name_as_that_bone(rigged):
    """``bones="shin.L"`` was read letter by letter: "'s': is not part of a limb"."""
    assert api.bake(rigged, "FK_TO_IK", [3, 4], bones="shin.L") == {"shin.L": 2}


def test_removing_a_removed_limb_says_what_to_name(rigged):
    api.remove(rigged, "shin.L")
    before = snapshot(rigged)
    with pytest.raises(api.RigError, match=r"'shin.L': is not part of a limb rigged by IK Rigger\. Name a bone of a "
                       r"rigged limb \(chain, handle, pole or clone\), or make one active for Remove IK Limb\."):
        api.remove(rigged, "shin.L")
    assert same(before, snapshot(rigged))
