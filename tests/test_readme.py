"""README works as written: its Python blocks on an installed extension, its sample command.

Every ```python block of README.md, then of the docs/ pages, runs in order, in one
namespace (a later block may use what an earlier one made, as a user typing them into
Blender's console would), in a fresh Blender that has installed the built extension zip
into throwaway user folders, as in test_packaging.py: so ``bl_ext.user_default.ik_rigger``
is the installed copy, never the repository's. The blocks run on characters as they
arrive: Rigify's human metarig as Blender adds it (its active bone a brow), a Mixamo-named
motion-capture skeleton just imported from tests/data (no bone active), the same with
another object active (the first block finds the armature), and the metarig with the last
bone of a leg active (as a user clicks it). After every block the rig must work as that
block left it: every limb in IK reaches a target its chain can reach and bends toward its
pole, read from the evaluated pose.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import bpy
import pytest
from helpers import DATA
from test_packaging import MODULE, blender_command, built_zip, isolated_env  # noqa: F401  (built_zip: fixture)

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# README first, then the pages its contents list: a page's block may use README's names (obj, api).
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
SAMPLE_SCRIPT = ROOT / "scripts" / "rig_sample.py"
RESULT_MARK = "README-BLOCKS-RESULT "
# The reach error the IK solver leaves on a reachable target, as a fraction of the chain.
REACH_TOLERANCE = 1e-3
# How far the knee or elbow must move toward its pole when the handle comes in: clearly bent.
BEND_FRACTION = 0.1

# The characters: how to bring each into the scene, the last bone of its left leg, and what
# is active: the armature as it arrives, another object (as after clicking one), or the leg's
# last bone (as after clicking it).
CHARACTERS = {
    "rigify_metarig_as_added": ("metarig", "shin.L", "arrived"),
    "rigify_metarig_shin_clicked": ("metarig", "shin.L", "bone"),
    "mixamo_bvh_as_imported": ("bvh", "mixamorig:LeftLeg", "arrived"),
    "mixamo_bvh_another_object_active": ("bvh", "mixamorig:LeftLeg", "other"),
}
# The limbs the blocks rig, by their last bones: the legs and arms, nothing a stray active bone names.
LIMBS = {
    "metarig": {"shin.L", "shin.R", "forearm.L", "forearm.R"},
    "bvh": {"mixamorig:LeftLeg", "mixamorig:RightLeg", "mixamorig:LeftForeArm", "mixamorig:RightForeArm"},
}

# Runs in the child process: install the zip, set up the character, run the blocks, then
# measure every limb in IK on the evaluated pose.
BLOCKS_SCRIPT = f"""
import importlib
import json
import os
import sys
import traceback

import bpy
import addon_utils  # Blender's own module: importable once bpy is

MODULE = {MODULE!r}
RESULT_MARK = {RESULT_MARK!r}


def leave(code):
    # As in test_packaging.py: skip the C exit handlers that crash bpy 4.2 as a module.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def fail(message):
    print("README check failed: " + message, file=sys.stderr)
    leave(1)


zip_path, kind, source, last, active, blocks_path = sys.argv[-6:]
result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
if result != {{"FINISHED"}} or MODULE not in bpy.context.preferences.addons:
    fail(f"the extension did not install: {{result}}")
records = importlib.import_module(MODULE + ".rig.records")

if kind == "metarig":
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
else:
    bpy.ops.import_anim.bvh(filepath=source)
obj = bpy.context.active_object
if kind == "bvh":
    # The skeleton at rest: the motion would only move the bones the IK does not drive.
    obj.animation_data_clear()
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis.identity()
bpy.ops.object.mode_set(mode="OBJECT")
for other in bpy.context.view_layer.objects:
    other.select_set(other == obj)
bpy.context.view_layer.objects.active = obj
arrived = obj.data.bones.active
# As they arrive: the metarig's active bone is a face bone, the import has none; neither a leg.
if arrived is not None and (arrived.name == last or "brow" not in arrived.name):
    fail(f"the character arrived with '{{arrived.name}}' active, not what this test stands for")
if active == "bone":
    obj.data.bones.active = obj.data.bones[last]
if active == "other":
    other = bpy.data.objects.new("Prop", None)
    bpy.context.scene.collection.objects.link(other)
    obj.select_set(False)
    other.select_set(True)
    bpy.context.view_layer.objects.active = other

with open(blocks_path, encoding="utf-8") as stream:
    blocks = json.load(stream)
def evaluated():
    bpy.context.view_layer.update()
    return obj.evaluated_get(bpy.context.evaluated_depsgraph_get())


def in_ik(limb):
    constraints = evaluated().pose.bones[limb.name].constraints
    return any(constraint.type == "IK" and constraint.influence > 0.999 for constraint in constraints)


def measure(block):
    # Each limb in IK with a pole, as this block left it: bring its handle 30% of the way toward
    # the chain's root (reachable, so the joint must bend), read the evaluated pose, put the handle back.
    found = []
    if obj.mode == "EDIT":  # poses are not evaluated in Edit mode
        return found
    for limb in obj.ik_rigger.limbs:
        chain = list(records.inventory(limb).chain)
        if not limb.pole or not in_ik(limb):
            continue
        before = evaluated().pose.bones
        root, end = before[chain[0]].head.copy(), before[chain[-1]].tail.copy()
        middle, pole = before[chain[1]].head.copy(), before[limb.pole].head.copy()
        length = sum(obj.data.bones[name].length for name in chain)
        target = end.lerp(root, 0.3)
        handle = obj.pose.bones[limb.handle]
        basis = handle.matrix_basis.copy()
        matrix = handle.matrix.copy()
        matrix.translation = target + (matrix.translation - end)
        handle.matrix = matrix
        posed = evaluated().pose.bones
        line = (target - root).normalized()
        toward_pole = pole - root
        toward_pole -= line * toward_pole.dot(line)
        moved = posed[chain[1]].head - middle
        found.append({{"block": block, "last": chain[-1],
                       "reach_error": (posed[chain[-1]].tail - target).length / length,
                       "bend_toward_pole": moved.dot(toward_pole.normalized()) / length}})
        handle.matrix_basis = basis
    evaluated()
    return found


namespace = {{"__name__": "__main__"}}
limbs = []
for number, (page, block) in enumerate(blocks, start=1):
    try:
        exec(compile(block, f"{{page}}, python block {{number}}", "exec"), namespace)
    except Exception:
        traceback.print_exc()
        fail(f"python block {{number}} ({{page}}) raised")
    limbs.extend(measure(number))

rigged = [limb.name for limb in obj.ik_rigger.limbs]  # a limb is named after its chain's last bone
print(RESULT_MARK + json.dumps({{"object": obj.name, "limbs": limbs, "rigged": rigged}}))
leave(0)
"""


def python_blocks(text: str) -> list[str]:
    """Every fenced ```python block of ``text``, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def test_python_blocks_are_found() -> None:
    text = "intro\n```python\nimport bpy\n```\n\n```sh\nls\n```\n```python\nx = 1\ny = 2\n```\n"
    assert python_blocks(text) == ["import bpy\n", "x = 1\ny = 2\n"]


def all_blocks() -> list[tuple[str, str]]:
    """README's python blocks, then each docs page's, each with its page's name."""
    return [(page.relative_to(ROOT).as_posix(), block) for page in PAGES
            for block in python_blocks(page.read_text(encoding="utf-8"))]


def test_readme_imports_the_installed_extension() -> None:
    assert python_blocks(README.read_text(encoding="utf-8")), "README has no python blocks"
    blocks = [block for _, block in all_blocks()]
    imports = [line for block in blocks for line in block.splitlines()
               if re.match(r"\s*(from|import)\s+\S*ik_rigger", line)]
    # A user's Blender has the extension under bl_ext, never a bare ik_rigger on sys.path.
    assert all(f" {MODULE}" in line or f" {MODULE}." in line for line in imports), imports


@pytest.mark.parametrize("character", list(CHARACTERS))
def test_readme_python_blocks_run_as_written(character: str, built_zip: Path, tmp_path: Path) -> None:  # noqa: F811
    kind, last, active = CHARACTERS[character]
    blocks_path = tmp_path / "blocks.json"
    blocks_path.write_text(json.dumps(all_blocks()), encoding="utf-8")
    script = tmp_path / "run_readme_blocks.py"
    script.write_text(BLOCKS_SCRIPT, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    source = str(DATA / "mixamo_freebvh.bvh")
    # From the temporary folder, so the repository's ik_rigger cannot be imported by accident.
    result = subprocess.run(
        blender_command(script, str(built_zip), kind, source, last, active, str(blocks_path)),
        cwd=tmp_path, env=isolated_env(home), capture_output=True, text=True, check=False, timeout=300,
    )
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, output
    line = next((line for line in result.stdout.splitlines() if line.startswith(RESULT_MARK)), None)
    assert line is not None, output
    result = json.loads(line[len(RESULT_MARK):])
    limbs = result["limbs"]
    assert set(result["rigged"]) == LIMBS[kind], output

    # Checked after every block, as each leaves the rig: a later block may switch limbs to FK.
    assert limbs, "no block of README left a limb in IK with a pole"
    assert any(limb["last"] == last for limb in limbs), limbs
    for limb in limbs:
        assert limb["reach_error"] < REACH_TOLERANCE, limb
        assert limb["bend_toward_pole"] > BEND_FRACTION, limb


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    """README's first command, run once for this module (its script, as scripts/rig_sample.sh runs it)."""
    out = tmp_path_factory.mktemp("sample") / "out"
    result = subprocess.run(blender_command(SAMPLE_SCRIPT, "--out", str(out)), cwd=out.parent,
                            capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return out, result


def test_sample_command_says_what_a_user_needs(sample_run: tuple[Path, subprocess.CompletedProcess]) -> None:
    """What it rigged and where the files are, in a rigger's words; nothing from Blender's importers."""
    out, result = sample_run
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    text = "\n".join(lines)
    for limb in ("left leg", "right leg", "left arm", "right arm"):
        assert limb in text, output
    # Inside a Blender binary whose Python has no matplotlib, the sample writes no picture (and says so).
    pictures = ("sample_rig.png",) if importlib.util.find_spec("matplotlib") else ()
    for written in ("sample_rigged.blend", *pictures):
        assert (out / written).is_file(), output
        assert str(out / written) in text, output
    # The importer's notices and timings, and the internal phrasing riggers cannot place.
    assert "zero length node" not in result.stdout + result.stderr, output
    assert "parented to nothing" not in text, output
    assert not any(re.fullmatch(r"[\d.\s]+", line) for line in lines), output
    assert not any(line.lstrip().startswith(("parsing bvh", "importing to blender", "Info:")) for line in lines), output


def test_sample_rigs_what_it_says(sample_run: tuple[Path, subprocess.CompletedProcess]) -> None:
    """The saved sample has the four limbs it names, each with its handle and pole."""
    out, result = sample_run
    bpy.ops.wm.open_mainfile(filepath=str(out / "sample_rigged.blend"), load_ui=False)
    obj = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    limbs = {limb.name: limb for limb in obj.ik_rigger.limbs}
    assert set(limbs) == {"mixamorig:LeftLeg", "mixamorig:RightLeg", "mixamorig:LeftForeArm",
                          "mixamorig:RightForeArm"}
    for last, limb in limbs.items():
        assert f"IK handle {limb.handle} " in result.stdout, last
        assert f"pole {limb.pole}:" in result.stdout, last


def test_sample_renders_its_pictures_and_saves_none_of_their_objects(
        sample_run: tuple[Path, subprocess.CompletedProcess]) -> None:
    """The skinned sample's Workbench still and the motion capture's motion are written, and no rigged .blend
    holds a scene, camera, curve, mesh or object made for a picture."""
    image = pytest.importorskip("PIL.Image")
    pytest.importorskip("matplotlib")
    out, result = sample_run
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    with image.open(out / "sample_render.png") as still:
        assert still.format == "PNG" and still.size == (560, 640), output
    with image.open(out / "sample_motion.webp") as motion:
        assert motion.format == "WEBP" and motion.n_frames > 8, output
    for name in ("sample_rigged.blend", "sample_character_rigged.blend", "sample_capture_rigged.blend"):
        assert str(out / name) in result.stdout, output
        bpy.ops.wm.open_mainfile(filepath=str(out / name), load_ui=False)
        assert len(bpy.data.scenes) == 1 and not bpy.data.cameras and not bpy.data.curves, name
        assert not any(item.get("ik_rigger_picture") for item in bpy.data.objects), name
    # The bare capture's only meshes are its controls' bone shapes: none of its bones drawn for the picture.
    shapes = {pose_bone.custom_shape.data.name for pose_bone in bpy.data.objects["pymo_walk"].pose.bones
              if pose_bone.custom_shape}
    assert set(bpy.data.meshes.keys()) == shapes
    armature = next(item for item in bpy.data.objects if item.type == "ARMATURE")
    assert len(armature.ik_rigger.limbs) == 4


@pytest.mark.parametrize("page", ["speed", "readme"])
def test_benchmark_table_gives_each_figure_with_its_spread(page: str) -> None:
    """The speed page's benchmark table, and README's rows of it, are one run's (between the markers the
    benchmark rewrites), on a named machine, every timing or ratio in it comes with its min-max spread, and
    every row says which way is better (or that it is context, with no target). README shows the build and
    the posed rig without stretch, against their floor."""
    sys.path.insert(0, str(ROOT))
    from benchmarks import run

    text = (run.SPEED_PAGE if page == "speed" else run.README_PAGE).read_text(encoding="utf-8")
    assert text.count(run.TABLE_START) == 1 and text.count(run.TABLE_END) == 1
    block = text[text.index(run.TABLE_START) + len(run.TABLE_START):text.index(run.TABLE_END)]
    assert " cores, Blender " in block  # the machine
    rows = [line for line in block.splitlines() if line.startswith("| ") and not line.startswith("| Measure")]
    assert rows
    if page == "readme":
        assert all(row.startswith(run.README_ROWS) for row in rows)
        assert any(row.startswith("| Build 4 limbs without stretch") for row in rows)
        assert sum("(without stretch, against the floor without stretch" in row for row in rows) == 2
    figure = r"\d+(\.\d+)?( ms| us| s|x| files/s)"
    for row in rows:
        for cell in row.strip("|").split("|")[1:4]:
            for match in re.finditer(figure, cell):
                after = cell[match.end():]
                spread = re.match(r" \(\d+(\.\d+)?–\d+(\.\d+)?\)", after)
                # A ratio of medians, or of one sweep (Blender's IK gives the same angles every time), has none.
                assert spread or after.startswith((" (of medians)", " (of one sweep)")), \
                    f"no spread for {match.group()} in: {row}"
        label = row.strip("|").split("|")[0]
        assert re.search(r"(lower|higher|fewer) is better|no target", label), f"which way is better? {row}"
    assert run.update_page(f"a\n{run.TABLE_START}\nold\n{run.TABLE_END}\nb", "new") == (
        f"a\n{run.TABLE_START}\nnew\n{run.TABLE_END}\nb")


def test_benchmark_counts_the_plots_it_writes(tmp_path: Path) -> None:
    """Not every section of the tracked run has a plot: the run counts the plots it wrote, not the sections."""
    pytest.importorskip("matplotlib")
    sys.path.insert(0, str(ROOT))
    from benchmarks import common, run

    document = json.loads((run.TRACKED_OUT / "latest.json").read_text(encoding="utf-8"))
    results = {name: document[name] for name in run.SECTIONS if name in document}
    assert len(results) >= 6
    written = run.write_plots(results, common.machine_line(document["machine"]), tmp_path)
    plotted = sorted(f"{name}.png" for name in results if name in run.PLOTS)
    assert sorted(path.name for path in written) == plotted and len(plotted) < len(results)
    assert {"batch.png", "build.png", "evaluation.png", "quality.png"} <= set(plotted)
    assert sorted(tmp_path.iterdir()) == sorted(written)
