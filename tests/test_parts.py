"""Parts: every option and role is declared by exactly one part, and a new part needs nothing else."""

from __future__ import annotations

from dataclasses import dataclass, fields

import bpy
import pytest
from helpers import both_legs, evaluate, make_armature, same, snapshot
from mathutils import Vector

from ik_rigger import api
from ik_rigger import parts as limb_parts
from ik_rigger.core.model import PALETTE_CONTROL, ConstraintPlan, Driven, NewBone, PropertyPlan
from ik_rigger.limb import options
from ik_rigger.parts.base import Draft, Part, Shape


def test_every_option_and_role_is_declared_by_one_part_in_order():
    declared = [entry.name for part in limb_parts.PARTS for entry in fields(part.options)]
    assert declared == [entry.name for entry in options.schema()]
    assert len(set(declared)) == len(declared)
    roles = limb_parts.roles()
    assert len(set(roles)) == len(roles)
    assert set(limb_parts.shapes()) <= set(roles)
    assert {"HANDLE", "POLE", "CLONE", "POLE_LINE", "ROLL", "HEEL", "TOE_PIVOT", "SOCKET"} <= set(api.ROLES)
    assert [part.name for part in limb_parts.PARTS] == list(limb_parts.REGISTERED) == list(api.PARTS)


@dataclass(frozen=True)
class _NoOptions:
    """The test part has no options."""


def _plan_marker(draft: Draft) -> None:
    """A knee marker: a control at the middle joint following the pole, and a switch on the handle."""
    knee = draft.joints[len(draft.chain) // 2]
    pole = draft.made("POLE")
    marker = draft.new_name(draft.chain[-1], "marker")
    draft.bones.append(NewBone("MARKER", marker, knee, knee + Vector((0.0, 0.0, 0.05 * draft.length)), draft.bend,
                               draft.chain[0], PALETTE_CONTROL, "IK Controls"))
    draft.constraints.append(ConstraintPlan(marker, "DAMPED_TRACK", "IK Rigger Marker", pole,
                                            influence=Driven((("marker", draft.handle),))))
    draft.properties.append(PropertyPlan(draft.handle, "marker", 0.5, 0.0, 1.0, "How much the marker looks at "
                                         "the pole"))


MARKER = Part("marker", _NoOptions, _plan_marker, roles=("MARKER",),
              shapes={"MARKER": Shape("IK Marker", ((0.0, 0.0, 0.0), (0.0, 1.0, 0.0)), ((0, 1),), 1.0)},
              targets={"DAMPED_TRACK": ("POLE",)})


def test_a_new_part_is_one_module_the_builder_records_and_remover_need_nothing_more(monkeypatch):
    monkeypatch.setattr(limb_parts, "PARTS", (*limb_parts.PARTS, MARKER))
    obj = make_armature(both_legs(), mode="OBJECT")
    before = snapshot(obj)
    limb = api.build(obj, "shin.L")[0]
    assert "marker" in limb.parts and "MARKER" in limb.bones
    marker = limb.bones["MARKER"]
    handle = obj.pose.bones[limb.bones["HANDLE"]]
    assert handle["marker"] == pytest.approx(0.5)
    assert obj.pose.bones[marker].custom_shape is not None
    track = obj.pose.bones[marker].constraints["IK Rigger Marker"]
    assert track.subtarget == limb.bones["POLE"]
    # The driver plays the switch: at 0 the marker stays at rest, at 1 it turns to the pole.
    handle["marker"] = 0.0
    obj.update_tag()
    resting = evaluate(obj)[marker].copy()
    handle["marker"] = 1.0
    obj.update_tag()
    turned = evaluate(obj)[marker]
    assert (turned.col[1].xyz.normalized() - resting.col[1].xyz.normalized()).length > 1e-3
    # Renamed, it is still the limb's; rebuilt in place; removed, the armature is as it was.
    obj.data.bones[marker].name = "knee marker"
    assert api.limbs(obj)[0].bones["MARKER"] == "knee marker"
    count = len(obj.data.bones)
    api.build(obj, "shin.L")
    assert len(obj.data.bones) == count and "IK Rigger Marker" in obj.pose.bones["knee marker"].constraints
    api.remove(obj, "shin.L")
    assert same(before, snapshot(obj))
    assert not [item for item in bpy.data.objects if item.get("_ik_rigger_shape")]


def test_a_part_registered_after_a_build_is_among_the_parts_of_the_next_built_with_the_same_options(monkeypatch):
    """What a set of options uses is kept by its values for the next build (a script's builds share a few):
    a part registered in between is one of the next limb's parts all the same."""
    obj = make_armature(both_legs(), mode="OBJECT")
    chosen = api.options(pole_distance=1.0625)  # values no other build of the session has
    assert "marker" not in api.build_many(obj, [("shin.L", chosen)])[0].parts
    api.remove(obj, "shin.L")
    monkeypatch.setattr(limb_parts, "PARTS", (*limb_parts.PARTS, MARKER))
    limb = api.build_many(obj, [("shin.L", api.options(pole_distance=1.0625))])[0]
    assert "marker" in limb.parts and "MARKER" in limb.bones
