#!/usr/bin/env python3
"""Plot the knee's angle against the handle's distance, hard IK and soft IK, as Blender evaluates them.

    .venvs/blender-5.2/bin/python scripts/soft_ik_plot.py [OUT.png]   # docs/soft_ik.png by default

Rigify's human metarig, its left leg rigged by IK Rigger (Maximum Stretch 1), the handle moved
from 0.8 to 1.2 of the leg's length along the line from the hip to its rest place, the scene
evaluated at each step; once with soft IK off and once per value in ``SOFT``. It also prints
where the leg's rest reach lies and where soft IK 0.05 puts the unkeyed foot (docs/rigging.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ik_rigger  # noqa: E402
from ik_rigger import api  # noqa: E402

SOFT = (0.05, 0.1)
STEPS = 400


def _leg(soft: float) -> bpy.types.Object:
    import addon_utils  # Blender's own, importable once bpy is

    bpy.ops.wm.read_factory_settings(use_empty=True)
    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    obj = bpy.context.active_object
    api.build(obj, "shin.L", max_stretch=1.0, soft_ik=soft)
    return obj


def _posed(obj: bpy.types.Object) -> dict:
    bpy.context.view_layer.update()
    return obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones


def sweep(soft: float) -> tuple[list[float], list[float], float, float]:
    """Handle distances and knee angles (degrees) over the sweep; the rest reach and the unkeyed foot's
    reach, as fractions of the leg's length."""
    obj = _leg(soft)
    bones = obj.data.bones
    root = bones["thigh.L"].head_local
    length = (bones["shin.L"].head_local - root).length + bones["shin.L"].length
    handle = obj.pose.bones["foot_IK.L"]
    rest = bones["foot_IK.L"].matrix_local
    unkeyed = (_posed(obj)["shin.L"].tail - root).length / length
    aim = (rest.translation - root).normalized()
    distances, angles = [], []
    for step in range(STEPS + 1):
        distance = 0.8 + 0.4 * step / STEPS
        pose = rest.copy()
        pose.translation = root + aim * distance * length
        handle.matrix = pose
        posed = _posed(obj)
        thigh, shin = posed["thigh.L"], posed["shin.L"]
        distances.append(distance)
        angles.append(180.0 - (shin.head - thigh.head).angle(shin.tail - shin.head) * 57.29577951308232)
    return distances, angles, (rest.translation - root).length / length, unkeyed


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "docs" / "soft_ik.png"
    ik_rigger.register()
    figure = Figure(figsize=(7.5, 4.2), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for soft in (0.0, *SOFT):
        distances, angles, rest, unkeyed = sweep(soft)
        label = "hard IK" if soft == 0.0 else f"soft IK {soft:g}"
        axes.plot(distances, angles, label=label, linewidth=2.0 if soft in (0.0, 0.05) else 1.2)
        print(f"{label}: rest reach {rest:.4f} of the leg's length, the unkeyed foot at {unkeyed:.4f}")
    axes.axvline(1.0, color="grey", linewidth=0.8, linestyle=":")
    axes.set_xlabel("handle's distance from the hip (fraction of the leg's length)")
    axes.set_ylabel("knee angle (degrees; 180 is straight)")
    axes.set_title("Rigify's left leg as Blender evaluates it: hard IK pops straight at 1.0, soft IK eases in")
    axes.title.set_fontsize(9)
    axes.legend()
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(out)
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
