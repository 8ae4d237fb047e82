"""A stray key far from a clip's others, in the motion a build keeps: kept and named, or refused when far.

A key slipped far away in the Graph editor stretches the frames a build keeps the motion over to every
frame up to it (``export_range.far_key`` tells one). Up to ``MOST_FRAMES`` the build keeps it exactly, a
key on each frame of the IK controls, and warns naming the clip, the bone and the frame. Beyond, the cost
grows with the frames and nothing is worth it: on the glTF Fox a key at frame 100000 of one of its clips
took 15 s and 1.4 GB more memory (Blender's frames go on to 1048574: over ten times that), for a clip
that holds still after its first seconds; the build refuses it before anything changes, naming the key.
Before, a stray key in one of the file's other clips was kept without a word.
"""

from __future__ import annotations

import bpy

from ..core.errors import RigError
from ..core.notes import warning
from .export_range import far_key

# The most frames a stray key may stretch a clip's kept motion to; a capture whose keys fill
# their span is never taken for a stray key, however long.
MOST_FRAMES = 10_000


def stray_key(obj: bpy.types.Object, action: bpy.types.Action, label: str, frames: int) -> str | None:
    """A warning naming the stray key that stretched ``action`` (``label`` names it) to ``frames`` frames
    of kept motion, None without one; a RigError when those frames are more than ``MOST_FRAMES``."""
    why = far_key(obj, action, label)
    if why is None:
        return None
    if frames > MOST_FRAMES:
        raise RigError(f"{why}: keeping its motion would key the IK controls on each of those {frames} frames",
                       hint="Delete that key (Graph editor) and build again, or build with Animation set to "
                       "Ignore.")
    return warning(f"{why}: its motion was kept on every frame between, a key on each frame of the IK controls; "
                   "delete that key and build again to key the clip's own frames")
