"""What a build writes for a new limb (its record, the handle's switches, the chain's colours, hinges and
hiding) is what a rebuild of it writes, and a new limb's build that fails gives all of it back."""

from __future__ import annotations

import json
from dataclasses import replace

import bpy
import pytest
from helpers import both_legs, make_armature, same, snapshot

from ik_rigger import api
from ik_rigger.rig import build, drivers, records, visibility

OPTIONS = {"hinge_joints": True, "shapes": False}  # stretch on: its target and reach are hidden


def _coloured(obj: bpy.types.Object) -> None:
    """The user's own colour and IK stretch on one chain bone of each leg, which the record keeps."""
    for name in ("thigh.L", "shin.R"):
        pose_bone = obj.pose.bones[name]
        pose_bone.color.palette = "THEME04"
        pose_bone.ik_stretch = 0.25


def _written(obj: bpy.types.Object) -> dict:
    """Every record value, switch (with its slider's range and overridability), colour, hinge and hiding
    a build writes, by limb (after an update: the drivers have set what they drive)."""
    bpy.context.view_layer.update()
    written = {}
    for limb in obj.ik_rigger.limbs:
        parts = records.resolve(obj, limb)
        listed = records.inventory(limb)
        handle = obj.pose.bones[limb.handle]
        switches = {key: (handle[key], handle.id_properties_ui(key).as_dict(),
                          handle.is_property_overridable_library(f'["{key}"]')) for key in handle.keys()}
        bones = {name: (bone.color.palette, bone.ik_stretch,
                        tuple(getattr(bone, f"{prefix}_{axis}") for prefix in ("lock_ik", "use_ik_limit")
                              for axis in "xyz"),
                        visibility.hidden_in_pose(obj, name), bone.custom_shape)
                 for name in (*listed.chain, *(made for made, _ in listed.made)) if (bone := obj.pose.bones[name])}
        written[limb.name] = {
            "record": (limb.uid, limb.extremity, limb.handle, limb.pole, limb.clone, listed,
                       [(item.name, item.palette, item.ik_stretch, json.loads(item.ik_settings or "{}"))
                        for item in limb.chain_states],
                       [(item.name, tuple(item.head), tuple(item.tail), item.roll) for item in limb.prebent],
                       limb.to_options()),
            "parts": (parts.made, parts.chain, parts.constraints, parts.missing),
            "switches": switches, "bones": bones}
    return written


def test_a_new_limb_writes_what_its_rebuild_writes():
    """A new limb's record and pose data are written without reading what a new limb cannot have had; a
    rebuild reads and writes all of it: both come out the same."""
    obj = make_armature(both_legs())
    _coloured(obj)
    api.build(obj, "shin.L", both_sides=True, **OPTIONS)
    new = _written(obj)
    states = new["shin.L"]["record"][6]
    assert [state[:3] for state in states] == [("thigh.L", "THEME04", pytest.approx(0.25)), ("shin.L", "DEFAULT", 0.0)]
    assert states[1][3]  # the hinged knee's own IK settings, kept
    assert any(hidden for *_, hidden, _ in new["shin.L"]["bones"].values())
    api.build(obj, "shin.L", both_sides=True, **OPTIONS)
    assert same(_written(obj), new)


def test_a_failing_build_of_new_limbs_gives_back_records_colours_hinges_and_numbers(monkeypatch):
    obj = make_armature(both_legs())
    _coloured(obj)
    before = snapshot(obj)
    rig = obj.ik_rigger
    numbers = (rig.next_uid, rig.active_limb_index, len(rig.limbs))
    hidden = {bone.name: visibility.hidden_in_pose(obj, bone.name) for bone in obj.pose.bones}

    def failing(*args, **kwargs):
        raise RuntimeError("injected after every stage")

    monkeypatch.setattr(build, "_set_version", failing)
    with pytest.raises(RuntimeError, match="injected"):
        api.build(obj, "shin.L", both_sides=True, **OPTIONS)
    monkeypatch.undo()
    assert same(snapshot(obj), before)
    assert (rig.next_uid, rig.active_limb_index, len(rig.limbs)) == numbers
    assert {bone.name: visibility.hidden_in_pose(obj, bone.name) for bone in obj.pose.bones} == hidden
    built = api.build(obj, "shin.L", both_sides=True, **OPTIONS)
    assert [limb.uid for limb in rig.limbs] == ["1", "2"] and rig.next_uid == 3
    assert rig.active_limb_index == 1 and [limb.name for limb in built] == ["shin.L", "shin.R"]


@pytest.mark.parametrize("names", [
    ((), (), ()),
    (("thigh.L", "shin.L"), (("foot_IK.L", "HANDLE"),), (("shin.L", "IK"),)),
    (('thi"gh\\', "schienbein.ü", "脛\u2028\x01"), (("fuß_IK", "HANDLE"), ("p\tole", "POLE")),
     (("schienbein.ü", 'I"K'),)),
])
def test_the_inventory_is_the_json_the_records_always_held(names):
    """The inventory is written out by hand for speed: it is exactly ``json.dumps`` of it, and reads back."""
    listed = records.Inventory(*names)
    chain, made, constraints = names
    expected = json.dumps({"chain": list(chain), "made": [list(pair) for pair in made],
                           "constraints": [list(pair) for pair in constraints]}, ensure_ascii=False)
    obj = make_armature(both_legs())
    limb = obj.ik_rigger.limbs.add()
    records.store_inventory(limb, listed, fresh=True)
    assert limb.inventory == expected
    assert records.inventory(limb) == listed


@pytest.mark.parametrize("given", [{}, {"shapes": False, "pole_line": False, "max_stretch": 1.0},
                                   {"chain_length": 3, "hinge_joints": True, "pole_distance": 2.5, "shapes": False}])
def test_a_new_record_stores_only_the_options_that_differ_and_reads_them_all_back(given):
    """Options are compared with their defaults once per set of values: each new record, of equal and of
    other values alike, stores those that differ and reads back every one."""
    obj = make_armature(both_legs())
    for _ in range(2):
        for values in (api.options(**given), api.options()):
            limb = obj.ik_rigger.limbs.add()
            limb.set_options(values, fresh=True)
            assert limb.to_options() == values
            differing = {name for name, value in vars(values).items() if value != getattr(api.options(), name)}
            assert {name for name in vars(values) if limb.is_property_set(name)} == differing
            assert differing == (set(given) if values != api.options() else set())


def test_the_limbs_a_build_returns_are_those_it_lists_afterwards():
    """``build_many`` tells what it built from its plans, asking each set of options once which parts it
    uses: the same limbs ``limbs`` finds on the rig, whatever the options, shared or each limb's own."""
    obj = make_armature(both_legs())
    plain = {"shapes": False, "pole_line": False, "max_stretch": 1.0}
    for requests in ([("shin.L", api.options(**plain)), ("shin.R", api.options(**plain))],
                     [("shin.L", api.options(foot_roll=True)), ("shin.R", api.options(use_pole=False))]):
        built = api.build_many(obj, requests)
        assert [replace(limb, notes=()) for limb in built] == api.limbs(obj)
        assert built[0].parts != built[1].parts or requests[0][1] == requests[1][1]


def test_a_constraint_settings_path_is_the_one_blender_gives():
    """The build writes a constraint's influence path itself (Blender's own looks for the constraint's bone
    along all of them): it is the path Blender gives, whatever the names hold, and its driver drives."""
    obj = make_armature(both_legs())
    api.build(obj, "shin.L")
    pose_bone = obj.pose.bones["thigh.L"]
    for bone, name in (("thigh.L", "Limit"), ('thi"gh\\ü', 'Li"mit\\')):
        pose_bone.name = bone
        constraint = pose_bone.constraints.new("LIMIT_ROTATION")
        constraint.name = name
        assert drivers.constraint_path(pose_bone.name, constraint.name, "influence") == constraint.path_from_id(
            "influence")
    parts = records.resolve(obj, obj.ik_rigger.limbs[0])
    paths = {drivers.constraint_path(owner.name, constraint.name, "influence"): constraint.type
             for owner, constraint in records.constraints_of(obj, parts)}
    driven = {curve.data_path for curve in obj.animation_data.drivers if curve.data_path.endswith(".influence")}
    assert driven <= set(paths) and {paths[path] for path in driven} == {"IK", "COPY_ROTATION"}
    obj.pose.bones[parts.handle]["ik_fk"] = 0.25
    bpy.context.view_layer.update()
    assert records.ik_constraint(obj, parts).influence == pytest.approx(0.25)


@pytest.mark.parametrize("where", ["ensure_property", "store_inventory", "hide_in_pose"])
def test_a_build_failing_part_way_through_a_limb_gives_back_everything(monkeypatch, where):
    """One undo gives back each new limb's chain, switches and constraints, logged before the first of
    them changes: a failure part way through the second limb's record leaves nothing of either."""
    from ik_rigger.rig import pose_pass

    obj = make_armature(both_legs())
    _coloured(obj)
    before = snapshot(obj)
    rig = obj.ik_rigger
    numbers = (rig.next_uid, rig.active_limb_index, len(rig.limbs))
    owner = {"ensure_property": records, "store_inventory": records, "hide_in_pose": pose_pass}[where]
    real = getattr(owner, where)
    calls = []

    def failing(*args, **kwargs):
        calls.append(args)
        if len(calls) == {"ensure_property": 4, "store_inventory": 2, "hide_in_pose": 3}[where]:  # the 2nd limb
            raise RuntimeError("injected part way")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, where, failing)
    with pytest.raises(RuntimeError, match="injected"):
        api.build(obj, "shin.L", both_sides=True, **OPTIONS)
    monkeypatch.undo()
    assert same(snapshot(obj), before)
    assert (rig.next_uid, rig.active_limb_index, len(rig.limbs)) == numbers
    assert not (obj.animation_data and obj.animation_data.drivers)
    assert not any(pose_bone.keys() for pose_bone in obj.pose.bones)
