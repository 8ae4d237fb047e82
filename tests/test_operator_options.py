"""The build operators pass IK Rigger the options the call set (or the redo panel changed) alone: every
other one's property stands at its default, which is the option's own default to the bit."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs, make_armature

from ik_rigger import api
from ik_rigger.limb.options import LimbOptions, schema


@pytest.mark.parametrize("operator", ["auto_rig", "build_ik"])
def test_every_option_property_defaults_to_the_options_default(operator):
    """Blender keeps a float property's default in single precision: each default reads back unchanged, so
    an option left unset is the same whether read from the operator or left to ``LimbOptions``."""
    defaults = LimbOptions()
    properties = getattr(bpy.ops.ik_rigger, operator).get_rna_type().properties
    for declared in schema():
        prop = properties[declared.name]
        assert prop.default == getattr(defaults, declared.name), declared.name
        assert type(prop.default) is type(getattr(defaults, declared.name)), declared.name


@pytest.mark.parametrize("given", [{}, {"shapes": False, "max_stretch": 1.0}, {"pole_distance": 0.75}])
def test_auto_rig_passes_the_options_it_was_given(monkeypatch, given):
    """What the call sets reaches ``api.auto_rig``, and nothing else; the legs are rigged with them."""
    obj = make_armature(both_legs(), mode="POSE")
    passed: list[dict[str, object]] = []
    real = api.auto_rig

    def recorded(obj_, **values):
        passed.append({key: value for key, value in values.items() if key not in ("skipped", "notes")})
        return real(obj_, **values)

    monkeypatch.setattr(api, "auto_rig", recorded)
    assert bpy.ops.ik_rigger.auto_rig(**given) == {"FINISHED"}
    assert passed == [given]
    assert [limb.name for limb in obj.ik_rigger.limbs] == ["shin.L", "shin.R"]
    stored = obj.ik_rigger.limbs["shin.L"].to_options()
    for key, value in given.items():
        assert getattr(stored, key) == pytest.approx(value), key
    assert stored.chain_length == 2 and stored.extremity_name == "foot.L"
