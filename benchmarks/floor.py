"""The floor: the least Blender work that makes IK Rigger's four limbs on Rigify's human metarig.

Written plainly, the way a rigger would script it by hand, and on purpose without
anything from IK Rigger: one Edit-mode pass adds a handle, a pole, a pole line, a
stretch target with its reach point and a clone per limb; one pass over the pose bones
adds the IK constraint, the stretch limit, the pole line's Stretch To and the Copy
Rotation; the controls get the same wire shapes. The bones, names, parents and
constraint settings are the ones IK Rigger makes with its default options
(``build_speed.compare`` proves it on every run), so the time IK Rigger takes beyond
this is the price of its planning, checks, records and drivers.

It makes the drivers IK Rigger makes, as plain Blender drivers: the handle's ``ik_fk`` times
its ``ik_weight`` driving the IK's influence, its ``ik_fk`` the Copy Rotation's, and with
stretch its ``stretch`` each chain bone's IK stretch. ``drivers=False`` leaves them out, for the
evaluation's diagnostic rigs alone.

And it gives the rig IK Rigger's looks, which an animator sees as much as the bones: the
controls (handle, pole, pole line) in a shown bone collection and the mechanism (stretch
target, reach point, clone) in a hidden one, the bones' colours (blue controls, teal clone, red
chain), the mechanism hidden in Pose mode where each Blender keeps that (``Bone.hide`` in 4.2,
``PoseBone.hide`` in 5.x), and the switches as 0-1 sliders with a default and a description,
overridable in a library override.

IK Rigger's options have switches here too. Without stretch (``stretch=False``, IK Rigger's
Maximum Stretch of 1) the IK aims at the handle and there is no target, reach point, stretch
limit or stretch driver; without ``pole_lines`` (Pole Line off) no pole line nor its Stretch
To; without ``shapes`` (Bone Shapes off) no wire shapes nor their collection. ``PLAIN`` is a
plain script's rig: none of the three.

``BENCHMARK_OT_floor`` runs the same script as an operator, so comparing it with IK
Rigger's Auto-Rig operator leaves out what both pay for being operators (the call, the
undo step, the scene update after it).
"""

from __future__ import annotations

import math

import bpy
from mathutils import Vector

from benchmarks import creature

# (first chain bone, last chain bone, foot or hand) per limb, in the order IK Rigger is asked.
LIMBS = (
    ("thigh.L", "shin.L", "foot.L"),
    ("thigh.R", "shin.R", "foot.R"),
    ("upper_arm.L", "forearm.L", "hand.L"),
    ("upper_arm.R", "forearm.R", "hand.R"),
)
POLE_DISTANCE = 0.5  # of the chain's length, in front of the knee or behind the elbow
POLE_LENGTH = 0.1
MAX_STRETCH = 1.5  # of the chain's length: how far a stretched chain may reach
# The floor's switches for a plain script's rig: IK Rigger's options shapes=False, pole_line=False, max_stretch=1.
PLAIN = {"stretch": False, "shapes": False, "pole_lines": False}
# IK Rigger's looks: its bone collections' names and its colours (Blender's theme palettes).
CONTROLS, MECHANISM = "IK Controls", "IK Mechanism"
BLUE, TEAL, RED = "THEME04", "THEME08", "THEME01"
# Where Pose mode reads a bone's hiding: PoseBone.hide in 5.x, Bone.hide in 4.2 (EditBone.hide is Edit mode's there).
_POSE_HIDE = "hide" in bpy.types.PoseBone.bl_rna.properties


def _split_side(name: str) -> tuple[str, str]:
    """'shin.L' -> ('shin', '.L'): the metarig's names all end in .L or .R."""
    return name[:-2], name[-2:]


def _pole_angle(root_head: Vector, root_tail: Vector, root_x: Vector, end: Vector, pole: Vector) -> float:
    """The pole angle that keeps the chain at rest: the signed angle about the root bone from its
    X axis to the direction toward the pole, in the plane of root, end and pole (Blender counts it
    clockwise looking down the bone, hence the minus)."""
    axis = root_tail - root_head
    toward_pole = (end - root_head).cross(pole - root_head).cross(axis)
    unit = axis.normalized()
    x_side = root_x - unit * root_x.dot(unit)
    angle = x_side.angle(toward_pole)
    return angle if x_side.cross(toward_pole).dot(axis) < 0.0 else -angle


def rig_four_limbs(obj: bpy.types.Object, stretch: bool = True, drivers: bool = True, shapes: bool = True,
                   pole_lines: bool = True) -> None:
    """Rig both legs and both arms of the active metarig ``obj``; leaves it in the mode it was in."""
    rig_limbs(obj, LIMBS, stretch, drivers, shapes=shapes, pole_lines=pole_lines)


def rig_limbs(obj: bpy.types.Object, limbs: tuple[tuple[str, str, str], ...] | list[tuple[str, str, str]],
              stretch: bool = True, drivers: bool = True, origin: str | None = None, shapes: bool = True,
              pole_lines: bool = True) -> None:
    """Rig ``limbs`` (first, last and end bone of each) of the active armature ``obj``, as
    ``rig_four_limbs`` does the metarig's; leaves it in the mode it was in. With ``origin``, the
    controls hang from that bone (a root on the ground, as IK Rigger's legs do) rather than from
    the bone above the chain's parent."""
    mode = "POSE" if obj.mode == "POSE" else "OBJECT"
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    above = edit_bones[origin] if origin else None
    controls, mechanism = _collections(obj.data)
    wiring = []
    for first_name, last_name, end_name in limbs:
        first, last, end = edit_bones[first_name], edit_bones[last_name], edit_bones[end_name]
        base, side = _split_side(last_name)
        end_base = _split_side(end_name)[0]
        length = first.length + last.length
        along = last.tail - first.head
        knee = last.head - first.head
        bend = (knee - along * (knee.dot(along) / along.length_squared)).normalized()
        # Controls hang from the bone above the chain's parent, so the body carries them
        # but the hip or shoulder does not drag them.
        control_parent = above or (first.parent.parent if first.parent else None)

        handle = edit_bones.new(f"{end_base}_IK{side}")
        handle.head, handle.tail, handle.roll = end.head, end.tail, end.roll
        handle.parent = control_parent
        handle.use_deform = False
        _look(handle, controls, BLUE)

        pole = edit_bones.new(f"{base}_IK_pole{side}")
        pole.head = last.head + bend * POLE_DISTANCE * length
        pole.tail = pole.head + bend * POLE_LENGTH * length
        pole.align_roll(along.normalized())
        pole.parent = control_parent
        pole.use_deform = False
        _look(pole, controls, BLUE)

        line = _pole_line(edit_bones, f"{base}_IK_pole_line{side}", last, pole, along) if pole_lines else None
        if line is not None:
            _look(line, controls, BLUE)

        # Without stretch the IK aims at the handle itself.
        target, reach = (_stretch_bones(edit_bones, handle, (first, last, end), knee, along, length) if stretch
                         else (handle, None))
        if reach is not None:
            mechanism.assign(target)
            mechanism.assign(reach)

        clone = edit_bones.new(f"{end_base}_IK_clone{side}")
        clone.head, clone.tail, clone.roll = end.head, end.tail, end.roll
        clone.parent = handle
        clone.use_deform = False
        _look(clone, mechanism, TEAL)

        angle = _pole_angle(first.head, first.tail, first.x_axis, last.tail, pole.head)
        wiring.append((first_name, last_name, end_name, handle.name, target.name, pole.name, clone.name,
                       line.name if line else None, reach.name if reach else None, length, angle))

    bpy.ops.object.mode_set(mode=mode)
    pose_bones = obj.pose.bones
    for first_name, last_name, end_name, handle_name, target, pole, clone, line, reach, length, angle in wiring:
        pose_bones[first_name].color.palette = pose_bones[last_name].color.palette = RED
        if reach is not None:
            for hidden in (pose_bones[target], pose_bones[reach]):
                (hidden if _POSE_HIDE else hidden.bone).hide = True
        ik = pose_bones[last_name].constraints.new("IK")
        ik.target = obj
        ik.subtarget = target
        ik.pole_target = obj
        ik.pole_subtarget = pole
        ik.pole_angle = angle
        ik.chain_count = 2
        ik.use_stretch = stretch  # the chain bones' IK stretch (driven by the handle's Stretch) decides
        if reach is not None:
            limit = pose_bones[target].constraints.new("LIMIT_DISTANCE")
            limit.target = obj
            limit.subtarget = reach
            limit.limit_mode = "LIMITDIST_INSIDE"
            limit.distance = length * MAX_STRETCH
            limit.owner_space = "POSE"
            limit.target_space = "POSE"
        if line is not None:
            stretch_to = pose_bones[line].constraints.new("STRETCH_TO")
            stretch_to.target = obj
            stretch_to.subtarget = pole
        copy = pose_bones[end_name].constraints.new("COPY_ROTATION")
        copy.target = obj
        copy.subtarget = clone
        # Armature space, as IK Rigger uses: world space shears under a non-uniformly scaled object.
        copy.owner_space = "POSE"
        copy.target_space = "POSE"
        if drivers:
            _drive(obj, pose_bones[handle_name], ik, copy, (first_name, last_name) if stretch else ())
    if shapes:
        _shapes(obj, wiring)


def _collections(armature: bpy.types.Armature) -> tuple[bpy.types.BoneCollection, bpy.types.BoneCollection]:
    """The controls' bone collection, shown, and the mechanism's, hidden."""
    controls = armature.collections.new(CONTROLS)
    mechanism = armature.collections.new(MECHANISM)
    mechanism.is_visible = False
    return controls, mechanism


def _look(bone, collection: bpy.types.BoneCollection, palette: str) -> None:
    """An edit bone into its collection, in its colour."""
    collection.assign(bone)
    bone.color.palette = palette


def _switch(handle: bpy.types.PoseBone, key: str, value: float, description: str) -> None:
    """One of the handle's switches: a custom property shown as a 0-1 slider, overridable in a library
    override (IK Rigger's descriptions are longer; the text costs the same)."""
    handle[key] = value
    handle.id_properties_ui(key).update(min=0.0, max=1.0, soft_min=0.0, soft_max=1.0, default=value,
                                        subtype="FACTOR", description=description)
    handle.property_overridable_library_set(f'["{key}"]', True)


def _pole_line(edit_bones, name: str, last, pole, along: Vector):
    """The thin line from the knee or elbow to the pole, unselectable."""
    line = edit_bones.new(name)
    line.head, line.tail = last.head, pole.head
    line.align_roll(along.normalized())
    line.parent = last
    line.use_deform = False
    line.hide_select = True
    return line


def _stretch_bones(edit_bones, handle, limb: tuple, knee: Vector, along: Vector, length: float) -> tuple:
    """Stretch: a target under the handle for the IK, kept within reach of the chain's root; turned as
    the chain's last bone, which takes its turn under Follow Handle Rotation."""
    first, last, end = limb
    end_base, side = _split_side(end.name)
    target = edit_bones.new(f"{end_base}_IK_target{side}")
    target.head = end.head
    target.tail = end.head + (last.tail - last.head).normalized() * 0.5 * end.length
    target.roll = last.roll
    target.parent = handle
    target.use_deform = False
    target.hide = True
    reach = edit_bones.new(f"{_split_side(first.name)[0]}_IK_reach{side}")
    reach.head = first.head
    reach.tail = first.head + knee.normalized() * 0.05 * length
    reach.align_roll(along.normalized())
    reach.parent = first.parent
    reach.use_deform = False
    reach.hide = True
    return target, reach


def _drive(obj: bpy.types.Object, handle: bpy.types.PoseBone, ik: bpy.types.Constraint,
           copy: bpy.types.Constraint, stretched: tuple[str, ...]) -> None:
    """The handle's switches driving the IK's influence (``ik_fk * ik_weight``), the Copy Rotation's
    (``ik_fk``) and the IK stretch of the ``stretched`` chain bones (``stretch``)."""
    _switch(handle, "ik_fk", 1.0, "IK/FK switch: 1 is IK, 0 is FK")
    _switch(handle, "ik_weight", 1.0, "How strongly the IK pulls the chain toward this handle")
    drive_influence(obj, ik, handle.name, ("ik_fk", "ik_weight"))
    drive_influence(obj, copy, handle.name, ("ik_fk",))
    if stretched:
        _switch(handle, "stretch", 0.0, "How far the chain bones stretch to reach this handle")
        pose_bones = obj.pose.bones
        for name in stretched:
            _drive_by(obj, pose_bones[name], "ik_stretch", handle.name, ("stretch",))


def drive_influence(obj: bpy.types.Object, constraint: bpy.types.Constraint, handle: str,
                    keys: tuple[str, ...]) -> None:
    """The constraint's influence driven by the product of the handle's custom properties ``keys``."""
    _drive_by(obj, constraint, "influence", handle, keys)


def _drive_by(obj: bpy.types.Object, owner, path: str, handle: str, keys: tuple[str, ...]) -> None:
    """``owner``'s ``path`` driven by the product of the handle's custom properties ``keys`` (one key: its
    average, which Blender reads without an expression)."""
    driver = owner.driver_add(path).driver
    for key in keys:
        variable = driver.variables.new()
        variable.name = key
        variable.targets[0].id = obj
        variable.targets[0].data_path = f'pose.bones["{handle}"]["{key}"]'
    if len(keys) > 1:
        driver.type = "SCRIPTED"
        driver.expression = " * ".join(keys)
    else:
        driver.type = "AVERAGE"


def _shapes(obj: bpy.types.Object, wiring: list) -> None:
    """Wire shapes for the handles, poles and pole lines, in one hidden collection, as IK Rigger gives them."""
    collection = bpy.data.collections.new("Shapes")
    collection.hide_viewport = collection.hide_render = True
    bpy.context.scene.collection.children.link(collection)
    ring = [(math.cos(2 * math.pi * i / 24), 0.0, math.sin(2 * math.pi * i / 24)) for i in range(24)]
    diamond = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
    made = {}
    lines = any(entry[7] is not None for entry in wiring)
    for kind, points, edges in (
            ("handle", ring, [(i, (i + 1) % 24) for i in range(24)]),
            ("pole", diamond, [(a, b) for a in range(6) for b in range(a + 1, 6) if a // 2 != b // 2]),
            ("line", [(0, 0, 0), (0, 1, 0)], [(0, 1)])):
        if kind == "line" and not lines:
            continue
        mesh = bpy.data.meshes.new(kind)
        mesh.from_pydata(points, edges, [])
        made[kind] = bpy.data.objects.new(kind, mesh)
        collection.objects.link(made[kind])
    pose_bones = obj.pose.bones
    for _first, _last, _end, handle, _target, pole, _clone, line, _reach, _length, _angle in wiring:
        for name, kind, size in ((handle, "handle", 1.2), (pole, "pole", 0.4), (line, "line", 1.0)):
            if name is None:  # no pole line
                continue
            pose_bones[name].custom_shape = made[kind]
            pose_bones[name].custom_shape_scale_xyz = (size, size, size)


class BENCHMARK_OT_floor(bpy.types.Operator):
    """The floor as an operator: rig both legs and both arms of the active metarig, or the legs of the
    many-legged creature (``creature.py``) of ``legs`` legs"""

    bl_idname = "benchmark.floor"
    bl_label = "Floor: Rig Four Limbs"
    # As IK Rigger's operators: Blender pushes an undo step after each call.
    bl_options = {"REGISTER", "UNDO"}

    legs: bpy.props.IntProperty(name="Legs", description="0: the metarig's four limbs; else the creature's legs",
                                default=0, min=0)
    stretch: bpy.props.BoolProperty(name="Stretch", description="As IK Rigger's Maximum Stretch above 1",
                                    default=True)
    shapes: bpy.props.BoolProperty(name="Shapes", description="As IK Rigger's Bone Shapes", default=True)
    pole_lines: bpy.props.BoolProperty(name="Pole Lines", description="As IK Rigger's Pole Line", default=True)

    def execute(self, context: bpy.types.Context) -> set[str]:
        switches = {"stretch": self.stretch, "shapes": self.shapes, "pole_lines": self.pole_lines}
        if self.legs:
            rig_limbs(context.active_object, creature.legs(self.legs), origin=creature.ROOT, **switches)
        else:
            rig_four_limbs(context.active_object, **switches)
        return {"FINISHED"}


class BENCHMARK_OT_mode_switches(bpy.types.Operator):
    """The floor of Auto-Rig on a large armature: three mode switches (Edit, Object, back to Pose) and
    nothing else, as an operator (its call, undo step and scene update), from Pose mode"""

    bl_idname = "benchmark.mode_switches"
    bl_label = "Floor: Three Mode Switches"
    bl_options = {"REGISTER", "UNDO"}

    constraint: bpy.props.BoolProperty(
        name="One Constraint", default=False,
        description="And one Copy Rotation on the first bone, from the last: what any new constraint or driver "
                    "costs Blender beyond the switches (its dependency graph built again and the armature "
                    "evaluated in the scene update after the operator)")

    def execute(self, context: bpy.types.Context) -> set[str]:
        for mode in ("EDIT", "OBJECT", "POSE"):
            bpy.ops.object.mode_set(mode=mode)
        if self.constraint:
            obj = context.active_object
            constraint = obj.pose.bones[0].constraints.new("COPY_ROTATION")
            constraint.target, constraint.subtarget = obj, obj.pose.bones[-1].name
        return {"FINISHED"}


def register() -> None:
    bpy.utils.register_class(BENCHMARK_OT_floor)
    bpy.utils.register_class(BENCHMARK_OT_mode_switches)


def unregister() -> None:
    bpy.utils.unregister_class(BENCHMARK_OT_mode_switches)
    bpy.utils.unregister_class(BENCHMARK_OT_floor)
