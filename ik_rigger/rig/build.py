"""Write limb plans to Blender: plan every request, then one pass per mode.

Stages (each says the mode it runs in):
1. plan (Object or Pose mode, here): read the rest skeleton, plan every limb; any
   ``RigError`` is raised here, before the armature is touched; ``Motion`` records what
   plays (see ``motion``);
2. bones (Edit mode, ``edit_pass``): create handles, poles and clones, or move a rebuilt
   limb's own in place (they keep their names, keys and custom properties); pre-bend
   straight chains; delete made bones a rebuild no longer wants;
3. constraints (Pose mode if the user was in it, else Object mode, ``pose_pass``): IK and
   copy constraints with their drivers, the ``ik_fk`` switch, chain colours, records; then
   ``Motion`` keys what keeps the motion playing.

Every change of stages 2 and 3 is logged in a ``Journal``: if anything fails part way,
whatever the reason, the log gives the armature back as it was, so a build either
completes or changes nothing. From Pose or Object mode that is two mode switches.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import bpy

from .. import parts as limb_parts
from ..core import joints
from ..core.errors import RigError
from ..core.model import PALETTE_CHAIN, Skeleton
from ..core.notes import warning
from ..limb.options import LimbOptions
from ..limb.plan import LimbPlan, plan_limb
from ..limb.requests import mirrored
from . import edit_pass, modes, pose_pass, posed, precision, readers, records, shapes
from .checks import check_armature, check_limb, constraint_stacks, overridden_by_ik, solver_constraints
from .journal import Journal
from .kept_controls import KeptControls
from .motion import Motion, not_prebent
from .orient import keep_bone_children
from .records import Rebuilt
from .remade import remade
from .shared_data import refuse_rigged_by_another, refuse_shared, sharing
from .skeleton import check_editable, read_skeleton
from .upgrade import prepared


def build_limbs(obj: bpy.types.Object, requests: Sequence[tuple[str, LimbOptions]],
                skeleton: Skeleton | None = None) -> list[LimbPlan]:
    """Rig the chains ending at each requested bone; rebuild those already rigged.

    ``requests`` pairs the last bone of each chain with its options. Either every
    limb is built or, whatever goes wrong, nothing at all changes. ``skeleton`` saves
    reading the armature again when the caller has just read it (out of Edit mode).
    """
    check_editable(obj)
    check_armature(obj)
    with _no_collection(), modes.kept_mode(obj) as original, modes.mirror_off(obj):
        modes.leave_edit_mode(obj)
        with prepared(obj):  # a refusal gives back the upgrade of an earlier rig
            rig = obj.ik_rigger
            stacks = constraint_stacks(obj)
            plans, rebuilt, hinges = _plan(obj, rig, requests, skeleton, stacks)
            if rebuilt:
                refuse_shared(obj, "rebuilding a limb moves its bones in that data")
            if len(rebuilt) < len(plans):
                refuse_rigged_by_another(obj)
            # Limbs an earlier release rigged may be rebuilt onto parts that play their keys otherwise: baked again.
            again = remade(obj, plans, [options for _, options in requests], rebuilt)
            motion = Motion(obj, plans, [options for _, options in requests], set(rebuilt) - again)
            still = posed.posed_still(obj, plans, motion.options, motion.played.modes, set(rebuilt), stacks)
            bent = motion.bent_by_motion() | posed.bent_by_pose(obj, plans, motion.options, still)
            if bent:
                # Their motion bends them: planned again unbent, the motion plays exactly.
                requests = [(last, replace(options, prebend_straight=False) if index in bent else options)
                            for index, (last, options) in enumerate(requests)]
                motion.options = [options for _, options in requests]
                plans, rebuilt, hinges = _plan(obj, rig, requests, skeleton, stacks)
                plans = [not_prebent(limb_plan) if index in bent else limb_plan
                         for index, limb_plan in enumerate(plans)]
                motion.plans = plans
            kept_ones = {index: entry for index, entry in rebuilt.items() if index not in again}
            kept = KeptControls(obj, plans, kept_ones) if kept_ones else None  # before any rest or parent changes
            journal = Journal(obj)
            try:
                keep_bone_children(obj, [edit for limb_plan in plans for edit in limb_plan.bone_edits], journal)
                doomed = pose_pass.doomed_poses(obj, plans, rebuilt)
                pose_pass.shortened_chains(obj, plans, rebuilt, journal)
                modes.set_mode(obj, "EDIT")
                uids, originals, notes = edit_pass.bone_stage(obj, plans, rebuilt, doomed, journal)
                modes.set_mode(obj, modes.data_mode(original))
                pose_pass.log_animation_data(obj, journal)
                made = pose_pass.new_constraints(obj, plans, rebuilt, journal)
                for index, (limb_plan, requested) in enumerate(zip(plans, requests)):
                    pose_pass.constraints_and_record(obj, limb_plan, requested[1], originals, rebuilt.get(index),
                                                     uids[index], hinges[index], journal, made.get(index))
                motion.keep(notes, journal)
                if kept is not None:
                    kept.key(journal)
                posed.keep_pose(obj, plans, still, notes)
                _set_version(obj, journal)
            except BaseException:
                journal.rollback()
                raise
    if rebuilt:  # a rebuild with shapes turned off may leave the last user of one; a new limb takes none
        shapes.drop_unused()
    return _noted(obj, plans, notes)


@contextmanager
def _no_collection() -> Iterator[None]:
    """Python's garbage collection held off while a build runs: a build makes many short-lived
    objects, each of which counts toward a collection, and Blender keeps tens of thousands of
    long-lived ones that every full collection walks again (a tenth of a large build). What the
    build left is collected as usual afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def plan_limbs(obj: bpy.types.Object, requests: Sequence[tuple[str, LimbOptions]],
               skeleton: Skeleton | None = None) -> list[LimbPlan]:
    """Plan without building: what ``build_limbs`` would do (for dry runs)."""
    check_editable(obj)
    check_armature(obj)
    with modes.kept_mode(obj):
        modes.leave_edit_mode(obj)
        return _plan(obj, obj.ik_rigger, requests, skeleton)[0]


def rig_able(obj: bpy.types.Object, requests: Sequence[tuple[str, LimbOptions]],
             skeleton: Skeleton | None = None, together: bool = True,
             ) -> tuple[list[tuple[str, LimbOptions]], list[tuple[str, str]]]:
    """Of the limbs detection found, those that plan (each alone, as ``build_limbs`` plans it),
    and the others as (bone, why): a limb detection is sure of may still be one IK Rigger will
    not rig (a bone too short for IK, another IK constraint on it); it is skipped, not the
    whole armature. ``together``: first try planning them all at once, the usual case, where a build
    of them all was not just refused."""
    if together:
        try:  # in one planning: limbs that plan together each plan alone
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


def _kept(obj: bpy.types.Object, entry: Rebuilt) -> dict[str, Any]:
    """What each part keeps of a limb being rebuilt, by part name (its ``keep`` hook)."""
    return {part.name: part.keep(obj, entry.parts) for part in limb_parts.PARTS if part.keep is not None}


def _plan(obj: bpy.types.Object, rig, requests: Sequence[tuple[str, LimbOptions]], skeleton: Skeleton | None = None,
          stacks: dict[str, list[bpy.types.Constraint]] | None = None,
          ) -> tuple[list[LimbPlan], dict[int, Rebuilt], list[list[joints.Hinge]]]:
    """Plan every request; ``rebuilt`` maps a request's index to the limb it rebuilds; ``hinges``
    holds each limb's hinge joints (none unless asked); ``stacks``: the armature's constraints by bone
    (``constraint_stacks``), when the caller read them."""
    if skeleton is None:
        skeleton = read_skeleton(obj)
    resolved = [records.resolve(obj, limb) for limb in rig.limbs]
    made_all = {name for parts in resolved for name in parts.made.values()}
    by_last = {parts.chain[-1]: index for index, parts in enumerate(resolved) if parts.chain}
    by_last.update({name: index for index, parts in enumerate(resolved) for name in parts.gone})
    rebuilt: dict[int, Rebuilt] = {}
    for number, (last, _) in enumerate(requests):
        index = by_last.get(last)
        if index is not None:
            refuse_gone(rig.limbs[index], resolved[index])
            limb = rig.limbs[index]
            rebuilt[number] = Rebuilt(index, limb.uid, resolved[index], [
                (rest.name, tuple(rest.head), tuple(rest.tail), rest.roll) for rest in limb.prebent])
    rebuilt_indexes = {entry.index for entry in rebuilt.values()}
    base = skeleton.without({name for entry in rebuilt.values() for name in entry.parts.made.values()})
    used = {bone: rig.limbs[index].name for index, parts in enumerate(resolved) if index not in rebuilt_indexes
            for bone in parts.bones()}
    asked: dict[str, str] = {}  # bone -> the limb of this build whose chain or extremity it is
    ours = {pair for parts in resolved for pair in parts.constraints}
    if stacks is None:
        stacks = constraint_stacks(obj)
    solvers = solver_constraints(stacks)
    # Made bones keep their names through a rebuild, so no new bone may take one.
    taken: set[str] = set(made_all)
    plans = []
    hinges: list[list[joints.Hinge]] = []
    soloed = edit_pass.solo_note(obj)  # the armature's, and where it stands: read once for every limb
    seen = precision.worlds(obj)
    for number, (last, options) in enumerate(requests):
        if last in made_all:
            raise RigError("was made by IK Rigger; it cannot end a chain", bone=last,
                           hint="Pick the last bone of the chain, such as the shin or forearm.")
        limb_plan = plan_limb(base, last, options, taken, _kept(obj, rebuilt[number]) if number in rebuilt
                              else None)
        for bone in (*limb_plan.chain, limb_plan.extremity):
            if bone in asked:  # two limbs of this build (Both Sides' two) reach the same bone
                raise RigError(f"would belong to both limbs built, the one ending at '{asked[bone]}' and the one "
                               f"ending at '{last}'", bone=bone,
                               hint="Make the chain shorter (Chain Length) so that each limb has its own bones, "
                                    "or build one limb alone.")
            if bone in used:
                raise RigError(f"already belongs to the limb ending at '{used[bone]}'", bone=bone,
                               hint="Remove that limb first, or pick another chain.")
            if bone is not None:
                asked[bone] = last
        told: tuple[str, ...] = ()
        if stacks:  # a bare armature has no constraint a limb could fight or override
            told = (*check_limb(skeleton, limb_plan, options, ours, stacks, solvers),
                    *overridden_by_ik(stacks, limb_plan, ours))
        turned = readers.turned_warning(obj, {edit.name for edit in limb_plan.bone_edits}) \
            if limb_plan.bone_edits else None
        told += (turned,) if turned else ()
        told += (soloed,) if soloed else ()
        told += (far,) if (far := precision.far_warning(obj, skeleton, limb_plan.chain, seen)) else ()
        if told:
            limb_plan = replace(limb_plan, notes=limb_plan.notes + told)
        hinges.append(list(limb_plan.hinges))
        if number in rebuilt:
            limb_plan = _reuse_names(limb_plan, rebuilt[number].parts.made)
        taken |= {bone.name for bone in limb_plan.new_bones}
        plans.append(limb_plan)
    return plans, rebuilt, hinges


def refuse_gone(limb, parts: records.Parts) -> None:
    """A limb whose chain bone was deleted by hand is not rebuilt: a chain of what is left would reach into
    the bones above it (a leg's into the hips) or end elsewhere than the limb did."""
    if parts.gone:
        how = "(deleted by hand)" if parts.stand_in is None else (
            f"(deleted by hand; or renamed to '{parts.stand_in}', recoloured and moved, which cannot be told from "
            "the bone above a deleted one: it stands where the chain bone stood but does not end at the next one's "
            "head)")
        hint = "" if parts.stand_in is None else (
            f"If '{parts.stand_in}' is '{parts.gone[0]}' renamed, give it back the chain bones' colour (Pose mode, "
            f"Bone > Viewport Display > Color: {_chain_colour()}) and try again. If not: ")
        raise RigError(f"was a chain bone of the limb ending at '{limb.name}' and is gone from its chain {how}",
                       bone=parts.gone[0], hint=f"{hint}Remove IK Limb takes the rest of that limb out (from one of "
                       f"its bones, or api.remove with '{limb.name}'); then build the limb again on the bones there "
                       "are.")


def _chain_colour() -> str:
    """The chain bones' colour as Blender's interface names it."""
    return bpy.types.BoneColor.bl_rna.properties["palette"].enum_items[PALETTE_CHAIN].name


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


def _noted(obj: bpy.types.Object, plans: list[LimbPlan], notes: dict[int, list[str]]) -> list[LimbPlan]:
    """The plans with what the build had to tell: moved children, armature data other objects share."""
    others = sharing(obj)
    if others and plans:
        notes.setdefault(0, []).append(warning(
            f"the armature data '{obj.data.name}' is shared with {', '.join(repr(n) for n in others)}: "
            "their rest bones changed too (new bones, pre-bent chains), but the IK constraints are only on "
            f"'{obj.name}'"))
    if hasattr(bpy.types.PoseBone, "rigify_type"):  # else Rigify is off: nothing is generated from a metarig
        for index, limb_plan in enumerate(plans):
            metarig = _metarig_note(obj, limb_plan)
            if metarig:
                notes.setdefault(index, []).append(metarig)
    # A frozen plan is copied field by field: only those with something to tell are.
    return [replace(limb_plan, notes=limb_plan.notes + tuple(notes[index])) if notes.get(index) else limb_plan
            for index, limb_plan in enumerate(plans)]


def _metarig_note(obj: bpy.types.Object, limb_plan: LimbPlan) -> str | None:
    """A note where the limb is a Rigify metarig's (a chain bone has a Rigify type): Rigify's Generate Rig
    copies every bone and constraint of the metarig into the rig it makes (asked with Rigify on). A note, not a
    warning: rigging a metarig as it is (the quick guide's way) is fine; only generating from it afterwards is not."""
    pose_bones = obj.pose.bones
    for bone in limb_plan.chain:
        kind = getattr(pose_bones[bone], "rigify_type", "")
        if kind:
            return (f"'{bone}' is a Rigify metarig's '{kind}': Generate Rig would copy this limb's IK Rigger "
                    "bones and constraints into the rig it makes, where they fight that rig's own IK; "
                    "remove the limb before generating one")
    return None


def _set_version(obj: bpy.types.Object, journal: Journal) -> None:
    rig = obj.ik_rigger
    if rig.version != records.RECORD_VERSION:
        before = rig.version
        rig.version = records.RECORD_VERSION
        journal.data(lambda: setattr(obj.ik_rigger, "version", before))


def mirrored_request(obj: bpy.types.Object, last: str, options: LimbOptions) -> tuple[str, LimbOptions] | None:
    """The same limb on the other side, when the names carry a side and it exists (``limb.requests.mirrored``)."""
    if obj.mode == "EDIT":
        with modes.kept_mode(obj):
            modes.leave_edit_mode(obj)  # bones are read, which Edit mode leaves stale
            skeleton = read_skeleton(obj)
    else:
        skeleton = read_skeleton(obj)
    return mirrored(skeleton, last, options)
