"""The chain: which bones the limb is made of, and the options that shape the whole limb.

``core.plan`` reads the chain from these options before any part plans (the bones
ending at the chosen one, the extremity below them, the side they bend to, pre-bends
and orientation fixes); this part declares them, and draws the chain's IK/FK switch.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.checks import MAX_CHAIN_BONES
from ..core.geometry import AXES
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
                               maximum=MAX_CHAIN_BONES, soft_maximum=16, panel="basic", clamp=False)
    extremity_mode: str = option("AUTO", "Extremity", "The foot or hand that stays planted with the handle",
                                 items=EXTREMITY_MODE_ITEMS, panel="basic")
    extremity_name: str = option("", "Extremity Bone", "The extremity when set to Bone", panel="basic",
                                 shown_when=("extremity_mode", "BONE"), bone=True,
                                 old_names=("extremity",))
    animation: str = option("BAKE", "Animation", "What happens to motion already on the chain, its parents or the "
                            "extremity", items=ANIMATION_ITEMS, panel="basic")
    bend_direction: str = option("AUTO", "Bend Direction", "Side a straight chain bends to (a bent chain bends the "
                                 "way it already does)", items=BEND_DIRECTION_ITEMS)
    prebend_straight: bool = option(True, "Pre-bend Straight Chains", "Bow a perfectly straight chain by 1 degree, "
                                    "ends fixed, so IK can bend it")
    fix_orientation: bool = option(
        False, "Fix Bone Orientation", "Point the chain bones' tails at the next joint (the last one's at the foot "
        "or hand) and roll them so X is the hinge, as imported bones often need; the mesh stays where it is at "
        "rest, and motion on them is keyed anew so it plays the same; any other pose of those bones turns "
        "them differently")
    shapes: bool = option(True, "Bone Shapes", "Give the controls custom shapes (a ring for the handle, a diamond "
                          "for the pole, sized to the limb), kept in one hidden collection shared by every rig in "
                          "the file")


def plan(draft: Draft) -> None:
    """Nothing to add: ``core.plan`` read the chain from these options before the parts plan."""


PART = Part("chain", Options, plan)
