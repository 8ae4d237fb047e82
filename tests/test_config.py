"""The batch config: what it accepts, checked against the build options' own declaration."""

from __future__ import annotations

import inspect
import math

import bpy
import pytest

from ik_rigger import api, props
from ik_rigger.batch.command import config_schema
from ik_rigger.core.errors import RigError
from ik_rigger.limb import options
from ik_rigger.limb.config import LimbRequest, load_config, parse_config

SCHEMA = config_schema()


def parse(text: str):
    return parse_config(text, SCHEMA, "rig.toml")


def test_defaults_limbs_and_importer_settings():
    config = parse("""
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

[import.fbx]
global_scale = 0.01
""")
    assert config.defaults.copy_mode == "TRANSFORMS" and config.defaults.pole_distance == 1.0
    section = config.for_armature("HeroRig", "hero_01.blend")
    assert section is not None and not section.detect
    limb = section.limbs[0]
    assert limb.last == "shin.L" and limb.both_sides
    assert limb.options.pole_parent == "HANDLE" and limb.options.copy_mode == "TRANSFORMS"
    assert config.for_armature("HeroRig", "villain.blend") is None
    assert config.imports == {"fbx": {"global_scale": 0.01}}


def test_the_schema_is_the_build_options_declaration():
    """Ranges and allowed values come from the options' one declaration, which the panel shows too."""
    declared = {entry.name: entry.option for entry in options.schema()}
    assert SCHEMA.options["pole_distance"].minimum == declared["pole_distance"].minimum
    assert SCHEMA.options["iterations"].maximum == declared["iterations"].maximum
    assert SCHEMA.options["copy_mode"].items == tuple(item[0] for item in declared["copy_mode"].items)
    assert set(SCHEMA.options) == set(declared)
    # The panel's property says the same.
    shown = props.LimbSettings.__annotations__["iterations"].keywords
    assert (shown["min"], shown["max"]) == (SCHEMA.options["iterations"].minimum, SCHEMA.options["iterations"].maximum)
    assert SCHEMA.both_sides.kind == "bool"


def test_both_sides_is_declared_once_for_the_operator_the_sidebar_the_api_and_the_config():
    declared = options.BOTH_SIDES
    found = {"operator": bpy.ops.ik_rigger.build_ik.get_rna_type().properties["both_sides"],
             "sidebar": bpy.types.Object.bl_rna.properties["ik_rigger"].fixed_type.properties["build_settings"]
             .fixed_type.properties["both_sides"]}
    for where, prop in found.items():
        assert (prop.name, prop.description, prop.default) == (declared.option.label, declared.option.description,
                                                                declared.default), where
    assert (SCHEMA.both_sides.default, SCHEMA.both_sides.description) == (declared.default,
                                                                          declared.option.description)
    assert inspect.signature(api.build).parameters["both_sides"].default == declared.default
    assert LimbRequest("shin.L", options.LimbOptions()).both_sides == declared.default


@pytest.mark.parametrize("text,message", [
    ("[defaults]\ncolour = 1\n", "unknown option 'colour'"),
    ("[defaults]\npole_distanse = 1.0\n", "did you mean 'pole_distance'"),
    ("[defaults]\nchain_length = 2.5\n", "'chain_length' = 2.5 is not allowed. 'chain_length' takes an integer"),
    ("[defaults]\nuse_pole = 1\n", "'use_pole' takes true or false"),
    ("[defaults]\npole_distance = nan\n", "'pole_distance' = nan is not allowed. 'pole_distance' takes a finite "
                                         "number from 0.05"),
    ("[defaults]\npole_distance = inf\n", "'pole_distance' = inf"),
    ("[defaults]\npole_distance = 0.0\n", "takes a finite number from 0.05"),
    ("[defaults]\niterations = -5\n", "'iterations' = -5 is not allowed. 'iterations' takes an integer from 1 "
                                      "up to 10000"),
    ("[defaults]\nchain_length = 99999999999\n", "'chain_length' = 99999999999"),
    ("[defaults]\ncopy_mode = \"ROT\"\n", 'one of "ROTATION", "ROTATION_SCALE", "TRANSFORMS"'),
    ("[defaults]\ncopy_mode = 3\n", "'copy_mode' = 3 is not allowed"),
    ("[[armature]]\n[[armature.limb]]\nlast = \"a\"\nboth_sides = \"false\"\n",
     "limb #1: 'both_sides' = 'false' is not allowed. 'both_sides' takes true or false"),
    ("[[armature]]\ndetect = \"no\"\n", "'detect' = 'no' is not allowed"),
    ("[[armature]]\nname = 3\n", "'name' = 3 is not allowed"),
    ("[[armature]]\nlimb = \"x\"\n", "'limb' should be a list of tables"),
    ("defaults = 3\n", "'defaults' should be a table"),
    ("armature = 3\n", "'armature' should be a list of tables"),
    ("[rigs]\n", "unknown section 'rigs'"),
    ("[armatures]\n", "did you mean 'armature'"),
    ("[[armature]]\nnme = 'x'\n", "unknown key 'nme' (did you mean 'name'?)"),
    ("[[armature]]\n[[armature.limb]]\nchain_length = 3\n", "needs 'last'"),
    ("[defaults\n", "not valid TOML"),
    ("[import.obj]\n", "unknown input format 'obj'"),
    ("[import.fbx]\nglobal_scal = 1.0\n", "did you mean 'global_scale'"),
    ("[import.fbx]\nprimary_bone_axis = \"W\"\n", "'primary_bone_axis' takes one of \"X\""),
    ("[import.bvh]\nfilepath = \"x\"\n", "unknown importer setting 'filepath'"),
])
def test_mistakes_name_the_key_and_what_is_allowed(text, message):
    with pytest.raises(RigError) as raised:
        parse(text)
    assert message in raised.value.message
    assert "rig.toml" in raised.value.message


def test_values_are_normalised():
    config = parse("[defaults]\npole_distance = 2\npole_angle = -1.5\n")
    assert isinstance(config.defaults.pole_distance, float)
    assert math.isclose(config.defaults.pole_angle, -1.5)


def test_unreadable_or_not_utf8_files(tmp_path):
    with pytest.raises(RigError, match="cannot read the config file"):
        load_config(tmp_path / "nope.toml", SCHEMA)
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"[defaults]\n# caf\xe9\n")
    with pytest.raises(RigError, match=r"is not UTF-8 text \(byte 16\)"):
        load_config(bad, SCHEMA)
