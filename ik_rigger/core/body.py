"""Where a character faces and which way is up, in armature space.

Imported characters do not follow Blender's convention (facing -Y, standing
along +Z) in armature space: Y-up files keep Y up inside the armature and turn
the object instead, and a character may face any direction. So up comes from the
armature object's matrix (the world's up, seen from inside the armature), and the
front from the body itself: a character's left (where its left-named bones are,
against their right-named twins) with up says where it faces; else the feet and
toes point forward; else a body that lies along the ground (a quadruped) carries
its head at the front. Blender's convention, seen through the object's matrix, is
the last resort.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from itertools import repeat
from math import inf, isfinite
from operator import add, attrgetter

from mathutils import Vector

from . import naming
from .geometry import cross, perpendicular
from .model import REST_COLUMNS, BoneInfo, Skeleton

# The part of the body's height, from the ground up, whose bones count as feet and toes.
FEET_HEIGHT = 0.25
# How much of the feet's length must point one way (not cancel out) to trust them.
FEET_AGREEMENT = 0.25
# How far (as a part of the body's height) the head must stand out from the body's
# middle, along the ground, and above the body's middle height, to say where the front is.
HEAD_REACH = 0.25
HEAD_RISE = 0.25

_EPSILON = 1e-9


def facing(skeleton: Skeleton) -> tuple[Vector, Vector]:
    """The character's front and up as unit vectors at right angles, in armature space."""
    up = skeleton.up.normalized()
    segments = _segments(skeleton)
    front = _front_from_sides(skeleton, up) or _front_from_feet(segments, up) or _front_from_head(segments, up)
    if front is None:
        front = perpendicular(skeleton.front, up)
        if front.length < _EPSILON:
            front = perpendicular(Vector((0.0, -1.0, 0.0)), up)
    return front.normalized(), up


def _front_from_sides(skeleton: Skeleton, up: Vector) -> Vector | None:
    """Left cross up, the left found from each left-named bone against its right twin (numbered apart too:
    ``thighL_07`` against ``thighR_15``)."""
    left = Vector((0.0, 0.0, 0.0))
    spread = 0.0
    bones = skeleton.bones
    for name, twin in _left_twins(bones).items():
        across = perpendicular(bones[name].head - bones[twin].head, up)
        left += across
        spread += across.length
    # Twins that disagree (a crossed pose) cancel out: trust only a clear left.
    if spread < _EPSILON or left.length < 0.5 * spread:
        return None
    return cross(left, up).normalized()


def _left_twins(names: Collection[str]) -> dict[str, str]:
    """Each name among ``names`` with a left side, and its twin on the right among them: ``SideName.twin``, else,
    as ``naming.flip_name`` finds it, the one name differing from the mirrored name only by an exporter's number
    (``thighL_07`` and ``thighR_15``). The names are grouped by those numbers once for all, not searched for each."""
    twins: dict[str, str] = {}
    stems: dict[str, list[str]] | None = None
    for name in names:
        parts = naming.split_side(name, names)
        if parts.side != naming.LEFT:
            continue
        twin = parts.twin(names)
        if twin is None:
            match = naming.INDEXED.match(parts.flipped() or "")
            if match is None:
                continue
            if stems is None:
                stems = {}
                for known in names:
                    if (found := naming.INDEXED.match(known)) is not None:
                        stems.setdefault(found["stem"], []).append(known)
            numbered = stems.get(match["stem"], [])
            if len(numbered) != 1:
                continue
            twin = numbered[0]
        twins[name] = twin
    return twins


def _segments(skeleton: Skeleton) -> list[tuple[Vector, Vector]]:
    """Each bone as its head and the joint it leads to.

    That is its only child's head when it has one: imported bones' tails often
    point anywhere but the next joint. A bone with no child, or with several, has
    only its tail to say where it goes.
    """
    only = skeleton.only_children()
    return [(bone.head, _lead(bone, only.get(bone.name))) for bone in skeleton.bones.values()]


def _lead(bone: BoneInfo, only_child: BoneInfo | None) -> Vector:
    if only_child is not None and (only_child.head - bone.head).length > _EPSILON:
        return only_child.head
    return bone.tail


def _feet_limit(heights: list[float]) -> float | None:
    """The height below which the joints are the feet's (the lowest ``FEET_HEIGHT`` of the body's
    height), from the heights of the segments' ends; None for a skeleton without height."""
    if not heights or max(heights) - min(heights) < _EPSILON:
        return None
    return min(heights) + FEET_HEIGHT * (max(heights) - min(heights))


def _end_extremes(skeleton: Skeleton, up: Vector) -> list[float]:
    """The lowest and highest along ``up`` of the segments' ends (``_segments``), without making the
    segments (none for no bones): every head, and the tails that end a segment (one that ends at its
    child's head ends at a head). Only a tail beyond the heads' span is asked whether it ends one."""
    bones = skeleton.bones.values()
    columns = skeleton.measures.get(REST_COLUMNS)
    if columns is not None:  # read from the armature's columns, as Vector.dot reads each bone's
        heights, tails = _heights(columns[0], up), _heights(columns[1], up)
    else:
        # Mapped through bound methods, not a comprehension's calls: read once per skeleton, of every bone.
        heights = list(map(up.dot, map(_HEAD, bones)))
        tails = list(map(up.dot, map(_TAIL, bones)))
    if not heights:
        return []
    low, high = min(heights), max(heights)
    # Most skeletons have no tail beyond their heads' span: none to ask of. Asked as "all within", so
    # that a first height that is no number (NaN, which min and max return then) is walked as before.
    if min(tails) >= low and max(tails) <= high:
        return [low, high]
    ends_at_tail = None
    for bone, height in zip(bones, tails):
        if low <= height <= high:
            continue
        if ends_at_tail is None:
            ends_at_tail = _ends_at_tail(skeleton)
        if ends_at_tail(bone):
            low, high = min(low, height), max(high, height)
    return [low, high]


def _heights(points: Sequence[float], up: Vector) -> list[float]:
    """``up.dot`` of each point of ``points`` (three floats each), as ``Vector.dot`` gives it for a Vector of
    them. Straight up (Blender's own armatures, an object not turned) each is the point's Z: Vector.dot
    adds, in double from the last axis, the single-precision products Z times 1 and X and Y times 0
    (nothing, when X and Y are numbers). Else each point's Vector is made here, not the bone's."""
    if up[0] == 0.0 and up[1] == 0.0 and up[2] == 1.0 and isfinite(sum(points)):
        return list(map(add, repeat(0.0), points[2::3]))
    return list(map(up.dot, map(Vector, zip(*[iter(points)] * 3))))


_HEAD, _TAIL = attrgetter("head"), attrgetter("tail")


def _ends_at_tail(skeleton: Skeleton) -> Callable[[BoneInfo], bool]:
    """Whether a bone's segment ends at its tail (``_lead``): it has no only child, or one at its own head.
    Its children asked, not every bone's only child (``only_children``): few tails are asked of."""
    def ends(bone: BoneInfo) -> bool:
        children = skeleton.children(bone.name)
        return len(children) != 1 or (children[0].head - bone.head).length <= _EPSILON
    return ends


def at_ground(skeleton: Skeleton, point: Vector) -> bool:
    """Whether ``point`` (armature space) lies as low as the feet: a foot's joint, a root bone's head."""
    height = point.dot(skeleton.up)
    measures = skeleton.measures
    if "feet_limit" not in measures:
        if "highest_limit" not in measures:
            measures["highest_limit"] = _highest_limit(skeleton)
        if height > measures["highest_limit"]:
            return False  # a hand, above wherever the feet's limit lies: it need not be measured
    limit = _ground_limit(skeleton)
    return limit is not None and height <= limit


def _highest_limit(skeleton: Skeleton) -> float:
    """Where the feet's limit (``_ground_limit``) lies at the highest, read from the columns of a skeleton
    read from an armature standing straight up: the lowest head's height and a quarter of the way from
    it to the highest head or tail (the limit's low end lies at or below that head, its high end at or
    below that height). Infinite where there is no such bound (other skeletons, points no number)."""
    columns = skeleton.measures.get(REST_COLUMNS)
    up = skeleton.up
    if columns is None or not (up[0] == 0.0 and up[1] == 0.0 and up[2] == 1.0):
        return inf
    heads, tails = columns[0], columns[1]
    if not heads or not isfinite(sum(heads) + sum(tails)):
        return inf
    lowest, highest = min(heads[2::3]), max(max(heads[2::3]), max(tails[2::3]))
    # Raised by far more than the limit's rounding could put it above (a billionth of the heights).
    return lowest + FEET_HEIGHT * (highest - lowest) + 1e-9 * (abs(lowest) + abs(highest))


def _ground_limit(skeleton: Skeleton) -> float | None:
    """The height along ``up`` below which a point is at the ground (``at_ground``), measured once per skeleton."""
    measures = skeleton.measures
    if "feet_limit" not in measures:
        measures["feet_limit"] = _feet_limit(_end_extremes(skeleton, skeleton.up))
    return measures["feet_limit"]


def ground_above(skeleton: Skeleton, name: str) -> str | None:
    """The nearest of ``name``'s ancestors whose head is at the ground (``at_ground``), if any.

    Kept for every bone on the way up, once per skeleton: the legs of a long body (a centipede's
    along its spine) share their lineage, which each would otherwise walk again, and the bones
    no limb hangs from are never asked.
    """
    found = skeleton.measures.setdefault("ground_above", {})
    bones = skeleton.bones
    # ``at_ground`` of each parent walked, its measure read once.
    limit, up = _ground_limit(skeleton), skeleton.up
    walked = []
    bone: str | None = name
    while bone is not None and bone not in found:
        walked.append(bone)
        parent = bones[bone].parent
        if parent is not None and limit is not None and bones[parent].head.dot(up) <= limit:
            found[bone] = parent
            break
        bone = parent
    # Between each bone walked and the answer, no bone stands at the ground: they share it.
    answer = found.get(bone) if bone is not None else None
    for below in walked:
        found[below] = answer
    return answer


def _front_from_feet(segments: list[tuple[Vector, Vector]], up: Vector) -> Vector | None:
    """Where the bones near the ground point, along the ground, if they agree."""
    limit = _feet_limit([point.dot(up) for segment in segments for point in segment])
    if limit is None:
        return None
    total = Vector((0.0, 0.0, 0.0))
    length = 0.0
    for head, end in segments:
        if head.dot(up) <= limit and end.dot(up) <= limit:
            total += perpendicular(end - head, up)
            length += (end - head).length
    if length < _EPSILON or total.length < FEET_AGREEMENT * length:
        return None
    return total.normalized()


def _front_from_head(segments: list[tuple[Vector, Vector]], up: Vector) -> Vector | None:
    """The way the highest point stands out from the body's middle, along the ground."""
    points = [point for segment in segments for point in segment]
    if not points:
        return None
    heights = sorted(point.dot(up) for point in points)
    top = max(points, key=lambda point: point.dot(up))
    height = heights[-1] - heights[0]
    middle = sum(points, Vector((0.0, 0.0, 0.0))) / len(points)
    out = perpendicular(top - middle, up)
    # A head stands above most of the body; a flat skeleton has no highest point to speak of.
    rise = heights[-1] - heights[len(heights) // 2]
    if height < _EPSILON or out.length < HEAD_REACH * height or rise < HEAD_RISE * height:
        return None
    return out.normalized()


def leads_to(skeleton: Skeleton, name: str) -> Vector:
    """The joint bone ``name`` leads to: its only child's head, else its own tail (see ``_segments``)."""
    return _lead(skeleton[name], skeleton.only_children().get(name))
