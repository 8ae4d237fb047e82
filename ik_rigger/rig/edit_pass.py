"""The build's bone stage (Edit mode), and the edit-bone helpers other tools share.

Creates handles, poles and clones, or moves a rebuilt limb's own in place (they keep their
names, keys and custom properties); pre-bends straight chains; deletes the made bones a
rebuild no longer wants. Each change is logged in the build's ``Journal``, which makes
the bones again as they were on a rollback.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence

import bpy

from ..core import naming
from ..core.model import NewBone
from ..limb.plan import LimbPlan
from . import records
from .journal import Journal
from .records import Rebuilt

# From how many limbs a build indexes the edit bones by name (``bone_stage``): a look-up walks about
# half the bones, indexing them costs about twenty walks, and each limb looks up about three.
_INDEXED_FROM = 8


def _edit_state(bone: bpy.types.EditBone) -> dict:
    """What the build may change on an edit bone, to give it back."""
    mark = bone.get(records.MARK)
    return {
        "head": bone.head.copy(), "tail": bone.tail.copy(), "roll": bone.roll,
        "parent": bone.parent.name if bone.parent else None, "use_connect": bone.use_connect,
        "use_deform": bone.use_deform, "palette": bone.color.palette,
        "collections": [collection.name for collection in bone.collections],
        "mark": mark.to_dict() if hasattr(mark, "to_dict") else mark,  # a group in records of version 1
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


def _new_bones(journal: Journal, edit_bones, names: Sequence[str]) -> dict[str, bpy.types.EditBone]:
    """Edit mode: new bones named exactly ``names``, logged (by one undo for them all) so a rollback
    deletes them."""
    made_names: list[str] = []
    journal.edit(lambda bones: [bones.remove(bones[made]) for made in reversed(made_names) if made in bones])
    made = {}
    for name in names:
        bone = made[name] = edit_bones.new(name)
        made_names.append(bone.name)
        if made_names[-1] != name:
            # Names are planned unique and within Blender's limit: a difference is a bug.
            raise RuntimeError(f"Blender named the new bone '{made_names[-1]}' instead of '{name}'")
    return made


def _new_uids(obj: bpy.types.Object, journal: Journal, count: int) -> list[str]:
    """``count`` limb uids no limb has, taken at once (the record's next number read and written once)."""
    rig = obj.ik_rigger
    if not count:
        return []
    taken = {limb.uid for limb in rig.limbs}
    before = number = rig.next_uid
    uids = []
    for _ in range(count):
        while str(number) in taken:
            number += 1
        uids.append(str(number))
        number += 1
    rig.next_uid = number
    journal.data(lambda: setattr(obj.ik_rigger, "next_uid", before))
    return uids


def make_bones(journal: Journal, edit_bones, planned: Sequence[NewBone]) -> dict[str, bpy.types.EditBone]:
    """Edit mode: new bones for ``planned`` (all of a build's limbs at once), at their heads and tails,
    non-deforming, hidden and unselectable as planned.

    Setting an edit bone's head or tail one by one runs Blender's update for it, which looks along
    every edit bone for connected children: on a large armature that is most of a bone's cost, and
    a build's bones times the armature's. A new bone has no children yet, so the heads and tails are
    written as two columns of the whole armature (``foreach_set``); the bones already there get their
    own values back, exactly (read in the same single precision Blender keeps them in).
    """
    start = len(edit_bones)
    made = _new_bones(journal, edit_bones, [new.name for new in planned])
    if not made:
        return made
    count = start + len(planned)  # Blender appends each new bone at the end of the list, in order
    if len(edit_bones) != count or edit_bones[count - 1] != made[planned[-1].name]:  # else bone by bone
        for new in planned:
            bone = made[new.name]
            bone.head, bone.tail = new.head, new.tail
            bone.use_deform = False
            if new.hidden:
                bone.hide = True
            if not new.selectable:
                bone.hide_select = True
        return made
    for attribute in ("head", "tail"):
        column = array("f", bytes(12 * count))
        edit_bones.foreach_get(attribute, column)
        column[3 * start:] = array("f", [value for new in planned for value in getattr(new, attribute)])
        edit_bones.foreach_set(attribute, column)
    # Blender makes a bone deforming, and setting the flag bone by bone updates the armature each time (what
    # leaving Edit mode does once): a column costs less from a few bones on. The few hidden and unselectable
    # ones cost less one by one.
    deform = array("b", bytes(count))
    edit_bones.foreach_get("use_deform", deform)
    deform[start:] = array("b", bytes(len(planned)))
    edit_bones.foreach_set("use_deform", deform)
    for new in planned:
        if new.hidden:
            made[new.name].hide = True
        if not new.selectable:
            made[new.name].hide_select = True
    return made


def place_made_bones(obj: bpy.types.Object, planned: Sequence[NewBone], uid: str, reused: set[str],
                     journal: Journal, collections: dict[str, bpy.types.BoneCollection] | None = None,
                     known: dict[str, bpy.types.EditBone] | None = None,
                     made_already: dict[str, bpy.types.EditBone] | None = None,
                     soloed: Sequence[bpy.types.BoneCollection] | None = None) -> dict[str, bpy.types.EditBone]:
    """Edit mode: the planned bones as they should be: made, or (those in ``reused``) a rebuilt
    rig's own moved in place; non-deforming, in IK Rigger's collection for their role, marked
    with their rig's ``uid`` and role, then parented, and those planned to take another bone's roll
    (``roll_like``) given it. Returns them by name. ``collections`` keeps
    IK Rigger's bone collections by name across the calls of one build; ``known``, the armature's
    edit bones by name when the build indexed them (``bone_stage``); ``made_already``, the new
    bones ``make_bones`` made and placed for the whole build (else they are made here); ``soloed``, the
    user's soloed collections the controls also go in (``soloed_beside``), when the build read them."""
    armature = obj.data
    edit_bones = armature.edit_bones
    if collections is None:
        collections = {}
    if made_already is None:
        made_already = make_bones(journal, edit_bones, [new for new in planned if new.name not in reused])
    placed: dict[str, bpy.types.EditBone] = {}  # edit bones are found by name one by one: keep them
    # A bone that takes another's roll (``roll_like``) gets no roll of its own first, unless a bone here
    # takes its roll in turn.
    copied = {new.roll_like for new in planned}
    for new in planned:
        made = new.name not in reused
        # A control the user sees and keeps keeps the collections and colour they gave it (``_users_looks``).
        users = False
        if made:
            # Blender makes a bone unconnected, shown, of the default colour and in no collection:
            # only what differs is set.
            bone = made_already[new.name]
        else:
            bone = _find(edit_bones, known, new.name)
            log_bone(journal, armature, bone)
            bone.use_connect = False
            users = _users_looks(new, bone)
            if not users:
                for collection in list(bone.collections):
                    collection.unassign(bone)
            bone.head = new.head
            bone.tail = new.tail
        if new.roll_like is None or new.name in copied:
            bone.align_roll(new.z_axis)
        if not made:  # ``make_bones`` makes a bone non-deforming, hidden and unselectable as planned
            bone.use_deform = False
            bone.hide = new.hidden
            bone.hide_select = not new.selectable
        if not users and (not made or new.palette != "DEFAULT"):
            bone.color.palette = new.palette
        if not users:
            _assign(obj, bone, new.collection, collections, journal)
            if new.collection == naming.COLLECTION_CONTROLS:
                if soloed is None:
                    soloed = soloed_beside(obj, collections[new.collection])
                for collection in soloed:
                    collection.assign(bone)
        records.mark(bone, uid, new.role)
        placed[new.name] = bone
    for new in planned:
        if new.parent is not None:
            placed[new.name].parent = placed.get(new.parent) or _find(edit_bones, known, new.parent)
        elif new.name in reused:
            placed[new.name].parent = None
    for new in planned:
        if new.roll_like is not None:
            placed[new.name].roll = (placed.get(new.roll_like) or _find(edit_bones, known, new.roll_like)).roll
    return placed


def _assign(obj: bpy.types.Object, bone: bpy.types.EditBone, wanted: str,
            collections: dict[str, bpy.types.BoneCollection], journal: Journal) -> None:
    """Edit mode: put ``bone`` in IK Rigger's collection ``wanted``, made on its first use in the build."""
    if wanted not in collections:
        attribute = "controls_collection" if wanted == naming.COLLECTION_CONTROLS else "mechanism_collection"
        collections[wanted] = bone_collection(obj, attribute, wanted, journal)
    collections[wanted].assign(bone)


def _users_looks(new: NewBone, bone: bpy.types.EditBone) -> bool:
    """Whether a rebuild keeps a control's bone collections and colour as they are: a control the animator
    sees (planned in IK Controls) that is in a collection at all. They may have moved it into a collection
    of their own, or into both, and coloured it, as a rig generator's regeneration is expected to keep on
    the controls; a control in none (IK Controls deleted) goes where a build puts it, as a new one does."""
    return new.collection == naming.COLLECTION_CONTROLS and len(bone.collections) > 0


def _find(edit_bones, known: dict[str, bpy.types.EditBone] | None, name: str) -> bpy.types.EditBone:
    """The edit bone ``name``, from the build's index when it has one (``bone_stage``)."""
    bone = known.get(name) if known is not None else None
    return bone if bone is not None else edit_bones[name]


def bone_collection(obj: bpy.types.Object, attribute: str, wanted: str, journal: Journal) -> bpy.types.BoneCollection:
    """Edit mode: IK Rigger's own bone collection for one role, made on first use."""
    rig = obj.ik_rigger
    armature = obj.data
    existing = _recorded_collection(obj, attribute)
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


def _recorded_collection(obj: bpy.types.Object, attribute: str) -> bpy.types.BoneCollection | None:
    """IK Rigger's bone collection the rig records in ``attribute``, if there is one of that name."""
    name = getattr(obj.ik_rigger, attribute)
    return obj.data.collections_all.get(name) if name else None


def solo_note(obj: bpy.types.Object) -> str | None:
    """The note a build gives where the controls go in the user's soloed collections too (``soloed_beside``)."""
    controls = _recorded_collection(obj, "controls_collection")
    soloed = soloed_beside(obj, controls)
    if not soloed:
        return None
    names = " and ".join(f"'{collection.name}'" for collection in soloed)
    many = len(soloed) > 1
    shown = controls.name if controls is not None else naming.COLLECTION_CONTROLS
    return (f"the controls are also in your soloed bone collection{'s' if many else ''} {names}, so they show "
            f"while {'they are' if many else 'it is'} soloed (and in '{shown}' otherwise); they leave "
            f"{'them' if many else 'it'} with the limb")


def soloed_beside(obj: bpy.types.Object, controls: bpy.types.BoneCollection | None) -> list[bpy.types.BoneCollection]:
    """The user's soloed bone collections the controls (their collection ``controls``, None before the first
    build) also go in, so they show: Blender shows only soloed collections once one is. Soloing the
    controls' own collection instead would outlast the user's solo and hide everything else once they turn
    theirs off; a driver soloing it only while theirs is would read the armature's data from its own data,
    a cycle Blender's dependency graph reports. In theirs, the controls show as long as theirs does, and
    leave with the controls."""
    if controls is not None and controls.is_solo:
        return []
    ours = {obj.ik_rigger.controls_collection, obj.ik_rigger.mechanism_collection} - {""}
    return [collection for collection in obj.data.collections_all
            if collection.is_solo and collection.name not in ours and collection.is_editable]


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


def bone_stage(obj: bpy.types.Object, plans: list[LimbPlan], rebuilt: dict[int, Rebuilt],
                doomed: dict[str, Callable[[], None]],
                journal: Journal) -> tuple[list[str], dict, dict[int, list[str]]]:
    """Edit mode: the bone stage.

    Returns each plan's limb uid, the original rest of every pre-bent bone and notes per plan.
    """
    if obj.mode != "EDIT":
        # Outside Edit mode the edit bones are a stale copy Blender drops on the next mode switch.
        raise RuntimeError(f"internal error: the bone stage runs in Edit mode, and '{obj.name}' is in "
                           f"{obj.mode} mode")
    armature = obj.data
    edit_bones = armature.edit_bones
    originals = {name: (head, tail, roll) for entry in rebuilt.values() for name, head, tail, roll in entry.prebent}
    uids = []
    notes: dict[int, list[str]] = {}
    collections: dict[str, bpy.types.BoneCollection] = {}
    # Blender finds an edit bone by name along the list of all of them: each limb's few look-ups of
    # the armature's bones (its parents, a roll to copy) would grow with the armature, and many limbs
    # (a creature's hundreds of legs) with its square. Those index the bones once.
    known = {bone.name: bone for bone in edit_bones} if len(plans) >= _INDEXED_FROM else None
    reuses = [set(rebuilt[index].parts.made.values()) if index in rebuilt else set() for index in range(len(plans))]
    made = make_bones(journal, edit_bones, [new for limb_plan, reused in zip(plans, reuses)
                                            for new in limb_plan.new_bones if new.name not in reused])
    if known is not None:
        known.update(made)
    # Read once for every limb: the controls' collection made by the first is neither soloed nor the user's.
    soloed = soloed_beside(obj, _recorded_collection(obj, "controls_collection"))
    new_uids = iter(_new_uids(obj, journal, len(plans) - len(rebuilt)))
    for index, limb_plan in enumerate(plans):
        entry = rebuilt.get(index)
        uid = entry.uid if entry is not None else next(new_uids)
        uids.append(uid)
        reused = reuses[index]
        place_made_bones(obj, limb_plan.new_bones, uid, reused, journal, collections, known, made, soloed)
        unwanted = reused - {new.name for new in limb_plan.new_bones}
        if unwanted:
            for bone in edit_bones:
                if bone.name in unwanted or (bone.parent is not None and bone.parent.name in unwanted):
                    log_bone(journal, armature, bone)
            notes.setdefault(index, []).extend(reparent_children(edit_bones, unwanted))
            _aim_off(obj, limb_plan, entry, unwanted, journal)
            for name in unwanted:
                _drop_drivers(obj, name)  # its constraints go with it; their drivers would stay, invalid
                edit_bones.remove(_find(edit_bones, known, name))
                if known is not None:
                    known.pop(name, None)
                journal.after_bones(doomed[name])
        _prebend(journal, armature, limb_plan, originals)
    return uids, originals, notes


def _aim_off(obj: bpy.types.Object, limb_plan: LimbPlan, entry: Rebuilt, unwanted: set[str],
             journal: Journal) -> None:
    """The limb's constraints that aim at a bone the rebuild deletes (the IK at a stretch target
    dropped) aim where the plan has them aim, before the bone goes: Blender would otherwise report a
    failed relation on leaving Edit mode. The pose pass then sets them up as planned."""
    planned = {(plan.owner, plan.name): plan for plan in limb_plan.constraints}
    pose_bones = obj.pose.bones
    for owner, name in entry.parts.constraints:
        if owner in unwanted:
            continue  # it goes with its bone
        constraint = pose_bones[owner].constraints[name]
        for attribute in ("subtarget", "pole_subtarget"):
            before = getattr(constraint, attribute, None)
            if before not in unwanted:
                continue
            plan = planned.get((owner, name))
            setattr(constraint, attribute, (getattr(plan, attribute) if plan is not None else None) or "")
            journal.data(lambda owner=owner, name=name, attribute=attribute, before=before: setattr(
                obj.pose.bones[owner].constraints[name], attribute, before))


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
