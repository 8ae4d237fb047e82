"""The batch command, run as a user runs it (a separate Blender process), and its safety."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import bpy
import pytest
from helpers import both_legs, leg_bones, make_armature

import ik_rigger
from ik_rigger.batch import command, pool, saving

ROOT = Path(__file__).resolve().parent.parent
ENTRY = ROOT / "scripts" / "rig_batch.py"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ENTRY), *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def save_character(path: Path, bones=None, name: str = "Rig", extra=None) -> Path:
    """A .blend holding one armature (and whatever ``extra`` adds), in a fresh scene."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    make_armature(bones or both_legs(), name=name, mode="OBJECT")
    if extra:
        extra()
    path.parent.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def limbs_in(path: Path) -> list[str]:
    bpy.ops.wm.open_mainfile(filepath=str(path), use_scripts=False)
    return sorted(limb.name for obj in bpy.data.objects if obj.type == "ARMATURE" for limb in obj.ik_rigger.limbs)


def test_folder_to_out_with_report(tmp_path):
    inputs = [save_character(tmp_path / "in" / name) for name in ("a.blend", "sub/b.blend")]
    before = {path: digest(path) for path in inputs}
    result = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--report", str(tmp_path / "report.json"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 file(s)" in result.stdout and "2 rigged (4 limbs on 2 armature(s))" in result.stdout
    assert {path: digest(path) for path in inputs} == before
    assert limbs_in(tmp_path / "out" / "a.blend") == ["shin.L", "shin.R"]
    assert limbs_in(tmp_path / "out" / "sub" / "b.blend") == ["shin.L", "shin.R"]
    report = json.loads((tmp_path / "report.json").read_text())
    entry = report["files"][0]
    assert entry["status"] == "rigged" and entry["armatures"][0]["limbs"] == [["thigh.L", "shin.L"],
                                                                              ["thigh.R", "shin.R"]]
    assert entry["seconds_rig"] >= 0 and "summary" in report
    assert not list((tmp_path / "out").rglob("*ik_rigger-tmp"))


def test_inputs_are_never_overwritten_without_in_place(tmp_path):
    source = save_character(tmp_path / "a.blend")
    before = digest(source)
    result = run(str(source), "--out", str(tmp_path))
    assert result.returncode == 1
    assert "would overwrite the input" in result.stdout
    assert digest(source) == before


def test_in_place_keeps_a_blend1_backup(tmp_path):
    source = save_character(tmp_path / "a.blend")
    before = digest(source)
    result = run(str(source), "--in-place")
    assert result.returncode == 0, result.stdout
    assert digest(tmp_path / "a.blend1") == before
    assert limbs_in(source) == ["shin.L", "shin.R"]


@pytest.mark.parametrize("args,message", [
    ((), "at least one"),
    (("x.blend",), "--out DIR"),
    (("x.blend", "--out", "o", "--in-place"), "exclude each other"),
    (("x.blend", "--out", "o", "--jobs", "0"), "--jobs"),
    (("x.blend", "--out", "o", "--bogus"), "unrecognized arguments"),
])
def test_usage_errors_exit_2(tmp_path, args, message):
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr


def test_a_scheduler_without_dask_is_a_usage_error(tmp_path):
    """Where Blender's Python has no Dask (this suite's environments), --scheduler says how to get it;
    with Dask, tests/test_farm.py runs the cluster."""
    if importlib.util.find_spec("distributed") is not None:
        pytest.skip("Dask is installed here")
    result = run(str(save_character(tmp_path / "a.blend")), "--out", str(tmp_path / "out"), "--scheduler",
                 "tcp://127.0.0.1:1")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--scheduler needs Dask" in result.stderr and "scripts/rig_batch.sh" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_bad_config_is_a_usage_error(tmp_path):
    config = tmp_path / "rig.toml"
    config.write_text('[defaults]\ncopy_mode = 3\n')
    result = run(str(save_character(tmp_path / "a.blend")), "--out", str(tmp_path / "out"), "--config", str(config))
    assert result.returncode == 2
    assert "'copy_mode' = 3 is not allowed" in result.stderr and '"ROTATION"' in result.stderr
    assert not (tmp_path / "out").exists()


def test_bad_files_are_reported_and_the_run_goes_on(tmp_path):
    folder = tmp_path / "in"
    good = save_character(folder / "good.blend")
    (folder / "text.blend").write_text("not a blend")
    truncated = folder / "truncated.blend"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    # A header and an end block around garbage: looks whole, reads as nonsense.
    header = b"BLENDER-v%d%02d" % tuple(bpy.app.version[:2])  # this Blender's own version
    (folder / "corrupt.blend").write_bytes(header + bytes(range(256)) * 40 + b"ENDB" + bytes(16))

    def no_armature() -> None:
        bpy.data.objects.remove(bpy.data.objects["Rig"])

    save_character(folder / "empty.blend", extra=no_armature)
    before = {path: digest(path) for path in folder.iterdir()}
    result = run(str(folder), str(tmp_path / "missing.blend"), "--out", str(tmp_path / "out"),
                 "--report", str(tmp_path / "report.json"))
    assert result.returncode == 1
    out = result.stdout
    assert "text.blend' is not a .blend file" in out
    assert "truncated.blend' is truncated" in out
    assert "Blender cannot read" in out and "corrupt.blend" in out
    assert "has no armature" in out
    assert "missing.blend' does not exist" in out
    assert f"rigged {good}" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert sorted(entry["status"] for entry in report["files"]) == ["failed"] * 5 + ["rigged"]
    assert {path: digest(path) for path in folder.iterdir()} == before


def test_an_output_folder_that_cannot_be_written_stops_the_run_before_any_file(tmp_path):
    source = save_character(tmp_path / "a.blend")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    result = run(str(source), "--out", str(blocker / "sub"))
    assert result.returncode == 2
    assert "cannot write the rigged files" in result.stderr and "is not a folder" in result.stderr
    assert blocker.read_text() == "a file where a folder should be"


def test_armature_filter_picks_one_of_several(tmp_path):
    def second_armature() -> None:
        make_armature(leg_bones(), name="Other", mode="OBJECT")

    source = save_character(tmp_path / "two.blend", extra=second_armature)
    result = run(str(source), "--out", str(tmp_path / "out"), "--armature", "Other")
    assert result.returncode == 0, result.stdout
    assert limbs_in(tmp_path / "out" / "two.blend") == ["shin.L"]


MARKERS = ("text_ran", "driver_ran")


def _booby_trapped(path: Path, marker_dir: Path) -> Path:
    def trap() -> None:
        text = bpy.data.texts.new("on_load.py")
        text.write(f"open(r'{marker_dir / MARKERS[0]}', 'w').write('ran')\n")
        text.use_module = True
        obj = bpy.data.objects["Rig"]
        obj["trap"] = 0.0
        driver = obj.driver_add('["trap"]').driver
        driver.type = "SCRIPTED"
        driver.expression = f"len(open(r'{marker_dir / MARKERS[1]}', 'w').write('ran'))"

    return save_character(path, extra=trap)


def test_scripts_in_a_file_never_run(tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    source = _booby_trapped(tmp_path / "trap.blend", markers)
    result = run(str(source), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stdout
    assert not any((markers / name).exists() for name in MARKERS)
    # The trap is real: opened trusting its scripts, it springs.
    # Left at once: Blender 4.5 hangs at Python's exit after running a file's scripts.
    trusting = (f"import os, bpy; bpy.ops.wm.open_mainfile(filepath=r'{source}', use_scripts=True); "
                "bpy.context.view_layer.update(); os._exit(0)")
    subprocess.run([sys.executable, "-c", trusting], capture_output=True, timeout=120)
    assert any((markers / name).exists() for name in MARKERS)


_KILL_DURING_SAVE = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
import bpy
from ik_rigger.batch.saving import save_atomically

def write(temporary):
    bpy.ops.wm.save_as_mainfile(filepath=str(temporary), copy=True)
    print("WRITTEN", flush=True)
    time.sleep(60)

save_atomically(Path({target!r}), write, keep_backup=False)
"""


def test_a_run_killed_mid_save_leaves_the_old_file_whole(tmp_path):
    target = save_character(tmp_path / "out" / "a.blend")
    before = digest(target)
    code = _KILL_DURING_SAVE.format(root=str(ROOT), target=str(target))
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    # Blender's own start-up lines come first.
    assert any(line.strip() == "WRITTEN" for line in process.stdout)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert digest(target) == before
    # The next run replaces it whole, leftover temporary file and all.
    source = save_character(tmp_path / "in" / "a.blend")
    result = run(str(source), "--out", str(tmp_path / "out"), "--overwrite")
    assert result.returncode == 0, result.stdout
    assert "left by a run that was killed" in result.stdout
    assert limbs_in(target) == ["shin.L", "shin.R"]
    assert not list((tmp_path / "out").glob("*ik_rigger-tmp*"))


# A leg in names no detection is sure of, and the config that names it.
_ODD_BONES = [
    ("root", (0, 0, 0), (0, 0.5, 0), None, False),
    ("pelvis", (0, 0, 1.0), (0, 0, 1.2), "root", False),
    ("upper_A", (0.2, 0, 1.0), (0.2, -0.05, 0.55), "pelvis", False),
    ("lower_A", (0.2, -0.05, 0.55), (0.2, 0, 0.1), "upper_A", True),
    ("end_A", (0.2, 0, 0.1), (0.2, -0.2, 0.0), "lower_A", True),
]
_ODD_CONFIG = ('[defaults]\ncopy_mode = "TRANSFORMS"\n\n[[armature]]\nname = "Rig"\ndetect = false\n\n'
               '[[armature.limb]]\nlast = "lower_A"\npole_parent = "HANDLE"\n')


def test_config_names_limbs_and_options(tmp_path):
    source = save_character(tmp_path / "odd.blend", bones=_ODD_BONES)
    config = tmp_path / "rig.toml"
    config.write_text(_ODD_CONFIG)
    result = run(str(source), "--out", str(tmp_path / "out"), "--config", str(config))
    assert result.returncode == 0, result.stdout
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "odd.blend"))
    obj = bpy.data.objects["Rig"]
    limb = obj.ik_rigger.limbs["lower_A"]
    assert obj.data.bones[limb.pole].parent.name == limb.handle
    assert [c.type for c in obj.pose.bones["end_A"].constraints] == ["COPY_TRANSFORMS"]
    # Without the config, nothing in those names is sure to be a leg: nothing is rigged.
    result = run(str(source), "--out", str(tmp_path / "out2"))
    assert result.returncode == 1 and "no limbs found on the armature(s) 'Rig'" in result.stdout


def test_limbs_whose_bones_run_far_past_their_joints_are_rigged_as_the_api_rigs_them(tmp_path):
    """Shins three times their segments, as importers leave bones: both legs rigged on hidden chains, the
    shins left as they are (before, nothing was, the failure naming Fix Bone Orientation); with that
    option in the config, rigged on the shins turned."""
    bones = [(name, head, (head[0], -1.4, head[2]) if name.startswith("shin") else tail, parent, False)
             for name, head, tail, parent, _connected in both_legs()]
    source = save_character(tmp_path / "long.blend", bones)
    result = run(str(source), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stdout
    assert limbs_in(tmp_path / "out" / "long.blend") == ["shin.L", "shin.R"]
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / "long.blend"))
    assert bpy.data.objects["Rig"].data.bones["shin.L"].tail_local.y == pytest.approx(-1.4)
    config = tmp_path / "rig.toml"
    config.write_text("[defaults]\nfix_orientation = true\n")
    result = run(str(source), "--out", str(tmp_path / "fixed"), "--config", str(config))
    assert result.returncode == 0, result.stdout
    assert limbs_in(tmp_path / "fixed" / "long.blend") == ["shin.L", "shin.R"]
    bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "fixed" / "long.blend"))
    assert bpy.data.objects["Rig"].data.bones["shin.L"].tail_local.y == pytest.approx(0.0, abs=1e-6)


def test_a_detected_limb_it_cannot_rig_is_skipped_and_the_others_rigged(tmp_path):
    def user_ik() -> None:
        bpy.data.objects["Rig"].pose.bones["shin.L"].constraints.new("IK")

    source = save_character(tmp_path / "a.blend", extra=user_ik)
    report = tmp_path / "report.json"
    result = run(str(source), "--out", str(tmp_path / "out"), "--report", str(report))
    assert result.returncode == 0, result.stdout
    assert limbs_in(tmp_path / "out" / "a.blend") == ["shin.R"]
    entry = json.loads(report.read_text())["files"][0]["armatures"][0]
    assert "shin.L: already has an IK constraint 'IK'; delete that constraint, or rig another chain" in entry["skipped"]


def test_dry_run_writes_nothing(tmp_path):
    source = save_character(tmp_path / "a.blend")
    result = run(str(source), "--dry-run", "--out", str(tmp_path / "out"))
    assert result.returncode == 0
    assert "handle foot_IK.L parented to root" in result.stdout
    assert not (tmp_path / "out").exists()


def test_parallel_workers(tmp_path):
    for index in range(4):
        save_character(tmp_path / "in" / f"c{index}.blend")
    result = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("rigged ") >= 4
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [f"c{i}.blend" for i in range(4)]


def test_parallel_workers_rig_by_the_config(tmp_path):
    """With --jobs 2 the worker (started ahead of the main Blender, with the same command line)
    reads the config too: without it nothing in these names is rigged."""
    for index in range(4):
        save_character(tmp_path / "in" / f"c{index}.blend", bones=_ODD_BONES)
    config = tmp_path / "rig.toml"
    config.write_text(_ODD_CONFIG)
    report = tmp_path / "report.json"
    result = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--jobs", "2", "--config", str(config),
                 "--report", str(report))
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(report.read_text())["workers_started"] == 1
    for index in range(4):
        bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "out" / f"c{index}.blend"))
        assert [c.type for c in bpy.data.objects["Rig"].pose.bones["end_A"].constraints] == ["COPY_TRANSFORMS"]


def test_workers_take_the_largest_files_first(tmp_path):
    jobs = []
    for name, size in (("a", 10), ("b", 300), ("c", 20), ("d", 300), ("gone", None)):
        path = tmp_path / f"{name}.blend"
        if size is not None:
            path.write_bytes(b"x" * size)
        jobs.append(pool.Job(str(path), str(tmp_path / "out" / path.name)))
    order = [Path(job.input).stem for _, job in pool._largest_first(jobs)]
    assert order == ["b", "d", "c", "a", "gone"]
    assert [index for index, _ in pool._largest_first(jobs)] == [1, 3, 2, 0, 4]


def test_blender_command_entry_runs_in_process(tmp_path):
    source = save_character(tmp_path / "a.blend")
    assert ik_rigger._cli_commands
    assert command.command([str(source), "--dry-run"]) == 0
    assert command.command([]) == 2


def test_worker_protocol(tmp_path):
    """A worker says it is ready, then for each job line that it took it (should it die before, the file goes
    to another), which file it is about to put in place (should it die before its answer), then answers with
    one result line."""
    source = save_character(tmp_path / "a.blend")
    job = json.dumps({"input": str(source), "output": str(tmp_path / "out" / "a.blend"), "in_place": False,
                      "dry_run": False})
    answers, told = os.pipe()
    subprocess.run([sys.executable, str(ENTRY)], input=job + "\n", capture_output=True, text=True,
                   timeout=120, pass_fds=(told,), env={**os.environ, pool.WORKER_VARIABLE: str(told)})
    os.close(told)
    with open(answers, encoding="utf-8") as channel:
        lines = [line for line in channel.read().splitlines() if line.startswith("IK-RIGGER-")]
    assert lines[0] == "IK-RIGGER-READY"
    assert [line.split(" ", 1)[0] for line in lines[1:]] == ["IK-RIGGER-TAKEN", "IK-RIGGER-PLACING",
                                                             "IK-RIGGER-RESULT"]
    placing = json.loads(lines[2][len("IK-RIGGER-PLACING "):])
    result = json.loads(lines[3][len("IK-RIGGER-RESULT "):])
    assert result["status"] == "rigged" and result["armatures"][0]["limbs"]
    assert placing["record"]["armatures"] == result["armatures"]
    assert tuple(placing["file"]) == saving.file_place(tmp_path / "out" / "a.blend")
    assert limbs_in(tmp_path / "out" / "a.blend") == ["shin.L", "shin.R"]


_KEEP_TO_CORES = """
import json, os, sys
sys.path.insert(0, {scripts!r})
import rig_batch
two = sorted(os.sched_getaffinity(0))[:2]
os.sched_setaffinity(0, two)  # a machine of two cores, whatever this one has
argv = {argv!r}
workers = rig_batch.workers_ahead(argv)
worker_cores = []
for worker in workers:
    assert any(line.startswith("IK-RIGGER-READY") for line in worker.stdout)
    worker_cores.append(sorted(os.sched_getaffinity(worker.pid)))
    worker.stdin.close()
    worker.wait()
held = rig_batch.keep_to_one_core(argv)
loading = sorted(os.sched_getaffinity(0))
rig_batch.give_back(held)
print(json.dumps({{"two": two, "loading": loading, "main": sorted(os.sched_getaffinity(0)), "workers": worker_cores,
                  "variable": os.environ.get("IK_RIGGER_BATCH_CORE")}}))
"""


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two cores and Linux's affinity calls")
@pytest.mark.parametrize("stray", [None, "0", "1"])
@pytest.mark.parametrize("jobs", ["2", "3", "1"])
def test_one_process_per_core_keeps_each_to_a_core_of_its_own(jobs, stray, tmp_path):
    """With --jobs at the core count, the main process keeps to the first core and the worker
    started ahead to the second, from before Blender loads (so each Blender works in one thread);
    with fewer processes than cores (--jobs 1 rigs in one worker too), or more (the user's to
    schedule), each loads Blender on one core (the main process on the first) and is then given
    every core back. A core named in the user's own environment changes nothing."""
    code = _KEEP_TO_CORES.format(scripts=str(ENTRY.parent), argv=[str(tmp_path), "--out", str(tmp_path / "o"),
                                                                  "--jobs", jobs])
    environment = {name: value for name, value in os.environ.items() if name != "IK_RIGGER_BATCH_CORE"}
    if stray is not None:
        environment["IK_RIGGER_BATCH_CORE"] = stray
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=environment)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    first, second = seen["two"]
    held = {"1": ([first, second], [[first, second]]), "2": ([first], [[second]]),
            "3": ([first, second], [[first, second]])}[jobs]
    assert seen == {"two": [first, second], "loading": [first], "main": held[0], "workers": held[1],
                    "variable": None}


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs Linux's affinity calls")
@pytest.mark.parametrize("value", ["abc", "99999", "", "-1"])
def test_a_core_that_is_not_one_is_ignored(value):
    """A worker told a core that is no core (a stray environment variable) runs as it can: once
    Blender has loaded, on every core it had."""
    code = (f"import os, sys; sys.path.insert(0, {str(ENTRY.parent)!r}); import rig_batch; "
            "before = os.sched_getaffinity(0); rig_batch.give_back(rig_batch.keep_to_one_core([])); "
            "print(os.sched_getaffinity(0) == before, 'IK_RIGGER_BATCH_CORE' in os.environ)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "IK_RIGGER_BATCH_CORE": value, pool.WORKER_VARIABLE: "3"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]


_DEFERRED = "_bpy_internal.assets.remote_library.listing_downloader"
_STARTED_AS_THE_BATCH = """
import json, os, sys
sys.path.insert(0, {scripts!r})
import rig_batch
sys.argv = ["rig_batch.py", {input!r}, "--dry-run"]
status = rig_batch.main()
import bpy
module = sys.modules.get({deferred!r})
seen = {{"status": status, "addons": sorted(bpy.context.preferences.addons.keys()),
        "deferred": None if module is None else type(module).__name__}}
if module is not None:
    seen["attribute"] = callable(module.restore_backup_if_exists_locked)  # reading it runs the module
    seen["after"] = type(module).__name__
print(json.dumps(seen))
sys.stdout.flush()
os._exit(0)
"""


def test_batch_processes_start_without_the_remote_asset_downloader(tmp_path):
    """The batch's Blenders start without running Blender 5.2's remote asset library downloader
    (about a fifth of every process's start-up), which a headless run never uses: the module is
    the real one, loaded the moment it is read, and Blender starts with the same add-ons."""
    character = save_character(tmp_path / "a.blend")
    code = _STARTED_AS_THE_BATCH.format(scripts=str(ENTRY.parent), input=str(character), deferred=_DEFERRED)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    eager = subprocess.run([sys.executable, "-c", "import json, os, sys, bpy; print(json.dumps(["
                            "sorted(bpy.context.preferences.addons.keys()), "
                            f"type(sys.modules.get({_DEFERRED!r})).__name__])); sys.stdout.flush(); os._exit(0)"],
                           capture_output=True, text=True, timeout=300)
    assert eager.returncode == 0, eager.stderr
    addons, eager_type = json.loads(eager.stdout.splitlines()[-1])
    assert seen["status"] == 0 and seen["addons"] == addons
    if bpy.app.version[:2] == (5, 2):  # the Blender that imports it at start-up
        assert eager_type == "module"
    if eager_type == "module":
        assert seen["deferred"] == "_LazyModule" and seen["attribute"] and seen["after"] == "module"
    else:  # before 5.2 no remote asset libraries, and 5.3 no longer imports it at start-up: nothing to defer
        assert seen["deferred"] is None
