"""A save's temporary file: written in a folder of the save's own under the target's own suffix, and
never taken for an input, this run's or another's, while it is written or after a killed run left it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from test_batch import save_character

from ik_rigger.batch.inputs import expand_inputs
from ik_rigger.batch.saving import TEMP_SUFFIX, folders_kept, is_temporary, private_folder, save_atomically


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


def test_saves_in_a_kept_block_share_one_folder_emptied_after_each_and_removed_at_the_end(tmp_path):
    """A batch process saves many files beside one folder: one folder of its own serves them all,
    emptied after each save (a failed one's temporary too), made again should someone remove it, and
    gone at the end of the block; a save outside any block still leaves nothing behind."""
    out = tmp_path / "out"
    out.mkdir()
    used: list[Path] = []

    def write(temporary: Path) -> None:
        used.append(temporary.parent)
        temporary.write_bytes(temporary.name.encode())

    def failing(temporary: Path) -> None:
        used.append(temporary.parent)
        temporary.write_bytes(b"half")
        raise OSError(28, "No space left on device")

    def left_beside() -> list[str]:
        return sorted(path.name for path in out.iterdir() if not is_temporary(path.name))

    with folders_kept():
        save_atomically(out / "a.blend", write, keep_backup=False)
        save_atomically(out / "b.blend", write, keep_backup=False, overwrite=False)  # linked: two names
        with pytest.raises(OSError):
            save_atomically(out / "c.blend", failing, keep_backup=False)
        assert len(set(used)) == 1 and is_temporary(used[0].name)
        assert list(used[0].iterdir()) == []  # nothing of a, b (its second name) or the failed c
        shutil.rmtree(used[0])  # someone cleaned up meanwhile
        save_atomically(out / "d.blend", write, keep_backup=False)
        assert used[-1] != used[0] and list(used[-1].iterdir()) == []
    assert left_beside() == ["a.blend", "b.blend", "d.blend"]
    assert sorted(path.name for path in out.iterdir()) == ["a.blend", "b.blend", "d.blend"]
    save_atomically(out / "e.blend", write, keep_backup=False)
    assert sorted(path.name for path in out.iterdir()) == ["a.blend", "b.blend", "d.blend", "e.blend"]
    assert (out / "a.blend").read_bytes() == f"file{TEMP_SUFFIX}.blend".encode()
