"""The newest refusals and paths, each as a character set up for it and the call the API and the UI make:
a control deleted by hand (the pole, the IK's target, the parent socket), a constraint of the user's holding
a control off, a stray key beyond the frames a build keeps, bones rolled off their hinge (a hidden chain),
names at Blender's 63-byte limit (Both Sides)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import bpy
from helpers import both_legs, chain_length, evaluate, leg_bones, make_armature, set_active_bone
from mathutils import Euler
from test_hostile_held import _held_here

from ik_rigger import api
from ik_rigger.core.naming import MAX_NAME_BYTES, clipped

CHAIN = ["thigh.L", "shin.L", "foot.L"]


@dataclass(frozen=True)
class Case:
    """A character made for the call (the armature, in Pose mode and active), the API's call, the
    operator's (the limb's bone active), and what must come of them: a refusal (its words, a regular
    expression) or a check on the result."""

    make: Callable[[], bpy.types.Object]
    by_api: Callable[[bpy.types.Object], object]
    by_ui: Callable[[], object]
    refusal: str = ""
    works: Callable[[bpy.types.Object], None] | None = None
    builds: bool = False  # builds (Edit mode): refused in a hidden collection, naming it
    in_object_mode: bool = True  # its operator works in Object mode too
    in_edit_mode: bool = False  # and in Edit mode


def _limb(obj: bpy.types.Object, name: str = "shin.L"):
    return next(limb for limb in api.limbs(obj) if limb.name == name)


def _rigged(**options) -> bpy.types.Object:
    obj = make_armature(both_legs())
    api.build(obj, "shin.L", both_sides=True, **options)
    set_active_bone(obj, "shin.L")
    return obj


def _deleted(role: str, **options) -> Callable[[], bpy.types.Object]:
    def make() -> bpy.types.Object:
        floor()
        obj = _rigged(**options)
        bpy.ops.object.mode_set(mode="EDIT")
        obj.data.edit_bones.remove(obj.data.edit_bones[_limb(obj).bones[role]])
        bpy.ops.object.mode_set(mode="POSE")
        obj.pose.bones[_limb(obj).bones["HANDLE"]]["ik_fk"] = 0.0
        for name, turn in zip(CHAIN, [(0.5, 0.3, 0.6), (-0.6, 0.0, 0.0), (0.2, 0.1, 0.0)]):
            obj.pose.bones[name].rotation_quaternion = Euler(turn).to_quaternion()
            obj.pose.bones[name].keyframe_insert("rotation_quaternion", frame=1)
        return obj

    return make


def floor() -> bpy.types.Object:
    found = bpy.data.objects.get("Floor")
    if found is not None:
        return found
    mesh = bpy.data.meshes.new("Floor")
    mesh.from_pydata([(-5, -5, 0.2), (5, -5, 0.2), (5, 5, 0.2), (-5, 5, 0.2)], [], [(0, 1, 2, 3)])
    made = bpy.data.objects.new("Floor", mesh)
    bpy.context.scene.collection.objects.link(made)
    return made


def _held(ik: float = 0.0) -> bpy.types.Object:
    """The left handle held where it stands by a Limit Location of the user's, the leg keyed in FK, its
    switch at ``ik``; a floor under the feet."""
    floor()
    obj = _deleted("POLE_LINE")()
    handle = _limb(obj).bones["HANDLE"]
    _held_here(obj, handle).name = "Held"
    for name, turn in zip(CHAIN, [(0.5, 0.1, 0.05), (-0.7, 0.0, 0.0), (0.2, 0.1, 0.0)]):
        obj.pose.bones[name].rotation_quaternion = Euler(turn).to_quaternion()
        obj.pose.bones[name].keyframe_insert("rotation_quaternion", frame=5)
    obj.pose.bones[handle]["ik_fk"] = ik
    return obj


def _chain_held() -> bpy.types.Object:
    """The left leg keyed in FK, its shin aimed at a prop by a Stretch To of the user's."""
    obj = _held()
    obj.pose.bones[_limb(obj).bones["HANDLE"]].constraints["Held"].mute = True
    prop = bpy.data.objects.new("Prop", None)
    bpy.context.scene.collection.objects.link(prop)
    prop.location = (0.3, -0.2, 0.1)
    reach = obj.pose.bones["shin.L"].constraints.new("STRETCH_TO")
    reach.name, reach.target = "Reach", prop
    return obj


def _stray_key(frame: int = 100000) -> bpy.types.Object:
    """Two legs keyed on frames 1 and 9, and one key slipped to ``frame``."""
    obj = make_armature(both_legs())
    shin = obj.pose.bones["shin.L"]
    for at, turn in ((1, 0.1), (9, 0.4)):
        shin.rotation_quaternion = Euler((turn, 0.0, 0.0)).to_quaternion()
        shin.keyframe_insert("rotation_quaternion", frame=at)
    shin.keyframe_insert("rotation_quaternion", frame=frame)
    bpy.context.scene.frame_set(1)
    set_active_bone(obj, "shin.L")
    return obj


KEPT_STRAY = 1200  # past the gap that makes a key stray, within the frames a build keeps


def _stray_key_kept(obj: bpy.types.Object) -> None:
    """The motion kept up to the stray key: the left handle keyed on the frames between, up to it."""
    from ik_rigger.rig.animation import fcurve_owners

    handle = f'pose.bones["{_limb(obj).bones["HANDLE"]}"]'
    frames = sorted({int(point.co[0]) for owner in fcurve_owners(obj) for curve in owner.fcurves
                     if curve.data_path.startswith(handle) for point in curve.keyframe_points})
    assert frames and frames[0] <= 1 and frames[-1] == KEPT_STRAY and len(frames) > 100, frames[:3] + frames[-3:]


def _off_hinge() -> bpy.types.Object:
    obj = make_armature(leg_bones(bend=0.05), rolls={"shin.L": math.radians(45)})
    set_active_bone(obj, "shin.L")
    return obj


def _reaches(obj: bpy.types.Object, name: str, tip: str) -> None:
    """The limb ``name`` built plays its rest, and its foot ``tip`` follows its handle raised by a tenth of
    the chain: on evaluated poses, within 1e-3 of the chain's length."""
    limb = _limb(obj, name)
    chain = list(limb.chain)
    length = chain_length(obj, chain)
    shown = evaluate(obj)
    for bone in chain:
        assert (shown[bone].translation - obj.data.bones[bone].head_local).length < 1e-3 * length, bone
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    raised = obj.data.bones[handle.name].matrix_local.copy()
    raised.translation.z += 0.1 * length
    handle.matrix = raised
    moved = evaluate(obj)
    assert (moved[tip].translation - raised.translation).length < 1e-3 * length, (tip, moved[tip].translation)
    assert moved[tip].translation.z - shown[tip].translation.z > 0.09 * length


def _off_hinge_works(obj: bpy.types.Object) -> None:
    assert obj.ik_rigger.limbs[0].name == "shin.L"
    assert any(bone.name.startswith("JOINT") or "JOINT" in bone.get("_ik_rigger", "") for bone in obj.data.bones)
    _reaches(obj, "shin.L", "foot.L")


PAD = "_" + "é" * 40


def long_name(side: str, part: str) -> str:
    return clipped(f"mixamorig:{side}{part}{PAD}", MAX_NAME_BYTES)


def _long_names() -> bpy.types.Object:
    bones = [("root", (0, 0, 0), (0, 0.5, 0), None, False), ("hips", (0, 0, 1), (0, 0, 1.2), "root", False)]
    for side, x in (("Left", 0.2), ("Right", -0.2)):
        up, leg, foot, toe = (long_name(side, part) for part in ("UpLeg", "Leg", "Foot", "ToeBase"))
        bones += [(up, (x, 0, 1), (x, -0.05, 0.55), "hips", False), (leg, (x, -0.05, 0.55), (x, 0, 0.1), up, True),
                  (foot, (x, 0, 0.1), (x, -0.2, 0), leg, True), (toe, (x, -0.2, 0), (x, -0.3, 0), foot, True)]
    obj = make_armature(bones)
    set_active_bone(obj, long_name("Right", "Leg"))
    return obj


def _long_names_work(obj: bpy.types.Object) -> None:
    assert {limb.name for limb in api.limbs(obj)} == {long_name("Left", "Leg"), long_name("Right", "Leg")}
    _reaches(obj, long_name("Left", "Leg"), long_name("Left", "Foot"))
    _reaches(obj, long_name("Right", "Leg"), long_name("Right", "Foot"))


def _gone(role: str) -> str:
    return rf"'shin.L'.*the {role} of this limb no longer exists.*Rebuild"


CASES: dict[str, Case] = {
    "snap, the pole deleted": Case(
        _deleted("POLE"), lambda obj: api.snap_limb(obj, "shin.L", "IK", key=True, frame=1),
        lambda: bpy.ops.ik_rigger.snap_ik_to_fk(), _gone("pole")),
    "switch parent, the socket deleted": Case(
        _deleted("SOCKET", parent_switch=True), lambda obj: api.switch_parent(obj, "shin.L", "Torso"),
        lambda: bpy.ops.ik_rigger.switch_parent(parent=1), _gone("socket")),
    "plant feet, the IK's target deleted": Case(
        _deleted("TARGET"), lambda obj: api.plant_feet(obj, floor()),
        lambda: bpy.ops.ik_rigger.plant_feet(ground=floor().name), _gone("target")),
    "bake FK to IK, the foot's clone deleted": Case(
        _deleted("CLONE"), lambda obj: api.bake(obj, "FK_TO_IK", range(1, 4), switch=True),
        lambda: bpy.ops.ik_rigger.bake(direction="FK_TO_IK", frame_start=1, frame_end=3), _gone("clone")),
    "bake FK to IK, a handle held": Case(
        _held, lambda obj: api.bake(obj, "FK_TO_IK", range(1, 6), switch=True),
        lambda: bpy.ops.ik_rigger.bake(direction="FK_TO_IK", frame_start=1, frame_end=5, key_switch=True),
        r"Bake FK to IK would not land: the Limit Location constraint 'Held'.*nothing was changed"),
    "bake FK to IK, the shin held": Case(
        _chain_held, lambda obj: api.bake(obj, "FK_TO_IK", range(1, 6), switch=True),
        lambda: bpy.ops.ik_rigger.bake(direction="FK_TO_IK", frame_start=1, frame_end=5, key_switch=True),
        r"Bake FK to IK would not land: the Stretch To constraint 'Reach' on 'shin.L'.*nothing was changed"),
    "plant feet, a handle held": Case(
        lambda: _held(1.0), lambda obj: api.plant_feet(obj, floor()),
        lambda: bpy.ops.ik_rigger.plant_feet(ground=floor().name),
        r"Plant Feet would not land: the Limit Location constraint 'Held'.*nothing was changed"),
    "auto-rig, a key at frame 100000": Case(
        _stray_key, lambda obj: api.auto_rig(obj), lambda: bpy.ops.ik_rigger.auto_rig(),
        r"the bone 'shin.L'.*at frame 100000.*Delete that key", builds=True),
    "auto-rig, a stray key kept": Case(
        lambda: _stray_key(KEPT_STRAY), lambda obj: api.auto_rig(obj), lambda: bpy.ops.ik_rigger.auto_rig(),
        works=_stray_key_kept, builds=True),
    "hinge joints, the shin rolled off its hinge": Case(
        _off_hinge, lambda obj: api.build(obj, "shin.L", hinge_joints=True, both_sides=False),
        lambda: bpy.ops.ik_rigger.build_ik(hinge_joints=True, both_sides=False), works=_off_hinge_works,
        builds=True, in_object_mode=False, in_edit_mode=True),
    "both sides, names at 63 bytes": Case(
        _long_names, lambda obj: api.build(obj, long_name("Right", "Leg"), both_sides=True),
        lambda: bpy.ops.ik_rigger.build_ik(both_sides=True), works=_long_names_work, builds=True,
        in_object_mode=False, in_edit_mode=True),
}
