"""Reading an armature into core's skeleton: what planning reads on first use is what the armature holds."""

from __future__ import annotations

import dataclasses
import math
from array import array

import bpy
import pytest
from helpers import import_bvh, make_armature
from mathutils import Vector

from ik_rigger.core import body
from ik_rigger.core.model import REST_COLUMNS, BoneInfo
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


@pytest.mark.parametrize("filename", FILES)
def test_heads_and_tails_read_on_first_use_are_the_armatures(filename):
    """A bone's head and tail, made from the armature's columns when first asked, are ``Bone.head_local`` and
    ``tail_local``; asked again, the same Vector."""
    obj = import_bvh(filename)
    skeleton = read_skeleton(obj)
    for bone in obj.data.bones:
        info = skeleton[bone.name]
        assert (info.head, info.tail) == (bone.head_local, bone.tail_local), bone.name
        assert info.head is info.head and info.tail is info.tail
        assert (info.parent, info.connected) == (bone.parent.name if bone.parent else None, bone.use_connect)


def _end_extremes_of_each_bone(skeleton) -> list[float]:
    """``body._end_extremes`` as read from each bone's own head and tail (a skeleton not read from columns)."""
    return body._end_extremes(dataclasses.replace(skeleton), skeleton.up)


@pytest.mark.parametrize("filename", FILES)
@pytest.mark.parametrize("turned", [False, True])
def test_body_heights_read_from_the_columns_are_those_of_each_bone(filename, turned):
    """The feet's height read from the armature's columns (straight up, or with the object turned as an
    imported Y-up character's is) is the one read from every bone's own head and tail, to the last bit."""
    obj = import_bvh(filename)
    if turned:
        obj.rotation_euler = (1.5707963, 0.3, 0.0)
        bpy.context.view_layer.update()
    skeleton = read_skeleton(obj)
    assert REST_COLUMNS in skeleton.measures
    assert (skeleton.up == Vector((0.0, 0.0, 1.0))) != turned
    assert body._end_extremes(skeleton, skeleton.up) == _end_extremes_of_each_bone(skeleton)


def test_heights_straight_up_of_points_not_numbers_are_as_vector_dot_gives_them():
    """A point with X or Y no number (or infinite) has no height along Z up (times 0 is no number): read as
    ``Vector.dot`` reads it, not as its Z; a skeleton of other bones (``without``) reads its own bones."""
    up = Vector((0.0, 0.0, 1.0))
    points = array("f", [0.0, 0.0, 1.0, math.inf, 0.0, 2.0, -0.5, 0.25, -0.0])
    expected = [up.dot(Vector(points[start:start + 3])) for start in range(0, len(points), 3)]
    heights = body._heights(points, up)
    assert heights[0] == 1.0 and math.isnan(heights[1]) and math.isnan(expected[1])
    assert heights[2] == expected[2] == 0.0
    skeleton = read_skeleton(import_bvh(FILES[0]))
    assert REST_COLUMNS not in skeleton.without({next(iter(skeleton.bones))}).measures


@pytest.mark.parametrize("filename", FILES)
def test_children_indexed_as_the_bones_are_read_are_those_found_by_parent(filename):
    """Each bone's children, indexed while the bones are read, are the bones naming it their parent, in the
    armature's order; a skeleton less some bones (``without``) indexes its own."""
    obj = import_bvh(filename)
    skeleton = read_skeleton(obj)
    for bone in obj.data.bones:
        assert [child.name for child in skeleton.children(bone.name)] == \
            [other.name for other in obj.data.bones if other.parent == bone], bone.name
    roots = [bone.name for bone in obj.data.bones if bone.parent is None]
    assert [root.name for root in skeleton.children(None)] == roots
    first = next(iter(skeleton.bones))
    child = skeleton.children(first)[0].name
    assert child not in [bone.name for bone in skeleton.without({child}).children(first)]


@pytest.mark.parametrize("filename", FILES)
def test_a_point_above_where_the_feet_could_reach_is_not_at_the_ground_as_measured(filename):
    """A point above the highest the feet's limit could lie (read cheaply from the columns, for a hand) is not
    at the ground; at, under or near the limit, and over every bone's head and tail, each answer is the one
    the measured limit gives."""
    skeleton = read_skeleton(import_bvh(filename))
    limit = body._feet_limit(body._end_extremes(skeleton, skeleton.up))
    highest = body._highest_limit(skeleton)
    assert limit is not None and limit <= highest < math.inf
    heights = [limit, limit + 1e-5 * abs(limit), limit - 1e-5 * abs(limit), highest, highest + 1e-5 * abs(highest),
               (limit + highest) / 2]
    heights += [point.z for bone in skeleton.bones.values() for point in (bone.head, bone.tail)]
    for height in heights:
        fresh = dataclasses.replace(skeleton)  # no columns: the limit measured from each bone
        point = Vector((0.0, 0.0, height))  # single precision, as Blender's points are
        quick = read_skeleton_again(skeleton)
        assert body.at_ground(quick, point) == (point.z <= limit) == body.at_ground(fresh, point), height


def read_skeleton_again(skeleton):
    """The skeleton as just read: its columns, none of its measures taken yet."""
    again = dataclasses.replace(skeleton)
    again.measures[REST_COLUMNS] = skeleton.measures[REST_COLUMNS]
    return again


def test_no_bound_on_the_feet_for_a_turned_armature_or_points_no_number():
    """The cheap bound holds only straight up and for numbers: else every answer is the measured one."""
    skeleton = read_skeleton(import_bvh(FILES[0]))
    turned = dataclasses.replace(skeleton, up=Vector((0.0, 1.0, 0.0)))
    turned.measures[REST_COLUMNS] = skeleton.measures[REST_COLUMNS]
    assert body._highest_limit(turned) == math.inf
    heads, tails, matrices = skeleton.measures[REST_COLUMNS]
    broken = array("f", heads)
    broken[0] = math.nan
    odd = dataclasses.replace(skeleton)
    odd.measures[REST_COLUMNS] = (broken, tails, matrices)
    assert body._highest_limit(odd) == math.inf
