"""The frames an export bakes for a clip, and the refusal of a range a stray key stretched.

A clip is baked over its action's range, as Blender's glTF exporter takes it: the action's
Manual Frame Range when set, else the frames its keys span. One key slipped far away in the
Graph editor (frame 100000 under keys on frames 1 to 48) stretches that range to every
frame up to it, and baking them takes minutes and gigabytes for a clip that holds still
after its first second. Such a range is refused before anything is baked, naming the key.
"""

from __future__ import annotations

from collections.abc import Sequence

import bpy
import numpy as np

from ..core.errors import RigError
from .animation import action_fcurves, bone_of_path
from .clips import Clip

# A clip whose keys leave more frames than this empty in a row, and that empty stretch more than
# half its range, is taken for a stray key: no clip for an engine holds still that long by design.
FAR_GAP = 1000


def _keys(action: bpy.types.Action) -> tuple[np.ndarray, list[str]]:
    """The frame of every key of ``action`` (sorted) and, for each, the data path keyed."""
    frames, paths = [], []
    for curve in action_fcurves(action):
        points = curve.keyframe_points
        co = np.empty(2 * len(points), dtype=np.float64)
        points.foreach_get("co", co)
        frames.append(co[0::2])
        paths += [curve.data_path] * len(points)
    if not frames:
        return np.empty(0), []
    every = np.concatenate(frames)
    order = np.argsort(every, kind="stable")
    return every[order], [paths[index] for index in order]


def _what(obj: bpy.types.Object, path: str) -> str:
    bone = bone_of_path(path)
    return f"the bone '{bone}'" if bone is not None else f"'{path}' of the armature '{obj.name}'"


def _frame(value: float) -> str:
    """A frame as the Graph editor shows it: whole, or with its fraction (never in e-notation)."""
    return str(int(value)) if value == int(value) else f"{value:.2f}"


def far_key(obj: bpy.types.Object, action: bpy.types.Action, label: str) -> str | None:
    """Why ``action``'s keys span far more frames than they fill because of a stray key (``label`` names it,
    e.g. "the clip 'Run'"), or None when its keys fill their span."""
    frames, paths = _keys(action)
    if len(frames) < 2:
        return None
    gaps = np.diff(frames)
    widest = int(np.argmax(gaps))
    gap = float(gaps[widest])
    if gap <= FAR_GAP or gap <= 0.5 * (frames[-1] - frames[0]):
        return None
    before, after = frames[: widest + 1], frames[widest + 1:]
    # The stray side is the one with fewer keys (the later one on a tie); its key next to the gap is named.
    early = len(before) < len(after)
    stray, kept = (widest, after) if early else (widest + 1, before)
    more = (len(before) if early else len(after)) - 1
    others = f" (and {more} more key{'s' if more > 1 else ''} {'before' if early else 'beyond'} it)" if more else ""
    return (f"{label} runs from frame {_frame(frames[0])} to {_frame(frames[-1])} because of a key "
            f"of {_what(obj, paths[stray])} at frame {_frame(frames[stray])}{others}, {_frame(gap)} frames away from "
            f"its other keys (frames {_frame(kept[0])} to {_frame(kept[-1])})")


def refuse_far_keys(obj: bpy.types.Object, clips: Sequence[Clip]) -> None:
    """Refuse, before anything is baked, a clip whose range a stray key stretched (see the module); a clip
    with a Manual Frame Range is baked over that range, however long."""
    for clip in clips:
        why = None if clip.action.use_frame_range else far_key(obj, clip.action, f"the clip '{clip.name}'")
        if why is not None:
            raise RigError(why + ": the export would bake every frame between",
                           hint="Delete that key (Graph editor), or set the action's Manual Frame Range "
                           "(Action properties) to the frames the clip plays, or leave the clip out of the "
                           "export, or give a frame range.")
