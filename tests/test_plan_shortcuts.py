"""Planning's shortcuts plan what the long way plans: parts skipped for their options (``Part.plans``),
bone options checked once per options, a derived name's first try made once per name."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import both_legs, make_armature

from ik_rigger import parts as limb_parts
from ik_rigger.core import naming
from ik_rigger.core.errors import RigError
from ik_rigger.limb import plan as limb_plan
from ik_rigger.limb.options import LimbOptions
from ik_rigger.rig.skeleton import read_skeleton

PLAIN = replace(LimbOptions(), shapes=False, pole_line=False, max_stretch=1.0)
EVERY_PART = replace(LimbOptions(), foot_roll=True, soft_ik=0.2, distance_limit="INSIDE", hinge_joints=True,
                     pole_line=True, max_stretch=2.0)
NO_POLE = replace(LimbOptions(), use_pole=False, copy_mode="TRANSFORMS", distance_limit="OUTSIDE",
                  distance_method="ITASC", max_stretch=1.0)


@pytest.mark.parametrize("options", [LimbOptions(), PLAIN, EVERY_PART, NO_POLE], ids=["default", "plain", "every",
                                                                                    "no-pole"])
def test_parts_skipped_for_their_options_would_have_planned_nothing(monkeypatch, options):
    skeleton = read_skeleton(make_armature(both_legs(), mode="OBJECT"))
    skipping = limb_plan.plan_limb(skeleton, "shin.L", options, set())
    # Every part called, as before parts said for which options they plan.
    monkeypatch.setattr(limb_parts, "PARTS", tuple(replace(part, plans=lambda options: True)
                                                   for part in limb_parts.PARTS))
    assert len(limb_plan._checked(options, "shin.L")[2]) == len(limb_parts.PARTS)
    assert limb_plan.plan_limb(skeleton, "shin.L", options, set()) == skipping


def test_a_plain_limb_skips_the_parts_its_options_turn_off():
    planned = set(limb_plan._checked(PLAIN, "shin.L")[2])
    skipped = {part.name for part in limb_parts.PARTS if part.plan not in planned}
    assert skipped == {"foot_roll", "stretch", "pole_line", "distance", "soft_ik", "hinge"}
    assert all(part.plan in set(limb_plan._checked(EVERY_PART, "shin.L")[2]) for part in limb_parts.PARTS)


def test_equal_options_made_apart_are_read_alike_and_refused_alike():
    planned = limb_plan._checked(replace(LimbOptions(), shapes=False, pole_line=False, max_stretch=1.0), "shin.L")
    assert planned == limb_plan._checked(PLAIN, "shin.L")
    # A value of another type equal to a good one (True for 1) is refused however often good ones came first.
    with pytest.raises(RigError, match="chain_length"):
        limb_plan._checked(replace(LimbOptions(), chain_length=True), "shin.L")


def test_a_bone_option_is_checked_for_each_options_handed_in_turn():
    skeleton = read_skeleton(make_armature(both_legs(), mode="OBJECT"))
    named = replace(LimbOptions(), extremity_mode="BONE", extremity_name="foot.L")
    wrong = replace(named, extremity_name="hand.L")
    for options in (named, wrong, named, LimbOptions(), wrong):
        if options is wrong:
            with pytest.raises(RigError, match="not a bone of this armature") as raised:
                limb_plan.plan_limb(skeleton, "shin.L", options, set())
            assert raised.value.bone == "hand.L"
        else:
            assert limb_plan.plan_limb(skeleton, "shin.L", options, set()).extremity == "foot.L"


def test_a_derived_name_is_free_short_enough_and_keeps_its_side_on_every_call():
    long_stem = "a" * 70
    for _ in range(2):  # the second call finds the first try made
        assert naming.derived_name("shin.L", "IK_pole", set()) == "shin_IK_pole.L"
        assert naming.derived_name("shin.L", "IK_pole", {"shin_IK_pole.L"}) == "shin_IK_pole2.L"
        long = naming.derived_name(f"{long_stem}.L", "IK", set())
        assert long.endswith("_IK.L") and len(long.encode()) <= naming.MAX_NAME_BYTES
        wide = naming.derived_name("左ひざ", "IK", set())
        assert wide == "左ひざ_IK"
        # A side glued to a word that is no limb's, read so only beside its twin: the name keeps it either way.
        assert naming.derived_name("lfoo", "IK", set(), {"lfoo", "rfoo"}) == "lfoo_IK"
        assert naming.derived_name("lfoo", "IK", {"lfoo_IK"}, {"lfoo"}) == "lfoo_IK2"
