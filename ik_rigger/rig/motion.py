"""Motion already on the armature, kept through a build: read before it, keyed after it.

``Motion`` records what plays (the active action or NLA, and the file's other clips that
move a limb) before the bone stage changes any rest, and after the constraint stage keys
what keeps it playing: the new controls (``animation`` BAKE), or ``ik_fk`` at FK (FK).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

import bpy
from mathutils import Vector

from ..core import geometry, joints
from ..core.errors import RigError
from ..core.notes import warning
from ..core.plan import LimbOptions, LimbPlan, bending_indexes, left_straight
from . import bake, records
from .clips import Clip, followed, moves, other_clips, passed_clips, played_frames, playing_alone, uses_nla
from .journal import Journal
from .keys import Recording, default_interpolation

ANIMATION_MODES = ("BAKE", "FK", "IGNORE")

# How many of an armature's other clips a build note names.
_CLIPS_NAMED = 4


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
        self.frames = played_frames(obj, {name for limb_plan in plans for name in _limb_bones(limb_plan)})
        self.modes = []
        for index, (limb_plan, limb_options) in enumerate(zip(plans, options)):
            if limb_options.animation not in ANIMATION_MODES:
                raise RigError(f"unknown animation option '{limb_options.animation}'", bone=limb_plan.chain[-1],
                               hint=f"Use one of: {', '.join(ANIMATION_MODES)}.")
            # A rebuilt limb keeps its controls, and with them the keys that animate it.
            moving = bool(self.frames) and index not in rebuilt and moves(obj, _limb_bones(limb_plan))
            self.modes.append(limb_options.animation if moving else "IGNORE")
        # Limbs whose chain bones Fix Bone Orientation turns: their keys are keyed anew (see _key).
        self.turned = [limb_options.fix_orientation and any(edit.name in limb_plan.chain
                                                            for edit in limb_plan.bone_edits)
                       for limb_plan, limb_options in zip(plans, options)]
        # What is recorded: the limbs to bake, and those played in FK whose bones turn.
        wanted: set[str] = set()
        for limb_plan, mode, turned, chosen in zip(plans, self.modes, self.turned, options):
            if mode == "BAKE" or (mode == "FK" and (turned or _to_prebend(limb_plan, chosen))):
                wanted |= _recorded_bones(obj, limb_plan)
        self.started = time.perf_counter()
        self.recording = Recording(obj, self.frames, wanted) if wanted else None
        if self.recording is not None:
            self.recording.check_scaled()
        # The file's other clips (Clip) that move a limb to bake, each recorded playing alone:
        # its keys go into its own action, so it plays as it did whenever it is made active.
        self.other_clips = other_clips(obj)
        self.passed = passed_clips(obj)
        shared: dict[str, tuple[Clip, list[int], set[str]]] = {}
        for index, (limb_plan, limb_options) in enumerate(zip(plans, options)):
            if index not in rebuilt and (limb_options.animation == "BAKE" or
                                         (limb_options.animation == "FK" and self.turned[index])):
                for clip in self._clips_moving(limb_plan):
                    entry = shared.setdefault(clip.name, (clip, [], set()))
                    entry[1].append(index)
                    entry[2].update(_recorded_bones(obj, limb_plan))
        self.clips: list[tuple[Clip, Recording, list[int]]] = []
        for clip, limbs, names in shared.values():
            with playing_alone(obj, clip):
                recording = Recording(obj, clip.frames, names)
                recording.check_scaled()
                self.clips.append((clip, recording, limbs))
        self.read = time.perf_counter() - self.started

    def _clips_moving(self, limb_plan: LimbPlan) -> list[Clip]:
        """The file's other clips (read once per build) that move the limb."""
        bones = _limb_bones(limb_plan)
        names = followed(self.obj, bones)[0]
        return [clip for clip in self.other_clips if clip.moves(names)]

    def _name_passed(self, index: int, limb_plan: LimbPlan, notes: dict[int, list[str]]) -> None:
        """Name the file's actions that move the limb but are not taken for its clips: their keys stay as
        they were, so made active on this armature they play under its IK controls."""
        if self.options[index].animation == "IGNORE" or not self.passed:
            return
        names = followed(self.obj, _limb_bones(limb_plan))[0]
        for clip, why in self.passed:
            if clip.moves(names):
                notes.setdefault(index, []).append(warning(
                    f"the action '{clip.name}' also moves {limb_plan.chain[-1]} but was left as it is: {why}"))

    def bent_by_motion(self) -> set[int]:
        """The limbs, straight at rest and to be pre-bent, whose motion (to bake or to play in FK) bends them.

        Pre-bending gives a chain a new rest under its own keys, so its motion would play
        up to the pre-bend off, in FK and in IK alike (IK starts from those keys): a T-pose
        frame by the knee's shift, other frames by the turned rest. IK bends a chain its keys
        bend, and where they leave it straight its handle lies at full reach, so straight is
        what it should show. Only a motion that never bends it leaves it pre-bent.
        """
        if self.recording is None:
            return set()
        poses, count = self.recording.poses, len(self.recording.frames)
        found = set()
        for index, (limb_plan, mode, chosen) in enumerate(zip(self.plans, self.modes, self.options)):
            if mode not in ("BAKE", "FK") or not _to_prebend(limb_plan, chosen):
                continue
            chain = limb_plan.chain
            bending = bending_indexes(chain, {hinge.bone for hinge in limb_plan.hinges
                                              if hinge.axis == joints.IN_LINE})
            reach = Vector((0.0, self.obj.data.bones[chain[-1]].length, 0.0))
            if any(geometry.bend_direction([_joints_at(poses, chain, reach, frame)[index] for index in bending])
                   is not None for frame in range(count)):
                found.add(index)
        return found

    def _key(self, index: int, parts: records.Parts, recording: Recording, journal: Journal) -> int:
        """Key what keeps limb ``index`` playing ``recording`` into the action that plays; the frames keyed.

        Baked, its controls. When Fix Bone Orientation turned its chain bones, their own keys
        too, anew on their new rests: the keys they had would turn them differently now, and
        IK, which starts from them, could bend the other way. Only the turned bones: the others
        (the foot, whether it hangs from the chain or from the root) move the mesh as they did
        with the keys they have, and a clip that had none for them gets none.
        """
        interpolation = default_interpolation()
        if self.options[index].animation == "BAKE":
            bake.key_controls(self.obj, parts, recording, interpolation, journal)
        if self.turned[index]:
            turned = {edit.name for edit in self.plans[index].bone_edits}
            bake.key_chain(self.obj, parts, recording, interpolation, journal, only=turned)
        return len(recording.frames)

    def keep(self, notes: dict[int, list[str]], journal: Journal) -> None:
        """Object or Pose mode, after the constraint stage: key what keeps the motion playing."""
        baked = [mode == "BAKE" for mode in self.modes].count(True)
        through = " (what its NLA strips play)" if uses_nla(self.obj) else ""
        for recording in [self.recording, *(recording for _, recording, _ in self.clips)]:
            if recording is not None:
                recording.follow_rests(self.obj)
        for index, (limb_plan, mode) in enumerate(zip(self.plans, self.modes)):
            clips = [(clip, recording) for clip, recording, limbs in self.clips if index in limbs]
            self._name_passed(index, limb_plan, notes)
            if self.options[index].animation == "IGNORE":  # clips play under its IK (in FK they play as they did)
                unbaked = [clip.name for clip in self._clips_moving(limb_plan)]
                if unbaked:
                    notes.setdefault(index, []).append(warning(
                        f"the file's other clips {_named(unbaked)} also move {limb_plan.chain[-1]}; made "
                        "active, they play under its IK controls: to play one as it was, switch the limb to FK, or "
                        "key its controls from it with Bake IK/FK (FK to IK)"))
            if mode == "IGNORE" and not clips:
                continue
            limb = records.limb_of(self.obj, limb_plan.chain[-1])
            parts = records.resolve(self.obj, limb)
            began = time.perf_counter()
            what = "its IK controls" if self.options[index].animation == "BAKE" else "its turned bones"
            if clips:
                for clip, recording in clips:
                    with playing_alone(self.obj, clip):
                        self._key(index, parts, recording, journal)
                notes.setdefault(index, []).append(
                    f"kept the motion of {limb_plan.chain[-1]} in the file's other clips "
                    f"{_named([clip.name for clip, _ in clips])}: keyed {what} in each clip's own action, so each "
                    f"plays as it did when made active, in {time.perf_counter() - began:.2f} s")
                began = time.perf_counter()
            if mode == "IGNORE":
                continue
            if self.turned[index] and self.recording is not None:
                notes.setdefault(index, []).append(
                    f"the turned bones' own keys were keyed anew on their new rests over frames "
                    f"{self.recording.frames[0]} to {self.recording.frames[-1]}, so the motion plays the same in FK "
                    "too")
            if mode == "BAKE" and self.recording is not None:
                count = self._key(index, parts, self.recording, journal)
                seconds = time.perf_counter() - began + self.read / max(baked, 1)
                frames = f"{count} frame" + ("" if count == 1 else "s")
                notes.setdefault(index, []).append(
                    f"kept the motion of {limb_plan.chain[-1]}: baked {frames}{through} onto its IK controls "
                    f"in {seconds:.2f} s")
                if _to_prebend(limb_plan, self.options[index]):
                    notes[index].append(
                        f"its motion leaves the chain {limb_plan.chain[0]} > {limb_plan.chain[-1]} straight, so it "
                        "was pre-bent all the same: its IK plays the motion as it was, and its own keys, played in "
                        f"FK, within {geometry.PREBEND_DEGREES:g} degree of it")
            else:
                if self.turned[index] and self.recording is not None:
                    self._key(index, parts, self.recording, journal)
                bake.key_switch(self.obj, parts, self.frames, 0.0, journal)
                notes.setdefault(index, []).append(
                    f"{limb_plan.chain[-1]} keeps playing its own keys: its IK/FK is keyed to FK over frames "
                    f"{self.frames[0]} to {self.frames[-1]}")


def _joints_at(poses: dict[str, list], chain: Sequence[str], reach: Vector, frame: int) -> list[Vector]:
    """The chain's heads and the last bone's tail (``reach`` along it) on a recorded frame."""
    return [poses[name][frame].translation for name in chain] + [poses[chain[-1]][frame] @ reach]


def not_prebent(limb_plan: LimbPlan) -> LimbPlan:
    """The plan of a chain straight at rest, planned again unbent because its motion bends it, saying why."""
    chain = limb_plan.chain
    return replace(limb_plan, notes=(*(note for note in limb_plan.notes if note != left_straight(chain)), (
        f"the chain {chain[0]} > {chain[-1]} is straight at rest but its motion bends it, so it was not pre-bent: "
        "pre-bent, its own keys would turn a new rest, and the motion would play up to a degree off")))


def _to_prebend(limb_plan: LimbPlan, options: LimbOptions) -> bool:
    return limb_plan.straight and options.prebend_straight


def _limb_bones(limb_plan: LimbPlan) -> set[str]:
    return set(limb_plan.chain) | ({limb_plan.extremity} if limb_plan.extremity else set())


def _recorded_bones(obj: bpy.types.Object, limb_plan: LimbPlan) -> set[str]:
    """What a bake onto the limb's controls reads: the limb's bones, what its handle hangs from
    and the chain's parent (its own keys are keyed anew from them after Fix Bone Orientation)."""
    parent = obj.data.bones[limb_plan.chain[0]].parent
    return _limb_bones(limb_plan) | {name for name in (limb_plan.handle_parent, parent.name if parent else None)
                                     if name}


def _named(names: Sequence[str]) -> str:
    """Up to _CLIPS_NAMED quoted names, and how many more."""
    shown = ", ".join(f"'{name}'" for name in names[:_CLIPS_NAMED])
    return shown + (f" and {len(names) - _CLIPS_NAMED} more" if len(names) > _CLIPS_NAMED else "")


