"""F3 finds an operator only in a menu (Blender 2.90 and later), and IK Rigger's menu sat in Pose and Edit
mode's: an animator with the armature selected in Object mode typed "snap" and found nothing. The Object
menu and its context menu now hold IK Rigger's operators that work there, and each runs from Object mode
on a rigged armature, as from the API, leaving it in Object mode."""

from __future__ import annotations

from types import SimpleNamespace

import bpy
import pytest
from helpers import chain_length, evaluate, import_bvh
from mathutils import Euler
from test_after_rigging_autokey import CHAIN, _arm, _same

from ik_rigger import ui

_WANTED = {"ik_rigger.auto_rig", "ik_rigger.snap_fk_to_ik", "ik_rigger.snap_ik_to_fk", "ik_rigger.bake",
           "ik_rigger.switch_parent", "ik_rigger.plant_feet", "ik_rigger.export"}


class _Layout:
    """Records what a menu's draw puts in it."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    def separator(self) -> None:
        self.log.append(("separator", ""))

    def menu(self, idname: str, **kwargs) -> None:
        self.log.append(("menu", idname))

    def operator(self, idname: str, **kwargs) -> None:
        module, name = idname.split(".")
        assert module == "ik_rigger" and hasattr(bpy.ops.ik_rigger, name), idname
        self.log.append(("operator", idname))


def _drawn(draw, context) -> list[tuple[str, str]]:
    layout = _Layout()
    draw(SimpleNamespace(layout=layout), context)
    return layout.log


@pytest.fixture
def walker() -> bpy.types.Object:
    """The motion-capture walk of tests/data, active and in Object mode, rigged by Auto-Rig Limbs run from there."""
    obj = import_bvh("pymo_walk.bvh")
    bpy.context.view_layer.objects.active = obj
    assert obj.mode == "OBJECT"
    assert bpy.ops.ik_rigger.auto_rig(parent_switch=True) == {"FINISHED"}
    assert obj.mode == "OBJECT" and len(obj.ik_rigger.limbs) == 4
    obj.data.bones.active = obj.data.bones["LeftForeArm"]
    return obj


def test_the_object_menus_hold_ik_rigger_s_menu_for_an_armature_and_f3_finds_its_operators(walker):
    for host in ("VIEW3D_MT_object", "VIEW3D_MT_object_context_menu"):
        assert ui._draw_object_menu in getattr(bpy.types, host).draw._draw_funcs, host
    assert ("menu", "IKRIG_MT_object_menu") in _drawn(ui._draw_object_menu, bpy.context)
    drawn = {idname for kind, idname in _drawn(ui.IKRIG_MT_object_menu.draw, bpy.context) if kind == "operator"}
    assert drawn >= _WANTED
    # Every operator it holds runs in Object mode on the rigged armature (Upgrade Rig: on an older rig only).
    assert walker.mode == "OBJECT"
    for idname in sorted(drawn - {"ik_rigger.upgrade_rig"}):
        assert getattr(bpy.ops.ik_rigger, idname.split(".")[1]).poll(), idname
    # Nothing for a mesh.
    bpy.ops.mesh.primitive_cube_add()
    assert bpy.context.active_object.type == "MESH"
    assert _drawn(ui._draw_object_menu, bpy.context) == []


def test_snap_bake_and_switch_parent_run_from_object_mode(walker):
    handle = walker.pose.bones["LeftHand_IK"]
    scene = bpy.context.scene
    # Bake IK/FK, IK to FK: the chain's own keys play what the IK played, frame by frame.
    played = {}
    for frame in range(1, 7):
        scene.frame_set(frame)
        played[frame] = _arm(walker)
    assert bpy.ops.ik_rigger.bake(direction="IK_TO_FK", frame_start=1, frame_end=6) == {"FINISHED"}
    assert walker.mode == "OBJECT"
    for frame in range(1, 7):
        scene.frame_set(frame)
        assert handle["ik_fk"] == 0.0
        assert _same(walker, _arm(walker), played[frame]), frame
    # Snap IK to FK: the arm posed in FK, the IK takes it and the limb switches to IK without a jump.
    scene.frame_set(5)
    for name, turn in zip(CHAIN, [(0.0, 0.3, -0.6), (0.0, 0.0, 1.1), (0.2, 0.0, 0.0)]):
        walker.pose.bones[name].matrix_basis = Euler(turn).to_matrix().to_4x4()
    fk = _arm(walker)
    assert bpy.ops.ik_rigger.snap_ik_to_fk() == {"FINISHED"}
    assert handle["ik_fk"] == 1.0 and _same(walker, _arm(walker), fk)
    # Switch Parent: the handle follows parent 1, the arm stays where it is.
    before = _arm(walker)
    assert bpy.ops.ik_rigger.switch_parent(limb="LeftForeArm", parent=1) == {"FINISHED"}
    assert handle["parent"] == 1 and _same(walker, _arm(walker), before)
    # Snap FK to IK: the handle moved, FK takes the IK pose and the limb switches to FK without a jump.
    handle.location.z += 0.1 * chain_length(walker, CHAIN[:2])
    ik = _arm(walker)
    assert bpy.ops.ik_rigger.snap_fk_to_ik() == {"FINISHED"}
    assert handle["ik_fk"] == 0.0 and _same(walker, _arm(walker), ik)
    assert walker.mode == "OBJECT"


def test_plant_feet_and_the_export_run_from_object_mode(walker, tmp_path):
    """Plant Feet lifts the feet onto a ground above them; the export writes the file; Object mode stays."""
    feet = ("LeftFoot", "RightFoot")
    world = walker.matrix_world

    def lowest() -> float:
        pose = evaluate(walker)
        return min((world @ pose[name].translation).z for name in feet)

    size = max(walker.dimensions)
    before = lowest()
    mesh = bpy.data.meshes.new("Ground")
    half = 10.0 * size
    mesh.from_pydata([(-half, -half, 0.0), (half, -half, 0.0), (half, half, 0.0), (-half, half, 0.0)], [],
                     [(0, 1, 2, 3)])
    ground = bpy.data.objects.new("Ground", mesh)
    bpy.context.scene.collection.objects.link(ground)
    ground.location.z = before + 0.05 * size
    bpy.context.view_layer.objects.active = walker
    assert bpy.ops.ik_rigger.plant_feet(ground="Ground") == {"FINISHED"}
    assert walker.mode == "OBJECT" and lowest() > before + 0.02 * size
    path = tmp_path / "walk.glb"
    assert bpy.ops.ik_rigger.export(filepath=str(path)) == {"FINISHED"}
    assert path.is_file() and walker.mode == "OBJECT"
