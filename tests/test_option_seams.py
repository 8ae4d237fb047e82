"""Options that break each other: each pair a tester found, on Rigify's metarigs and on invented skeletons.

Each test reads the evaluated pose (or the rig's records) after building with the options
together, with tolerances relative to the chain's length.
"""

from __future__ import annotations

import math

import addon_utils
import bpy
import pytest
from helpers import chain_length, evaluate, rest, rotation_degrees
from mathutils import Vector

from ik_rigger import api

# What the IK solver leaves of a reachable target, as a fraction of the chain.
REACH_TOLERANCE = 1e-4


def metarig(kind: str = "human") -> bpy.types.Object:
    """Rigify's ``kind`` metarig ("human", "wolf"...), active, in Object mode."""
    addon_utils.enable("rigify", default_set=True)
    getattr(bpy.ops.object, f"armature_{kind}_metarig_add")()
    obj = bpy.context.active_object
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def tip(matrix, obj: bpy.types.Object, name: str) -> Vector:
    return matrix @ Vector((0.0, obj.data.bones[name].length, 0.0))


@pytest.mark.parametrize("stretch", [0.0, 1.0])
def test_follow_handle_rotation_rests_untwisted_and_reaches(stretch):
    """The IK's Rotation makes the shin take its target's orientation: the target rests as the shin does,
    so the leg rests as built, and a handle carried with an FK pose brings the leg to that pose."""
    obj = metarig()
    limb = api.build(obj, "shin.L", use_rotation=True)[0]
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    handle["stretch"] = stretch
    at_rest = rest(obj)
    posed = evaluate(obj)
    for name in ("thigh.L", "shin.L", "foot.L"):
        assert rotation_degrees(posed[name], at_rest[name]) < 0.01, name
        assert (posed[name].translation - at_rest[name].translation).length < 1e-5
    length = chain_length(obj, limb.chain)
    for thigh, shin in ((30.0, -40.0), (-20.0, 60.0)):
        handle["ik_fk"] = 0.0
        for name, angle in (("thigh.L", thigh), ("shin.L", shin)):
            obj.pose.bones[name].rotation_mode = "XYZ"
            obj.pose.bones[name].rotation_euler = (math.radians(angle), 0.0, 0.0)
        fk = evaluate(obj)
        for name in ("thigh.L", "shin.L"):
            obj.pose.bones[name].rotation_euler = (0.0, 0.0, 0.0)
        handle["ik_fk"] = 1.0
        handle.matrix = fk["shin.L"] @ at_rest["shin.L"].inverted() @ at_rest[handle.name]
        ik = evaluate(obj)
        assert (tip(ik["shin.L"], obj, "shin.L") - tip(fk["shin.L"], obj, "shin.L")).length < REACH_TOLERANCE * length
        assert rotation_degrees(ik["shin.L"], fk["shin.L"]) < 0.01
        if stretch == 0.0:  # stretched, the solver may reach the same end with a longer thigh, turned less
            assert rotation_degrees(ik["thigh.L"], fk["thigh.L"]) < 0.01


@pytest.mark.parametrize("kind", ["human", "wolf"])
def test_fix_orientation_leaves_bones_outside_the_chain_alone(kind):
    """A chain of 3 from the shin takes in the bone the thigh hangs from, whose tail starts the spine
    above it: fixing the chain's orientation keeps that tail, so no bone outside the chain moves."""
    obj = metarig(kind)
    before, posed_before = rest(obj), evaluate(obj)
    limb = api.build(obj, "shin.L", chain_length=3, fix_orientation=True)[0]
    assert len(limb.chain) == 3 and any("kept their tail" in note for note in limb.notes)
    after, posed = rest(obj), evaluate(obj)
    length = chain_length(obj, limb.chain)
    outside = set(before) - set(limb.chain)
    assert outside and outside <= set(after)
    for name in outside:  # within what Edit mode's round trip leaves of any bone
        assert rotation_degrees(after[name], before[name]) < 0.01, name
        assert (after[name].translation - before[name].translation).length < 1e-4 * length, name
        assert (tip(after[name], obj, name) - tip(before[name], obj, name)).length < 1e-4 * length, name
        assert rotation_degrees(posed[name], posed_before[name]) < 0.01, name
        assert (posed[name].translation - posed_before[name].translation).length < 1e-4 * length, name


@pytest.mark.parametrize("kind, last", [("human", "shin.L"), ("wolf", "shin.L"), ("human", "forearm.L")])
def test_stretch_leaves_a_chain_root_that_is_no_segment_unscaled_and_reaches(kind, last):
    """A chain of 3 from the shin or forearm takes in the hips (which carry the spine and the other leg)
    or the shoulder, neither a segment of the limb: at full stretch only the limb's segments
    stretch, so the body keeps its size and the chain's end reaches the handle."""
    obj = metarig(kind)
    limb = api.build(obj, last, chain_length=3)[0]
    root, middle = limb.chain[:2]
    assert any(note.startswith(f"'{root}' does not stretch") for note in limb.notes)
    at_rest = rest(obj)
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    handle["stretch"] = 1.0
    length = chain_length(obj, limb.chain)
    start, end = at_rest[root].translation, tip(at_rest[last], obj, last)
    for share in (0.7, 0.9, 1.2):
        target = start.lerp(end, share)
        matrix = at_rest[handle.name].copy()
        matrix.translation = target + (at_rest[handle.name].translation - end)
        handle.matrix = matrix
        posed = evaluate(obj)
        assert (tip(posed[last], obj, last) - target).length < REACH_TOLERANCE * length, share
        assert tuple(posed[root].to_scale()) == pytest.approx((1.0, 1.0, 1.0), abs=1e-5)
        if share > 1.0:
            assert posed[middle].to_scale()[1] > 1.1 and posed[last].to_scale()[1] > 1.1


def test_both_sides_mirrors_every_bone_an_option_names():
    """Both Sides gives the other side's limb the mirrored bone of every option that names one,
    Other Parent too: the right foot's handle follows the right hand when switched to it."""
    obj = metarig()
    left, right = api.build(obj, "shin.L", both_sides=True, parent_switch=True, other_parent="hand.L",
                            extremity_mode="BONE", extremity_name="foot.L")
    assert right.chain[-1] == "shin.R" and right.extremity == "foot.R"
    assert api.parent_choices(obj, "shin.R")[-1] == "Other (hand.R)"
    api.switch_parent(obj, "shin.R", "Other")
    api.switch_parent(obj, "shin.L", "Other")
    length = chain_length(obj, right.chain)
    before = evaluate(obj)
    obj.pose.bones["upper_arm.R"].rotation_mode = "XYZ"
    obj.pose.bones["upper_arm.R"].rotation_euler = (0.0, 0.0, math.radians(30.0))
    posed = evaluate(obj)
    for limb, moved in ((right, True), (left, False)):
        handle = limb.bones["HANDLE"]
        shift = (posed[handle].translation - before[handle].translation).length
        assert (shift > 0.05 * length) == moved, (handle, shift)


def test_an_option_naming_a_renamed_extremity_follows_the_rename():
    """The record keeps the options a limb was built with; one naming the extremity follows its rename,
    so rebuilding from the record still finds it."""
    obj = metarig()
    api.build(obj, "shin.L", extremity_mode="BONE", extremity_name="foot.L")
    obj.data.bones["foot.L"].name = "Foot_Left"
    api.upgrade(obj)  # what every operator and build does first: the records follow renames
    limb = api.limbs(obj)[0]
    assert limb.extremity == "Foot_Left"
    record = obj.ik_rigger.limbs[0]
    assert record.extremity_name == "Foot_Left"
    rebuilt = api.build(obj, "shin.L", **{name: getattr(record.to_options(), name)
                                          for name in ("extremity_mode", "extremity_name")})[0]
    assert rebuilt.extremity == "Foot_Left"


def test_planting_feet_that_already_stand_on_flat_ground_moves_nothing():
    """The metarig's legs stand nearly straight (past the 99.5% a planted leg is given): planting
    them where they stand must not lower the hips to bend them."""
    from test_ground import plane

    obj = metarig()
    api.build(obj, "shin.L", both_sides=True)
    ground = plane()
    length = chain_length(obj, ("thigh.L", "shin.L"))
    before = evaluate(obj)
    result = api.plant_feet(obj, ground)
    after = evaluate(obj)
    assert sorted(result.feet) == ["shin.L", "shin.R"]
    assert result.drop < 1e-6 * length
    for name, matrix in before.items():
        assert (after[name].translation - matrix.translation).length < 1e-6 * length, name
        assert (tip(after[name], obj, name) - tip(matrix, obj, name)).length < 1e-6 * length, name


OLD_CONFIG = """
[defaults]
use_stretch = true

[[armature]]
name = "*"

[[armature.limb]]
last = "shin.L"
extremity_mode = "BONE"
extremity = "heel.02.L"
"""


def test_a_config_and_a_script_written_for_the_previous_release_still_rig():
    """0.1's keys read as the options they became (``extremity`` is ``extremity_name``; ``use_stretch``
    gave way to the handle's Stretch), each with a note naming what to write now."""
    from ik_rigger.batch.command import config_schema
    from ik_rigger.limb.config import parse_config

    config = parse_config(OLD_CONFIG, config_schema(), "rig.toml")
    limb = config.armatures[0].limbs[0]
    assert limb.options.extremity_name == "heel.02.L"
    assert any("'extremity' is read as 'extremity_name'" in note for note in config.notes)
    assert any("'use_stretch'" in note and "max_stretch" in note for note in config.notes)
    obj = metarig()
    with pytest.warns(DeprecationWarning, match="extremity_name"):
        api.options(extremity="heel.02.L")
    built = api.build(obj, "shin.L", extremity_mode="BONE", extremity="heel.02.L")[0]
    assert built.extremity == "heel.02.L" and any("extremity_name" in note for note in built.notes)
    # The named bone is the one planted: it turns with the handle, the automatic foot does not.
    handle = obj.pose.bones[built.bones["HANDLE"]]
    before = evaluate(obj)
    handle.rotation_mode = "XYZ"
    handle.rotation_euler = (0.0, 0.0, math.radians(40.0))
    posed = evaluate(obj)
    assert rotation_degrees(posed["heel.02.L"], before["heel.02.L"]) == pytest.approx(40.0, abs=0.1)
    with pytest.raises(api.RigError, match="both set the option extremity_name"):
        api.build(obj, "shin.L", extremity="foot.L", extremity_name="foot.L")


@pytest.mark.parametrize("values, both_sides, message", [
    ({"chain_length": 2.5}, False, r"chain_length must be a whole number, not 2\.5"),
    ({"chain_length": 2.5}, True, r"chain_length must be a whole number, not 2\.5"),
    ({"chain_length": True}, False, "chain_length must be a whole number, not True"),
    ({"use_pole": 1}, False, "use_pole must be true or false, not 1"),
    ({"fix_orientation": "yes"}, True, "fix_orientation must be true or false, not 'yes'"),
    ({"pole_distance": math.inf}, False, "pole_distance must be a finite number, not inf"),
    ({"max_stretch": math.nan}, True, "max_stretch must be a finite number, not nan"),
    ({"extremity_name": 3}, False, "extremity_name must be text, not 3"),
])
def test_a_value_of_the_wrong_type_is_refused_naming_its_option(values, both_sides, message):
    """Each option's declared type is checked before anything reads it, by the API as by the config."""
    from helpers import same, snapshot

    obj = metarig()
    before = snapshot(obj)
    with pytest.raises(api.RigError, match=message):
        api.build(obj, "shin.L", both_sides=both_sides, **values)
    assert same(snapshot(obj), before)


def test_an_imported_limb_whose_tails_point_elsewhere_reaches_at_full_stretch():
    """glTF's fox keeps its file's joint axes: no tail lies on the next joint. Each limb is solved on a
    hidden chain from joint to joint, whose segments stretch, and the end reaches the handle."""
    from test_imported import import_gltf

    from ik_rigger.rig import records, solver

    obj = import_gltf("gltf_fox.glb", "BLENDER")
    limbs = api.auto_rig(obj, animation="IGNORE")
    assert len(limbs) == 4
    for limb in limbs:
        at_rest = rest(obj)
        handle = obj.pose.bones[limb.bones["HANDLE"]]
        handle["stretch"] = 1.0
        parts = records.resolve(obj, obj.ik_rigger.limb_of(limb.name))
        last, length, point = limb.chain[-1], chain_length(obj, parts.solver), solver.end_point(obj, parts)
        start, end = at_rest[limb.chain[0]].translation, at_rest[last] @ point
        for share in (0.7, 1.2):
            target = start.lerp(end, share)
            matrix = at_rest[handle.name].copy()
            matrix.translation = target + (at_rest[handle.name].translation - end)
            handle.matrix = matrix
            assert (evaluate(obj)[last] @ point - target).length < REACH_TOLERANCE * length, (last, share)
        handle.matrix_basis.identity()
        handle["stretch"] = 0.0


def test_a_rebuild_takes_the_stretch_off_a_bone_an_earlier_build_stretched():
    """A limb built before the hips stopped stretching has the handle's driver on them: rebuilding it
    takes the driver off and gives the hips their own IK stretch back."""
    from ik_rigger.core.model import Driven
    from ik_rigger.parts.stretch import STRETCH
    from ik_rigger.rig import drivers

    obj = metarig()
    obj.pose.bones["spine"].ik_stretch = 0.25
    limb = api.build(obj, "shin.L", chain_length=3)[0]
    handle = limb.bones["HANDLE"]
    spine = obj.pose.bones["spine"]
    drivers.drive(obj, spine, "ik_stretch", Driven(((STRETCH, handle),)))  # as the earlier build did
    obj.pose.bones[handle][STRETCH] = 1.0
    evaluate(obj)
    assert drivers.drives_stretch(obj, spine, handle) and spine.ik_stretch == pytest.approx(1.0)
    api.build(obj, "shin.L", chain_length=3)
    assert not drivers.drives_stretch(obj, spine, handle)
    assert spine.ik_stretch == pytest.approx(0.25)
    assert evaluate(obj)["spine"].to_scale()[1] == pytest.approx(1.0, abs=1e-5)
    api.remove(obj, "shin.L")
    assert spine.ik_stretch == pytest.approx(0.25) and not drivers.drives_stretch(obj, spine, handle)


def test_the_batch_rigs_by_a_config_of_the_previous_release_and_says_what_to_rename(tmp_path):
    """Run as a user runs it: the old keys rig as today's options and the summary names the new key."""
    from helpers import both_legs
    from test_batch import run, save_character

    source = save_character(tmp_path / "a.blend", bones=both_legs())
    config = tmp_path / "rig.toml"
    config.write_text('[[armature]]\nname = "Rig"\ndetect = false\n\n[[armature.limb]]\nlast = "shin.L"\n'
                      'extremity_mode = "BONE"\nextremity = "toe.L"\nuse_stretch = true\n')
    result = run(str(source), "--out", str(tmp_path / "out"), "--config", str(config))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "'extremity' is read as 'extremity_name'" in result.stdout
    assert "'use_stretch' is an option of an earlier release" in result.stdout
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "a.blend"))
    obj = bpy.data.objects["Rig"]
    assert obj.ik_rigger.limbs["shin.L"].extremity == "toe.L"
    assert obj.ik_rigger.limbs["shin.L"].extremity_name == "toe.L"


@pytest.mark.parametrize("values, option", [
    ({"extremity_mode": "BONE", "extremity_name": "paw.L"}, "extremity_name"),
    ({"handle_parent_mode": "BONE", "handle_parent": "master"}, "handle_parent"),
    ({"parent_switch": True, "other_parent": "prop"}, "other_parent"),
])
def test_a_missing_bone_an_option_names_is_refused_naming_the_option(values, option):
    """Every option that names a bone is checked the same way, from its declaration, where it applies."""
    from helpers import same, snapshot

    obj = metarig()
    before = snapshot(obj)
    missing = next(value for key, value in values.items() if key == option)
    with pytest.raises(api.RigError, match=rf"'{missing}': is not a bone of this armature.*\(option {option}\)"):
        api.build(obj, "shin.L", **values)
    assert same(snapshot(obj), before)
    assert api.build(obj, "shin.L", **{key: value for key, value in values.items() if key == option})
