"""The build's constraint stage (Object or Pose mode), with what logs it for a rollback.

For each limb: its record, IK and copy constraints set in place or added (unwanted ones
removed), the ``ik_fk`` switch and other properties, the drivers on them, chain colours and
hinge locks, control shapes. Every change logs in the build's ``Journal`` what gives it
back; ``doomed_poses`` keeps, before the bone stage, the pose data of the made bones a
rebuild deletes, which Edit mode cannot give back with the bone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import bpy

from ..core import joints
from ..core.model import PALETTE_CHAIN, ConstraintPlan, NewBone, PropertyPlan
from ..limb.options import LimbOptions
from ..limb.plan import LimbPlan
from . import drivers, records, shapes, switches
from . import joints as pose_joints
from .constraints import add_constraint, configure, template_key
from .journal import Journal
from .records import Rebuilt
from .visibility import hide_in_pose

# What a constraint IK Rigger adds may have changed by a rebuild, beyond its planned settings.
_CONSTRAINT_BASICS = ("name", "target", "subtarget", "pole_target", "pole_subtarget", "influence", "mute",
                      "owner_space", "target_space", "mix_mode", "chain_count", "pole_angle", "iterations",
                      "use_stretch", "use_tail", "use_rotation", "weight", "limit_mode", "distance", "head_tail")


def doomed_poses(obj: bpy.types.Object, plans: list[LimbPlan],
                rebuilt: dict[int, Rebuilt]) -> dict[str, Callable[[], None]]:
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
            # A hidden chain's JOINT bone holds the IK's stretch, driven, and its hinge's IK settings.
            solving = (pose_bone.ik_stretch, drivers.driver_of(obj, pose_bone.path_from_id("ik_stretch")),
                       pose_joints.ik_settings(pose_bone))

            def undo(name: str = name, kept: list = kept, looks: tuple = looks, solving: tuple = solving) -> None:
                restored = obj.pose.bones[name]
                restored.custom_shape, restored.custom_shape_scale_xyz, restored.matrix_basis = looks
                restored.ik_stretch, stretch_driver, settings = solving
                pose_joints.set_ik_settings(restored, settings)
                if stretch_driver is not None:
                    drivers.set_driver(restored.driver_add("ik_stretch").driver, *stretch_driver)
                for kind, position, state in kept:
                    _recreate_constraint(obj, name, kind, position, state)

            undos[name] = undo
    return undos


def shortened_chains(obj: bpy.types.Object, plans: list[LimbPlan], rebuilt: dict[int, Rebuilt],
                     journal: Journal) -> None:
    """Object or Pose mode, before the bone stage: a rebuilt limb whose chain gets shorter has its
    solver constraints span the new chain already.

    Leaving Edit mode rebuilds Blender's dependency graph on the new bones with the constraints
    as they are: an IK still over a bone the rebuild no longer solves (a chain of 3 made 2), to
    which the stage parents a made bone its target reaches for, would be a dependency cycle,
    printed before the constraint stage sets the new chain. A shorter chain is safe on the old
    bones too; a longer one waits for the new bones (the constraint stage). The constraints the
    rebuild no longer plans on the user's bones come off here too (``_left_out``).
    """
    for index, limb_plan in enumerate(plans):
        entry = rebuilt.get(index)
        if entry is None:
            continue
        _left_out(obj, limb_plan, entry, journal)
        existing = set(entry.parts.constraints)
        for planned in limb_plan.constraints:
            count = dict(planned.settings).get("chain_count")
            if not isinstance(count, int) or (planned.owner, planned.name) not in existing:
                continue
            constraint = obj.pose.bones[planned.owner].constraints[planned.name]
            before = constraint.chain_count
            if count < before:
                constraint.chain_count = count
                journal.data(lambda owner=planned.owner, name=planned.name, before=before: setattr(
                    obj.pose.bones[owner].constraints[name], "chain_count", before))


def _left_out(obj: bpy.types.Object, limb_plan: LimbPlan, entry: Rebuilt, journal: Journal) -> None:
    """The constraints a rebuild no longer plans on the user's bones come off before the bone stage:
    a chain bone left out keeps a Copy Transforms of its old FOLLOW bone, whose name the stage gives
    (made bones keep their names by role) to a bone of the new chain hanging below it, a cycle; an
    IK moved onto a hidden chain would solve over it. Made bones' constraints go with their bones
    or are set in the constraint stage."""
    planned = {(plan.owner, plan.kind, plan.name) for plan in limb_plan.constraints}
    made = set(entry.parts.made.values())
    pose_bones = obj.pose.bones
    kept = []
    for owner, name in entry.parts.constraints:
        pose_bone = pose_bones[owner]
        constraint = pose_bone.constraints[name]
        kind = constraint.type
        if owner in made or (owner, kind, name) in planned:
            kept.append((owner, name))
            continue
        state = _constraint_state(constraint, ConstraintPlan(owner, kind, name, ""))
        position = list(pose_bone.constraints).index(constraint)
        # Given back once the bones are back: its target is the old chain's again.
        journal.after_bones(lambda owner=owner, kind=kind, position=position, state=state:
                            _recreate_constraint(obj, owner, kind, position, state))
        remove_constraint(obj, owner, name)
    entry.parts.constraints[:] = kept


def hide_made_bones(obj: bpy.types.Object, planned: Sequence[NewBone], fresh: bool = False) -> None:
    """Object or Pose mode: hide the planned hidden bones where animators see them, in Pose mode
    (``visibility``: Blender 4.2 and 5.x keep that state in different places). ``fresh``: the bones
    were all just made, shown, so only those to hide are looked up."""
    for new in planned:
        if new.hidden or not fresh:
            hide_in_pose(obj, new.name, new.hidden)


def log_animation_data(obj: bpy.types.Object, journal: Journal) -> None:
    if obj.animation_data is None:
        journal.data(lambda: drop_empty_animation_data(obj))


def drop_empty_animation_data(obj: bpy.types.Object) -> None:
    """Remove animation data that only existed for IK Rigger's drivers, now gone."""
    data = obj.animation_data
    if data is not None and data.action is None and not data.drivers and not data.nla_tracks:
        obj.animation_data_clear()


def _constraint_state(constraint: bpy.types.Constraint, planned: ConstraintPlan) -> dict:
    keys = [key for key in _CONSTRAINT_BASICS if hasattr(constraint, key)] + [key for key, _ in planned.settings]
    state = {key: getattr(constraint, key) for key in keys}
    if constraint.type == "ARMATURE":
        state["_targets"] = [(target.target, target.subtarget, target.weight) for target in constraint.targets]
    state["_driver"] = drivers.driver_of(constraint.id_data, constraint.path_from_id("influence"))
    return state


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
    drivers.set_driver(constraint.driver_add("influence").driver, *state["_driver"])


def remove_constraint(obj: bpy.types.Object, owner: str, name: str) -> None:
    """Remove a constraint by owner bone and name, with its influence driver, if it still exists."""
    pose_bone = obj.pose.bones.get(owner)
    constraint = pose_bone.constraints.get(name) if pose_bone is not None else None
    if constraint is not None:
        drivers.drop_drivers(obj, constraint)
        pose_bone.constraints.remove(constraint)


def _recreate_constraint(obj: bpy.types.Object, owner: str, kind: str, index: int, state: dict) -> None:
    pose_bone = obj.pose.bones[owner]
    constraint = pose_bone.constraints.new(kind)
    _restore_constraint(constraint, state)
    pose_bone.constraints.move(len(pose_bone.constraints) - 1, index)


def _log_pose_bone(journal: Journal, obj: bpy.types.Object, name: str, ik: bool = True,
                   looks: tuple[str, float] | None = None) -> None:
    """Log a chain bone's colour, IK stretch and (``ik``: when they may change) IK locks and limits;
    ``looks``: its colour and stretch, when the caller has just read them."""
    pose_bone = obj.pose.bones[name]
    palette, stretch = looks if looks is not None else (pose_bone.color.palette, pose_bone.ik_stretch)
    settings = pose_joints.ik_settings(pose_bone) if ik else {}
    journal.data(lambda: _give_back(obj, name, palette, stretch, settings))


def _give_back(obj: bpy.types.Object, name: str, palette: str, stretch: float, settings: dict) -> None:
    """A chain bone's colour, IK stretch and IK locks and limits (those in ``settings``) as logged."""
    restored = obj.pose.bones[name]
    restored.color.palette = palette
    restored.ik_stretch = stretch
    pose_joints.set_ik_settings(restored, settings)


def _log_record(journal: Journal, obj: bpy.types.Object, index: int | None) -> int:
    """Log the limb record at ``index`` (None: the one about to be added, whose index is returned) and
    the active limb, to give them back on a rollback."""
    rig = obj.ik_rigger
    active = rig.active_limb_index
    if index is None:
        added = len(rig.limbs)

        def undo_added() -> None:
            obj.ik_rigger.limbs.remove(added)
            obj.ik_rigger.active_limb_index = active

        journal.data(undo_added)
        return added
    saved = rig.limbs[index].id_properties_ensure().to_dict()

    def undo_changed() -> None:
        group = obj.ik_rigger.limbs[index].id_properties_ensure()
        group.clear()
        group.update(saved)
        obj.ik_rigger.active_limb_index = active

    journal.data(undo_changed)
    return index


def _chain_states(obj: bpy.types.Object, limb, chain: Sequence[str], entry: Rebuilt | None,
                  hinges: dict[str, joints.Hinge], journal: Journal) -> None:
    """Colour the chain red and give hinge joints their IK locks and limits, storing what each
    bone had: its colour and stretch when not Blender's defaults, its locks and limits while hinged."""
    if entry is None:
        _new_chain_states(obj, limb, chain, hinges, journal)
        return
    pose_bones = obj.pose.bones
    default = ("DEFAULT", 0.0)
    old_chain = records.inventory(limb).chain
    old_states = {item.name: (item.palette, item.ik_stretch, item.ik_settings) for item in limb.chain_states}
    limb.chain_states.clear()
    for name in chain:
        pose_bone = pose_bones[name]
        looks = (pose_bone.color.palette, pose_bone.ik_stretch)
        if name in old_chain:
            palette, stretch, settings = old_states.get(name, (*default, ""))
        else:
            (palette, stretch), settings = looks, ""
        hinge = hinges.get(name)
        _log_pose_bone(journal, obj, name, ik=hinge is not None or bool(settings), looks=looks)
        if hinge is not None and not settings:
            settings = pose_joints.dumps(pose_joints.ik_settings(pose_bone))
        elif hinge is None and settings:
            pose_joints.set_ik_settings(pose_bone, pose_joints.loads(settings))  # no longer hinged
            settings = ""
        if hinge is not None:
            pose_joints.set_ik_settings(pose_bone, pose_joints.hinged(pose_joints.loads(settings), hinge))
        _store_state(limb, name, palette, stretch, settings)
        pose_bone.color.palette = PALETTE_CHAIN
    for name in old_chain:
        if name not in chain and name in pose_bones:
            _log_pose_bone(journal, obj, name)
            if drivers.drives_stretch(obj, pose_bones[name], limb.handle):  # a chain made shorter
                drivers.log_driver(obj, name, "ik_stretch", journal)
                pose_bones[name].driver_remove("ik_stretch")
            palette, stretch, settings = old_states.get(name, (*default, ""))
            pose_bones[name].color.palette, pose_bones[name].ik_stretch = palette, stretch
            if settings:
                pose_joints.set_ik_settings(pose_bones[name], pose_joints.loads(settings))


def _new_chain_states(obj: bpy.types.Object, limb, chain: Sequence[str], hinges: dict[str, joints.Hinge],
                      journal: Journal) -> None:
    """``_chain_states`` for a limb just added: its record has no states to read, and one undo, logged
    first, gives each chain bone back as it was before the build changed it."""
    before: list[tuple[str, str, float, dict]] = []

    def undo() -> None:
        for logged in reversed(before):
            _give_back(obj, *logged)

    journal.data(undo)
    for name in chain:
        pose_bone = journal.pose_bone(name)
        color = pose_bone.color
        palette, stretch = color.palette, pose_bone.ik_stretch
        hinge = hinges.get(name)
        settings = pose_joints.ik_settings(pose_bone) if hinge is not None else {}
        before.append((name, palette, stretch, settings))
        if hinge is not None:
            pose_joints.set_ik_settings(pose_bone, pose_joints.hinged(settings, hinge))
        _store_state(limb, name, palette, stretch, pose_joints.dumps(settings) if hinge is not None else "")
        color.palette = PALETTE_CHAIN


def _store_state(limb, name: str, palette: str, stretch: float, settings: str) -> None:
    """Store what a chain bone had before the limb (``settings``: its IK locks and limits while hinged).
    Only a bone whose colour or stretch differs from Blender's default, or that is hinged, gets a stored
    state: the record is copied on every update of the object, so it stays small."""
    if palette != "DEFAULT" or stretch != 0.0 or settings:
        state = limb.chain_states.add()
        state.name = name
        state.palette, state.ik_stretch, state.ik_settings = palette, stretch, settings


def _made_hinges(obj: bpy.types.Object, limb_plan: LimbPlan, hinges: dict[str, joints.Hinge], rebuilt: bool,
                 journal: Journal) -> None:
    """Hinges on made bones (a hidden chain's) from Blender's defaults; a rebuilt limb's made bones no longer
    hinged get those back (the bones are the rig's own: Remove deletes them)."""
    if not hinges and not rebuilt:
        return
    for new in limb_plan.new_bones:
        hinge = hinges.get(new.name)
        if hinge is None and not rebuilt:
            continue
        _log_pose_bone(journal, obj, new.name)
        settings = pose_joints.hinged(pose_joints.DEFAULTS, hinge) if hinge else pose_joints.DEFAULTS
        pose_joints.set_ik_settings(obj.pose.bones[new.name], settings)


def new_constraints(obj: bpy.types.Object, plans: Sequence[LimbPlan], rebuilt: dict[int, Rebuilt],
                    journal: Journal) -> dict[int, list[bpy.types.Constraint]]:
    """Object or Pose mode: every new limb's constraints, made and named before the build adds any
    driver; returns each limb's (by index) constraints, in its plan's order (the pose pass adds and
    removes no other constraint of those bones before it drives them).

    Naming a new constraint rewrites every animation path of the file that would name it (Blender
    renames the old name's paths), so each costs as much as the drivers already there: named
    between the drivers of the limbs before, a thousand limbs' constraints cost a thousand times
    more each than the first's. A rebuilt limb's constraints are set in place (``_constraints``).
    """
    made: dict[int, list[bpy.types.Constraint]] = {}
    # The first of each kind and name, named as planned, with its plan.
    templates: dict[tuple, tuple[bpy.types.Constraint, ConstraintPlan]] = {}
    added: list[tuple[str, str]] = []  # (owner, name) of each, removed by one undo

    def undo() -> None:
        for owner, name in reversed(added):
            remove_constraint(obj, owner, name)

    journal.data(undo)
    for index, limb_plan in enumerate(plans):
        if index in rebuilt:
            continue
        limb_made = made[index] = []
        for planned in limb_plan.constraints:
            key = template_key(planned)
            constraint = add_constraint(obj, planned, templates.get(key), journal.pose_bone(planned.owner))
            if key not in templates and constraint.name == planned.name:
                templates[key] = constraint, planned
            added.append((planned.owner, constraint.name))
            limb_made.append(constraint)
    return made


def constraints_and_record(obj: bpy.types.Object, limb_plan: LimbPlan, options: LimbOptions, originals: dict,
                            entry: Rebuilt | None, uid: str, hinges: list[joints.Hinge], journal: Journal,
                            premade: list[bpy.types.Constraint] | None = None) -> None:
    """Object or Pose mode: the constraint stage for one limb, then its record. ``premade``: a new limb's
    constraints ``new_constraints`` made, in its plan's order."""
    rig = obj.ik_rigger
    fresh = entry is None
    index = _log_record(journal, obj, entry.index if entry is not None else None)
    if entry is None:
        limb = rig.limbs.add()
        limb.uid = uid
        rig.active_limb_index = index
    else:
        limb = rig.limbs[index]
    limb.name = limb_plan.chain[-1]
    hinged = {hinge.bone: hinge for hinge in hinges}
    _chain_states(obj, limb, limb_plan.chain, entry, hinged, journal)
    _made_hinges(obj, limb_plan, hinged, not fresh, journal)
    if not fresh:  # a new record has no pre-bent bones, nor names but its own to write
        limb.prebent.clear()
    for name in limb_plan.chain if originals else ():
        if name in originals:
            rest = limb.prebent.add()
            rest.name = name
            rest.head, rest.tail, rest.roll = originals[name]
    if limb_plan.extremity or not fresh:
        limb.extremity = limb_plan.extremity or ""
    limb.handle = limb_plan.handle
    if limb_plan.pole or not fresh:
        limb.pole = limb_plan.pole or ""
    if limb_plan.clone or not fresh:
        limb.clone = limb_plan.clone or ""
    _properties(obj, limb_plan, fresh, journal)
    added = _constraints(obj, limb_plan, entry, journal, premade)
    records.store_inventory(limb, records.Inventory(tuple(limb_plan.chain), tuple(
        [(new.name, new.role) for new in limb_plan.new_bones]), tuple(added)), fresh=fresh)
    hide_made_bones(obj, limb_plan.new_bones, fresh)
    if options.shapes:
        shapes.give_shapes(obj, {new.role: new.name for new in limb_plan.new_bones}, journal,
                           set(entry.parts.made.values()) if entry is not None else ())
    elif not fresh:  # a new limb's bones were just made, without shapes
        shapes.take_shapes(obj, [new.name for new in limb_plan.new_bones], journal)
    limb.set_options(options, fresh=fresh)
    _pose_drivers(obj, limb_plan, journal)
    if entry is not None:  # a new limb's chain carries no driver of IK Rigger's
        _undriven_stretch(obj, limb, limb_plan, journal)


def _properties(obj: bpy.types.Object, limb_plan: LimbPlan, fresh: bool, journal: Journal) -> None:
    """The planned custom properties (the handle's switches), each logged with what gives it back. A
    bone just made (``fresh``: a new limb's) has none to read first: one undo takes those off."""
    made_now = {new.name for new in limb_plan.new_bones} if fresh else ()
    added: list[PropertyPlan] = []
    if made_now:
        journal.data(lambda: [obj.pose.bones[planned.bone].pop(planned.key, None) for planned in reversed(added)])
    for planned in limb_plan.properties:
        pose_bone = journal.pose_bone(planned.bone)
        if planned.bone in made_now:
            added.append(planned)
            records.ensure_property(obj, planned, fresh=True, pose_bone=pose_bone)
            continue
        before = switches.kept_value(pose_bone, planned.key)  # a switch made a text or list by hand, too
        if records.ensure_property(obj, planned, pose_bone=pose_bone):
            journal.data(lambda planned=planned: obj.pose.bones[planned.bone].pop(planned.key, None))
        elif before != pose_bone.get(planned.key):  # an option's value, set anew, or a switch restored
            journal.data(lambda planned=planned, before=before: switches.put_back(obj.pose.bones[planned.bone],
                                                                                   planned.key, before))


def _pose_drivers(obj: bpy.types.Object, limb_plan: LimbPlan, journal: Journal) -> None:
    """The drivers on pose bones' own properties (each chain bone's IK stretch follows the handle's
    ``stretch``), each logged with the driver it replaces."""
    for planned in limb_plan.drivers:
        pose_bone = journal.pose_bone(planned.bone)
        path = drivers.log_driver(obj, planned.bone, planned.path, journal, pose_bone)
        owner_path, _, key = planned.path.rpartition(".")
        drivers.drive_in_build(obj, pose_bone.path_resolve(owner_path) if owner_path else pose_bone, key,
                               planned.driven, journal, path)


def _undriven_stretch(obj: bpy.types.Object, limb, limb_plan: LimbPlan, journal: Journal) -> None:
    """A chain bone the plan no longer stretches (an earlier release's build stretched the hips at the
    root of a chain of 3) loses the handle's driver and gets its own IK stretch back."""
    driven = {planned.bone for planned in limb_plan.drivers if planned.path == "ik_stretch"}
    states = {item.name: item.ik_stretch for item in limb.chain_states}
    for name in limb_plan.chain:
        pose_bone = obj.pose.bones[name]
        if name in driven or not drivers.drives_stretch(obj, pose_bone, limb_plan.handle):
            continue
        drivers.log_driver(obj, name, "ik_stretch", journal)
        pose_bone.driver_remove("ik_stretch")
        pose_bone.ik_stretch = states.get(name, 0.0)


def _constraints(obj: bpy.types.Object, limb_plan: LimbPlan, entry: Rebuilt | None, journal: Journal,
                 premade: list[bpy.types.Constraint] | None = None) -> list[tuple[str, str]]:
    """A rebuilt limb's constraints are set again in place; new ones added (or, in ``premade``, taken as
    ``new_constraints`` made them), unwanted ones removed; each planned influence driven.
    Returns the limb's constraints as (owner, name)."""
    pose_bones = obj.pose.bones
    # Matched by owner, kind and name: a bone may carry two of IK Rigger's constraints of one kind.
    existing: dict[tuple[str, str, str], str] = {}
    if entry is not None:
        for owner, name in entry.parts.constraints:
            # A made bone the rebuild no longer wants took its constraints with it.
            if owner in pose_bones:
                existing[(owner, pose_bones[owner].constraints[name].type, name)] = name
    added = []
    for position, planned in enumerate(limb_plan.constraints):
        key = (planned.owner, planned.kind, planned.name)
        name = existing.pop(key, None)
        if premade is not None:
            constraint = premade[position]
        elif name is not None:
            constraint = pose_bones[planned.owner].constraints[name]
            state = _constraint_state(constraint, planned)
            journal.data(lambda constraint=constraint, state=state: _restore_constraint(constraint, state))
            configure(obj, constraint, planned)
        else:
            constraint = add_constraint(obj, planned)
            journal.data(lambda owner=planned.owner, made=constraint.name: remove_constraint(obj, owner, made))
        if planned.influence is not None:
            drivers.drive_in_build(obj, constraint, "influence", planned.influence, journal,
                                   drivers.constraint_path(planned.owner, constraint.name, "influence"))
        added.append((planned.owner, constraint.name))
    for (owner, kind, _), name in existing.items():
        pose_bone = pose_bones[owner]
        constraint = pose_bone.constraints[name]
        state = _constraint_state(constraint, ConstraintPlan(owner, kind, name, ""))
        index = list(pose_bone.constraints).index(constraint)
        journal.data(lambda owner=owner, kind=kind, index=index, state=state:
                     _recreate_constraint(obj, owner, kind, index, state))
        remove_constraint(obj, owner, name)
    return added
