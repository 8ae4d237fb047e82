"""What a part is: its options, its roles, its plan, and its hooks.

A limb is composed of parts (``ik_rigger.parts.PARTS``). Each part is one module that
declares a ``PART``:

- ``options``: a frozen dataclass whose fields, made with ``option(...)``, are the
  part's build options. ``limb.options.LimbOptions`` gathers every part's fields, and
  the Blender properties, the panels, the records and the batch config's validation
  come from there.
- ``roles``: the roles of the bones it makes (``"HANDLE"``, ``"ROLL"``...), the shapes
  of those that are controls, and which roles each kind of constraint it adds aims
  at (how its constraints are recognised after the user renames them).
- ``plan``: a pure function (no Blender) that adds the part's bones, constraints,
  custom properties and drivers to a ``Draft``, as plain data; ``plans`` says for which
  options it has anything to add (the others skip it).
- hooks, each optional, called by the Blender layer with the limb's current pieces
  (``rig.records.Parts``): ``draw`` (its live settings in the Limbs panel),
  ``snap_to_fk`` (place its controls on an FK pose, for IK-from-FK snapping) and
  ``bake_to_ik`` (key its controls from recorded FK motion) and ``keep`` (what a rebuild
  keeps of the limb as it is now, handed to its plan as ``Draft.kept``). Hooks receive Blender
  objects but never import Blender, so this package stays importable anywhere.

Parts plan in the order they are registered: a part may read what earlier parts made
(``Draft.made``) and the anchors they set (``Draft.controls_parent``, ``Draft.follow``).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mathutils import Vector

from ..core import naming
from ..core.joints import Hinge
from ..core.model import (
    BoneEdit,
    BoneInfo,
    ConstraintPlan,
    NewBone,
    PoseDriver,
    PropertyPlan,
    Skeleton,
    bending_indexes,
)

Item = tuple[str, str, str]


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
    # The option's keys in earlier releases: configs and scripts written for them still read, with a note.
    old_names: tuple[str, ...] = ()
    # Whether Blender's property may clamp to the range. Off where a value past it must be refused
    # with a message, not quietly changed (Blender's IK counts at most 255 bones).
    clamp: bool = True
    # What one limb's bones decide (its chain's length, its bend, a manual pole angle; a bone name always is):
    # the build operators do not remember it for their next call, which would rig other bones or twist a limb.
    per_limb: bool = False

    @property
    def one_limbs(self) -> bool:
        """Whether the value is one limb's own: a bone name, or an option declared ``per_limb``."""
        return self.bone or self.per_limb


def option(default: Any, label: str, description: str, **details: Any) -> Any:
    """A part's option field: its default, and its ``Option`` as metadata."""
    return field(default=default, metadata={"option": Option(label, description, **details)})


@dataclass(frozen=True)
class Shape:
    """A control's custom shape as wire geometry in the bone's space, scaled by ``size`` times its length."""

    label: str
    points: tuple[tuple[float, float, float], ...]
    edges: tuple[tuple[int, int], ...]
    size: float


@dataclass
class Draft:
    """One limb while its parts plan it.

    The fields up to ``handle`` are the limb as the chain was read (after the chain's checks);
    the parts fill the others. The chain part plans first: it fixes the bones' orientation and
    pre-bends a straight chain (``skeleton``, ``joints``, ``length`` and ``edited`` then hold the
    limb as it will be), so every later part plans on that.
    """

    skeleton: Skeleton
    # limb.options.LimbOptions, which gathers every part's options: a part cannot name the layer above it.
    options: Any
    chain: tuple[str, ...]
    extremity: str | None
    side: str | None
    joints: list[Vector]  # the chain's joints at rest, root first, the last bone's tail last
    length: float
    bend: Vector  # the side the chain bends to
    straight: bool
    names: naming.NamesInUse  # every bone name in use: new names never collide with them
    known: Container[str]  # the armature's bone names
    handle: str  # the IK handle's name, chosen first: every part's switches live on it
    edited: dict[str, BoneEdit] = field(default_factory=dict)  # the chain bones whose rest changes
    # What each part keeps of the limb this rebuilds, by part name (``Part.keep``).
    kept: Mapping[str, Any] = field(default_factory=dict)
    handle_parent: str | None = None  # the guide's Origin: what the controls follow by default
    bones: list[NewBone] = field(default_factory=list)
    constraints: list[ConstraintPlan] = field(default_factory=list)
    properties: list[PropertyPlan] = field(default_factory=list)
    drivers: list[PoseDriver] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    controls_parent: str | None = None  # what the handle (and a pole at the origin) hang from
    follow: str | None = None  # what the IK target and the extremity's clone hang from
    pole_angle: float = 0.0
    # Per joint IK holds in line: each second half of a split segment (the chain's) and hinged middle joints.
    hinges: list[Hinge] = field(default_factory=list)
    # Chain bones that are the second half of a segment split in two (core.detect.split_halves): IK
    # keeps them in line, so the chain bends only at the other heads.
    halves: frozenset[str] = frozenset()
    # Whether the chain bones do not run joint to joint, so IK solves a hidden chain that does
    # (``parts.hidden``), set when the chain is read; the chain part then plans the limb on that chain
    # (``skeleton`` holds the chain bones as it runs) and keeps the bones as they are here.
    hidden: bool = False
    # The chain bone rolled off its joint's hinge that made a chain running joint to joint hidden, so
    # Hinge Joints hold the hidden chain's bones, rolled on their hinges, and the user's stay as they are
    # (straight, pre-bent with it: ``edited`` then holds their pre-bend, ``solved_edit`` none).
    off_hinge: str = ""
    followed: dict[str, BoneInfo] = field(default_factory=dict)

    def new_name(self, source: str, tag: str) -> str:
        """A free name for a bone made from ``source`` (tag before its side suffix, 63 bytes at most)."""
        name = naming.derived_name(source, tag, self.names, self.known)
        self.names.add(name)
        return name

    def made(self, role: str) -> str | None:
        """The name of the bone of ``role`` an earlier part made, if any."""
        for bone in self.bones:  # a loop, not next() over a generator: asked several times per limb
            if bone.role == role:
                return bone.name
        return None

    def solved_edit(self, name: str) -> BoneEdit | None:
        """The edit of a chain bone as IK solves it, if any: none where a hidden chain solves in the chain's
        place (``skeleton`` holds its bones; an edit is then the user's bone, pre-bent with it)."""
        return None if self.followed else self.edited.get(name)

    def rest(self, name: str) -> tuple[Vector, Vector, Vector]:
        """A chain bone's head, tail and Z axis at rest as the limb will have it (after its edit, if any)."""
        edit = self.solved_edit(name)
        if edit is not None:
            return edit.head, edit.tail, edit.z_axis
        bone = self.skeleton[name]
        return bone.head, bone.tail, bone.z_axis

    @property
    def last(self) -> str:
        return self.chain[-1]

    @cached_property
    def _bending(self) -> list[int]:
        # Read by several parts per limb; the chain and its halves are set once, when the chain is read.
        return bending_indexes(self.chain, self.halves)

    @property
    def segments(self) -> list[str]:
        """The chain bones that begin a segment: all but the second halves of split ones."""
        return [self.chain[index] for index in self._bending[:-1]]

    @property
    def bending_joints(self) -> list[Vector]:
        """The joints where the chain bends (each segment's head) and its end."""
        return [self.joints[index] for index in self._bending]

    @property
    def middle(self) -> tuple[str, Vector]:
        """The middle segment's first bone and its head: the knee or elbow of a leg or an arm."""
        bending = self._bending  # its last is the chain's end: the others begin the segments
        joint = bending[(len(bending) - 1) // 2]
        return self.chain[joint], self.joints[joint]

    @property
    def end_bone(self) -> str:
        """The bone the handle takes its shape from: the extremity, else the chain's last bone."""
        return self.extremity or self.chain[-1]


@dataclass(frozen=True)
class Part:
    """One part of a limb; see the module's description."""

    name: str
    options: type
    plan: Callable[[Draft], None]
    roles: tuple[str, ...] = ()
    shapes: Mapping[str, Shape] = field(default_factory=dict)
    targets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # constraint type -> roles it aims at
    # Whether a limb with these options uses the part (a part that makes bones: when one of them
    # exists too, as another part may make one of its roles for itself).
    used: Callable[[Any], bool] = lambda options: True
    # Whether its ``plan`` may add anything for these options: a part whose plan would return at once
    # (an option off) is not called (``limb.plan``). It must not plan less than ``plan`` alone would.
    plans: Callable[[Any], bool] = lambda options: True
    # Options of earlier releases the part no longer has, each with what took its place: configs and
    # scripts that set one still read, with that note, the value unused.
    retired: Mapping[str, str] = field(default_factory=dict)
    draw: Callable[..., None] | None = None  # (layout, obj, limb, parts)
    keep: Callable[..., Any] | None = None  # (obj, parts) -> what a rebuild keeps of the limb now (Draft.kept)
    # (obj, parts, settings) -> option name -> the bone the rig follows now for each of the part's options that
    # names one (Blender's parents and constraints follow a bone the user renames; the options do not).
    named: Callable[..., dict[str, str]] | None = None
    snap_to_fk: Callable[..., list[str]] | None = None  # (snap) -> bones changed
    bake_to_ik: Callable[..., None] | None = None  # (bake)
