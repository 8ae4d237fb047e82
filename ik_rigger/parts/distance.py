"""Distance Limit: keep the hand (the chain's end) inside, on, or outside a sphere.

With a Distance Limit, the limb gets a control, DISTANCE_CENTER, whose head is the
sphere's centre and whose length is its radius, so its wire sphere shows the sphere as
built. It hangs from what the handle hangs from and stands where the rest pose keeps
the limit: on the chain's end at rest for Inside, Distance Radius back toward the
chain's root for On Surface and Outside, so a fresh rig rests as built. A Limit
Distance constraint on the IK target (Limit Mode and Distance, the modes of iTaSC's
Distance in Blender's manual) keeps the target inside, on or outside that sphere, after
the stretch's reach limit; its influence is the handle's ``ik_fk``. The chain reaches
the limited target like any other, so the hand keeps the limit under either IK solver,
wherever the chain can reach, and the pole still turns the knee or elbow.

Distance Method *iTaSC Distance* uses iTaSC's own Distance instead (an IK constraint of the
type Distance on the chain's last bone, after the limb's IK, as Blender's manual describes),
for riggers who want the solver itself to weigh the limit. Its influence is the handle's
``ik_fk`` times ``solver == 1`` (a driver reading the armature's solver), so under the
Standard solver it does nothing. Why it is not the default, as measured on Blender 4.2 and
5.2:

- iTaSC in Animation mode, its default, does not hold it: alone on a chain, On Surface
  leaves the end up to 0.3 of the chain's length off the sphere; beside the IK that
  reaches for the handle, the end strays up to 0.16 (Inside) and 0.15 (Outside) of the
  chain's length past the sphere, and up to half of it off the surface (On Surface). In
  Simulation mode the two are weighed: the end stops about halfway to the handle.
- Blender's iTaSC honours a pole only on a chain with one target: beside the IK, the
  Distance stops the pole from turning the chain.
- The Standard solver ignores the type: it solves the first active IK constraint of a
  bone as a plain one, so the Distance pulls the hand onto the centre whenever it comes
  first or the limb's own IK is off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from ..core import naming
from ..core.model import PALETTE_CONTROL, ConstraintPlan, NewBone
from .base import Draft, Item, Part, Shape, option
from .handle import switch
from .stretch import add_target

ROLE_DISTANCE_CENTER = "DISTANCE_CENTER"
TAG_CENTER = "IK_distance"
CONSTRAINT_DISTANCE = "IK Rigger Distance"
LIMIT_ITEMS: tuple[Item, ...] = (
    ("NONE", "None", "No distance limit"),
    ("INSIDE", "Inside", "The hand stays inside the sphere"),
    ("ON_SURFACE", "On Surface", "The hand stays on the sphere"),
    ("OUTSIDE", "Outside", "The hand stays outside the sphere"),
)
LIMIT_MODES = {"INSIDE": "LIMITDIST_INSIDE", "ON_SURFACE": "LIMITDIST_ONSURFACE", "OUTSIDE": "LIMITDIST_OUTSIDE"}

_SEGMENTS = 24
_CIRCLE = [(math.cos(2 * math.pi * i / _SEGMENTS), math.sin(2 * math.pi * i / _SEGMENTS)) for i in range(_SEGMENTS)]
# Three great circles of the unit sphere: on a bone as long as the radius, they draw the sphere.
SPHERE = Shape("IK Distance",
               tuple(point for a, b in _CIRCLE for point in ((a, b, 0.0), (0.0, a, b), (b, 0.0, a))),
               tuple((3 * i + k, 3 * ((i + 1) % _SEGMENTS) + k) for i in range(_SEGMENTS) for k in range(3)), 1.0)


METHOD_ITEMS: tuple[Item, ...] = (
    ("LIMIT", "Limit Distance", "A Limit Distance on the IK target: the limit holds under either solver and the "
     "pole keeps turning the knee or elbow"),
    ("ITASC", "iTaSC Distance", "Blender's own iTaSC Distance (an IK constraint of the type Distance, as the manual "
     "describes): active only under the iTaSC solver, where it weighs the limit against reaching the handle, "
     "holds it loosely in Animation mode and stops the pole from turning the chain"),
)
# The armature's solver as a driver reads it: 0 Standard, 1 iTaSC.
SOLVER_PATH = "pose.ik_solver"


@dataclass(frozen=True)
class Options:
    distance_limit: str = option("NONE", "Distance Limit", "Keep the hand inside, on or outside a sphere around a "
                                 "control (the Distance Center), under either IK solver", items=LIMIT_ITEMS)
    distance_radius: float = option(0.25, "Distance Radius", "The sphere's radius, as a fraction of the chain's "
                                    "length", minimum=0.01, maximum=10.0, soft_maximum=2.0)
    distance_method: str = option("LIMIT", "Distance Method", "How the limit is kept", items=METHOD_ITEMS)


def limits_target(options: Any) -> bool:
    """Whether the limit is a Limit Distance on the IK's target (so the IK needs a target of its own)."""
    return options.distance_limit in LIMIT_MODES and options.distance_method == "LIMIT"


def plan(draft: Draft) -> None:
    mode = LIMIT_MODES.get(draft.options.distance_limit)
    if mode is None:
        return
    joints = draft.joints
    radius = draft.options.distance_radius * draft.length
    inward = (joints[0] - joints[-1]).normalized()
    centre = joints[-1] if mode == "LIMITDIST_INSIDE" else joints[-1] + inward * radius
    name = draft.new_name(draft.end_bone, TAG_CENTER)
    draft.bones.append(NewBone(ROLE_DISTANCE_CENTER, name, centre, centre - inward * radius, draft.bend,
                               draft.controls_parent, PALETTE_CONTROL, naming.COLLECTION_CONTROLS))
    if draft.options.distance_method == "ITASC":
        # On the chain's last bone, after the limb's IK; the Standard solver would take it for a plain IK
        # and pull the hand onto the centre, so its influence is 0 unless the armature solves with iTaSC.
        on = switch(draft.handle)
        draft.constraints.append(ConstraintPlan(
            draft.last, "IK", CONSTRAINT_DISTANCE, name,
            settings=(("ik_type", "DISTANCE"), ("limit_mode", mode), ("distance", radius),
                      ("chain_count", len(draft.chain)), ("use_tail", True)),
            influence=replace(on, expression=f"{on.variables[0][0]} * (solver == 1)",
                              object_paths=(("solver", SOLVER_PATH),))))
        return
    draft.constraints.append(ConstraintPlan(add_target(draft), "LIMIT_DISTANCE", CONSTRAINT_DISTANCE, name, settings=(
        ("limit_mode", mode), ("distance", radius), ("owner_space", "POSE"), ("target_space", "POSE")),
        influence=switch(draft.handle)))


def draw(layout: Any, obj: Any, limb: Any, parts: Any) -> None:
    centre = parts.made.get(ROLE_DISTANCE_CENTER)
    limit = next((constraint for owner, name in parts.constraints
                  for constraint in (obj.pose.bones[owner].constraints[name],)
                  if constraint.type in ("LIMIT_DISTANCE", "IK") and constraint.subtarget == centre), None)
    if centre is None or limit is None:
        return
    layout.prop(limit, "limit_mode", text="Distance Limit")
    layout.prop(limit, "distance", text="Distance")


PART = Part("distance", Options, plan, roles=(ROLE_DISTANCE_CENTER,), shapes={ROLE_DISTANCE_CENTER: SPHERE},
            targets={"LIMIT_DISTANCE": (ROLE_DISTANCE_CENTER,), "IK": (ROLE_DISTANCE_CENTER,)}, draw=draw,
            plans=lambda options: options.distance_limit in LIMIT_MODES)
