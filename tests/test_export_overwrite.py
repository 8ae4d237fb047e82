"""``api.export``'s ``overwrite``: a script may ask not to replace a file that is there already (as the
operator's file browser warns); without it the file is replaced, as every release did, so scripts and the
batch that export again keep working."""

from __future__ import annotations

import bpy
import pytest
from test_export import legs_character

from ik_rigger import api


@pytest.mark.parametrize("suffix", [".glb", ".gltf", ".fbx"])
def test_overwrite_false_refuses_a_file_that_is_there_writing_nothing(tmp_path, suffix):
    legs_character()
    obj = bpy.data.objects["Rig"]
    target = tmp_path / f"legs{suffix}"
    target.write_bytes(b"the user's own file")
    with pytest.raises(api.RigError) as refused:
        api.export(obj, str(target), overwrite=False)
    assert str(target) in refused.value.message and "overwrite" in refused.value.message
    assert target.read_bytes() == b"the user's own file"
    assert sorted(path.name for path in tmp_path.iterdir()) == [target.name]


def test_a_gltf_whose_bin_is_there_is_refused_too(tmp_path):
    legs_character()
    (tmp_path / "legs.bin").write_bytes(b"another export's buffer")
    with pytest.raises(api.RigError, match="legs.bin"):
        api.export(bpy.data.objects["Rig"], str(tmp_path / "legs.gltf"), overwrite=False)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["legs.bin"]


def test_by_default_and_with_overwrite_the_file_is_replaced_as_before(tmp_path):
    legs_character()
    obj = bpy.data.objects["Rig"]
    target = tmp_path / "legs.glb"
    target.write_bytes(b"an earlier export")
    first = api.export(obj, str(target))
    assert target.read_bytes()[:4] == b"glTF" and first.path == str(target)
    written = target.read_bytes()
    api.export(obj, str(target), overwrite=True)
    assert target.read_bytes()[:4] == b"glTF" and len(target.read_bytes()) == len(written)
    fresh = api.export(obj, str(tmp_path / "fresh.glb"), overwrite=False)
    assert fresh.path == str(tmp_path / "fresh.glb")
