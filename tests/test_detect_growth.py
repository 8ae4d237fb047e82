"""Detection's work grows with the legs of a body, not their square: Auto-Rig on a many-legged
creature pays for it before the build, once per leg."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest
from mathutils import Vector
from test_growth import creature

from ik_rigger.core import detect
from ik_rigger.core.detect import detect_limbs
from ik_rigger.core.model import BoneInfo, Skeleton
from ik_rigger.limb.options import LimbOptions
from ik_rigger.limb.requests import detected_requests

DETECT = str(Path(detect.__file__).resolve())


def steps(skeleton: Skeleton) -> int:
    """The Python and built-in calls ``detect_limbs`` makes from ``core/detect.py`` itself (each turn of a
    generator counts): what it does over the limbs it found, beside reading each limb."""
    made = 0

    def count(frame, event: str, _arg) -> None:
        nonlocal made
        if event in ("call", "c_call") and frame.f_code.co_filename == DETECT:
            made += 1

    sys.setprofile(count)
    try:
        detection = detect_limbs(skeleton, tails_fixed=True)
    finally:
        sys.setprofile(None)
    assert len(detection.limbs) == len([name for name in skeleton.bones if name.startswith("shin_")])
    return made


def test_detection_steps_per_leg_stay_level_as_the_legs_grow():
    """Every found chain was compared with every other (is it inside one?) and every numbered leg's root
    with the others of its side (do two start at one place?): 32 legs took 1,773 steps, 512 legs 335,133.
    Now each chain is compared with those holding its first bone, each root with those near it: 1,308 and
    20,508."""
    few, many = steps(creature(16)), steps(creature(256))
    assert many / 512 <= 1.2 * few / 32, (few, many)


@pytest.mark.parametrize("distance", [0.0, 0.01, 2.5])
def test_two_points_within_the_distance_are_found_across_the_grid(distance):
    """The grid finds a pair however it falls on its cells (either side of a cell's edge, below zero),
    and no pair further apart than ``distance``, the same answer as comparing every two points."""
    base = [Vector((x * 3.1 * max(distance, 1.0), -y * 2.7 * max(distance, 1.0), 0.5)) for x in range(-3, 4)
            for y in range(4)]
    assert not detect._any_within(base, distance)
    for offset in (Vector((distance, 0.0, 0.0)), Vector((0.0, -distance, 0.0)),
                   Vector((0.6, 0.6, -0.5)).normalized() * distance):
        for point in (base[0], base[9], base[-1]):
            assert detect._any_within([*base, point + offset * 0.999], distance)
            if distance:
                assert not detect._any_within([*base, point + offset * 1.001], distance)


def test_a_chain_inside_another_found_one_is_that_limbs_part():
    """Leg1 > Leg2 within Leg1 > Leg2 > Leg3 is left out; chains that only share bones stay."""
    limbs = [detect.DetectedLimb(detect.LEG, "L", chain, None) for chain in
             (("a", "b"), ("a", "b", "c"), ("b", "c"), ("x", "b", "c", "d"), ("p", "q"), ("q", "r"))]
    assert [limb.chain for limb in detect._outermost(limbs)] == [
        ("a", "b", "c"), ("x", "b", "c", "d"), ("p", "q"), ("q", "r")]


def test_a_skeleton_of_one_bone_has_no_limbs():
    skeleton = Skeleton({"root": BoneInfo("root", None, Vector(), Vector((0, 1, 0)), Vector((1, 0, 0)),
                                          Vector((0, 0, 1)))})
    assert not detect_limbs(skeleton).limbs


def test_detected_options_are_the_defaults_with_what_detection_found():
    """Made without ``dataclasses.replace``, each request's options are what it would make, equal and
    hashed alike, of the options' own class, the defaults left as they were."""
    skeleton = creature(4)
    defaults = LimbOptions(shapes=False, max_stretch=1.2)
    requests, detection = detected_requests(skeleton, defaults)
    assert len(requests) == len(detection.limbs) == 8
    for (last, options), limb in zip(requests, detection.limbs):
        expected = replace(defaults, chain_length=len(limb.chain), extremity_mode="BONE",
                           extremity_name=limb.extremity)
        assert last == limb.last and type(options) is LimbOptions
        assert options == expected and hash(options) == hash(expected)
    assert defaults == LimbOptions(shapes=False, max_stretch=1.2)
    assert [limb.pair for limb in detection.limbs] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert not hasattr(LimbOptions, "__post_init__")  # nothing checked on being made, which the copy would skip
