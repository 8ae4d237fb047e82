"""A refusal after bones were renamed leaves the limb's record exactly as it was.

Every operation first brings the records' names up to date after renames (``records.refresh``): the chain, the
made bones, the pre-bent bones' rests and the chain's kept states follow their bones, and so do the options that
name one (an extremity named by hand). When the operation then refused for another reason (a Rebuild of shared
data, a Remove keying where keys play halved, a Snap keyed over strips, a Bake over a driven bone, a Switch
Parent on a limb built without it, Plant Feet with no ground below, a Build given an unknown option), the
renamed option and names stayed, with no undo step (a refused operator pushes none): Ctrl+Z then Ctrl+Shift+Z
gave back another file than the one the refusal left. Now the records are as before the call; the same
operation, once it can be done, brings them up to date.
"""

from __future__ import annotations

import bpy
import pytest
from helpers import all_fcurves, leg_bones, make_armature
from test_refusals_earlier_rigs import (
    _chain_driven,
    _chain_undriven,
    _full_influence,
    _ground_aside,
    _ground_below,
    _not_shared,
    _over_strips,
    _over_strips_at_half,
    _own_action_back,
    _run_operator,
    _shared,
    _tolerance,
    everything,
)
from test_undo_operators import differences

from ik_rigger import api
from ik_rigger.rig import records

# Odd names a user may give: quotes (RNA paths quote them), dots (Blender's own suffixes), letters beyond ASCII.
RENAMES = {"foot.L": 'Fuß "links".001', "thigh.L": "Ober'schenkel.L", "shin.L": 'Schien.bein "L"'}


def _straight_leg() -> bpy.types.Object:
    """A straight leg (pre-bent by the build) whose thigh has a colour of its own (a chain state kept), its
    extremity named by hand, rigged; the hips keyed so the armature has motion."""
    obj = make_armature(leg_bones(bend=0.0))
    obj.pose.bones["thigh.L"].color.palette = "THEME03"
    hips = obj.pose.bones["hips"]
    for frame, height in ((1, 0.0), (6, -0.05), (12, 0.0)):
        hips.location = (0.0, 0.0, height)
        hips.keyframe_insert("location", frame=frame)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 12
    api.build(obj, "shin.L", both_sides=False, extremity_mode="BONE", extremity_name="foot.L")
    limb = obj.ik_rigger.limbs[0]
    assert [rest.name for rest in limb.prebent] and [state.name for state in limb.chain_states] == ["thigh.L"]
    scene.frame_set(6)
    return obj


def _renamed(obj: bpy.types.Object, names: dict[str, str], last: str = "shin.L") -> str:
    """Rename the user's bones ``names``; the limb's last chain bone, ``last`` before, now (made active)."""
    for old, new in names.items():
        obj.data.bones[old].name = new
    last = names.get(last, last)
    obj.data.bones.active = obj.data.bones[last]
    bpy.context.view_layer.update()
    return last


def _record(obj: bpy.types.Object) -> dict:
    """The whole file as the refusal tests compare it, and what a rename may change of a limb's record besides."""
    found = everything(obj)
    found["record names"] = [(repr(limb.to_options()), [(rest.name, tuple(rest.head), tuple(rest.tail), rest.roll)
                                                        for rest in limb.prebent],
                              [(state.name, state.palette, state.ik_stretch) for state in limb.chain_states])
                             for limb in obj.ik_rigger.limbs]
    return found


def _follow_renames(obj: bpy.types.Object, names: dict[str, str]) -> None:
    """The records once an operation was done: they name the bones as they are called now."""
    limb = obj.ik_rigger.limbs[0]
    assert limb.to_options().extremity_name == names["foot.L"] == limb.extremity
    chain = [names.get(name, name) for name in ("thigh.L", "shin.L")]
    assert records.inventory(limb).chain == tuple(chain) and limb.name == chain[-1]
    assert {rest.name for rest in limb.prebent} <= set(chain) and [state.name for state in limb.chain_states] == [
        chain[0]]


def _nothing(obj: bpy.types.Object, limb: str) -> None:
    return None


# (what refuses: the state set up, the API call, the operator and its properties (None: none refuses so), what
# the refusal says, what gives the state back)
CASES = {
    "rebuild of shared data": (
        _shared, lambda obj, limb: api.build(obj, limb, both_sides=False),
        ("rebuild_limb", {}), "Hero's double", _not_shared),
    "build given an unknown option": (
        _nothing, lambda obj, limb: api.build(obj, limb, both_sides=False, pole_angel=0.5),
        None, "unknown build option 'pole_angel'", None),
    "remove keying where keys play halved": (
        _over_strips_at_half, lambda obj, limb: api.remove(obj, limb),
        ("remove_ik", {}), "50% influence", _full_influence),
    "snap keyed over strips": (
        _over_strips, lambda obj, limb: api.snap_limb(obj, limb, "FK", key=True),
        ("snap_fk_to_ik", {"keyframe": True}), "NLA strip 'walk'", _own_action_back),
    "bake over a driven chain bone": (
        _chain_driven, lambda obj, limb: api.bake(obj, "IK_TO_FK", range(1, 13), [limb]),
        ("bake", {"direction": "IK_TO_FK", "frame_start": 1, "frame_end": 12}), "set by a driver",
        _chain_undriven),
    "switch parent of a limb built without": (
        _nothing, lambda obj, limb: api.switch_parent(obj, limb, 1),
        ("switch_parent", {"parent": 1}), "without Parent Switching",
        lambda obj, limb: api.build(obj, limb, both_sides=False, parent_switch=True)),
    "plant feet with no ground below": (
        _ground_aside, lambda obj, limb: api.plant_feet(obj, bpy.data.objects["Ground"]),
        ("plant_feet", {"ground": "Ground"}), "no ground below|not fully in IK", _ground_below),
}


def _refused(obj: bpy.types.Object, limb: str, case: str, through: str) -> None:
    _, call, operator, says, _ = CASES[case]
    with pytest.raises(api.RigError if through == "api" else RuntimeError, match=says):
        if through == "api":
            call(obj, limb)
        else:
            _run_operator(obj, limb, *operator)


def _done(obj: bpy.types.Object, limb: str, case: str, through: str) -> None:
    _, call, operator, _, fix = CASES[case]
    fix(obj, limb)
    if through == "api":
        call(obj, limb)
    else:
        _run_operator(obj, limb, *operator)


@pytest.mark.parametrize(("case", "through"), [(case, through) for case in CASES for through in ("api", "operator")
                                                if through == "api" or CASES[case][2] is not None])
def test_a_refusal_after_renames_leaves_the_records_as_they_were(case, through):
    obj = _straight_leg()
    limb = _renamed(obj, RENAMES)
    CASES[case][0](obj, limb)
    bpy.context.view_layer.update()
    before = _record(obj)
    _refused(obj, limb, case, through)
    assert differences(_record(obj), before, _tolerance(obj)) == []
    if CASES[case][4] is not None:
        _done(obj, limb, case, through)
        if case != "remove keying where keys play halved":
            _follow_renames(obj, RENAMES)


def test_bones_renamed_twice_between_refusals_are_followed_once_an_operation_is_done():
    obj = _straight_leg()
    limb = _renamed(obj, RENAMES)
    before = _record(obj)
    _refused(obj, limb, "switch parent of a limb built without", "api")
    assert differences(_record(obj), before, _tolerance(obj)) == []
    again = {new: f"{new}.ünd wieder" for new in RENAMES.values()}
    limb = _renamed(obj, again, limb)
    before = _record(obj)
    _refused(obj, limb, "switch parent of a limb built without", "operator")
    assert differences(_record(obj), before, _tolerance(obj)) == []
    api.build(obj, limb, both_sides=False)
    _follow_renames(obj, {old: again[new] for old, new in RENAMES.items()})


def test_undo_and_redo_after_a_refusal_give_back_the_file_the_refusal_left():
    """A refused operator pushes no undo step: Ctrl+Z takes back the user's renames, and Ctrl+Shift+Z gives back
    the file as the refusal left it, which only holds when the refusal changed nothing."""
    obj = _straight_leg()
    tolerance, name = _tolerance(obj), obj.name
    before = _record(obj)
    bpy.ops.ed.undo_push(message="before the user's step")
    limb = _renamed(obj, RENAMES)
    bpy.ops.ed.undo_push(message="the user's renames")
    renamed = _record(obj)
    _refused(obj, limb, "switch parent of a limb built without", "operator")
    left = _record(obj)
    assert differences(left, renamed, tolerance) == []
    bpy.ops.ed.undo()  # Blender's objects are new after an undo: found again by name
    assert differences(_record(bpy.data.objects[name]), before, tolerance) == []
    bpy.ops.ed.redo()
    assert differences(_record(bpy.data.objects[name]), left, tolerance) == []


def test_bake_from_its_button_after_the_last_chain_bone_was_renamed_bakes_the_limb():
    """The button names the limb as its record last saw it: the records brought up to date first, that name was
    no limb's any more, and Bake refused the limb it was pressed on."""
    obj = _straight_leg()
    limb = _renamed(obj, RENAMES)
    assert bpy.ops.ik_rigger.bake("EXEC_DEFAULT", True, direction="IK_TO_FK", frame_start=1, frame_end=12) == {
        "FINISHED"}
    keyed = {curve.data_path for curve in all_fcurves(obj)}
    assert all(f'pose.bones["{records.quoted(name)}"].rotation_quaternion' in keyed
               for name in (RENAMES["thigh.L"], limb))
    _follow_renames(obj, RENAMES)


@pytest.mark.parametrize("switching", [False, True])
def test_a_renamed_handle_parent_and_other_parent_are_followed_and_a_refusal_gives_them_back(switching):
    """The handle hangs from a bone named by hand (and, with Parent Switching, may follow a prop): renamed, the
    rig follows it (Blender renames parents and constraint targets), but the options kept the old names and a
    Rebuild refused them as no bones of the armature. Now they follow the rename, given back by a refusal."""
    obj = make_armature(leg_bones(bend=0.05) + [("prop", (0.5, 0.0, 1.0), (0.5, 0.0, 1.2), "root", False)])
    switch = {"parent_switch": True, "other_parent": "prop"} if switching else {}
    api.build(obj, "shin.L", both_sides=False, handle_parent_mode="BONE", handle_parent="root", **switch)
    limb = _renamed(obj, {"root": 'Wur"zel.001', "prop": "Stütze ñ"})
    if not switching:  # Switch Parent refuses a limb built without Parent Switching
        before = _record(obj)
        _refused(obj, limb, "switch parent of a limb built without", "operator")
        assert differences(_record(obj), before, _tolerance(obj)) == []
    api.build(obj, limb, both_sides=False)
    options = obj.ik_rigger.limbs[0].to_options()
    assert (options.handle_parent, options.other_parent) == ('Wur"zel.001', "Stütze ñ" if switching else "")
    handle = obj.data.bones[api.limbs(obj)[0].bones["HANDLE"]]
    if switching:
        assert api.parent_choices(obj, limb) == ['Origin (Wur"zel.001)', "Torso (hips)", "Other (Stütze ñ)"]
    else:
        assert handle.parent.name == 'Wur"zel.001'


def test_names_swapped_between_bones_are_given_back_by_a_refusal_and_followed_by_a_rebuild():
    """The thigh and shin swap names, and so do the foot and toe: a refusal leaves the records as they were; a
    rebuild finds the chain and the extremity named by hand under their new names, each name on its own bone."""
    obj = _straight_leg()
    bones = obj.data.bones
    for first, second in (("thigh.L", "shin.L"), ("foot.L", "toe.L")):
        bones[first].name = "swapped"
        bones[second].name = first
        bones["swapped"].name = second
    bones.active = bones["thigh.L"]  # the chain's last bone now
    before = _record(obj)
    _refused(obj, "thigh.L", "switch parent of a limb built without", "operator")
    assert differences(_record(obj), before, _tolerance(obj)) == []
    built = api.build(obj, "thigh.L", both_sides=False)[0]
    assert (built.chain, built.extremity) == (("shin.L", "thigh.L"), "toe.L")
    _follow_renames(obj, {"thigh.L": "shin.L", "shin.L": "thigh.L", "foot.L": "toe.L"})
