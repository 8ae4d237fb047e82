"""A pose without keys, kept through a build: the IK controls put on it.

Importers pose a character's bones where the file's nodes stand away from their bind pose (a
glTF's node transforms, an FBX's bind pose), and a user may pose one by hand and never key it.
No key moves such a limb, so nothing bakes it; left at rest, its new controls would pull the
foot or hand back to where it rests and the character would change at the click. Instead each
such limb's controls are snapped onto the pose it shows (as Snap IK to FK puts them, unkeyed).
"""

from __future__ import annotations

from collections.abc import Sequence

import bpy
from mathutils import Matrix

from ..core.errors import RigError
from ..core.geometry import turn_degrees
from ..core.notes import warning
from ..limb.options import LimbOptions
from ..limb.plan import LimbPlan
from . import records, snap
from .motion_read import limb_bones

# How far an evaluated bone may stand from its rest before its limb counts as posed: far below what
# anyone sees, well above single precision's noise.
POSED_DISTANCE = 1e-5  # of the chain's length
POSED_DEGREES = 1e-3


def posed_still(obj: bpy.types.Object, plans: Sequence[LimbPlan], options: Sequence[LimbOptions],
                modes: Sequence[str], rebuilt: set[int]) -> list[int]:
    """Before the build: the new limbs that keep their motion (``animation`` not IGNORE) but no key moves
    (``modes`` IGNORE), whose chain or extremity stands away from its rest in the pose shown now."""
    candidates = [index for index, (chosen, mode) in enumerate(zip(options, modes))
                  if index not in rebuilt and chosen.animation != "IGNORE" and mode == "IGNORE"]
    if not candidates:
        return []
    shown = snap.evaluated_pose(obj)
    bones = obj.data.bones
    found = []
    for index in candidates:
        chain = plans[index].chain
        length = sum(bones[name].length for name in chain)
        if any(_apart(bones[name].matrix_local, shown[name], length) for name in limb_bones(plans[index])):
            found.append(index)
    return found


def _apart(rest: Matrix, pose: Matrix, length: float) -> bool:
    return ((rest.translation - pose.translation).length > POSED_DISTANCE * length
            or turn_degrees(rest, pose) > POSED_DEGREES)


def keep_pose(obj: bpy.types.Object, plans: Sequence[LimbPlan], indexes: Sequence[int],
              notes: dict[int, list[str]]) -> None:
    """After the constraint stage: each limb of ``indexes`` gets its controls onto the pose its bones
    show, unkeyed; where its IK cannot show that pose (a constraint of the user's on a control), a
    warning says so and what to do."""
    for index in indexes:
        last = plans[index].chain[-1]
        try:
            snap.snap_ik_to_fk(obj, records.limb_of(obj, last))
        except RigError as error:
            notes.setdefault(index, []).append(warning(
                f"{last} was posed (not keyed) and its IK controls could not be put on that pose: "
                f"{error.problem}; pose it again with its IK controls, or use Snap IK to FK"))
            continue
        notes.setdefault(index, []).append(
            f"{last} was posed (not keyed): its IK controls were put on that pose, so it shows as it did")
