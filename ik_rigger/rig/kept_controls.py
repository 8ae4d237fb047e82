"""A rebuild that moves a limb's keyed controls or turns its keyed chain bones keeps what their keys did.

A rebuilt limb keeps its controls and their keys (``motion_read``), but a key is a pose relative
to the bone's rest and parent: a rebuild that gives a keyed control another parent (the pole
following the handle, the handle following nothing) or another rest (the pole farther out) would
move it on every keyed frame, and one that turns the chain's bones (Fix Bone Orientation turned on)
would turn their own keys, from which IK starts, so the limb would no longer play as it did. Before
the bone stage each such control's armature-space pose, and each chain bone's local pose, is read
on each of its keyed frames (a chain bone's on every frame they span), in the action that plays and in
each of the file's other clips keying it; after the constraint stage, those whose rest or parent changed
are keyed anew on those frames: a control where it was, a chain bone so it deforms as it did.
Only rebuilds read anything here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

import bpy
from mathutils import Matrix, Vector

from ..limb.plan import LimbPlan
from .animation import fcurve_owners
from .clips import Clip, other_clips, playing_alone, strip_clips
from .export_range import FAR_GAP
from .journal import Journal
from .keys import Local, default_interpolation, evaluated_poses, key_transforms
from .records import Rebuilt, quoted
from .scene_state import check_keys_play, check_strip_keys_play

# The transforms a control's keys place it with; its scale keys are left as they are.
_PLACING = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle")
# Rest matrices closer than this, entry by entry, are the same rest.
_SAME_REST = 1e-6
# A bone planned closer than this to where it is (a share of its length; of 1, its Z axis) stays there.
_SAME_PLACE = 1e-5


@dataclass
class _Kept:
    """One control's armature-space poses, or one chain bone's local ones (``chain``), on its keyed frames,
    in one clip (None: what plays)."""

    bone: str
    clip: Clip | None
    frames: list[int]
    poses: list[Matrix]
    chain: bool = False


def _where(obj: bpy.types.Object, name: str) -> tuple[Matrix, str | None, Matrix | None]:
    """A bone's rest, its parent's name and the parent's rest."""
    bone = obj.data.bones[name]
    parent = bone.parent
    return bone.matrix_local.copy(), parent.name if parent else None, parent.matrix_local.copy() if parent else None


def _same_rest(a: Matrix | None, b: Matrix | None) -> bool:
    if a is None or b is None:
        return a is b
    return all(abs(a[row][column] - b[row][column]) <= _SAME_REST * max(1.0, abs(a[3][3]))
               for row in range(4) for column in range(4))


def _keyed_frames(obj: bpy.types.Object, name: str) -> list[int]:
    """The whole frames on which the active action keys the bone's location or rotation."""
    prefix = f'pose.bones["{quoted(name)}"].'
    found: set[int] = set()
    for owner in fcurve_owners(obj):
        for curve in owner.fcurves:
            if curve.data_path.startswith(prefix) and curve.data_path[len(prefix):] in _PLACING:
                found.update(round(point.co[0]) for point in curve.keyframe_points)
    return sorted(found)


def _moves(bone: bpy.types.Bone, head: Vector, tail: Vector, z_axis: Vector | None = None) -> bool:
    """Whether a bone is planned at another rest than it has (``z_axis`` None: its roll not compared, as for
    made bones, whose planned Z axis is a hint their constraints' bones may not follow)."""
    near = _SAME_PLACE * max((tail - head).length, bone.length)
    return ((bone.head_local - head).length > near or (bone.tail_local - tail).length > near
            or (z_axis is not None and (bone.matrix_local.col[2].xyz - z_axis).length > _SAME_PLACE))


def _controls(obj: bpy.types.Object, limb_plan: LimbPlan, entry: Rebuilt) -> list[str]:
    """The made bones a rebuild keeps, all of them when it gives any another parent or place, else none."""
    bones = obj.data.bones
    kept = [new for new in limb_plan.new_bones if entry.parts.made.get(new.role) == new.name and new.name in bones]
    if any((bones[new.name].parent.name if bones[new.name].parent else None) != new.parent
           or _moves(bones[new.name], new.head, new.tail) for new in kept):
        return [new.name for new in kept]
    return []


def _spanned(frames: list[int]) -> list[int]:
    """Every frame from the first of ``frames`` to the last, but across a stray key's far gap
    (``export_range.FAR_GAP``), whose frames between would each cost an evaluation: there, the keys' own."""
    spanned: list[int] = []
    for frame, following in zip(frames, frames[1:]):
        spanned.extend(range(frame, following) if following - frame <= FAR_GAP else (frame,))
    return [*spanned, frames[-1]]


@contextmanager
def _playing(obj: bpy.types.Object, clip: Clip | None) -> Iterator[None]:
    with playing_alone(obj, clip) if clip is not None else nullcontext():
        yield


class KeptControls:
    """The keyed controls and chain bones of the limbs a build rebuilds that it may move, read before its
    bone stage."""

    def __init__(self, obj: bpy.types.Object, plans: Sequence[LimbPlan], rebuilt: dict[int, Rebuilt]) -> None:
        self.obj = obj
        bones = obj.data.bones
        names = [name for index, entry in rebuilt.items() for name in _controls(obj, plans[index], entry)]
        # The chain bones the rebuild gives another rest (Fix Bone Orientation turned on, a pre-bend).
        chain = [edit.name for index in rebuilt for edit in plans[index].bone_edits
                 if edit.name in plans[index].chain and _moves(bones[edit.name], edit.head, edit.tail, edit.z_axis)]
        self.rests = {name: _where(obj, name) for name in [*names, *chain]}
        self.kept: list[_Kept] = []
        if not self.rests or obj.animation_data is None:
            return
        # The actions of playing strips too: a control keyed there under its old parent would move as well.
        for clip in [None, *other_clips(obj), *strip_clips(obj)]:
            with _playing(obj, clip):
                self._read(clip, names, chain)
        # They are keyed anew where they play: refused before anything changes.
        if any(kept.clip is None for kept in self.kept):
            check_keys_play(obj)
        check_strip_keys_play(obj, {kept.clip.action for kept in self.kept if kept.clip is not None},
                              instead="rebuild it with the options that leave its keyed controls where they are "
                              "(the same Pole Parent, Parent Switching, Pole Distance and Fix Bone Orientation)")

    def _read(self, clip: Clip | None, names: list[str], chain: list[str]) -> None:
        """Each keyed control's armature-space poses and each keyed chain bone's local ones, on its keyed
        frames: one evaluation per frame for them all."""
        obj = self.obj
        keyed = {name: frames for name in names if (frames := _keyed_frames(obj, name))}
        # A chain bone is keyed anew on every frame its keys span, as a fresh build keys it: its new keys
        # turn its old ones by its new rest, and between keys of the user's interpolation (a glTF clip's
        # Linear, over frames it skips) keys of another would play another curve.
        keyed.update((name, _spanned(frames)) for name in chain if (frames := _keyed_frames(obj, name)))
        if not keyed:
            return
        every = sorted({frame for frames in keyed.values() for frame in frames})
        at = {frame: number for number, frame in enumerate(every)}
        controls = [name for name in names if name in keyed]
        poses = evaluated_poses(obj, every, controls) if controls else {}
        turned = [name for name in chain if name in keyed]
        bases = evaluated_poses(obj, every, turned, local=True) if turned else {}
        for name, frames in keyed.items():
            read, is_chain = (bases[name], True) if name in bases else (poses[name], False)
            self.kept.append(_Kept(name, clip, frames, [read[at[frame]] for frame in frames], chain=is_chain))

    def key(self, journal: Journal) -> None:
        """After the constraint stage: key anew, where they were, the controls whose rest or parent changed;
        a parent before its children, so each is keyed under the parent as it now plays."""
        obj = self.obj
        bones = obj.data.bones
        moved = [kept for kept in self.kept if kept.bone in bones and not self._unchanged(kept.bone)]
        moved.sort(key=lambda kept: len(bones[kept.bone].parent_recursive))
        interpolation = default_interpolation()
        for kept in moved:
            rest, parent, parent_rest = _where(obj, kept.bone)
            if kept.chain:
                # Deforming as it did: rest times basis times rest inverse kept, under a parent that deforms as it did.
                change = self.rests[kept.bone][0].inverted() @ rest
                bases = [change.inverted() @ basis @ change for basis in kept.poses]
                with _playing(obj, kept.clip):
                    key_transforms(obj, kept.bone, kept.frames, bases, interpolation, journal,
                                   location=not bones[kept.bone].use_connect)
                continue
            local = Local(rest, parent_rest)
            with _playing(obj, kept.clip):
                parents = evaluated_poses(obj, kept.frames, [parent])[parent] if parent else None
                bases = [local.basis(pose, parents[number] if parents else None)
                         for number, pose in enumerate(kept.poses)]
                key_transforms(obj, kept.bone, kept.frames, bases, interpolation, journal)

    def _unchanged(self, name: str) -> bool:
        rest, parent, parent_rest = self.rests[name]
        now_rest, now_parent, now_parent_rest = _where(self.obj, name)
        return parent == now_parent and _same_rest(rest, now_rest) and _same_rest(parent_rest, now_parent_rest)
