"""Parent switching where the guide's Origin is the armature itself (a Mixamo leg, Rigify's metarig: no
bone on the ground above the leg): the choice is the origin, named so, and switching back to it by the
label the docs give ("Origin") puts the controls there without a jump."""

from __future__ import annotations

import bpy
from helpers import DATA, chain_length, evaluate, rotation_degrees

from ik_rigger import api

LEG = ("mixamorig:LeftUpLeg", "mixamorig:LeftLeg")


def test_the_armature_as_origin_is_the_origin_by_its_label() -> None:
    bpy.ops.import_anim.bvh(filepath=str(DATA / "mixamo_freebvh.bvh"))
    obj = bpy.context.active_object
    obj.animation_data_clear()
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis.identity()
    limb = api.build(obj, LEG[-1], parent_switch=True)[0]
    handle = limb.bones["HANDLE"]
    assert obj.data.bones[handle].parent.name == limb.bones["SOCKET"]
    choices = api.parent_choices(obj, LEG[-1])
    # The panel's buttons and the handle's `parent` property say the same: 0 is the origin, here the armature.
    assert choices == ["Origin (the armature)", "Root (mixamorig:Hips)"]
    assert "0 Origin (the armature)" in obj.pose.bones[handle].id_properties_ui("parent").as_dict()["description"]

    length = chain_length(obj, LEG)
    hips = obj.pose.bones["mixamorig:Hips"]
    hips.location = (0.0, 0.1 * length, 0.0)  # the body moved: the controls follow the armature, not it
    before = evaluate(obj)
    api.switch_parent(obj, LEG[-1], "Root")
    assert obj.pose.bones[handle]["parent"] == 1
    api.switch_parent(obj, LEG[-1], "Origin")  # as the docs name the default choice
    assert obj.pose.bones[handle]["parent"] == 0
    api.switch_parent(obj, LEG[-1], 1)
    api.switch_parent(obj, LEG[-1], "Armature")  # as earlier code labelled it: scripts written then keep working
    assert obj.pose.bones[handle]["parent"] == 0
    after = evaluate(obj)
    for name in (handle, limb.bones["POLE"], *LEG):
        assert (after[name].translation - before[name].translation).length < 1e-5 * length, name
        assert rotation_degrees(after[name], before[name]) < 0.01, name
