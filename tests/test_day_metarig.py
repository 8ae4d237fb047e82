"""A day on Rigify's human metarig animated by hand: a few keys of the user's, then the operators in turn.

The metarig's left leg and arm keyed by hand on three frames (Bezier keys, the thigh and upper arm swung,
the shin bent), auto-rigged (the motion kept), then: a handle key of the user's, keyed snaps both ways, a
bake back to FK over a range, a refused bake, and a leg removed keeping the motion. After every step
``Shot.step`` checks the frames and keys the step was not asked to touch play and stay as before.
"""

from __future__ import annotations

import addon_utils
import bpy
import pytest
from day_shot import Shot, played
from helpers import rotation_degrees, same, snapshot
from mathutils import Euler

from ik_rigger import api
from ik_rigger.core.errors import RigError

FRAMES = range(1, 22)
LEG, ARM = "shin.L", "forearm.L"


def animated_metarig() -> bpy.types.Object:
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    obj = bpy.context.active_object
    bpy.ops.object.mode_set(mode="POSE")
    poses = {1: (0.0, 0.0, 0.0), 10: (-0.6, 0.9, -0.3), 21: (0.4, 0.3, 0.5)}
    for frame, (thigh, shin, arm) in poses.items():
        for name, turn in (("thigh.L", (thigh, 0.0, 0.0)), ("shin.L", (shin, 0.0, 0.0)),
                           ("upper_arm.L", (0.0, 0.0, arm)), ("forearm.L", (arm, 0.0, 0.0))):
            bone = obj.pose.bones[name]
            bone.rotation_mode = "XYZ"
            bone.rotation_euler = Euler(turn)
            bone.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 21
    return obj


def limb(obj: bpy.types.Object, name: str):
    return next(item for item in api.limbs(obj) if item.name == name)


def below(obj: bpy.types.Object, names) -> set[str]:
    found = set()
    for name in names:
        found.add(name)
        found.update(child.name for child in obj.data.bones[name].children_recursive)
    return found


def test_a_day_on_a_metarig_animated_by_hand():
    obj = animated_metarig()
    size = max(obj.dimensions)
    users = [bone.name for bone in obj.data.bones]
    captured = played(obj, FRAMES, users)
    assert {item.name for item in api.auto_rig(obj)} >= {LEG, ARM}
    shown = played(obj, FRAMES, users)
    for frame in FRAMES:
        for name in users:
            moved = (captured[frame][name].translation - shown[frame][name].translation).length / size
            assert moved < 7e-4 and rotation_degrees(captured[frame][name], shown[frame][name]) < 0.25, (frame, name)
    shot = Shot(obj, FRAMES, size)
    leg = limb(obj, LEG)
    leg_bones = below(obj, [*leg.chain, *leg.bones.values()])

    # The user moves the left foot's handle on frame 5 and keys it there: frames 4 to 6 play otherwise at most.
    bpy.context.scene.frame_set(5)
    handle = obj.pose.bones[leg.bones["HANDLE"]]
    handle.location.z += 0.05 * size
    handle.keyframe_insert("location", frame=5)
    moved = shot.step("a handle key of the user's", {5}, leg_bones, owned={handle.name})
    assert set(moved) == {5}

    # FK from 12 and IK again from 16, each a keyed snap.
    bpy.context.scene.frame_set(1)
    api.snap_limb(obj, LEG, "FK", key=True, frame=12)
    api.snap_limb(obj, LEG, "IK", key=True, frame=16)
    assert bpy.context.scene.frame_current == 1
    shot.step("FK over 12-16", range(11, 17), leg_bones, owned=leg_bones)
    for frame in range(12, 17):  # the leg plays its own keys, and the snap's at 12, which IK showed there
        for name in ("thigh.L", "shin.L"):
            assert rotation_degrees(shot.shown[frame][name], captured[frame][name]) < 0.25, (frame, name)

    # Bake IK to FK over 1-8: the chain's keys take what IK shows there; it plays as before.
    api.bake(obj, "IK_TO_FK", range(1, 9), bones=[LEG])
    moved = shot.step("baked IK to FK over 1-8", range(1, 9), leg_bones, owned=set(leg.chain) | {"foot.L"})
    # Within what a bake keeps (README: 6.7e-4 of the height, 0.20 degree): IK starts from the keys baked.
    assert all(gap[0] < 7e-4 and gap[1] < 0.25 for poses in moved.values() for gap in poses.values()), moved

    # The leg rebuilt with a Foot Roll: keyed anew from what it played, it plays as before.
    api.build(obj, LEG, both_sides=False, foot_roll=True)
    leg = limb(obj, LEG)
    leg_bones = below(obj, [*leg.chain, *leg.bones.values()])
    moved = shot.step("leg rebuilt with a foot roll", FRAMES, leg_bones, owned=leg_bones, switches=False)
    assert all(gap[0] < 7e-4 and gap[1] < 0.25 for poses in moved.values() for name, gap in poses.items()
               if name in users), moved

    # A bake over no frame is refused, changing nothing.
    kept = snapshot(obj)
    with pytest.raises(RigError):
        api.bake(obj, "FK_TO_IK", range(5, 5))
    assert same(kept, snapshot(obj))
    shot.step("refused")

    # The arm removed, its motion kept.
    arm = limb(obj, ARM)
    api.remove(obj, ARM)
    moved = shot.step("arm removed", FRAMES, below(obj, arm.chain) | set(arm.bones.values()),
                      owned=set(arm.chain) | set(arm.bones.values()) | {"hand.L"}, switches=False)
    worst = max((gap for poses in moved.values() for name, gap in poses.items() if name in users),
                default=(0.0, 0.0))
    assert worst[0] < 1e-4 and worst[1] < 0.05, worst
