"""Write aim rigs to Blender, find them again after renames, and take them back out.

An aim rig has no record: its made bones carry ``_ik_rigger`` = ``{"limb": "aim-N",
"role": ...}`` like a limb's, and the rest is read from Blender's own data, which
follows renames: the aimed bone owns the Copy Rotation from its pivot, the pivot's
Damped Track names the target. The ``aim``
switch is a custom property on the control's pose bone read by AVERAGE drivers, so
the rig plays where IK Rigger is not installed.

Adding is one Edit pass (bones) and one Pose/Object pass (constraints, drivers, the
switch), journaled like a limb's build: it completes or changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bpy

from ..core import aim as core_aim
from ..core.errors import RigError
from ..core.switches import number
from . import drivers, modes, records
from .animation import bone_paths, remove_fcurves
from .checks import check_armature
from .clips import moves, played_frames
from .constraints import add_constraint, configure
from .edit_pass import place_made_bones, reparent_children
from .journal import Journal
from .pose_pass import drop_empty_animation_data, remove_constraint
from .remove import release_user_constraints, remove_empty_collections
from .shared_data import refuse_shared
from .skeleton import check_editable, read_skeleton

_TYPES = {core_aim.ROLE_PIVOT: "COPY_ROTATION", core_aim.ROLE_TARGET: "DAMPED_TRACK"}


@dataclass
class AimRig:
    """One aim rig as it is now: its made bones by role, and per aimed bone its own."""

    uid: str
    made: dict[str, list[str]] = field(default_factory=dict)  # role -> current names
    aimed: dict[str, dict[str, str]] = field(default_factory=dict)  # aimed bone -> role -> made bone
    constraints: list[tuple[str, str]] = field(default_factory=list)  # (owner, name)

    @property
    def shared(self) -> str | None:
        """The eyes' shared target, when there is one."""
        names = self.made.get(core_aim.ROLE_EYES, [])
        return names[0] if names else None

    @property
    def control(self) -> str | None:
        """The bone carrying the ``aim`` switch."""
        if self.shared is not None:
            return self.shared
        targets = self.made.get(core_aim.ROLE_TARGET, [])
        return targets[0] if len(targets) == 1 else None

    def made_bones(self) -> set[str]:
        return {name for names in self.made.values() for name in names}

    def bones(self) -> set[str]:
        """Every bone the rig involves: made and aimed."""
        return self.made_bones() | set(self.aimed)

    def reuse(self) -> dict[tuple[str, str], str]:
        """(role, aimed bone or '') -> made bone, for planning the rig again in place."""
        found = {(role, aimed): name for aimed, roles in self.aimed.items() for role, name in roles.items()}
        if self.shared is not None:
            found[(core_aim.ROLE_EYES, "")] = self.shared
        return found


def aim_path(control: str) -> str:
    """The RNA path, from the armature object, of an aim rig's switch."""
    return f'pose.bones["{records.quoted(control)}"]["{core_aim.AIM}"]'


def find_aim_rigs(obj: bpy.types.Object) -> list[AimRig]:
    """Every aim rig on the armature, by the markers on its bones (reads only: safe in ``draw``)."""
    rigs: dict[str, AimRig] = {}
    role_of: dict[str, tuple[str, str]] = {}
    for bone in obj.data.bones:
        tag = records.marker(bone)
        if tag is not None and tag[0].startswith(core_aim.UID_PREFIX):
            rigs.setdefault(tag[0], AimRig(tag[0])).made.setdefault(tag[1], []).append(bone.name)
            role_of[bone.name] = tag
    if not rigs:
        return []
    tracks: dict[str, str] = {}
    for pose_bone in obj.pose.bones:
        for constraint in pose_bone.constraints:
            tag = role_of.get(getattr(constraint, "subtarget", "")) if getattr(constraint, "target", None) == obj \
                else None
            if tag is None or _TYPES.get(tag[1]) != constraint.type:
                continue
            rig = rigs[tag[0]]
            rig.constraints.append((pose_bone.name, constraint.name))
            if tag[1] == core_aim.ROLE_PIVOT:
                rig.aimed.setdefault(pose_bone.name, {})[core_aim.ROLE_PIVOT] = constraint.subtarget
            else:
                tracks[pose_bone.name] = constraint.subtarget
    for rig in rigs.values():
        for roles in rig.aimed.values():
            target = tracks.get(roles[core_aim.ROLE_PIVOT])
            if target is not None:
                roles[core_aim.ROLE_TARGET] = target
    return sorted(rigs.values(), key=lambda rig: rig.uid)


def aim_rig_of(obj: bpy.types.Object, bone: str) -> AimRig | None:
    """The aim rig that made ``bone`` or aims it, if any."""
    return next((rig for rig in find_aim_rigs(obj) if bone in rig.bones()), None)


def _new_uid(rigs: list[AimRig]) -> str:
    numbers = [int(rig.uid[len(core_aim.UID_PREFIX):]) for rig in rigs if rig.uid[len(core_aim.UID_PREFIX):].isdigit()]
    return f"{core_aim.UID_PREFIX}{max(numbers, default=0) + 1}"


def plan_for(obj: bpy.types.Object, part: str = "AUTO", active: str | None = None,
             distance: float = core_aim.DEFAULT_DISTANCE) -> tuple[core_aim.AimPlan, AimRig | None]:
    """Object or Pose mode: the aim rig ``add_aim`` would make, and the one it would update."""
    skeleton = read_skeleton(obj)
    rigs = find_aim_rigs(obj)
    limb_made = records.made_by_limbs(obj)
    aim_made = {name for rig in rigs for name in rig.made_bones()}
    if active is not None and active in aim_made:
        # A made bone stands for its rig: aim its bones again.
        active = next(next(iter(rig.aimed), None) for rig in rigs if active in rig.made_bones())
    base = skeleton.without(aim_made | limb_made)
    if part == "AUTO" and active is not None and active not in base:
        active = None
    kind, aimed = core_aim.choose(base, part, active)
    for name in aimed:
        limb = records.limb_of(obj, name)
        if limb is not None:
            raise RigError(f"belongs to the IK limb ending at '{limb.name}', which already moves it", bone=name,
                           hint="Aim another bone, or remove that limb first.")
    existing = next((rig for rig in rigs if set(rig.aimed) == set(aimed)), None)
    for rig in rigs:
        shared = set(rig.aimed) & set(aimed)
        if rig is not existing and shared:
            raise RigError("already has an aim rig with other bones", bone=sorted(shared)[0],
                           hint="Remove that aim rig first (Remove Aim with one of its bones active).")
    taken = set(obj.data.bones.keys())
    aim_plan = core_aim.plan_aim(base, kind, aimed, taken, distance, existing.reuse() if existing else None)
    return aim_plan, existing


def add_aim(obj: bpy.types.Object, part: str = "AUTO", active: str | None = None,
            distance: float = core_aim.DEFAULT_DISTANCE, influence: float = 1.0,
            notes: list[str] | None = None) -> tuple[core_aim.AimPlan, bool]:
    """Give a head, a neck or the eyes an aim target; update the rig in place when they have one.

    ``part`` is one of ``core.aim.PARTS``; ``active`` the user's active bone (AUTO reads
    its name); ``distance`` in head sizes; ``influence`` the ``aim`` switch's value, but 0
    where the motion moves an aimed bone (``moved_by_motion``), said in ``notes`` when given.
    Returns the plan and whether an existing rig was updated. Either the whole rig is
    made or nothing changes.
    """
    check_editable(obj)
    check_armature(obj)
    if not 0.0 <= influence <= 1.0:
        raise RigError(f"the aim influence must be between 0 and 1 (got {influence})")
    refuse_shared(obj, "an aim control adds its bones to that data, or moves them")
    with modes.kept_mode(obj) as original, modes.mirror_off(obj):
        modes.leave_edit_mode(obj)
        aim_plan, existing = plan_for(obj, part, active, distance)
        moved = moved_by_motion(obj, aim_plan, existing.made_bones() if existing else set())
        if moved and influence > 0.0:
            influence = 0.0
            if notes is not None:
                notes.append(f"the animation moves {', '.join(repr(name) for name in moved)}: the switch "
                             f"'{core_aim.AIM}' on '{aim_plan.control}' is set to 0 so it plays as before (the target "
                             "stands where the rest pose faces); raise it to aim at the target")
        uid = existing.uid if existing is not None else _new_uid(find_aim_rigs(obj))
        journal = Journal(obj)
        try:
            modes.set_mode(obj, "EDIT")
            _edit_bones(obj, aim_plan, uid, existing.made_bones() if existing else set(), journal)
            modes.set_mode(obj, modes.data_mode(original))
            if obj.animation_data is None:
                journal.data(lambda: drop_empty_animation_data(obj))
            _constraints(obj, aim_plan, existing, journal)
            _switch(obj, aim_plan.control, influence, journal)
        except BaseException:
            journal.rollback()
            raise
    return aim_plan, existing is not None


def moved_by_motion(obj: bpy.types.Object, aim_plan: core_aim.AimPlan, made: set[str]) -> list[str]:
    """The aimed bones whose pose what plays moves relative to their target, by the limbs' rule (``clips.moves``,
    by their transform channels): keys or drivers, actions or NLA strips, on them or on what they follow, but
    the target's parent and the bones above it, which carry the target too, and the rig's own bones ``made``
    (its target's keys aim it). The target stands where the rest pose faces, so an aim on at full turns such a
    bone away from what the motion shows."""
    anchor = next(bone.parent for bone in aim_plan.new_bones if bone.name == aim_plan.control)
    carried = set(made)
    bone = obj.data.bones.get(anchor) if anchor is not None else None
    while bone is not None:
        carried.add(bone.name)
        bone = bone.parent
    return [name for name in aim_plan.aimed
            if played_frames(obj, [name]) and moves(obj, [name], carried, channels_only=True)]


def _edit_bones(obj: bpy.types.Object, aim_plan: core_aim.AimPlan, uid: str, reused: set[str],
                journal: Journal) -> None:
    """Edit mode: make the plan's bones, or move a rebuilt rig's own in place."""
    place_made_bones(obj, aim_plan.new_bones, uid, reused, journal)


def _driver_state(obj: bpy.types.Object, constraint: bpy.types.Constraint) -> str | None:
    data = obj.animation_data
    fcurve = data.drivers.find(constraint.path_from_id("influence")) if data is not None else None
    variables = fcurve.driver.variables if fcurve is not None else ()
    return variables[0].targets[0].data_path if len(variables) == 1 else None


def _constraints(obj: bpy.types.Object, aim_plan: core_aim.AimPlan, existing: AimRig | None, journal: Journal) -> None:
    """Object or Pose mode: the pivots' Damped Tracks and the aimed bones' Copy Rotations, set again in place."""
    pose_bones = obj.pose.bones
    ours = {(owner, pose_bones[owner].constraints[name].type): name
            for owner, name in (existing.constraints if existing else [])}
    for planned in aim_plan.constraints:
        name = ours.get((planned.owner, planned.kind))
        if name is not None:
            constraint = pose_bones[planned.owner].constraints[name]
            saved = {key: getattr(constraint, key) for key, _ in planned.settings}
            saved.update(subtarget=constraint.subtarget, influence=constraint.influence)
            path = _driver_state(obj, constraint)

            def undo(constraint=constraint, saved=saved, path=path) -> None:
                for key, value in saved.items():
                    setattr(constraint, key, value)
                if path is None:
                    constraint.driver_remove("influence")
                else:
                    constraint.driver_add("influence").driver.variables[0].targets[0].data_path = path

            journal.data(undo)
            configure(obj, constraint, planned)
        else:
            constraint = add_constraint(obj, planned)
            journal.data(lambda owner=planned.owner, made=constraint.name: remove_constraint(obj, owner, made))
        if planned.kind == "COPY_ROTATION":
            _drive(obj, constraint, aim_plan.control)


def _drive(obj: bpy.types.Object, constraint: bpy.types.Constraint, control: str) -> None:
    """Drive the influence by the control's ``aim``: an average of one variable, which runs with auto-run off."""
    driver = constraint.driver_add("influence").driver
    driver.type = "AVERAGE"
    for variable in list(driver.variables):
        driver.variables.remove(variable)
    drivers.read_switch(driver, obj, control, core_aim.AIM)


def _switch(obj: bpy.types.Object, control: str, value: float, journal: Journal) -> None:
    """The ``aim`` switch on the control, animatable and overridable like ``ik_fk``."""
    pose_bone = obj.pose.bones[control]
    before = pose_bone.get(core_aim.AIM)
    if before is None:
        journal.data(lambda: obj.pose.bones[control].pop(core_aim.AIM, None))
    else:
        journal.data(lambda: obj.pose.bones[control].__setitem__(core_aim.AIM, before))
    pose_bone[core_aim.AIM] = float(value)
    ui = pose_bone.id_properties_ui(core_aim.AIM)
    ui.update(min=0.0, max=1.0, soft_min=0.0, soft_max=1.0, default=1.0, subtype="FACTOR",
              description=core_aim.AIM_DESCRIPTION)
    # Animators work on a library override of the character: the switch must be theirs to set.
    pose_bone.property_overridable_library_set(f'["{core_aim.AIM}"]', True)
    obj.update_tag()


def aim_value(obj: bpy.types.Object, rig: AimRig) -> float | None:
    """The rig's ``aim`` switch, None when its control is gone."""
    control = rig.control
    pose_bone = obj.pose.bones.get(control) if control else None
    if pose_bone is None or pose_bone.get(core_aim.AIM) is None:
        return None
    return number(pose_bone, core_aim.AIM, 1.0)


def remove_aim(obj: bpy.types.Object, bone: str) -> tuple[list[str], list[str]]:
    """Take out the aim rig that made or aims ``bone``, leaving the armature as before it.

    Returns the bones it aimed and what the user should hear (their own constraints
    aiming at a removed bone are kept but muted, as when removing a limb).
    """
    check_editable(obj)
    with modes.kept_mode(obj) as original, modes.mirror_off(obj):
        modes.leave_edit_mode(obj)
        rig = aim_rig_of(obj, bone)
        if rig is None:
            raise RigError("is not part of an aim rig", bone=bone,
                           hint="Make an aimed bone or an aim target active.")
        refuse_shared(obj, "removing an aim control deletes its bones from that data")
        made = rig.made_bones()
        for owner, name in rig.constraints:
            remove_constraint(obj, owner, name)
        messages = release_user_constraints(obj, made)
        remove_fcurves(obj, bone_paths(made), groups=made)
        drop_empty_animation_data(obj)
        modes.set_mode(obj, "EDIT")
        edit_bones = obj.data.edit_bones
        messages.extend(reparent_children(edit_bones, made))
        for name in made:
            edit_bones.remove(edit_bones[name])
        modes.set_mode(obj, modes.data_mode(original))
        remove_empty_collections(obj)
    return sorted(rig.aimed), messages
