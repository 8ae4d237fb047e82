"""The build options, each declared once.

``LimbOptions`` is the declaration: every field gives an option's name, type and
default, and its metadata (``option(...)``) the rest: label, description, range,
choices, where the panel shows it. Everything else is derived from it:

- the Blender properties of the build operators, the sidebar's settings and each
  limb's record (``props.LimbSettings``);
- the panel and redo-panel layout (``panel``, ``shown_when``);
- the validation of values from scripts and the batch config (``check``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from .checks import MAX_CHAIN_BONES
from .errors import RigError
from .geometry import AXES

Item = tuple[str, str, str]

COPY_MODE_ITEMS: tuple[Item, ...] = (
    ("ROTATION", "Rotation", "The extremity copies the rotation of its clone (the guide's setup)"),
    ("ROTATION_SCALE", "Rotation and Scale", "The extremity copies rotation and scale, so scaling the handle "
     "scales it"),
    ("TRANSFORMS", "Transforms", "The extremity copies its clone's whole transform"),
)
PARENT_MODE_ITEMS: tuple[Item, ...] = (
    ("AUTO", "Automatic", "The bone above the chain's parent (the guide's Origin); none if there is none"),
    ("NONE", "None", "No parent"),
    ("BONE", "Bone", "The bone named below"),
)
EXTREMITY_MODE_ITEMS: tuple[Item, ...] = (
    ("AUTO", "Automatic", "The child of the last chain bone that continues the limb (foot or hand)"),
    ("NONE", "None", "No extremity: no clone and no copy constraint"),
    ("BONE", "Bone", "The bone named below"),
)
POLE_PARENT_ITEMS: tuple[Item, ...] = (
    ("ORIGIN", "Origin", "The pole follows the handle's parent, so it stays put when the handle moves"),
    ("HANDLE", "Handle", "The pole follows the IK handle, so the knee or elbow turns with the foot or hand"),
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
class Option:
    """What an option's field does not say by itself."""

    label: str
    description: str
    minimum: float | None = None
    maximum: float | None = None
    soft_maximum: float | None = None
    items: tuple[Item, ...] = ()
    subtype: str = "NONE"  # Blender's property subtype: "ANGLE" for angles in radians
    panel: str = "advanced"  # "basic": the Build panel; "advanced": its Advanced sub-panel
    shown_when: tuple[str, object] | None = None  # (option, value): shown only then
    bone: bool = False  # a bone name, picked from the armature's bones
    # Whether Blender's property may clamp to the range. Off where a value past it must be refused
    # with a message, not quietly changed (Blender's IK counts at most 255 bones).
    clamp: bool = True


def option(default: Any, label: str, description: str, **details: Any) -> Any:
    """A ``LimbOptions`` field: its default, and its ``Option`` as metadata."""
    return field(default=default, metadata={"option": Option(label, description, **details)})


@dataclass(frozen=True)
class LimbOptions:
    """What a user can choose for one limb; the defaults are the guide's rig."""

    chain_length: int = option(2, "Chain Length", "Bones in the IK chain, ending at the active bone", minimum=2,
                               maximum=MAX_CHAIN_BONES, soft_maximum=16, panel="basic", clamp=False)
    use_pole: bool = option(True, "Pole Target", "Add a pole target in front of the middle joint", panel="basic")
    pole_parent: str = option("ORIGIN", "Pole Parent", "What the pole target follows", items=POLE_PARENT_ITEMS,
                              panel="basic")
    pole_line: bool = option(True, "Pole Line", "Draw a thin line from the knee or elbow to the pole target, so "
                             "animators see where the pole is", shown_when=("use_pole", True))
    pole_distance: float = option(0.5, "Pole Distance", "How far the pole stands from the middle joint, as a "
                                  "fraction of the chain's length", minimum=0.05, soft_maximum=3.0)
    handle_parent_mode: str = option("AUTO", "Handle Parent", "What the IK handle follows", items=PARENT_MODE_ITEMS)
    handle_parent: str = option("", "Handle Parent Bone", "The IK handle's parent when set to Bone",
                                shown_when=("handle_parent_mode", "BONE"), bone=True)
    extremity_mode: str = option("AUTO", "Extremity", "The foot or hand that stays planted with the handle",
                                 items=EXTREMITY_MODE_ITEMS, panel="basic")
    extremity_name: str = option("", "Extremity Bone", "The extremity when set to Bone", panel="basic",
                                 shown_when=("extremity_mode", "BONE"), bone=True)
    copy_mode: str = option("ROTATION", "Extremity Copies", "What the extremity copies from its clone",
                            items=COPY_MODE_ITEMS, panel="basic")
    animation: str = option("BAKE", "Animation", "What happens to motion already on the chain, its parents or the "
                            "extremity", items=ANIMATION_ITEMS, panel="basic")
    pole_angle_auto: bool = option(True, "Automatic Pole Angle", "Compute the pole angle from the rest pose so "
                                   "nothing twists")
    pole_angle: float = option(0.0, "Pole Angle", "The pole angle when not automatic", minimum=-math.pi,
                               maximum=math.pi, subtype="ANGLE", shown_when=("pole_angle_auto", False))
    bend_direction: str = option("AUTO", "Bend Direction", "Side a straight chain bends to (a bent chain bends the "
                                 "way it already does)", items=BEND_DIRECTION_ITEMS)
    prebend_straight: bool = option(True, "Pre-bend Straight Chains", "Bow a perfectly straight chain by 1 degree, "
                                    "ends fixed, so IK can bend it")
    fix_orientation: bool = option(
        False, "Fix Bone Orientation", "Point the chain bones' tails at the next joint (the last one's at the foot "
        "or hand) and roll them so X is the hinge, as imported bones often need; the mesh stays where it is at "
        "rest, but existing poses and keys of those bones turn them differently")
    iterations: int = option(500, "Iterations", "IK solver iterations", minimum=1, maximum=10000)
    shapes: bool = option(True, "Bone Shapes", "Give the IK handle and the pole custom shapes (a ring and a "
                          "diamond, sized to the limb), kept in one hidden collection shared by every rig in the "
                          "file")
    max_stretch: float = option(1.5, "Maximum Stretch", "How far the chain may reach, as a factor of its "
                                "length, when the handle's Stretch is 1 (the handle itself always moves freely)",
                                minimum=1.0, maximum=10.0, soft_maximum=3.0)
    use_rotation: bool = option(False, "Follow Handle Rotation", "The chain also turns to match the handle's "
                                "rotation (the IK constraint's Rotation), weighed by its Rotation Weight")
    foot_roll: bool = option(False, "Foot Roll", "A reverse foot for legs: a Roll control rocks the foot onto "
                             "its heel (turned back), its ball and then its toe tip (turned forward), and spins it "
                             "about the ball; the toe stays flat while the foot rolls on the ball")
    hinge_joints: bool = option(False, "Hinge Joints", "The middle joints bend only about their hinge, from "
                                "straight to 150 degrees: a knee or elbow never bends backwards or sideways")
    keep_extremity_constraints: bool = option(
        False, "Keep Extremity Constraints", "Keep the extremity's own constraints and add IK Rigger's after them "
        "(which override them while IK is on); off refuses to build over them")


@dataclass(frozen=True)
class Declared:
    """One option as declared: its field's name, type and default, and its ``Option``."""

    name: str
    kind: str  # "bool", "int", "float" or "str"
    default: Any
    option: Option


def _declared() -> tuple[Declared, ...]:
    found = []
    for entry in fields(LimbOptions):
        kind = entry.type if isinstance(entry.type, str) else entry.type.__name__
        default = entry.default if entry.default is not MISSING else None
        found.append(Declared(entry.name, kind, default, entry.metadata["option"]))
    return tuple(found)


_SCHEMA = _declared()


def schema() -> Iterator[Declared]:
    """Every build option, in the order the panels show them."""
    return iter(_SCHEMA)


def check(options: LimbOptions, bone: str = "") -> None:
    """Refuse values outside an option's choices or range, with the option and what is allowed."""
    for declared in schema():
        value = getattr(options, declared.name)
        spec = declared.option
        if spec.items:
            allowed = [item[0] for item in spec.items]
            if value not in allowed:
                raise RigError(f"unknown {spec.label.lower()} '{value}' (option {declared.name})", bone=bone,
                               hint=f"Use one of: {', '.join(allowed)}.")
        elif declared.kind in ("int", "float"):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise RigError(f"{declared.name} must be a finite number, not {value!r}", bone=bone,
                               hint=f"Give {spec.label} a number.")
            low = spec.minimum if spec.minimum is not None else -math.inf
            high = spec.maximum if spec.maximum is not None else math.inf
            if not low <= value <= high:
                raise RigError(f"{spec.label.lower()} {value:g} is outside {low:g} to {high:g} (option "
                               f"{declared.name})", bone=bone,
                               hint=f"Set {declared.name} between {low:g} and {high:g}.")
