"""Build and Aim panel redraw cost on a 1,500-bone armature (target: at most 1 ms per draw).

Blender redraws the sidebar often (every mouse move over it), so its panels must only
read. The Build panel shows what Build would do for the active bone, which needs the
limb planned; that is computed once per change of the bone, the options or the
armature (see ``ik_rigger.ui.preview``), not per draw. Headless there is no real
layout: a stand-in takes the same calls and does nothing, so this times IK Rigger's
own part of a draw. The first draw after a change, which plans, is timed apart. The Aim panel
lists the aim rigs, found by the marks on every bone, also once per change (``ui.aim_rigs``).
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import bpy

from benchmarks import common

TARGET_MS = 1.0
BONES = 1500


class _Layout:
    """Takes any layout call and returns itself (or a button that takes any property)."""

    def __getattr__(self, name: str):
        return lambda *args, **kwargs: self

    def __setattr__(self, name: str, value: object) -> None:
        pass


def _big_armature() -> bpy.types.Object:
    """A leg to rig plus enough chained bones (fingers, face, props) to make 1,500."""
    common.reset()
    common.register_ik_rigger()
    armature = bpy.data.armatures.new("Big")
    obj = bpy.data.objects.new("Big", armature)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    bones = armature.edit_bones
    root = bones.new("root")
    root.head, root.tail = (0, 0, 0), (0, 0.3, 0)
    hips = bones.new("hips")
    hips.head, hips.tail, hips.parent = (0, 0, 1.0), (0, 0, 1.2), root
    thigh = bones.new("thigh.L")
    thigh.head, thigh.tail, thigh.parent = (0.2, 0, 1.0), (0.2, -0.05, 0.55), hips
    shin = bones.new("shin.L")
    shin.head, shin.tail, shin.parent, shin.use_connect = (0.2, -0.05, 0.55), (0.2, 0, 0.1), thigh, True
    parent = hips
    for index in range(BONES - len(bones)):
        bone = bones.new(f"extra_{index:04d}")
        bone.head = (0.001 * index, 0.2, 1.2 + 0.0001 * index)
        bone.tail = (0.001 * index, 0.25, 1.2 + 0.0001 * index)
        bone.parent = parent if index % 10 else hips
        parent = bone
    bpy.ops.object.mode_set(mode="POSE")
    obj.data.bones.active = obj.data.bones["shin.L"]
    return obj


def run(settings: common.Settings) -> dict[str, object]:
    from ik_rigger import ui

    obj = _big_armature()
    context = SimpleNamespace(active_object=obj, active_bone=obj.data.bones.active, scene=bpy.context.scene)
    panel = SimpleNamespace(layout=_Layout())
    first = common.timed(lambda: ui.IKRIG_PT_build.draw(panel, context))
    samples = []
    for _ in range(max(settings.eval_repeats, 3)):
        started = time.process_time()  # CPU time, as every benchmark judges
        for _ in range(100):
            ui.IKRIG_PT_build.draw(panel, context)
        samples.append((time.process_time() - started) / 100)
    return {"bones": len(obj.data.bones), "first_draw": first, "draw": common.Stats.of(samples).as_dict(),
            "target_ms": TARGET_MS, "aim": _aim_draws(obj, context, panel, settings)}


def _aim_draws(obj: bpy.types.Object, context: SimpleNamespace, panel: SimpleNamespace,
               settings: common.Settings) -> dict[str, object]:
    """The Aim panel's redraw on the same armature with an aim rig: it lists the rigs, found by the marks
    on the bones, once per change (``ik_rigger.ui.aim_rigs``)."""
    from ik_rigger import api, ui

    api.add_aim(obj, "ACTIVE", "extra_0005")
    bpy.context.view_layer.update()
    first = common.timed(lambda: ui.IKRIG_PT_aim.draw(panel, context))
    samples = []
    for _ in range(max(settings.eval_repeats, 3)):
        started = time.perf_counter()
        for _ in range(100):
            ui.IKRIG_PT_aim.draw(panel, context)
        samples.append((time.perf_counter() - started) / 100)
    return {"bones": len(obj.data.bones), "first_draw": first, "draw": common.Stats.of(samples).as_dict()}


if __name__ == "__main__":
    import json

    print(json.dumps(run(common.QUICK), indent=2))
