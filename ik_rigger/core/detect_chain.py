"""Detection's reading of a chain by its names: which rule a lower bone follows, which bones are
the halves of one segment or one whole-limb word numbered in turn, and the side a chain states
(see ``core.detect``)."""

from __future__ import annotations

from .detect_names import Name, Names
from .detect_words import (
    EXTREMITIES,
    EXTREMITY_WORDS,
    JOINT_UPPERS,
    NUMBERED,
    RULE_OF_LOWER,
    SIDE_WORD,
    TAIL_JOINT_RULES,
    TAIL_JOINTS,
    UPPERS,
    VOCABULARY,
    WHOLE_WORD,
    Rule,
)
from .model import Skeleton


def _follows(first: int | None, second: int) -> bool:
    """Whether a name numbered ``second`` follows one numbered ``first`` (None: no number). A run's first
    name may have none: Blender numbers its copies from 1 (``frontleg > frontleg001``), Quaternius from 2
    (``FrontLeg.L > FrontLeg2.L``)."""
    return first == second - 1 if first is not None else second in (1, 2)


class Chains:
    """The skeleton's bones as their names link them into a limb's chain."""

    def __init__(self, skeleton: Skeleton, names: Names) -> None:
        self.skeleton = skeleton
        self.names = names

    def rule_of(self, name: str) -> Rule | None:
        """The rule for ``name`` as a lower bone; a numbered whole-limb word makes its own, and so does a joint
        ending the limb where the bones around it make it the lower segment (``_ends_at_joint``)."""
        read = self.names[name]
        rule = RULE_OF_LOWER.get(read.base)
        if rule is None and read.base in NUMBERED and (read.index is not None or read.copy):
            return Rule(NUMBERED[read.base], frozenset({read.base}), frozenset(), frozenset())
        if rule is None and read.base in TAIL_JOINTS and self._ends_at_joint(name, TAIL_JOINTS[read.base]):
            return TAIL_JOINT_RULES[read.base]
        return rule

    def _ends_at_joint(self, name: str, kind: str) -> bool:
        """Whether ``name``, named after the joint ending the limb (ankle, wrist), is the segment ending there: the
        whole-limb word names its parent, unnumbered, and a bone named as the foot or hand hangs below it
        (Mesh2Motion's dragon: ``front_leg_l > front_ankle_l > front_foot_l``). Where the parent is the lower
        bone of a limb by its own names (Mixamo's ``UpLeg > Leg``), the ankle below is that limb's foot."""
        bones = self.skeleton
        parent = bones[name].parent
        if parent is None or self.names[name].generated:
            return False
        above = self.names[parent]
        if (above.base != WHOLE_WORD[kind] or above.index is not None or above.tag is not None or above.copy
                or above.generated or above.sides != self.names[name].sides):
            return False
        own = RULE_OF_LOWER.get(above.base)
        grand = bones[parent].parent
        if own is not None and grand is not None and self.names[grand].base in own.uppers:
            return False
        return any(self.names[child.name].base in EXTREMITIES[kind] and self.names[child.name].base not in TAIL_JOINTS
                   and not self.names[child.name].generated for child in bones.children(name))

    def second_half(self, first: str, second: str) -> bool:
        """Whether the names make ``second`` the second half of a limb segment that ``first`` begins.

        MakeHuman's ``upperleg01 > upperleg02`` name both halves with one limb word,
        numbered; DAZ's ``ThighBend > ThighTwist`` add "twist" to the second, Auto-Rig Pro's
        exports to the first (``thigh_twist > thigh_stretch``, ``c_arm_twist_offset >
        arm_stretch``). Whole-limb words numbered (``Leg01 > Leg02``) are successive
        segments instead.
        """
        one, two = self.names[first], self.names[second]
        if one.generated or two.generated:
            return False
        if one.base in VOCABULARY and one.base not in EXTREMITY_WORDS:
            if one.base == two.base:
                return one.base not in NUMBERED and one.base not in JOINT_UPPERS
            return "twist" in two.words and (two.contains(frozenset({one.base})) or self._end_twist(one, two))
        return (two.base in VOCABULARY and two.base not in EXTREMITY_WORDS and "twist" in one.words
                and one.contains(frozenset({two.base})))

    @staticmethod
    def _end_twist(lower: Name, twist: Name) -> bool:
        """Whether ``twist`` is named as the twist of the joint that ends ``lower``'s segment: Meta's body
        skeleton's ``LowerLeg > FootAnkleTwist > FootAnkle``, ``ArmLower > HandWristTwist > HandWrist``."""
        rule = RULE_OF_LOWER.get(lower.base)
        return rule is not None and "".join(word for word in twist.words if word != "twist") in EXTREMITIES[rule.kind]

    def numbered_before(self, first: str, second: str) -> bool:
        """Whether ``first`` and ``second`` are one whole-limb word numbered in turn (``Leg1 > Leg2``,
        or the run's first unnumbered: Quaternius' spider's ``FrontLeg.L > FrontLeg2.L > FrontLeg3.L``)."""
        one, two = self.names[first], self.names[second]
        return (not one.generated and one.base == two.base and one.base in NUMBERED and two.index is not None
                and _follows(one.index, two.index) and one.sides == two.sides and one.position == two.position
                and one.tag == two.tag or self.copies(first, second))

    def copies(self, first: str, second: str) -> bool:
        """Whether ``second`` is a COLLADA copy of ``first``'s whole-limb word on its side (Cesium Man's
        ``arm_joint_L__4_ > __3_ > __2_``, ``arm_joint_R > __2_ > __3_``): the copies' numbers count
        names, not joints, so the hierarchy alone orders the segments."""
        one, two = self.names[first], self.names[second]
        return (two.copy and not one.generated and not two.generated and one.base == two.base
                and one.base in NUMBERED and one.index is None and two.index is None and one.sides == two.sides)

    def numbered_in_turn(self, upper: str, lower: str) -> bool:
        """Whether the names make ``upper > lower`` successive segments of one whole-limb word: ``Leg01 >
        Leg02``, a name and its first copy as Blender numbers them (``frontleg > frontleg001``) or
        Quaternius does (``FrontLeg.L > FrontLeg2.L``), or COLLADA's copies."""
        one, two = self.names[upper], self.names[lower]
        return (two.base in NUMBERED and two.index is not None and one.base == two.base and one.tag == two.tag
                and _follows(one.index, two.index) or self.copies(upper, lower))

    def numbered_next(self, bone: str) -> str | None:
        """The one child of ``bone`` that numbers its whole-limb word on (``Leg2`` below ``Leg1``)."""
        following = [child.name for child in self.skeleton.children(bone) if self.numbered_before(bone, child.name)]
        return following[0] if len(following) == 1 else None

    def tip_below(self, bone: str) -> str | None:
        """The one child of ``bone`` named as the tip of the whole-limb word ``bone`` numbers (``leg_a_tip_l``
        below ``leg_a_3_l``, Mesh2Motion's spider's): the limb's end, whose name says it is no segment."""
        one = self.names[bone]
        tips = [child.name for child in self.skeleton.children(bone)
                if (two := self.names[child.name]).words == (one.base, "tip") and two.tag == one.tag
                and two.sides == one.sides and two.position == one.position and not two.generated]
        return tips[0] if len(tips) == 1 else None

    def segment_above(self, first: str, middle: str, kind: str) -> bool:
        """Whether ``first`` is a three-segment limb's first segment, above ``middle``, its second.

        A mech's ``UpperLeg > MidLeg > LowerLeg`` name the middle one so; animals' ``Leg >
        UpperLeg > LowerLeg`` (Quaternius') put the whole-limb word above the upper one.
        """
        one, two = self.names[first], self.names[middle]
        if one.generated or one.is_helper or one.sides != two.sides or one.position != two.position:
            return False
        whole, uppers = WHOLE_WORD[kind], UPPERS[kind]
        if two.words[:1] in (("mid",), ("middle",)) and "".join(two.words[1:]) == whole:
            return one.base in uppers
        return one.base == whole and one.index is None and two.base in uppers and two.base != whole

    def side(self, bones: tuple[str, ...]) -> tuple[str | None, str]:
        """The side all ``bones`` state, or why they do not agree on one."""
        for bone in bones:
            if len(self.names[bone].sides) > 1:
                return None, f"'{bone}' names both sides, so the limb's side is not sure"
        sides = {bone: self.names[bone].side for bone in bones}
        if len(set(sides.values())) > 1:
            said = ", ".join(f"'{bone}' is {SIDE_WORD[side]}" if side else f"'{bone}' has no side"
                             for bone, side in sides.items())
            return None, f"its bones disagree on the side ({said}), so the limb's side is not sure"
        return sides[bones[0]], ""
