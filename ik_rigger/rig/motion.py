"""Motion already on the armature, kept through a build: read before it, keyed after it.

``Motion`` records what plays (the active action or NLA, and the file's other clips that
move a limb) before the bone stage changes any rest (``motion_read``), and after the
constraint stage keys what keeps it playing (``motion_keep``): the new controls
(``animation`` BAKE), or ``ik_fk`` at FK (FK).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import bpy
from mathutils import Vector

from ..core import geometry, joints
from ..core.model import bending_indexes
from ..limb.options import LimbOptions
from ..limb.plan import LimbPlan
from ..parts.chain import left_bent_against, left_straight
from .journal import Journal
from .motion_keep import Keeping
from .motion_read import read_played, to_prebend


class Motion:
    """Motion already on the armature, read before the build and kept after it.

    Per limb, by its ``animation`` option: BAKE keys the new controls from what played
    (read here, before anything changes: see ``keys.Recording``); FK keys ``ik_fk``
    to 0 so the limb keeps playing its own keys; IGNORE does nothing.
    """

    def __init__(self, obj: bpy.types.Object, plans: list[LimbPlan], options: list[LimbOptions],
                 rebuilt: set[int]) -> None:
        self.obj = obj
        self.plans = plans
        self.options = options
        self.played = read_played(obj, plans, options, rebuilt)

    def bent_by_motion(self) -> set[int]:
        """The limbs, straight at rest and to be pre-bent, whose motion (to bake or to play in FK) bends them.

        Pre-bending gives a chain a new rest under its own keys, so its motion would play
        up to the pre-bend off, in FK and in IK alike (IK starts from those keys): a T-pose
        frame by the knee's shift, other frames by the turned rest. IK bends a chain its keys
        bend, and where they leave it straight its handle lies at full reach, so straight is
        what it should show. Only a motion that never bends it leaves it pre-bent.
        """
        recording = self.played.recording
        if recording is None:
            return set()
        poses, count = recording.poses, len(recording.frames)
        found = set()
        for index, (limb_plan, mode, chosen) in enumerate(zip(self.plans, self.played.modes, self.options)):
            if mode not in ("BAKE", "FK") or not to_prebend(limb_plan, chosen):
                continue
            chain = limb_plan.chain
            bending = bending_indexes(chain, {hinge.bone for hinge in limb_plan.hinges
                                              if hinge.axis == joints.IN_LINE})
            reach = Vector((0.0, self.obj.data.bones[chain[-1]].length, 0.0))
            if any(geometry.bend_direction([_joints_at(poses, chain, reach, frame)[index] for index in bending])
                   is not None for frame in range(count)):
                found.add(index)
        return found

    def keep(self, notes: dict[int, list[str]], journal: Journal) -> None:
        """Object or Pose mode, after the constraint stage: key what keeps the motion playing."""
        Keeping(self.obj, self.plans, self.options, self.played, notes, journal).keep()


def _joints_at(poses: dict[str, list], chain: Sequence[str], reach: Vector, frame: int) -> list[Vector]:
    """The chain's heads and the last bone's tail (``reach`` along it) on a recorded frame."""
    return [poses[name][frame].translation for name in chain] + [poses[chain[-1]][frame] @ reach]


def not_prebent(limb_plan: LimbPlan) -> LimbPlan:
    """The plan of a chain straight at rest (or bent slightly the other way), planned again unbent because its
    motion bends it, saying why."""
    chain = limb_plan.chain
    left = (left_straight(chain), left_bent_against(chain))
    shape = "bent slightly the other way" if left[1] in limb_plan.notes else "straight"
    return replace(limb_plan, notes=(*(note for note in limb_plan.notes if note not in left), (
        f"the chain {chain[0]} > {chain[-1]} is {shape} at rest but its motion bends it, so it was not pre-bent: "
        "pre-bent, its own keys would turn a new rest, and the motion would play up to a degree off")))
