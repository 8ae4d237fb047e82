"""Run in a fresh Blender by ``tests/test_packaging.py``: an animator's session with the extension
as Blender installs it from the zip, never the repository's copy.

Installs the zip into the user repository, imports a motion capture, auto-rigs it from Pose mode,
poses an IK handle, snaps and exports; then turns the extension off (the rig must still pose),
on again (its limbs are read from the file as before) and removes a limb. Prints ``MARKER`` when
every check held; a failed check prints what it found and exits 1.

Usage: python installed_workflow.py ZIP CAPTURE.bvh OUTPUT_FOLDER
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import bpy

MODULE = "bl_ext.user_default.ik_rigger"
MARKER = "IK_RIGGER_INSTALLED_WORKFLOW_OK"


def leave(code: int) -> None:
    # Blender 4.2's bpy module crashes in its C exit handlers once classes with methods are
    # registered: skip them, so the exit code reports the checks.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def check(condition: bool, message: str) -> None:
    if not condition:
        print("installed workflow check failed: " + message, file=sys.stderr)
        leave(1)


def foot_off_handle(obj: bpy.types.Object, limb_name: str, handle: str, chain: list[str]) -> float:
    """Move ``handle`` a tenth of the chain toward the chain's root; how far the chain's end then is
    from it, as a share of the chain's length (after a depsgraph update)."""
    bones = obj.pose.bones
    length = sum(obj.data.bones[name].length for name in chain)
    control = bones[handle]
    toward_root = (bones[chain[0]].head - control.head).normalized() * 0.1 * length
    matrix = control.matrix.copy()
    matrix.translation += toward_root
    control.matrix = matrix
    bpy.context.view_layer.update()
    end = bones[chain[-1]].tail
    return (end - bones[handle].head).length / length


def main() -> None:
    zip_path, capture, output = sys.argv[-3], sys.argv[-2], Path(sys.argv[-1])
    result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default",
                                                      enable_on_install=True)
    check(result == {"FINISHED"}, f"install returned {result}")
    check(MODULE in bpy.context.preferences.addons, f"{MODULE} is not enabled")
    extensions = Path(bpy.utils.user_resource("EXTENSIONS")).resolve()
    check(Path(sys.modules[MODULE].__file__).resolve().is_relative_to(extensions),
          f"{MODULE} loaded from {sys.modules[MODULE].__file__}")

    bpy.ops.import_anim.bvh(filepath=capture)
    obj = bpy.context.active_object
    check(obj is not None and obj.type == "ARMATURE", f"the capture gave {obj}")
    bpy.ops.object.mode_set(mode="POSE")
    result = bpy.ops.ik_rigger.auto_rig()
    check(result == {"FINISHED"}, f"Auto-Rig returned {result}")
    api = importlib.import_module(MODULE + ".api")
    limbs = {limb.name: (limb.bones["HANDLE"], list(limb.chain)) for limb in api.limbs(obj)}
    check(len(limbs) == 4, f"Auto-Rig rigged {sorted(limbs)}")
    leg = next(name for name in limbs if "LeftLeg" in name)
    handle, chain = limbs[leg]
    check(len(chain) == 2, f"the left leg's chain is {chain}")
    off = foot_off_handle(obj, leg, handle, chain)
    check(off < 1e-3, f"the installed rig's shin ends {off:.4f} of the leg from its handle")

    check(bool(api.snap_limb(obj, leg, "FK")), "Snap FK to IK changed nothing")
    api.snap_limb(obj, leg, "IK")  # back in IK, where the handle leads
    report = api.export(obj, str(output / "installed.glb"))
    check((output / "installed.glb").stat().st_size > 0 and report.joints, f"the export wrote {report}")

    bpy.ops.object.mode_set(mode="OBJECT")
    result = bpy.ops.preferences.addon_disable(module=MODULE)
    check(result == {"FINISHED"}, f"turning the extension off returned {result}")
    check(bpy.types.Operator.bl_rna_get_subclass_py("IK_RIGGER_OT_auto_rig") is None,
          "the extension's operators stay after turning it off")
    check(not hasattr(obj, "ik_rigger"), "the armature's IK Rigger settings stay after turning it off")
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    off = foot_off_handle(obj, leg, handle, chain)
    check(off < 1e-3, f"with the extension off, the shin ends {off:.4f} of the leg from its handle")

    bpy.ops.object.mode_set(mode="OBJECT")
    result = bpy.ops.preferences.addon_enable(module=MODULE)
    check(result == {"FINISHED"}, f"turning the extension on again returned {result}")
    check(len(obj.ik_rigger.limbs) == 4, f"on again, the armature has {len(obj.ik_rigger.limbs)} limbs")
    api = importlib.import_module(MODULE + ".api")
    api.remove(obj, leg)
    check(len(obj.ik_rigger.limbs) == 3 and handle not in obj.data.bones,
          f"Remove left {len(obj.ik_rigger.limbs)} limbs, handle there: {handle in obj.data.bones}")
    print(MARKER)
    leave(0)


main()
