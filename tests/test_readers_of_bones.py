"""What reads the user's bones: drivers and corrective shape keys.

Rigged as it is (a hidden chain where the bones do not run joint to joint), a leg's bones keep
their rests and a corrective shape key driven by the shin's local X rotation reads what it read
before the build. Fix Bone Orientation turns the bones: the build then warns, naming every
driver and shape key that reads a bone it turned (before, one line of Info, and the key read 0
where it read 0.9).
"""

from __future__ import annotations

import math

import bpy
from helpers import make_armature

from ik_rigger import api
from ik_rigger.core.notes import is_warning


def leg_with_tails_off() -> bpy.types.Object:
    """A leg whose shin points forward, off the ankle, as importers leave bones; the foot unconnected."""
    return make_armature([
        ("root", (0, 0, 0), (0, 0.5, 0), None, False),
        ("hips", (0, 0, 1.0), (0, 0, 1.2), "root", False),
        ("thigh.L", (0.2, 0, 1.0), (0.2, -0.05, 0.55), "hips", False),
        ("shin.L", (0.2, -0.05, 0.55), (0.2, -0.4, 0.5), "thigh.L", True),
        ("foot.L", (0.2, 0, 0.1), (0.2, -0.2, 0.0), "shin.L", False),
        ("toe.L", (0.2, -0.2, 0.0), (0.2, -0.3, 0.0), "foot.L", True),
    ], name="Leg", mode="OBJECT")


def _variable(driver: bpy.types.Driver, kind: str, obj: bpy.types.Object, *bones: str) -> bpy.types.DriverVariable:
    variable = driver.variables.new()
    variable.name = "var"
    variable.type = kind
    for target, bone in zip(variable.targets, bones):
        target.id = obj
        target.bone_target = bone
    return variable


def with_readers(obj: bpy.types.Object) -> tuple[bpy.types.Object, bpy.types.Object]:
    """A mesh with two corrective shape keys driven by the leg (the shin's local X rotation, the
    thigh-to-shin rotational difference), and an empty whose height reads the shin's own rotation."""
    mesh = bpy.data.meshes.new("Body")
    mesh.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [], [(0, 1, 2)])
    body = bpy.data.objects.new("Body", mesh)
    bpy.context.scene.collection.objects.link(body)
    body.shape_key_add(name="Basis")
    for name in ("knee_corrective", "knee_difference"):
        body.shape_key_add(name=name)
    keys = mesh.shape_keys
    driver = keys.key_blocks["knee_corrective"].driver_add("value").driver
    driver.type = "SCRIPTED"
    variable = _variable(driver, "TRANSFORMS", obj, "shin.L")
    variable.targets[0].transform_type = "ROT_X"
    variable.targets[0].transform_space = "LOCAL_SPACE"
    driver.expression = "var"
    driver = keys.key_blocks["knee_difference"].driver_add("value").driver
    driver.type = "SCRIPTED"
    _variable(driver, "ROTATION_DIFF", obj, "thigh.L", "shin.L")
    driver.expression = "var"
    empty = bpy.data.objects.new("Marker", None)
    bpy.context.scene.collection.objects.link(empty)
    driver = empty.driver_add("location", 2).driver
    driver.type = "SCRIPTED"
    variable = driver.variables.new()
    variable.name = "var"
    variable.targets[0].id = obj
    variable.targets[0].data_path = 'pose.bones["shin.L"].rotation_euler[0]'
    driver.expression = "var"
    # And the armature's own: a custom property of its object reading the shin's local rotation.
    obj["knee_bend"] = 0.0
    driver = obj.driver_add('["knee_bend"]').driver
    driver.type = "SCRIPTED"
    variable = _variable(driver, "TRANSFORMS", obj, "shin.L")
    variable.targets[0].transform_type = "ROT_X"
    variable.targets[0].transform_space = "LOCAL_SPACE"
    driver.expression = "var"
    return body, empty


def key_knee(obj: bpy.types.Object) -> None:
    """The knee bends 0.9 radians about the shin's own X by frame 10."""
    shin = obj.pose.bones["shin.L"]
    shin.rotation_mode = "XYZ"
    for frame, angle in ((1, 0.0), (10, 0.9)):
        shin.rotation_euler = (angle, 0.0, 0.0)
        shin.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 10


def values_at(body: bpy.types.Object, frame: int) -> dict[str, float]:
    bpy.context.scene.frame_set(frame)
    evaluated = body.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return {block.name: block.value for block in evaluated.data.shape_keys.key_blocks}


def _rig(obj: bpy.types.Object, **options) -> api.Limb:
    bpy.context.view_layer.objects.active = obj
    return api.build(obj, "shin.L", **options)[0]


def test_a_corrective_shape_key_reads_the_same_on_a_hidden_chain():
    obj = leg_with_tails_off()
    body, _empty = with_readers(obj)
    key_knee(obj)
    before = values_at(body, 10)
    assert math.isclose(before["knee_corrective"], 0.9, abs_tol=1e-4)
    limb = _rig(obj)
    assert not any("reads" in message for message in limb.warnings)
    after = values_at(body, 10)
    for name, value in before.items():
        assert math.isclose(after[name], value, abs_tol=1e-3), (name, value, after[name])


def test_fix_bone_orientation_names_every_driver_and_shape_key_reading_a_bone_it_turns():
    obj = leg_with_tails_off()
    with_readers(obj)
    key_knee(obj)
    limb = _rig(obj, fix_orientation=True)
    told = [message for message in limb.warnings if "reads other values" in message]
    assert len(told) == 1 and is_warning(told[0]), limb.warnings
    for reader in ("the shape key 'knee_corrective' of 'Body'", "the shape key 'knee_difference' of 'Body'",
                   "the driver of 'location' on 'Marker'", "the driver of '[\"knee_bend\"]' on 'Leg'", "'shin.L'"):
        assert reader in told[0], told[0]


def test_fix_bone_orientation_says_nothing_of_drivers_reading_bones_it_leaves():
    obj = leg_with_tails_off()
    body, empty = with_readers(obj)
    for block in body.data.shape_keys.key_blocks[1:]:
        block.driver_remove("value")
    empty.animation_data.drivers[0].driver.variables[0].targets[0].data_path = 'pose.bones["toe.L"].rotation_euler[0]'
    obj.driver_remove('["knee_bend"]')
    limb = _rig(obj, fix_orientation=True)
    assert not [message for message in limb.warnings if "reads other values" in message]
