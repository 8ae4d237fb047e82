"""Detection's vocabulary: the words that name limb bones, which lower bone accepts which
upper one, and the words a report uses for limbs (see ``core.detect``)."""

from __future__ import annotations

from dataclasses import dataclass

from . import naming

LEG = "LEG"
ARM = "ARM"
FRONT = "FRONT"
HIND = "HIND"
# A spider's or an insect's middle pairs of legs, between the front and the hind ones: "MidFrontLeg", "MidBackLeg".
MID_FRONT = "MID_FRONT"
MID_HIND = "MID_HIND"

POSITION_WORDS = {"front": FRONT, "fore": FRONT, "hind": HIND, "rear": HIND, "back": HIND}
MID_WORDS = frozenset({"mid", "middle"})
MIDDLE_OF = {FRONT: MID_FRONT, HIND: MID_HIND}

# Words that make a bone a helper, a finger or a toe rather than a limb segment or its
# foot or hand, whatever else its name says. The tags of the bones IK Rigger makes are
# among them, so a handle, pole or clone from an earlier run is never taken for a limb.
NOT_LIMB_WORDS = frozenset(
    {word.lower() for tag in (naming.TAG_HANDLE, naming.TAG_POLE, naming.TAG_CLONE) for word in tag.split("_")}
    | {"twist", "roll", "fk", "tweak", "helper", "target", "ctrl", "control", "mch", "bend", "stretch", "parent",
       "socket", "offset", "end", "tip", "toe", "toes", "ball", "heel", "finger", "thumb", "index", "middle", "ring",
       "pinky", "little", "palm", "metacarpal", "share"}
)


@dataclass(frozen=True)
class Rule:
    """Which parents a lower bone named ``lowers`` accepts as the upper bone of its limb."""

    kind: str
    lowers: frozenset[str]
    uppers: frozenset[str]
    # A parent whose name only contains one of these among other words (``UpperLeg_Main``)
    # is accepted too; empty when the lower word is too common to allow that.
    loose_uppers: frozenset[str]


# With the words either way round: "UpperLeg", "Leg_Upper".
_LEG_UPPERS = frozenset({"thigh", "upleg", "upperleg", "legupper", "leg", "femur"})
# Some rigs name the upper arm after its muscle: "bicep.L > forearm.L > hand.L".
_ARM_UPPERS = frozenset({"upperarm", "armupper", "uparm", "arm", "shldr", "humerus", "bicep", "biceps"})
_RULES = (
    # Quaternius' animals shorten the words: "FrontUpLeg > FrontLowLeg"; his skeleton monster says "DownLeg".
    Rule(LEG, frozenset({"shin", "calf", "shank", "lowerleg", "leglower", "lowleg", "downleg"}),
         _LEG_UPPERS, _LEG_UPPERS),
    # The shin's bone names it in motion capture (CMU's "lfemur > ltibia") and in French ("cuisse.L > tibia.L").
    Rule(LEG, frozenset({"tibia"}), _LEG_UPPERS | {"cuisse"}, _LEG_UPPERS | {"cuisse"}),
    # Joint-named: the bone called Knee runs from the knee to the ankle, below Hip or a thigh.
    Rule(LEG, frozenset({"knee"}), _LEG_UPPERS | {"hip"}, _LEG_UPPERS),
    # Mixamo's UpLeg > Leg; "leg" alone names a whole leg too often to trust a loosely named parent.
    Rule(LEG, frozenset({"leg"}), frozenset({"upleg", "upperleg", "thigh"}), frozenset()),
    Rule(ARM, frozenset({"forearm", "lowerarm", "armlower", "lowarm", "downarm", "radius", "ulna"}), _ARM_UPPERS,
         _ARM_UPPERS),
    # Joint-named: the bone called Elbow runs from the elbow to the wrist, below Shoulder or an upper arm.
    Rule(ARM, frozenset({"elbow"}), _ARM_UPPERS | {"shoulder"}, _ARM_UPPERS),
    # German, French and Spanish rigs: "Oberschenkel_L > Unterschenkel_L", "cuisse.L > jambe.L",
    # "Brazo.L > Antebrazo.L". Each lower word takes only its own language's upper one.
    *(Rule(kind, frozenset({lower}), frozenset({upper}), frozenset({upper})) for kind, upper, lower in (
        (LEG, "oberschenkel", "unterschenkel"), (LEG, "cuisse", "jambe"), (LEG, "muslo", "pierna"),
        (ARM, "oberarm", "unterarm"), (ARM, "bras", "avantbras"), (ARM, "brazo", "antebrazo"))),
)
RULE_OF_LOWER = {lower: rule for rule in _RULES for lower in rule.lowers}
# Whole-limb words numbered in order name successive segments: Leg01 > Leg02 is thigh > shin.
NUMBERED = {"leg": LEG, "arm": ARM}
WHOLE_WORD = {kind: word for word, kind in NUMBERED.items()}
UPPERS = {LEG: _LEG_UPPERS, ARM: _ARM_UPPERS}
# Joint words that name an upper bone only above a joint-named lower one (see ``core.detect``'s docstring).
# Two bones so named in a row are a pelvis or clavicle bone and the limb's own (CMU's ``LHipJoint >
# LeftHip``, the hip's connector above the thigh), never the two halves of one segment.
JOINT_UPPERS = frozenset({"hip", "shoulder"})
# The hand is "Hand" in German; French and Spanish hands ("main", "mano") are found as the bone
# continuing the forearm, as those words name other bones too ("UpperLeg_Main").
# Meta's body skeleton names the foot and hand after both: "FootAnkle", "HandWrist".
EXTREMITIES = {LEG: frozenset({"foot", "ankle", "footankle", "fuss", "pied", "pie"}),
               ARM: frozenset({"hand", "wrist", "handwrist"})}
EXTREMITY_WORDS = frozenset().union(*EXTREMITIES.values())
# The joint ending a limb, as a bone's name: the bone ending there where a whole-limb word names the bone above it
# and the foot or hand hangs below (Mesh2Motion's dragon: ``front_leg_l > front_ankle_l > front_foot_l``, the
# ankle its shin; see ``Chains.rule_of``). Elsewhere it names the foot or hand itself.
TAIL_JOINTS = {"ankle": LEG, "wrist": ARM}
TAIL_JOINT_RULES = {word: Rule(kind, frozenset({word}), frozenset({WHOLE_WORD[kind]}), frozenset())
                    for word, kind in TAIL_JOINTS.items()}
VOCABULARY = frozenset(word for rule in _RULES for word in rule.lowers | rule.uppers) | EXTREMITY_WORDS
# A child spelling any of these is a limb bone of its own, not this limb's foot or hand.
NOT_EXTREMITY = {kind: VOCABULARY - words for kind, words in EXTREMITIES.items()}
# Names of a digitigrade or hoofed leg's third segment (metatarsus, cannon bone), which a
# hand never is.
THIRD_SEGMENTS = frozenset({"foot", "forefoot", "hindfoot", "metatarsal", "metatarsals", "horselink"})

KIND_WORD = {LEG: "leg", ARM: "arm"}
UPPER_WORD = {LEG: "a thigh or upper leg", ARM: "an upper arm"}
SEGMENT_WORD = {LEG: ("thigh", "shin"), ARM: ("upper arm", "forearm")}
JOINT_WORD = {LEG: "knee", ARM: "elbow"}
TWO_SEGMENTS = {LEG: "a thigh and a shin", ARM: "an upper arm and a forearm"}
EXTREMITY_WORD = {LEG: "foot", ARM: "hand"}
SIDE_WORD = {naming.LEFT: "left", naming.RIGHT: "right"}
POSITION_WORD = {FRONT: "front", MID_FRONT: "middle front", MID_HIND: "middle hind", HIND: "hind"}
