"""A many-legged creature of any size, for the scaling rows: a root on the ground, a spine of
segments along the body, and on each segment a pair of legs (hip, thigh, shin, foot).

Every leg hangs from its own segment, so the legs further back sit deeper in the skeleton:
a cost that walks each leg's ancestors grows with the square of the legs, as it would on a
centipede or a rope of linked characters.
"""

from __future__ import annotations

ROOT = "root"  # on the ground, under the body: the bone IK Rigger's legs hang their controls from
SEGMENT = 0.3  # the spine's segments along the body (-Y), at hip height
HEIGHT = 1.0

# (name, head, tail, parent, connected), as tests/helpers.make_armature takes them.
BoneSpec = tuple[str, tuple[float, float, float], tuple[float, float, float], str | None, bool]


def bones(limbs: int) -> list[BoneSpec]:
    """The creature with ``limbs`` legs (an even number, at least 2): ``limbs // 2`` segments."""
    found: list[BoneSpec] = [(ROOT, (0.0, 0.0, 0.0), (0.0, SEGMENT, 0.0), None, False)]
    parent = ROOT
    for index in range(limbs // 2):
        y = -index * SEGMENT
        segment = f"spine_{index:04d}"
        found.append((segment, (0.0, y, HEIGHT), (0.0, y - SEGMENT, HEIGHT), parent, index > 0))
        for side, x in (("L", 1.0), ("R", -1.0)):
            hip, thigh, shin, foot = (f"{part}_{index:04d}.{side}" for part in ("hip", "thigh", "shin", "foot"))
            found += [
                (hip, (0.05 * x, y, HEIGHT), (0.15 * x, y, HEIGHT), segment, False),
                (thigh, (0.15 * x, y, HEIGHT), (0.3 * x, y - 0.03, 0.55), hip, True),
                (shin, (0.3 * x, y - 0.03, 0.55), (0.35 * x, y, 0.1), thigh, True),
                (foot, (0.35 * x, y, 0.1), (0.35 * x, y - 0.1, 0.0), shin, True),
            ]
        parent = segment
    return found


def legs(limbs: int) -> list[tuple[str, str, str]]:
    """Each leg's (first chain bone, last chain bone, foot), in the order the benchmark asks for them."""
    return [(f"thigh_{index:04d}.{side}", f"shin_{index:04d}.{side}", f"foot_{index:04d}.{side}")
            for index in range(limbs // 2) for side in "LR"]


def make(limbs: int):
    """The creature with ``limbs`` legs as an armature object named "creature" in the scene, active, in
    Object mode."""
    import bpy

    armature = bpy.data.armatures.new("creature")
    obj = bpy.data.objects.new("creature", armature)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    for name, head, tail, parent, connected in bones(limbs):
        bone = armature.edit_bones.new(name)
        bone.head, bone.tail = head, tail
        if parent:
            bone.parent = armature.edit_bones[parent]
            bone.use_connect = connected
    bpy.ops.object.mode_set(mode="OBJECT")
    return obj


def add_loose_bones(obj, total: int) -> None:
    """Single bones on ``obj``'s first bone up to ``total`` bones in all, as a character's props,
    helpers and face bones are, which no limb uses; ``obj`` is left in Object mode."""
    import bpy

    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = obj.data.edit_bones
    parent = edit_bones[0]
    top = max(bone.head.z for bone in edit_bones)
    for index in range(total - len(edit_bones)):
        x, y = 0.01 * (index % 100) - 0.5, 0.3 + 0.01 * (index // 100)
        bone = edit_bones.new(f"extra_{index:05d}")
        bone.head, bone.tail, bone.parent = (x, y, 0.5 * top), (x, y, 0.5 * top + 0.05), parent
    bpy.ops.object.mode_set(mode="OBJECT")
