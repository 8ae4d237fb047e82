"""Rig a sample character headless: a rigged .blend and a picture of the rig.

The character is the Mixamo-named skeleton in tests/data (a real motion-capture
skeleton in centimetres). IK Rigger rigs both legs and both arms through its
Python API, saves the result as a new .blend and draws the rig at rest and posed.

    scripts/rig_sample.sh [--out DIR]                      (the project's bpy)
    blender --background --factory-startup --python scripts/rig_sample.py -- [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import bpy
from mathutils import Vector

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import ik_rigger  # noqa: E402
from ik_rigger.core.errors import RigError  # noqa: E402
from ik_rigger.core.plan import LimbOptions  # noqa: E402
from ik_rigger.rig.build import build_limbs  # noqa: E402

SKELETON = ROOT / "tests" / "data" / "mixamo_freebvh.bvh"
LIMBS = ("mixamorig:LeftLeg", "mixamorig:RightLeg", "mixamorig:LeftForeArm", "mixamorig:RightForeArm")


def arguments() -> argparse.Namespace:
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out", help="folder for the .blend and the picture")
    return parser.parse_args(argv)


def load_character() -> bpy.types.Object:
    """The sample skeleton, imported at rest into an empty scene."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.bvh(filepath=str(SKELETON))
    obj = bpy.context.active_object
    obj.name = "SampleCharacter"
    obj.animation_data_clear()
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis.identity()
    return obj


def pose_limbs(obj: bpy.types.Object) -> None:
    """Lift the left foot and reach forward with the right hand: the IK at work.

    Offsets are fractions of each limb's length (the skeleton is in centimetres).
    """
    rig = obj.ik_rigger
    moves = (("mixamorig:LeftLeg", Vector((0.0, -0.35, 0.4))), ("mixamorig:RightForeArm", Vector((0.2, -0.6, 0.4))))
    for last, fraction in moves:
        limb = rig.limb_of(last)
        length = sum(obj.data.bones[item.name].length for item in limb.chain)
        pose_bone = obj.pose.bones[limb.handle]
        matrix = pose_bone.matrix.copy()
        matrix.translation += fraction * length
        pose_bone.matrix = matrix


def main() -> int:
    args = arguments()
    ik_rigger.register()
    obj = load_character()
    try:
        plans = build_limbs(obj, [(last, LimbOptions()) for last in LIMBS])
    except RigError as error:
        print(f"rig_sample: {error.message}", file=sys.stderr)
        return 1
    for plan in plans:
        print(plan.describe())
    args.out.mkdir(parents=True, exist_ok=True)
    blend = args.out / "sample_rigged.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), check_existing=False)
    print(f"rig_sample: wrote {blend}")
    try:
        import rig_picture
    except ImportError as error:
        print(f"rig_sample: no picture ({error}); the project's environment has matplotlib: scripts/rig_sample.sh")
        return 0
    picture = rig_picture.draw_rig(obj, args.out / "sample_rig.png", posed=lambda: pose_limbs(obj),
                                   title="IK Rigger: sample character")
    print(f"rig_sample: wrote {picture}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
