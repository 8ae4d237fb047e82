"""The batch as a new user meets it: --help, a dry run, a mistyped or empty folder, a rerun beside
the report of the run before, and a file from a newer Blender (docs/batch.md)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import bpy
import pytest
from test_batch import ROOT, run, save_character

from ik_rigger.batch import opening

zstandard = pytest.importorskip("zstandard")


def test_help_names_the_command_an_example_the_exit_codes_and_the_docs():
    result = subprocess.run([str(ROOT / "scripts" / "rig_batch.sh"), "--help"], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "\nusage: scripts/rig_batch.sh " in f"\n{result.stdout}"
    assert "ik_rigger" not in result.stdout.split("usage: ", 1)[1]
    assert "scripts/rig_batch.sh characters/ --out rigged/ --report rigged/report.json" in result.stdout
    for code in ("  0 ", "  1 ", "  2 ", "  130, 143 "):
        assert f"\n{code}" in result.stdout
    assert "docs/batch.md" in result.stdout and "docs/farm.md" in result.stdout


def test_a_dry_run_prints_each_line_of_a_plan_as_a_line(tmp_path):
    source = save_character(tmp_path / "a.blend")
    result = run(str(source), "--dry-run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "\\n" not in result.stdout
    lines = result.stdout.splitlines()
    assert "  Rig: limb thigh.L > shin.L (extremity foot.L)" in lines
    assert "    handle foot_IK.L parented to root" in lines


def test_a_folder_that_is_not_there_is_a_usage_error_that_writes_nothing(tmp_path):
    result = run(str(tmp_path / "charcters"), "--out", str(tmp_path / "out"), "--report",
                 str(tmp_path / "report.json"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"'{tmp_path / 'charcters'}' does not exist: no such folder or file" in result.stderr
    assert "usage: scripts/rig_batch.sh " in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_an_empty_folder_is_named_a_usage_error_alone_and_a_warning_beside_files(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("no character here")
    result = run(str(empty), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"no input files in '{empty}' (searched for .blend, .bvh, .fbx, .glb, .gltf" in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["empty"]
    source = save_character(tmp_path / "in" / "a.blend")
    result = run(str(empty), str(source.parent), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"  warning: no input files in '{empty}'" in result.stdout
    assert (tmp_path / "out" / "a.blend").exists()


def test_a_failing_rerun_keeps_the_report_of_the_run_before(tmp_path):
    source = save_character(tmp_path / "in" / "a.blend")
    report = tmp_path / "out" / "report.json"
    first = run(str(source.parent), "--out", str(tmp_path / "out"), "--report", str(report))
    assert first.returncode == 0, first.stdout + first.stderr
    good = report.read_text()
    again = run(str(source.parent), "--out", str(tmp_path / "out"), "--report", str(report))
    assert again.returncode == 1, again.stdout + again.stderr
    kept = [path for path in (tmp_path / "out").iterdir() if path.name not in ("a.blend", "report.json")]
    assert len(kept) == 1 and kept[0].name.startswith("report.") and kept[0].suffix == ".json"
    assert kept[0].read_text() == good and json.loads(good)["exit_code"] == 0
    assert json.loads(report.read_text())["exit_code"] == 1
    assert f"note: the report of the run before is kept as '{kept[0]}'" in again.stdout


def _from_a_newer_blender(path: Path, packing: str) -> Path:
    """A .blend whose header says Blender 9.2 saved it (in the header 5.0 brought), with what this
    Blender cannot read after it; plain, or packed as ``packing`` says."""
    data = b"BLENDER17-01v0902" + bytes(range(256)) * 40 + b"ENDB" + bytes(16)
    if packing == "gzip":
        data = gzip.compress(data)
    elif packing == "zstd":  # one frame, and the seekable format's footer, as Blender writes it
        data = zstandard.ZstdCompressor().compress(data) + b"\xb1\xea\x92\x8f"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("packing", ["plain", "gzip", "zstd"])
def test_a_file_from_a_newer_blender_is_named_by_its_version(tmp_path, packing):
    source = _from_a_newer_blender(tmp_path / "in" / "new.blend", packing)
    result = run(str(source), "--out", str(tmp_path / "out"))
    assert result.returncode == 1, result.stdout + result.stderr
    this = f"{bpy.app.version[0]}.{bpy.app.version[1]}"
    assert f"'{source}' was saved by Blender 9.2, which this Blender ({this}) cannot read" in result.stdout
    assert "may be corrupt" not in result.stdout


def test_a_zstd_header_is_read_without_the_zstandard_module_when_stored_raw(tmp_path, monkeypatch):
    header = b"BLENDER17-01v0902RENDH\x00\x00"
    raw = tmp_path / "raw.blend"  # a frame of one raw block: its content as it is
    raw.write_bytes(b"\x28\xb5\x2f\xfd" + bytes([0x20, len(header)]) + ((len(header) << 3) | 1).to_bytes(3, "little")
                    + header)
    packed = tmp_path / "packed.blend"
    packed.write_bytes(zstandard.ZstdCompressor().compress(header * 100))
    assert opening.blend_header(raw) == header == opening.blend_header(packed)
    monkeypatch.setitem(sys.modules, "zstandard", None)
    assert opening.blend_header(raw) == header
    assert opening.blend_header(packed) is None  # compressed: the message says it may be from a newer Blender


_RENDER_STILL = """
import sys
sys.path[:0] = [{root!r}, {scripts!r}]
import rig_render, rig_sample
rig_sample.ik_rigger.register()
obj = rig_sample.load_skinned()
rig_sample.api.auto_rig(obj)
obj.animation_data.action = None
print("rendering", file=sys.stderr, flush=True)
rig_render.render_still(obj, {path!r}, lambda: rig_sample.pose_skinned(obj))
print("rendered", file=sys.stderr, flush=True)
from blender_exit import leave
leave(0)
"""


def test_a_first_render_prints_no_egl_probe_and_lets_other_lines_through(tmp_path):
    """Blender's headless GPU start asks for OpenGL 4.6 first: where the driver has less, it prints
    EGL_BAD_MATCH for each context of the first render (harmless); rig_sample.sh's pictures hold it back."""
    pytest.importorskip("PIL")
    path = tmp_path / "still.png"
    script = _RENDER_STILL.format(root=str(ROOT), scripts=str(ROOT / "scripts"), path=str(path))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert path.stat().st_size > 1000
    assert "EGL Error" not in result.stderr
    assert "rendering\n" in result.stderr and "rendered\n" in result.stderr
