"""Soft IK of an earlier release on an armature scaled unevenly: refused by what would land it off.

Before soft IK's gauge bone, its distance's driver read the world distance from the chain's root to its
target over the armature's average world scale: exact under a uniform scale, off along a line where the
axes' scales differ. Snapping IK to FK and baking FK to IK send the target where this release's soft IK
(measured in the armature's space) brings the chain's end, so on such a limb, scaled unevenly, they would
land it off (17 degrees on an arm at 1:3:2); a rebuild gives the limb this release's soft IK.
"""

from __future__ import annotations

import bpy

from ..core.errors import RigError
from ..parts.soft_ik import ROLE_SOFT, ROLE_SOFT_GAUGE
from .records import Parts

# Scales closer than this share of the first axis's are one uniform scale.
_UNIFORM = 1e-6


def check(obj: bpy.types.Object, parts: Parts, doing: str) -> None:
    """Refuse ``doing`` on a limb whose soft IK has no gauge bone, on an armature scaled unevenly."""
    if ROLE_SOFT not in parts.made or ROLE_SOFT_GAUGE in parts.made:
        return
    scale = [abs(value) for value in obj.matrix_world.to_scale()]
    if max(scale) - min(scale) <= _UNIFORM * max(scale):
        return
    shown = ", ".join(f"{value:.3g}" for value in scale)
    raise RigError(f"its soft IK was made by an earlier IK Rigger, which measures the reach in world space: on "
                   f"'{obj.name}', scaled unevenly ({shown}), {doing} would land the chain off",
                   bone=parts.chain[-1] if parts.chain else None,
                   hint="Rebuild the limb (Rebuild Limb) to give it this release's soft IK, exact at any scale.")
