"""Soft IK: how much it calms the knee's pop, and what it costs to evaluate.

- The sweep: Rigify's left leg, its handle moved at constant speed from 0.8 to 1.2 of the
  chain's length along the line from the hip to its rest place, one step a frame; the
  knee's largest change of angle in one frame with hard IK and with soft IK at
  ``SOFT`` (0.05), and their ratio (lower is calmer).
- The evaluation: the four limbs at Maximum Stretch 1 with soft IK against the floor without stretch
  (``floor.rig_four_limbs``) given the same soft-IK setup by a plain script (``add_soft_ik``, with
  nothing from IK Rigger: a hidden root bone, its location driven by the first bone's, a hidden SOFT
  bone and a hidden gauge bone per limb, Copy Transforms and Limit Distance, two Copy Locations
  putting the gauge at the target less the root, the distance's simple-expression driver reading it,
  the IK aimed at SOFT and the clone hung from it), timed as ``evaluation`` times its rigs.
"""

from __future__ import annotations

import math
from pathlib import Path

import bpy

from benchmarks import common, evaluation, floor
from benchmarks.build_speed import LASTS

SOFT = 0.05
SWEEP_FRAMES = 100
TARGET = evaluation.TARGET


def _ik_rigger_soft(sources: Path) -> bpy.types.Object:
    from ik_rigger import api

    obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    chosen = api.options(max_stretch=1.0, soft_ik=SOFT)
    api.build_many(obj, [(last, chosen) for last in LASTS])
    return obj


def _floor_soft(sources: Path) -> bpy.types.Object:
    obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    floor.rig_four_limbs(obj, stretch=False)
    add_soft_ik(obj, SOFT)
    return obj


def add_soft_ik(obj: bpy.types.Object, soft: float) -> None:
    """Give the floor's four limbs soft IK by hand, as IK Rigger makes it."""
    mode = "POSE" if obj.mode == "POSE" else "OBJECT"
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    made = []
    for first_name, last_name, end_name in floor.LIMBS:
        first, last = edit_bones[first_name], edit_bones[last_name]
        end_base, side = end_name[:-2], end_name[-2:]
        handle = edit_bones[f"{end_base}_IK{side}"]
        length = first.length + last.length
        root = edit_bones.new(f"{first_name[:-2]}_IK_soft_root{side}")
        # At rest as the first bone, so its location's drivers put both heads on the same point.
        root.head, root.tail, root.roll = first.head, first.head + first.vector.normalized() * length, first.roll
        root.parent = first.parent
        root.use_deform, root.hide = False, True
        soft_bone = edit_bones.new(f"{end_base}_IK_soft{side}")
        soft_bone.head, soft_bone.tail, soft_bone.roll = handle.head, handle.tail, handle.roll
        soft_bone.parent = handle.parent
        soft_bone.use_deform, soft_bone.hide = False, True
        edit_bones[f"{end_base}_IK_clone{side}"].parent = soft_bone
        # The distance in the armature's space: the target less the root, on a bone at the origin.
        gauge = edit_bones.new(f"{first_name[:-2]}_IK_soft_gauge{side}")
        gauge.head, gauge.tail = (0.0, 0.0, 0.0), (0.0, length, 0.0)
        gauge.use_deform, gauge.hide = False, True
        made.append((first_name, last_name, handle.name, root.name, soft_bone.name, gauge.name, length))
    bpy.ops.object.mode_set(mode=mode)
    pose_bones = obj.pose.bones
    for first_name, last_name, handle, root, soft_name, gauge, length in made:
        pose_bones[handle]["soft_ik"] = soft
        for axis in range(3):
            variable = pose_bones[root].driver_add("location", axis).driver.variables.new()
            variable.targets[0].id = obj
            variable.targets[0].data_path = f'pose.bones["{first_name}"].location[{axis}]'
        pose_bones[last_name].constraints["IK"].subtarget = soft_name
        copy = pose_bones[soft_name].constraints.new("COPY_TRANSFORMS")
        copy.target, copy.subtarget = obj, handle
        copy.owner_space = copy.target_space = "POSE"
        limit = pose_bones[soft_name].constraints.new("LIMIT_DISTANCE")
        limit.target, limit.subtarget = obj, root
        limit.limit_mode, limit.distance = "LIMITDIST_ONSURFACE", length
        limit.owner_space = limit.target_space = "POSE"
        for target, inverted in ((handle, False), (root, True)):
            copy = pose_bones[gauge].constraints.new("COPY_LOCATION")
            copy.target, copy.subtarget = obj, target
            copy.owner_space = copy.target_space = "POSE"
            copy.invert_x = copy.invert_y = copy.invert_z = copy.use_offset = inverted
        driver = limit.driver_add("distance").driver
        variable = driver.variables.new()
        variable.name, variable.targets[0].id = "soft_ik", obj
        variable.targets[0].data_path = f'pose.bones["{handle}"]["soft_ik"]'
        variable = driver.variables.new()
        variable.name, variable.type = "D", "LOC_DIFF"
        for target, space in zip(variable.targets, ("LOCAL_SPACE", "TRANSFORM_SPACE")):
            target.id, target.bone_target, target.transform_space = obj, gauge, space
        u = f"D/{length:.9g}"
        driver.type = "SCRIPTED"
        driver.expression = (f"D if soft_ik<=0 else {length:.9g}*({u} if {u}<=1-soft_ik else "
                             f"1-soft_ik*exp((1-soft_ik-{u})/soft_ik))")


RIGS = {
    "ik_rigger_soft": evaluation.Rig(_ik_rigger_soft, evaluation._metarig_limbs()),
    "floor_soft": evaluation.Rig(_floor_soft, evaluation._metarig_limbs()),
}


def _knee_angle(obj: bpy.types.Object) -> float:
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).pose.bones
    thigh, shin = evaluated["thigh.L"], evaluated["shin.L"]
    return math.degrees((shin.head - thigh.head).angle(shin.tail - shin.head))


def sweep(sources: Path, soft: float, frames: int = SWEEP_FRAMES) -> dict[str, object]:
    """The left knee's angle on each frame of the sweep, and its largest change in one frame."""
    from ik_rigger import api

    common.reset()
    obj = common.append_object(sources / common.HUMAN_FILE, common.METARIG)
    api.build(obj, "shin.L", max_stretch=1.0, soft_ik=soft)
    bones = obj.data.bones
    root = bones["thigh.L"].head_local
    length = (bones["shin.L"].head_local - root).length + bones["shin.L"].length
    handle = obj.pose.bones["foot_IK.L"]
    rest = bones["foot_IK.L"].matrix_local
    aim = (rest.translation - root).normalized()
    distances, angles = [], []
    for frame in range(frames + 1):
        distance = (0.8 + 0.4 * frame / frames) * length
        pose = rest.copy()
        pose.translation = root + aim * distance
        handle.matrix = pose
        bpy.context.view_layer.update()
        distances.append(distance / length)
        angles.append(_knee_angle(obj))
    steps = [abs(b - a) for a, b in zip(angles, angles[1:])]
    return {"distances": distances, "angles": angles, "largest_step": max(steps)}


def run(sources: Path, settings: common.Settings) -> dict[str, object]:
    hard, soft = sweep(sources, 0.0), sweep(sources, SOFT)
    frames = settings.eval_frames
    # CPU time (what the ratios judge), and wall time beside it ("..._wall"), as the evaluation section.
    samples: dict[str, dict[str, list[float]]] = {
        name: {"python": [], "keyframed": [], "python_wall": [], "keyframed_wall": []} for name in ("empty", *RIGS)}
    for _ in range(settings.eval_repeats):
        for name in samples:
            python_driven, keyframed = evaluation._time_rig(sources, RIGS.get(name), frames, settings.eval_passes)
            for mode, (cpu, wall) in (("python", python_driven), ("keyframed", keyframed)):
                samples[name][mode].append(cpu)
                samples[name][f"{mode}_wall"].append(wall)
    spreads = {}
    for mode in ("keyframed", "python"):
        empty = samples["empty"][mode]
        spreads[f"soft_over_floor_{mode}_net"] = common.paired_ratios(
            [rig - blank for rig, blank in zip(samples["ik_rigger_soft"][mode], empty)],
            [rig - blank for rig, blank in zip(samples["floor_soft"][mode], empty)])
    return {
        "soft_ik": SOFT,
        "sweep": {"frames": SWEEP_FRAMES, "hard": hard, "soft": soft,
                  "ratio": soft["largest_step"] / hard["largest_step"]},
        "seconds_per_frame": {name: {mode: common.Stats.of(values).as_dict() for mode, values in modes.items()}
                              for name, modes in samples.items()},
        "ratios": {name: spread.median for name, spread in spreads.items()},
        "ratio_spreads": {name: spread.as_dict() for name, spread in spreads.items()},
        "target": TARGET,
    }


def table_rows(result: dict, ms: object, x: object, met: object) -> list[str]:
    """The section's rows of the benchmark table (``ms``, ``x`` and ``met`` are run.py's formatters)."""
    sweep_result = result["sweep"]
    rows = [f"| Soft IK {result['soft_ik']:g}, handle swept 0.8 to 1.2 of the leg's length in "
            f"{sweep_result['frames']} frames: the knee's largest change in one frame, lower is better | "
            f"{sweep_result['soft']['largest_step']:.2f} deg | hard IK {sweep_result['hard']['largest_step']:.2f} deg "
            f"| {sweep_result['ratio']:.2f}x (of one sweep) | - | - |"]
    frames, spreads, target = result["seconds_per_frame"], result["ratio_spreads"], result["target"]
    for mode, label in (("keyframed", "Frame step, keyframed playback: time per frame"),
                        ("python", "Update, handles set from Python: time per update")):
        spread = spreads[f"soft_over_floor_{mode}_net"]
        rows.append(f"| {label}, 4 limbs with soft IK (no stretch) against the floor with the same soft IK "
                    f"by hand, lower is better | {ms(frames['ik_rigger_soft'][mode])} | "
                    f"{ms(frames['floor_soft'][mode])} | {x(spread, 3)} | <= {target}x | "
                    f"{met(spread['median'], target, spread)} |")
    return rows

