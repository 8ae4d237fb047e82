"""What plays on the armature, read before a build changes any rest: the frames, each limb's
animation mode, and recordings of its motion and of the file's other clips that move it
(see ``rig.motion``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import bpy

from ..core.errors import RigError
from ..limb.options import LimbOptions
from ..limb.plan import LimbPlan
from .clips import Clip, followed, moves, other_clips, passed_clips, played_frames, playing_alone
from .keys import Recording
from .scene_state import check_keys_play
from .stray_keys import stray_key

ANIMATION_MODES = ("BAKE", "FK", "IGNORE")


@dataclass
class Played:
    """The motion on the armature, read once before the build."""

    frames: list[int]
    modes: list[str]  # per limb: its animation option, or IGNORE when nothing moves it
    # Per limb: whether Fix Bone Orientation turns its chain bones, whose keys are then keyed anew.
    turned: list[bool]
    # What plays, one evaluation per frame: the limbs to bake, and those played in FK whose bones turn.
    recording: Recording | None
    # The file's other clips that move a limb to bake, each recorded playing alone with the limbs it
    # moves: its keys go into its own action, so it plays as it did whenever it is made active.
    clips: list[tuple[Clip, Recording, list[int]]]
    other_clips: list[Clip]
    passed: list[tuple[Clip, str]]  # actions not taken for clips, and why
    seconds: float  # how long the reading took
    # A warning per recorded clip a stray key stretched (None: the action that plays), read before any key.
    strays: dict[str | None, str] = field(default_factory=dict)


def read_played(obj: bpy.types.Object, plans: list[LimbPlan], options: list[LimbOptions],
                rebuilt: set[int]) -> Played:
    """The motion on ``obj`` for the limbs planned; a rebuilt limb keeps its controls and their keys."""
    still = not bpy.data.actions  # no action in the file: nothing plays, and there is no clip to read
    frames = [] if still else played_frames(obj, {name for limb_plan in plans for name in limb_bones(limb_plan)})
    modes = [_mode(obj, index, limb_plan, limb_options, frames, rebuilt)
             for index, (limb_plan, limb_options) in enumerate(zip(plans, options))]
    if any(mode != "IGNORE" for mode in modes):
        # Before anything changes: keys that would not play as keyed are refused.
        check_keys_play(obj, instead="build with Animation set to Ignore")
    turned = [limb_options.fix_orientation and any(edit.name in limb_plan.chain for edit in limb_plan.bone_edits)
              for limb_plan, limb_options in zip(plans, options)]
    if still:
        return Played(frames, modes, turned, None, [], [], [], 0.0)
    started = time.perf_counter()
    strays: dict[str | None, str] = {}
    recording = _record_played(obj, plans, options, frames, modes, turned, strays)
    clips = other_clips(obj)
    passed = passed_clips(obj)
    recorded = _record_clips(obj, plans, options, rebuilt, turned, clips, strays)
    return Played(frames, modes, turned, recording, recorded, clips, passed, time.perf_counter() - started, strays)


def _mode(obj: bpy.types.Object, index: int, limb_plan: LimbPlan, limb_options: LimbOptions, frames: list[int],
          rebuilt: set[int]) -> str:
    if limb_options.animation not in ANIMATION_MODES:
        raise RigError(f"unknown animation option '{limb_options.animation}'", bone=limb_plan.chain[-1],
                       hint=f"Use one of: {', '.join(ANIMATION_MODES)}.")
    # A rebuilt limb keeps its controls, and with them the keys that animate it.
    moving = bool(frames) and index not in rebuilt and moves(obj, limb_bones(limb_plan))
    return limb_options.animation if moving else "IGNORE"


def _record_played(obj: bpy.types.Object, plans: list[LimbPlan], options: list[LimbOptions], frames: list[int],
                   modes: list[str], turned: list[bool], strays: dict[str | None, str]) -> Recording | None:
    """What plays, recorded for the limbs to bake and those played in FK whose bones turn (a stray key
    stretching the action that plays named in ``strays``, or refused: ``stray_keys``)."""
    wanted: set[str] = set()
    for limb_plan, mode, limb_turned, chosen in zip(plans, modes, turned, options):
        if mode == "BAKE" or (mode == "FK" and (limb_turned or to_prebend(limb_plan, chosen))):
            wanted |= recorded_bones(obj, limb_plan)
    if not wanted:
        return None
    action = obj.animation_data.action if obj.animation_data is not None else None
    if action is not None and (why := stray_key(obj, action, f"the action '{action.name}'", len(frames))):
        strays[None] = why
    recording = Recording(obj, frames, wanted)
    recording.check_scaled()
    return recording


def _record_clips(obj: bpy.types.Object, plans: list[LimbPlan], options: list[LimbOptions], rebuilt: set[int],
                  turned: list[bool], clips: list[Clip],
                  strays: dict[str | None, str]) -> list[tuple[Clip, Recording, list[int]]]:
    """The file's other clips that move a limb to bake (or to play in FK, its bones turned), each
    recorded playing alone, with the limbs it moves (a stray key stretching one named in ``strays``, or
    refused, before any is recorded)."""
    shared: dict[str, tuple[Clip, list[int], set[str]]] = {}
    for index, (limb_plan, limb_options) in enumerate(zip(plans, options)):
        if index not in rebuilt and (limb_options.animation == "BAKE" or
                                     (limb_options.animation == "FK" and turned[index])):
            for clip in clips_moving(obj, clips, limb_plan):
                entry = shared.setdefault(clip.name, (clip, [], set()))
                entry[1].append(index)
                entry[2].update(recorded_bones(obj, limb_plan))
    for clip, _, _ in shared.values():
        # A Manual Frame Range gives the clip's frames, whatever its keys span.
        if not clip.action.use_frame_range and (
                why := stray_key(obj, clip.action, f"the clip '{clip.name}'", len(clip.frames))):
            strays[clip.name] = why
    recorded = []
    for clip, limbs, names in shared.values():
        with playing_alone(obj, clip):
            recording = Recording(obj, clip.frames, names)
            recording.check_scaled()
            recorded.append((clip, recording, limbs))
    return recorded


def clips_moving(obj: bpy.types.Object, clips: list[Clip], limb_plan: LimbPlan) -> list[Clip]:
    """Those of ``clips`` (the file's other clips, read once per build) that move the limb."""
    if not clips:  # what the limb follows is worked out only for clips to test
        return []
    names = followed(obj, limb_bones(limb_plan))[0]
    return [clip for clip in clips if clip.moves(names)]


def to_prebend(limb_plan: LimbPlan, options: LimbOptions) -> bool:
    return limb_plan.straight and options.prebend_straight


def limb_bones(limb_plan: LimbPlan) -> set[str]:
    return set(limb_plan.chain) | ({limb_plan.extremity} if limb_plan.extremity else set())


def recorded_bones(obj: bpy.types.Object, limb_plan: LimbPlan) -> set[str]:
    """What a bake onto the limb's controls reads: the limb's bones, what its handle hangs from, the
    chain's parent (its own keys are keyed anew from them after Fix Bone Orientation), the user's other
    bones the limb puts a constraint on (a foot roll's toe) and those a parent socket may follow."""
    parent = obj.data.bones[limb_plan.chain[0]].parent
    made = {bone.name for bone in limb_plan.new_bones}
    owners = {constraint.owner for constraint in limb_plan.constraints if constraint.owner not in made}
    # What a parent socket may follow: a keyed switch picks one on each frame.
    choices = {constraint.subtarget for constraint in limb_plan.constraints
               if constraint.kind == "ARMATURE" and constraint.subtarget and constraint.subtarget not in made}
    return limb_bones(limb_plan) | owners | choices | {name for name in (limb_plan.handle_parent,
                                                               parent.name if parent else None) if name}
