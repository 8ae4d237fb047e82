"""The batch config: what it accepts and how it says what is wrong."""

from __future__ import annotations

import pytest

from ik_rigger.core.config import load_config, parse_config
from ik_rigger.core.errors import RigError


def test_defaults_and_limbs():
    config = parse_config("""
[defaults]
copy_mode = "TRANSFORMS"
pole_distance = 1

[[armature]]
name = "Hero*"
file = "hero_*.blend"
detect = false

[[armature.limb]]
last = "shin.L"
both_sides = true
pole_parent = "HANDLE"
""")
    assert config.defaults.copy_mode == "TRANSFORMS" and config.defaults.pole_distance == 1.0
    section = config.for_armature("HeroRig", "hero_01.blend")
    assert section is not None and not section.detect
    limb = section.limbs[0]
    assert limb.last == "shin.L" and limb.both_sides
    assert limb.options.pole_parent == "HANDLE" and limb.options.copy_mode == "TRANSFORMS"
    assert config.for_armature("HeroRig", "villain.blend") is None
    assert not config.names_armature("HeroRig", "hero_01.blend")


@pytest.mark.parametrize("text,message", [
    ("[defaults]\ncolour = 1\n", "unknown option 'colour'"),
    ("[defaults]\nchain_length = 2.5\n", "option 'chain_length' should be int"),
    ("[defaults]\nuse_pole = 1\n", "option 'use_pole' should be bool"),
    ("[rigs]\n", "unknown section"),
    ("[[armature]]\nnme = 'x'\n", "unknown key(s) nme"),
    ("[[armature]]\n[[armature.limb]]\nchain_length = 3\n", "needs 'last'"),
    ("[defaults\n", "not valid TOML"),
])
def test_mistakes_name_what_and_where(text, message):
    with pytest.raises(RigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config(text, "rig.toml")


def test_missing_file(tmp_path):
    with pytest.raises(RigError, match="cannot read the config file"):
        load_config(tmp_path / "nope.toml")
