"""A save's temporary file: written in a folder of the save's own under the target's own suffix, and
never taken for an input, this run's or another's, while it is written or after a killed run left it."""

from __future__ import annotations

import os
from pathlib import Path

from test_batch import save_character

from ik_rigger.batch.inputs import expand_inputs
from ik_rigger.batch.saving import TEMP_SUFFIX, is_temporary, private_folder, save_atomically


def test_a_save_writes_its_temporary_under_the_targets_own_suffix(tmp_path):
    """Blender writes a file not named .blend more slowly: the temporary ends as the target does,
    in the save's own folder, and is gone once the target is in place."""
    target = tmp_path / "out" / "a.blend"
    target.parent.mkdir()
    written: list[Path] = []

    def write(temporary: Path) -> None:
        written.append(temporary)
        temporary.write_bytes(b"rigged")

    save_atomically(target, write, keep_backup=False)
    assert len(written) == 1
    assert written[0].suffix == ".blend" and TEMP_SUFFIX in written[0].name
    assert is_temporary(written[0].parent.name) and written[0].parent.parent == target.parent
    assert target.read_bytes() == b"rigged"
    assert sorted(path.name for path in target.parent.iterdir()) == ["a.blend"]


def test_a_save_in_progress_among_the_inputs_is_never_an_input(tmp_path):
    """A save's folder among the inputs (another run's in place, or one a killed run left) holds a
    .blend by name and by content: a search never enters it."""
    source = save_character(tmp_path / "in" / "a.blend")
    saving = private_folder(tmp_path / "in")
    (saving / f"file{TEMP_SUFFIX}.blend").write_bytes(source.read_bytes())
    left = tmp_path / "in" / "sub" / f".x.{os.getpid() + 1}{TEMP_SUFFIX}"
    left.mkdir(parents=True)
    (left / f"file{TEMP_SUFFIX}.blend").write_bytes(source.read_bytes())
    found = expand_inputs([str(tmp_path / "in")])
    assert [path for path, _ in found.found] == [source]
    assert not found.failed and not found.notes
