"""Build requests beyond the one asked: the limbs detection found, the other side's (no bpy needed)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import replace

from ..core import detect_names, naming
from ..core.checks import check_mirrored
from ..core.detect import Detection, detect_limbs
from ..core.detect_words import VOCABULARY
from ..core.errors import RigError
from ..core.model import Skeleton, automatic_extremity
from .options import LimbOptions, renamed_bones
from .plan import chain_ending_at


def detected_requests(
    skeleton: Skeleton, defaults: LimbOptions, taken: frozenset[str] | set[str] = frozenset(),
    follows: Mapping[str, str] | None = None,
) -> tuple[list[tuple[str, LimbOptions]], Detection]:
    """Build requests for the limbs detected in ``skeleton`` that share no bone with ``taken``.

    Each request keeps ``defaults`` but for the chain length and extremity detection found. ``follows``:
    the bones that copy others' transforms wholly (``detect_limbs``).
    """
    # Whatever way the bones point, the build solves the limb from joint to joint: on the bones turned
    # (fix_orientation), or on a hidden chain of its own (parts.hidden). Their tails do not matter.
    detection = detect_limbs(skeleton, tails_fixed=True, follows=follows)
    requests = []
    for limb in detection.limbs:
        if taken & set(limb.chain):
            continue
        requests.append((limb.last, _detected_options(defaults, len(limb.chain), limb.extremity)))
    return requests, detection


# Blender's own names for new bones, "Bone", "Bone.001"..., and the leaf an FBX exporter adds ("Bone.003_end")
_DEFAULT_NAME = re.compile(r"Bone(\.\d{3,})?(_end)?")


def unnamed(detection: Detection, bones: Collection[str]) -> str:
    """Why no bone of ``bones`` was even read as a limb's (Blender's default names, or none named like a leg's
    or an arm's), or why those read so are none (each is one bone); "" where detection found a limb or skipped
    one for another reason."""
    if detection.skipped and all(item.one_bone for item in detection.skipped) and not detection.limbs:
        shown = ", ".join(repr(item.bone) for item in detection.skipped[:4])
        more = "..." if len(detection.skipped) > 4 else ""
        return f"its legs and arms are one bone each ({shown}{more}), with no knee or elbow for IK to bend"
    if not bones or detection.limbs or detection.skipped:
        return ""
    if 2 * sum(1 for name in bones if _DEFAULT_NAME.fullmatch(name)) > len(bones):
        return "most of its bones keep Blender's default names ('Bone', 'Bone.001'...), which name no limb"
    # Named so, yet read as no chain: a lone thigh or forearm, or words no rule pairs.
    named = sorted(name for name in bones if detect_names.read_name(name, bones).contains(VOCABULARY))
    if named:
        shown = ", ".join(repr(name) for name in named[:4]) + ("..." if len(named) > 4 else "")
        return (f"its bones named like parts of legs or arms ({shown}) make no chain it can read (thigh > shin, "
                "upper arm > forearm...)")
    return "no bone is named like a leg's or an arm's (thigh > shin, upper arm > forearm...)"


def no_limbs(armature: str, detection: Detection, bones: Collection[str] = ()) -> RigError:
    """The refusal of an armature on which no limb was rigged: a generated rig (Rigify's) is told it has its IK;
    where no bone of ``bones`` was even read as a limb's, it is said why (Blender's default names, or none
    named like a leg's or an arm's)."""
    if any(item.generated for item in detection.skipped):
        return RigError(f"'{armature}' is a generated rig: its legs and arms are ORG-, DEF- and MCH- bones that "
                        "its own IK/FK controls drive, so it has its own IK", hint="Animate it with its own IK "
                        "controls; IK Rigger rigs a bare armature (the metarig, or a skeleton without such a rig).")
    why = unnamed(detection, bones)
    if why and detection.skipped:
        return RigError(f"no limbs found on '{armature}': {why}", hint="Pose them by turning them; for IK, a leg "
                        "needs a thigh and a shin, an arm an upper arm and a forearm, each a bone of its own.")
    if why:
        return RigError(f"no limbs found on '{armature}': {why}", hint="Build them one by one with api.build, from "
                        "the last bone of each (the shin or forearm), or name the bones as a skeleton family does.")
    return RigError(f"no limbs found on '{armature}'", hint="Build them one by one with api.build.")


def _detected_options(defaults: LimbOptions, chain_length: int, extremity: str | None) -> LimbOptions:
    """``defaults`` with the chain length and extremity detection found: ``replace(defaults, ...)``, made
    without the frozen dataclass's ``__init__`` (a guarded setattr for each of its thirty fields), which took
    a fifth of detecting a many-legged body's legs. The options check nothing on being made."""
    options = object.__new__(type(defaults))
    options.__dict__.update(defaults.__dict__, chain_length=chain_length,
                            extremity_mode="BONE" if extremity else "NONE", extremity_name=extremity or "")
    return options


def mirrored(skeleton: Skeleton, last: str, options: LimbOptions) -> tuple[str, LimbOptions] | None:
    """The same limb on the other side, when the names carry a side and it exists.

    Raises ``RigError`` when the other side's chain or extremity is not, bone for
    bone, the mirror of this side's (a missing thigh.R would rig hips > shin.R).
    """
    names = set(skeleton.bones)
    other = naming.flip_name(last, names)
    if other is None or other not in names:
        return None
    flip = {"X_POS": "X_NEG", "X_NEG": "X_POS"}
    mirrored = renamed_bones(replace(options, bend_direction=flip.get(options.bend_direction, options.bend_direction)),
                             lambda bone: naming.flip_name(bone, names))
    chain = chain_ending_at(skeleton, last, options.chain_length)
    other_chain = skeleton.lineage(other, options.chain_length)[::-1]
    extremities: tuple[str | None, str | None] = (None, None)
    if options.extremity_mode == "AUTO":
        extremities = automatic_extremity(skeleton, last), automatic_extremity(skeleton, other)
    elif options.extremity_mode == "BONE":
        # An empty name is no extremity on either side: the build says so for this side.
        extremities = options.extremity_name or None, mirrored.extremity_name or None
    check_mirrored(chain, extremities[0], other_chain, extremities[1], names)
    return other, mirrored
