"""A day on a character with several clips, beside a second character posed by hand.

The glTF Fox in tests/data (its clips Survey, Walk and Run: the importer plays Survey and keeps the others
in muted NLA tracks), auto-rigged, each clip kept; beside it the Mixamo skeleton rigged and posed by hand,
without keys. The user makes Walk the active clip, snaps and bakes in it, makes Survey active again, puts it
in an NLA strip, saves and reopens. After every step each clip, played alone as an engine plays it, plays as
before but where the step was asked to change it, every clip's keys but those it owns are as they were, and
the second character stands as the user posed it.
"""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from export_readers import _assign, blender_world
from helpers import DATA, at_rest_alone, evaluate, import_bvh, rotation_degrees, same, snapshot
from mathutils import Matrix, Vector
from test_export import assert_three_plays_the_rig

from ik_rigger import api
from ik_rigger.core.errors import RigError
from ik_rigger.rig import records
from ik_rigger.rig.animation import action_fcurves

SAME_MOVE, SAME_TURN = 1e-5, 0.01


def clips_played(obj: bpy.types.Object) -> dict[str, list[dict[str, np.ndarray]]]:
    """Each clip of the fox played alone from its rest pose, every frame: each bone's world matrix."""
    names = [bone.name for bone in obj.data.bones]
    return {name: blender_world(obj, clip(name), list(range(0, int(clip(name).frame_range[1]) + 1)), names)
            for name in ("Survey", "Walk", "Run")}


def clip(name: str) -> bpy.types.Action:
    """The fox's clip ``name`` (Blender 4.2's glTF importer names it after the armature too: Survey_root)."""
    return next(action for action in bpy.data.actions if action.name in (name, f"{name}_root"))


def every_key() -> dict:
    """Every key of every clip a file keeps (one nothing uses, the second character's dropped capture, it does not)."""
    return {(action.name, curve.data_path, curve.array_index): tuple(tuple(point.co) for point in curve.keyframe_points)
            for action in bpy.data.actions if action.users or action.use_fake_user for curve in action_fcurves(action)}


def changed_frames(before: dict, after: dict, size: float) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for clip, frames in before.items():
        for number, poses in enumerate(frames):
            for name, matrix in poses.items():
                other = after[clip][number][name]
                moved = np.linalg.norm(matrix[:3, 3] - other[:3, 3]) / size
                turned = rotation_degrees(Matrix(matrix.tolist()), Matrix(other.tolist()))
                if moved > SAME_MOVE or turned > SAME_TURN:
                    found.setdefault(clip, set()).add(number)
    return found


class Day:
    """The fox's clips and keys and the second character's pose, checked step after step."""

    def __init__(self, fox: bpy.types.Object, other: bpy.types.Object) -> None:
        self.fox_name, self.other_name = fox.name, other.name
        self.size = max(fox.dimensions) / max(fox.scale)
        self.other_size = max(other.dimensions)
        self.clips = clips_played(fox)
        self.keys = every_key()
        self.posed = evaluate(other)

    @property
    def fox(self) -> bpy.types.Object:
        return bpy.data.objects[self.fox_name]

    def step(self, where: str, allowed: dict[str, set[int]] | None = None, owned: set[str] = frozenset()) -> dict:
        clips = clips_played(self.fox)
        changed = changed_frames(self.clips, clips, self.size)
        outside = {clip: sorted(frames - (allowed or {}).get(clip, set())) for clip, frames in changed.items()}
        assert not any(outside.values()), (where, "clips played differently", outside)
        keys = every_key()
        mine = {f'pose.bones["{name}"]' for name in owned}
        touched = sorted(key for key in set(self.keys) | set(keys) if self.keys.get(key) != keys.get(key)
                         and not any(key[1].startswith(prefix) for prefix in mine))
        assert not touched, (where, "keys changed that the step does not own", touched[:6])
        other = bpy.data.objects[self.other_name]
        for name, matrix in evaluate(other).items():
            was = self.posed[name]
            assert (matrix.translation - was.translation).length / self.other_size < SAME_MOVE, (where, name)
            assert rotation_degrees(matrix, was) < SAME_TURN, (where, name)
        self.clips, self.keys = clips, keys
        return changed


def posed_by_hand() -> bpy.types.Object:
    """The Mixamo skeleton rigged at rest, its left foot's handle lifted and its right hand's moved, no keys."""
    obj = import_bvh("mixamo_freebvh.bvh")
    at_rest_alone(obj)
    obj.location.x = 300.0
    api.auto_rig(obj)
    size = max(obj.dimensions)
    for limb, offset in (("mixamorig:LeftLeg", (0.0, 0.0, 0.1)), ("mixamorig:RightForeArm", (0.05, -0.05, 0.0))):
        handle = obj.pose.bones[next(item for item in api.limbs(obj) if item.name == limb).bones["HANDLE"]]
        handle.location += Vector(offset) * size
    return obj


def make_active(obj: bpy.types.Object, name: str) -> None:
    """What the user does in the Action editor: another clip the armature's action."""
    _assign(obj.animation_data, clip(name))


def test_a_day_with_clips_strips_and_a_second_character(tmp_path):
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_fox.glb"))
    fox = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    unrigged = clips_played(fox)
    size = max(fox.dimensions) / max(fox.scale)
    built = api.auto_rig(fox)
    assert len(built) == 4
    other = posed_by_hand()
    day = Day(fox, other)
    moved = changed_frames(unrigged, day.clips, size)
    # Rigged, every clip plays as it did within what a bake keeps.
    for clip_name, frames in unrigged.items():
        for number, poses in enumerate(frames):
            for name, matrix in poses.items():
                shown = day.clips[clip_name][number][name]
                assert np.linalg.norm(matrix[:3, 3] - shown[:3, 3]) / size < 7e-4, (clip_name, number, name, moved)
    leg = built[0]
    made = set(leg.bones.values())

    # The user makes Walk the active clip: every clip plays as before.
    bpy.context.view_layer.objects.active = fox
    make_active(fox, "Walk")
    day.step("Walk made active")

    # Snap IK to FK keyed at 8, in Walk: only Walk's frame 8 plays otherwise, only the leg's controls keyed.
    bpy.context.scene.frame_set(3)
    api.snap_limb(fox, leg.name, "IK", key=True, frame=8)
    assert bpy.context.scene.frame_current == 3
    day.step("snapped in Walk at 8", {"Walk": {8}}, made)

    # Bake FK to IK over 2-6 in Walk.
    api.bake(fox, "FK_TO_IK", range(2, 7))
    day.step("baked in Walk over 2-6", {"Walk": set(range(2, 7))}, made | {
        name for limb in api.limbs(fox) for name in limb.bones.values()})

    # Survey active again, then pushed into an NLA strip by the user: a keyed snap is refused naming the strip,
    # changing nothing.
    make_active(fox, "Survey")
    day.step("Survey made active")
    data = fox.animation_data
    track = data.nla_tracks.new()
    track.strips.new("Survey", 0, clip("Survey"))
    data.action = None
    kept = snapshot(fox)
    with pytest.raises(RigError, match="Survey"):
        api.snap_limb(fox, leg.name, "IK", key=True, frame=10)
    assert same(kept, snapshot(fox))
    day.step("refused over the strip")

    # Saved and reopened: the same.
    path = tmp_path / "clips.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    day.step("saved and reopened")

    # Exported: three.js plays every frame of every clip as Blender does, and the scene is left as it was.
    report = api.export(day.fox, str(tmp_path / "fox.glb"))
    assert sorted(clip.name.split("_")[0] for clip in report.clips) == ["Run", "Survey", "Walk"]
    assert_three_plays_the_rig(day.fox, tmp_path / "fox.glb", report)
    day.step("exported")


@pytest.mark.parametrize("given", [pytest.param({"soft_ik": 0.1}, id="soft-ik"),
                                   pytest.param({"foot_roll": True}, id="foot-roll"),
                                   pytest.param({"pole_angle_auto": False}, id="own-pole-angle"),
                                   pytest.param({"use_rotation": True}, id="follow-handle-rotation")])
def test_every_clip_plays_as_before_after_a_rebuild_keying_the_controls_anew(given):
    """The fox's limbs rebuilt with an option that plays the kept keys otherwise: each clip, the two kept in NLA
    tracks too, is keyed anew and plays as before (within what a bake keeps)."""
    bpy.ops.import_scene.gltf(filepath=str(DATA / "gltf_fox.glb"))
    fox = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    size = max(fox.dimensions) / max(fox.scale)
    api.auto_rig(fox)
    users = {bone.name for bone in fox.data.bones if records.marker(bone) is None}
    before = clips_played(fox)
    for limb in api.limbs(fox):
        api.build(fox, limb.name, both_sides=False, **given)
    after = clips_played(fox)
    for name, frames in before.items():
        for number, poses in enumerate(frames):
            for bone, matrix in poses.items():
                if bone in users:
                    shown = after[name][number][bone]
                    moved = np.linalg.norm(matrix[:3, 3] - shown[:3, 3]) / size
                    turned = rotation_degrees(Matrix(matrix.tolist()), Matrix(shown.tolist()))
                    assert moved < 7e-4 and turned < 0.25, (name, number, bone, moved, turned)
