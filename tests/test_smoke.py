import bpy
from helpers import both_legs, evaluate, make_armature, rest, rotation_degrees, set_active_bone


def test_build_leg_keeps_rest():
    obj = make_armature(both_legs())
    set_active_bone(obj, "shin.L")
    before = rest(obj)
    assert bpy.ops.ik_rigger.build_ik() == {"FINISHED"}
    posed = evaluate(obj)
    for name, matrix in before.items():
        assert rotation_degrees(matrix, posed[name]) < 0.01, name
        assert (matrix.translation - posed[name].translation).length < 1e-5, name
