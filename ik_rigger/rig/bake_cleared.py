"""Whether Bake FK to IK may clear the chain's own keys (Clear the Other Side) and still play the motion.

Blender's IK starts each solve from the chain's own pose: it takes from it each bone's turn about its
length, which the handle and pole do not set, and, where the handle's IK Weight is below 1, the part of
the pose the IK leaves to it. Cleared, those keys leave the chain at its rest there, and the baked IK
off the motion (the Mixamo capture's shin by 15 degrees, its thigh by 27 at IK Weight 0.5). After
clearing, the baked IK is played over the frames; where a chain bone stands off the FK motion, the bake
is refused (``bake.bake_limbs`` gives back everything it wrote), naming the bone and what to do.
"""

from __future__ import annotations

from collections.abc import Sequence

import bpy
from mathutils import Matrix

from ..core.errors import RigError
from ..core.geometry import turn_degrees
from ..parts.ik import IK_WEIGHT
from . import records
from .bake_limits import OFF_DEGREES, in_ik
from .keys import evaluated_poses


def check(obj: bpy.types.Object, parts: records.Parts, frames: Sequence[int], fk: dict[str, list[Matrix]]) -> None:
    """Refuse a limb whose baked IK, its chain's keys cleared, stands more than ``OFF_DEGREES`` off ``fk`` (the
    FK motion's armature-space poses on each of ``frames``)."""
    names = [name for name in parts.chain if name in fk]
    if parts.handle is None or not names:
        return
    with in_ik(obj, parts):
        shown = evaluated_poses(obj, frames, names)
    off, name, frame = max((turn_degrees(shown[name][number], fk[name][number]), name, frame)
                           for name in names for number, frame in enumerate(frames))
    if off <= OFF_DEGREES:
        return
    weight = obj.pose.bones[parts.handle].get(IK_WEIGHT, 1.0)
    raise RigError(f"would stand {off:.1f} degrees off the FK motion on frame {frame} once its own keys are cleared: "
                   "Blender's IK takes from the chain's own pose each bone's turn about its length"
                   + (f", and the part the IK Weight ({weight:.2f}) leaves to it" if weight < 1.0 else ""),
                   bone=name, hint="Bake without Clear the Other Side: the chain's keys then only start the IK.")
