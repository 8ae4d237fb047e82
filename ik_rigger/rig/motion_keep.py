"""Keeping the motion read before a build, after its constraint stage: each limb's controls baked,
or its IK/FK keyed to FK, in the action that plays and in the file's other clips, and the
limbs' notes saying so (see ``rig.motion``)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import bpy

from ..core import geometry
from ..core.notes import warning
from ..limb.options import LimbOptions
from ..limb.plan import LimbPlan
from . import bake, bake_limits, records
from .clips import Clip, followed, playing_alone, uses_nla
from .journal import Journal
from .keys import Recording, default_interpolation, local_action
from .motion_read import Played, clips_moving, limb_bones, to_prebend

# How many of an armature's other clips a build note names.
_CLIPS_NAMED = 4
# Blender's IK turns each bone within its scaled axes, so a chain scaled more along some axes than
# others, or sheared by a parent so scaled, misses its handle: by about half this share of the leg
# and degrees as many as its percent over two (3 percent uneven: 1.5 percent, 1.5 degrees off).
# Under this the bake keeps within its promise (a thousandth of the height, a quarter degree).
_UNEVEN = 1e-3


class Keeping:
    """Keys what keeps ``played`` playing on the limbs planned, noting what it did in ``notes``."""

    def __init__(self, obj: bpy.types.Object, plans: list[LimbPlan], options: list[LimbOptions], played: Played,
                 notes: dict[int, list[str]], journal: Journal) -> None:
        self.obj = obj
        self.plans = plans
        self.options = options
        self.played = played
        self.notes = notes
        self.journal = journal

    def keep(self) -> None:
        """Object or Pose mode, after the constraint stage: key what keeps the motion playing."""
        played = self.played
        keying = [index for index, mode in enumerate(played.modes) if mode != "IGNORE"]
        if not (keying or played.clips or played.other_clips or played.passed):
            return  # nothing plays on a limb, and no clip of the file moves one: nothing to key or name
        localised = local_action(self.obj, self.journal) if keying else None
        if localised is not None:
            self.notes.setdefault(keying[0], []).append(localised)
        baked = played.modes.count("BAKE")
        through = " (what its NLA strips play)" if uses_nla(self.obj) else ""
        for recording in [played.recording, *(recording for _, recording, _ in played.clips)]:
            if recording is not None:
                recording.follow_rests(self.obj)
        for index, (limb_plan, mode) in enumerate(zip(self.plans, played.modes)):
            clips = [(clip, recording) for clip, recording, limbs in played.clips if index in limbs]
            self._note_unkept(index, limb_plan)
            if mode == "IGNORE" and not clips:
                continue
            parts = records.resolve(self.obj, records.limb_of(self.obj, limb_plan.chain[-1]))
            if clips:
                self._keep_clips(index, limb_plan, parts, clips)
            if mode != "IGNORE":
                self._keep_played(index, limb_plan, mode, parts, played.seconds / max(baked, 1), through)
        if baked and None in played.strays:
            self.notes.setdefault(played.modes.index("BAKE"), []).append(played.strays[None])
        for clip, _, limbs in played.clips:
            if clip.name in played.strays:
                self.notes.setdefault(limbs[0], []).append(played.strays[clip.name])

    def _note_unkept(self, index: int, limb_plan: LimbPlan) -> None:
        """Name the file's actions and clips that move the limb but whose keys stay as they were."""
        self._name_passed(index, limb_plan)
        if self.options[index].animation == "IGNORE":  # clips play under its IK (in FK they play as they did)
            unbaked = [clip.name for clip in clips_moving(self.obj, self.played.other_clips, limb_plan)]
            if unbaked:
                self.notes.setdefault(index, []).append(warning(
                    f"the file's other clips {_named(unbaked)} also move {limb_plan.chain[-1]}; made "
                    "active, they play under its IK controls: to play one as it was, switch the limb to FK, or "
                    "key its controls from it with Bake IK/FK (FK to IK)"))

    def _name_passed(self, index: int, limb_plan: LimbPlan) -> None:
        """Name the file's actions that move the limb but are not taken for its clips: their keys stay as
        they were, so made active on this armature they play under its IK controls."""
        if self.options[index].animation == "IGNORE" or not self.played.passed:
            return
        names = followed(self.obj, limb_bones(limb_plan))[0]
        for clip, why in self.played.passed:
            if clip.moves(names):
                self.notes.setdefault(index, []).append(warning(
                    f"the action '{clip.name}' also moves {limb_plan.chain[-1]} but was left as it is: {why}"))

    def _keep_clips(self, index: int, limb_plan: LimbPlan, parts: records.Parts,
                    clips: list[tuple[Clip, Recording]]) -> None:
        """Key the limb in each of the file's other clips that move it, each in the clip's own action."""
        began = time.perf_counter()
        what = "its IK controls" if self.options[index].animation == "BAKE" else "its turned bones"
        for clip, recording in clips:
            with playing_alone(self.obj, clip):
                self._key(index, parts, recording)
            if self.options[index].animation == "BAKE":
                self._note_uneven(index, limb_plan, recording, f" in the clip '{clip.name}'")
        self.notes.setdefault(index, []).append(
            f"kept the motion of {limb_plan.chain[-1]} in the file's other clips "
            f"{_named([clip.name for clip, _ in clips])}: keyed {what} in each clip's own action, so each "
            f"plays as it did when made active, in {time.perf_counter() - began:.2f} s")

    def _keep_played(self, index: int, limb_plan: LimbPlan, mode: str, parts: records.Parts, read_share: float,
                     through: str) -> None:
        """Key what keeps the limb playing the motion that plays: its controls baked (BAKE), or its IK/FK
        keyed to FK (FK); ``read_share`` is its share of the time the reading took."""
        began = time.perf_counter()
        recording, frames_played = self.played.recording, self.played.frames
        if self.played.turned[index] and recording is not None:
            self.notes.setdefault(index, []).append(
                f"the turned bones' own keys were keyed anew on their new rests over frames "
                f"{recording.frames[0]} to {recording.frames[-1]}, so the motion plays the same in FK "
                "too")
        if mode == "BAKE" and recording is not None:
            count = self._key(index, parts, recording)
            seconds = time.perf_counter() - began + read_share
            frames = f"{count} frame" + ("" if count == 1 else "s")
            self.notes.setdefault(index, []).append(
                f"kept the motion of {limb_plan.chain[-1]}: baked {frames}{through} onto its IK controls "
                f"in {seconds:.2f} s")
            self._note_uneven(index, limb_plan, recording)
            self.notes[index].extend(bake_limits.check(self.obj, parts, recording.frames, recording.poses))
            if to_prebend(limb_plan, self.options[index]):
                self.notes[index].append(
                    f"its motion leaves the chain {limb_plan.chain[0]} > {limb_plan.chain[-1]} straight, so it "
                    "was pre-bent all the same: its IK plays the motion as it was, and its own keys, played in "
                    f"FK, within {geometry.PREBEND_DEGREES:g} degree of it")
        else:
            if self.played.turned[index] and recording is not None:
                self._key(index, parts, recording)
            bake.key_switch(self.obj, parts, frames_played, 0.0, self.journal)
            self.notes.setdefault(index, []).append(
                f"{limb_plan.chain[-1]} keeps playing its own keys: its IK/FK is keyed to FK over frames "
                f"{frames_played[0]} to {frames_played[-1]}")

    def _note_uneven(self, index: int, limb_plan: LimbPlan, recording: Recording, where: str = "") -> None:
        """Warn of frames the limb's chain is scaled unevenly on, which its IK cannot play exactly (the
        extremity's own scale plays under its clone's Copy Rotation as it did)."""
        frames, most = recording.uneven(limb_plan.chain, _UNEVEN)
        if frames:
            chain = limb_plan.chain
            self.notes.setdefault(index, []).append(warning(
                f"{chain[0]} > {chain[-1]} is scaled unevenly{where} on {len(frames)} frame"
                f"{'' if len(frames) == 1 else 's'} from {frames[0]} to {frames[-1]} (its axes up to {most:.1%} "
                "apart, by its own scale keys or its parents'): Blender's IK turns bones within their scaled "
                "axes, so there the IK controls play that motion only roughly; to play it exactly, rig the limb "
                "with Animation set to Leave Playing in FK, or key an even scale"))

    def _key(self, index: int, parts: records.Parts, recording: Recording) -> int:
        """Key what keeps limb ``index`` playing ``recording`` into the action that plays; the frames keyed.

        Baked, its controls. When Fix Bone Orientation turned its chain bones, their own keys
        too, anew on their new rests: the keys they had would turn them differently now, and
        IK, which starts from them, could bend the other way. Only the turned bones: the others
        (the foot, whether it hangs from the chain or from the root) move the mesh as they did
        with the keys they have, and a clip that had none for them gets none.
        """
        interpolation = default_interpolation()
        if self.options[index].animation == "BAKE":
            bake.key_controls(self.obj, parts, recording, interpolation, self.journal)
        if self.played.turned[index]:
            turned = {edit.name for edit in self.plans[index].bone_edits}
            bake.key_chain(self.obj, parts, recording, interpolation, self.journal, only=turned)
        return len(recording.frames)


def _named(names: Sequence[str]) -> str:
    """Up to _CLIPS_NAMED quoted names, and how many more."""
    shown = ", ".join(f"'{name}'" for name in names[:_CLIPS_NAMED])
    return shown + (f" and {len(names) - _CLIPS_NAMED} more" if len(names) > _CLIPS_NAMED else "")
