"""The Open Job Description job (farm/openjd/rig_batch.yaml) given what a local run refuses or leaves
out: an output folder that is the input folder or inside it, an input folder with no character, a
killed run's temporary folder among the inputs. The job runs with this Blender's batch as its
BatchCommand (``openjd run``, from the farm's environment; skipped where it is not set up).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_batch import ENTRY, limbs_in, save_character
from test_batch_safety import TEMP_MARK, checksums, report_of

ROOT = Path(__file__).resolve().parent.parent
OPENJD = ROOT / ".venvs" / "farm" / "bin" / "openjd"
TEMPLATE = ROOT / "farm" / "openjd" / "rig_batch.yaml"

pytestmark = pytest.mark.skipif(not OPENJD.exists(), reason="openjd-cli is in the farm environment only")


def job(inputs: Path, out: Path | str, chunks: int = 1) -> subprocess.CompletedProcess:
    """``openjd run`` of the template on ``inputs`` into ``out``, each chunk this Blender's batch."""
    parameters = {"InputFolder": inputs, "OutputFolder": out, "BatchCommand": f"{sys.executable} {ENTRY}",
                  "Chunks": chunks}
    return subprocess.run([str(OPENJD), "run", str(TEMPLATE), *(item for name, value in parameters.items()
                                                                for item in ("-p", f"{name}={value}"))],
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("where", ["same", "inside", "inside through a link"])
def test_an_output_folder_among_the_inputs_fails_the_job_naming_both_and_writes_nothing(tmp_path, where):
    """OutputFolder = InputFolder rigged nothing and wrote its report.json among the inputs; one inside
    it, spelt through a link, was searched for inputs."""
    inputs = tmp_path / "in"
    save_character(inputs / "a.blend")
    if where == "inside through a link":
        (tmp_path / "link").symlink_to(inputs)
    out = {"same": inputs, "inside": inputs / "rigged", "inside through a link": tmp_path / "link" / "rigged"}[where]
    before = checksums([inputs])
    result = job(inputs, out)
    assert result.returncode != 0, result.stdout[-3000:]
    assert f"OutputFolder '{out}' is the InputFolder '{inputs}' or inside it" in result.stdout, result.stdout[-3000:]
    assert checksums([inputs]) == before and sorted(path.name for path in inputs.iterdir()) == ["a.blend"]


def test_an_input_folder_without_characters_fails_the_job_saying_so(tmp_path):
    """It ended in the merge's '0 file(s) in 0 part(s) ... 0 rigged (0 limbs), ' and an exit code."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "notes.txt").write_text("characters come on Monday")
    result = job(inputs, tmp_path / "out")
    assert result.returncode != 0
    assert f"no input files in InputFolder '{inputs}'" in result.stdout, result.stdout[-3000:]
    assert "0 file(s) in 0 part(s)" not in result.stdout
    result = job(tmp_path / "missing", tmp_path / "out")
    assert result.returncode != 0
    assert f"InputFolder '{tmp_path / 'missing'}' is not a folder" in result.stdout, result.stdout[-3000:]
    assert not (tmp_path / "out").exists()


def test_a_killed_runs_temporary_folder_among_the_inputs_is_never_an_input(tmp_path):
    """A run killed mid-save (rigging in place) leaves ``.NAME.PID.ik_rigger-tmp/file.ik_rigger-tmp.blend``:
    a local run never searches it; the job rigged it as a character of its own."""
    inputs = tmp_path / "in"
    source = save_character(inputs / "a.blend")
    leftover = inputs / f".a.blend.999999.{TEMP_MARK}"
    leftover.mkdir()
    shutil.copy(source, leftover / f"file.{TEMP_MARK}.blend")
    out = tmp_path / "out"
    result = job(inputs, out, chunks=2)
    assert result.returncode == 0, result.stdout[-3000:]
    assert sorted(report_of(out / "report.json")) == ["a.blend"]
    assert sorted(path.name for path in out.iterdir()) == ["a.blend", "report.json"]
    assert limbs_in(out / "a.blend") == ["shin.L", "shin.R"]


def test_a_folder_whose_name_ends_in_a_newline_is_rigged_as_any(tmp_path):
    """The share's folders were read through ``$(dirname ...)``, which drops a name's last newlines: the
    files of such a folder were written into another folder, 'odd' (where a folder of that name may be)."""
    inputs = tmp_path / "in"
    save_character(inputs / "odd\n" / "a.blend")
    save_character(inputs / "b.blend")
    out = tmp_path / "out"
    result = job(inputs, out)
    assert result.returncode == 0, result.stdout[-3000:]
    assert sorted(report_of(out / "report.json")) == ["a.blend", "b.blend"]
    assert limbs_in(out / "odd\n" / "a.blend") == ["shin.L", "shin.R"]
    assert not (out / "odd").exists()
