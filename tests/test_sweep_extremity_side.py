"""An extremity named on the other side (a mirrored name mistyped: the left leg's extremity given as the
right foot) is refused by name, changing nothing: built, the right foot followed the left leg's handle.
One of the chain's own side, or one whose name says no side, still builds."""

from __future__ import annotations

import pytest
from helpers import both_legs, import_bvh, make_armature, same, snapshot

from ik_rigger import api


def test_the_other_sides_foot_is_refused_as_the_extremity():
    obj = make_armature(both_legs())
    before = snapshot(obj)
    with pytest.raises(api.RigError, match=r"'foot\.R': is on the other side \(R\) from the chain thigh\.L > "
                                           r"shin\.L \(L\)"):
        api.build(obj, "shin.L", both_sides=False, extremity_mode="BONE", extremity_name="foot.R")
    assert same(snapshot(obj), before)


@pytest.mark.parametrize("extremity", ["foot.L", "toe.L"])
def test_a_foot_of_the_chains_own_side_builds(extremity):
    obj = make_armature(both_legs())
    built = api.build(obj, "shin.L", both_sides=True, extremity_mode="BONE", extremity_name=extremity)
    assert [limb.extremity for limb in built] == [extremity, extremity.replace(".L", ".R")]


def test_mixamos_other_foot_is_refused_too():
    obj = import_bvh("mixamo_freebvh.bvh")
    with pytest.raises(api.RigError, match="is on the other side"):
        api.build(obj, "mixamorig:LeftLeg", both_sides=False, extremity_mode="BONE",
                  extremity_name="mixamorig:RightFoot")
    assert not obj.ik_rigger.limbs
