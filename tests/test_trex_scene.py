"""Issue 34's point 5 on the real scene: Quaternius' T-rex with its mesh and its six clips, rigged,
saved (compressed), opened again (with its interface), and taken apart limb by limb the ways a user
does it (Remove IK Limb from Pose mode with the limb's bones selected, in one order or another; the
API; after a rebuild with a shorter chain, Auto-Rig run twice, undo and redo, Fix Bone Orientation): no driver is
left anywhere in the file, on the armature object, its data, the meshes or any other data, valid
or not, and no bone IK Rigger made."""

from __future__ import annotations

from pathlib import Path

import bpy
import pytest
from helpers import DATA

from ik_rigger import api
from ik_rigger.rig.selection import select_only

TREX = DATA / "gltf_quaternius_trex.glb"


def drivers_in_file() -> list[tuple[str, str, str, bool]]:
    """Every driver of every data-block the file holds (id, data path, whether Blender finds it valid)."""
    found = []
    for name in dir(bpy.data):
        collection = getattr(bpy.data, name, None)
        if name == "all_ids" or not isinstance(collection, bpy.types.bpy_prop_collection):
            continue
        for block in collection:
            data = getattr(block, "animation_data", None)
            if isinstance(block, bpy.types.ID) and data is not None:
                found.extend((repr(block), curve.data_path, curve.array_index, curve.is_valid)
                             for curve in data.drivers)
    return found


def _trex() -> bpy.types.Object:
    bpy.ops.import_scene.gltf(filepath=str(TREX))
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    assert len(bpy.data.actions) == 6 and any(item.type == "MESH" for item in bpy.data.objects)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def _reopened(path: Path) -> bpy.types.Object:
    bpy.ops.wm.save_as_mainfile(filepath=str(path), compress=True)
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=True)
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def _remove_from_pose_mode(obj: bpy.types.Object, limb: api.Limb) -> None:
    if obj.mode != "POSE":
        bpy.ops.object.mode_set(mode="POSE")
    select_only(obj, list(limb.chain), limb.chain[-1])
    assert bpy.ops.ik_rigger.remove_ik() == {"FINISHED"}


def _rig(obj: bpy.types.Object, how: str) -> None:
    bpy.ops.ed.undo_push(message="imported")
    bpy.ops.object.mode_set(mode="POSE")
    bpy.ops.ed.undo_push(message="pose mode")
    assert bpy.ops.ik_rigger.auto_rig(fix_orientation=how == "bones turned") == {"FINISHED"}
    bpy.ops.ed.undo_push(message="Auto-Rig Limbs")
    if how == "twice":
        assert bpy.ops.ik_rigger.auto_rig() == {"FINISHED"}
    elif how == "undo, redo":
        bpy.ops.ed.undo()
        bpy.ops.ed.redo()
    elif how == "rebuilt shorter":
        obj = bpy.context.object
        select_only(obj, ["BackLowLeg.L"], "BackLowLeg.L")
        assert bpy.ops.ik_rigger.build_ik(chain_length=2, both_sides=True) == {"FINISHED"}
        assert [len(limb.chain) for limb in api.limbs(obj) if limb.name.startswith("BackLowLeg")] == [2, 2]
        for limb in list(obj.ik_rigger.limbs):
            assert bpy.ops.ik_rigger.rebuild_limb(limb=limb.name) == {"FINISHED"}


@pytest.mark.parametrize("how", ["once", "twice", "undo, redo", "rebuilt shorter", "bones turned"])
@pytest.mark.parametrize("order", ["as listed", "reversed", "by the API"])
def test_removing_the_t_rexs_limbs_after_save_and_reload_leaves_no_driver(tmp_path, how, order):
    obj = _trex()
    bones = sorted(bone.name for bone in obj.data.bones)
    assert drivers_in_file() == []
    _rig(obj, how)
    assert len(api.limbs(bpy.context.object)) == 4 and drivers_in_file()
    obj = _reopened(tmp_path / "trex.blend")
    limbs = api.limbs(obj)
    assert len(limbs) == 4
    for limb in reversed(limbs) if order == "reversed" else limbs:
        if order == "by the API":
            api.remove(obj, limb.name)
        else:
            _remove_from_pose_mode(obj, limb)
    assert drivers_in_file() == []
    assert not obj.ik_rigger.limbs and sorted(bone.name for bone in obj.data.bones) == bones
