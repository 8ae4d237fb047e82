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

from .core import geometry, plan
from .rig import records


class IKRIG_PG_name(bpy.types.PropertyGroup):
    """A bone or collection name in a list (the item's own ``name``)."""


class IKRIG_PG_rest(bpy.types.PropertyGroup):
    """The rest a pre-bent bone had before IK Rigger bent it; ``name`` is the bone."""

    head: FloatVectorProperty(name="Head", description="Original head in armature space", size=3)
    tail: FloatVectorProperty(name="Tail", description="Original tail in armature space", size=3)
    roll: FloatProperty(name="Roll", description="Original roll in radians")


class IKRIG_PG_constraint(bpy.types.PropertyGroup):
    """A constraint IK Rigger added; ``name`` is the owning bone."""

    constraint: StringProperty(name="Constraint", description="Name of the constraint on the bone")


class IKRIG_PG_chain_state(bpy.types.PropertyGroup):
    """What a chain bone's pose settings were before IK Rigger touched them; ``name`` is the bone."""

    palette: StringProperty(name="Palette", description="Original pose bone colour palette", default="DEFAULT")
    ik_stretch: FloatProperty(name="IK Stretch", description="Original IK stretch of the bone")
    ik_settings: StringProperty(name="IK Settings", description="Original IK locks and limits (JSON), kept while "
                                "Hinge Joints holds the bone; empty when it does not")


COPY_MODE_ITEMS = [
    ("ROTATION", "Rotation", "The extremity copies the rotation of its clone (the guide's setup)"),
    ("ROTATION_SCALE", "Rotation and Scale",
     "The extremity copies rotation and scale, so scaling the handle scales it"),
    ("TRANSFORMS", "Transforms", "The extremity copies its clone's whole transform"),
]
PARENT_MODE_ITEMS = [
    ("AUTO", "Automatic", "The bone above the chain's parent (the guide's Origin); none if there is none"),
    ("NONE", "None", "No parent"),
    ("BONE", "Bone", "The bone named below"),
]
EXTREMITY_MODE_ITEMS = [
    ("AUTO", "Automatic", "The child of the last chain bone that continues the limb (foot or hand)"),
    ("NONE", "None", "No extremity: no clone and no copy constraint"),
    ("BONE", "Bone", "The bone named below"),
]
POLE_PARENT_ITEMS = [
    ("ORIGIN", "Origin", "The pole follows the handle's parent, so it stays put when the handle moves"),
    ("HANDLE", "Handle", "The pole follows the IK handle, so the knee or elbow turns with the foot or hand"),
]
ANIMATION_ITEMS = [
    ("BAKE", "Bake onto the Controls", "Key the new handle, pole and clone from the motion, so the IK rig plays "
     "the same (nothing happens on an armature without animation)"),
    ("FK", "Leave Playing in FK", "Key the limb's IK/FK to FK, so it plays its own keys as before"),
    ("IGNORE", "Ignore", "Leave the motion alone: the IK overrides the chain's keys"),
]
BEND_DIRECTION_ITEMS = [("AUTO", "Automatic", "Knees bend toward the foot, elbows backwards")] + [
    (key, ("+" if key.endswith("POS") else "-") + key[0], f"Bend a straight chain toward armature {key[0]} "
     f"{'positive' if key.endswith('POS') else 'negative'}") for key in geometry.AXES
]


class LimbSettings:
    """The options of one limb, shared by the build operator and each limb's record.

    A mixin: Blender collects these annotations into every class that inherits it,
    so the operator's redo panel and the stored record can never disagree.
    """

    chain_length: IntProperty(name="Chain Length", description="Bones in the IK chain, ending at the active bone",
                              default=2, min=2, soft_max=16)
    use_pole: BoolProperty(name="Pole Target", description="Add a pole target in front of the middle joint",
                           default=True)
    pole_parent: EnumProperty(name="Pole Parent", description="What the pole target follows", items=POLE_PARENT_ITEMS)
    pole_distance: FloatProperty(name="Pole Distance", description="How far the pole stands from the middle joint, "
                                 "as a fraction of the chain's length", default=0.5, min=0.05, soft_max=3.0)
    handle_parent_mode: EnumProperty(name="Handle Parent", description="What the IK handle follows",
                                     items=PARENT_MODE_ITEMS)
    handle_parent: StringProperty(name="Handle Parent Bone", description="The IK handle's parent when set to Bone")
    extremity_mode: EnumProperty(name="Extremity", description="The foot or hand that stays planted with the handle",
                                 items=EXTREMITY_MODE_ITEMS)
    extremity_name: StringProperty(name="Extremity Bone", description="The extremity when set to Bone")
    copy_mode: EnumProperty(name="Extremity Copies", description="What the extremity copies from its clone",
                            items=COPY_MODE_ITEMS)
    pole_angle_auto: BoolProperty(name="Automatic Pole Angle", description="Compute the pole angle from the rest "
                                  "pose so nothing twists", default=True)
    pole_angle: FloatProperty(name="Pole Angle", description="The pole angle when not automatic", subtype="ANGLE",
                              min=-3.14159265, max=3.14159265)
    bend_direction: EnumProperty(name="Bend Direction", description="Side a straight chain bends to (a bent chain "
                                 "bends the way it already does)", items=BEND_DIRECTION_ITEMS)
    prebend_straight: BoolProperty(name="Pre-bend Straight Chains", description="Bow a perfectly straight chain by "
                                   "1 degree, ends fixed, so IK can bend it", default=True)
    iterations: IntProperty(name="Iterations", description="IK solver iterations", default=500, min=1, max=10000)
    use_stretch: BoolProperty(name="Stretch", description="Let the chain stretch to reach the handle", default=False)
    animation: EnumProperty(name="Animation", description="What happens to motion already on the chain, its "
                            "parents or the extremity", items=ANIMATION_ITEMS)
    use_rotation: BoolProperty(name="Follow Handle Rotation", description="The chain also turns to match the "
                               "handle's rotation (the IK constraint's Rotation), weighed by its Rotation Weight",
                               default=False)
    hinge_joints: BoolProperty(name="Hinge Joints", description="The middle joints bend only about their hinge, "
                               "from straight to 150 degrees: a knee or elbow never bends backwards or sideways",
                               default=False)
    keep_extremity_constraints: BoolProperty(
        name="Keep Extremity Constraints", description="Keep the extremity's own constraints and add IK Rigger's "
        "after them (which override them while IK is on); off refuses to build over them", default=False)
    fix_orientation: BoolProperty(
        name="Fix Bone Orientation", description="Point the chain bones' tails at the next joint (the last one's "
        "at the foot or hand) and roll them so X is the hinge, as imported bones often need; the mesh stays where "
        "it is at rest, but existing poses and keys of those bones turn them differently", default=False)

    def to_options(self) -> plan.LimbOptions:
        """These settings as core's plain options."""
        return plan.LimbOptions(
            chain_length=self.chain_length, use_pole=self.use_pole, pole_parent=self.pole_parent,
            pole_distance=self.pole_distance, handle_parent_mode=self.handle_parent_mode,
            handle_parent=self.handle_parent, extremity_mode=self.extremity_mode, extremity=self.extremity_name,
            copy_mode=self.copy_mode, pole_angle_auto=self.pole_angle_auto, pole_angle=self.pole_angle,
            bend_direction=self.bend_direction, prebend_straight=self.prebend_straight,
            iterations=self.iterations, use_stretch=self.use_stretch,
            keep_extremity_constraints=self.keep_extremity_constraints, animation=self.animation,
            use_rotation=self.use_rotation, hinge_joints=self.hinge_joints,
            fix_orientation=self.fix_orientation,
        )

    def set_options(self, options: plan.LimbOptions) -> None:
        """Store core's plain options in these settings.

        Only values that differ are written: an unset property costs nothing, and
        Blender copies every stored one on each update of the object.
        """
        for key, value in options.__dict__.items():
            name = "extremity_name" if key == "extremity" else key
            if getattr(self, name) != value:
                setattr(self, name, value)


class IKRIG_PG_limb(LimbSettings, bpy.types.PropertyGroup):
    """One rigged limb: the bones it uses, what was made, and how to undo it.

    Its bone and constraint names are a cache that ``rig.records.refresh`` brings up to
    date after renames; the made bones themselves carry the limb's ``uid``.
    """

    chain: CollectionProperty(type=IKRIG_PG_name, name="Chain", description="Chain bones, root first")
    extremity: StringProperty(name="Extremity", description="The foot or hand that copies its clone")
    handle: StringProperty(name="IK Handle", description="The IK target bone at the chain's end")
    pole: StringProperty(name="Pole", description="The pole target bone in front of the middle joint")
    clone: StringProperty(name="Clone", description="The extremity's clone, parented to the handle")
    constraints: CollectionProperty(type=IKRIG_PG_constraint, name="Constraints",
                                    description="Constraints IK Rigger added for this limb")
    prebent: CollectionProperty(type=IKRIG_PG_rest, name="Pre-bent Bones",
                                description="Original rest of chain bones that were pre-bent")
    chain_states: CollectionProperty(type=IKRIG_PG_chain_state, name="Chain States",
                                     description="Original pose colours and IK stretch of the chain bones "
                                     "that had other than Blender's defaults")
    uid: StringProperty(name="Limb ID", description="Identifies the bones IK Rigger made for this limb, which "
                        "carry it, so they are found again after renames")
    # The IK/FK switch is not here: it is the custom property "ik_fk" on the handle's pose
    # bone, so the rig plays where IK Rigger is not installed and a library override can set it.
    stretch: FloatProperty(name="Stretch", description="How far the chain bones stretch to reach the handle "
                           "(0 is none)", default=0.0, min=0.0, max=1.0,
                           update=lambda self, context: records.set_stretch(self.id_data, self, self.stretch))

    def created(self) -> list[str]:
        """The bones IK Rigger made for this limb: handle, pole and clone (those it has)."""
        return [name for name in (self.handle, self.pole, self.clone) if name]

    def bones(self) -> set[str]:
        """Every bone this limb involves: chain, extremity and the bones it made."""
        names = {item.name for item in self.chain} | set(self.created())
        if self.extremity:
            names.add(self.extremity)
        return names


class IKRIG_PG_build_settings(LimbSettings, bpy.types.PropertyGroup):
    """The sidebar's build options for the next limb; they live on the armature object so
    each character keeps its own choices."""

    both_sides: BoolProperty(name="Both Sides", description="Also rig the mirrored chain when the bone names "
                             "carry a side", default=False)


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
    saved_selection: CollectionProperty(type=IKRIG_PG_name, name="Saved Selection",
                                        description="Selected bones before the FK pivot helper")
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


classes = (IKRIG_PG_name, IKRIG_PG_rest, IKRIG_PG_constraint, IKRIG_PG_chain_state, IKRIG_PG_limb,
           IKRIG_PG_build_settings, IKRIG_PG_rig)
