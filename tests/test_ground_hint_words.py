"""Plant Feet with no ground picked says where to pick it as the sidebar shows it: the IK Rigger tab's
Ground panel (it said 'the sidebar's Ground box', which the sidebar has none of)."""

from __future__ import annotations

import pytest
from helpers import both_legs, make_armature

from ik_rigger import api, ui


def test_no_ground_picked_names_the_tab_and_panel_to_pick_it_in():
    obj = make_armature(both_legs(), mode="OBJECT")
    api.build(obj, "shin.L", both_sides=True)
    with pytest.raises(api.RigError) as raised:
        api.plant_feet(obj, None)
    assert "in the sidebar's IK Rigger tab, Ground panel" in str(raised.value)
    assert ui.IKRIG_PT_ground.bl_label == "Ground" and ui.IKRIG_PT_ground.bl_category == "IK Rigger"
