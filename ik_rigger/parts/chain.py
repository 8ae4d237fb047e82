"""The chain: which bones the limb is made of, and the options that shape the whole limb.

``limb.plan`` reads the chain from these options before any part plans (the bones
ending at the chosen one, the extremity below them, the side they bend to). This part
plans first: it fixes the chain bones' orientation and pre-bends a straight chain, as
asked, so every later part plans on the limb as it will be, and keeps each second half
of a split segment in line.
"""

from __future__ import annotations

from dataclasses import dataclass

from mathutils import Vector

from ..core import geometry, orient
from ..core.checks import MAX_CHAIN_BONES
from ..core.geometry import AXES
from ..core.joints import Hinge
from ..core.model import BoneEdit, Skeleton, bending_indexes
from ..core.notes import warning
from .base import Draft, Item, Part, option

EXTREMITY_MODE_ITEMS: tuple[Item, ...] = (
    ("AUTO", "Automatic", "The child of the last chain bone that continues the limb (foot or hand)"),
    ("NONE", "None", "No extremity: no clone and no copy constraint"),
    ("BONE", "Bone", "The bone named below"),
)
ANIMATION_ITEMS: tuple[Item, ...] = (
    ("BAKE", "Bake onto the Controls", "Key the new handle, pole and clone from the motion, so the IK rig plays "
     "the same (nothing happens on an armature without animation)"),
    ("FK", "Leave Playing in FK", "Key the limb's IK/FK to FK, so it plays its own keys as before"),
    ("IGNORE", "Ignore", "Leave the motion alone: the IK overrides the chain's keys"),
)
BEND_DIRECTION_ITEMS: tuple[Item, ...] = (
    ("AUTO", "Automatic", "Knees bend toward the foot, elbows backwards"),
    *((key, ("+" if key.endswith("POS") else "-") + key[0], f"Bend a straight chain toward armature {key[0]} "
       f"{'positive' if key.endswith('POS') else 'negative'}") for key in AXES),
)


@dataclass(frozen=True)
class Options:
    chain_length: int = option(2, "Chain Length", "Bones in the IK chain, ending at the active bone", minimum=2,
                               maximum=MAX_CHAIN_BONES, soft_maximum=16, panel="basic", clamp=False, per_limb=True)
    extremity_mode: str = option("AUTO", "Extremity", "The foot or hand that stays planted with the handle",
                                 items=EXTREMITY_MODE_ITEMS, panel="basic", per_limb=True)
    extremity_name: str = option("", "Extremity Bone", "The extremity when set to Bone", panel="basic",
                                 shown_when=("extremity_mode", "BONE"), bone=True,
                                 old_names=("extremity",))
    animation: str = option("BAKE", "Animation", "What happens to motion already on the chain, its parents or the "
                            "extremity", items=ANIMATION_ITEMS, panel="basic")
    bend_direction: str = option("AUTO", "Bend Direction", "Side a straight chain, or one bent slightly the other "
                                 "way, bends to (a bent chain bends the way it already does)",
                                 items=BEND_DIRECTION_ITEMS, per_limb=True)
    prebend_straight: bool = option(True, "Pre-bend Straight Chains", "Bow a straight chain, or one bent slightly "
                                    "the wrong way, by 1 degree toward the side it should bend to, ends fixed, so "
                                    "IK bends it that way")
    fix_orientation: bool = option(
        False, "Fix Bone Orientation", "Point the chain bones' tails at the next joint (the last one's at the foot "
        "or hand) and roll them so X is the hinge; the mesh stays where it is at rest, and motion on them is keyed "
        "anew so it plays the same; any other pose of those bones, and the drivers reading them (named in a "
        "warning), turn them differently. Off, bones that do not run joint to joint are left as they are and "
        "follow a hidden chain that does")
    shapes: bool = option(True, "Bone Shapes", "Give the controls custom shapes (a ring for the handle, a diamond "
                          "for the pole, sized to the limb), kept in one hidden collection shared by every rig in "
                          "the file")


def plan(draft: Draft) -> None:
    """The chain's own changes: its bones' orientation fixed, a straight chain pre-bent, halves kept in line."""
    chain, joints, original = draft.chain, draft.joints, draft.skeleton
    # Read as straight, though bent slightly the other way (``geometry.bent_against``): left so, it bends its
    # own way, its pole on that side.
    against = geometry.bend_direction(draft.bending_joints) if draft.straight else None
    if against is not None and not draft.options.prebend_straight:
        draft.bend = against
    if draft.halves:  # most chains have none
        draft.notes.extend(
            f"'{name}' is the second half of the segment that '{chain[chain.index(name) - 1]}' begins: IK keeps it "
            "in line (its IK stiffness on X and Z at the most), so the limb bends at its joints" for name in chain
            if name in draft.halves)
        draft.hinges.extend(Hinge.in_line(name) for name in chain if name in draft.halves)
    if draft.options.fix_orientation:
        turned = orient.orientation_edits(original, chain, joints, draft.bend, draft.options.hinge_joints)
        draft.skeleton = orient.applied(original, turned)
        draft.edited.update((name, BoneEdit(name, draft.skeleton[name].head, tail, z_axis))
                            for name, (tail, z_axis) in turned.items())
        held = orient.held(original, chain, joints)
        if held:
            draft.notes.append(f"the bone(s) {', '.join(held)} kept their tail and roll: bones connected to their "
                               "tail would have moved with it")
        if turned:
            draft.notes.append(f"the bone(s) {', '.join(turned)} now point at their next joint, rolled so X is the "
                               "hinge; a pose they hold now turns them differently (motion on them is keyed anew)")
    if draft.hidden:
        # The user's bones stay as they are: the limb is planned on the hidden chain (parts.hidden).
        draft.followed = {name: original[name] for name in chain}
        draft.skeleton = _on_joints(original, chain, joints, draft.bend, draft.options.hinge_joints)
    if draft.straight and draft.options.prebend_straight:
        bending = bending_indexes(chain, draft.halves)
        bent = _carried(joints, geometry.prebent_joints([joints[index] for index in bending], draft.bend), bending)
        if draft.hidden:
            draft.skeleton = _on_joints(original, chain, bent, draft.bend, draft.options.hinge_joints)
        if not draft.hidden or draft.off_hinge:
            # Hidden only for their roll, bones on their joints are pre-bent with the hidden chain: left straight,
            # they would turn about its knee, not theirs, and the foot would miss the handle.
            edits = _prebent_edits(original if draft.hidden else draft.skeleton, chain, joints, bent)
            draft.edited.update((edit.name, edit) for edit in edits)
        was = ("was straight, so IK could not bend it" if against is None else
               f"was bent {geometry.bend_degrees(draft.bending_joints):.1f} degree the other way (toward "
               f"{_axis_words(against)}), so IK would bend it on that way")
        draft.joints, draft.length = bent, geometry.chain_length(bent)
        draft.notes.append(
            f"the chain {chain[0]} > {chain[-1]} {was}; "
            f"{'its hidden chain' if draft.hidden and not draft.off_hinge else 'it'} was pre-bent "
            f"{geometry.PREBEND_DEGREES:g} degree toward {_axis_words(draft.bend)} with its ends kept in place"
        )
    elif draft.straight:
        draft.notes.append(left_straight(chain) if against is None else left_bent_against(chain))
    carried = _body_carried(original, chain, draft.extremity)
    if carried:
        instead = (f"'{chain[-1]}' alone is a leg or arm of one bone, with no knee or elbow for IK to bend"
                   if len(chain) == 2 else f"a Chain Length of {len(chain) - 1} starts the chain below it")
        draft.notes.append(warning(
            f"the chain starts at '{chain[0]}', the armature's root bone, which carries {', '.join(carried)}: to "
            f"reach the handle IK turns the whole character about it ({instead})"))


def _body_carried(skeleton: Skeleton, chain: tuple[str, ...], extremity: str | None) -> list[str]:
    """Where the chain starts at the armature's root bone (no parent: Kenney's mini characters, ``root >
    leg-left``): the bones beside the chain it carries that carry bones of their own (the torso), which IK
    would turn with it. Empty for every chain that starts below the root."""
    first = skeleton[chain[0]]
    if first.parent is not None:
        return []
    limb = {*chain, extremity}
    return [child.name for child in skeleton.children(first.name)
            if child.name not in limb and skeleton.children(child.name)]


def _on_joints(skeleton: Skeleton, chain: tuple[str, ...], joints: list[Vector], bend: Vector,
               hinged: bool) -> Skeleton:
    """The skeleton with the chain bones running from joint to joint, as the hidden chain will (each rolled
    on its joint's own hinge where Hinge Joints lock it)."""
    return skeleton.moved({**skeleton.bones, **orient.joint_bones(skeleton, chain, joints, bend, hinged)})


def left_straight(chain: tuple[str, ...]) -> str:
    """The warning on a straight chain that was not pre-bent."""
    return warning(f"the chain {chain[0]} > {chain[-1]} is straight and was left so; IK may not bend it")


def left_bent_against(chain: tuple[str, ...]) -> str:
    """The warning on a chain bent slightly the other way that was not pre-bent."""
    return warning(f"the chain {chain[0]} > {chain[-1]} is bent slightly the other way from the side it should "
                   "bend to and was left so; IK bends it on that way")


def _carried(joints: list[Vector], moved: list[Vector], bending: list[int]) -> list[Vector]:
    """``joints`` with those at ``bending`` moved to ``moved``, and each joint between two of them
    carried with its segment: turned and stretched as the segment is, so it keeps its place on it."""
    carried = list(joints)
    for (start, stop), (new_start, new_stop) in zip(zip(bending, bending[1:]), zip(moved, moved[1:])):
        span, new_span = joints[stop] - joints[start], new_stop - new_start
        turn = span.rotation_difference(new_span).to_matrix()
        scale = new_span.length / span.length
        for index in range(start, stop):
            carried[index] = new_start + turn @ (joints[index] - joints[start]) * scale
        carried[stop] = new_stop.copy()
    return carried


def _prebent_edits(skeleton: Skeleton, chain: tuple[str, ...], joints: list[Vector],
                   bent: list[Vector]) -> list[BoneEdit]:
    """Each chain bone carried along with its joint-to-joint segment, turned the shortest way.

    The bone turns as a whole: a tail that does not lie on the next joint (as
    importers leave them) keeps its place relative to the segment, and the roll turns
    with it, so the bone's own axes stay what the user and the mesh know. The bone
    stretches as its segment does (by a hair), so a tail on the next joint stays on it.
    """
    edits = []
    for index, name in enumerate(chain):
        bone = skeleton[name]
        turn = geometry.turn_between(joints, bent, index).to_matrix()
        stretch = (bent[index + 1] - bent[index]).length / (joints[index + 1] - joints[index]).length
        head = bent[index]
        edits.append(BoneEdit(name, head, head + turn @ bone.direction * stretch,
                              (turn @ bone.z_axis).normalized()))
    return edits


def _axis_words(direction: Vector) -> str:
    axis = max(range(3), key=lambda i: abs(direction[i]))
    return ("-" if direction[axis] < 0 else "+") + "XYZ"[axis]


PART = Part("chain", Options, plan)
