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
is in the legend. Two things are drawn as the guide draws them rather than as Blender
shows them: a bone with no colour of its own that IK handles or poles hang from is
green (the guide's "origin and parents"), and the extremity's clone, which sits on its
IK handle and on the foot or hand, is dashed with diamond ends so it reads apart from
both. Bones in hidden bone collections are drawn too: the picture shows the whole rig,
not what the viewport happens to show.

In the side view the limbs of the far side are faded, so the near leg and arm read
on their own; small bones outside the rig (fingers, toes) are drawn thinner. A dotted
line marks the ground at rest (the lowest bone), so a planted foot is seen to stay on it.

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
# grabs stays visible over the bone it drives. The clone is drawn on top, dashed.
PALETTE_PARENT = "THEME03"
PALETTE_CONTROL = "THEME04"
PALETTE_CLONE = "THEME08"
GUIDE_PALETTES: tuple[tuple[str, str], ...] = (
    (PALETTE_PARENT, "Origin and parents"),
    ("THEME01", "Chain bones"),
    (PALETTE_CLONE, "Extremity clone"),
    (PALETTE_CONTROL, "IK handles and poles"),
)
DEFAULT_GREY: RGB = (0.6, 0.6, 0.6)
OTHER_LABEL = "Other bones"
GROUND_LABEL = "Ground at rest"
GROUND_STYLE: dict[str, object] = {"color": "0.55", "linestyle": ":", "linewidth": 1.2}

LINE_WIDTH = 4.0
# Each bone under a coincident one is drawn this much wider, so it shows as a rim.
RIM_WIDTH = 3.5
HEAD_SIZE = 6.0
CLONE_WIDTH = 3.0
CLONE_DASHES = (2.0, 1.2)  # in line widths
CLONE_MARKER_SIZE = 7.0
# Bones shorter than this fraction of the panel are drawn thinner, down to MIN_SCALE.
SMALL_BONE = 0.06
MIN_SCALE = 0.35
# How much of the far side's colour gives way to the background, and its width scale.
FADE = 0.7
FAR_SCALE = 0.6
# Bones within this fraction of the panel from the middle plane count as the middle (spine, head).
MIDDLE = 0.02
DPI = 150
# Panels: 5 inches square each; the extra height holds the titles and the legend.
PANEL_INCHES = 5.0
LEGEND_INCHES = 0.9
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
    # Whether the far side of the body (beyond the middle plane) is faded.
    fade_far_side: bool = False


# The character faces -Y. Front view looks along +Y (X to the right); side view is
# Blender's right view, looking along -X, with -Y (the character's front) to the left.
VIEWS: tuple[View, ...] = (
    View("front", across=0, depth=1, toward_viewer=-1.0),
    View("side", across=1, depth=0, toward_viewer=1.0, fade_far_side=True),
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
    clone: bool = False
    guide: bool = False  # a line that only shows where something is (the pole line): drawn thin and dotted


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


def drawn_palettes(obj: bpy.types.Object) -> dict[str, tuple[str, bpy.types.BoneColor | None]]:
    """The palette each bone is drawn in: Blender's (``bone_palette``), except that a bone
    with none of its own that an IK handle or pole hangs from is drawn as the guide's parent."""
    palettes = {pose_bone.name: bone_palette(pose_bone) for pose_bone in obj.pose.bones}
    for pose_bone in obj.pose.bones:
        parent = pose_bone.parent
        if palettes[pose_bone.name][0] == PALETTE_CONTROL and parent is not None \
                and palettes[parent.name][0] == "DEFAULT":
            palettes[parent.name] = (PALETTE_PARENT, None)
    return palettes


def bone_lines(obj: bpy.types.Object) -> list[BoneLine]:
    """Every bone of ``obj`` in its evaluated pose, in world space.

    The view layer is updated first so constraints (IK, copy transforms) are solved.
    The object must be in Object or Pose mode: Edit mode changes are not evaluated.
    """
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    world = obj.matrix_world
    ranks = {palette: rank for rank, (palette, _label) in enumerate(GUIDE_PALETTES, start=1)}
    palettes = drawn_palettes(obj)
    lines = []
    for pose_bone in obj.pose.bones:
        if pose_bone.bone.hide:
            continue  # hidden in Blender too: the rig's own mechanism
        palette, color = palettes[pose_bone.name]
        solved = evaluated.pose.bones[pose_bone.name]
        lines.append(BoneLine(
            name=pose_bone.name,
            head=_point(world @ solved.head),
            tail=_point(world @ solved.tail),
            rgb=palette_rgb(palette, color),
            rank=ranks.get(palette, 0),
            clone=palette == PALETTE_CLONE,
            guide=pose_bone.bone.hide_select,
        ))
    return lines


def at_rest(obj: bpy.types.Object) -> bool:
    """Whether no pose bone of ``obj`` is moved, turned or scaled from its rest transform."""
    return obj.data.pose_position == "REST" or all(
        pose_bone.matrix_basis == IDENTITY for pose_bone in obj.pose.bones)


def draw_rig(obj: bpy.types.Object, path: str | Path, *, posed: Callable[[], None] | None = None,
             title: str = "", legend: Sequence[tuple[str, str]] = ()) -> Path:
    """Write a PNG of armature ``obj`` to ``path`` and return the path.

    The top row shows the current pose from the front and the side, titled "Rest" when
    no bone is moved from its rest transform (else "Current"). If ``posed`` is
    given it is called (to move IK handles, say) and a second row shows the result;
    the rig is left as ``posed`` made it. All panels share one scale, and the two
    panels of a view share their framing, so movement between rows is visible.
    ``legend`` adds (palette, label) pairs to the legend, for colours a caller gave bones.
    """
    states = [("Rest" if at_rest(obj) else "Current", bone_lines(obj))]
    if posed is not None:
        posed()
        states.append(("Posed", bone_lines(obj)))

    every = [line for _label, lines in states for line in lines]
    half = _half_extent(every)
    centres = {view.name: _centre(view, every) for view in VIEWS}
    # The body's middle plane, from the first row: the far side of a side view is beyond it.
    middles = {view.name: _middle(view, states[0][1]) for view in VIEWS}
    ground = min((point[UP] for line in states[0][1] for point in (line.head, line.tail)), default=0.0)

    figure = Figure(figsize=(PANEL_INCHES * len(VIEWS), PANEL_INCHES * len(states) + LEGEND_INCHES),
                    dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(states), len(VIEWS), squeeze=False)
    for row, (label, lines) in enumerate(states):
        for column, view in enumerate(VIEWS):
            panel = Panel(view, centres[view.name], half, middles[view.name], ground)
            title_text = f"{label} — {view.name}" + (" (far side faded)" if view.fade_far_side else "")
            _draw_panel(axes[row][column], panel, lines, title_text)
    if title:
        figure.suptitle(title, fontsize="x-large")
    figure.legend(handles=_legend_handles(legend), loc="outside lower center",
                  ncol=(len(GUIDE_PALETTES) + len(legend) + 3) // 2,
                  frameon=False, fontsize="medium", handlelength=2.4)

    path = Path(path)
    figure.savefig(path, dpi=DPI, format="png")
    return path


@dataclass(frozen=True)
class Panel:
    """Where one view is drawn: its framing, the body's middle plane along its depth, the ground."""

    view: View
    centre: tuple[float, float]
    half: float
    middle: float
    ground: float


def _draw_panel(ax: Axes, panel: Panel, lines: Sequence[BoneLine], title: str) -> None:
    """Draw ``lines`` as ``panel`` sees them, far bones first so near ones cover them.

    Bones that coincide in the picture (a foot and its IK handle) would hide each other,
    so each one under another is drawn wider and shows as a coloured rim; the clone on
    top of them is dashed.
    """
    view, half = panel.view, panel.half

    def project(point: Point) -> tuple[float, float]:
        return point[view.across], point[UP]

    def nearness(line: BoneLine) -> float:
        return view.toward_viewer * ((line.head[view.depth] + line.tail[view.depth]) / 2.0 - panel.middle)

    def far(line: BoneLine) -> bool:
        beyond = [view.toward_viewer * (point[view.depth] - panel.middle) for point in (line.head, line.tail)]
        return view.fade_far_side and max(beyond) < -MIDDLE * 2.0 * half

    def look(line: BoneLine) -> tuple[RGB, float]:
        """Colour and width scale: small bones thinner, the far side faded and thinner."""
        scale = 1.0
        if line.rank == 0:  # only bones outside the rig: the short IK handles and poles stay bold
            length = sum((a - b) ** 2 for a, b in zip(line.head, line.tail)) ** 0.5
            scale = min(1.0, max(MIN_SCALE, length / (SMALL_BONE * 2.0 * half)))
        if far(line):
            return _faded(line.rgb), scale * FAR_SCALE
        return line.rgb, scale

    # Round to a thousandth of the panel so bones equal up to float noise count as one.
    grain = half / 500.0

    def footprint(line: BoneLine) -> tuple[int, ...]:
        return tuple(round(value / grain) for value in (*project(line.head), *project(line.tail)))

    groups: dict[tuple[int, ...], list[BoneLine]] = {}
    for line in lines:
        if line.guide:
            rgb, scale = look(line)
            (head_x, head_z), (tail_x, tail_z) = project(line.head), project(line.tail)
            ax.plot((head_x, tail_x), (head_z, tail_z), color=rgb, linewidth=1.2 * scale, linestyle=":",
                    zorder=0.8)
            continue
        groups.setdefault(footprint(line), []).append(line)

    ax.axhline(panel.ground, zorder=0.5, **GROUND_STYLE)
    for group in sorted(groups.values(), key=lambda members: max(nearness(line) for line in members)):
        solid = sorted((line for line in group if not line.clone), key=lambda line: line.rank)
        # A clone on top takes the place of one more layer, so the bone under it shows around it.
        layers = len(solid) + (len(solid) < len(group))
        for layer, line in enumerate(solid):
            rgb, scale = look(line)
            width = (LINE_WIDTH + RIM_WIDTH * (layers - 1 - layer)) * scale
            (head_x, head_z), (tail_x, tail_z) = project(line.head), project(line.tail)
            ax.plot((head_x, tail_x), (head_z, tail_z), color=rgb, linewidth=width, solid_capstyle="round")
        if solid:
            # One dot per joint, in the innermost colour, on top of its group.
            rgb, scale = look(solid[-1])
            ax.plot(*project(solid[-1].head), marker="o", markersize=HEAD_SIZE * scale, color=rgb,
                    markeredgecolor="white", markeredgewidth=1.0)
        for line in group:
            if line.clone:
                rgb, scale = look(line)
                _draw_clone(ax, project(line.head), project(line.tail), rgb, scale)

    ax.set_title(title)
    ax.set_xlim(panel.centre[0] - half, panel.centre[0] + half)
    ax.set_ylim(panel.centre[1] - half, panel.centre[1] + half)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel(AXIS_NAMES[view.across], labelpad=4)
    ax.set_ylabel(AXIS_NAMES[UP], labelpad=8, rotation=0)
    # Keep the tick positions for the grid, drop the numbers: the scale is not the point.
    ax.tick_params(labelbottom=False, labelleft=False, length=0)
    ax.grid(True, color="0.9", linewidth=0.8)
    ax.set_axisbelow(True)
    for spine in ax.spines.values():
        spine.set_color("0.8")


def _clone_style(rgb: RGB, scale: float) -> dict[str, object]:
    """The clone's own shape: a dashed line, so the handle under it shows between the dashes."""
    return {"color": rgb, "linewidth": CLONE_WIDTH * scale, "linestyle": (0, CLONE_DASHES), "dash_capstyle": "butt"}


def _draw_clone(ax: Axes, head: tuple[float, float], tail: tuple[float, float], rgb: RGB, scale: float) -> None:
    ax.plot((head[0], tail[0]), (head[1], tail[1]), **_clone_style(rgb, scale))
    ax.plot((head[0], tail[0]), (head[1], tail[1]), linestyle="none", marker="D",
            markersize=CLONE_MARKER_SIZE * scale, color=rgb, markeredgecolor="white", markeredgewidth=1.0)


def _faded(rgb: RGB) -> RGB:
    return (rgb[0] + (1.0 - rgb[0]) * FADE, rgb[1] + (1.0 - rgb[1]) * FADE, rgb[2] + (1.0 - rgb[2]) * FADE)


def _legend_handles(extra: Sequence[tuple[str, str]] = ()) -> list[Line2D]:
    """One sample line per colour of the guide (and ``extra``), in the current theme's colours."""
    handles = []
    for palette, label in (*GUIDE_PALETTES, *extra):
        rgb = palette_rgb(palette)
        if palette == PALETTE_CLONE:
            handles.append(Line2D([], [], marker="D", markersize=CLONE_MARKER_SIZE, markeredgecolor="white",
                                  label=label, **_clone_style(rgb, 1.0)))
        else:
            handles.append(Line2D([], [], color=rgb, linewidth=LINE_WIDTH, label=label))
    handles.append(Line2D([], [], color=DEFAULT_GREY, linewidth=LINE_WIDTH, label=OTHER_LABEL))
    handles.append(Line2D([], [], label=GROUND_LABEL, **GROUND_STYLE))
    return handles


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


def _middle(view: View, lines: Sequence[BoneLine]) -> float:
    """Middle of the bones along ``view``'s depth: the plane between the body's two sides."""
    depths = [point[view.depth] for line in lines for point in (line.head, line.tail)]
    return (min(depths) + max(depths)) / 2.0 if depths else 0.0


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
