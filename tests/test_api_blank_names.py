"""An API call given an empty or blank bone name said "is not part of a limb rigged by IK Rigger" naming
nothing (or "no such bone"): now it says that no bone was named and what to pass (a limb's last chain
bone), and changes nothing; a batch config refuses one where it is written. A bone really named with
spaces is still looked up as any other."""

from __future__ import annotations

import bpy
import pytest
from helpers import both_legs_rigged, same, snapshot

from ik_rigger import api
from ik_rigger.batch.command import config_schema
from ik_rigger.limb.config import parse_config

CALLS = {
    "remove": lambda obj, name: api.remove(obj, name),
    "snap_limb": lambda obj, name: api.snap_limb(obj, name, "FK", key=True),
    "switch_parent": lambda obj, name: api.switch_parent(obj, name, 0, key=True),
    "parent_choices": lambda obj, name: api.parent_choices(obj, name),
    "bake": lambda obj, name: api.bake(obj, "FK_TO_IK", [1, 2], bones=["shin.L", name]),
    "build": lambda obj, name: api.build(obj, name, both_sides=True),
    "build_many": lambda obj, name: api.build_many(obj, [("shin.R", api.options()), (name, api.options())]),
    "build_found": lambda obj, name: api.build_found(obj, [(name, api.options())], [("shin.R", api.options())]),
    "remove_aim": lambda obj, name: api.remove_aim(obj, name),
    "add_aim": lambda obj, name: api.add_aim(obj, "ACTIVE", name),
}


@pytest.mark.parametrize("name", ["", "  ", "\t"], ids=["empty", "spaces", "tab"])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_blank_bone_name_is_refused_as_no_name_changing_nothing(call, name):
    obj = both_legs_rigged()
    before = snapshot(obj)
    with pytest.raises(api.RigError) as raised:
        CALLS[call](obj, name)
    message = str(raised.value)
    kind = "an empty bone name" if not name else f"a blank bone name ({name!r})"
    assert message.startswith(f"api.{call} was given {kind} for the armature 'Rig'.")
    assert "not part of" not in message and "no such bone" not in message
    assert ("aim" in message) if "aim" in call else ("its chain's last bone" in message)
    assert same(snapshot(obj), before)


def test_a_bone_named_with_spaces_is_looked_up_by_its_name():
    obj = both_legs_rigged()
    bpy.ops.object.mode_set(mode="EDIT")
    obj.data.edit_bones.new(" ").tail = (0.0, 0.0, 0.1)
    bpy.ops.object.mode_set(mode="POSE")
    with pytest.raises(api.RigError, match=r"^' ': is not part of a limb rigged by IK Rigger"):
        api.remove(obj, " ")
    assert api.remove(obj, "shin.L") is not None


@pytest.mark.parametrize("last", ['""', '"  "'])
def test_a_batch_configs_blank_last_bone_is_refused_where_it_is_written(last):
    with pytest.raises(api.RigError, match=r"^rig.toml \[\[armature\]\] #1 limb #1: needs 'last', the name of"):
        parse_config(f"[[armature]]\n[[armature.limb]]\nlast = {last}\n", config_schema(), "rig.toml")
