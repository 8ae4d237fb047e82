"""Costs of a build that grow with the work, not its square: the legs' origin, the constraints' names."""

from __future__ import annotations

import pytest
from helpers import both_legs, make_armature
from mathutils import Vector

from ik_rigger import api
from ik_rigger.core import body
from ik_rigger.core.model import BoneInfo, Skeleton
from ik_rigger.limb.options import LimbOptions
from ik_rigger.parts import parents
from ik_rigger.rig import drivers, posed

SEGMENT = 0.3


def creature(pairs: int, root_at_ground: bool = True) -> Skeleton:
    """A spine of ``pairs`` segments along -Y at hip height, a pair of legs on each (hip, thigh,
    shin, foot) and, with ``root_at_ground``, a root on the floor above it all."""
    rows = [("root", (0, 0, 0), (0, SEGMENT, 0), None)] if root_at_ground else []
    parent = "root" if root_at_ground else None
    for index in range(pairs):
        y, segment = -index * SEGMENT, f"spine_{index}"
        rows.append((segment, (0, y, 1.0), (0, y - SEGMENT, 1.0), parent))
        for side, x in (("L", 1.0), ("R", -1.0)):
            rows += [(f"hip_{index}.{side}", (0.05 * x, y, 1.0), (0.15 * x, y, 1.0), segment),
                     (f"thigh_{index}.{side}", (0.15 * x, y, 1.0), (0.3 * x, y - 0.03, 0.55), f"hip_{index}.{side}"),
                     (f"shin_{index}.{side}", (0.3 * x, y - 0.03, 0.55), (0.35 * x, y, 0.1),
                      f"thigh_{index}.{side}"),
                     (f"foot_{index}.{side}", (0.35 * x, y, 0.1), (0.35 * x, y - 0.1, 0.0), f"shin_{index}.{side}")]
        parent = segment
    bones = {name: BoneInfo(name, up, Vector(head), Vector(tail), Vector((1, 0, 0)), Vector((0, 0, 1)))
             for name, head, tail, up in rows}
    return Skeleton(bones)


def origins(skeleton: Skeleton) -> dict[str, str | None]:
    legs = [name for name in skeleton.bones if name.startswith("shin_")]
    return {leg: parents.resolve_origin(skeleton, (leg.replace("shin", "thigh"), leg), skeleton[leg].tail,
                                        LimbOptions()) for leg in legs}


def walked(skeleton: Skeleton, leg: str) -> str | None:
    """The nearest bone at the ground above the leg's hip, each ancestor asked in turn (what the
    origin was before it was read once per skeleton)."""
    hip = skeleton[leg.replace("shin", "thigh")].parent
    return next((bone for bone in skeleton.ancestors(hip) if body.at_ground(skeleton, skeleton[bone].head)), None)


@pytest.mark.parametrize("root_at_ground", [True, False], ids=["root on the floor", "no root"])
def test_many_legs_find_their_origin_asking_each_bone_once(monkeypatch, root_at_ground):
    """Each leg's origin is the nearest bone at the ground above it, as before; the ground is asked
    of each bone above a leg at most once per skeleton, not once per leg and ancestor (64 legs along
    a spine asked it 1,054 times, 1,024 legs 262,654 times), and never of the bones no leg hangs from."""
    real = body.at_ground
    for pairs in (2, 32, 128):
        skeleton = creature(pairs, root_at_ground)
        expected = {leg: walked(skeleton, leg) for leg in origins(skeleton)}
        assert set(expected.values()) == {"root" if root_at_ground else None}
        fresh = creature(pairs, root_at_ground)
        asked: list[Vector] = []

        def counted(skeleton: Skeleton, point: Vector, asked: list[Vector] = asked) -> bool:
            asked.append(point)
            return real(skeleton, point)

        monkeypatch.setattr(body, "at_ground", counted)
        assert origins(fresh) == expected
        monkeypatch.undo()
        # Each leg's end, and once the parent of each bone on the way up from a leg's hip (the hips,
        # the segments): not the legs' own bones, nor once per leg.
        assert len(asked) <= 2 * pairs + 2 * pairs + pairs, pairs


def test_every_new_constraint_is_named_before_the_first_driver(monkeypatch):
    """Naming a constraint rewrites every animation path of the file that names it (Blender renames
    the old name's paths): named between the drivers of the limbs before, each limb's constraints
    cost more than the last's. The build makes and names every new limb's constraints first; the
    rig is the same (the build's tests), and a failed build still takes them all back."""
    obj = make_armature(both_legs(), mode="OBJECT")
    seen: list[int] = []
    real = drivers.drive

    def counted(obj_, owner, path, driven, *rest) -> None:
        seen.append(sum(len(pose_bone.constraints) for pose_bone in obj_.pose.bones))
        real(obj_, owner, path, driven, *rest)

    monkeypatch.setattr(drivers, "drive", counted)
    api.build_many(obj, [("shin.L", api.options()), ("shin.R", api.options())])
    total = sum(len(pose_bone.constraints) for pose_bone in obj.pose.bones)
    assert seen and total > 4 and set(seen) == {total}
    monkeypatch.undo()

    obj = make_armature(both_legs(), name="Failing", mode="OBJECT")
    names = {bone.name for bone in obj.data.bones}

    def broken(*_args) -> None:
        raise RuntimeError("a driver failed")

    monkeypatch.setattr(drivers, "drive", broken)
    with pytest.raises(RuntimeError):
        api.build_many(obj, [("shin.L", api.options()), ("shin.R", api.options())])
    assert {bone.name for bone in obj.data.bones} == names
    assert not any(pose_bone.constraints for pose_bone in obj.pose.bones)
    assert not (obj.animation_data and obj.animation_data.drivers)


def rig_state(obj) -> dict:
    """The rest, parent and constraints of every bone, as a rebuild or another build order must give."""
    return {bone.name: (bone.parent.name if bone.parent else None, [round(value, 5) for row in bone.matrix_local
                                                                    for value in row],
                        [(constraint.type, constraint.name, getattr(constraint, "subtarget", ""))
                         for constraint in obj.pose.bones[bone.name].constraints])
            for bone in obj.data.bones}


def test_many_limbs_at_once_build_and_rebuild_as_a_few_at_a_time():
    """A build of many limbs finds the armature's edit bones from an index it makes once (Blender
    looks each name up along all the bones): the rig is the one built a few limbs at a time, and a
    rebuild that deletes made bones (no stretch: no target or reach) leaves the same rig as a
    fresh build without stretch."""
    from benchmarks import creature

    legs = [last for _, last, _ in creature.legs(16)]
    together = make_armature(creature.bones(16), name="Together", mode="OBJECT")
    api.build_many(together, [(last, api.options()) for last in legs])
    apart = make_armature(creature.bones(16), name="Apart", mode="OBJECT")
    for start in range(0, len(legs), 2):
        api.build_many(apart, [(last, api.options()) for last in legs[start:start + 2]])
    assert rig_state(together) == rig_state(apart)
    assert len(together.data.bones) > len(creature.bones(16)) + 5 * len(legs)

    before = len(together.data.bones)
    api.build_many(together, [(last, api.options(max_stretch=1.0)) for last in legs])
    assert len(together.data.bones) == before - 2 * len(legs)  # each leg's stretch target and reach
    fresh = make_armature(creature.bones(16), name="Fresh", mode="OBJECT")
    api.build_many(fresh, [(last, api.options(max_stretch=1.0)) for last in legs])
    assert rig_state(together) == rig_state(fresh)


class _CountedStacks(dict):
    """Constraint stacks by bone (``checks.constraint_stacks``) that count how often a bone is asked for."""

    asked = 0

    def __contains__(self, name: object) -> bool:
        type(self).asked += 1
        return super().__contains__(name)


def test_a_pose_without_keys_is_looked_for_asking_each_bone_once():
    """Before a build, whether a limb may stand off its rest (``posed``) asks each bone above the legs once
    per build, not once per leg and ancestor (legs hanging along a spine share it all); posed or not, the
    answer is as each bone's pose and constraints say."""
    skeleton = creature(32)
    obj = make_armature([(bone.name, tuple(bone.head), tuple(bone.tail), bone.parent, False)
                         for bone in skeleton.bones.values()], mode="OBJECT")
    legs = [name for name in skeleton.bones if name.startswith(("thigh_", "shin_", "foot_"))]
    stacks = _CountedStacks({"elsewhere": []})  # a bone with constraints no leg hangs from
    assert not posed._may_stand_off_rest(obj, legs, stacks)
    asked = _CountedStacks.asked
    assert asked <= len(skeleton.bones), f"{asked} questions for {len(skeleton.bones)} bones"
    assert posed._may_stand_off_rest(obj, legs, _CountedStacks({"spine_0": []}))  # a constraint above every leg
    obj.pose.bones["spine_31"].rotation_euler.x = 0.1  # a bone posed by hand
    assert posed._may_stand_off_rest(obj, legs, {})
