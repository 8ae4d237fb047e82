"""Roblox's R15 avatar as it exports: one bone per body part, each named after it, the legs below the
lower torso and the arms straight below the upper torso (no clavicle): ``LowerTorso > LeftUpperLeg >
LeftLowerLeg > LeftFoot``, ``UpperTorso > LeftUpperArm > LeftLowerArm > LeftHand``."""

from __future__ import annotations

from helpers import evaluate, make_armature
from mathutils import Matrix
from test_detect import make_skeleton, reasons, summary

from ik_rigger import api
from ik_rigger.core.detect import ARM, LEG, detect_limbs


def r15() -> list:
    """(name, parent, head, tail) of an R15 avatar standing facing -Y, arms down, in its studs."""
    specs = [("HumanoidRootPart", None, (0, 0, 3.0), (0, 0, 3.5)),
             ("LowerTorso", "HumanoidRootPart", (0, 0, 3.0), (0, 0, 3.4)),
             ("UpperTorso", "LowerTorso", (0, 0, 3.4), (0, 0, 4.6)), ("Head", "UpperTorso", (0, 0, 4.6), (0, 0, 5.6))]
    for side, x in (("Left", 1.0), ("Right", -1.0)):
        specs += [
            (f"{side}UpperLeg", "LowerTorso", (0.5 * x, 0, 3.0), (0.5 * x, -0.05, 1.9)),
            (f"{side}LowerLeg", f"{side}UpperLeg", (0.5 * x, -0.05, 1.9), (0.5 * x, 0, 0.7)),
            (f"{side}Foot", f"{side}LowerLeg", (0.5 * x, 0, 0.7), (0.5 * x, -0.5, 0.2)),
            (f"{side}UpperArm", "UpperTorso", (1.2 * x, 0, 4.4), (1.3 * x, 0.05, 3.4)),
            (f"{side}LowerArm", f"{side}UpperArm", (1.3 * x, 0.05, 3.4), (1.35 * x, 0, 2.5)),
            (f"{side}Hand", f"{side}LowerArm", (1.35 * x, 0, 2.5), (1.35 * x, 0, 2.1)),
        ]
    return specs


EXPECTED = [(kind, side[0], (f"{side}Upper{part}", f"{side}Lower{part}"), f"{side}{end}")
            for kind, part, end in ((LEG, "Leg", "Foot"), (ARM, "Arm", "Hand")) for side in ("Left", "Right")]


def test_roblox_r15_limbs_are_found():
    detection = detect_limbs(make_skeleton(r15()))
    assert summary(detection) == EXPECTED, reasons(detection)
    assert detection.skipped == ()


def test_roblox_r15_legs_carry_the_foot_and_bend_the_knee_forward():
    obj = make_armature([(name, head, tail, parent, False) for name, parent, head, tail in r15()], mode="OBJECT")
    rest = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert skipped == [] and sorted(limb.name for limb in built) == sorted(chain[-1] for _, _, chain, _ in EXPECTED)
    assert all(obj.data.bones[name].matrix_local == matrix for name, matrix in rest.items())
    handle = obj.pose.bones[obj.ik_rigger.limb_of("LeftLowerLeg").handle]
    before = evaluate(obj)
    handle.matrix = Matrix.Translation((0.0, 0.0, 0.8)) @ handle.matrix
    after = evaluate(obj)
    assert (after["LeftFoot"].translation - after[handle.name].translation).length < 1e-4
    assert (after["LeftFoot"].translation - before["LeftFoot"].translation).z > 0.8 - 1e-4
    assert after["LeftLowerLeg"].translation.y - before["LeftLowerLeg"].translation.y < -0.2
