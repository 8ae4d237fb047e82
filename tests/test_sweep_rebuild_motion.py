"""A rebuild with other options keeps the motion an animated character plays.

Auto-Rig keys a motion capture's motion onto each limb's controls; README's next call rebuilds a limb
with ``pole_parent="HANDLE"``. A rebuilt limb keeps its controls' keys, but a key is a pose relative
to the bone's rest and parent, so a rebuild giving a keyed control another parent (the pole following
the handle, the handle following nothing) or another rest (the pole farther out) must key it anew
where it was, or the knees and elbows swing up to 90 degrees off on every frame; one turning the
chain's bones (Fix Bone Orientation turned on) must key their own keys, from which IK starts, anew on
the new rests, or the shins twist 65 degrees off. Checked on the
real Mixamo capture in tests/data (every frame's deforming bones, in the action that plays) and on
Quaternius' T-rex (each of its six clips, played alone as the build keyed them).
"""

from __future__ import annotations

import bpy
import pytest
from helpers import DATA, deforming, rotation_degrees
from mathutils import Matrix

from ik_rigger import api
from ik_rigger.rig.clips import other_clips, playing_alone

REBUILDS = [pytest.param({"pole_parent": "HANDLE"}, id="pole-follows-handle"),
            pytest.param({"pole_distance": 1.5}, id="pole-farther"),
            pytest.param({"handle_parent_mode": "NONE"}, id="handle-follows-nothing"),
            pytest.param({"pole_parent": "HANDLE", "parent_switch": True}, id="pole-on-handle-with-switching"),
            pytest.param({"fix_orientation": True}, id="chain-bones-turned")]


_USERS: set[str] = set()


def _assert_same(before: dict[int, dict[str, Matrix]], after: dict[int, dict[str, Matrix]], size: float,
                 where: str = "") -> None:
    for frame, poses in before.items():
        for name, matrix in poses.items():
            moved = (matrix.translation - after[frame][name].translation).length / size
            turned = rotation_degrees(matrix, after[frame][name])
            assert moved < 1e-4 and turned < 0.05, (where, frame, name, moved, turned)


def _rebuild_all(obj: bpy.types.Object, values: dict) -> None:
    for limb in api.limbs(obj):
        api.build(obj, limb.name, both_sides=False, **values)


def _captured():
    """The motion capture imported, its bones the user's: the armature, its size, the frames compared and
    what they played."""
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    _USERS.clear()
    _USERS.update(bone.name for bone in obj.data.bones)
    frames = range(1, 70, 3)
    return obj, max(obj.dimensions), frames, deforming(obj, frames, _USERS)


@pytest.mark.parametrize("values", REBUILDS)
def test_a_rebuild_moving_keyed_controls_keeps_the_capture_playing(values):
    obj, size, frames, captured = _captured()
    assert len(api.auto_rig(obj)) == 4
    _assert_same(captured, deforming(obj, frames, _USERS), size, "auto-rigged")
    _rebuild_all(obj, values)
    _assert_same(captured, deforming(obj, frames, _USERS), size, "rebuilt")
    for limb in api.limbs(obj):
        api.remove(obj, limb.name)
    _assert_same(captured, deforming(obj, frames, _USERS), size, "removed")


@pytest.mark.parametrize("values", [pytest.param({"pole_parent": "HANDLE"}, id="pole-follows-handle"),
                                    pytest.param({"fix_orientation": True}, id="chain-bones-turned")])
def test_a_rebuild_keeps_each_clip_playing(values):
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_quaternius_trex.glb"))
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    _USERS.clear()
    _USERS.update(bone.name for bone in obj.data.bones)
    size = max(obj.dimensions) / max(obj.scale)
    api.auto_rig(obj)

    def clips() -> dict[str, dict[int, dict[str, Matrix]]]:
        shown = {}
        for clip in other_clips(obj):
            with playing_alone(obj, clip):
                shown[clip.name] = deforming(obj, clip.frames[::4], _USERS)
        return shown

    before = clips()
    assert len(before) >= 5
    _rebuild_all(obj, values)
    after = clips()
    for name, poses in before.items():
        _assert_same(poses, after[name], size, name)


def test_the_panels_pole_parent_and_rebuild_limb_keep_the_capture_playing():
    """The Limbs panel's way: the limb's stored Pole Parent set to Handle, then *Rebuild Limb* in Pose mode."""
    obj, size, frames, captured = _captured()
    bpy.ops.object.mode_set(mode="POSE")
    assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    for limb in obj.ik_rigger.limbs:
        limb.pole_parent = "HANDLE"
        assert bpy.ops.ik_rigger.rebuild_limb(limb=limb.name) == {"FINISHED"}
    assert all(obj.data.bones[limb.bones["POLE"]].parent.name == limb.bones["HANDLE"] for limb in api.limbs(obj))
    _assert_same(captured, deforming(obj, frames, _USERS), size, "rebuilt")
