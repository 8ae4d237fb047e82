"""Limbs found by name and structure, turned into build requests (no bpy needed)."""

from __future__ import annotations

from dataclasses import replace

from ..core.detect import Detection, detect_limbs
from ..core.plan import LimbOptions, Skeleton


def detected_requests(
    skeleton: Skeleton, defaults: LimbOptions, taken: frozenset[str] | set[str] = frozenset()
) -> tuple[list[tuple[str, LimbOptions]], Detection]:
    """Build requests for the limbs detected in ``skeleton`` that share no bone with ``taken``.

    Each request keeps ``defaults`` but for the chain length and extremity detection found.
    """
    detection = detect_limbs(skeleton, tails_fixed=defaults.fix_orientation)
    requests = []
    for limb in detection.limbs:
        if taken & set(limb.chain):
            continue
        options = replace(defaults, chain_length=len(limb.chain),
                          extremity_mode="BONE" if limb.extremity else "NONE",
                          extremity_name=limb.extremity or "")
        requests.append((limb.last, options))
    return requests, detection
