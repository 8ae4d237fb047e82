"""scripts/rig_picture.py: the PNG of a rig in the guide's colours, and its command line."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import pytest
from helpers import chain_length, evaluate_world, leg_bones, make_armature, rotation_degrees, set_active_bone, tail

# Both project environments have matplotlib; a Blender binary's own Python may not (the picture is a
# documentation aid, not the add-on).
pytest.importorskip("matplotlib")

import numpy as np  # noqa: E402  (matplotlib's own dependency, present whenever it is)
from matplotlib import image  # noqa: E402

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

import rig_picture  # noqa: E402
import rig_sample  # noqa: E402

from ik_rigger.rig import records  # noqa: E402

DOCS_PICTURE = SCRIPTS.parent / "docs" / "sample_rig.png"

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Antialiasing blends the edges of a line into the background; its middle keeps the exact colour.
TOLERANCE = 0.03
# Enough pixels for a drawn bone, not a few stray edge pixels that happen to match.
MIN_PIXELS = 50


def theme_rgb(index: int) -> np.ndarray:
    """The theme's colour for palette THEME{index:02}, as rig_picture reads it."""
    return np.array(bpy.context.preferences.themes[0].bone_color_sets[index - 1].normal)


def pixels_like(picture: np.ndarray, rgb: np.ndarray) -> int:
    """How many pixels of ``picture`` (RGB or RGBA floats) are within TOLERANCE of ``rgb`` on every channel."""
    return int(np.count_nonzero(np.all(np.abs(picture[..., :3] - rgb) <= TOLERANCE, axis=-1)))


def read_png(path: Path) -> np.ndarray:
    assert path.is_file()
    assert path.read_bytes()[:len(PNG_SIGNATURE)] == PNG_SIGNATURE
    return image.imread(path)


@pytest.fixture
def rigged_leg() -> bpy.types.Object:
    obj = make_armature(leg_bones())
    set_active_bone(obj, "shin.L")
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    return obj


def test_draw_rig_rest_and_posed(rigged_leg, tmp_path):
    obj = rigged_leg
    # Hidden bone collections are still drawn: the IK controls must show in blue.
    for collection in obj.data.collections_all:
        collection.is_visible = False

    def pose() -> None:
        obj.pose.bones["foot_IK.L"].location = (0.0, 0.0, 0.2)

    target = tmp_path / "leg.png"
    written = rig_picture.draw_rig(obj, str(target), posed=pose, title="Left leg")

    assert written == target
    picture = read_png(target)
    height, width = picture.shape[:2]
    assert width > 300 and height > 300
    assert height > 0.8 * width  # two rows of panels, not one
    assert tuple(obj.pose.bones["foot_IK.L"].location) == pytest.approx((0.0, 0.0, 0.2))

    # The top half is the rest row; the legend, drawn in the same colours, sits at the bottom.
    rest_row = picture[: height // 2]
    assert pixels_like(rest_row, theme_rgb(1)) > MIN_PIXELS  # red chain: thigh.L, shin.L
    assert pixels_like(rest_row, theme_rgb(4)) > MIN_PIXELS  # blue: foot_IK.L, shin_IK_pole.L
    assert pixels_like(rest_row, theme_rgb(3)) > MIN_PIXELS  # green: root, which the controls hang from
    assert pixels_like(rest_row, theme_rgb(8)) > MIN_PIXELS  # the clone, drawn over the handle and foot


def test_draw_rig_without_pose_is_one_row(rigged_leg, tmp_path):
    picture = read_png(rig_picture.draw_rig(rigged_leg, tmp_path / "rest.png"))
    height, width = picture.shape[:2]
    assert width > 300 and height > 300
    assert height < 0.7 * width


def test_palettes_follow_blender(rigged_leg):
    pose_bones = rigged_leg.pose.bones
    # The chain's colour is set on the pose bone; the controls' on the bone.
    assert rig_picture.bone_palette(pose_bones["shin.L"])[0] == "THEME01"
    assert rig_picture.bone_palette(pose_bones["foot_IK.L"])[0] == "THEME04"
    assert rig_picture.bone_palette(pose_bones["foot_IK_clone.L"])[0] == "THEME08"
    assert rig_picture.palette_rgb("DEFAULT") == rig_picture.DEFAULT_GREY
    assert rig_picture.palette_rgb("THEME03") == pytest.approx(tuple(theme_rgb(3)))

    color = pose_bones["toe.L"].color
    color.palette = "CUSTOM"
    color.custom.normal = (0.25, 0.5, 0.75)
    # Blender stores custom bone colours as 8-bit values.
    assert rig_picture.palette_rgb(*rig_picture.bone_palette(pose_bones["toe.L"])) == pytest.approx(
        (0.25, 0.5, 0.75), abs=1 / 255)


def test_parents_of_controls_are_drawn_green(rigged_leg):
    obj = rigged_leg
    assert obj.data.bones["foot_IK.L"].parent.name == "root"
    palettes = rig_picture.drawn_palettes(obj)
    assert palettes["root"][0] == rig_picture.PALETTE_PARENT
    assert palettes["hips"][0] == "DEFAULT"  # above the chain, but no control hangs from it
    # A bone with a colour of its own keeps it, whatever hangs from it.
    obj.pose.bones["root"].color.palette = "THEME09"
    assert rig_picture.drawn_palettes(obj)["root"][0] == "THEME09"
    assert [line.clone for line in rig_picture.bone_lines(obj) if line.name == "foot_IK_clone.L"] == [True]


def test_sample_pose_bends_toward_poles_with_the_foot_planted():
    """The sample's posed row shows what the guide promises: bent knee and elbow, the foot where it was."""
    obj = rig_sample.load_character()
    rig_sample.rig(obj)
    left_leg, _right_leg, left_arm, _right_arm = (obj.ik_rigger.limb_of(limb.last) for limb in rig_sample.LIMBS)
    rest = evaluate_world(obj)
    rig_sample.pose_limbs(obj)
    posed = evaluate_world(obj)

    leg = list(records.inventory(left_leg).chain)
    length = chain_length(obj, leg)
    assert (posed[left_leg.extremity].translation - rest[left_leg.extremity].translation).length < 1e-4 * length
    assert rotation_degrees(posed[left_leg.extremity], rest[left_leg.extremity]) < 0.01
    assert (posed[rig_sample.BODY].translation - rest[rig_sample.BODY].translation).length > 0.1 * length
    for limb in (left_leg, left_arm):
        chain = list(records.inventory(limb).chain)
        length = chain_length(obj, chain)
        joint = posed[chain[1]].translation
        root, end = posed[chain[0]].translation, tail(posed[chain[1]], obj.data.bones[chain[1]].length)
        line = (end - root).normalized()
        offset = (joint - root) - line * (joint - root).dot(line)  # the joint's distance from the root-end line
        pole = posed[limb.pole].translation - root
        pole -= line * pole.dot(line)
        assert offset.length > 0.2 * length, limb.name  # clearly bent
        assert offset.normalized().dot(pole.normalized()) > 0.9, limb.name  # toward its pole


def test_docs_picture_is_what_the_sample_draws(tmp_path):
    """README shows docs/sample_rig.png: it must be the sample command's picture of today's rig."""
    obj = rig_sample.load_character()
    rig_sample.rig(obj)
    fresh = read_png(rig_sample.draw(obj, tmp_path / "sample_rig.png"))
    docs = read_png(DOCS_PICTURE)
    refresh = "refresh it with: scripts/rig_sample.sh --update-docs"
    assert docs.shape == fresh.shape, refresh
    # Antialiasing may differ in the last bits between Blender versions; a moved bone does not.
    changed = np.count_nonzero(np.abs(docs[..., :3] - fresh[..., :3]).max(axis=-1) > 0.25)
    assert changed < 1e-3 * docs.shape[0] * docs.shape[1], refresh


def test_main_draws_first_armature(rigged_leg, tmp_path, capsys):
    blend = tmp_path / "leg.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)
    target = tmp_path / "leg.png"
    capsys.readouterr()  # drop Blender's report of the save

    assert rig_picture.main([str(blend), str(target)]) == 0

    assert capsys.readouterr().out.strip() == str(target)
    picture = read_png(target)
    assert pixels_like(picture[: picture.shape[0] * 3 // 4], theme_rgb(1)) > MIN_PIXELS


def test_main_refuses_missing_file(tmp_path, capsys):
    assert rig_picture.main([str(tmp_path / "missing.blend"), str(tmp_path / "out.png")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert not (tmp_path / "out.png").exists()


def test_main_refuses_file_without_armature(tmp_path, capsys):
    mesh = bpy.data.objects.new("Mesh", bpy.data.meshes.new("Mesh"))
    bpy.context.scene.collection.objects.link(mesh)
    blend = tmp_path / "no_rig.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=True)

    assert rig_picture.main([str(blend), str(tmp_path / "out.png")]) == 2
    assert "no armature" in capsys.readouterr().err
    assert not (tmp_path / "out.png").exists()
