"""Detection's geometric checks: where joints are, how long segments are against each other,
whether two bones continue one line, and the reasons given when a chain's shape is refused
(see ``core.detect``)."""

from __future__ import annotations

import math

from mathutils import Vector

from . import geometry
from .detect_names import Names
from .detect_words import EXTREMITY_WORD, THIRD_SEGMENTS
from .model import Skeleton

# A limb segment more than this many times as long as the other is a helper bone or a
# mislabelled one, not half of a leg or an arm (human and animal limbs stay well within it).
MAX_SEGMENT_RATIO = 4.0
# A foot at least this long against the shin, and within this angle of the leg's line
# from hip to ankle, is a third leg segment: animals' metatarsi measure 0.7 to 1.1 of the
# shin and run 10 to 35 degrees off that line; a human foot is 0.3 to 0.45 of the shin
# and turns 60 degrees or more, a human hand 0.4 of the forearm.
_THIRD_SEGMENT_RATIO = 0.55
_THIRD_SEGMENT_MAX_DEGREES = 45.0
# A chain bone shorter than this share of its segment ends far from the next joint:
# IK moves bone tails, so it would not carry the foot or hand.
_MIN_BONE_SHARE = 0.2
# The chain's last bone longer than this share of its segment ends far past the foot or hand,
# and IK carries that tail to the handle: the handle would float away from the foot.
_MAX_LAST_SHARE = 1.5
# A chain bone whose tail lies farther than this share of its segment from the next joint points
# elsewhere (an importer's guess): IK would carry that tail, not the joint, to the handle.
_MAX_TAIL_OFF = 0.5
# Two bones named as the halves of one segment must continue each other's line, joint to
# joint, within this angle: a knee or an elbow, however straight, is told apart by its names.
HALF_MAX_DEGREES = 20.0
_EPSILON = 1e-9

# Named as the importers' panels name their settings: glTF's Bone Dir, FBX's Automatic Bone Orientation.
IMPORT_HINT = ("give the bones tails on their next joint (import a glTF with Bone Dir set to Temperance, an FBX "
               "with Automatic Bone Orientation)")
SHAPE_HINT = f"{IMPORT_HINT}, or rig with Fix Bone Orientation on"


def in_line_angle(start: Vector, joint: Vector, end: Vector) -> float:
    """How far (radians) the line from ``joint`` to ``end`` turns away from the line from ``start`` to ``joint``."""
    into, out = joint - start, end - joint
    if into.length < _EPSILON or out.length < _EPSILON:
        return math.pi
    return float(into.angle(out))


def _angle_cosine(a: Vector, b: Vector) -> float:
    return a.dot(b) / max(a.length * b.length, _EPSILON)


class Shape:
    """The skeleton's joints and lengths, as detection checks a chain against them."""

    def __init__(self, skeleton: Skeleton, names: Names, tails_fixed: bool = False) -> None:
        self.skeleton = skeleton
        self.names = names
        self.tails_fixed = tails_fixed

    def joint_below(self, bone: str) -> tuple[Vector, list[str]] | None:
        """Where the bones below ``bone`` start, when they all start at one joint, and those bones."""
        children = [child for child in self.skeleton.children(bone) if not self.names[child.name].generated]
        if not children:
            return None
        head = self.skeleton[bone].head
        joint = children[0].head
        span = (joint - head).length
        if span < _EPSILON or any((child.head - joint).length > geometry.SAME_JOINT * span for child in children):
            return None
        return joint, sorted(child.name for child in children)

    def _end_segment(self, lower: str, foot: str) -> tuple[Vector, Vector, list[str]] | None:
        """Below ``lower``: the span from its head to ``foot``'s, the span from ``foot``'s head to the
        joint below it, and the bones starting there; None without one joint below ``foot``."""
        below = self.joint_below(foot)
        if below is None:
            return None
        head = self.skeleton[foot].head
        return head - self.skeleton[lower].head, below[0] - head, below[1]

    def short_end(self, lower: str, foot: str) -> bool:
        """Whether ``foot``, below ``lower``, spans to the joint below it less than a third segment
        does (``_THIRD_SEGMENT_RATIO`` of ``lower``'s): a human foot or hand."""
        spans = self._end_segment(lower, foot)
        return spans is not None and spans[1].length < _THIRD_SEGMENT_RATIO * spans[0].length

    def third_segment(self, upper: str, lower: str, foot: str) -> tuple[str, str | None] | None:
        """``foot`` and the toe below it when ``foot`` is a third leg segment (long enough, and close
        enough to the leg's line from hip to ankle, as an animal's metatarsus is), else None."""
        foot_name = self.names[foot]
        spans = self._end_segment(lower, foot)
        if foot_name.base not in THIRD_SEGMENTS or foot_name.is_helper or spans is None:
            return None
        shin, segment, children = spans
        leg_line = self.skeleton[foot].head - self.skeleton[upper].head
        if not _THIRD_SEGMENT_RATIO * shin.length <= segment.length <= MAX_SEGMENT_RATIO * shin.length:
            return None
        if _angle_cosine(segment, leg_line) < math.cos(math.radians(_THIRD_SEGMENT_MAX_DEGREES)):
            return None
        plain = [child for child in children if not self.names[child].is_helper
                 or self.names[child].contains(frozenset({"toe", "toes"}))]
        toe = plain[0] if len(plain) == 1 else (children[0] if len(children) == 1 else None)
        return foot, toe

    def proportion(self, chain: tuple[str, ...], halves: tuple[str, ...], extremity: str | None, kind: str) -> str:
        """Why the chain's bones are not the segments of one limb by their lengths, or ''."""
        # Joint to joint from the heads: importers place tails differently, heads are the joints.
        bones = self.skeleton
        segments = [name for name in chain if name not in halves]
        upper, lower = segments[0], segments[1]
        first = (bones[lower].head - bones[upper].head).length
        end: Vector | None = bones[extremity].head if extremity else None
        if end is None and len(segments) == 2:
            below = self.joint_below(chain[-1])
            end = below[0] if below else None
        if len(segments) == 2:
            second = ((end - bones[lower].head).length if end is not None
                      else sum(bones[name].length for name in chain[chain.index(lower):]))
        else:
            second = (bones[segments[2]].head - bones[lower].head).length
        if min(first, second) < _EPSILON or max(first, second) > MAX_SEGMENT_RATIO * min(first, second):
            if end is not None or len(segments) > 2:
                return (f"its parent '{upper}' spans {first:.3g} and it spans {second:.3g}: too unlike to be "
                        "the two halves of one limb")
            return (f"its parent '{upper}' spans {first:.3g} and it is {second:.3g} long, with no single joint "
                    f"below it to show where its segment ends: too unlike to be the two halves of one limb; "
                    f"{IMPORT_HINT}")
        if self.tails_fixed:  # the build points every tail at its next joint
            return ""
        joints = [bones[name].head for name in chain] + ([end] if end is not None else [])
        for name, head, following in zip(chain, joints, joints[1:]):
            span = (following - head).length
            if bones[name].length < _MIN_BONE_SHARE * span:
                return (f"'{name}' is {bones[name].length:.3g} long but its segment spans {span:.3g}: IK moves the "
                        f"chain's bone tails, which lie far from the joints, so it would not carry the "
                        f"{EXTREMITY_WORD[kind]}; {SHAPE_HINT}")
            if name == chain[-1] and bones[name].length > _MAX_LAST_SHARE * span:
                return (f"'{name}' is {bones[name].length:.3g} long but its segment spans {span:.3g}: IK carries its "
                        f"tail, far past the {EXTREMITY_WORD[kind]}, to the handle, so the handle would float away "
                        f"from the {EXTREMITY_WORD[kind]}; {SHAPE_HINT}")
        return ""

    def tails_elsewhere(self, chain: tuple[str, ...], extremity: str | None) -> bool:
        """Whether a bone of ``chain`` ends far from its next joint (the next bone's head, or the foot's
        or hand's): farther than ``_MAX_TAIL_OFF`` of the segment between the two joints."""
        bones = self.skeleton
        ends = [bones[name].head for name in chain[1:]] + ([bones[extremity].head] if extremity else [])
        return any((bones[name].tail - end).length > _MAX_TAIL_OFF * (end - bones[name].head).length
                   for name, end in zip(chain, ends))

    def bent_halves(self, first: str, second: str, end: Vector, segment: str) -> str:
        """Why ``first > second``, named as the two halves of one segment, are not, or ''."""
        bones = self.skeleton
        angle = math.degrees(in_line_angle(bones[first].head, bones[second].head, end))
        if angle <= HALF_MAX_DEGREES:
            return ""
        return (f"'{first}' > '{second}' are named as the two halves of the {segment}, but they meet at "
                f"{angle:.0f} degrees, so the knee or elbow could be at either; rig it by hand")

