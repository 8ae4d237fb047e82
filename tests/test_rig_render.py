"""scripts/rig_render.py: Workbench pictures of a rigged, skinned character, and nothing of them left behind."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import pytest

# Both project environments have Pillow and matplotlib; a Blender binary's own Python may not.
Image = pytest.importorskip("PIL.Image")
pytest.importorskip("matplotlib")

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

import rig_render  # noqa: E402
import rig_sample  # noqa: E402

# Enough pixels of the controls' blue to be rings and diamonds, not a stray edge.
MIN_BLUE = 300


def blue_pixels(image) -> int:  # noqa: ANN001  (a Pillow image)
    """Pixels clearly blue (the guide's controls), against the grey character and background."""
    data = image.convert("RGB").tobytes()
    return sum(1 for red, green, blue in zip(data[0::3], data[1::3], data[2::3])
               if blue > red + 40 and blue > green + 20)


def file_contents() -> dict[str, list[str]]:
    return {"objects": sorted(bpy.data.objects.keys()), "scenes": sorted(bpy.data.scenes.keys()),
            "cameras": sorted(bpy.data.cameras.keys()), "curves": sorted(bpy.data.curves.keys()),
            "worlds": sorted(bpy.data.worlds.keys())}


@pytest.fixture
def rigged() -> bpy.types.Object:
    obj = rig_sample.load_skinned()
    assert len(rig_sample.api.auto_rig(obj)) == 4
    return obj


def test_still_shows_the_controls_and_leaves_nothing_behind(rigged, tmp_path):
    obj = rigged
    meshes = [item for item in bpy.data.objects if item.type == "MESH" and item.find_armature() == obj]
    colours = [tuple(item.color) for item in meshes]
    before = file_contents()
    obj.animation_data.action = None
    path = rig_render.render_still(obj, tmp_path / "still.png", lambda: rig_sample.pose_skinned(obj))

    with Image.open(path) as image:
        assert image.size == rig_render.STILL_SIZE
        assert blue_pixels(image) > MIN_BLUE
    assert file_contents() == before
    assert not any(item.get(rig_render.PICTURE_MARK) for item in bpy.data.objects)
    assert [tuple(item.color) for item in meshes] == colours
    assert len(rig_render.control_names(obj)) == 8  # a handle and a pole for each of the four limbs


def test_motion_is_the_clip_played_through_the_rig(rigged, tmp_path):
    obj = rigged
    before = file_contents()
    frames = rig_sample.play(obj, rig_sample.SKINNED_CLIP)
    path = rig_render.render_motion(obj, tmp_path / "motion.webp", frames)

    with Image.open(path) as image:
        assert image.format == "WEBP" and image.n_frames == len(frames[::rig_render.MOTION_STEP])
        shown = []
        for index in (0, image.n_frames // 2):
            image.seek(index)
            shown.append(image.convert("RGB").copy())
    assert all(blue_pixels(frame) > MIN_BLUE / 4 for frame in shown)
    difference = sum(abs(a - b) for a, b in zip(shown[0].tobytes(), shown[1].tobytes()))
    assert difference > 0.01 * 255 * len(shown[0].tobytes())  # the character and its controls moved
    assert file_contents() == before
