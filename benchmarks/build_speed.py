"""Section 1, build speed: IK Rigger against the floor script on Rigify's human metarig.

Every repeat starts from an empty factory scene with the metarig appended, and the
variants take turns within a repeat so that a drift in the machine's speed hits them all.
"""

from __future__ import annotations

import cProfile
import math
import pstats
from collections.abc import Callable
from pathlib import Path

import bpy

from benchmarks import common, floor

LASTS = ("shin.L", "shin.R", "forearm.L", "forearm.R")
# Issue 37's goal: at most 1.25x the floor through the API and 1.5x through the operator, each against a floor
# that makes the same rig.
TARGETS = {"api": 1.25, "operator": 1.5}
# A plain script's options (no shapes, no pole lines, Maximum Stretch 1): floor.PLAIN makes the same.
PLAIN = {"shapes": False, "pole_line": False, "max_stretch": 1.0}
# Constraint settings that make two rigs the same rig (names and drivers aside).
_CONSTRAINT_SETTINGS = ("subtarget", "pole_subtarget", "chain_count", "iterations", "use_stretch", "use_tail",
                        "owner_space", "target_space")

Signature = dict[str, dict[str, tuple]]


def _metarig(sources: Path, mode: str) -> bpy.types.Object:
    common.reset()
    obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    if mode != "OBJECT":
        bpy.ops.object.mode_set(mode=mode)
    return obj


def _build_api(obj: bpy.types.Object) -> None:
    from ik_rigger.limb.options import LimbOptions
    from ik_rigger.rig.build import build_limbs

    build_limbs(obj, [(last, LimbOptions()) for last in LASTS])


def _plan_api(obj: bpy.types.Object) -> None:
    from ik_rigger.limb.options import LimbOptions
    from ik_rigger.rig.build import plan_limbs

    plan_limbs(obj, [(last, LimbOptions()) for last in LASTS])


def _build_many_without_stretch(obj: bpy.types.Object) -> None:
    from ik_rigger import api

    chosen = api.options(max_stretch=1.0)
    api.build_many(obj, [(last, chosen) for last in LASTS])


def _build_many_plain(obj: bpy.types.Object) -> None:
    from ik_rigger import api

    chosen = api.options(**PLAIN)
    api.build_many(obj, [(last, chosen) for last in LASTS])


def _floor_without_stretch(obj: bpy.types.Object) -> None:
    floor.rig_four_limbs(obj, stretch=False)


def _floor_plain(obj: bpy.types.Object) -> None:
    floor.rig_four_limbs(obj, **floor.PLAIN)


def _floor_operator(obj: bpy.types.Object, **switches: bool) -> None:
    if bpy.ops.benchmark.floor(**switches) != {"FINISHED"}:
        raise RuntimeError("the floor operator did not finish on the human metarig")


def _build_operator(obj: bpy.types.Object, **chosen: object) -> None:
    if bpy.ops.ik_rigger.auto_rig(**chosen) != {"FINISHED"}:
        raise RuntimeError("ik_rigger.auto_rig did not finish on the human metarig")


# name: (start mode, what is timed)
VARIANTS: dict[str, tuple[str, Callable[[bpy.types.Object], None]]] = {
    "floor": ("OBJECT", floor.rig_four_limbs),
    "ik_rigger_api": ("OBJECT", _build_api),
    # Both through bpy.ops, so both pay the operator call, its undo step and the update after it.
    "floor_operator": ("POSE", _floor_operator),
    "ik_rigger_operator": ("POSE", _build_operator),
    # Not targets: the API and the floor from the operators' mode, to split the operator's time
    # into what the API takes from there and what being an operator adds.
    "floor_from_pose": ("POSE", floor.rig_four_limbs),
    "ik_rigger_api_from_pose": ("POSE", _build_api),
    # A limb at Maximum Stretch 1 (no stretch) through the API, against a floor that makes the same
    # bones, constraints, shapes and drivers.
    "floor_without_stretch": ("OBJECT", _floor_without_stretch),
    "ik_rigger_api_without_stretch": ("OBJECT", _build_many_without_stretch),
    # A plain script's options (no shapes, no pole lines, no stretch), through the API and the operator.
    "floor_plain": ("OBJECT", _floor_plain),
    "ik_rigger_api_plain": ("OBJECT", _build_many_plain),
    "floor_operator_plain": ("POSE", lambda obj: _floor_operator(obj, **floor.PLAIN)),
    "ik_rigger_operator_plain": ("POSE", lambda obj: _build_operator(obj, **PLAIN)),
    # Context: planning alone (a dry run: the skeleton read, every check and each limb's plan, nothing changed),
    # the part of a build that IK Rigger does and the floor, which knows its bones, does not.
    "ik_rigger_plan": ("OBJECT", _plan_api),
}
# The variants that make no rig: nothing of theirs to compare with a floor's.
PLANS_ONLY = ("ik_rigger_plan",)
# The floor each variant makes the same rig as (the others: "floor").
SAME_AS = {"ik_rigger_api_without_stretch": "floor_without_stretch", "ik_rigger_api_plain": "floor_plain",
           "ik_rigger_operator_plain": "floor_plain", "floor_operator_plain": "floor_plain"}
# (ratio name, numerator, denominator): every ratio is of times taken in the same repeats.
RATIOS = (
    ("api_over_floor", "ik_rigger_api", "floor"),
    ("operator_over_floor_operator", "ik_rigger_operator", "floor_operator"),
    ("api_from_pose_over_floor_from_pose", "ik_rigger_api_from_pose", "floor_from_pose"),
    ("floor_operator_over_floor_from_pose", "floor_operator", "floor_from_pose"),
    ("api_without_stretch_over_floor_without_stretch", "ik_rigger_api_without_stretch", "floor_without_stretch"),
    ("api_plain_over_floor_plain", "ik_rigger_api_plain", "floor_plain"),
    ("operator_plain_over_floor_operator_plain", "ik_rigger_operator_plain", "floor_operator_plain"),
    ("plan_over_floor", "ik_rigger_plan", "floor"),
)
# The ratios with a target, and which: the API's or the operator's.
TARGETED = {"api_over_floor": "api", "operator_over_floor_operator": "operator",
            "api_without_stretch_over_floor_without_stretch": "api", "api_plain_over_floor_plain": "api",
            "operator_plain_over_floor_operator_plain": "operator"}


def signature(obj: bpy.types.Object, original: set[str]) -> Signature:
    """What a rig is made of: the new bones at rest, every constraint's settings, the bones with a shape
    and the drivers of constraints' influence and bones' IK stretch (kind, expression, and each
    variable's name, kind and what it reads); and its looks: the bone collections (shown or not, and
    their bones), each bone's colours, hiding and selectability where any differs from Blender's
    defaults, and the pose bones' custom properties with their slider settings (the description
    apart) and whether a library override may set them."""
    bones = {bone.name: (bone.parent.name if bone.parent else None, bone.use_deform,
                         tuple(value for row in bone.matrix_local for value in row))
             for bone in obj.data.bones if bone.name not in original}
    constraints = {}
    for pose_bone in obj.pose.bones:
        for constraint in pose_bone.constraints:
            settings = tuple(getattr(constraint, key, None) for key in _CONSTRAINT_SETTINGS)
            pole = constraint.pole_angle if constraint.type == "IK" else 0.0
            constraints[f"{pose_bone.name}:{constraint.type}"] = (*settings, pole)
    shaped = {pose_bone.name: () for pose_bone in obj.pose.bones if pose_bone.custom_shape is not None}
    data = obj.animation_data
    # Named by bone and constraint type, as the constraints are: the floor names its constraints plainly.
    paths = {f"{pose_bone.name}:{constraint.type}": constraint.path_from_id("influence")
             for pose_bone in obj.pose.bones for constraint in pose_bone.constraints}
    paths.update({f"{pose_bone.name}:ik_stretch": pose_bone.path_from_id("ik_stretch") for pose_bone in obj.pose.bones})
    curves = {name: data.drivers.find(path) for name, path in paths.items()} if data is not None else {}
    drivers = {name: (curve.driver.type, curve.driver.expression if curve.driver.type == "SCRIPTED" else "",
                      tuple(sorted((variable.name, variable.type, variable.targets[0].id_type,
                                    variable.targets[0].data_path) for variable in curve.driver.variables)))
               for name, curve in curves.items() if curve is not None}
    return {"bones": bones, "constraints": constraints, "shapes": shaped, "drivers": drivers, **_looks(obj)}


def _looks(obj: bpy.types.Object) -> Signature:
    """``signature``'s looks of the rig: collections, colours, hiding, selectability and switches."""
    collections = {collection.name: (collection.is_visible, tuple(sorted(bone.name for bone in collection.bones)))
                   for collection in obj.data.collections_all}
    looks = {}
    properties = {}
    for pose_bone in obj.pose.bones:
        bone = pose_bone.bone
        look = (bone.color.palette, pose_bone.color.palette, bone.hide, getattr(pose_bone, "hide", False),
                bone.hide_select)
        if look != ("DEFAULT", "DEFAULT", False, False, False):
            looks[pose_bone.name] = look
        for key in pose_bone.keys():
            # IK Rigger's own records, as "_RNA_UI" was Blender's; and groups (Rigify's parameters): no sliders.
            if key.startswith("_") or not isinstance(pose_bone[key], (int, float)):
                continue
            ui = pose_bone.id_properties_ui(key).as_dict()
            ui.pop("description", None)
            properties[f"{pose_bone.name}:{key}"] = (
                pose_bone[key], tuple(sorted(ui.items())), pose_bone.is_property_overridable_library(f'["{key}"]'))
    return {"collections": collections, "looks": looks, "properties": properties}


def compare(reference: Signature, other: Signature) -> dict[str, object]:
    """How far ``other`` is from ``reference``: differences in kind, and the largest numeric gaps."""
    problems: list[str] = []
    matrix_gap = 0.0
    angle_gap = 0.0
    # Drivers too: a floor making fewer of them would make less work than IK Rigger's rig.
    for kind in ("bones", "constraints", "shapes", "drivers", "collections", "looks", "properties"):
        if reference[kind].keys() != other[kind].keys():
            problems.append(f"{kind} differ: {sorted(reference[kind].keys() ^ other[kind].keys())}")
    for kind in ("collections", "looks", "properties"):
        problems.extend(f"{kind[:-1]} {name}: differs" for name in reference[kind].keys() & other[kind].keys()
                        if reference[kind][name] != other[kind][name])
    for name in reference["bones"].keys() & other["bones"].keys():
        (parent_a, deform_a, matrix_a), (parent_b, deform_b, matrix_b) = reference["bones"][name], other["bones"][name]
        if (parent_a, deform_a) != (parent_b, deform_b):
            problems.append(f"bone {name}: parent or deform differ")
        matrix_gap = max(matrix_gap, *(abs(a - b) for a, b in zip(matrix_a, matrix_b)))
    problems.extend(f"driver {path}: differs" for path in reference["drivers"].keys() & other["drivers"].keys()
                    if reference["drivers"][path] != other["drivers"][path])
    for name in reference["constraints"].keys() & other["constraints"].keys():
        *settings_a, pole_a = reference["constraints"][name]
        *settings_b, pole_b = other["constraints"][name]
        if settings_a != settings_b:
            problems.append(f"constraint {name}: settings differ")
        angle_gap = max(angle_gap, math.degrees(abs(pole_a - pole_b)))
    same = not problems and matrix_gap < 1e-4 and angle_gap < 1e-3
    return {"same": same, "problems": problems, "max_matrix_difference": matrix_gap,
            "max_pole_angle_difference_degrees": angle_gap}


def run(sources: Path, settings: common.Settings) -> dict[str, object]:
    """Time the floor, the API and the operator; Rigify's generator for context."""
    samples: dict[str, list[float]] = {name: [] for name in VARIANTS}  # CPU seconds: what the ratios judge
    walls: dict[str, list[float]] = {name: [] for name in VARIANTS}
    signatures: dict[str, Signature] = {}
    with common.quiet():  # the operator reports what it rigged on stdout
        for _ in range(settings.build_repeats):
            for name, (mode, action) in VARIANTS.items():
                obj = _metarig(sources, mode)
                original = set(obj.data.bones.keys())
                cpu, wall = common.timed_both(lambda obj=obj, action=action: action(obj))
                samples[name].append(cpu)
                walls[name].append(wall)
                signatures.setdefault(name, signature(obj, original))
    stats = {name: common.Stats.of(values) for name, values in samples.items()}
    rigify = {label: _time_rigify(operator, settings.rigify_repeats)
              for label, operator in (("human", "armature_human_metarig_add"),
                                      ("basic_human", "armature_basic_human_metarig_add"))}
    spreads = {name: common.paired_ratios(samples[top], samples[bottom]) for name, top, bottom in RATIOS}
    ratios = {name: spread.median for name, spread in spreads.items()}
    # Rigify runs apart from the floor's repeats, so these compare medians and have no spread.
    ratios["rigify_human_over_floor"] = rigify["human"].median / stats["floor"].median
    ratios["rigify_basic_human_over_floor"] = rigify["basic_human"].median / stats["floor"].median
    return {
        "limbs": list(LASTS),
        "seconds": {name: value.as_dict() for name, value in stats.items()},
        "rigify_generate_seconds": {label: value.as_dict() for label, value in rigify.items()},
        "ratios": ratios,
        "ratio_spreads": {name: spread.as_dict() for name, spread in spreads.items()},
        "wall_seconds": {name: common.Stats.of(values).as_dict() for name, values in walls.items()},
        "wall_ratio_spreads": {name: common.paired_ratios(walls[top], walls[bottom]).as_dict()
                               for name, top, bottom in RATIOS},
        "targets": {name: TARGETS[route] for name, route in TARGETED.items()},
        "same_rig": {name: compare(signatures[SAME_AS.get(name, "floor")], signatures[name])
                     for name in VARIANTS
                     if name not in ("floor", "floor_without_stretch", "floor_plain", *PLANS_ONLY)},
    }


def _time_rigify(operator: str, repeats: int) -> common.Stats:
    samples = []
    for _ in range(repeats):
        common.reset()
        common.enable_rigify()
        getattr(bpy.ops.object, operator)()

        def generate() -> None:
            with common.quiet():
                bpy.ops.pose.rigify_generate()

        samples.append(common.timed(generate))
    return common.Stats.of(samples)


def profile(sources: Path, variant: str, repeats: int, top: int = 12) -> list[dict[str, object]]:
    """Where a variant's build time goes: cProfile over ``repeats`` builds, the top functions by own time."""
    mode, action = VARIANTS[variant]
    profiler = cProfile.Profile()
    with common.quiet():
        for _ in range(repeats):
            obj = _metarig(sources, mode)
            profiler.enable()
            action(obj)
            profiler.disable()
    table = pstats.Stats(profiler).stats
    total = sum(entry[2] for entry in table.values())
    rows = []
    for (filename, line, function), (_, calls, own, cumulative, _) in sorted(
            table.items(), key=lambda item: -item[1][2])[:top]:
        rows.append({"function": f"{_short(filename)}:{line}({function})", "calls": calls // repeats,
                     "own_share": own / total, "cumulative_share": cumulative / total})
    return rows


def _short(filename: str) -> str:
    """A profiled file as a repository-relative or package-relative path, never a machine path."""
    path = Path(filename)
    if filename == "~":
        return "built-in"
    if not path.is_absolute():
        return filename  # code made at run time, such as a dataclass's __init__ ("<string>")
    parts = path.parts
    if "site-packages" in parts:
        return "/".join(parts[parts.index("site-packages") + 1:])
    try:
        return path.resolve().relative_to(common.ROOT).as_posix()
    except ValueError:
        return path.name
