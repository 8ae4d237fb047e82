"""--in-place while the artist saves the same file: the save made between the batch's read and its
write stays, and that file fails naming it (docs/batch.md)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from helpers import both_legs
from test_batch import digest, limbs_in, save_character

from ik_rigger.batch import rig_file as files
from ik_rigger.limb.config import Config


def _saved_as_blender_saves(path: Path, new_version: Path) -> None:
    """Blender's own save: the new file written beside, the old one moved to .blend1, the new one
    moved into place."""
    written = path.with_name(path.name + "@")
    shutil.copyfile(new_version, written)
    os.replace(path, path.with_name(path.name + "1"))
    os.replace(written, path)


def test_a_file_saved_while_it_was_rigged_in_place_is_left_as_that_save_made_it(tmp_path, monkeypatch):
    source = save_character(tmp_path / "hero.blend")
    older = digest(source)
    # The artist's next version (its armature renamed): a file of its own content.
    artists = save_character(tmp_path / "next" / "hero.blend", bones=both_legs(), name="Artist")
    rig = files._rig_armatures

    def rig_while_the_artist_saves(*args, **kwargs):
        rig(*args, **kwargs)  # the batch has read the file and rigged it; the artist saves now
        _saved_as_blender_saves(source, artists)

    monkeypatch.setattr(files, "_rig_armatures", rig_while_the_artist_saves)
    result = files.rig_file(files.Job(str(source), str(source), in_place=True), Config())
    assert result.status == "failed", result
    assert result.error.startswith(f"'{source}' changed while it was being rigged")
    assert "left as that save made it" in result.error
    # Exactly as the artist's save left the folder: their version, and the one before as the backup.
    assert digest(source) == digest(artists)
    assert digest(tmp_path / "hero.blend1") == older
    assert sorted(path.name for path in tmp_path.iterdir()) == ["hero.blend", "hero.blend1", "next"]
    assert limbs_in(source) == []


def test_a_file_left_alone_is_rigged_in_place_with_its_backup(tmp_path):
    source = save_character(tmp_path / "hero.blend")
    older = digest(source)
    result = files.rig_file(files.Job(str(source), str(source), in_place=True), Config())
    assert result.status == "rigged", result.error
    assert digest(tmp_path / "hero.blend1") == older
    assert limbs_in(source) == ["shin.L", "shin.R"]


def test_on_the_farm_a_file_saved_while_it_was_rigged_in_place_is_left_as_that_save_made_it(tmp_path, monkeypatch):
    from ik_rigger.batch import farm_tasks

    source = save_character(tmp_path / "hero.blend")
    older = digest(source)
    artists = save_character(tmp_path / "next" / "hero.blend", bones=both_legs(), name="Artist")
    rig = files.rig_file

    def rig_while_the_artist_saves(*args, **kwargs):
        done = rig(*args, **kwargs)  # rigged into the task's staged file; the artist saves now
        _saved_as_blender_saves(source, artists)
        return done

    monkeypatch.setattr(files, "rig_file", rig_while_the_artist_saves)
    result = farm_tasks.rig_staged(files.Job(str(source), str(source), in_place=True), Config(), "run", 0)
    assert result.status == "failed", result
    assert result.error.startswith(f"'{source}' changed while it was being rigged")
    assert digest(source) == digest(artists) and digest(tmp_path / "hero.blend1") == older
    assert sorted(path.name for path in tmp_path.iterdir()) == ["hero.blend", "hero.blend1", "next"]
