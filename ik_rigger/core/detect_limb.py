"""Detection of one limb from its lower bone, in steps: the bone and its parent, the chain's top,
its end, its side and its proportions, each step giving its own reasons for a refusal (see
``core.detect``)."""

from __future__ import annotations

from dataclasses import dataclass

from .detect_chain import Chains
from .detect_ends import Ends
from .detect_names import Names
from .detect_result import DetectedLimb, Skipped
from .detect_shape import SHAPE_HINT, Shape
from .detect_words import (
    ARM,
    EXTREMITY_WORD,
    JOINT_WORD,
    KIND_WORD,
    NUMBERED,
    SEGMENT_WORD,
    TWO_SEGMENTS,
    UPPER_WORD,
    Rule,
)
from .model import Skeleton

# The most segments a leg or an arm is made of (a digitigrade leg's thigh, shin and foot).
_MOST_SEGMENTS = 3


class _RefusalError(Exception):
    """Why the lower bone being read cannot end a limb: becomes its ``Skipped``."""

    def __init__(self, reason: str, *, tails_off: bool = False, chain: tuple[str, ...] = (),
                 generated: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.tails_off = tails_off
        self.chain = chain
        self.generated = generated


@dataclass(frozen=True)
class _Top:
    """The chain above its lower bone, root first, and how it was found."""

    bones: tuple[str, ...]
    numbered: bool  # one whole-limb word numbered in turn (Leg1 > Leg2), so no upper word is needed
    above: bool  # the chain starts a segment above its upper bone (Quaternius' Leg > UpperLeg > LowerLeg)


def _generated_reason(prefix: str, exported: bool) -> str:
    """Why a generated rig's bone is no limb's; ``exported``: its DEF- bones are its limbs (``Names.exported``)."""
    if exported:
        return (f"it is a generated rig's {prefix}- bone, which nothing drives here (the rig came without its "
                "constraints and drivers, as an export leaves it): its DEF- chain is rigged, the bones the mesh "
                "deforms with")
    return (f"it is a generated rig's {prefix}- bone, driven by that rig's own controls; "
            "rig the metarig instead")


class LimbFinder:
    """The skeleton with its names read once, when first needed, finding the limb a lower bone ends."""

    def __init__(self, skeleton: Skeleton, tails_fixed: bool = False) -> None:
        self.skeleton = skeleton
        self.names = Names(skeleton)
        self.chains = Chains(skeleton, self.names)
        self.ends = Ends(skeleton, self.names)
        self.shape = Shape(skeleton, self.names, tails_fixed)

    def limb_ending_at(self, lower: str, rule: Rule) -> DetectedLimb | Skipped:
        """The limb whose lower bone is ``lower``, or why ``lower`` cannot end one."""
        try:
            upper = self._upper(lower, rule)
            top = self._run(upper, lower, rule) if self.names[lower].tag is not None else self._top(upper, lower, rule)
            chain, extremity = self._end(top, lower, rule.kind)
            side, disagreement = self.chains.side(chain + ((extremity,) if extremity else ()))
            if disagreement:
                raise _RefusalError(disagreement)
            chain, halves = self._proportioned(chain, extremity, rule.kind, top.above)
        except _RefusalError as refused:
            return Skipped(lower, refused.reason, tails_off=refused.tails_off, chain=refused.chain,
                           generated=refused.generated)
        positions = {self.names[bone].position for bone in chain} - {None}
        position = positions.pop() if len(positions) == 1 else None
        return DetectedLimb(rule.kind, side, chain, extremity, position, halves,
                            self.shape.tails_elsewhere(chain, extremity))

    def _upper(self, lower: str, rule: Rule) -> str:
        """``lower``'s parent, when both can be in a limb of their own."""
        lower_name = self.names[lower]
        exported = self.names.exported
        if lower_name.generated:
            raise _RefusalError(_generated_reason(lower_name.generated, exported), generated=not exported)
        upper = self.skeleton[lower].parent
        if upper is None:
            raise _RefusalError(f"it is named like the lower half of a {KIND_WORD[rule.kind]} but has no parent bone")
        upper_name = self.names[upper]
        if upper_name.generated:
            raise _RefusalError(f"its parent '{upper}' is skipped: {_generated_reason(upper_name.generated, exported)}",
                                generated=not exported)
        if self.chains.second_half(upper, lower):
            raise _RefusalError(f"it is the second half of the {SEGMENT_WORD[rule.kind][1]} '{upper}' > "
                           f"'{lower}', in the limb that '{upper}' ends")
        return upper

    def _top(self, upper: str, lower: str, rule: Rule) -> _Top:
        """The chain's bones above ``lower``: ``upper``, with its first half or a segment above it, or
        two whole-limb words numbered in turn (Leg1 > Leg2 > Leg3: three segments)."""
        top: tuple[str, ...] = (upper,)
        grand = self.skeleton[upper].parent
        above = False
        if grand is not None and self.chains.second_half(grand, upper):
            bent = self.shape.bent_halves(grand, upper, self.skeleton[lower].head, SEGMENT_WORD[rule.kind][0])
            if bent:
                raise _RefusalError(bent)
            top = (grand, upper)
        elif grand is not None and self.chains.segment_above(grand, upper, rule.kind):
            top, above = (grand, upper), True
        numbered = self.chains.numbered_in_turn(top[0], lower)
        if numbered and len(top) == 1 and grand is not None and self.chains.numbered_before(grand, upper):
            # A foot named for the leg under the root, at Leg3's end, says Leg3 is a segment however short
            # (Quaternius' spider: MidFrontLeg3.L is 0.55 of MidFrontLeg2.L, MidFrontFoot.L hangs at its end).
            footed = self.ends.detached_extremity((grand, upper, lower), rule.kind) is not None
            if not footed and (self.shape.short_end(upper, lower)
                               or (rule.kind == ARM and self.shape.joint_below(lower) is None)):
                # Leg1 > Leg2 > Leg3 where Leg3 is short (Arm3 ending the arm): the foot (hand) of Leg1 > Leg2.
                raise _RefusalError(f"it is the {EXTREMITY_WORD[rule.kind]} of '{grand}' > '{upper}', "
                               f"too short or too much at the end for a third segment")
            top = (grand, upper)
        if not numbered:
            self._check_upper_word(top, lower, rule)
        return _Top(top, numbered, above)

    def _run(self, upper: str, lower: str, rule: Rule) -> _Top:
        """The chain's bones above ``lower`` in a limb told apart from its side's others by a letter or number, its
        segments numbered after it (Mesh2Motion's spider: ``leg_a_1_l > leg_a_2_l > leg_a_3_l``): the whole run,
        ``lower`` its last. Unlike ``Leg1 > Leg2 > Leg3``, whose last may be the foot, the run names every segment
        and the tip below; a run of more than three is no leg or arm (a tentacle, a tail)."""
        kind = KIND_WORD[rule.kind]
        following = self.chains.numbered_next(lower)
        if following is not None:
            raise _RefusalError(f"'{following}' below it numbers its {kind} on, so the {kind} ends further down")
        if not self.chains.numbered_before(upper, lower):
            raise _RefusalError(f"it is the only bone numbered as its {kind}, with no {JOINT_WORD[rule.kind]} to "
                                f"bend: IK needs two bones at least, {TWO_SEGMENTS[rule.kind]}")
        run = [upper, lower]
        while (parent := self.skeleton[run[0]].parent) is not None and self.chains.numbered_before(parent, run[0]):
            run.insert(0, parent)
        if len(run) > _MOST_SEGMENTS:
            raise _RefusalError(f"it ends {len(run)} bones numbered as one {kind} ('{run[0]}' > ... > '{lower}'), "
                                f"more than a {kind}'s {_MOST_SEGMENTS} segments: a tentacle or a tail, not sure to "
                                f"be a {kind}; rig it by hand: select '{lower}', then Build IK Limb", chain=tuple(run))
        return _Top(tuple(run[:-1]), True, False)

    def _check_upper_word(self, top: tuple[str, ...], lower: str, rule: Rule) -> None:
        """Refuse a chain whose upper segment is not named as one: by its first half's name, or its
        second's when the first is named as its twist."""
        upper, upper_name, lower_name = top[0], self.names[top[0]], self.names[lower]
        if upper_name.base in rule.uppers or self.names[top[-1]].base in rule.uppers:
            return
        if lower_name.base in NUMBERED and upper_name.base == lower_name.base:
            raise _RefusalError(f"it and its parent '{upper}' are numbered {upper_name.index} and "
                           f"{lower_name.index}, not in turn, so they are not sure to be a {KIND_WORD[rule.kind]}'s "
                           "segments")
        if upper_name.is_helper:
            raise _RefusalError(f"its parent '{upper}' is named like a helper bone (twist, IK, ...), "
                           f"not {UPPER_WORD[rule.kind]}")
        if not upper_name.contains(rule.loose_uppers):
            raise _RefusalError(f"its parent '{upper}' is not named like {UPPER_WORD[rule.kind]}, "
                           f"so it is not sure to be a {KIND_WORD[rule.kind]}")

    def _end(self, top: _Top, lower: str, kind: str) -> tuple[tuple[str, ...], str | None]:
        """The whole chain, from ``top`` down through ``lower`` (and its second half or a third
        segment below it), and its foot or hand."""
        chain: tuple[str, ...] = (*top.bones, lower)
        extremity = self.ends.extremity(lower, kind)
        if extremity is None and top.numbered:
            # Leg1 > Leg2 > Leg3, Leg3 the foot (see Shape.short_end); else the run's tip (leg_a_3_l > leg_a_tip_l).
            extremity = self.chains.numbered_next(lower) or self.chains.tip_below(lower)
        if extremity is None:
            chain, extremity = self._half_below(chain, kind)
        # A leg of three segments already (Quaternius' FrontLeg > FrontUpLeg > FrontLowLeg) has its foot below, however
        # long and in line (the parasaurolophus' front foot), not a fourth segment.
        third = self.shape.third_segment(top.bones[0], lower, extremity) if extremity and not top.above else None
        if third is not None:
            chain, extremity = (*chain, third[0]), third[1]
        if extremity is None:
            extremity = self.ends.detached_extremity(chain, kind)
        return chain, extremity

    def _half_below(self, chain: tuple[str, ...], kind: str) -> tuple[tuple[str, ...], str | None]:
        """``chain`` with the second half of its lower bone's segment, and the foot or hand below that half."""
        lower = chain[-1]
        half = next((child.name for child in self.skeleton.children(lower)
                     if self.chains.second_half(lower, child.name)), None)
        if half is None:
            return chain, None
        below = self.ends.extremity(half, kind)
        end = self.skeleton[below].head if below else self.skeleton[half].tail
        bent = self.shape.bent_halves(lower, half, end, SEGMENT_WORD[kind][1])
        if not bent:
            return (*chain, half), below
        if not self.names[half].is_helper:  # a twist bone turning away is a helper beside the limb
            raise _RefusalError(bent)
        return chain, None

    def _proportioned(self, chain: tuple[str, ...], extremity: str | None, kind: str,
                      above: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The chain, without a bone above it that is no segment by its length, and its second halves."""
        halves = tuple(second for first, second in zip(chain, chain[1:]) if self.chains.second_half(first, second))
        problem = self.shape.proportion(chain, halves, extremity, kind)
        if problem and above and not self.shape.proportion(chain[1:], halves, extremity, kind):
            return chain[1:], halves
        if problem:
            raise _RefusalError(problem, tails_off=problem.endswith(SHAPE_HINT), chain=chain)
        return chain, halves
