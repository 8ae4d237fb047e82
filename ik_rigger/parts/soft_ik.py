"""Soft IK: the chain eases toward full extension instead of popping straight.

It acts on the IK constraint's target, where the chain's end is sent, whichever bone that is
(the handle, the stretch's TARGET, a foot roll's): the IK aims instead at SOFT, a hidden bone
that copies that target (Copy Transforms) and is then put on the line from SOFT_ROOT (a
hidden bone at the chain's root, hanging from what the chain hangs from, as long as the
chain, its location driven by the root bone's: where the clip's keys move the root, it goes
along) to the target, at the distance Andy Nicholas' soft IK gives (a Limit Distance On
Surface). With L the chain's length, s = soft_ik x L, d_a = L - s and D the distance from
the root to the target, that distance is D up to d_a (the end reaches the target exactly)
and d_a + s(1 - exp(-(D - d_a)/s)) beyond: it nears L ever more slowly and never gets there.

The distance is a driver whose expression Blender evaluates without Python: D is the distance in
the armature's space, where the Limit Distance works, whatever the object's scale (mirrored, or
other along each axis): GAUGE, a hidden bone without a parent at the armature's origin, is put at
the target less the root by two Copy Location constraints (the second inverted, with offset), and
a Distance variable reads its translation in its own space, which is that vector, from its own location
(Transform Space: never posed, nothing). In Local Space, Blender 4.2 to 5.2 read a bone's translation with its
constraints applied (Transform Space reads its own location alone, here nothing). A world distance
divided by the world scale, as earlier releases measured, was off by the ratio of the axes along
the line where they differ.
``soft_ik`` the handle's animatable custom property (0 gives
hard IK back exactly: SOFT is then the target itself, up to Maximum Stretch). On a limb that
stretches, the handle's ``stretch`` blends the distance toward D, so at 1 the chain's end reaches
the target and the IK's own stretch takes it past the chain's length, up to Maximum Stretch,
which caps the distance: the stretch's target itself may go further, as far as soft IK needs to
send the end near full extension. The extremity's clone hangs from SOFT (``Draft.follow``), so
the foot or hand stays on the chain's end.

Snapping IK to FK and baking FK to IK put the target where soft IK sends the end to the FK
pose's: at D = d_a - s ln(1 - (D' - d_a)/s) for an FK reach D' (``target_distance``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from mathutils import Vector

from ..core import naming
from ..core.model import PALETTE_MECHANISM, ConstraintPlan, Driven, NewBone, PoseDriver, PropertyPlan
from ..core.switches import is_number
from .base import Draft, Part, option
from .ik import CONSTRAINT_IK
from .stretch import CONSTRAINT_REACH, ROLE_REACH, STRETCH, stretches

ROLE_SOFT_ROOT = "SOFT_ROOT"
ROLE_SOFT = "SOFT"
ROLE_SOFT_GAUGE = "SOFT_GAUGE"
TAG_ROOT = "IK_soft_root"
TAG_SOFT = "IK_soft"
TAG_GAUGE = "IK_soft_gauge"
CONSTRAINT_COPY = "IK Rigger Soft Copy"
CONSTRAINT_SOFT = "IK Rigger Soft"
CONSTRAINT_GAUGE = "IK Rigger Soft Gauge"
CONSTRAINT_GAUGE_ROOT = "IK Rigger Soft Gauge Root"
SOFT_IK = "soft_ik"
MAX_SOFT_IK = 0.25
SOFT_IK_DESCRIPTION = ("How softly the chain reaches full extension, as a fraction of its length: past its length "
                       "minus this the end eases toward the handle and never pops straight (0 is hard IK)")
# Past this many soft lengths beyond d_a the end is within exp(-12) of them from the chain's length: a straight
# FK pose (which soft IK approaches but never reaches) is snapped and baked there.
_FURTHEST = 12.0


@dataclass(frozen=True)
class Options:
    soft_ik: float = option(0.0, "Soft IK", "How softly the chain reaches full extension, as a fraction of its "
                            "length: near its reach the knee or elbow eases straight instead of popping (0: off, "
                            "hard IK; 0.05 is typical). The handle's Soft IK animates it",
                            minimum=0.0, maximum=MAX_SOFT_IK)


def used(options: Any) -> bool:
    return bool(options.soft_ik > 0.0)


def reached(distance: float, soft: float, length: float, stretch: float = 0.0) -> float:
    """How far from the root soft IK sends the chain's end when the target is ``distance`` away."""
    span = soft * length
    start = length - span
    if span <= 0.0 or distance <= start:
        return distance
    eased = start + span * (1.0 - math.exp((start - distance) / span))
    return (1.0 - stretch) * eased + stretch * distance


def target_distance(reach: float, soft: float, length: float, stretch: float = 0.0) -> float:
    """How far from the root the target must be for soft IK to send the end ``reach`` away: the
    inverse of ``reached`` (closed form without stretch; bisection with it, as ``reached`` grows)."""
    span = soft * length
    start = length - span
    if span <= 0.0 or reach <= start or stretch >= 1.0:
        return reach
    if stretch <= 0.0:
        part = min((reach - start) / span, 1.0 - math.exp(-_FURTHEST))
        return start - span * math.log(1.0 - part)
    low, high = start, max(reach, start) + _FURTHEST * span
    for _ in range(80):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if reached(middle, soft, length, stretch) < reach else (low, middle)
    return 0.5 * (low + high)


def expression(length: float, reach: float | None) -> str:
    """The SOFT distance's driver: ``D`` the distance root -> target in the armature's space, ``soft_ik``
    (and ``stretch``) the handle's; a simple expression (no Python), within the 256 characters Blender
    keeps. Past d_a, d_a + s(1 - exp(-(D - d_a)/s)) is L - s exp((d_a - D)/s): in chain lengths,
    1 - soft_ik exp((1 - soft_ik - u)/soft_ik). On a limb that stretches, ``reach`` (its Maximum Stretch
    times L) caps the distance, as the target's own limit does without soft IK."""
    chain = f"{length:.9g}"
    distance = "D"
    u = f"{distance}/{chain}"
    eased = f"{chain}*({u} if {u}<=1-soft_ik else 1-soft_ik*exp((1-soft_ik-{u})/soft_ik))"
    if reach is None:
        return f"{distance} if soft_ik<=0 else {eased}"
    return f"min({distance} if soft_ik<=0 else (1-stretch)*{eased}+stretch*{distance},{reach:.9g})"


def _reach_beyond(draft: Draft, length: float) -> float:
    """Let the stretch's target (where the handle pulls) go past Maximum Stretch as far as soft IK needs
    it to send the end near full extension (``_FURTHEST`` soft lengths past d_a, at the most soft IK
    there is), and return the reach the SOFT distance is capped at instead (Maximum Stretch times L):
    held at Maximum Stretch, the target would leave soft IK short of the straighter poses, which no
    snap or bake could then match (at 0.2, short of 0.994 of the chain's length)."""
    reach = length * draft.options.max_stretch
    index, limit = next((index, planned) for index, planned in enumerate(draft.constraints)
                        if planned.name == CONSTRAINT_REACH)
    settings = tuple((key, reach + _FURTHEST * MAX_SOFT_IK * length if key == "distance" else value)
                     for key, value in limit.settings)
    draft.constraints[index] = replace(limit, settings=settings)
    return reach


def _gauge(draft: Draft, root: str, aimed: str) -> str:
    """GAUGE: at the target less the root, in the armature's space (its rest at the origin, no parent)."""
    gauge = draft.new_name(draft.chain[0], TAG_GAUGE)
    origin, tail, up = Vector((0.0, 0.0, 0.0)), Vector((0.0, draft.length, 0.0)), Vector((0.0, 0.0, 1.0))
    draft.bones.append(NewBone(ROLE_SOFT_GAUGE, gauge, origin, tail, up, None, PALETTE_MECHANISM,
                               naming.COLLECTION_MECHANISM, hidden=True))
    pose_space = (("owner_space", "POSE"), ("target_space", "POSE"))
    draft.constraints.append(ConstraintPlan(gauge, "COPY_LOCATION", CONSTRAINT_GAUGE, aimed, pose_space))
    draft.constraints.append(ConstraintPlan(gauge, "COPY_LOCATION", CONSTRAINT_GAUGE_ROOT, root, (
        ("invert_x", True), ("invert_y", True), ("invert_z", True), ("use_offset", True), *pose_space)))
    return gauge


def _root(draft: Draft) -> str:
    """SOFT_ROOT: at the chain's root, hanging from what the chain hangs from, as long as the chain and
    at rest as its first bone is (IK's: the hidden chain's where there is one, which the hidden part points
    the drivers to), so the same location puts both heads on the same point: its location's drivers copy
    the first bone's, so the soft distance is measured from where the clip or the animator moves the root,
    not from its rest. Copy Location would read the chain's root after the IK it feeds: a cycle."""
    first = draft.skeleton[draft.chain[0]]
    root = draft.new_name(draft.chain[0], TAG_ROOT)
    along = (first.tail - first.head).normalized()
    draft.bones.append(NewBone(ROLE_SOFT_ROOT, root, first.head, first.head + along * draft.length, first.z_axis,
                               first.parent, PALETTE_MECHANISM, naming.COLLECTION_MECHANISM, hidden=True))
    if first.connected and not draft.followed:  # its head stays on its parent's tail, whatever its location
        return root
    for axis in range(3):
        channel = f"location[{axis}]"
        draft.drivers.append(PoseDriver(root, channel, Driven((), channels=(("location", draft.chain[0], channel),))))
    return root


def plan(draft: Draft) -> None:
    soft_ik = draft.options.soft_ik
    if soft_ik <= 0.0:
        return
    index, ik = next((index, planned) for index, planned in enumerate(draft.constraints)
                     if planned.kind == "IK" and planned.name == CONSTRAINT_IK)
    aimed = next(bone for bone in draft.bones if bone.name == ik.subtarget)
    length = draft.length
    root = _root(draft)
    soft = draft.new_name(draft.end_bone, TAG_SOFT)
    draft.bones.append(NewBone(ROLE_SOFT, soft, aimed.head, aimed.tail, aimed.z_axis, aimed.parent, PALETTE_MECHANISM,
                               naming.COLLECTION_MECHANISM, hidden=True))
    pose_space = (("owner_space", "POSE"), ("target_space", "POSE"))
    draft.constraints.append(ConstraintPlan(soft, "COPY_TRANSFORMS", CONSTRAINT_COPY, aimed.name, pose_space))
    draft.constraints.append(ConstraintPlan(soft, "LIMIT_DISTANCE", CONSTRAINT_SOFT, root, (
        ("limit_mode", "LIMITDIST_ONSURFACE"), ("distance", length), *pose_space)))
    gauge = _gauge(draft, root, aimed.name)
    stretching = stretches(draft.options)
    switches = ((SOFT_IK, draft.handle),) + (((STRETCH, draft.handle),) if stretching else ())
    reach = _reach_beyond(draft, length) if stretching else None
    # D: GAUGE's translation with its constraints, less its own location (never posed: nothing).
    draft.drivers.append(PoseDriver(soft, f'constraints["{CONSTRAINT_SOFT}"].distance', Driven(
        switches, expression(length, reach), distances=(("D", gauge, gauge),), distance_space="LOCAL_SPACE",
        distance_base_space="TRANSFORM_SPACE")))
    draft.constraints[index] = replace(ik, subtarget=soft)
    # A rebuild with another Soft IK sets the handle's value, unless the animator changed it since (or keys it).
    kept = draft.kept.get("soft_ik")
    draft.properties.append(PropertyPlan(draft.handle, SOFT_IK, soft_ik, 0.0, MAX_SOFT_IK, SOFT_IK_DESCRIPTION,
                                         overrides=kept is not None and kept[0] == kept[1]))
    # The clone rides on SOFT, so the foot or hand stays on the chain's end where it eases short of the handle.
    draft.follow = soft


def follow_root(obj: Any, parts: Any) -> None:
    """Point SOFT_ROOT's location drivers at the chain's root again after it was renamed: Blender renames a
    driver's path to a bone's property, not to one item of it (``location[0]``), so until then SOFT_ROOT
    stays at its rest, as an earlier release's did."""
    root = parts.made.get(ROLE_SOFT_ROOT)
    data = obj.animation_data
    first = parts.solver[0] if parts.solver else parts.chain[0] if parts.chain else None
    if root is None or data is None or first is None or first not in obj.pose.bones:
        return
    path, wanted = obj.pose.bones[root].path_from_id("location"), obj.pose.bones[first].path_from_id("location")
    for axis in range(3):
        curve = data.drivers.find(path, index=axis)
        if curve is None or len(curve.driver.variables) != 1:  # none (a connected root), or changed by hand
            continue
        target = curve.driver.variables[0].targets[0]
        if target.id == obj and target.data_path != f"{wanted}[{axis}]":
            target.data_path = f"{wanted}[{axis}]"


def _settings(obj: Any, parts: Any) -> tuple[float, float, float] | None:
    """The limb's soft IK as it stands (soft_ik, the chain's length, the stretch), None without one."""
    root = parts.made.get(ROLE_SOFT_ROOT)
    handle = obj.pose.bones.get(parts.handle) if parts.handle else None
    if root is None or handle is None or ROLE_SOFT not in parts.made:
        return None
    stretch = float(handle.get(STRETCH, 0.0)) if ROLE_REACH in parts.made else 0.0
    return float(handle.get(SOFT_IK, 0.0)), obj.data.bones[root].length, stretch


def _measured_from(obj: Any, parts: Any, first: Any, parent: Any) -> Vector:
    """Where soft IK measures from, given the armature-space poses of the chain's first bone and of SOFT_ROOT's
    parent (None without one): the first bone's head, which SOFT_ROOT's location drivers put it on; SOFT_ROOT's
    rest head as its parent carries it on a limb made before them (it stays there whatever moves the root)."""
    root = parts.made[ROLE_SOFT_ROOT]
    data = obj.animation_data
    if data is not None and data.drivers.find(obj.pose.bones[root].path_from_id("location")) is not None:
        return first.translation
    bone = obj.data.bones[root]
    if bone.parent is None:
        return bone.head_local.copy()
    return parent @ bone.parent.matrix_local.inverted() @ bone.head_local


def sent(root: Vector, end: Vector, settings: tuple[float, float, float]) -> Vector:
    """Where the target must be for soft IK to send the chain's end from ``root`` to ``end``."""
    reach = (end - root).length
    if reach <= 0.0:
        return end.copy()
    return root + (end - root) * (target_distance(reach, *settings) / reach)


def snap_to_fk(snap: Any) -> list[str]:
    """The handle slid along the root -> end line so soft IK sends the end where the FK chain ends (the
    handle's hook put the target on that end, ``snap.aim``)."""
    settings = _settings(snap.obj, snap.parts)
    if settings is None:
        return []
    name, parts = snap.parts.handle, snap.parts
    parent = snap.obj.data.bones[parts.made[ROLE_SOFT_ROOT]].parent
    root = _measured_from(snap.obj, parts, snap.fk[parts.chain[0]], snap.fk[parent.name] if parent else None)
    shift = sent(root, snap.aim, settings) - snap.aim
    # The handle's location moves it in its parent's frame at rest (the parent is not snapped: its FK pose holds).
    bone = snap.obj.data.bones[name]
    frame = snap.fk[bone.parent.name] @ bone.parent.matrix_local.inverted() @ bone.matrix_local \
        if bone.parent is not None else bone.matrix_local
    handle = snap.obj.pose.bones[name]
    handle.location = handle.location + frame.to_3x3().inverted() @ shift
    return [name]


def bake_to_ik(bake: Any) -> None:
    """The handle's keys slid along the root -> end line on every frame, so soft IK sends the end where
    the FK chain ends. ``bake.made`` keeps the handle's poses as the handle's hook worked them out: the
    clone hangs from SOFT, which stands there."""
    parts, obj = bake.parts, bake.obj
    settings = _settings(obj, parts)
    if settings is None or parts.handle not in bake.made:
        return
    bones = obj.data.bones
    parent = bones[parts.handle].parent
    local = bake.local(bones[parts.handle].matrix_local, parent.matrix_local if parent is not None else None)
    parent_poses = bake.poses_of(parent.name) if parent is not None else None
    roots = bake.poses_of(parts.chain[0])
    above = bones[parts.made[ROLE_SOFT_ROOT]].parent
    carriers = bake.poses_of(above.name) if above is not None else None
    bases = []
    for number, (pose, end) in enumerate(zip(bake.made[parts.handle], bake.ends)):
        moved = pose.copy()
        root = _measured_from(obj, parts, roots[number], carriers[number] if carriers is not None else None)
        moved.translation += sent(root, end, settings) - end
        bases.append(local.basis(moved, parent_poses[number] if parent_poses is not None else None))
    bake.key(parts.handle, bases)


def keep(obj: Any, parts: Any) -> tuple[float, float | None] | None:
    """The handle's Soft IK now and as the last build set it (its default), for a rebuild."""
    handle = obj.pose.bones.get(parts.handle or "")
    if handle is None or not is_number(handle.get(SOFT_IK)):  # gone, or made a text by hand: the option's value
        return None
    built = handle.id_properties_ui(SOFT_IK).as_dict().get("default")
    return float(handle[SOFT_IK]), float(built) if built is not None else None


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    handle = obj.pose.bones.get(parts.handle) if parts.handle else None
    if handle is not None and SOFT_IK in handle and ROLE_SOFT in parts.made:
        layout.prop(handle, f'["{SOFT_IK}"]', text="Soft IK", slider=True)


PART = Part("soft_ik", Options, plan, roles=(ROLE_SOFT_ROOT, ROLE_SOFT, ROLE_SOFT_GAUGE), used=used, plans=used,
            targets={"IK": (ROLE_SOFT,), "LIMIT_DISTANCE": (ROLE_SOFT_ROOT,), "COPY_LOCATION": (ROLE_SOFT_ROOT,)},
            draw=draw, keep=keep, snap_to_fk=snap_to_fk,
            bake_to_ik=bake_to_ik)
