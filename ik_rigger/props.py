"""What IK Rigger stores in the .blend: one record per rigged limb.

The records live on the armature *object* (``Object.ik_rigger``) because that is
what the user selects and what the batch command opens; they name bones, so they
survive save and reload and let rebuild, remove and the panel find their bones.
"""

# No "from __future__ import annotations": Blender reads these property annotations
# as objects, and a postponed one is evaluated without this module's imports.
import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from .limb import options
from .rig import records


class IKRIG_PG_name(bpy.types.PropertyGroup):
    """A bone or collection name in a list (the item's own ``name``)."""


class IKRIG_PG_rest(bpy.types.PropertyGroup):
    """The rest a pre-bent bone had before IK Rigger bent it; ``name`` is the bone."""

    head: FloatVectorProperty(name="Head", description="Original head in armature space", size=3)
    tail: FloatVectorProperty(name="Tail", description="Original tail in armature space", size=3)
    roll: FloatProperty(name="Roll", description="Original roll in radians")


class IKRIG_PG_made_bone(bpy.types.PropertyGroup):
    """A bone IK Rigger made for a limb; ``name`` is the bone (as last seen)."""

    role: StringProperty(name="Role", description="What the bone does in the limb (HANDLE, POLE, CLONE, POLE_LINE)")


class IKRIG_PG_constraint(bpy.types.PropertyGroup):
    """A constraint IK Rigger added; ``name`` is the owning bone."""

    constraint: StringProperty(name="Constraint", description="Name of the constraint on the bone")


class IKRIG_PG_chain_state(bpy.types.PropertyGroup):
    """What a chain bone's pose settings were before IK Rigger touched them; ``name`` is the bone."""

    palette: StringProperty(name="Palette", description="Original pose bone colour palette", default="DEFAULT")
    ik_stretch: FloatProperty(name="IK Stretch", description="Original IK stretch of the bone")
    ik_settings: StringProperty(name="IK Settings", description="Original IK locks and limits (JSON), kept while "
                                "Hinge Joints holds the bone; empty when it does not")


def blender_property(declared: options.Declared, operator: bool = False):
    """The Blender property for one build option, from its one declaration. An ``operator``'s property of
    one limb's own (``Option.one_limbs``) is not remembered for the operator's next call (SKIP_SAVE)."""
    spec = declared.option
    label, description, default = spec.label, spec.description, declared.default
    flags = {"options": {"SKIP_SAVE"}} if operator and spec.one_limbs else {}
    if spec.items:
        return EnumProperty(name=label, description=description, items=list(spec.items), default=default, **flags)
    if declared.kind == "bool":
        return BoolProperty(name=label, description=description, default=default, **flags)
    if declared.kind == "str":
        return StringProperty(name=label, description=description, default=default, **flags)
    limits: dict[str, object] = dict(flags)
    if spec.minimum is not None:
        limits["min" if spec.clamp else "soft_min"] = spec.minimum
    if spec.maximum is not None:
        limits["max" if spec.clamp else "soft_max"] = spec.maximum
    if spec.soft_maximum is not None:
        limits["soft_max"] = spec.soft_maximum
    if declared.kind == "int":
        return IntProperty(name=label, description=description, default=default, **limits)
    return FloatProperty(name=label, description=description, default=default, subtype=spec.subtype, **limits)


class _Settings:
    """What the limb settings do with their options, whoever holds them."""

    def to_options(self) -> options.LimbOptions:
        """These settings as core's plain options."""
        return options.LimbOptions(**{declared.name: getattr(self, declared.name)
                                      for declared in options.schema()})

    def draw_options(self, layout: bpy.types.UILayout, armature: bpy.types.Armature, panel: str = "") -> None:
        """Lay the options out as declared: those of ``panel`` ("basic", "advanced"; all when empty),
        each shown only when it applies, bone names picked from ``armature``'s bones."""
        for declared in options.schema():
            spec = declared.option
            if panel and spec.panel != panel:
                continue
            if spec.shown_when is not None and getattr(self, spec.shown_when[0]) != spec.shown_when[1]:
                continue
            if spec.bone:
                layout.prop_search(self, declared.name, armature, "bones")
            else:
                layout.prop(self, declared.name)

    def set_options(self, values: options.LimbOptions, fresh: bool = False) -> None:
        """Store core's plain options in these settings.

        Only values that differ are written: an unset property costs nothing, and
        Blender copies every stored one on each update of the object. ``fresh``: these
        settings were just made, each at its default, so they need not be read.
        """
        if fresh:
            for name, value in _changed(values):
                setattr(self, name, value)
            return
        for name, _ in _DEFAULTS:
            value = getattr(values, name)
            if value != getattr(self, name):
                setattr(self, name, value)


class LimbSettings(_Settings):
    """The options of one limb, shared by the sidebar's settings and each limb's record.

    A mixin: Blender collects these annotations into every class that inherits it. They
    are made from ``limb.options.LimbOptions``, where each option is declared once, so the
    operators' redo panel, the stored record and the panel can never disagree.
    """

    __annotations__ = {declared.name: blender_property(declared) for declared in options.schema()}


class OperatorSettings(_Settings):
    """The build operators' options: ``LimbSettings``'s, with one limb's own not remembered for the next call."""

    __annotations__ = {declared.name: blender_property(declared, operator=True) for declared in options.schema()}


# Each option's name and default, in the schema's order, read once.
_DEFAULTS = tuple((declared.name, declared.default) for declared in options.schema())
# Which options (by position) differ from their defaults, by the options' values: a build's limbs mostly
# have the same, and comparing each is most of the cost of storing them.
_DIFFERING: dict[tuple, tuple[int, ...]] = {}


def _changed(values: options.LimbOptions) -> list[tuple[str, object]]:
    """The options ``values`` has at other than their defaults, as (name, value)."""
    read = options.values_of(values)
    differing = _DIFFERING.get(read)
    if differing is None:
        if len(_DIFFERING) >= 64:
            _DIFFERING.clear()
        differing = _DIFFERING[read] = tuple(position for position, ((_, default), value)
                                             in enumerate(zip(_DEFAULTS, read)) if value != default)
    return [(_DEFAULTS[position][0], read[position]) for position in differing]


class IKRIG_PG_limb(LimbSettings, bpy.types.PropertyGroup):
    """One rigged limb: the bones it uses, what was made, and how to undo it.

    Its bone and constraint names are a cache that ``rig.records.refresh`` brings up to
    date after renames; the made bones themselves carry the limb's ``uid``.
    """

    inventory: StringProperty(name="Inventory", description="The chain (root first), the bones IK Rigger made "
                              "with their roles and the constraints it added, as last seen (JSON; rig.records "
                              "reads and writes it)")
    extremity: StringProperty(name="Extremity", description="The foot or hand that copies its clone")
    handle: StringProperty(name="IK Handle", description="The IK target bone at the chain's end")
    pole: StringProperty(name="Pole", description="The pole target bone in front of the middle joint")
    clone: StringProperty(name="Clone", description="The extremity's clone, parented to the handle")
    # A record of version 1 (IK Rigger 0.2) listed its inventory in these; read until the rig is upgraded.
    chain: CollectionProperty(type=IKRIG_PG_name, name="Chain", description="Chain bones, root first (records "
                              "of version 1)")
    made_bones: CollectionProperty(type=IKRIG_PG_made_bone, name="Made Bones", description="Every bone IK Rigger "
                                   "made for this limb, with its role (records of version 1)")
    constraints: CollectionProperty(type=IKRIG_PG_constraint, name="Constraints",
                                    description="Constraints IK Rigger added for this limb (records of version 1)")
    prebent: CollectionProperty(type=IKRIG_PG_rest, name="Pre-bent Bones",
                                description="Original rest of chain bones that were pre-bent")
    chain_states: CollectionProperty(type=IKRIG_PG_chain_state, name="Chain States",
                                     description="Original pose colours and IK stretch of the chain bones "
                                     "that had other than Blender's defaults")
    uid: StringProperty(name="Limb ID", description="Identifies the bones IK Rigger made for this limb, which "
                        "carry it, so they are found again after renames")
    # The IK/FK switch, the IK weight and the stretch are not here: they are custom properties
    # on the handle's pose bone, so the rig plays where IK Rigger is not installed and a library
    # override can set them.

    def created(self) -> list[str]:
        """The bones IK Rigger made for this limb, as last seen (a record from 0.1 lists only
        handle, pole and clone)."""
        made = {name for name, _ in records.inventory(self).made}
        return sorted(made | {name for name in (self.handle, self.pole, self.clone) if name})

    def bones(self) -> set[str]:
        """Every bone this limb involves: chain, extremity and the bones it made."""
        names = set(records.inventory(self).chain) | set(self.created())
        if self.extremity:
            names.add(self.extremity)
        return names


class IKRIG_PG_build_settings(LimbSettings, bpy.types.PropertyGroup):
    """The sidebar's build options for the next limb; they live on the armature object so
    each character keeps its own choices."""

    both_sides: blender_property(options.BOTH_SIDES)


class IKRIG_PG_rig(bpy.types.PropertyGroup):
    """IK Rigger's data on an armature object: its limbs and the collections it made."""

    limbs: CollectionProperty(type=IKRIG_PG_limb, name="Limbs", description="Limbs rigged by IK Rigger")
    version: IntProperty(name="Record Version", description="Layout of these records and of the rig; older rigs "
                         "are upgraded when rebuilt or by Upgrade Rig", default=0)
    next_uid: IntProperty(name="Next Limb ID", description="Number for the next limb's ID", default=1)
    active_limb_index: IntProperty(name="Active Limb", description="Limb shown in the panel", default=0)
    # Names of the bone collections IK Rigger made here; a user's own collection with
    # the same name is never borrowed, so these may carry Blender's ".001" numbers.
    pivot_saved: BoolProperty(name="FK Pivot Active", description="The FK pivot helper holds the user's "
                              "pivot point and selection to give back")
    saved_pivot: StringProperty(name="Saved Pivot", description="Pivot point before the FK pivot helper")
    # Animators pivot on a library override of the character, whose collections take no new item
    # unless they allow insertion there.
    saved_selection: CollectionProperty(type=IKRIG_PG_name, name="Saved Selection",
                                        description="Selected bones before the FK pivot helper",
                                        override={"LIBRARY_OVERRIDABLE", "USE_INSERTION"})
    saved_active: StringProperty(name="Saved Active Bone", description="Active bone before the FK pivot helper")
    build_settings: PointerProperty(type=IKRIG_PG_build_settings, name="Build Settings",
                                    description="Options the panel's Build button uses")
    controls_collection: StringProperty(name="Controls Collection",
                                        description="Bone collection of the IK handles and poles")
    mechanism_collection: StringProperty(name="Mechanism Collection",
                                         description="Bone collection of the extremity clones")
    # The ground belongs to the character: each one can stand on its own floor or terrain.
    ground: PointerProperty(type=bpy.types.Object, name="Ground", description="Mesh the character's feet are "
                            "planted on by Plant Feet", poll=lambda _self, obj: obj.type == "MESH")

    def limb_of(self, bone: str) -> IKRIG_PG_limb | None:
        """The limb that uses ``bone`` in any role, if any, after renames too."""
        return records.limb_of(self.id_data, bone)


def register_properties() -> None:
    bpy.types.Object.ik_rigger = PointerProperty(type=IKRIG_PG_rig, name="IK Rigger",
                                                 description="Limbs rigged by IK Rigger")


def unregister_properties() -> None:
    if hasattr(bpy.types.Object, "ik_rigger"):
        del bpy.types.Object.ik_rigger


classes = (IKRIG_PG_name, IKRIG_PG_rest, IKRIG_PG_made_bone, IKRIG_PG_constraint, IKRIG_PG_chain_state, IKRIG_PG_limb,
           IKRIG_PG_build_settings, IKRIG_PG_rig)
