"""A rebuild changes what it is asked to and keeps the rest, and no build leaves a dependency cycle.

README's own call after Auto-Rig, ``api.build(obj, built[0].name, both_sides=True,
pole_parent="HANDLE")``, on the glTF Fox (tests/data) at the importer's default bone shapes and
with tails on the next joint: each hind leg rigged with 3 bones, its toe as extremity, stays so,
the other side keeping its own options; a chain made shorter or longer by a rebuild leaves no
dependency cycle, not even for a moment (Blender prints each, and would evaluate the rig wrongly).
"""

from __future__ import annotations

from dataclasses import asdict

import bpy
import pytest
from helpers import both_legs, make_armature, same, set_active_bone, snapshot
from mathutils import Vector
from option_matrix import no_cycles
from test_detect_real import FOX_LIMBS, assert_handles_move_chain_ends, import_gltf

from ik_rigger import api
from ik_rigger.core.errors import RigError
from ik_rigger.rig import records

LEGS = {chain[-1]: (chain, end) for _, _, chain, end in FOX_LIMBS[:2]}
SHAPES = [pytest.param({}, id="default-bone-shapes"), pytest.param({"bone_heuristic": "TEMPERANCE"}, id="temperance")]


def _fox(shapes: dict[str, str]) -> tuple[bpy.types.Object, list[api.Limb]]:
    obj = import_gltf("gltf_fox.glb", **shapes)
    with no_cycles("Auto-Rig"):
        built = api.auto_rig(obj)
    return obj, built


def _options(obj: bpy.types.Object) -> dict[str, dict]:
    return {limb.name: asdict(limb.to_options()) for limb in obj.ik_rigger.limbs}


def _ik_counts(obj: bpy.types.Object) -> dict[str, int]:
    """Each IK's chain count by the limb it solves, named by the user's last chain bone: on a limb whose
    bones do not run joint to joint the IK sits on its hidden chain's last JOINT bone."""
    counts = {}
    for pose_bone in obj.pose.bones:
        for constraint in pose_bone.constraints:
            if constraint.type == "IK":
                limb = obj.ik_rigger.limb_of(pose_bone.name)
                counts[limb.name if limb is not None else pose_bone.name] = constraint.chain_count
    return counts


@pytest.mark.parametrize("shapes", SHAPES)
def test_readmes_rebuild_keeps_each_legs_chain_extremity_and_options(shapes):
    obj, built = _fox(shapes)
    assert built[0].name in LEGS and built[1].name in LEGS
    left, right = built[0].name, built[1].name
    # The right leg tuned on its own first: Both Sides keeps what it was not asked to change.
    api.build(obj, right, pole_distance=1.5)
    was = _options(obj)
    assert was[right]["pole_distance"] == 1.5 and was[right]["chain_length"] == 3
    with no_cycles("README's rebuild"):
        again = api.build(obj, left, both_sides=True, pole_parent="HANDLE")
    assert [(limb.name, limb.chain, limb.extremity) for limb in again] == [
        (name, LEGS[name][0], LEGS[name][1]) for name in (left, right)]
    now = _options(obj)
    for name in (left, right):
        assert now[name] == {**was[name], "pole_parent": "HANDLE"}, name
        limb = api.limbs(obj)[[item.name for item in obj.ik_rigger.limbs].index(name)]
        assert obj.data.bones[limb.bones["POLE"]].parent.name == limb.bones["HANDLE"]
    assert _ik_counts(obj) == {**{name: 3 for name in LEGS}, **{limb.name: 2 for limb in built[2:]}}
    assert_handles_move_chain_ends(obj, _ik_counts(obj))


def test_a_rebuild_naming_nothing_changes_nothing_it_records():
    obj, built = _fox({})
    was = _options(obj)
    with no_cycles("a rebuild"):
        api.build(obj, built[0].name)
    assert _options(obj) == was
    with pytest.raises(RigError, match="unknown build option 'pole_parnt'"):
        api.build(obj, built[0].name, pole_parnt="HANDLE")
    assert _options(obj) == was


@pytest.mark.parametrize("shapes", SHAPES)
def test_a_chain_made_shorter_then_longer_leaves_no_dependency_cycle(shapes):
    """The hind legs' REACH (the stretch limit's centre) hangs from the chain's parent: a chain of 3
    made 2 puts it under the bone the old IK solved, and Blender saw that with the old IK."""
    obj = import_gltf("gltf_fox.glb", **shapes)
    bare = snapshot(obj)
    with no_cycles("Auto-Rig"):
        built = api.auto_rig(obj)
    was = _options(obj)
    with no_cycles("a chain made shorter"):
        shorter = api.build(obj, built[0].name, both_sides=True, chain_length=2)
    assert [limb.chain for limb in shorter] == [LEGS[limb.name][0][1:] for limb in shorter]
    # The bone left out is the user's again: no stretch driven by the handle, its colour back.
    for limb in shorter:
        dropped = LEGS[limb.name][0][0]
        assert obj.animation_data.drivers.find(f'pose.bones["{dropped}"].ik_stretch') is None
        assert obj.pose.bones[dropped].color.palette == "DEFAULT"
    assert _options(obj)[built[0].name] == {**was[built[0].name], "chain_length": 2}
    with no_cycles("a chain made longer"):
        longer = api.build(obj, built[0].name, both_sides=True, chain_length=3)
    assert [limb.chain for limb in longer] == [LEGS[limb.name][0] for limb in longer]
    assert _options(obj) == was
    assert_handles_move_chain_ends(obj, _ik_counts(obj))
    with no_cycles("removing"):
        for limb in built:
            api.remove(obj, limb.name)
    assert same(snapshot(obj), bare)


def test_a_rebuild_refused_changes_nothing():
    obj, built = _fox({})
    was, counts = _options(obj), _ik_counts(obj)
    with pytest.raises(RigError):
        api.build(obj, built[0].name, chain_length=255)
    assert _options(obj) == was and _ik_counts(obj) == counts


def test_build_ik_limb_from_python_keeps_what_it_is_not_given():
    """``bpy.ops.ik_rigger.build_ik(both_sides=True, pole_parent="HANDLE")`` on a rigged leg, as
    docs/rigging.md calls it: the operator passes on only the options set, so the legs stay 3 long."""
    obj, built = _fox({})
    was = _options(obj)
    set_active_bone(obj, built[0].name)
    with no_cycles("Build IK Limb"):
        assert bpy.ops.ik_rigger.build_ik(both_sides=True, pole_parent="HANDLE") == {"FINISHED"}
    assert _options(obj) == {name: {**options, "pole_parent": "HANDLE"} if name in LEGS else options
                             for name, options in was.items()}
    assert _ik_counts(obj) == {**{name: 3 for name in LEGS}, **{limb.name: 2 for limb in built[2:]}}


def _stray(obj: bpy.types.Object) -> list[tuple[str, str]]:
    """Constraints on the armature that no limb's record lists (the Fox has none of its own)."""
    ours = {pair for limb in obj.ik_rigger.limbs for pair in records.resolve(obj, limb).constraints}
    return [(pose_bone.name, constraint.name) for pose_bone in obj.pose.bones for constraint in pose_bone.constraints
            if (pose_bone.name, constraint.name) not in ours]


def _follows(obj: bpy.types.Object, name: str) -> list[str]:
    return [constraint.subtarget for constraint in obj.pose.bones[name].constraints
            if constraint.type == "COPY_TRANSFORMS"]


def test_a_hidden_chain_made_shorter_longer_off_and_on_leaves_no_cycle_nor_stray_constraint():
    """The Fox's legs at the importer's defaults follow hidden chains: the bone a shorter chain leaves out
    copies no FOLLOW bone of the new chain (which hangs below it, a cycle); a longer chain and the rebuilds
    that turn the hidden chain off (Fix Bone Orientation) and on again leave nothing behind."""
    obj = import_gltf("gltf_fox.glb")
    bare = snapshot(obj)
    with no_cycles("Auto-Rig"):
        built = api.auto_rig(obj)
    legs = [limb for limb in built if limb.name in LEGS]
    assert all(records.resolve(obj, obj.ik_rigger.limb_of(limb.name)).solver for limb in legs)
    steps = [("shorter", {"chain_length": 2}, True), ("longer", {"chain_length": 3}, True),
             ("off", {"fix_orientation": True}, False), ("on", {"fix_orientation": False}, None)]
    for what, options, hidden_chain in steps:
        with no_cycles(f"a hidden chain made {what}"):
            again = api.build(obj, legs[0].name, both_sides=True, **options)
        assert [limb.name for limb in again] == [limb.name for limb in legs]
        assert _stray(obj) == []
        for limb in again:
            chain = LEGS[limb.name][0]
            parts = records.resolve(obj, obj.ik_rigger.limb_of(limb.name))
            assert tuple(parts.chain) == limb.chain == chain[len(chain) - len(limb.chain):], what
            assert obj.ik_rigger.limb_of(limb.name).name == limb.name
            for name in chain[:len(chain) - len(limb.chain)]:
                assert not obj.pose.bones[name].constraints, (what, name)
            if hidden_chain is not None:
                assert bool(parts.solver) == hidden_chain, what
            assert [len(_follows(obj, name)) for name in limb.chain] == [1 if parts.solver else 0] * len(limb.chain)
        assert_handles_move_chain_ends(obj, _ik_counts(obj))
    with no_cycles("removing"):
        for limb in built:
            api.remove(obj, limb.name)
    assert same(snapshot(obj), bare)


def test_a_hidden_chain_made_shorter_that_fails_gives_back_everything_without_a_cycle(monkeypatch):
    """The Copy Transforms taken off the bone left out comes back once its FOLLOW bone is the old chain's
    again, and the JOINT bones the rebuild deleted come back with their IK stretch driven."""
    from ik_rigger.rig import build

    obj = import_gltf("gltf_fox.glb")
    built = api.auto_rig(obj)
    before = snapshot(obj)

    def failing(*args, **kwargs):
        raise RuntimeError("injected after every stage")

    monkeypatch.setattr(build, "_set_version", failing)
    with no_cycles("a rebuild given back"), pytest.raises(RuntimeError, match="injected"):
        api.build(obj, built[0].name, both_sides=True, chain_length=2)
    monkeypatch.undo()
    assert same(snapshot(obj), before)
    dropped = LEGS[built[0].name][0][0]
    assert _follows(obj, dropped) == [records.resolve(obj, obj.ik_rigger.limb_of(built[0].name)).made["FOLLOW.0"]]
    with no_cycles("the rebuild again"):
        api.build(obj, built[0].name, both_sides=True, chain_length=2)
    assert not obj.pose.bones[dropped].constraints


def test_a_rebuild_that_turns_a_hidden_chain_on_leaves_no_cycle_nor_stray_constraint():
    """A leg rigged on bones that run joint to joint, its thigh then turned off its joint in Edit Mode: the
    rebuild moves the IK onto a hidden chain the bones follow, and Remove gives everything else back."""
    obj = make_armature(both_legs())
    bare = snapshot(obj)
    with no_cycles("a build on the bones"):
        api.build(obj, "shin.L")
    assert not records.resolve(obj, obj.ik_rigger.limb_of("shin.L")).solver
    bpy.ops.object.mode_set(mode="EDIT")
    thigh = obj.data.edit_bones["thigh.L"]
    obj.data.edit_bones["shin.L"].use_connect = False
    thigh.tail = thigh.head + (thigh.tail - thigh.head).cross(Vector((1.0, 0.0, 0.0))).normalized() * 0.1
    bpy.ops.object.mode_set(mode=bare["mode"])
    with no_cycles("a rebuild on a hidden chain"):
        limb = api.build(obj, "shin.L")[0]
    parts = records.resolve(obj, obj.ik_rigger.limb_of("shin.L"))
    assert parts.solver and limb.name == "shin.L" and limb.chain == ("thigh.L", "shin.L") == tuple(parts.chain)
    assert _stray(obj) == []
    assert {name: [constraint.type for constraint in obj.pose.bones[name].constraints] for name in limb.chain} == {
        "thigh.L": ["COPY_TRANSFORMS"], "shin.L": ["COPY_TRANSFORMS"]}
    assert_handles_move_chain_ends(obj, _ik_counts(obj))
    with no_cycles("removing"):
        api.remove(obj, "shin.L")
    after = snapshot(obj)
    # All given back but the rest the user edited (the thigh's tail, the shin no longer connected).
    assert same({key: value for key, value in after.items() if key != "bones"},
                {key: value for key, value in bare.items() if key != "bones"})
    assert same({name: bone[3:4] + bone[5:] for name, bone in after["bones"].items()},
                {name: bone[3:4] + bone[5:] for name, bone in bare["bones"].items()})
