"""Reading an armature into core's skeleton: what planning reads on first use is what the armature holds."""

from __future__ import annotations

import dataclasses

import pytest
from helpers import import_bvh, make_armature
from mathutils import Vector

from ik_rigger.core import body
from ik_rigger.core.model import BoneInfo
from ik_rigger.rig.skeleton import read_skeleton

FILES = ("mixamo_freebvh.bvh", "makehuman_benchmark.bvh", "pymo_walk.bvh", "threejs_pirouette_rest.bvh")


@pytest.mark.parametrize("filename", FILES)
def test_axes_are_the_rest_matrix_axes(filename):
    """Each bone's axes, read from its rest matrix when first asked, are those of ``Bone.matrix_local``, and a
    bone read so equals one made with them (``replace`` keeps them)."""
    obj = import_bvh(filename)
    skeleton = read_skeleton(obj)
    for bone in obj.data.bones:
        info = skeleton[bone.name]
        x_axis, z_axis = bone.matrix_local.col[0].xyz.normalized(), bone.matrix_local.col[2].xyz.normalized()
        assert (info.x_axis, info.z_axis) == (x_axis, z_axis), bone.name
        made = BoneInfo(info.name, info.parent, info.head, info.tail, x_axis, z_axis, info.connected)
        assert made == info
        moved = dataclasses.replace(info, head=info.tail.copy())
        assert (moved.x_axis, moved.z_axis, moved.head) == (x_axis, z_axis, info.tail)


def _feet_limit_of_every_end(skeleton) -> float | None:
    """The feet's height from every segment's two ends, as ``body`` reads segments for the front."""
    up = skeleton.up
    return body._feet_limit([point.dot(up) for segment in body._segments(skeleton) for point in segment])


@pytest.mark.parametrize("filename", FILES)
def test_feet_height_of_real_skeletons_is_that_of_every_segment_end(filename):
    skeleton = read_skeleton(import_bvh(filename))
    assert body._feet_limit(body._end_extremes(skeleton, skeleton.up)) == _feet_limit_of_every_end(skeleton)


def test_feet_height_counts_a_tail_beyond_the_heads_only_where_it_ends_a_segment():
    """A toe's tail below every head lowers the feet's limit; a bone's tail below it does not when its only
    child starts elsewhere (the segment ends at that child's head), nor above every head likewise."""
    bones = [
        ("hips", (0.0, 0.0, 1.0), (0.0, 0.0, 1.2), None, False),
        # Its tail is the highest point but its segment ends at the neck's head.
        ("chest", (0.0, 0.0, 1.2), (0.0, 0.0, 3.0), "hips", False),
        ("neck", (0.0, 0.1, 1.6), (0.0, 0.1, 1.7), "chest", False),
        ("thigh", (0.1, 0.0, 1.0), (0.1, 0.0, 0.5), "hips", False),
        # Its tail dips below the toe's head, but its only child (the toe) starts away from it.
        ("shin", (0.1, 0.0, 0.5), (0.1, 0.0, -0.5), "thigh", False),
        ("toe", (0.1, -0.1, 0.05), (0.1, -0.2, -0.1), "shin", False),
    ]
    skeleton = read_skeleton(make_armature(bones))
    extremes = body._end_extremes(skeleton, skeleton.up)
    assert extremes == pytest.approx([-0.1, 1.7], abs=1e-6)
    assert body._feet_limit(extremes) == _feet_limit_of_every_end(skeleton)
    assert body.at_ground(skeleton, Vector((0.0, 0.0, 0.3))) and not body.at_ground(skeleton, Vector((0.0, 0.0, 0.5)))
