"""Limbs named in other languages and scripts: German (``Oberschenkel_L > Unterschenkel_L``), French
(``cuisse.L > jambe.L``, or ``cuisse_G > jambe_G`` beside ``cuisse_D``), Spanish (``Muslo.L >
Pierna.L``), Chinese (``左大腿 > 左小腿 > 左脚``), Korean (``허벅지.L > 종아리.L``) and Russian (``Бедро.L >
Голень.L``), found as the English families are, and through Blender's FBX exporter and importer, which
keep the names as written."""

from __future__ import annotations

import bpy
import pytest
from helpers import at_rest_alone, make_armature, through_fbx
from mathutils import Matrix, Vector
from test_detect import assert_limbs_mirror, expected, family, human, make_skeleton, reasons, summary
from test_detect_real import assert_handles_move_chain_ends

from ik_rigger import api
from ik_rigger.core import naming
from ik_rigger.core.detect import LEG, detect_limbs
from ik_rigger.rig.skeleton import read_skeleton

LANGUAGES = {
    "german": family("Oberschenkel_{L}", "Unterschenkel_{L}", "Fuß_{L}", "Zehen_{L}", "Schlüsselbein_{L}",
                     "Oberarm_{L}", "Unterarm_{L}", "Hand_{L}", "Finger_{L}"),
    "german without eszett": family("Oberschenkel.{L}", "Unterschenkel.{L}", "Fuss.{L}", "Zehen.{L}",
                                    "Schluesselbein.{L}", "Oberarm.{L}", "Unterarm.{L}", "Hand.{L}", ""),
    "french": family("cuisse.{L}", "jambe.{L}", "pied.{L}", "orteil.{L}", "clavicule.{L}", "bras.{L}",
                     "avant_bras.{L}", "main.{L}", ""),
    "french, shin named tibia": family("cuisse.{L}", "tibia.{L}", "pied.{L}", "orteil.{L}", "clavicule.{L}",
                                       "bras.{L}", "avant-bras.{L}", "main.{L}", ""),
    "spanish": family("Muslo_{L}", "Pierna_{L}", "Pie_{L}", "Dedos_{L}", "Clavicula_{L}", "Brazo_{L}",
                      "Antebrazo_{L}", "Mano_{L}", ""),
    "chinese": {"upper_leg": "左大腿", "lower_leg": "左小腿", "foot": "左脚", "toe": "左脚趾", "clavicle": "左锁骨",
                "upper_arm": "左上臂", "forearm": "左前臂", "hand": "左手", "finger": "左手指"},
    "korean": family("허벅지.{L}", "종아리.{L}", "발.{L}", "발가락.{L}", "쇄골.{L}", "위팔.{L}", "아래팔.{L}",
                     "손.{L}", "손가락.{L}"),
    "russian": family("Бедро.{L}", "Голень.{L}", "Стопа.{L}", "Пальцы.{L}", "Ключица.{L}", "Плечо.{L}",
                      "Предплечье.{L}", "Кисть.{L}", ""),
    "russian in capitals": family("БЕДРО_{L}", "ГОЛЕНЬ_{L}", "СТОПА_{L}", "ПАЛЬЦЫ_{L}", "КЛЮЧИЦА_{L}", "ПЛЕЧО_{L}",
                                  "ПРЕДПЛЕЧЬЕ_{L}", "КИСТЬ_{L}", ""),
}


# French rigs write the sides "gauche" and "droite" as G and D ("cuisse_G"): {L} becomes G or D.
LANGUAGES["french, sides G and D"] = {role: name.replace(".{L}", "_{L}") for role, name in LANGUAGES["french"].items()}
LANGUAGES["french, tibia, sides G and D"] = {role: name.replace(".{L}", "_{L}")
                                            for role, name in LANGUAGES["french, shin named tibia"].items()}
_LETTERS = {"french, sides G and D": {"L": "G", "R": "D"}, "french, tibia, sides G and D": {"L": "G", "R": "D"}}
# Korean rigs write the side as a word, before or after the name, glued or not: {Left} becomes 왼쪽 or 오른쪽
# (left, right), 좌측 or 우측 (left side, right side), or the one syllable 좌 or 우.
_KOREAN = family("허벅지", "종아리", "발", "발가락", "쇄골", "위팔", "아래팔", "손", "손가락")
LANGUAGES |= {
    "korean, sides 왼쪽 and 오른쪽 before": {role: f"{{Left}}_{name}" for role, name in _KOREAN.items()},
    "korean, sides 왼쪽 and 오른쪽 after": {role: f"{name}{{Left}}" for role, name in _KOREAN.items()},
    "korean, sides 좌측 and 우측": {role: f"{{Left}} {name}" for role, name in _KOREAN.items()},
    "korean, sides 좌 and 우": {role: f"{{Left}}{name}" for role, name in _KOREAN.items()},
    "korean, sides 왼 and 오른": {role: f"{{Left}}{name}" for role, name in _KOREAN.items()},
}
_WORDS = {"korean, sides 왼쪽 and 오른쪽 before": ("왼쪽", "오른쪽"),
          "korean, sides 왼쪽 and 오른쪽 after": ("왼쪽", "오른쪽"),
          "korean, sides 좌측 and 우측": ("좌측", "우측"), "korean, sides 좌 and 우": ("좌", "우"),
          "korean, sides 왼 and 오른": ("왼", "오른")}


def _written(language: str, name: str) -> str:
    """``human`` fills {L} with L or R: a Chinese name's side is 左 or 右, before the name; a French one's
    may be G or D, after it."""
    if language in _WORDS:
        left, right = _WORDS[language]
        return name.replace("Left", left).replace("Right", right)
    if language in _LETTERS:
        for letter, written in _LETTERS[language].items():
            if name.endswith(f"_{letter}"):
                return f"{name[:-1]}{written}"
        return name
    for letter, word in (("L", "左"), ("R", "右")):
        if name.startswith(letter) and not name.isascii():
            return word + name[1:]
    return name


def _templates(language: str) -> dict[str, str]:
    return {role: name.replace("左", "{L}") for role, name in LANGUAGES[language].items()}


def _human(language: str) -> list:
    return [(_written(language, name), parent and _written(language, parent), head, tail)
            for name, parent, head, tail in human(_templates(language))]


def _expected(language: str) -> list:
    return [(kind, side, tuple(_written(language, bone) for bone in chain), _written(language, end))
            for kind, side, chain, end in expected(_templates(language))]


@pytest.mark.parametrize("language", LANGUAGES)
def test_limbs_named_in_other_languages_are_found(language):
    detection = detect_limbs(make_skeleton(_human(language)))
    assert summary(detection) == _expected(language), reasons(detection)
    assert detection.skipped == ()


@pytest.mark.parametrize("language", LANGUAGES)
def test_limbs_named_in_other_languages_mirror_onto_the_other_sides(language):
    """Both Sides mirrors with ``naming.flip_name``: each left limb's bones onto the right limb's, and back."""
    assert_limbs_mirror(_human(language))


@pytest.mark.parametrize(("name", "mirror"), [("Бедро.L", "Бедро.R"), ("左大腿", "右大腿"), ("허벅지.L", "허벅지.R"),
                                              ("Oberschenkel_L", "Oberschenkel_R"), ("cuisse.L", "cuisse.R"),
                                              ("왼쪽_허벅지", "오른쪽_허벅지"), ("종아리오른쪽", "종아리왼쪽"),
                                              ("좌측 위팔", "우측 위팔"), ("좌허벅지", "우허벅지"), ("우손", "좌손"),
                                              ("왼발", "오른발"), ("오른손", "왼손"), ("오른쪽 손", "왼쪽 손")])
def test_other_languages_names_mirror_as_written(name, mirror):
    assert naming.flip_name(name) == mirror


def test_french_sides_g_and_d_are_read_beside_the_other_side_only():
    """``cuisse_G`` is the left thigh when ``cuisse_D`` exists; ``Bone_D`` alone says no side."""
    assert naming.flip_name("cuisse_G", {"cuisse_G", "cuisse_D"}) == "cuisse_D"
    assert naming.flip_name("jambe_d.001", {"jambe_g.001"}) == "jambe_g.001"
    assert naming.split_side("avant_bras_G", {"avant_bras_D"}).side == naming.LEFT
    assert naming.split_side("avant_bras_D", {"avant_bras_G"}).side == naming.RIGHT
    assert naming.flip_name("Bone_D") is None
    assert naming.split_side("Bone_D", {"Bone_D"}).side is None


def test_korean_one_syllable_sides_are_read_before_a_limb_word_or_beside_the_other_side_only():
    """좌 and 우 before a limb word are sides (``우종아리`` the right calf); ``우산`` (an umbrella) alone says no
    side, and a name ending in 좌 or 우 is one side only where the other side's name exists."""
    assert naming.split_side("우종아리").side == naming.RIGHT
    assert naming.flip_name("우산") is None
    assert naming.flip_name("꼬리좌") is None
    assert naming.flip_name("꼬리좌", {"꼬리우"}) == "꼬리우"
    assert naming.split_side("꼬리우", {"꼬리좌"}).side == naming.RIGHT
    assert naming.flip_name("오른꼬리") is None and naming.flip_name("오른꼬리", {"왼꼬리"}) == "왼꼬리"


def test_a_lower_word_takes_only_its_own_languages_upper_word():
    """``jambe`` (French) below ``thigh`` or ``Unterschenkel`` below ``cuisse`` mixes two rigs' words: no limb."""
    for upper, lower in (("thigh.L", "jambe.L"), ("cuisse.L", "Unterschenkel.L"), ("Oberarm.L", "avant_bras.L")):
        specs = [("hips", None, (0, 0, 1.0), (0, 0, 1.2)), (upper, "hips", (0.1, 0, 0.98), (0.1, -0.02, 0.55)),
                 (lower, upper, (0.1, -0.02, 0.55), (0.1, 0, 0.1))]
        detection = detect_limbs(make_skeleton(specs))
        assert detection.limbs == (), (upper, lower)
        assert upper in reasons(detection)[lower]


@pytest.mark.parametrize("language", ["german", "chinese", "russian", "french, sides G and D",
                                      "korean, sides 왼쪽 and 오른쪽 after", "korean, sides 좌 and 우"])
def test_other_languages_limbs_rig_through_fbx(language, tmp_path):
    """Through Blender's FBX exporter and importer: every limb rigged, its handle carrying the foot or
    hand, the knee bending forward, the rest pose as it was."""
    specs = _human(language)
    made = make_armature([(name, head, tail, parent, False) for name, parent, head, tail in specs], mode="OBJECT")
    obj = through_fbx(made, tmp_path)
    at_rest_alone(obj)
    assert summary(detect_limbs(read_skeleton(obj))) == _expected(language)
    rest = {bone.name: bone.matrix_local.copy() for bone in obj.data.bones}
    skipped: list[tuple[str, str]] = []
    built = api.auto_rig(obj, skipped=skipped)
    assert skipped == []
    lasts = sorted(chain[-1] for _, _, chain, _ in _expected(language))
    assert sorted(limb.name for limb in built) == lasts
    for name, matrix in rest.items():
        bone = obj.data.bones[name]
        assert (bone.matrix_local.translation - matrix.translation).length < 1e-6
    assert_handles_move_chain_ends(obj, {last: 2 for last in lasts})
    shin = next(chain[-1] for kind, _, chain, _ in _expected(language) if kind == LEG)
    handle = obj.pose.bones[obj.ik_rigger.limb_of(shin).handle]
    length = obj.data.bones[shin].length
    before = obj.matrix_world @ obj.pose.bones[shin].head
    up = obj.matrix_world.inverted().to_3x3() @ Vector((0.0, 0.0, 0.4 * length * obj.matrix_world.median_scale))
    handle.matrix = Matrix.Translation(up) @ handle.matrix
    bpy.context.view_layer.update()
    after = obj.matrix_world @ obj.pose.bones[shin].head
    # The figure faces -Y: a knee bending forward comes toward it.
    assert (after - before).dot(Vector((0.0, -1.0, 0.0))) > 0.05 * length * obj.matrix_world.median_scale
