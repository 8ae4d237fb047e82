"""Bake speed: four limbs of a 455-frame motion capture, against playing the same frames.

The capture is the project's Mixamo BVH (tests/data/mixamo_freebvh.bvh, 69 frames,
centimetres) with a Cycles modifier on each F-curve, so it plays 455 frames of motion.
Its four limbs are rigged with the motion ignored, then, within each repeat and on that
same rig:

- playing: one ``frame_set`` per frame over the range, what a bake that evaluates every
  frame costs at least (this one reads the motion from its keys, and checks three frames);
- IK Rigger's bake of the four limbs, FK to IK (``rig.bake.bake_limbs``);
- a per-key loop, the way snapping tools bake (Rigify's IK/FK bake among them):
  ``frame_set`` on each frame, then for each limb snap its IK to the FK pose and
  ``keyframe_insert`` each control's channels (``rig.snap.snap_ik_to_fk`` with keying,
  the same placement as the bake);
- the bare loop a user would write: ``frame_set`` on each frame, then each limb's two
  controls (handle and pole) set to the chain end's evaluated pose and their location and
  rotation keyed with ``keyframe_insert``, no placement worked out at all.

Targets: the bake at most 1.5 times playing; the per-key loop and the bare loop each at
least 10 times the bake.
"""

from __future__ import annotations

from pathlib import Path

import bpy

from benchmarks import common

TARGET_PLAY = 1.5
TARGET_LOOP = 10.0
TARGET_BARE = 10.0
FRAMES = 455
CAPTURE = common.ROOT / "tests" / "data" / "mixamo_freebvh.bvh"
LIMBS = ("mixamorig:LeftLeg", "mixamorig:RightLeg", "mixamorig:LeftForeArm", "mixamorig:RightForeArm")


def _rigged_capture(frames: int = FRAMES) -> bpy.types.Object:
    """A fresh scene with the capture playing ``frames`` frames and its four limbs rigged (motion left alone)."""
    from ik_rigger.limb.options import LimbOptions
    from ik_rigger.rig.animation import fcurve_owners
    from ik_rigger.rig.build import build_limbs

    common.reset()
    common.register_ik_rigger()
    with common.quiet():
        bpy.ops.import_anim.bvh(filepath=str(CAPTURE))
    obj = bpy.context.active_object
    for owner in fcurve_owners(obj):
        for curve in owner.fcurves:
            curve.modifiers.new("CYCLES")
    # Else the scene plays the action as it was before the modifiers (its evaluated copy is not told).
    obj.animation_data.action.update_tag()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    build_limbs(obj, [(last, LimbOptions(animation="IGNORE")) for last in LIMBS])
    return obj


def _play(obj: bpy.types.Object, frames: int = FRAMES) -> None:
    scene = bpy.context.scene
    for frame in range(1, frames + 1):
        scene.frame_set(frame)


def _bake(obj: bpy.types.Object, frames: int = FRAMES) -> list:
    from ik_rigger.rig import bake

    with common.quiet():
        return bake.bake_limbs(obj, list(obj.ik_rigger.limbs), "FK_TO_IK", range(1, frames + 1))


def _key_loop(obj: bpy.types.Object) -> None:
    from ik_rigger.rig import snap

    scene = bpy.context.scene
    limbs = list(obj.ik_rigger.limbs)
    for frame in range(1, FRAMES + 1):
        scene.frame_set(frame)
        for limb in limbs:
            snap.snap_ik_to_fk(obj, limb, keyframe=True, frame=frame)


def _bare_loop(obj: bpy.types.Object) -> None:
    scene = bpy.context.scene
    pose_bones = obj.pose.bones
    controls = [(pose_bones[limb.name], [pose_bones[limb.handle], pose_bones[limb.pole]])
                for limb in obj.ik_rigger.limbs]
    for frame in range(1, FRAMES + 1):
        scene.frame_set(frame)
        for end, bones in controls:
            for bone in bones:
                bone.matrix = end.matrix
                bone.keyframe_insert("location", frame=frame)
                bone.keyframe_insert("rotation_quaternion" if bone.rotation_mode == "QUATERNION" else
                                     "rotation_axis_angle" if bone.rotation_mode == "AXIS_ANGLE" else
                                     "rotation_euler", frame=frame)


def _check(obj: bpy.types.Object, results: list, frames: int = FRAMES) -> None:
    """The bake really keyed every frame of every control (reading the motion from its keys),
    or the timing means nothing."""
    from ik_rigger.rig.animation import fcurve_owners

    assert all(result.from_keys for result in results), "the bake played the frames"

    for limb in obj.ik_rigger.limbs:
        path = f'pose.bones["{limb.handle}"].location'
        curves = [curve for owner in fcurve_owners(obj) for curve in owner.fcurves if curve.data_path == path]
        assert curves and len(curves[0].keyframe_points) == frames, path


def run(settings: common.Settings) -> dict[str, object]:
    play, baked, looped, bare = [], [], [], []
    for _ in range(max(settings.eval_repeats // 2, 2)):
        rig = _rigged_capture()
        play.append(common.timed(lambda rig=rig: _play(rig)))
        results: list = []
        baked.append(common.timed(lambda rig=rig, results=results: results.extend(_bake(rig))))
        _check(rig, results)
        rig = _rigged_capture()
        bare.append(common.timed(lambda rig=rig: _bare_loop(rig)))
        rig = _rigged_capture()
        looped.append(common.timed(lambda rig=rig: _key_loop(rig)))
    return {
        "frames": FRAMES,
        "limbs": len(LIMBS),
        "play": common.Stats.of(play).as_dict(),
        "bake": common.Stats.of(baked).as_dict(),
        "key_loop": common.Stats.of(looped).as_dict(),
        "bare_loop": common.Stats.of(bare).as_dict(),
        "bake_over_play": common.paired_ratios(baked, play).as_dict(),
        "loop_over_bake": common.paired_ratios(looped, baked).as_dict(),
        "bare_over_bake": common.paired_ratios(bare, baked).as_dict(),
        "targets": {"bake_over_play": TARGET_PLAY, "loop_over_bake": TARGET_LOOP, "bare_over_bake": TARGET_BARE},
    }


if __name__ == "__main__":
    import json
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    print(json.dumps(run(common.QUICK), indent=2))
