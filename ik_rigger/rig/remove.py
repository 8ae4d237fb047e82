"""Take a rigged limb back out, leaving the armature as it was before, and the user's work intact."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import bpy
from mathutils import Vector

from ..core.errors import RigError
from ..core.notes import warning
from . import bake, drivers, modes, posed, records, shapes
from . import joints as pose_joints
from .animation import bone_of_path, bone_paths, remove_fcurves
from .clips import Clip, followed, moves, other_clips, played_frames, playing_alone
from .edit_pass import reparent_children
from .journal import Journal
from .keys import Recording, default_interpolation, local_action
from .orient import keep_bone_children, rest_edit
from .pose_pass import drop_empty_animation_data
from .scene_state import check_keys_play
from .shared_data import refuse_shared
from .skeleton import check_editable
from .upgrade import prepared


@dataclass
class Removal:
    """What ``remove_limb`` did: the limb's name and what the user should hear."""

    name: str
    messages: list[str] = field(default_factory=list)


def remove_limb(obj: bpy.types.Object, bone: str, keep_motion: bool = True) -> Removal:
    """Remove the limb that uses ``bone`` in any role (after renames too).

    With ``keep_motion``, an animated limb's motion (what its IK plays) is first baked
    onto the chain's own keys, so the animation plays the same without the rig.

    Object or Pose mode: constraints, their drivers, colours, the made bones' keys; Edit
    mode: the user's bones parented to a made bone get its parent, made bones are
    deleted, pre-bent bones get back their rest; then the record and any emptied
    collection go. Parts already deleted by hand are said, not an error.
    """
    check_editable(obj)
    refuse_shared(obj, "removing a limb deletes its bones from that data and gives pre-bent bones their rest back")
    with modes.kept_mode(obj) as original, modes.mirror_off(obj):
        modes.leave_edit_mode(obj)
        # A refusal gives back the upgrade of an earlier rig; past these checks, the removal refuses nothing.
        with prepared(obj):
            rig = obj.ik_rigger
            limb = records.limb_of(obj, bone)
            if limb is None:
                raise RigError("is not part of a limb rigged by IK Rigger", bone=bone,
                               hint="Name a bone of a rigged limb (chain, handle, pole or clone), or make one "
                               "active for Remove IK Limb.")
            parts = records.resolve(obj, limb)
            removal = Removal(limb.name, [f"{what} was already gone" for what in parts.missing])
            # What the limb's IK plays, read now and keyed onto its chain once its rest is back, at the scene's
            # frames: refused, before anything changes, where keys written so would not play as keyed.
            motion = _motion(obj, parts, not limb.prebent) if keep_motion else None
            if isinstance(motion, Recording):
                check_keys_play(obj, instead="remove it with Keep the Motion off (keep_motion=False), which keys "
                                "nothing and leaves the chain to its own keys")
        # The limb's keys come out of the armature's action, and its motion goes back in: not a linked one.
        localised = local_action(obj, Journal(obj))
        if localised is not None:
            removal.messages.append(localised)
        made = set(parts.made.values())
        turned, clips = _clips_turned(obj, limb, parts) if keep_motion else (set(), [])
        held = posed.held_pose(obj, parts.chain, {rest.name for rest in limb.prebent}, motion is not None)
        strip_constraints(obj, limb, parts)
        removal.messages.extend(release_user_constraints(obj, made))
        removal.messages.extend(release_user_readers(obj, made))
        remove_fcurves(obj, bone_paths(made), groups=made, everywhere=True)  # the clips' keys too
        drop_empty_animation_data(obj)
        # Objects parented to a pre-bent bone stay where they are when it gets its rest back.
        keep_bone_children(obj, [rest_edit(rest.name, Vector(rest.head), Vector(rest.tail), rest.roll)
                                 for rest in limb.prebent if rest.name in obj.data.bones])
        modes.set_mode(obj, "EDIT")
        edit_bones = obj.data.edit_bones
        removal.messages.extend(reparent_children(edit_bones, made))
        for name in made:
            edit_bones.remove(edit_bones[name])
        removal.messages.extend(_rests_given_back(edit_bones, limb.prebent))
        modes.set_mode(obj, modes.data_mode(original))
        held()  # a pose of the chain's own, not keyed, shows as it did on the rests given back
        if motion is _OWN_KEYS:
            removal.messages.append(f"kept the limb's motion: {', '.join(parts.chain)} play it with their own keys, "
                                    "as they were")
        elif motion is not None:
            motion.follow_rests(obj)  # a pre-bent chain has its rest back: keyed on it, it plays the same
            bake.key_chain(obj, parts, motion, default_interpolation())
            removal.messages.append(
                f"kept the limb's motion: baked {len(motion.frames)} frames of it onto {', '.join(parts.chain)}"
                + (f" and {parts.extremity}" if parts.extremity else ""))
            removal.messages.extend(warning(
                f"'{name}''s {channel} is set by a driver, so the motion keyed there does not play while it is on: "
                "mute or delete the driver to see it") for name, channel in bake.driven_channels(obj, [parts]))
        for clip, recording in clips:
            recording.follow_rests(obj)
            with playing_alone(obj, clip):
                bake.key_chain(obj, parts, recording, default_interpolation(), only=turned)
        if clips:
            removal.messages.append(
                f"the bones {', '.join(sorted(turned))} have their rests back, so their keys in the file's other "
                f"clips ({', '.join(clip.name for clip, _ in clips)}) were keyed anew on them: each plays as it did")
        shapes.drop_unused()
        rig.limbs.remove(list(rig.limbs).index(limb))
        rig.active_limb_index = min(rig.active_limb_index, max(len(rig.limbs) - 1, 0))
        remove_empty_collections(obj)
    return removal


def _rests_given_back(edit_bones, rests) -> list[str]:
    """Edit mode: the pre-bent (or turned) bones get their rests back; a warning for each one gone."""
    gone: list[str] = []
    for rest in rests:
        edit_bone = edit_bones.get(rest.name)
        if edit_bone is None:
            gone.append(warning(f"the pre-bent bone '{rest.name}' is gone, so its rest was not given back"))
            continue
        edit_bone.head = Vector(rest.head)
        edit_bone.tail = Vector(rest.tail)
        edit_bone.roll = rest.roll
        for child in edit_bone.children:
            if child.use_connect:
                child.head = edit_bone.tail
    return gone


# What ``_motion`` gives for a limb whose chain plays what its IK plays with its own keys.
_OWN_KEYS = object()
# A chain plays what its IK plays when each bone is this close on every frame (a share of the chain's
# length) and turned less than this many degrees: a bake's own precision, far under what shows.
_SAME_PLACE = 1e-3
_SAME_DEGREES = 0.1


def _motion(obj: bpy.types.Object, parts: records.Parts, rests_kept: bool) -> Recording | object | None:
    """What the limb's IK plays (chain, extremity and the chain's parent on every frame), when anything
    moves it; ``_OWN_KEYS`` when, its rests kept (``rests_kept``: none pre-bent nor turned), its chain's
    and extremity's own keys play that already (a limb rigged from them whose controls nobody changed
    since): they stay as they were, so the user's constraints on them (a Copy Rotation at a part of its
    influence, say) are not played twice, once baked into new keys and once on top of them."""
    frames = played_frames(obj, parts.bones())
    if not frames or records.ik_constraint(obj, parts) is None or parts.handle is None:
        return None
    if not moves(obj, parts.bones()):
        return None
    recording = Recording(obj, frames, bake.ik_bones(obj, parts))
    if rests_kept and _plays_its_own_keys(obj, parts, recording):
        return _OWN_KEYS
    return recording


def _plays_its_own_keys(obj: bpy.types.Object, parts: records.Parts, played: Recording) -> bool:
    """Whether the limb, its rig muted, plays what ``played`` recorded of it with the rig on."""
    names = [*parts.chain, *([parts.extremity] if parts.extremity else [])]
    with bake.rig_muted(obj, [parts]):
        own = Recording(obj, played.frames, names)
    near = _SAME_PLACE * sum(obj.data.bones[name].length for name in parts.chain)
    cosine = math.cos(math.radians(_SAME_DEGREES))
    for name in names:
        for shown, kept in zip(played.poses[name], own.poses[name]):
            if (shown.translation - kept.translation).length > near:
                return False
            for axis in range(3):
                a, b = shown.col[axis].xyz, kept.col[axis].xyz
                if a.dot(b) < cosine * a.length * b.length:
                    return False
    return True


def _clips_turned(obj: bpy.types.Object, limb,
                  parts: records.Parts) -> tuple[set[str], list[tuple[Clip, Recording]]]:
    """The bones Fix Bone Orientation turned in a limb, and the file's other clips that move it, each
    recorded as its chain's own keys play it (the limb's constraints muted): the build keyed the turned
    bones' keys in every clip anew on the turned rests, so once the rests are back they are keyed anew
    again. (A pre-bend alone leaves the clips' keys as they were, made for the rest it gives back.)"""
    turned = {rest.name for rest in limb.prebent if rest.name in obj.data.bones}
    if not turned or not limb.to_options().fix_orientation:
        return set(), []
    names = followed(obj, parts.bones())[0]
    found = []
    with bake.rig_muted(obj, [parts]):
        for clip in other_clips(obj):
            if clip.moves(names):
                with playing_alone(obj, clip):
                    found.append((clip, Recording(obj, clip.frames, bake.ik_bones(obj, parts))))
    return turned, found


def strip_constraints(obj: bpy.types.Object, limb, parts: records.Parts) -> None:
    """Object or Pose mode: remove a limb's constraints and give the chain its colours and stretch back."""
    for pose_bone, constraint in list(records.constraints_of(obj, parts)):
        drivers.drop_drivers(obj, constraint)
        pose_bone.constraints.remove(constraint)
    _drop_drivers_of_gone_bones(obj, set(parts.made.values()))
    for name in parts.solver:  # a hidden chain's stretch, read from the handle (parts.hidden)
        obj.pose.bones[name].driver_remove("ik_stretch")
    # Chain bones without a stored state had Blender's defaults (see pose_pass._chain_states).
    states = {item.name: item for item in limb.chain_states}
    for name in parts.chain:
        pose_bone = obj.pose.bones[name]
        if drivers.drives_stretch(obj, pose_bone, parts.handle or limb.handle):
            pose_bone.driver_remove("ik_stretch")
        state = states.get(name)
        pose_bone.color.palette = state.palette if state else "DEFAULT"
        pose_bone.ik_stretch = state.ik_stretch if state else 0.0
        if state and state.ik_settings:
            pose_joints.set_ik_settings(pose_bone, pose_joints.loads(state.ik_settings))


def _drop_drivers_of_gone_bones(obj: bpy.types.Object, made: set[str]) -> None:
    """Remove the drivers on the made bones themselves (soft IK's root follows the chain's by them) and
    those the limb put on bones the user deleted by hand (those reading its made bones): Blender 4.2 keeps
    a deleted bone's drivers (5.x drops them), left invalid, and animation data they alone needed."""
    data = obj.animation_data
    if data is None:
        return
    bones = obj.pose.bones
    for curve in list(data.drivers):
        bone = bone_of_path(curve.data_path)
        if bone in made or bone is not None and bone not in bones and any(
                bone_of_path(target.data_path) in made for variable in curve.driver.variables
                for target in variable.targets if target.id == obj):
            data.drivers.remove(curve)


def _aims(constraint: bpy.types.Constraint, obj: bpy.types.Object, made: set[str]) -> str | None:
    """The made bone a constraint aims at, if any."""
    pairs = [(getattr(constraint, "target", None), getattr(constraint, "subtarget", "")),
             (getattr(constraint, "pole_target", None), getattr(constraint, "pole_subtarget", ""))]
    pairs += [(target.target, target.subtarget) for target in getattr(constraint, "targets", ())]
    return next((subtarget for target, subtarget in pairs if target == obj and subtarget in made), None)


def release_user_constraints(obj: bpy.types.Object, made: set[str]) -> list[str]:
    """Mute the user's constraints that aim at a bone about to be removed, and say so.

    They are kept (they are the user's work) but muted: aimed at nothing, a Copy or
    Child Of constraint would fall back to the armature object and move the bone.
    """
    messages: list[str] = []
    for pose_bone in obj.pose.bones:
        if pose_bone.name in made:
            continue
        for constraint in pose_bone.constraints:
            aimed = _aims(constraint, obj, made)
            if aimed is not None:
                constraint.mute = True
                messages.append(warning(f"kept your constraint '{constraint.name}' on '{pose_bone.name}' but muted "
                                        f"it: it aimed at '{aimed}', which IK Rigger made and removed; aim it at "
                                        "another bone and unmute it"))
    return messages


def release_user_readers(obj: bpy.types.Object, made: set[str]) -> list[str]:
    """Warnings on the user's B-bone handles and drivers that read a bone about to be removed: Blender
    clears such a handle and leaves such a driver reading nothing. Run once IK Rigger's own drivers are gone."""
    messages: list[str] = [
        warning(f"'{bone.name}''s B-Bone {end} handle was '{handle.name}', which IK Rigger made and removed: it has "
                "none now; give it another bone")
        for bone in obj.data.bones if bone.name not in made
        for end, handle in (("start", bone.bbone_custom_handle_start), ("end", bone.bbone_custom_handle_end))
        if handle is not None and handle.name in made]
    paths = {f'pose.bones["{records.quoted(name)}"]': name for name in made}
    for owner in (obj, obj.data, *bpy.data.shape_keys):
        data = getattr(owner, "animation_data", None)
        for curve in data.drivers if data is not None else ():
            read = {target.bone_target if variable.type != "SINGLE_PROP"
                    else paths.get(target.data_path.partition("]")[0] + "]", "")
                    for variable in curve.driver.variables for target in variable.targets if target.id == obj}
            for name in sorted(read & made):
                messages.append(warning(f"your driver of '{curve.data_path}' on '{owner.name}' reads '{name}', which "
                                        "IK Rigger made and removed: point it at another bone"))
    return messages


def remove_empty_collections(obj: bpy.types.Object) -> None:
    rig = obj.ik_rigger
    armature = obj.data
    for attribute in ("controls_collection", "mechanism_collection"):
        collection = armature.collections_all.get(getattr(rig, attribute))
        if collection is not None and not collection.bones and not collection.children:
            armature.collections.remove(collection)
            setattr(rig, attribute, "")
