"""DAZ Genesis 9: ``l_thigh > l_shin > l_foot``, ``l_upperarm > l_forearm > l_hand``, with its twist bones
off the chain, two childless siblings along each of the thigh, upper arm and forearm (``l_thightwist1``,
``l_thightwist2``), where Genesis 3 and 8 put theirs in it (``lThighBend > lThighTwist > lShin``)."""

from __future__ import annotations

from test_detect import FAMILIES, expected, human, make_skeleton, reasons, summary

from ik_rigger.core.detect import detect_limbs

TWISTED = ("thigh", "upperarm", "forearm")


def genesis9() -> list:
    specs = human(FAMILIES["daz genesis 9"])
    joints = {name: (head, tail) for name, _, head, tail in specs}

    def along(bone: str, fraction: float) -> tuple[float, float, float]:
        head, tail = joints[bone]
        return (head[0] + (tail[0] - head[0]) * fraction, head[1] + (tail[1] - head[1]) * fraction,
                head[2] + (tail[2] - head[2]) * fraction)

    for side in "lr":
        for segment in TWISTED:
            bone = f"{side}_{segment}"
            specs += [(f"{bone}twist1", bone, along(bone, 0.33), along(bone, 0.66)),
                      (f"{bone}twist2", bone, along(bone, 0.66), along(bone, 1.0))]
    return specs


def test_genesis9s_twist_bones_beside_the_chain_are_left_out():
    detection = detect_limbs(make_skeleton(genesis9()))
    assert summary(detection) == expected(FAMILIES["daz genesis 9"]), reasons(detection)
    assert detection.skipped == ()
    assert all(limb.halves == () for limb in detection.limbs)
