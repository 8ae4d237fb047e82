"""Where a character faces, which way is up, and the pole angle's precision: core only, no scene."""

from __future__ import annotations

import math

import pytest
from mathutils import Matrix, Vector

from ik_rigger.core import body, geometry, orient
from ik_rigger.core.model import BoneInfo, Skeleton

Spec = tuple[str, str | None, tuple[float, float, float], tuple[float, float, float]]


def skeleton(specs: list[Spec], turn: Matrix | None = None, up=(0.0, 0.0, 1.0), front=(0.0, -1.0, 0.0)) -> Skeleton:
    """Bones given in the character's own frame, turned by ``turn`` into armature space."""
    turn = turn or Matrix.Identity(3)
    bones = {}
    for name, parent, head, tail in specs:
        h, t = turn @ Vector(head), turn @ Vector(tail)
        z_axis = geometry.perpendicular(Vector((0.3, 0.2, 1.0)), t - h).normalized()
        x_axis = geometry.cross((t - h).normalized(), z_axis)
        bones[name] = BoneInfo(name, parent, h, t, x_axis, z_axis)
    return Skeleton(bones, up=Vector(up), front=Vector(front))


def legs(suffixes: tuple[str, str], toes: float = -0.2) -> list[Spec]:
    """Two legs, the first at +X (facing -Y in their own frame), feet pointing ``toes`` along Y."""
    specs: list[Spec] = [("pelvis", None, (0, 0, 1.0), (0, 0, 1.2)), ("neck", "pelvis", (0, 0, 1.2), (0, 0, 1.7))]
    for index, (suffix, x) in enumerate(zip(suffixes, (0.15, -0.15))):
        splay = 0.02 * (1 - 2 * index)
        specs += [
            (f"thigh{suffix}", "pelvis", (x, 0, 1.0), (x, 0, 0.55)),
            (f"shin{suffix}", f"thigh{suffix}", (x, 0, 0.55), (x, 0, 0.1)),
            (f"foot{suffix}", f"shin{suffix}", (x, 0, 0.1), (x + splay, toes, 0.0)),
        ]
    return specs


@pytest.mark.parametrize("degrees", [0.0, 63.0, 180.0, 290.0])
def test_the_feet_say_where_a_character_without_side_names_faces(degrees):
    turn = Matrix.Rotation(math.radians(degrees), 3, "Z")
    front, up = body.facing(skeleton(legs(("_a", "_b")), turn))
    assert (front - turn @ Vector((0, -1, 0))).length < 1e-3
    assert up == Vector((0, 0, 1))


@pytest.mark.parametrize("degrees", [0.0, 100.0, 215.0])
def test_left_and_right_names_say_where_a_character_faces_whatever_its_feet(degrees):
    turn = Matrix.Rotation(math.radians(degrees), 3, "Z")
    # Feet turned backward: the names still say which side is left, and so where the front is.
    front, _ = body.facing(skeleton(legs((".L", ".R"), toes=0.2), turn))
    assert (front - turn @ Vector((0, -1, 0))).length < 1e-3


def test_a_quadruped_faces_where_its_head_is():
    specs: list[Spec] = [
        ("hips", None, (0, 0.4, 0.6), (0, 0.1, 0.62)),
        ("chest", "hips", (0, 0.1, 0.62), (0, -0.3, 0.65)),
        ("neck", "chest", (0, -0.3, 0.65), (0, -0.45, 0.9)),
        ("skull", "neck", (0, -0.45, 0.9), (0, -0.6, 0.95)),
        ("tail", "hips", (0, 0.4, 0.6), (0, 0.8, 0.5)),
    ]
    for name, x, y in (("fl", 0.1, -0.25), ("fr", -0.1, -0.25), ("hl", 0.1, 0.35), ("hr", -0.1, 0.35)):
        parent = "chest" if name.startswith("f") else "hips"
        specs += [(f"{name}1", parent, (x, y, 0.6), (x, y, 0.3)), (f"{name}2", f"{name}1", (x, y, 0.3), (x, y, 0.0))]
    front, _ = body.facing(skeleton(specs))
    assert (front - Vector((0, -1, 0))).length < 1e-3


def test_a_y_up_armature_takes_up_from_its_object():
    # Built Y-up inside the armature: the object's turn says the world's up is armature +Y.
    turn = Matrix.Rotation(math.radians(-90.0), 3, "X")
    front, up = body.facing(skeleton(legs(("_a", "_b")), turn, up=(0.0, 1.0, 0.0), front=(0.0, 0.0, -1.0)))
    assert (up - Vector((0, 1, 0))).length < 1e-6
    assert (front - turn @ Vector((0, -1, 0))).length < 1e-3


def test_without_clues_blenders_convention_through_the_object():
    specs: list[Spec] = [("a", None, (0, 0, 0), (0, 0, 1)), ("b", "a", (0, 0, 1), (0, 0, 2))]
    front, up = body.facing(skeleton(specs, front=(1.0, 0.0, 0.0)))
    assert front == Vector((1, 0, 0)) and up == Vector((0, 0, 1))


@pytest.mark.parametrize("tiny", [3e-5, -2e-4, 1e-3])
def test_the_pole_angle_is_exact_for_tiny_angles(tiny):
    # Single-precision arc cosines read angles below about 0.02 degree as none at all.
    head, tail, end = Vector((0, 0, 1)), Vector((0, -0.3, 0.6)), Vector((0, 0, 0))
    pole = Vector((0, -1, 0.5))
    toward_pole = geometry.cross(geometry.cross(end - head, pole - head), tail - head).normalized()
    x_axis = Matrix.Rotation(tiny, 3, tail - head) @ toward_pole
    found = geometry.pole_angle(head, tail, x_axis, end, pole)
    assert found == pytest.approx(tiny, abs=1e-7)


def test_the_pole_angle_of_a_first_bone_pointing_back_from_the_chain():
    head, end, pole = Vector((0, 0, 1)), Vector((0, 0, 0)), Vector((0, -1, 0.5))
    for tail in (Vector((0, 0.1, 1.5)), Vector((0.2, -0.1, 0.4))):
        y_axis = (tail - head).normalized()
        angle = geometry.pole_angle(head, tail, geometry.perpendicular(Vector((1, 0, 0)), y_axis), end, pole)
        x_axis = geometry.perpendicular(Vector((1, 0, 0)), y_axis).normalized()
        z_axis = geometry.cross(x_axis, y_axis)
        # Blender's solver: X turned by the angle toward Z, seen from the head-end line, points to the pole.
        up = x_axis * math.cos(angle) + z_axis * math.sin(angle)
        axis = (end - head).normalized()
        assert geometry.perpendicular(up, axis).normalized().dot(geometry.perpendicular(pole - head, axis)) > 0.0


def test_fixed_orientation_puts_tails_on_joints_and_z_toward_the_bend():
    specs: list[Spec] = [("thigh", None, (0, 0, 1), (0.3, 0.2, 0.9)), ("shin", "thigh", (0, -0.05, 0.5), (0.1, 0, 0.5)),
                         ("foot", "shin", (0, 0, 0.1), (0, -0.2, 0))]
    bones = skeleton(specs)
    joints = [bones["thigh"].head, bones["shin"].head, bones["foot"].head]
    bend = Vector((0, -1, 0))
    fixed = orient.applied(bones, orient.orientation_edits(bones, ("thigh", "shin"), joints, bend))
    for name, end in (("thigh", joints[1]), ("shin", joints[2])):
        bone = fixed[name]
        assert (bone.tail - end).length < 1e-6
        assert bone.z_axis.dot(bone.direction) == pytest.approx(0.0, abs=1e-6)
        assert bone.z_axis.dot(bend) > 0.99
        assert bone.x_axis.dot(geometry.cross(bone.direction.normalized(), bone.z_axis)) == pytest.approx(1.0)
    assert orient.orientation_edits(fixed, ("thigh", "shin"), joints, bend) == {}


def sketchfab_numbered(specs: list[Spec], prefix: str = "") -> list[Spec]:
    """``specs`` renamed as Sketchfab renames a Rigify rig, under ``prefix``: the dots dropped and every bone numbered
    in turn, so the two sides' numbers differ ("thigh.L" is "thighL_09", "thigh.R" is "thighR_12")."""
    names = {name: f"{prefix}{name.replace('.', '')}_{number:02d}" for number, (name, *_) in enumerate(specs, 7)}
    return [(names[name], parent and names[parent], head, tail) for name, parent, head, tail in specs]


@pytest.mark.parametrize("prefix", ["", "DEF-"])
@pytest.mark.parametrize("degrees", [0.0, 100.0, 215.0])
def test_sides_numbered_apart_say_where_a_character_faces_whatever_its_feet(degrees, prefix):
    """``thighL_09`` pairs with ``thighR_12``: with the feet turned backward and a head straight above the hips, only
    the sides tell the front."""
    turn = Matrix.Rotation(math.radians(degrees), 3, "Z")
    front, _ = body.facing(skeleton(sketchfab_numbered(legs((".L", ".R"), toes=0.2), prefix), turn))
    assert (front - turn @ Vector((0, -1, 0))).length < 1e-3
    # Without sides the feet decide, and say the back.
    front, _ = body.facing(skeleton(sketchfab_numbered(legs((".a", ".b"), toes=0.2), prefix), turn))
    assert (front - turn @ Vector((0, 1, 0))).length < 1e-3
