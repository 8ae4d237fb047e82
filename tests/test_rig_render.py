"""scripts/rig_render.py: Workbench pictures of a rigged character, skinned or a bare motion capture, and nothing
of them left behind."""

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
# Enough pixels of the character's light grey to be its bones' octahedra (about 1300 in each frame).
MIN_GREY = 500


def blue_pixels(image) -> int:  # noqa: ANN001  (a Pillow image)
    """Pixels clearly blue (the guide's controls), against the grey character and background."""
    data = image.convert("RGB").tobytes()
    return sum(1 for red, green, blue in zip(data[0::3], data[1::3], data[2::3])
               if blue > red + 40 and blue > green + 20)


def grey_pixels(image) -> int:  # noqa: ANN001  (a Pillow image)
    """Pixels of a light, even grey (the character as Workbench lights it), not the darker background."""
    data = image.convert("RGB").tobytes()
    return sum(1 for red, green, blue in zip(data[0::3], data[1::3], data[2::3])
               if min(red, green, blue) > 150 and max(red, green, blue) - min(red, green, blue) < 20)


def file_contents() -> dict[str, list[str]]:
    return {"objects": sorted(bpy.data.objects.keys()), "scenes": sorted(bpy.data.scenes.keys()),
            "cameras": sorted(bpy.data.cameras.keys()), "curves": sorted(bpy.data.curves.keys()),
            "meshes": sorted(bpy.data.meshes.keys()), "worlds": sorted(bpy.data.worlds.keys())}


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


def test_motion_is_the_capture_played_through_the_rig(tmp_path):
    """The bare capture's bones are drawn grey and move with its controls; nothing made for the picture stays."""
    obj = rig_sample.load_capture()
    assert len(rig_sample.api.auto_rig(obj)) == 4
    frames = rig_sample.frames(obj)
    assert len(frames) == 60
    before = file_contents()
    path = rig_render.render_motion(obj, tmp_path / "motion.webp", frames)

    with Image.open(path) as image:
        assert image.format == "WEBP" and image.size == rig_render.MOTION_SIZE
        assert image.n_frames == len(frames[::rig_render.MOTION_STEP])
        shown = []
        for index in (0, image.n_frames // 2):
            image.seek(index)
            shown.append(image.convert("RGB").copy())
    assert all(blue_pixels(frame) > MIN_BLUE / 4 and grey_pixels(frame) > MIN_GREY for frame in shown)
    # The bones and their controls moved: thin as they are, they changed over a percent of the pixels.
    first, middle = (frame.tobytes() for frame in shown)
    changed = sum(1 for pixel in range(0, len(first), 3)
                  if sum(abs(first[pixel + channel] - middle[pixel + channel]) for channel in range(3)) > 60)
    assert changed > 0.01 * len(first) / 3
    assert path.stat().st_size < 300_000
    assert file_contents() == before
    assert not any(item.get(rig_render.PICTURE_MARK) for item in bpy.data.objects)
