"""The batch's --export names the files it writes as the user named --out, as it names the .blend beside
them (it printed the .blend relative and the .glb absolute; the report did the same)."""

from __future__ import annotations

import json

from test_batch import run, save_character


def test_the_exports_are_named_as_out_was(tmp_path):
    save_character(tmp_path / "in" / "hero.blend")
    done = run("in/hero.blend", "--out", "out", "--export", "glb", "--report", "report.json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "out" / "hero.glb").is_file()
    assert "rigged in/hero.blend -> out/hero.blend + out/hero.glb (" in done.stdout, done.stdout
    report = json.loads((tmp_path / "report.json").read_text())["files"][0]
    assert report["output"] == "out/hero.blend" and report["exports"] == ["out/hero.glb"], report
