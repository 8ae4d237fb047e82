"""Chain geometry: which way a chain bends, where its pole goes, the pole angle.

All points are in armature space (the space of ``Bone.head_local``), so the
armature object's own location, rotation and scale never enter the maths.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mathutils import Matrix, Quaternion, Vector

# Below this sideways deviation (as an angle seen from the chain's root) a chain
# counts as straight: Blender's solver leaves a chain bent by 0.01 degree unbent
# and bends one of 0.13 degree.
STRAIGHT_DEGREES = 0.1
# How far a straight chain is pre-bent; IK Rigger promises at most 2 degrees.
PREBEND_DEGREES = 1.0
# The most pre-bending may turn one of the user's bones, all told (the promise above).
PROMISED_DEGREES = 2.0
# A chain bent at most this much (measured as for STRAIGHT_DEGREES), more than AGAINST_DEGREES away from the
# side it should bend to, is read as straight and pre-bent toward that side: importers leave knees a degree
# behind their line and elbows a degree or two above or ahead of it (the VRM avatar's 1.1 and 1.9 degrees,
# Godot's mannequin's 0.4), which IK would bend on that wrong way. Sideways counts as against (the VRM avatar's
# left elbow stands straight up, 90 degrees off); a bend mostly toward the side, as the VALID avatar's knees
# (1.8 degrees, 46 off), is kept.
SLIGHT_DEGREES = 2.0
AGAINST_DEGREES = 60.0
# Bone heads within this share of a segment's length of each other start at one joint.
SAME_JOINT = 0.02

AXES = {
    "X_POS": Vector((1.0, 0.0, 0.0)),
    "X_NEG": Vector((-1.0, 0.0, 0.0)),
    "Y_POS": Vector((0.0, 1.0, 0.0)),
    "Y_NEG": Vector((0.0, -1.0, 0.0)),
    "Z_POS": Vector((0.0, 0.0, 1.0)),
    "Z_NEG": Vector((0.0, 0.0, -1.0)),
}

_EPSILON = 1e-9


# A pose bone's own transform channels (what keys and drivers set on it), each rotation mode's included.
POSE_CHANNELS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")


def rotation_property(mode: str) -> str:
    """The pose bone property holding a rotation in Blender's rotation ``mode`` (each Euler order's is one)."""
    return _ROTATION_PROPERTIES.get(mode, "rotation_euler")


_ROTATION_PROPERTIES = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}


def perpendicular(vector: Vector, axis: Vector) -> Vector:
    """The part of ``vector`` at right angles to ``axis`` (a new vector)."""
    unit = axis.normalized()
    return vector - unit * vector.dot(unit)


def unevenness(matrix: Matrix) -> float:
    """How far ``matrix``'s axes are from a turn scaled alike along each (0 for one): the largest
    difference of two axes' lengths over the longer, or cosine of the angle between two axes."""
    turn = matrix.to_3x3()
    axes = [Vector((turn[0][column], turn[1][column], turn[2][column])) for column in range(3)]
    lengths = [axis.length for axis in axes]
    if min(lengths) < _EPSILON:
        return 1.0
    spread = (max(lengths) - min(lengths)) / max(lengths)
    skew = max(abs(axes[a].dot(axes[b])) / (lengths[a] * lengths[b]) for a, b in ((0, 1), (1, 2), (0, 2)))
    return max(spread, skew)


def turn_degrees(a: Matrix, b: Matrix) -> float:
    """The turn between two poses' rotations (their scale left out), in degrees, 0 to 180."""
    turn = a.to_3x3().normalized().to_quaternion().rotation_difference(b.to_3x3().normalized().to_quaternion()).angle
    return math.degrees(min(turn, 2 * math.pi - turn))


def chain_length(joints: Sequence[Vector]) -> float:
    """Sum of the bone lengths of a chain given by its joint positions."""
    # A list summed, not a generator: the same sum in the same order, made without resuming a frame per bone.
    return sum([(b - a).length for a, b in zip(joints, joints[1:])])


def bend_direction(joints: Sequence[Vector]) -> Vector | None:
    """The unit direction the chain's inner joints stand out from its root-end line.

    ``joints`` are the chain's head positions followed by the last bone's tail.
    Returns None for a straight chain (see ``STRAIGHT_DEGREES``).
    """
    return bend(joints)[0]


def bend(joints: Sequence[Vector]) -> tuple[Vector | None, float]:
    """``bend_direction`` and ``bend_degrees`` of ``joints``, measured once: planning asks both of every limb."""
    standing = _standing_out(joints)
    if standing is None:
        return None, 0.0
    offset, degrees = standing
    return (None if degrees < STRAIGHT_DEGREES or offset.length < _EPSILON else offset.normalized()), degrees


def _standing_out(joints: Sequence[Vector]) -> tuple[Vector, float] | None:
    """The inner joints' offsets from the root-end line, summed, and the largest of them as an angle seen
    from the root, in degrees; None where root and end meet."""
    root, end = joints[0], joints[-1]
    axis = end - root
    if axis.length < _EPSILON:
        return None
    total = Vector((0.0, 0.0, 0.0))
    largest = 0.0
    for joint in joints[1:-1]:
        offset = perpendicular(joint - root, axis)
        along = max((joint - root).length, _EPSILON)
        largest = max(largest, math.degrees(math.asin(min(1.0, offset.length / along))))
        total += offset
    return total, largest


def bend_degrees(joints: Sequence[Vector]) -> float:
    """How far the chain's inner joints stand out from its root-end line at the most, as an angle seen from
    the root, in degrees (the measure of ``STRAIGHT_DEGREES``); 0 where root and end meet."""
    standing = _standing_out(joints)
    return 0.0 if standing is None else standing[1]


def bent_slightly(joints: Sequence[Vector]) -> bool:
    """Whether the chain's inner joints stand out from its root-end line by ``SLIGHT_DEGREES`` at the most."""
    return bend_degrees(joints) <= SLIGHT_DEGREES


def bent_against(joints: Sequence[Vector], bend: Vector, side: Vector, own_bones: bool) -> bool:
    """Whether a chain bent toward ``bend`` (``bend_direction``) is bent only slightly, the wrong way: by at
    most ``SLIGHT_DEGREES``, more than ``AGAINST_DEGREES`` away from ``side``, the side it should bend to.

    Such a chain is pre-bent toward ``side`` as a straight one is. Where that would turn the user's own bones
    (``own_bones``: not a hidden chain of the rig's), it must turn none by more than ``PROMISED_DEGREES`` in
    all; a hidden chain leaves the user's bones as they are.
    """
    if not bent_slightly(joints):
        return False
    if bend.dot(side) >= math.cos(math.radians(AGAINST_DEGREES)) * bend.length * side.length:
        return False
    return not own_bones or prebend_turn(joints, side) <= PROMISED_DEGREES


def prebend_turn(joints: Sequence[Vector], direction: Vector) -> float:
    """The most any segment of the chain turns, in degrees, when it is pre-bent toward ``direction``."""
    bent = prebent_joints(joints, direction)
    largest = 0.0
    for index in range(len(joints) - 1):
        old, new = joints[index + 1] - joints[index], bent[index + 1] - bent[index]
        # From the sine and the cosine, as ``signed_angle``: single precision blurs an arc cosine's small angles.
        largest = max(largest, math.degrees(math.atan2(cross(old, new).length, old.dot(new))))
    return largest


def inferred_bend_direction(
    joints: Sequence[Vector], extremity_direction: Vector | None, is_arm: bool | None, front: Vector, up: Vector
) -> Vector:
    """The side a straight chain should bend to, from how bodies are built.

    A knee bends forward (toward where the foot points when the chain lies along
    the body's front); an elbow bends backwards. ``front`` and ``up`` are the
    character's, in armature space (see ``core.body``). Without names to say which
    it is, a chain that hangs or stands (mostly along ``up``) is taken for a leg and
    one that reaches sideways for an arm. The answer is at right angles to the chain.
    """
    axis = joints[-1] - joints[0]
    if is_arm is None:
        is_arm = abs(axis.normalized().dot(up.normalized())) < math.cos(math.radians(45.0))
    candidates: list[Vector] = [-front if is_arm else front]
    if not is_arm and extremity_direction is not None:
        candidates.append(extremity_direction)
    candidates.extend((-up if is_arm else up, cross(front, up)))
    for candidate in candidates:
        side = perpendicular(candidate, axis)
        # A direction in line with the chain says nothing: need a clear sideways part.
        if side.length > 0.2 * candidate.length:
            return side.normalized()
    raise AssertionError("front, up and their cross product cannot all lie along one axis")


def turn_between(old_joints: Sequence[Vector], new_joints: Sequence[Vector], index: int) -> Quaternion:
    """The shortest turn taking the chain's segment ``index`` (joint to next joint) to its new direction."""
    return (old_joints[index + 1] - old_joints[index]).rotation_difference(
        new_joints[index + 1] - new_joints[index])


def prebent_joints(joints: Sequence[Vector], direction: Vector, degrees: float = PREBEND_DEGREES) -> list[Vector]:
    """Joint positions of the chain bowed toward ``direction``, end points fixed.

    Inner joints move at right angles to the root-end line along a parabola, scaled
    so that no bone turns by more than ``degrees``.
    """
    root, end = joints[0], joints[-1]
    axis = end - root
    side = perpendicular(direction, axis).normalized()
    lengths = [(b - a).length for a, b in zip(joints, joints[1:])]
    total = sum(lengths)
    arc = [0.0]
    for length in lengths:
        arc.append(arc[-1] + length)
    profile = [(s / total) * (1.0 - s / total) for s in arc]
    steepest = max(abs(profile[k + 1] - profile[k]) / lengths[k] for k in range(len(lengths)))
    scale = math.tan(math.radians(degrees)) / steepest
    straight = [root.lerp(end, s / total) for s in arc]
    return [point + side * (scale * p) for point, p in zip(straight, profile)]


def pole_position(joints: Sequence[Vector], direction: Vector, distance: float) -> Vector:
    """Where the pole target goes: out from the middle joint along ``direction``."""
    half = len(joints) // 2
    middle = joints[half] if len(joints) % 2 else (joints[half - 1] + joints[half]) / 2
    return middle + direction.normalized() * distance


def cross(a: Vector, b: Vector) -> Vector:
    """Cross product of two 3D vectors, typed as a Vector (mathutils' own also serves 2D, giving floats)."""
    # The components read in one call each (a slice of a Vector is a tuple of floats), not one by one.
    ax, ay, az = a[:]
    bx, by, bz = b[:]
    return Vector((ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx))


def signed_angle(u: Vector, v: Vector, normal: Vector) -> float:
    """Angle from ``u`` to ``v`` in radians, positive counter-clockwise about ``normal``.

    From the sine and cosine together (atan2), not an arc cosine: mathutils works in
    single precision, where the arc cosine of a dot product cannot tell angles
    below about 0.02 degree from none, and that much pole angle twists a chain.
    """
    axis = normal.normalized()
    return math.atan2(cross(u, v).dot(axis), u.dot(v))


def pole_angle(root_head: Vector, root_tail: Vector, root_x_axis: Vector, chain_end: Vector, pole: Vector) -> float:
    """The IK constraint's pole angle that leaves the chain as it is at rest.

    ``root_head``, ``root_tail`` and ``root_x_axis`` are the first chain bone's own
    (whatever its tail points at: Blender's solver turns each bone about its own
    head-to-tail axis); ``chain_end`` is the last chain bone's tail. Blender's
    solver turns the first bone about that axis so that its X axis, turned by the
    pole angle toward its Z axis, lies in the plane through the bone's head, the
    chain's end and the pole, on the pole's side of the head-end line. So the angle
    is the signed angle, about the bone's axis, from its X axis to the in-plane
    direction at right angles to the bone; Blender counts it from X toward Z, which
    is clockwise looking down the bone, hence the minus.
    Returns 0 where the construction degenerates (pole on the root-end line, a
    zero-length bone); the caller keeps the pole off that line.
    """
    bone_axis = root_tail - root_head
    reach = chain_end - root_head
    plane_normal = cross(reach, pole - root_head)
    if bone_axis.length < _EPSILON or plane_normal.length < _EPSILON:
        return 0.0
    toward_pole = cross(plane_normal, bone_axis)
    # ``toward_pole`` is on the pole's side of the head-end line only while the bone
    # points along the chain; a bone pointing back from the chain's end needs the
    # opposite direction.
    if bone_axis.dot(reach) < 0.0:
        toward_pole = -toward_pole
    x_side = perpendicular(root_x_axis, bone_axis)
    if toward_pole.length < _EPSILON or x_side.length < _EPSILON:
        return 0.0
    return -signed_angle(x_side, toward_pole, bone_axis)


def pole_for(root: Vector, y_axis: Vector, x_axis: Vector, end: Vector, angle: float,
              distance: float) -> Vector:
    """A pole position for which the IK solver keeps this root orientation.

    Inverts ``pole_angle``: the in-plane direction must be the root's X
    axis turned about the bone by minus the pole ``angle``; the plane holds root and end.
    """
    toward = Matrix.Rotation(-angle, 3, (y_axis.x, y_axis.y, y_axis.z)) @ x_axis
    normal = cross(y_axis, toward)
    chain = end - root
    along = y_axis.dot(chain)
    if abs(along) > 1e-9:
        normal = normal - y_axis * (normal.dot(chain) / along)
    side = cross(normal, chain).normalized()
    middle = root + chain * 0.5
    for candidate in (middle + side * distance, middle - side * distance):
        if abs(pole_angle(root, root + y_axis, x_axis, end, candidate) - angle) < 1e-4:
            return candidate
    return middle + side * distance
