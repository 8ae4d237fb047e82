"""Build options are declared once (limb.options) and everything else comes from that declaration."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import bpy
import pytest

from ik_rigger import parts as limb_parts
from ik_rigger import props
from ik_rigger.core.errors import RigError
from ik_rigger.limb import options


def test_every_option_reaches_the_operators_the_record_and_the_sidebar_as_declared():
    declared = list(options.schema())
    assert [entry.name for entry in declared] == [field for field in options.LimbOptions.__dataclass_fields__]
    for rna in (bpy.ops.ik_rigger.build_ik.get_rna_type(), bpy.ops.ik_rigger.auto_rig.get_rna_type(),
                props.IKRIG_PG_limb.bl_rna, props.IKRIG_PG_build_settings.bl_rna):
        for entry in declared:
            prop = rna.properties[entry.name]
            assert prop.name == entry.option.label and prop.description == entry.option.description
            if entry.option.items:
                assert [item.identifier for item in prop.enum_items] == [item[0] for item in entry.option.items]
                assert prop.default == entry.default
            elif entry.kind == "float":
                assert prop.default == pytest.approx(entry.default)
            else:
                assert prop.default == entry.default, entry.name


def test_settings_round_trip_to_plain_options():
    obj = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    settings = obj.ik_rigger.build_settings
    chosen = options.LimbOptions(chain_length=3, pole_parent="HANDLE", extremity_mode="BONE",
                                 extremity_name="paw.L", pole_angle=0.5, animation="FK", hinge_joints=True)
    settings.set_options(chosen)
    assert settings.to_options() == chosen


@pytest.mark.parametrize("change, message", [
    ({"copy_mode": "SCALE"}, "unknown extremity copies 'SCALE'.*Use one of: ROTATION, ROTATION_SCALE"),
    ({"pole_distance": math.nan}, "pole_distance must be a finite number"),
    ({"iterations": 0}, "iterations 0 is outside 1 to 10000"),
    ({"chain_length": 300}, "longer than Blender's IK allows|outside 2 to 255"),
    ({"animation": "bake"}, "unknown animation 'bake'"),
])
def test_values_outside_the_declaration_are_refused(change, message):
    with pytest.raises(RigError, match=message):
        options.check(options.LimbOptions(**change), "shin.L")


def test_a_chain_longer_than_blenders_ik_is_refused_not_clamped():
    from helpers import both_legs, make_armature, same, set_active_bone, snapshot

    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    before = snapshot(obj)
    with pytest.raises(RuntimeError, match="255"):
        bpy.ops.ik_rigger.build_ik(chain_length=300)
    assert same(snapshot(obj), before)


def test_the_type_checker_sees_every_part_s_options_in_their_order():
    """``LimbOptions`` is assembled from the registry at run time; the class the type checker reads
    instead must name every registered part's ``Options``, last part first (a dataclass's order)."""
    tree = ast.parse(Path(options.__file__).read_text())
    spelled = next(node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == "LimbOptions")
    assert [base.value.id for base in spelled.bases] == list(reversed(limb_parts.REGISTERED))
    assert all(base.attr == "Options" for base in spelled.bases)
