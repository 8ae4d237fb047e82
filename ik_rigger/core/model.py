"""The plain data a limb's plan is made of: the skeleton it reads, the changes it makes.

Everything here is frozen and free of Blender: ``rig.skeleton`` reads a ``Skeleton``
from an armature, the parts (``ik_rigger.parts``) plan ``NewBone``s, ``BoneEdit``s,
``ConstraintPlan``s, ``PropertyPlan``s and ``PoseDriver``s, and ``rig.build`` writes
them to Blender.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from itertools import count
from typing import Any, TypeVar

from mathutils import Vector

from . import naming

# The guide's colours, as Blender bone colour palettes.
PALETTE_CHAIN = "THEME01"  # red
PALETTE_CONTROL = "THEME04"  # blue: IK handle and pole
PALETTE_ORIGIN = "THEME03"  # green: origin and parents
PALETTE_CLONE = "THEME08"  # teal, as the guide's clone
PALETTE_MECHANISM = "DEFAULT"  # bones only the rig itself moves, hidden

_Frozen = TypeVar("_Frozen")


def quick_init(cls: type[_Frozen]) -> type[_Frozen]:
    """The frozen dataclass ``cls`` with an ``__init__`` that stores its fields straight into the
    instance's ``__dict__``: the frozen one guards a setattr per field, about three times as slow,
    and a limb's plan makes dozens of these. Fields, defaults (plain values only), equality, hash
    and frozenness stay as the dataclass made them."""
    declared = fields(cls)  # type: ignore[arg-type]
    if any(item.default_factory is not MISSING or not item.init for item in declared) \
            or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: quick_init takes plain defaults only, and no __post_init__")
    parameters = ", ".join(item.name if item.default is MISSING else f"{item.name}=_default_{item.name}"
                           for item in declared)
    stores = "".join(f"\n    values['{item.name}'] = {item.name}" for item in declared)
    namespace: dict[str, Any] = {f"_default_{item.name}": item.default for item in declared}
    exec(f"def __init__(self, {parameters}):\n    values = self.__dict__{stores}\n", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


@quick_init
@dataclass(frozen=True)
class Driven:
    """A driver that reads custom properties of bones: Blender evaluates it without Python.

    ``variables`` pairs each variable's name (the property's key) with the bone holding
    it; an empty ``expression`` is the average of the variables (with one, its value),
    otherwise it is a simple expression of them (products, comparisons).
    """

    variables: tuple[tuple[str, str], ...]
    expression: str = ""
    # More variables, each reading a path of the armature object itself (its IK solver...).
    object_paths: tuple[tuple[str, str], ...] = ()
    # More variables, each the distance between two bones' heads (name, bone, bone), in world space or, with
    # ``distance_space`` "LOCAL_SPACE", between their translations in their own spaces, constraints applied.
    distances: tuple[tuple[str, str, str], ...] = ()
    distance_space: str = "WORLD_SPACE"
    # The space of each distance's second bone, where it is not ``distance_space``.
    distance_base_space: str = ""
    # More variables, each reading a channel of a pose bone (name, bone, path such as "location[0]"): what its
    # keys set, before its constraints, so reading a bone of an IK chain makes no dependency cycle.
    channels: tuple[tuple[str, str, str], ...] = ()

    def renamed(self, names: dict[str, str]) -> Driven:
        return replace(self, variables=tuple((key, names.get(bone, bone)) for key, bone in self.variables),
                       distances=tuple((key, names.get(a, a), names.get(b, b)) for key, a, b in self.distances),
                       channels=tuple((key, names.get(bone, bone), path) for key, bone, path in self.channels))


@quick_init
@dataclass(frozen=True)
class PropertyPlan:
    """A custom property on a made bone's pose bone: a switch animators key (library-overridable).

    Made once: a rebuild keeps the value (and keys) it has, and only updates the range and
    description.
    """

    bone: str
    key: str
    value: float
    minimum: float
    maximum: float
    description: str
    integer: bool = False  # an int (a choice by number) rather than a 0..1 factor
    # A rebuild sets the value too (an option's value the property carries, untouched since the last
    # build), unless keys animate it.
    overrides: bool = False


@quick_init
@dataclass(frozen=True)
class PoseDriver:
    """A driver on a pose bone's own property (``ik_stretch``), or on a setting of one of its constraints
    (``constraints["name"].distance``), reading made bones' switches."""

    bone: str
    path: str
    driven: Driven


@dataclass(frozen=True)
class BoneInfo:
    """One bone at rest, in armature space."""

    name: str
    parent: str | None
    head: Vector
    tail: Vector
    x_axis: Vector
    z_axis: Vector
    connected: bool = False

    @classmethod
    def read_all(cls, names: Iterable[str], parents: Iterable[str | None], connected: Iterable[bool],
                 columns: tuple[Sequence[float], Sequence[float], Sequence[float]],
                 children: dict[str | None, list[BoneInfo]] | None = None) -> dict[str, BoneInfo]:
        """Each bone of ``names`` (with its parent and whether it is connected, in the same order) by name,
        its head, tail and axes read from ``columns`` on first use: each bone's head (three floats), tail
        (three) and 4x4 rest matrix (sixteen, column by column), in the names' order. Reading an armature
        makes hundreds, and planning asks where a few bones of each limb are (the body's measures read
        the columns themselves, ``core.body``). Made without the frozen dataclass's ``__init__`` (a
        guarded setattr per field), each given its fields in one dict: either the ``__init__`` or a
        keyword call per bone was a third of the read. ``children``: filled with each parent's children
        (None's: the roots) in the same walk, as ``Skeleton.children`` indexes them."""
        new = object.__new__
        give = object.__setattr__
        found = {}
        below = {} if children is None else children
        for name, parent, joined, at in zip(names, parents, connected, count()):
            info = new(cls)
            give(info, "__dict__", {"name": name, "parent": parent, "connected": joined, "_rest": columns,
                                    "_at": at})
            found[name] = info
            siblings = below.get(parent)
            if siblings is None:
                below[parent] = [info]
            else:
                siblings.append(info)
        return found

    @property
    def length(self) -> float:
        return (self.tail - self.head).length

    @property
    def direction(self) -> Vector:
        return self.tail - self.head


class _Rest:
    """A read bone's head, tail, X or Z axis (``BoneInfo.read_all``), made from the armature's columns on
    first use and kept in the instance. A non-data descriptor: a bone made with its fields holds them in
    the instance, which wins; the dataclass's fields, equality and ``replace`` read them as attributes
    all the same."""

    def __init__(self, name: str, column: int, stride: int, offset: int, unit: bool) -> None:
        self.name, self.column, self.stride, self.offset, self.unit = name, column, stride, offset, unit

    def __get__(self, bone: BoneInfo | None, owner: type | None = None) -> Any:
        if bone is None:
            return self
        values = bone.__dict__
        floats = values["_rest"][self.column]
        start = values["_at"] * self.stride + self.offset
        # Three floats indexed, not a slice: a slice is a new array first.
        found = Vector((floats[start], floats[start + 1], floats[start + 2]))
        if self.unit:
            found = found.normalized()
        values[self.name] = found
        return found


# Set once the dataclass is made, so that it takes them for no default: the head and tail of each bone's
# three floats, its X axis at 0..2 and Z axis at 8..10 of its sixteen.
for _rest in (_Rest("head", 0, 3, 0, False), _Rest("tail", 1, 3, 0, False), _Rest("x_axis", 2, 16, 0, True),
              _Rest("z_axis", 2, 16, 8, True)):
    setattr(BoneInfo, _rest.name, _rest)


# A skeleton's measure holding the columns ``rig.skeleton`` read its bones from (``BoneInfo.read_all``),
# each bone's head, tail and rest matrix in the bones' order: a skeleton made from it with other bones
# (``without``, ``moved``) has none.
REST_COLUMNS = "rest columns"


@dataclass(frozen=True)
class Skeleton:
    """The rest skeleton of one armature, as ``rig.skeleton`` reads it.

    ``up`` and ``front`` are the world's up and Blender's front (-Y) seen from inside
    the armature (through its object's matrix); ``core.body`` says where the
    character itself faces.
    """

    bones: dict[str, BoneInfo]
    up: Vector = field(default_factory=lambda: Vector((0.0, 0.0, 1.0)))
    front: Vector = field(default_factory=lambda: Vector((0.0, -1.0, 0.0)))
    # Whether a generated rig's DEF- bones follow its other bones, a constraint on one or a driver on its
    # transforms (a live Rigify rig), as ``rig.skeleton`` reads it; False where none does (the rig sent through
    # FBX or glTF, or downloaded: its DEF- bones are the deforming skeleton then, see ``core.detect_names``). A
    # skeleton made without an armature says True: a generated rig in it is skipped whole.
    deform_driven: bool = True
    # What detection has read of the bones' names (``core.detect``), kept for every later
    # reading of this skeleton (a limb's planning reads them again); a skeleton made from
    # this one with other bones (``without``) starts its own, one with its bones moved (``moved``)
    # starts from these.
    read_names: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    # Measures of the whole body (``core.body``) and detection's reader of its names
    # (``core.detect.chains_of``), taken once per skeleton; and, for one read from an armature, the
    # columns its bones were read from (``REST_COLUMNS``).
    measures: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    # Each parent's children (None's: the roots), and each bone's only child, indexed on first use
    # (``children``, ``only_children``) rather than scanned for at each.
    _below: dict[str | None, list[BoneInfo]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _only: dict[str, BoneInfo] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __contains__(self, name: str) -> bool:
        return name in self.bones

    def __getitem__(self, name: str) -> BoneInfo:
        return self.bones[name]

    def children(self, name: str) -> Sequence[BoneInfo]:
        """The bones whose parent is ``name``, in the skeleton's order: the index's own, not a copy
        (planning asks for several of each limb), so to be read only."""
        return (self._below or self._children_index()).get(name, ())

    def only_children(self) -> dict[str, BoneInfo]:
        """Each bone that has a single child, to that child (indexed on the first call: planning
        a limb that is not straight never asks)."""
        only = self._only
        if not only:
            only.update({name: children[0] for name, children in self._children_index().items()
                         if len(children) == 1 and name is not None})
        return only

    def _children_index(self) -> dict[str | None, list[BoneInfo]]:
        below = self._below
        if not below:
            for bone in self.bones.values():
                parent = bone.parent
                found = below.get(parent)
                if found is None:  # not setdefault: that makes a list for every bone
                    below[parent] = [bone]
                else:
                    found.append(bone)
        return below

    def ancestors(self, name: str) -> Iterator[str]:
        """Parent, grandparent, ... of ``name``, nearest first."""
        parent = self.bones[name].parent
        while parent is not None:
            yield parent
            parent = self.bones[parent].parent

    def is_below(self, name: str, ancestor: str) -> bool:
        """True when ``name`` is ``ancestor`` or one of its descendants."""
        if name == ancestor:
            return True
        bones = self.bones
        parent = bones[name].parent
        while parent is not None:  # a loop, not a generator: asked several times for every limb
            if parent == ancestor:
                return True
            parent = bones[parent].parent
        return False

    def lineage(self, name: str, count: int) -> list[str]:
        """``name`` and its ancestors, nearest first, at most ``count`` bones (none for an unknown name)."""
        bones = self.bones
        if name not in bones:
            return []
        found = [name]
        parent = bones[name].parent
        while parent is not None and len(found) < count:  # a loop, not a generator: asked for every limb
            found.append(parent)
            parent = bones[parent].parent
        return found

    def without(self, names: Collection[str]) -> Skeleton:
        """The skeleton less the named bones (a limb's made bones, when planning its rebuild); itself,
        with all it has read, when it has none of them."""
        if not any(name in self.bones for name in names):
            return self
        return replace(self, bones={name: bone for name, bone in self.bones.items() if name not in names})

    def indexed(self, children: dict[str | None, list[BoneInfo]]) -> Skeleton:
        """The skeleton with ``children`` as its index of each parent's children (``BoneInfo.read_all``
        fills one as it reads the bones), so ``children`` need not walk the bones again."""
        self._below.update(children)
        return self

    def moved(self, bones: dict[str, BoneInfo]) -> Skeleton:
        """The skeleton with ``bones``, the same names and parents in other places (``core.orient``):
        the names read so far hold; the body's measures are taken again."""
        moved = replace(self, bones=bones)
        moved.read_names.update(self.read_names)
        return moved


def automatic_extremity(skeleton: Skeleton, last: str) -> str | None:
    """The child of ``last`` that continues the limb (the foot or hand), if any.

    A connected child wins; otherwise the child whose head is nearest the last
    bone's tail, as long as it starts close to it; otherwise, for an imported bone
    whose tail points off its joint, its only child when that starts well away from
    the bone's head (at the next joint, not a kneecap beside the knee).
    """
    bone = skeleton.bones[last]
    children = skeleton.children(last)
    connected = [child for child in children if child.connected]
    if connected:
        return _past_helper(skeleton, connected[0].name)
    near = [child for child in children if (child.head - bone.tail).length <= 0.25 * bone.length]
    if near:
        return _past_helper(skeleton, min(near, key=lambda child: ((child.head - bone.tail).length, child.name)).name)
    if len(children) == 1 and (children[0].head - bone.head).length >= 0.5 * bone.length:
        return _past_helper(skeleton, children[0].name)
    return None


def _past_helper(skeleton: Skeleton, name: str) -> str:
    """``name``, or where it is a generated rig's helper (Rigify's MCH-foot_fk.L between the FK shin and
    the FK foot), the one control that hangs from it where it starts: the bone an animator poses."""
    if not naming.generated_helper(name):
        return name
    bone = skeleton.bones[name]
    controls = [child.name for child in skeleton.children(name) if not naming.generated_helper(child.name)
                and (child.head - bone.head).length <= 1e-3 * bone.length]
    return controls[0] if len(controls) == 1 else name


def bending_indexes(chain: Sequence[str], halves: Collection[str]) -> list[int]:
    """Indexes of a chain's joints (its heads, then its end) where it may bend: all but the heads of
    ``halves``, the second halves of segments split in two."""
    if not halves:  # as most chains have none
        return list(range(len(chain) + 1))
    return [index for index in range(len(chain) + 1) if index == len(chain) or chain[index] not in halves]


@quick_init
@dataclass(frozen=True)
class NewBone:
    """A bone IK Rigger creates; never deforms."""

    role: str
    name: str
    head: Vector
    tail: Vector
    z_axis: Vector
    parent: str | None
    palette: str
    collection: str
    hidden: bool = False  # mechanism only the rig moves: hidden so nobody grabs it
    selectable: bool = True  # False for what only shows something (the pole line): clicking it is of no use
    roll_like: str | None = None  # a bone whose roll it takes exactly (a clone, its original)


@quick_init
@dataclass(frozen=True)
class BoneEdit:
    """A user bone moved at rest (only to pre-bend a straight chain)."""

    name: str
    head: Vector
    tail: Vector
    z_axis: Vector


@quick_init
@dataclass(frozen=True)
class ConstraintPlan:
    """A constraint to add to ``owner`` with its settings as (property, value) pairs."""

    owner: str
    kind: str
    name: str
    subtarget: str
    settings: tuple[tuple[str, object], ...] = ()
    pole_subtarget: str = ""
    influence: Driven | None = None  # a driver on the influence, or none (always 1)
