"""scripts/rig_picture.py: the PNG of a rig in the guide's colours, and its command line."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import pytest
from helpers import leg_bones, make_armature, set_active_bone

# The Blender 4.2 environment has no matplotlib; the picture is a documentation aid, not the add-on.
pytest.importorskip("matplotlib")

import numpy as np  # noqa: E402  (matplotlib's own dependency, present whenever it is)
from matplotlib import image  # noqa: E402

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

import rig_picture  # noqa: E402

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
