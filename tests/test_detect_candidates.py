"""Detection's first look at every bone name, made through all of them at once: the same names as
reading each one alone."""

from __future__ import annotations

import re

from ik_rigger.core import naming
from ik_rigger.core.detect_names import ik_candidates, lower_candidates
from ik_rigger.core.detect_words import NUMBERED, RULE_OF_LOWER

NAMES = [
    "root", "shin.L", "shin.R", "Fore_Arm_L", "forearm.R.001", "DEF-thigh.L", "prop_01", "mixamorig:LeftLeg",
    "CalfTwist", "leg_joint_L_2", "upper_arm.L", "Bip01 L Calf", "左ひざ", "右ひじ", "ＬｅｇＬ", "頭", "Ｈｅａｄ",
    "elbow_elbow.L", "IK_foot.L", "ik_hand_gun", "Bike_Seat", "spine", "ＩＫ足.L", "face_lip.L", "lower_teeth",
    "Knee", "",
]


def _one_by_one(name: str) -> bool:
    """A lower bone's word in the name's letters, the name read alone."""
    words = "|".join(map(re.escape, {*RULE_OF_LOWER, *NUMBERED}))
    return re.search(words, re.sub("[^a-z]", "", naming.english(name).lower())) is not None


def test_the_names_that_may_be_a_lower_bone_are_those_each_name_alone_gives():
    found = lower_candidates(NAMES)
    assert found == [name for name in NAMES if _one_by_one(name)]
    # Plain, glued, Japanese (knee, elbow, leg) and full-width names; each once, in order.
    assert found == ["shin.L", "shin.R", "Fore_Arm_L", "forearm.R.001", "mixamorig:LeftLeg", "CalfTwist",
                     "leg_joint_L_2", "upper_arm.L", "Bip01 L Calf", "左ひざ", "右ひじ", "ＬｅｇＬ", "elbow_elbow.L",
                     "ＩＫ足.L", "Knee"]
    assert lower_candidates(["prop_01", "spine"]) == [] and lower_candidates([]) == []


def test_the_names_that_may_name_an_ik_bone_hold_ik_in_any_case():
    found = ik_candidates(NAMES)
    assert found == [name for name in NAMES if "ik" in name.lower()]
    assert found == ["IK_foot.L", "ik_hand_gun", "Bike_Seat"]  # as before, not a full-width ＩＫ
