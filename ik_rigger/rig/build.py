"""Write limb plans to Blender: one Edit-mode pass for bones, one pass for constraints.

Stages (each says the mode it runs in):
1. plan (Object or Pose mode): read the rest skeleton, plan every limb; any
   ``RigError`` is raised here, before the armature is touched;
2. bones (Edit mode): create handles, poles and clones, or move a rebuilt limb's own
   in place (they keep their names, keys and custom properties); pre-bend straight
   chains; delete made bones a rebuild no longer wants;
3. constraints (Pose mode if the user was in it, else Object mode): IK and copy
   constraints with their drivers, the ``ik_fk`` switch, chain colours, records.

Every change of stages 2 and 3 is logged in a ``Journal``: if anything fails part way,
whatever the reason, the log gives the armature back as it was, so a build either
completes or changes nothing. From Pose or Object mode that is two mode switches.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import bpy
from mathutils import Vector

from ..core import geometry, joints, naming
from ..core.checks import check_mirrored
from ..core.errors import RigError
from ..core.notes import warning
from ..core.options import renamed_bones
from ..core.plan import (
    PALETTE_CHAIN,
    ConstraintPlan,
    LimbOptions,
    LimbPlan,
    NewBone,
    Skeleton,
    automatic_extremity,
    bending_indexes,
    chain_ending_at,
    left_straight,
    plan_limb,
)
from ..parts.parents import KeptOrigin
from . import bake, modes, records, shapes
from . import joints as pose_joints
from .checks import check_armature, check_limb, overridden_by_ik, solver_constraints
from .constraints import add_constraint, configure
from .journal import Journal
from .orient import keep_bone_children
from .skeleton import check_editable, read_skeleton
from .upgrade import upgrade

# What a constraint IK Rigger adds may have changed by a rebuild, beyond its planned settings.
ANIMATION_MODES = ("BAKE", "FK", "IGNORE")
_CONSTRAINT_BASICS = ("name", "target", "subtarget", "pole_target", "pole_subtarget", "influence", "mute",
                      "owner_space", "target_space", "mix_mode", "chain_count", "pole_angle", "iterations",
                      "use_stretch", "use_tail", "use_rotation", "weight", "limit_mode", "distance", "head_tail")


@dataclass
class _Rebuilt:
    """A limb being rebuilt: its record and what it has now."""

    index: int
    uid: str
    parts: records.Parts
    prebent: list[tuple[str, tuple[float, ...], tuple[float, ...], float]] = field(default_factory=list)


def build_limbs(obj: bpy.types.Object, requests: Sequence[tuple[str, LimbOptions]],
                skeleton: Skeleton | None = None) -> list[LimbPlan]:
    """Rig the chains ending at each requested bone; rebuild those already rigged.

    ``requests`` pairs the last bone of each chain with its options. Either every
    limb is built or, whatever goes wrong, nothing at all changes. ``skeleton`` saves
    reading the armature again when the caller has just read it (out of Edit mode).
    """
    check_editable(obj)
    check_armature(obj)
    with modes.kept_mode(obj) as original, modes.mirror_off(obj):
        modes.leave_edit_mode(obj)
        upgrade(obj)
        records.refresh(obj)
        rig = obj.ik_rigger
        plans, rebuilt, hinges = _plan(obj, rig, requests, skeleton)
        motion = _Motion(obj, plans, [options for _, options in requests], set(rebuilt))
        bent = motion.bent_by_motion()
        if bent:
            # Their motion bends them: planned again unbent, the motion plays exactly.
            requests = [(last, replace(options, prebend_straight=False) if index in bent else options)
                        for index, (last, options) in enumerate(requests)]
            motion.options = [options for _, options in requests]
            plans, rebuilt, hinges = _plan(obj, rig, requests, skeleton)
            plans = [_bent_by_motion(limb_plan) if index in bent else limb_plan
                     for index, limb_plan in enumerate(plans)]
            motion.plans = plans
        journal = Journal(obj)
        try:
            keep_bone_children(obj, [edit for limb_plan in plans for edit in limb_plan.bone_edits], journal)
            doomed = _doomed_poses(obj, plans, rebuilt)
            modes.set_mode(obj, "EDIT")
            uids, originals, notes = _edit_bones(obj, rig, plans, rebuilt, doomed, journal)
            modes.set_mode(obj, modes.data_mode(original))
            _log_animation_data(obj, journal)
            for index, (limb_plan, requested) in enumerate(zip(plans, requests)):
                _constraints_and_record(obj, limb_plan, requested[1], originals, rebuilt.get(index), uids[index],
                                        hinges[index], journal)
            motion.keep(notes, journal)
            _set_version(obj, journal)
        except BaseException:
            journal.rollback()
            raise
    shapes.drop_unused()  # a rebuild with shapes turned off may leave the last user of one
    return _noted(obj, plans, notes)


def plan_limbs(obj: bpy.types.Object, requests: Sequence[tuple[str, LimbOptions]],
               skeleton: Skeleton | None = None) -> list[LimbPlan]:
    """Plan without building: what ``build_limbs`` would do (for dry runs)."""
    check_editable(obj)
    check_armature(obj)
    with modes.kept_mode(obj):
        modes.leave_edit_mode(obj)
        return _plan(obj, obj.ik_rigger, requests, skeleton)[0]


def rig_able(obj: bpy.types.Object, requests: Sequence[tuple[str, LimbOptions]],
             skeleton: Skeleton | None = None) -> tuple[list[tuple[str, LimbOptions]], list[tuple[str, str]]]:
    """Of the limbs detection found, those that plan (each alone, as ``build_limbs`` plans it),
    and the others as (bone, why): a limb detection is sure of may still be one IK Rigger will
    not rig (a bone too short for IK, another IK constraint on it); it is skipped, not the
    whole armature."""
    try:  # the usual case, in one planning: limbs that plan together each plan alone
        plan_limbs(obj, requests, skeleton)
    except RigError:
        pass
    else:
        return list(requests), []
    kept: list[tuple[str, LimbOptions]] = []
    refused: list[tuple[str, str]] = []
    for request in requests:
        try:
            plan_limbs(obj, [request], skeleton)
        except RigError as error:
            hint = error.hint.rstrip(".")
            refused.append((error.bone or request[0], f"{error.problem}; {hint[:1].lower()}{hint[1:]}" if hint
                            else error.problem))
        else:
            kept.append(request)
    return kept, refused


def _kept_origin(obj: bpy.types.Object, entry: _Rebuilt) -> KeptOrigin | None:
    """What the handle of a limb being rebuilt follows now, unless it is the limb's own socket."""
    bone = obj.data.bones.get(entry.parts.handle or "")
    if bone is None or (bone.parent is not None and bone.parent.name in entry.parts.made.values()):
        return None
    return KeptOrigin(bone.parent.name if bone.parent is not None else None)


def _plan(obj: bpy.types.Object, rig, requests: Sequence[tuple[str, LimbOptions]],
          skeleton: Skeleton | None = None) -> tuple[list[LimbPlan], dict[int, _Rebuilt], list[list[joints.Hinge]]]:
    """Plan every request; ``rebuilt`` maps a request's index to the limb it rebuilds; ``hinges``
    holds each limb's hinge joints (none unless asked)."""
    if skeleton is None:
        skeleton = read_skeleton(obj)
    resolved = [records.resolve(obj, limb) for limb in rig.limbs]
    made_all = {name for parts in resolved for name in parts.made.values()}
    by_last = {parts.chain[-1]: index for index, parts in enumerate(resolved) if parts.chain}
    rebuilt: dict[int, _Rebuilt] = {}
    for number, (last, _) in enumerate(requests):
        index = by_last.get(last)
        if index is not None:
            limb = rig.limbs[index]
            rebuilt[number] = _Rebuilt(index, limb.uid, resolved[index], [
                (rest.name, tuple(rest.head), tuple(rest.tail), rest.roll) for rest in limb.prebent])
    rebuilt_indexes = {entry.index for entry in rebuilt.values()}
    base = skeleton.without({name for entry in rebuilt.values() for name in entry.parts.made.values()})
    used = {bone: rig.limbs[index].name for index, parts in enumerate(resolved) if index not in rebuilt_indexes
            for bone in parts.bones()}
    ours = {pair for parts in resolved for pair in parts.constraints}
    solvers = solver_constraints(obj)
    # Made bones keep their names through a rebuild, so no new bone may take one.
    taken: set[str] = set(made_all)
    plans = []
    hinges: list[list[joints.Hinge]] = []
    for number, (last, options) in enumerate(requests):
        if last in made_all:
            raise RigError("was made by IK Rigger; it cannot end a chain", bone=last,
                           hint="Pick the last bone of the chain, such as the shin or forearm.")
        limb_plan = plan_limb(base, last, options, taken, _kept_origin(obj, rebuilt[number]) if number in rebuilt
                              else None)
        for bone in (*limb_plan.chain, limb_plan.extremity):
            if bone in used:
                raise RigError(f"already belongs to the limb ending at '{used[bone]}'", bone=bone,
                               hint="Remove that limb first, or pick another chain.")
            if bone is not None:
                used[bone] = last
        check_limb(obj, skeleton, limb_plan, options, ours, solvers)
        limb_plan = replace(limb_plan, notes=limb_plan.notes + tuple(overridden_by_ik(obj, limb_plan, ours)))
        hinges.append(list(limb_plan.hinges))
        if number in rebuilt:
            limb_plan = _reuse_names(limb_plan, rebuilt[number].parts.made)
        taken |= {bone.name for bone in limb_plan.new_bones}
        plans.append(limb_plan)
    return plans, rebuilt, hinges


# How many of an armature's other clips a build note names.
_CLIPS_NAMED = 4


class _Motion:
    """Motion already on the armature, read before the build and kept after it.

    Per limb, by its ``animation`` option: BAKE keys the new controls from what played
    (read here, one evaluation per frame, before anything changes); FK keys ``ik_fk``
    to 0 so the limb keeps playing its own keys; IGNORE does nothing.
    """

    def __init__(self, obj: bpy.types.Object, plans: list[LimbPlan], options: list[LimbOptions],
                 rebuilt: set[int]) -> None:
        self.obj = obj
        self.plans = plans
        self.options = options
        self.frames = bake.played_frames(obj, {name for limb_plan in plans for name in _limb_bones(limb_plan)})
        self.modes = []
        for index, (limb_plan, limb_options) in enumerate(zip(plans, options)):
            if limb_options.animation not in ANIMATION_MODES:
                raise RigError(f"unknown animation option '{limb_options.animation}'", bone=limb_plan.chain[-1],
                               hint=f"Use one of: {', '.join(ANIMATION_MODES)}.")
            # A rebuilt limb keeps its controls, and with them the keys that animate it.
            moving = bool(self.frames) and index not in rebuilt and bake.moves(obj, _limb_bones(limb_plan))
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
        self.recording = bake.Recording(obj, self.frames, wanted) if wanted else None
        if self.recording is not None:
            self.recording.check_scaled()
        # The file's other clips (bake.Clip) that move a limb to bake, each recorded playing alone:
        # its keys go into its own action, so it plays as it did whenever it is made active.
        self.other_clips = bake.other_clips(obj)
        self.passed = bake.passed_clips(obj)
        shared: dict[str, tuple[bake.Clip, list[int], set[str]]] = {}
        for index, (limb_plan, limb_options) in enumerate(zip(plans, options)):
            if index not in rebuilt and (limb_options.animation == "BAKE" or
                                         (limb_options.animation == "FK" and self.turned[index])):
                for clip in self._clips_moving(limb_plan):
                    entry = shared.setdefault(clip.name, (clip, [], set()))
                    entry[1].append(index)
                    entry[2].update(_recorded_bones(obj, limb_plan))
        self.clips: list[tuple[bake.Clip, bake.Recording, list[int]]] = []
        for clip, limbs, names in shared.values():
            with bake.playing_alone(obj, clip):
                recording = bake.Recording(obj, clip.frames, names)
                recording.check_scaled()
                self.clips.append((clip, recording, limbs))
        self.read = time.perf_counter() - self.started

    def _clips_moving(self, limb_plan: LimbPlan) -> list[bake.Clip]:
        """The file's other clips (read once per build) that move the limb."""
        bones = _limb_bones(limb_plan)
        names = bake.followed(self.obj, bones)[0]
        return [clip for clip in self.other_clips if clip.moves(names)]

    def _name_passed(self, index: int, limb_plan: LimbPlan, notes: dict[int, list[str]]) -> None:
        """Name the file's actions that move the limb but are not taken for its clips: their keys stay as
        they were, so made active on this armature they play under its IK controls."""
        if self.options[index].animation == "IGNORE" or not self.passed:
            return
        names = bake.followed(self.obj, _limb_bones(limb_plan))[0]
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

    def _key(self, index: int, parts: records.Parts, recording: bake.Recording, journal: Journal) -> int:
        """Key what keeps limb ``index`` playing ``recording`` into the action that plays; the frames keyed.

        Baked, its controls. When Fix Bone Orientation turned its chain bones, their own keys
        too, anew on their new rests: the keys they had would turn them differently now, and
        IK, which starts from them, could bend the other way. Only the turned bones: the others
        (the foot, whether it hangs from the chain or from the root) move the mesh as they did
        with the keys they have, and a clip that had none for them gets none.
        """
        interpolation = bake.default_interpolation()
        if self.options[index].animation == "BAKE":
            bake.key_controls(self.obj, parts, recording, interpolation, journal)
        if self.turned[index]:
            turned = {edit.name for edit in self.plans[index].bone_edits}
            bake.key_chain(self.obj, parts, recording, interpolation, journal, only=turned)
        return len(recording.frames)

    def keep(self, notes: dict[int, list[str]], journal: Journal) -> None:
        """Object or Pose mode, after the constraint stage: key what keeps the motion playing."""
        baked = [mode == "BAKE" for mode in self.modes].count(True)
        through = " (what its NLA strips play)" if bake.uses_nla(self.obj) else ""
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
                    with bake.playing_alone(self.obj, clip):
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


def _bent_by_motion(limb_plan: LimbPlan) -> LimbPlan:
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


def _reuse_names(limb_plan: LimbPlan, made: dict[str, str]) -> LimbPlan:
    """The plan with each made bone a rebuilt limb still has under its current name."""
    renamed = {new.name: made[new.role] for new in limb_plan.new_bones if new.role in made}
    if not renamed:
        return limb_plan

    def name(value: str | None) -> str | None:
        return renamed.get(value, value) if value else value

    return replace(
        limb_plan,
        handle=renamed.get(limb_plan.handle, limb_plan.handle), pole=name(limb_plan.pole), clone=name(limb_plan.clone),
        new_bones=tuple(replace(new, name=renamed.get(new.name, new.name), parent=name(new.parent))
                        for new in limb_plan.new_bones),
        constraints=tuple(replace(planned, owner=renamed.get(planned.owner, planned.owner),
                                  subtarget=renamed.get(planned.subtarget, planned.subtarget),
                                  pole_subtarget=renamed.get(planned.pole_subtarget, planned.pole_subtarget),
                                  influence=planned.influence.renamed(renamed) if planned.influence else None)
                          for planned in limb_plan.constraints),
        properties=tuple(replace(planned, bone=renamed.get(planned.bone, planned.bone))
                         for planned in limb_plan.properties),
        drivers=tuple(replace(planned, bone=renamed.get(planned.bone, planned.bone),
                              driven=planned.driven.renamed(renamed)) for planned in limb_plan.drivers),
    )


def _doomed_poses(obj: bpy.types.Object, plans: list[LimbPlan],
                  rebuilt: dict[int, _Rebuilt]) -> dict[str, Callable[[], None]]:
    """Object or Pose mode: for each made bone a rebuild deletes, what gives back its pose data
    (constraints, shape, transform), which Edit mode cannot give back with the bone."""
    undos: dict[str, Callable[[], None]] = {}
    for index, limb_plan in enumerate(plans):
        entry = rebuilt.get(index)
        if entry is None:
            continue
        wanted = {new.name for new in limb_plan.new_bones}
        for name in set(entry.parts.made.values()) - wanted:
            pose_bone = obj.pose.bones[name]
            kept = [(constraint.type, position, _constraint_state(constraint, ConstraintPlan(name, "", "", "")))
                    for position, constraint in enumerate(pose_bone.constraints)]
            looks = (pose_bone.custom_shape, tuple(pose_bone.custom_shape_scale_xyz), pose_bone.matrix_basis.copy())

            def undo(name: str = name, kept: list = kept, looks: tuple = looks) -> None:
                restored = obj.pose.bones[name]
                restored.custom_shape, restored.custom_shape_scale_xyz, restored.matrix_basis = looks
                for kind, position, state in kept:
                    _recreate_constraint(obj, name, kind, position, state)

            undos[name] = undo
    return undos


def _noted(obj: bpy.types.Object, plans: list[LimbPlan], notes: dict[int, list[str]]) -> list[LimbPlan]:
    """The plans with what the build had to tell: moved children, armature data other objects share."""
    sharing = sorted(other.name for other in bpy.data.objects if other.data == obj.data and other != obj)
    if sharing and plans:
        notes.setdefault(0, []).append(warning(
            f"the armature data '{obj.data.name}' is shared with {', '.join(repr(n) for n in sharing)}: "
            "their rest bones changed too (new bones, pre-bent chains), but the IK constraints are only on "
            f"'{obj.name}'"))
    return [replace(limb_plan, notes=limb_plan.notes + tuple(notes.get(index, ())))
            for index, limb_plan in enumerate(plans)]


# Edit mode ---------------------------------------------------------------------------


def _edit_state(bone: bpy.types.EditBone) -> dict:
    """What the build may change on an edit bone, to give it back."""
    mark = bone.get(records.MARK)
    return {
        "head": bone.head.copy(), "tail": bone.tail.copy(), "roll": bone.roll,
        "parent": bone.parent.name if bone.parent else None, "use_connect": bone.use_connect,
        "use_deform": bone.use_deform, "palette": bone.color.palette,
        "collections": [collection.name for collection in bone.collections],
        "mark": mark.to_dict() if mark is not None else None,
        "children": [(child.name, child.use_connect) for child in bone.children],
    }


def _restore_edit_state(armature: bpy.types.Armature, name: str, state: dict) -> None:
    """Edit mode: give bone ``name`` the saved ``state``, making it again if it was deleted."""
    edit_bones = armature.edit_bones
    bone = edit_bones.get(name)
    if bone is None:
        bone = edit_bones.new(name)
        for child_name, connected in state["children"]:
            child = edit_bones.get(child_name)
            if child is not None:
                child.parent = bone
                child.use_connect = connected
    bone.parent = edit_bones.get(state["parent"]) if state["parent"] else None
    bone.use_connect = state["use_connect"]
    bone.head = state["head"]
    bone.tail = state["tail"]
    bone.roll = state["roll"]
    bone.use_deform = state["use_deform"]
    bone.color.palette = state["palette"]
    for collection in list(bone.collections):
        collection.unassign(bone)
    for collection_name in state["collections"]:
        kept = armature.collections_all.get(collection_name)
        if kept is not None:
            kept.assign(bone)
    if state["mark"] is None:
        bone.pop(records.MARK, None)
    else:
        bone[records.MARK] = state["mark"]


def log_bone(journal: Journal, armature: bpy.types.Armature, bone: bpy.types.EditBone) -> None:
    """Edit mode: log the edit bone's state, so a rollback gives it back (or makes it again)."""
    state = _edit_state(bone)
    name = bone.name
    journal.edit(lambda edit_bones: _restore_edit_state(armature, name, state))


def new_bone(journal: Journal, edit_bones, name: str) -> bpy.types.EditBone:
    """Edit mode: a new bone named exactly ``name``, logged so a rollback deletes it."""
    bone = edit_bones.new(name)
    made = bone.name
    journal.edit(lambda bones: bones.remove(bones[made]) if made in bones else None)
    if made != name:
        # Names are planned unique and within Blender's limit: a difference is a bug.
        raise RuntimeError(f"Blender named the new bone '{made}' instead of '{name}'")
    return bone


def _new_uid(obj: bpy.types.Object, journal: Journal) -> str:
    rig = obj.ik_rigger
    uids = {limb.uid for limb in rig.limbs}
    number = rig.next_uid
    while str(number) in uids:
        number += 1
    before = rig.next_uid
    rig.next_uid = number + 1
    journal.data(lambda: setattr(obj.ik_rigger, "next_uid", before))
    return str(number)


def place_made_bones(obj: bpy.types.Object, planned: Sequence[NewBone], uid: str, reused: set[str],
                     journal: Journal) -> None:
    """Edit mode: the planned bones as they should be: made, or (those in ``reused``) a rebuilt
    rig's own moved in place; non-deforming, in IK Rigger's collection for their role, marked
    with their rig's ``uid`` and role, then parented."""
    armature = obj.data
    edit_bones = armature.edit_bones
    collections: dict[str, bpy.types.BoneCollection] = {}
    placed: dict[str, bpy.types.EditBone] = {}  # edit bones are found by name one by one: keep them
    for new in planned:
        if new.name in reused:
            bone = edit_bones[new.name]
            log_bone(journal, armature, bone)
        else:
            bone = new_bone(journal, edit_bones, new.name)
        bone.use_connect = False
        bone.head = new.head
        bone.tail = new.tail
        bone.align_roll(new.z_axis)
        bone.use_deform = False
        bone.color.palette = new.palette
        bone.hide = new.hidden
        for collection in list(bone.collections):
            collection.unassign(bone)
        if new.collection not in collections:
            attribute = "controls_collection" if new.collection == naming.COLLECTION_CONTROLS \
                else "mechanism_collection"
            collections[new.collection] = bone_collection(obj, attribute, new.collection, journal)
        collections[new.collection].assign(bone)
        records.mark(bone, uid, new.role)
        placed[new.name] = bone
    for new in planned:
        placed[new.name].parent = None if new.parent is None else placed.get(new.parent) or edit_bones[new.parent]


def hide_made_bones(obj: bpy.types.Object, planned: Sequence[NewBone]) -> None:
    """Object or Pose mode: hide the planned hidden bones where animators see them. Blender 4.2 keeps
    a bone's hidden state in Pose mode apart from the edit bone's (5.x has one for both)."""
    bones = obj.data.bones
    for new in planned:
        bones[new.name].hide = new.hidden


def bone_collection(obj: bpy.types.Object, attribute: str, wanted: str, journal: Journal) -> bpy.types.BoneCollection:
    """Edit mode: IK Rigger's own bone collection for one role, made on first use."""
    rig = obj.ik_rigger
    armature = obj.data
    existing = armature.collections_all.get(getattr(rig, attribute)) if getattr(rig, attribute) else None
    if existing is None:
        existing = armature.collections.new(wanted)
        # Bones only the rig moves: out of sight, so animators cannot grab them (shown for debugging).
        existing.is_visible = wanted != naming.COLLECTION_MECHANISM
        made = existing.name
        before = getattr(rig, attribute)
        setattr(rig, attribute, made)
        journal.edit(lambda edit_bones: _remove_collection(armature, made))
        journal.data(lambda: setattr(obj.ik_rigger, attribute, before))
    return existing


def _remove_collection(armature: bpy.types.Armature, name: str) -> None:
    collection = armature.collections_all.get(name)
    if collection is not None:
        armature.collections.remove(collection)


def reparent_children(edit_bones, doomed: set[str]) -> list[str]:
    """Edit mode: give the user's bones parented to a bone in ``doomed`` that bone's nearest
    surviving parent instead (unconnected), so deleting ``doomed`` leaves them where they are.

    Returns a sentence for each bone moved, for the user.
    """
    moved = []
    for bone in edit_bones:
        parent = bone.parent
        if bone.name in doomed or parent is None or parent.name not in doomed:
            continue
        was = parent.name
        while parent is not None and parent.name in doomed:
            parent = parent.parent
        bone.use_connect = False
        bone.parent = parent
        moved.append(f"your bone '{bone.name}' was parented to '{was}', which IK Rigger made and removed; "
                     f"it is now parented to {repr(parent.name) if parent else 'nothing'}, in the same place")
    return moved


def _edit_bones(obj: bpy.types.Object, rig, plans: list[LimbPlan], rebuilt: dict[int, _Rebuilt],
                doomed: dict[str, Callable[[], None]],
                journal: Journal) -> tuple[list[str], dict, dict[int, list[str]]]:
    """Edit mode: the bone stage.

    Returns each plan's limb uid, the original rest of every pre-bent bone and notes per plan.
    """
    armature = obj.data
    edit_bones = armature.edit_bones
    originals = {name: (head, tail, roll) for entry in rebuilt.values() for name, head, tail, roll in entry.prebent}
    uids = []
    notes: dict[int, list[str]] = {}
    for index, limb_plan in enumerate(plans):
        entry = rebuilt.get(index)
        uid = entry.uid if entry is not None else _new_uid(obj, journal)
        uids.append(uid)
        reused = set(entry.parts.made.values()) if entry is not None else set()
        place_made_bones(obj, limb_plan.new_bones, uid, reused, journal)
        for new in limb_plan.new_bones:
            if new.roll_like is not None:
                edit_bones[new.name].roll = edit_bones[new.roll_like].roll
            edit_bones[new.name].hide_select = not new.selectable
        unwanted = reused - {new.name for new in limb_plan.new_bones}
        if unwanted:
            for bone in edit_bones:
                if bone.name in unwanted or (bone.parent is not None and bone.parent.name in unwanted):
                    log_bone(journal, armature, bone)
            notes.setdefault(index, []).extend(reparent_children(edit_bones, unwanted))
            for name in unwanted:
                _drop_drivers(obj, name)  # its constraints go with it; their drivers would stay, invalid
                edit_bones.remove(edit_bones[name])
                journal.after_bones(doomed[name])
        _prebend(journal, armature, limb_plan, originals)
    return uids, originals, notes


def _drop_drivers(obj: bpy.types.Object, bone: str) -> None:
    """Remove the drivers of a bone's pose data (its constraints' influence); the bone's undo makes them again."""
    data = obj.animation_data
    if data is None:
        return
    prefix = f'pose.bones["{records.quoted(bone)}"]'
    for fcurve in [fcurve for fcurve in data.drivers if fcurve.data_path.startswith(prefix)]:
        data.drivers.remove(fcurve)


def _prebend(journal: Journal, armature: bpy.types.Armature, limb_plan: LimbPlan, originals: dict) -> None:
    """Edit mode: move straight chain bones to their pre-bent rest, keeping their originals."""
    edit_bones = armature.edit_bones
    edited = {edit.name for edit in limb_plan.bone_edits}
    if not edited:
        return
    # Record every original first: moving a tail drags a connected child's head.
    for bone in edit_bones:
        if bone.name in edited or (bone.use_connect and bone.parent is not None and bone.parent.name in edited):
            log_bone(journal, armature, bone)
            if bone.name in edited:
                originals.setdefault(bone.name, (tuple(bone.head), tuple(bone.tail), bone.roll))
    for edit in limb_plan.bone_edits:
        bone = edit_bones[edit.name]
        bone.head = edit.head
        bone.tail = edit.tail
        bone.align_roll(edit.z_axis)
    for bone in edit_bones:
        if bone.use_connect and bone.parent is not None and bone.parent.name in edited:
            bone.head = bone.parent.tail


# Pose or Object mode ---------------------------------------------------------------


def _log_animation_data(obj: bpy.types.Object, journal: Journal) -> None:
    if obj.animation_data is None:
        journal.data(lambda: drop_empty_animation_data(obj))


def drop_empty_animation_data(obj: bpy.types.Object) -> None:
    """Remove animation data that only existed for IK Rigger's drivers, now gone."""
    data = obj.animation_data
    if data is not None and data.action is None and not data.drivers and not data.nla_tracks:
        obj.animation_data_clear()


def _set_version(obj: bpy.types.Object, journal: Journal) -> None:
    rig = obj.ik_rigger
    if rig.version != records.RECORD_VERSION:
        before = rig.version
        rig.version = records.RECORD_VERSION
        journal.data(lambda: setattr(obj.ik_rigger, "version", before))


def _constraint_state(constraint: bpy.types.Constraint, planned: ConstraintPlan) -> dict:
    keys = [key for key in _CONSTRAINT_BASICS if hasattr(constraint, key)] + [key for key, _ in planned.settings]
    state = {key: getattr(constraint, key) for key in keys}
    if constraint.type == "ARMATURE":
        state["_targets"] = [(target.target, target.subtarget, target.weight) for target in constraint.targets]
    state["_driver"] = _driver_of(constraint.id_data, constraint.path_from_id("influence"))
    return state


def _driver_of(obj: bpy.types.Object, path: str) -> tuple | None:
    """A driver's type, expression and variables (name, object, path), to make it again; None if undriven."""
    data = obj.animation_data
    fcurve = data.drivers.find(path) if data is not None else None
    if fcurve is None:
        return None
    driver = fcurve.driver
    return (driver.type, driver.expression, [(variable.name, variable.targets[0].id, variable.targets[0].data_path)
                                             for variable in driver.variables])


def _set_driver(driver: bpy.types.Driver, kind, expression, variables) -> None:
    for variable in list(driver.variables):
        driver.variables.remove(variable)
    for name, target, path in variables:
        records.add_variable(driver, name, target, path)
    driver.type = kind
    driver.expression = expression


def _restore_constraint(constraint: bpy.types.Constraint, state: dict) -> None:
    for key, value in state.items():
        if not key.startswith("_"):
            setattr(constraint, key, value)
    if "_targets" in state:
        constraint.targets.clear()
        for target, subtarget, weight in state["_targets"]:
            added = constraint.targets.new()
            added.target, added.subtarget, added.weight = target, subtarget, weight
    if state["_driver"] is None:
        constraint.driver_remove("influence")
        return
    _set_driver(constraint.driver_add("influence").driver, *state["_driver"])


def remove_constraint(obj: bpy.types.Object, owner: str, name: str) -> None:
    """Remove a constraint by owner bone and name, with its influence driver, if it still exists."""
    pose_bone = obj.pose.bones.get(owner)
    constraint = pose_bone.constraints.get(name) if pose_bone is not None else None
    if constraint is not None:
        constraint.driver_remove("influence")
        pose_bone.constraints.remove(constraint)


def _recreate_constraint(obj: bpy.types.Object, owner: str, kind: str, index: int, state: dict) -> None:
    pose_bone = obj.pose.bones[owner]
    constraint = pose_bone.constraints.new(kind)
    _restore_constraint(constraint, state)
    pose_bone.constraints.move(len(pose_bone.constraints) - 1, index)


def _log_pose_bone(journal: Journal, obj: bpy.types.Object, name: str) -> None:
    pose_bone = obj.pose.bones[name]
    palette, stretch, settings = pose_bone.color.palette, pose_bone.ik_stretch, pose_joints.ik_settings(pose_bone)

    def undo() -> None:
        restored = obj.pose.bones[name]
        restored.color.palette = palette
        restored.ik_stretch = stretch
        pose_joints.set_ik_settings(restored, settings)

    journal.data(undo)


def _log_record(journal: Journal, obj: bpy.types.Object, index: int | None) -> None:
    rig = obj.ik_rigger
    active = rig.active_limb_index
    if index is None:
        added = len(rig.limbs)

        def undo_added() -> None:
            obj.ik_rigger.limbs.remove(added)
            obj.ik_rigger.active_limb_index = active

        journal.data(undo_added)
        return
    saved = rig.limbs[index].id_properties_ensure().to_dict()

    def undo_changed() -> None:
        group = obj.ik_rigger.limbs[index].id_properties_ensure()
        group.clear()
        group.update(saved)
        obj.ik_rigger.active_limb_index = active

    journal.data(undo_changed)


def _chain_states(obj: bpy.types.Object, limb, chain: Sequence[str], entry: _Rebuilt | None,
                  hinges: dict[str, joints.Hinge], journal: Journal) -> None:
    """Colour the chain red and give hinge joints their IK locks and limits, storing what each
    bone had: its colour and stretch when not Blender's defaults, its locks and limits while hinged."""
    pose_bones = obj.pose.bones
    default = ("DEFAULT", 0.0)
    old_chain = [item.name for item in limb.chain] if entry is not None else []
    old_states = {item.name: (item.palette, item.ik_stretch, item.ik_settings) for item in limb.chain_states}
    limb.chain.clear()
    limb.chain_states.clear()
    for name in chain:
        pose_bone = pose_bones[name]
        _log_pose_bone(journal, obj, name)
        if name in old_chain:
            palette, stretch, settings = old_states.get(name, (*default, ""))
        else:
            palette, stretch, settings = pose_bone.color.palette, pose_bone.ik_stretch, ""
        limb.chain.add().name = name
        hinge = hinges.get(name)
        if hinge is not None and not settings:
            settings = pose_joints.dumps(pose_joints.ik_settings(pose_bone))
        elif hinge is None and settings:
            pose_joints.set_ik_settings(pose_bone, pose_joints.loads(settings))  # no longer hinged
            settings = ""
        if hinge is not None:
            pose_joints.set_ik_settings(pose_bone, pose_joints.hinged(pose_joints.loads(settings), hinge))
        # Only a bone whose colour or stretch differs from Blender's default, or that is hinged, gets
        # a stored state: the record is copied on every update of the object, so it stays small.
        if (palette, stretch) != default or settings:
            state = limb.chain_states.add()
            state.name = name
            state.palette, state.ik_stretch, state.ik_settings = palette, stretch, settings
        pose_bone.color.palette = PALETTE_CHAIN
    for name in old_chain:
        if name not in chain and name in pose_bones:
            _log_pose_bone(journal, obj, name)
            palette, stretch, settings = old_states.get(name, (*default, ""))
            pose_bones[name].color.palette, pose_bones[name].ik_stretch = palette, stretch
            if settings:
                pose_joints.set_ik_settings(pose_bones[name], pose_joints.loads(settings))


def _constraints_and_record(obj: bpy.types.Object, limb_plan: LimbPlan, options: LimbOptions, originals: dict,
                            entry: _Rebuilt | None, uid: str, hinges: list[joints.Hinge], journal: Journal) -> None:
    """Object or Pose mode: the constraint stage for one limb, then its record."""
    rig = obj.ik_rigger
    _log_record(journal, obj, entry.index if entry is not None else None)
    if entry is None:
        limb = rig.limbs.add()
        limb.uid = uid
        rig.active_limb_index = len(rig.limbs) - 1
    else:
        limb = rig.limbs[entry.index]
    limb.name = limb_plan.chain[-1]
    _chain_states(obj, limb, limb_plan.chain, entry, {hinge.bone: hinge for hinge in hinges}, journal)
    limb.prebent.clear()
    for name in limb_plan.chain:
        if name in originals:
            rest = limb.prebent.add()
            rest.name = name
            rest.head, rest.tail, rest.roll = originals[name]
    limb.extremity = limb_plan.extremity or ""
    limb.made_bones.clear()
    for new in limb_plan.new_bones:
        item = limb.made_bones.add()
        item.name, item.role = new.name, new.role
    limb.handle = limb_plan.handle
    limb.pole = limb_plan.pole or ""
    limb.clone = limb_plan.clone or ""
    for planned in limb_plan.properties:
        if records.ensure_property(obj, planned):
            journal.data(lambda planned=planned: obj.pose.bones[planned.bone].pop(planned.key, None))
    _constraints(obj, limb, limb_plan, entry, journal)
    hide_made_bones(obj, limb_plan.new_bones)
    made = {new.role: new.name for new in limb_plan.new_bones}
    if options.shapes:
        shapes.give_shapes(obj, made, obj.users_scene[0] if obj.users_scene else bpy.context.scene, journal)
    else:
        shapes.take_shapes(obj, made.values(), journal)
    limb.set_options(options)
    _pose_drivers(obj, limb_plan, journal)
    _undriven_stretch(obj, limb, limb_plan, journal)


def _pose_drivers(obj: bpy.types.Object, limb_plan: LimbPlan, journal: Journal) -> None:
    """The drivers on pose bones' own properties (each chain bone's IK stretch follows the handle's
    ``stretch``), each logged with the driver it replaces."""
    for planned in limb_plan.drivers:
        pose_bone = obj.pose.bones[planned.bone]
        _log_driver(obj, planned.bone, planned.path, journal)
        records.drive(obj, pose_bone, planned.path, planned.driven)


def _log_driver(obj: bpy.types.Object, bone: str, path: str, journal: Journal) -> None:
    """Log a pose bone property's driver (or its having none) and value, to give them back on undo."""
    pose_bone = obj.pose.bones[bone]
    before, value = _driver_of(obj, pose_bone.path_from_id(path)), getattr(pose_bone, path)

    def undo() -> None:
        restored = obj.pose.bones[bone]
        restored.driver_remove(path)
        setattr(restored, path, value)
        if before is not None:
            _set_driver(restored.driver_add(path).driver, *before)

    journal.data(undo)


def _undriven_stretch(obj: bpy.types.Object, limb, limb_plan: LimbPlan, journal: Journal) -> None:
    """A chain bone the plan no longer stretches (an earlier release's build stretched the hips at the
    root of a chain of 3) loses the handle's driver and gets its own IK stretch back."""
    driven = {planned.bone for planned in limb_plan.drivers if planned.path == "ik_stretch"}
    states = {item.name: item.ik_stretch for item in limb.chain_states}
    for name in limb_plan.chain:
        pose_bone = obj.pose.bones[name]
        if name in driven or not records.drives_stretch(obj, pose_bone):
            continue
        _log_driver(obj, name, "ik_stretch", journal)
        pose_bone.driver_remove("ik_stretch")
        pose_bone.ik_stretch = states.get(name, 0.0)


def _constraints(obj: bpy.types.Object, limb, limb_plan: LimbPlan, entry: _Rebuilt | None, journal: Journal) -> None:
    """A rebuilt limb's constraints are set again in place; new ones added, unwanted ones removed."""
    pose_bones = obj.pose.bones
    # Matched by owner, kind and name: a bone may carry two of IK Rigger's constraints of one kind.
    existing: dict[tuple[str, str, str], str] = {}
    if entry is not None:
        for owner, name in entry.parts.constraints:
            # A made bone the rebuild no longer wants took its constraints with it.
            if owner in pose_bones:
                existing[(owner, pose_bones[owner].constraints[name].type, name)] = name
    limb.constraints.clear()
    for planned in limb_plan.constraints:
        key = (planned.owner, planned.kind, planned.name)
        name = existing.pop(key, None)
        if name is not None:
            constraint = pose_bones[planned.owner].constraints[name]
            state = _constraint_state(constraint, planned)
            journal.data(lambda constraint=constraint, state=state: _restore_constraint(constraint, state))
            configure(obj, constraint, planned)
        else:
            constraint = add_constraint(obj, planned)
            journal.data(lambda owner=planned.owner, made=constraint.name: remove_constraint(obj, owner, made))
        if planned.influence is not None:
            records.drive(obj, constraint, "influence", planned.influence)
        record = limb.constraints.add()
        record.name = planned.owner
        record.constraint = constraint.name
    for (owner, kind, _), name in existing.items():
        pose_bone = pose_bones[owner]
        constraint = pose_bone.constraints[name]
        state = _constraint_state(constraint, ConstraintPlan(owner, kind, name, ""))
        index = list(pose_bone.constraints).index(constraint)
        journal.data(lambda owner=owner, kind=kind, index=index, state=state:
                     _recreate_constraint(obj, owner, kind, index, state))
        remove_constraint(obj, owner, name)


def mirrored_request(obj: bpy.types.Object, last: str, options: LimbOptions) -> tuple[str, LimbOptions] | None:
    """The same limb on the other side, when the names carry a side and it exists.

    Raises ``RigError`` when the other side's chain or extremity is not, bone for
    bone, the mirror of this side's (a missing thigh.R would rig hips > shin.R).
    """
    if obj.mode == "EDIT":
        with modes.kept_mode(obj):
            modes.leave_edit_mode(obj)  # bones are read, which Edit mode leaves stale
            skeleton = read_skeleton(obj)
    else:
        skeleton = read_skeleton(obj)
    names = set(skeleton.bones)
    other = naming.flip_name(last, names)
    if other is None or other not in names:
        return None
    flip = {"X_POS": "X_NEG", "X_NEG": "X_POS"}
    mirrored = renamed_bones(replace(options, bend_direction=flip.get(options.bend_direction, options.bend_direction)),
                             lambda bone: naming.flip_name(bone, names))
    chain = chain_ending_at(skeleton, last, options.chain_length)
    other_chain = skeleton.lineage(other, options.chain_length)[::-1]
    extremities: tuple[str | None, str | None] = (None, None)
    if options.extremity_mode == "AUTO":
        extremities = automatic_extremity(skeleton, last), automatic_extremity(skeleton, other)
    elif options.extremity_mode == "BONE":
        # An empty name is no extremity on either side: the build says so for this side.
        extremities = options.extremity_name or None, mirrored.extremity_name or None
    check_mirrored(chain, extremities[0], other_chain, extremities[1], names)
    return other, mirrored


def rest_pole_angle(obj: bpy.types.Object, limb) -> float:
    """The automatic pole angle of a built limb, from its rest skeleton (no mode switch)."""
    bones = obj.data.bones
    root = bones[limb.chain[0].name]
    last = bones[limb.chain[-1].name]
    return geometry.pole_angle(root.head_local, root.tail_local, root.matrix_local.col[0].xyz,
                               last.tail_local, bones[limb.pole].head_local)
