"""Meta's body-tracking skeleton (the Movement SDK's full body): ``FullBody_LeftUpperLeg >
FullBody_LeftLowerLeg > FullBody_LeftFootAnkleTwist > FullBody_LeftFootAnkle`` and ``FullBody_LeftArmUpper >
FullBody_LeftArmLower > FullBody_LeftHandWristTwist > FullBody_LeftHandWrist``.

The names and parents are those of its bone list (``OVRSkeleton.BoneId``, ``FullBody_*``); the joints stand
in ``test_detect.human``'s proportions, with each twist bone partway down the shin or forearm, in line with
it. The twist, named after the joint that ends the segment, is that segment's second half, and the
joint-named bone below it (``FootAnkle``, ``HandWrist``) the foot or hand."""

from __future__ import annotations

from helpers import evaluate, make_armature
from mathutils import Matrix, Vector
from test_detect import make_skeleton, reasons, summary
from test_detect_real import assert_handles_move_chain_ends

from ik_rigger import api
from ik_rigger.core import naming
from ik_rigger.core.detect import ARM, LEG, detect_limbs


def meta_body() -> list:
    """(name, parent, head, tail) of Meta's full-body bones that matter here, standing facing -Y."""
    specs = [("FullBody_Hips", None, (0, 0, 1.0), (0, 0, 1.1)),
             ("FullBody_SpineLower", "FullBody_Hips", (0, 0, 1.1), (0, 0, 1.2)),
             ("FullBody_Chest", "FullBody_SpineLower", (0, 0, 1.2), (0, 0, 1.4))]
    for side, x in (("Left", 1.0), ("Right", -1.0)):
        def name(word: str, side: str = side) -> str:
            return f"FullBody_{side}{word}"
        specs += [
            (name("UpperLeg"), "FullBody_Hips", (0.1 * x, 0, 0.98), (0.1 * x, -0.02, 0.55)),
            (name("LowerLeg"), name("UpperLeg"), (0.1 * x, -0.02, 0.55), (0.1 * x, -0.004, 0.19)),
            (name("FootAnkleTwist"), name("LowerLeg"), (0.1 * x, -0.004, 0.19), (0.1 * x, 0, 0.1)),
            (name("FootAnkle"), name("FootAnkleTwist"), (0.1 * x, 0, 0.1), (0.1 * x, -0.05, 0.05)),
            (name("FootSubtalar"), name("FootAnkle"), (0.1 * x, -0.05, 0.05), (0.1 * x, -0.08, 0.04)),
            (name("FootTransverse"), name("FootSubtalar"), (0.1 * x, -0.08, 0.04), (0.1 * x, -0.12, 0.03)),
            (name("FootBall"), name("FootTransverse"), (0.1 * x, -0.12, 0.03), (0.1 * x, -0.2, 0.03)),
            (name("Shoulder"), "FullBody_Chest", (0.03 * x, 0, 1.42), (0.1 * x, 0, 1.42)),
            (name("Scapula"), name("Shoulder"), (0.1 * x, 0, 1.42), (0.18 * x, 0, 1.42)),
            (name("ArmUpper"), name("Scapula"), (0.18 * x, 0, 1.42), (0.45 * x, 0.02, 1.42)),
            (name("ArmLower"), name("ArmUpper"), (0.45 * x, 0.02, 1.42), (0.65 * x, 0.004, 1.42)),
            (name("HandWristTwist"), name("ArmLower"), (0.65 * x, 0.004, 1.42), (0.7 * x, 0, 1.42)),
            (name("HandWrist"), name("HandWristTwist"), (0.7 * x, 0, 1.42), (0.75 * x, 0, 1.42)),
            (name("HandPalm"), name("HandWrist"), (0.75 * x, 0, 1.42), (0.8 * x, 0, 1.42)),
        ]
    return specs


def _expected() -> list:
    rows = []
    for kind, words in ((LEG, ("UpperLeg", "LowerLeg", "FootAnkleTwist", "FootAnkle")),
                        (ARM, ("ArmUpper", "ArmLower", "HandWristTwist", "HandWrist"))):
        for side in ("Left", "Right"):
            names = [f"FullBody_{side}{word}" for word in words]
            rows.append((kind, side[0], tuple(names[:3]), names[3]))
    return rows


def test_metas_body_skeleton_limbs_end_at_their_ankle_and_wrist():
    detection = detect_limbs(make_skeleton(meta_body()))
    assert summary(detection) == _expected(), reasons(detection)
    assert detection.skipped == ()
    assert [limb.halves for limb in detection.limbs] == [(chain[2],) for _, _, chain, _ in _expected()]


def test_metas_names_mirror_past_their_lead_in():
    assert naming.flip_name("FullBody_LeftFootAnkleTwist") == "FullBody_RightFootAnkleTwist"
    assert naming.split_side("FullBody_RightArmLower").side == naming.RIGHT


def test_metas_body_skeleton_is_rigged_with_the_foot_on_the_handle():
    specs = meta_body()
    obj = make_armature([(name, head, tail, parent, False) for name, parent, head, tail in specs], mode="OBJECT")
    rest = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert skipped == []
    lasts = sorted(chain[-1] for _, _, chain, _ in _expected())
    assert sorted(limb.name for limb in built) == lasts
    for name, matrix in rest.items():
        assert (obj.data.bones[name].matrix_local.translation - matrix.translation).length < 1e-6
    assert_handles_move_chain_ends(obj, {last: 3 for last in lasts})
    # The handle lifted: the foot goes with it, and the knee bends forward (-Y), the twist in line.
    handle = obj.pose.bones[obj.ik_rigger.limb_of("FullBody_LeftFootAnkleTwist").handle]
    before = evaluate(obj)
    handle.matrix = Matrix.Translation((0.0, 0.0, 0.2)) @ handle.matrix
    after = evaluate(obj)
    foot, knee = "FullBody_LeftFootAnkle", "FullBody_LeftLowerLeg"
    assert (after[foot].translation - after[handle.name].translation).length < 1e-4
    assert (after[foot].translation - before[foot].translation - Vector((0.0, 0.0, 0.2))).length < 1e-4
    assert after[knee].translation.y - before[knee].translation.y < -0.05
    twist = after["FullBody_LeftFootAnkleTwist"].to_3x3() @ Vector((0.0, 1.0, 0.0))
    assert twist.angle(after[knee].to_3x3() @ Vector((0.0, 1.0, 0.0))) < 0.03
