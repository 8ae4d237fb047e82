"""Find what IK Rigger made for a limb, whatever the user renamed since.

A limb's record (``props.IKRIG_PG_limb``) remembers names, and names go stale when
the user renames a bone. So everything IK Rigger makes carries data that moves with
a rename, and the record's names are only a cache:

- each made bone has the ID property ``_ik_rigger`` = ``"uid:role"`` on its ``Bone`` (hidden
  in the UI by the underscore; records of version 1 wrote ``{"limb": uid, "role": role}``);
- each constraint IK Rigger adds aims at one of those bones, of a role its part declares
  for that kind of constraint (the IK constraint its target, the copy constraints the
  clone), or sits on one (a parent socket's), and keeps the name the record lists;
- the chain is the IK constraint's owner and its ``chain_count - 1`` parents, the
  extremity the owner of the copy constraints.

The IK/FK switch is the custom property ``ik_fk`` on the handle's pose bone, read by
drivers on the constraints' influence, so a rig plays where IK Rigger is not installed.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # type: ignore[attr-defined]

import bpy

from .. import parts as limb_parts
from ..core import geometry
from ..core.errors import RigError
from ..core.model import PropertyPlan, quick_init
from ..core.switches import is_number, number
from ..limb.options import renamed_bones
from ..parts.clone import ROLE_CLONE
from ..parts.handle import IK_FK, IK_FK_DESCRIPTION, ROLE_HANDLE
from ..parts.ik import IK_WEIGHT, IK_WEIGHT_DESCRIPTION
from ..parts.pole import ROLE_POLE
from ..parts.stretch import STRETCH, STRETCH_DESCRIPTION
from .animation import action_frame, existing_fcurve, fcurve_owners
from .chain_now import find_chain
from .named_now import renamed_in_options

MARK = "_ik_rigger"
# The version of the records and rig layout this code writes. 0: records from IK Rigger
# 0.1, whose IK/FK blend lived on the record and worked only with the add-on installed.
# 1: IK Rigger 0.2, a limb's chain, made bones and constraints in collections of groups and
# each bone's mark a group. 2: those in one JSON string each: Blender copies every stored
# property of the object on each update of its pose (a handle dragged), so the record stays
# a few values (three per made bone cost the rig a tenth of its update time).
RECORD_VERSION = 2

# Every role of a made bone, part by part (the parts also say which made bone each kind of
# constraint they add aims at, which is how those constraints are known after renames).
ROLES = limb_parts.roles()
_ROLE_ATTRIBUTE = {ROLE_HANDLE: "handle", ROLE_POLE: "pole", ROLE_CLONE: "clone"}
# Constraint type -> the roles IK Rigger's constraints of that type aim at, read once.
_AIMS = {kind: frozenset(roles) for kind, roles in limb_parts.targets().items()}


def quoted(name: str) -> str:
    """``name`` escaped for an RNA path between double quotes."""
    return bpy.utils.escape_identifier(name)


def ik_fk_path(handle: str) -> str:
    """The RNA path, from the armature object, of a limb's IK/FK switch."""
    return f'pose.bones["{quoted(handle)}"]["{IK_FK}"]'


def mark(bone: bpy.types.Bone | bpy.types.EditBone, uid: str, role: str) -> None:
    """Tag a bone IK Rigger made with its limb and role."""
    bone[MARK] = f"{uid}:{role}"


def marker(bone: bpy.types.Bone | bpy.types.EditBone) -> tuple[str, str] | None:
    """The (limb uid, role) a made bone carries, None for the user's bones."""
    value = bone.get(MARK)
    if isinstance(value, str):
        uid, colon, role = value.partition(":")
        return (uid, role) if colon and uid and role else None
    try:  # a record of version 1
        return str(value["limb"]), str(value["role"])
    except (KeyError, TypeError):
        return None


@quick_init  # one per limb a build writes
@dataclass(frozen=True)
class Inventory:
    """What a limb's record lists, as last seen: its chain (root first), the bones made for it
    as (name, role), and its constraints as (owner bone, constraint name)."""

    chain: tuple[str, ...] = ()
    made: tuple[tuple[str, str], ...] = ()
    constraints: tuple[tuple[str, str], ...] = ()


def inventory(limb) -> Inventory:
    """A limb record's inventory, from its one JSON value or, in a record of version 1, its collections."""
    if limb.inventory:
        try:
            stored = json.loads(limb.inventory)
            return Inventory(tuple(stored["chain"]), tuple((name, role) for name, role in stored["made"]),
                             tuple((owner, name) for owner, name in stored["constraints"]))
        except (ValueError, KeyError, TypeError):
            pass  # edited by hand into something else: read as empty, the made bones' marks still find them
    return Inventory(tuple(item.name for item in limb.chain), tuple((item.name, item.role) for item in limb.made_bones),
                     tuple((item.name, item.constraint) for item in limb.constraints))


def store_inventory(limb, listed: Inventory, fresh: bool = False) -> None:
    """Write a limb record's inventory, when it changed, as one value; a record of version 1 drops its
    collections for it. ``fresh``: the record was just made, empty, so nothing need be read."""
    text = _inventory_text(listed)
    if fresh:
        limb.inventory = text
        return
    if limb.inventory != text:
        limb.inventory = text
    for legacy in _LEGACY_COLLECTIONS:
        if limb.is_property_set(legacy):
            limb.property_unset(legacy)


def _inventory_text(listed: Inventory) -> str:
    """``json.dumps`` of the inventory (``ensure_ascii=False``), written out: its layout is fixed, and
    the standard encoder, set up anew on each call, costs a build of many limbs several times more."""
    quote = encode_basestring
    made = ", ".join([f"[{quote(name)}, {quote(role)}]" for name, role in listed.made])
    constraints = ", ".join([f"[{quote(owner)}, {quote(name)}]" for owner, name in listed.constraints])
    return f'{{"chain": [{", ".join(map(quote, listed.chain))}], "made": [{made}], "constraints": [{constraints}]}}'


# The collections a record of version 1 listed its inventory in.
_LEGACY_COLLECTIONS = ("chain", "made_bones", "constraints")


@dataclass
class Parts:
    """Where a limb's pieces are now: current names, and what is gone."""

    made: dict[str, str] = field(default_factory=dict)  # role -> current bone name
    chain: list[str] = field(default_factory=list)
    extremity: str | None = None
    constraints: list[tuple[str, str]] = field(default_factory=list)  # (owner bone, constraint name)
    missing: list[str] = field(default_factory=list)
    # The hidden chain IK solves where the chain's bones do not run joint to joint (parts.hidden), root
    # first; empty where IK runs on the chain itself.
    solver: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)  # the recorded chain bones deleted by hand
    # A bone standing where a gone chain bone stood, which may be it renamed and moved (chain_now._stand_in).
    stand_in: str | None = None

    @property
    def handle(self) -> str | None:
        return self.made.get(ROLE_HANDLE)

    @property
    def pole(self) -> str | None:
        return self.made.get(ROLE_POLE)

    @property
    def clone(self) -> str | None:
        return self.made.get(ROLE_CLONE)

    def bones(self) -> set[str]:
        """Every bone the limb involves now: chain, made bones, and the user's bones its
        constraints move (the extremity, a foot roll's toe)."""
        names = set(self.chain) | set(self.made.values()) | {owner for owner, _ in self.constraints}
        if self.extremity:
            names.add(self.extremity)
        return names


@dataclass
class Rebuilt:
    """A limb being rebuilt: its record and what it has now."""

    index: int
    uid: str
    parts: Parts
    prebent: list[tuple[str, tuple[float, ...], tuple[float, ...], float]] = field(default_factory=list)


def _marked_bones(obj: bpy.types.Object) -> dict[str, dict[str, list[str]]]:
    """Every bone carrying a mark: limb uid -> role -> names, in the armature's order (one pass over
    the bones). A role has more than one bone where the user duplicated a made bone (Shift+D copies
    its mark): only one of them is the limb's (``_made_of``)."""
    found: dict[str, dict[str, list[str]]] = {}
    for bone in obj.data.bones:
        tag = marker(bone)
        if tag is not None:
            found.setdefault(tag[0], {}).setdefault(tag[1], []).append(bone.name)
    return found


def _made_of(marked: dict[str, list[str]], recorded: dict[str, str]) -> dict[str, str]:
    """Role -> the limb's own bone among those marked with it: the name the record lists, else the
    first in the armature's order (Blender puts a duplicate after the bone it copies); the other
    bones marked alike are the user's copies."""
    return {role: recorded[role] if recorded.get(role) in names else names[0] for role, names in marked.items()}


def _recorded_made(limb) -> dict[str, str]:
    """Role -> name of the made bones as the record last saw them."""
    made = {role: name for name, role in inventory(limb).made}
    made.update((role, getattr(limb, attribute)) for role, attribute in _ROLE_ATTRIBUTE.items()
                if getattr(limb, attribute))
    return made


def _find_made(obj: bpy.types.Object, limb) -> dict[str, str]:
    """Role -> current name of the limb's made bones that exist."""
    bones = obj.data.bones
    recorded = _recorded_made(limb)
    if not limb.uid:
        # A record from before markers: names are all there is.
        return {role: name for role, name in recorded.items() if name in bones}
    made = {}
    for role, name in recorded.items():
        bone = bones.get(name)
        if bone is None or marker(bone) != (limb.uid, role):
            break
        made[role] = name
    else:
        return made
    return _made_of(_marked_bones(obj).get(limb.uid, {}), recorded)


def _is_ours(constraint: bpy.types.Constraint, obj: bpy.types.Object, targets: dict[str, set[str]],
             owner: str, aims: dict[str, frozenset[str]]) -> bool:
    """A constraint the record lists is IK Rigger's when it aims at one of the limb's made bones of a
    role its kind aims at (``aims``), or sits on a made bone (a parent socket's Armature constraints
    aim at the user's bones)."""
    if any(owner in names for names in targets.values()):
        return True
    if getattr(constraint, "target", None) != obj:
        return False
    # Looked up from the limb's few made bones: a hidden chain's kinds aim at a role per chain bone.
    aimed, subtarget = aims.get(constraint.type, frozenset()), constraint.subtarget
    return any(subtarget in names for role, names in targets.items() if role in aimed)


def _find_constraints(obj: bpy.types.Object, limb, made: dict[str, str]) -> list[tuple[str, str]]:
    """(owner, name) of the limb's own constraints that still exist."""
    # A constraint still aims at the name of a deleted made bone: match that too.
    recorded = _recorded_made(limb)
    targets = {role: {name for name in (made.get(role), recorded.get(role)) if name} for role in {*made, *recorded}}
    aims = _AIMS
    listed = inventory(limb).constraints
    names = {name for _, name in listed}
    pose_bones = obj.pose.bones
    found = []
    for owner, name in listed:
        pose_bone = pose_bones.get(owner)
        constraint = pose_bone.constraints.get(name) if pose_bone is not None else None
        if constraint is None or not _is_ours(constraint, obj, targets, owner, aims):
            break
        found.append((owner, name))
    else:
        return found
    # An owner was renamed: look for the recorded constraints on every bone.
    return [(pose_bone.name, constraint.name) for pose_bone in pose_bones for constraint in pose_bone.constraints
            if constraint.name in names and _is_ours(constraint, obj, targets, pose_bone.name, aims)]


def made_by_limbs(obj: bpy.types.Object) -> set[str]:
    """The names of every bone IK Rigger's limbs on ``obj`` made, as they are now (reads only)."""
    return {name for limb in obj.ik_rigger.limbs for name in resolve(obj, limb).made.values()}


def resolve(obj: bpy.types.Object, limb) -> Parts:
    """The limb's pieces as they are now, after whatever renames and deletions (reads only)."""
    bones = obj.data.bones
    made = _find_made(obj, limb)
    parts = Parts(made=made, constraints=_find_constraints(obj, limb, made))
    for role, name in _recorded_made(limb).items():
        if role not in made:
            parts.missing.append(f"the {role.lower()} bone '{name}'")
    pose_bones = obj.pose.bones
    ik_owner = next((owner for owner, name in parts.constraints
                     if pose_bones[owner].constraints[name].type == "IK"), None)
    count = 0 if ik_owner is None else pose_bones[ik_owner].constraints[
        next(name for owner, name in parts.constraints if owner == ik_owner)].chain_count
    find_chain(obj, parts, ik_owner, count, inventory(limb).chain, limb.name,
               ik_owner is not None and marker(bones[ik_owner]) is not None)
    clones = {name for name in (made.get(ROLE_CLONE), _recorded_made(limb).get(ROLE_CLONE)) if name}
    copy_owner = next((owner for owner, name in parts.constraints
                       if pose_bones[owner].constraints[name].type != "IK"
                       and getattr(pose_bones[owner].constraints[name], "subtarget", None) in clones), None)
    if copy_owner is not None:
        parts.extremity = copy_owner
    elif limb.extremity and limb.extremity in bones:
        parts.extremity = limb.extremity
    return parts


def refresh(obj: bpy.types.Object) -> None:
    """Bring every record's names up to date with the armature (after renames).

    Writes only what changed; called by operators and the build, never in ``draw``.
    """
    for limb in obj.ik_rigger.limbs:
        parts = resolve(obj, limb)
        _update_names(limb, parts, renamed_in_options(obj, limb, parts))  # a new dict: the renames join it


def _update_names(limb, parts: Parts, renamed: dict[str, str]) -> None:
    listed = inventory(limb)
    recorded_chain = list(listed.chain)
    chain, made, constraints = listed.chain, listed.made, listed.constraints
    if len(parts.chain) == len(recorded_chain) and parts.chain != recorded_chain:
        renamed.update(zip(recorded_chain, parts.chain))
        chain = tuple(parts.chain)
        for collection in (limb.prebent, limb.chain_states):
            for item in collection:
                if item.name in renamed:
                    item.name = renamed[item.name]
    for role, attribute in _ROLE_ATTRIBUTE.items():
        name = parts.made.get(role)
        if name and getattr(limb, attribute) != name:
            setattr(limb, attribute, name)
    made = tuple((parts.made.get(role) or name, role) for name, role in made)
    if parts.extremity and limb.extremity != parts.extremity:
        if limb.extremity:
            renamed[limb.extremity] = parts.extremity
        limb.extremity = parts.extremity
    if renamed:  # the options that name a renamed bone (an extremity or a handle parent named by hand) follow it
        limb.set_options(renamed_bones(limb.to_options(), renamed.get))
    if parts.constraints and set(parts.constraints) != set(constraints) and len(parts.constraints) == len(
            set(constraints)):
        constraints = tuple(parts.constraints)
    updated = Inventory(chain, made, constraints)
    if updated != listed:
        store_inventory(limb, updated)
    if parts.chain and limb.name != parts.chain[-1] and len(parts.chain) == len(recorded_chain):
        limb.name = parts.chain[-1]


def limb_named(obj: bpy.types.Object, name: str):
    """The limb that uses the bone ``name``, else the limb of that name, if any."""
    return limb_of(obj, name) or (obj.ik_rigger.limbs.get(name) if isinstance(name, str) else None)


def limb_of(obj: bpy.types.Object, bone: str):
    """The limb that uses ``bone`` in any role, if any (reads only: safe in ``poll``)."""
    if not isinstance(bone, str):  # a script's None: Blender's lookup raises a SystemError for it
        return None
    rig = obj.ik_rigger
    data_bone = obj.data.bones.get(bone)
    tag = marker(data_bone) if data_bone is not None else None
    if tag is not None:
        for limb in rig.limbs:
            if limb.uid == tag[0] and _own(obj, limb, tag[1], bone):
                return limb
    for limb in rig.limbs:
        if bone in limb.bones():
            return limb
    if data_bone is None:
        return None
    # Renamed since the records were last brought up to date.
    for limb in rig.limbs:
        if bone in resolve(obj, limb).bones():
            return limb
    return None


def _own(obj: bpy.types.Object, limb, role: str, bone: str) -> bool:
    """Whether ``bone``, marked as the limb's ``role``, is the limb's own: not a copy the user made of it."""
    attribute = _ROLE_ATTRIBUTE.get(role)
    if attribute is not None and getattr(limb, attribute) == bone:
        return True
    return _recorded_made(limb).get(role) == bone or resolve(obj, limb).made.get(role) == bone


def constraints_of(obj: bpy.types.Object, parts: Parts) -> Iterator[tuple[bpy.types.PoseBone, bpy.types.Constraint]]:
    """The limb's own constraints with the pose bone owning each."""
    for owner, name in parts.constraints:
        pose_bone = obj.pose.bones[owner]
        yield pose_bone, pose_bone.constraints[name]


def ik_constraint(obj: bpy.types.Object, parts: Parts) -> bpy.types.Constraint | None:
    """The limb's IK constraint (the one reaching for the handle, not an iTaSC Distance), if it still exists."""
    return next((constraint for _, constraint in constraints_of(obj, parts)
                 if constraint.type == "IK" and constraint.ik_type == "COPY_POSE"), None)


def require(obj: bpy.types.Object, limb, *roles: str, ik: bool = False, every: bool = False,
            spared: Collection[str] = ()) -> Parts:
    """The limb's parts, refusing with what to do when a needed piece is gone (``every``: any made bone
    the limb recorded but those of the roles ``spared``, for what puts the IK controls on a pose and needs
    the IK to play it)."""
    parts = resolve(obj, limb)
    recorded = _recorded_made(limb)
    wanted = [role for role in recorded if role not in spared] if every else roles
    gone = [f"the {role.lower().replace('_', ' ')}" for role in wanted if role not in parts.made and recorded.get(role)]
    if ik and ik_constraint(obj, parts) is None:
        gone.append("the IK constraint")
    if len(parts.chain) < 2:
        gone.append("the chain bones")
    if gone:
        verb = "exists" if len(gone) == 1 else "exist"
        raise RigError(f"{' and '.join(gone)} of this limb no longer {verb} (deleted by hand)", bone=limb.name,
                       hint="Rebuild the limb to make them again, or remove it.")
    return parts


def ensure_property(obj: bpy.types.Object, planned: PropertyPlan, fresh: bool = False,
                    pose_bone: bpy.types.PoseBone | None = None) -> bool:
    """Give the made bone's pose bone the planned custom property, if it has none yet (a rebuild keeps
    the value and keys it has, with the range brought up to date); returns whether it was added.
    ``fresh``: the bone was just made, so it has none; ``pose_bone``: the bone's, when the caller has it."""
    if pose_bone is None:
        pose_bone = obj.pose.bones[planned.bone]
    current = None if fresh else pose_bone.get(planned.key)
    added = current is None
    if current is not None and (not is_number(current) or isinstance(current, int) != planned.integer):
        # A text, a list or a number of the other kind, set by hand: made again, keeping a number's value.
        value = current if is_number(current) else planned.value
        del pose_bone[planned.key]
        pose_bone[planned.key] = int(value) if planned.integer else float(value)
    elif added or (planned.overrides and not _keyed(obj, f'pose.bones["{quoted(planned.bone)}"]["{planned.key}"]')):
        pose_bone[planned.key] = int(planned.value) if planned.integer else float(planned.value)
    ui = pose_bone.id_properties_ui(planned.key)
    if planned.integer:
        ui.update(min=int(planned.minimum), max=int(planned.maximum), soft_min=int(planned.minimum),
                  soft_max=int(planned.maximum), default=int(planned.value), description=planned.description)
    else:
        ui.update(min=planned.minimum, max=planned.maximum, soft_min=planned.minimum, soft_max=planned.maximum,
                  default=planned.value, subtype="FACTOR", description=planned.description)
    # Animators work on a library override of the character: the switch must be theirs to set.
    pose_bone.property_overridable_library_set(f'["{planned.key}"]', True)
    return added


def _keyed(obj: bpy.types.Object, path: str) -> bool:
    """Whether the active action has an F-curve for ``path``."""
    return any(owner.fcurves.find(path) is not None for owner in fcurve_owners(obj))


def ensure_switches(obj: bpy.types.Object, handle: str, value: float = 1.0) -> list[str]:
    """Give the handle's pose bone the limb's switches (``ik_fk``, ``ik_weight``, ``stretch``);
    returns those it added (for rigs from before they were planned with the limb)."""
    return [planned.key for planned in (PropertyPlan(handle, IK_FK, value, 0.0, 1.0, IK_FK_DESCRIPTION),
                                        PropertyPlan(handle, IK_WEIGHT, 1.0, 0.0, 1.0, IK_WEIGHT_DESCRIPTION),
                                        PropertyPlan(handle, STRETCH, 0.0, 0.0, 1.0, STRETCH_DESCRIPTION))
            if obj.pose.bones[handle].get(planned.key) is None and ensure_property(obj, planned)]


def ik_fk(obj: bpy.types.Object, parts: Parts) -> float:
    """The limb's IK/FK switch (1 when the handle is gone)."""
    handle = parts.handle
    if handle is None:
        return 1.0
    return number(obj.pose.bones[handle], IK_FK, 1.0)


def set_ik_fk(obj: bpy.types.Object, parts: Parts, value: float) -> None:
    """Set the limb's IK/FK switch and have the drivers see it at the next update."""
    if parts.handle is None:
        raise RigError("the IK handle of this limb no longer exists", hint="Rebuild the limb.")
    pose_bone = obj.pose.bones[parts.handle]
    if pose_bone.get(IK_FK) is None:  # deleted by hand: made again as the build makes it
        ensure_property(obj, PropertyPlan(parts.handle, IK_FK, value, 0.0, 1.0, IK_FK_DESCRIPTION), pose_bone=pose_bone)
    pose_bone[IK_FK] = float(value)
    # Setting an ID property from Python does not tag the object; the drivers read it.
    obj.update_tag()


def key_ik_fk(obj: bpy.types.Object, parts: Parts, value: float, frame: int) -> None:
    """Switch the limb to ``value`` as a cut at ``frame``: the value the switch had on the frame before
    is keyed there, and ``value`` on ``frame``, both constant, so the frames before play as they did
    (one key alone would blend toward it from the key before, or hold it over the whole shot)."""
    handle = parts.handle
    if handle is None:
        raise RigError("the IK handle of this limb no longer exists", hint="Rebuild the limb.")
    pose_bone = obj.pose.bones[handle]
    path = f'["{IK_FK}"]'
    full_path = f'pose.bones["{quoted(handle)}"]{path}'  # path_from_id refuses it while the switch is missing
    curve = existing_fcurve(obj, full_path)
    before, at = action_frame(obj, frame - 1), action_frame(obj, frame)  # a strip's time, in NLA tweak mode
    pose_bone[IK_FK] = curve.evaluate(before) if curve is not None else ik_fk(obj, parts)
    pose_bone.keyframe_insert(path, frame=frame - 1, group=handle)
    set_ik_fk(obj, parts, value)
    pose_bone.keyframe_insert(path, frame=frame, group=handle)
    curve = existing_fcurve(obj, full_path)
    for point in curve.keyframe_points if curve is not None else ():
        if min(before, at) - 1e-3 <= point.co.x <= max(before, at) + 1e-3:
            point.interpolation = "CONSTANT"


def rest_pole_angle(obj: bpy.types.Object, limb) -> float:
    """The automatic pole angle of a built limb, from its rest skeleton (no mode switch)."""
    bones = obj.data.bones
    solving = resolve(obj, limb).solver  # IK's own chain, where it is hidden
    chain = solving if solving else inventory(limb).chain
    root, last = bones[chain[0]], bones[chain[-1]]
    return geometry.pole_angle(root.head_local, root.tail_local, root.matrix_local.col[0].xyz,
                               last.tail_local, bones[limb.pole].head_local)
