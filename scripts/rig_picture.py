#!/usr/bin/env python3
"""Draw an armature as a PNG the way the IK guide does: coloured bones, front and side views.

    python scripts/rig_picture.py FILE.blend OUT.png

As a module (``scripts/`` on ``sys.path``)::

    import rig_picture
    rig_picture.draw_rig(obj, "rig.png", posed=lambda: ..., title="Left leg")

Every bone is a thick segment from its evaluated head to its tail in world space,
with a dot at its head, coloured by its bone colour palette (the pose bone's palette
unless it is 'DEFAULT', then the bone's). The colours are read from the current
theme, so the picture matches what Blender shows. The guide's meaning of each colour
is in the legend. Bones in hidden bone collections are drawn too: the picture shows
the whole rig, not what the viewport happens to show.

The figure is drawn with matplotlib's Agg canvas only, so no screen is needed and
the caller's pyplot backend is left alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import bpy
from mathutils import Color, Matrix, Vector
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

RGB = tuple[float, float, float]
Point = tuple[float, float, float]

# The guide's colours as Blender palettes, in drawing rank: a higher rank is drawn
# innermost when bones coincide (see ``_draw_panel``), so the blue control the user
# grabs stays visible over the clone and the bone it drives.
GUIDE_PALETTES: tuple[tuple[str, str], ...] = (
    ("THEME03", "Origin and parents"),
    ("THEME01", "Chain bones"),
    ("THEME08", "Extremity clone"),
    ("THEME04", "IK handles and poles"),
)
DEFAULT_GREY: RGB = (0.6, 0.6, 0.6)
OTHER_LABEL = "Other bones"

LINE_WIDTH = 4.0
# Each bone under a coincident one is drawn this much wider, so it shows as a rim.
RIM_WIDTH = 3.5
HEAD_SIZE = 6.0
DPI = 150
# Panels: 5 inches square each; the extra height holds the titles and the legend.
PANEL_INCHES = 5.0
LEGEND_INCHES = 0.6
# Fraction of the largest extent added around the bones so dots are not clipped.
MARGIN = 0.08


@dataclass(frozen=True)
class View:
    """An orthographic view: which world axis runs across, and which points at the viewer."""

    name: str
    across: int
    depth: int
    # +1 if larger depth coordinates are nearer the viewer, -1 if smaller ones are.
    toward_viewer: float


# The character faces -Y. Front view looks along +Y (X to the right); side view is
# Blender's right view, looking along -X, with -Y (the character's front) to the left.
VIEWS: tuple[View, ...] = (
    View("front", across=0, depth=1, toward_viewer=-1.0),
    View("side", across=1, depth=0, toward_viewer=1.0),
)
IDENTITY = Matrix.Identity(4)
AXIS_NAMES = "XYZ"
UP = 2


@dataclass(frozen=True)
class BoneLine:
    """One bone as drawn: world-space head and tail, colour, and rank among the guide's colours."""

    name: str
    head: Point
    tail: Point
    rgb: RGB
    rank: int


def palette_rgb(palette: str, color: bpy.types.BoneColor | None = None) -> RGB:
    """The RGB a bone colour palette shows in the current theme.

    ``color`` is the ``BoneColor`` holding the palette; only 'CUSTOM' needs it, for
    its own colours.
    """
    if palette.startswith("THEME"):
        theme_set = bpy.context.preferences.themes[0].bone_color_sets[int(palette[len("THEME"):]) - 1]
        return _rgb(theme_set.normal)
    if palette == "CUSTOM" and color is not None:
        return _rgb(color.custom.normal)
    return DEFAULT_GREY


def bone_palette(pose_bone: bpy.types.PoseBone) -> tuple[str, bpy.types.BoneColor | None]:
    """The palette Blender shows for ``pose_bone``: its own unless 'DEFAULT', then its bone's."""
    if pose_bone.color.palette != "DEFAULT":
        return pose_bone.color.palette, pose_bone.color
    return pose_bone.bone.color.palette, pose_bone.bone.color


def bone_lines(obj: bpy.types.Object) -> list[BoneLine]:
    """Every bone of ``obj`` in its evaluated pose, in world space.

    The view layer is updated first so constraints (IK, copy transforms) are solved.
    The object must be in Object or Pose mode: Edit mode changes are not evaluated.
    """
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    world = obj.matrix_world
    ranks = {palette: rank for rank, (palette, _label) in enumerate(GUIDE_PALETTES, start=1)}
    lines = []
    for pose_bone in obj.pose.bones:
        palette, color = bone_palette(pose_bone)
        solved = evaluated.pose.bones[pose_bone.name]
        lines.append(BoneLine(
            name=pose_bone.name,
            head=_point(world @ solved.head),
            tail=_point(world @ solved.tail),
            rgb=palette_rgb(palette, color),
            rank=ranks.get(palette, 0),
        ))
    return lines


def at_rest(obj: bpy.types.Object) -> bool:
    """Whether no pose bone of ``obj`` is moved, turned or scaled from its rest transform."""
    return obj.data.pose_position == "REST" or all(
        pose_bone.matrix_basis == IDENTITY for pose_bone in obj.pose.bones)


def draw_rig(obj: bpy.types.Object, path: str | Path, *, posed: Callable[[], None] | None = None,
             title: str = "") -> Path:
    """Write a PNG of armature ``obj`` to ``path`` and return the path.

    The top row shows the current pose from the front and the side, titled "Rest" when
    no bone is moved from its rest transform (else "Current"). If ``posed`` is
    given it is called (to move IK handles, say) and a second row shows the result;
    the rig is left as ``posed`` made it. All panels share one scale, and the two
    panels of a view share their framing, so movement between rows is visible.
    """
    states = [("Rest" if at_rest(obj) else "Current", bone_lines(obj))]
    if posed is not None:
        posed()
        states.append(("Posed", bone_lines(obj)))

    half = _half_extent(line for _label, lines in states for line in lines)
    centres = {view.name: _centre(view, [line for _label, lines in states for line in lines]) for view in VIEWS}

    figure = Figure(figsize=(PANEL_INCHES * len(VIEWS), PANEL_INCHES * len(states) + LEGEND_INCHES),
                    dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(states), len(VIEWS), squeeze=False)
    for row, (label, lines) in enumerate(states):
        for column, view in enumerate(VIEWS):
            _draw_panel(axes[row][column], view, lines, centres[view.name], half, f"{label} — {view.name}")
    if title:
        figure.suptitle(title, fontsize="x-large")
    figure.legend(handles=_legend_handles(), loc="outside lower center", ncol=len(GUIDE_PALETTES) + 1,
                  frameon=False, fontsize="medium", handlelength=1.6)

    path = Path(path)
    figure.savefig(path, dpi=DPI, format="png")
    return path


def _draw_panel(ax: Axes, view: View, lines: Sequence[BoneLine], centre: tuple[float, float], half: float,
                title: str) -> None:
    """Draw ``lines`` seen from ``view``, far bones first so near ones cover them.

    Bones that coincide in the picture (a foot, its clone and its IK handle) would hide
    each other, so each one under another is drawn wider and shows as a coloured rim.
    """
    def project(point: Point) -> tuple[float, float]:
        return point[view.across], point[UP]

    def nearness(line: BoneLine) -> float:
        return view.toward_viewer * (line.head[view.depth] + line.tail[view.depth]) / 2.0

    # Round to a thousandth of the panel so bones equal up to float noise count as one.
    grain = half / 500.0

    def footprint(line: BoneLine) -> tuple[int, ...]:
        return tuple(round(value / grain) for value in (*project(line.head), *project(line.tail)))

    groups: dict[tuple[int, ...], list[BoneLine]] = {}
    for line in lines:
        groups.setdefault(footprint(line), []).append(line)

    for group in sorted(groups.values(), key=lambda members: max(nearness(line) for line in members)):
        group.sort(key=lambda line: line.rank)
        for layer, line in enumerate(group):
            width = LINE_WIDTH + RIM_WIDTH * (len(group) - 1 - layer)
            (head_x, head_z), (tail_x, tail_z) = project(line.head), project(line.tail)
            ax.plot((head_x, tail_x), (head_z, tail_z), color=line.rgb, linewidth=width,
                    solid_capstyle="round")
        # One dot per joint, in the innermost colour, on top of its group.
        top = group[-1]
        ax.plot(*project(top.head), marker="o", markersize=HEAD_SIZE, color=top.rgb,
                markeredgecolor="white", markeredgewidth=1.0)

    ax.set_title(title)
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel(AXIS_NAMES[view.across], labelpad=4)
    ax.set_ylabel(AXIS_NAMES[UP], labelpad=8, rotation=0)
    # Keep the tick positions for the grid, drop the numbers: the scale is not the point.
    ax.tick_params(labelbottom=False, labelleft=False, length=0)
    ax.grid(True, color="0.9", linewidth=0.8)
    ax.set_axisbelow(True)
    for spine in ax.spines.values():
        spine.set_color("0.8")


def _legend_handles() -> list[Line2D]:
    """One sample line per colour of the guide, in the current theme's colours."""
    samples = [(palette_rgb(palette), label) for palette, label in GUIDE_PALETTES]
    samples.append((DEFAULT_GREY, OTHER_LABEL))
    return [Line2D([], [], color=rgb, linewidth=LINE_WIDTH, label=label) for rgb, label in samples]


def _half_extent(lines: Iterable[BoneLine]) -> float:
    """Half the side of a square that holds every bone in every view, with a margin."""
    spans = [0.0]
    points = [point for line in lines for point in (line.head, line.tail)]
    if points:
        for axis in range(3):
            values = [point[axis] for point in points]
            spans.append(max(values) - min(values))
    largest = max(spans) or 1.0  # a rig with no bones, or all on one spot, still gets a frame
    return largest * (0.5 + MARGIN)


def _centre(view: View, lines: Sequence[BoneLine]) -> tuple[float, float]:
    """Middle of the bones' bounding box as ``view`` sees it."""
    points = [point for line in lines for point in (line.head, line.tail)]
    if not points:
        return 0.0, 0.0
    across = [point[view.across] for point in points]
    up = [point[UP] for point in points]
    return (min(across) + max(across)) / 2.0, (min(up) + max(up)) / 2.0


def _rgb(color: Color) -> RGB:
    return color.r, color.g, color.b


def _point(vector: Vector) -> Point:
    return vector.x, vector.y, vector.z


def main(argv: Sequence[str] | None = None) -> int:
    """Draw the first armature of a .blend file; 0 on success, 2 if there is nothing to draw."""
    parser = argparse.ArgumentParser(description="Draw the first armature of a .blend file as a PNG.")
    parser.add_argument("blend", type=Path, help=".blend file to open")
    parser.add_argument("output", type=Path, help="PNG file to write")
    args = parser.parse_args(argv)

    if not args.blend.is_file():
        print(f"rig_picture: no such file: {args.blend}", file=sys.stderr)
        return 2
    try:
        bpy.ops.wm.open_mainfile(filepath=str(args.blend), load_ui=False)
    except RuntimeError as error:
        print(f"rig_picture: cannot open {args.blend}: {error}", file=sys.stderr)
        return 2
    # Only objects in the view layer are evaluated, so only those can be drawn posed.
    armature = next((obj for obj in bpy.context.view_layer.objects if obj.type == "ARMATURE"), None)
    if armature is None:
        print(f"rig_picture: no armature object in {args.blend}", file=sys.stderr)
        return 2
    print(draw_rig(armature, args.output, title=f"{armature.name} ({args.blend.name})"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
