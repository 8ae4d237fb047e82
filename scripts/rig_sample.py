"""Rig sample characters headless: rigged .blend files, a diagram of the rig and pictures Blender renders.

The first character is the Mixamo-named skeleton in tests/data (a real motion-capture
skeleton in centimetres). IK Rigger rigs both legs and both arms through its
Python API, saves the result as a new .blend and draws the rig at rest and posed:
the body crouches over the planted left foot, the right foot steps up, the left
hand comes forward to the chest and the right arm hangs, so knees and elbows bend
toward their poles (the side view looks at the left side).

The second is a skinned character, Godot's platformer robot (tests/data, MIT), with its
game's clips. Auto-Rig rigs it keeping every clip on the new IK controls; it is saved,
then rendered with Blender's Workbench engine, its IK handles' rings and poles' diamonds
drawn in the guide's blue (scripts/rig_render.py): a still, crouching over its planted
left foot with its left arm reaching forward.

The third is a real motion capture, a walk (tests/data/pymo_walk.bvh, MIT), imported with
Blender's BVH importer at the capture's own frame rate. Auto-Rig rigs it, baking its motion
onto the new IK controls; it is saved, then played through the rig and rendered with
Workbench as an animated WebP, its bones drawn grey and its controls moving with them.
Nothing made for the pictures is saved.

    scripts/rig_sample.sh [--out DIR] [--update-docs]             (the project's bpy)
    blender --background --factory-startup --python scripts/rig_sample.py -- [--out DIR]

``--update-docs`` also copies the pictures into docs/, the ones README and docs/rigging.md show.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bpy
from mathutils import Vector

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import ik_rigger  # noqa: E402
from ik_rigger import api  # noqa: E402
from ik_rigger.batch.opening import check_blend_file  # noqa: E402
from ik_rigger.core.errors import RigError  # noqa: E402
from ik_rigger.core.notes import is_warning  # noqa: E402
from ik_rigger.limb.options import LimbOptions  # noqa: E402
from ik_rigger.limb.plan import LimbPlan  # noqa: E402
from ik_rigger.rig.build import build_limbs  # noqa: E402
from ik_rigger.rig.output import quiet  # noqa: E402

SKELETON = ROOT / "tests" / "data" / "mixamo_freebvh.bvh"
DOCS_PICTURE = ROOT / "docs" / "sample_rig.png"
SKINNED = ROOT / "tests" / "data" / "godot_platformer_robot.glb"
SKINNED_BODY = "hip"
CAPTURE = ROOT / "tests" / "data" / "pymo_walk.bvh"
RENDER, MOTION = "sample_render.png", "sample_motion.webp"
# Every file the job writes in --out.
SAMPLE_FILES = ("sample_rigged.blend", "sample_rig.png", "sample_character_rigged.blend", RENDER,
                "sample_capture_rigged.blend", MOTION)
# The skinned character's pose in the still, as fractions of its left leg's length (it faces -Y, its
# left is +X): the body down and forward over the planted left foot, the left hand reaching forward.
SKINNED_CROUCH = Vector((0.0, -0.08, -0.18))
SKINNED_REACH = ("l-forearm", Vector((0.05, -0.75, 0.45)))
BODY = "mixamorig:Hips"
TITLE = "IK Rigger: sample character"


@dataclass(frozen=True)
class Limb:
    """One limb of the sample: what a rigger calls it, its last bone, and where the pose takes its handle."""

    label: str
    last: str
    joint: str  # the joint that points at the pole
    extremity: str
    # The handle's move in the posed picture, as fractions of the chain's length
    # (armature axes: the character faces -Y, its left is +X, Z is up).
    move: tuple[float, float, float]


LIMBS = (
    # Planted: the body crouches over it.
    Limb("left leg", "mixamorig:LeftLeg", "knee", "foot", (0.0, 0.0, 0.0)),
    Limb("right leg", "mixamorig:RightLeg", "knee", "foot", (0.0, -0.35, 0.3)),
    Limb("left arm", "mixamorig:LeftForeArm", "elbow", "hand", (-1.0, -0.5, -0.4)),
    Limb("right arm", "mixamorig:RightForeArm", "elbow", "hand", (0.55, -0.1, -0.75)),
)
# The body's move in the posed picture, as fractions of the left leg's length: down and forward.
CROUCH = Vector((0.0, -0.08, -0.2))


def arguments() -> argparse.Namespace:
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out", help="folder for the .blend and the picture")
    parser.add_argument("--update-docs", action="store_true",
                        help="also copy the pictures into docs/, the ones README and docs/rigging.md show")
    parser.add_argument("--no-picture", action="store_true", help="write the .blend only")
    return parser.parse_args(argv)


def load_character() -> bpy.types.Object:
    """The sample skeleton, imported at rest into the scene, active; the importer's notices held back."""
    with quiet():
        bpy.ops.import_anim.bvh(filepath=str(SKELETON))
    obj = bpy.context.active_object
    obj.name = "SampleCharacter"
    obj.animation_data_clear()
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis.identity()
    return obj


def rig(obj: bpy.types.Object) -> list[LimbPlan]:
    """Both legs and both arms with IK Rigger's defaults (the guide's rig)."""
    return build_limbs(obj, [(limb.last, LimbOptions()) for limb in LIMBS])


def chain_length(obj: bpy.types.Object, last: str) -> float:
    limb = next(limb for limb in api.limbs(obj) if limb.name == last)
    return sum(obj.data.bones[name].length for name in limb.chain)


def pose_limbs(obj: bpy.types.Object) -> None:
    """Crouch, step and reach (see the module's docstring); moves are fractions of limb lengths."""
    _move(obj, BODY, CROUCH * chain_length(obj, LIMBS[0].last))
    # The arm handles hang from the spine, so they went down with the body: move them from there.
    bpy.context.view_layer.update()
    for limb in LIMBS:
        _move(obj, obj.ik_rigger.limb_of(limb.last).handle, Vector(limb.move) * chain_length(obj, limb.last))


def _move(obj: bpy.types.Object, bone: str, offset: Vector) -> None:
    pose_bone = obj.pose.bones[bone]
    matrix = pose_bone.matrix.copy()
    matrix.translation += offset
    pose_bone.matrix = matrix


def draw(obj: bpy.types.Object, path: Path) -> Path:
    """The sample's picture of the rigged ``obj``: at rest, then posed by ``pose_limbs``.

    Raises ImportError without matplotlib (a Blender binary's own Python, say).
    """
    import rig_picture

    return rig_picture.draw_rig(obj, path, posed=lambda: pose_limbs(obj), title=TITLE)


def summary(obj: bpy.types.Object, plans: list[LimbPlan]) -> list[str]:
    """What was rigged, in a rigger's words, with what IK Rigger had to say about each limb by its kind."""
    labels = {limb.last: limb for limb in LIMBS}
    lines = [f"Rigged {len(plans)} limbs of '{obj.name}', the Mixamo skeleton "
             f"{SKELETON.relative_to(ROOT).as_posix()}:"]
    for plan in plans:
        limb = labels[plan.chain[-1]]
        lines.append(f"  {limb.label}: IK on {' > '.join(plan.chain)}")
        if plan.handle_parent:
            follows = f"follows {plan.handle_parent}: the {limb.extremity} goes with the body"
        else:
            follows = (f"has no parent bone (only the armature object moves it): the {limb.extremity} "
                       "stays planted when the body moves")
        lines.append(f"    IK handle {plan.handle} {follows}")
        if plan.pole:
            lines.append(f"    pole {plan.pole}: the {limb.joint} points at it")
        if plan.clone and plan.extremity:
            lines.append(f"    {plan.extremity} copies the rotation of {plan.clone}, on the handle")
        lines.extend(f"    {'warning' if is_warning(note) else 'note'}: {note}" for note in plan.notes)
    lines.append("In Blender, move the IK handles (blue); each handle's ik_fk property switches its limb "
                 "between IK (1) and FK (0).")
    return lines


def load_skinned() -> bpy.types.Object:
    """The skinned sample, imported with its clips (tails on the next joints), its armature returned."""
    with quiet():
        bpy.ops.import_scene.gltf(filepath=str(SKINNED), bone_heuristic="TEMPERANCE")
    return next(item for item in bpy.data.objects if item.type == "ARMATURE")


def pose_skinned(obj: bpy.types.Object) -> None:
    """The still's pose, from the rest: a crouch over the planted left foot, the left arm reaching."""
    for pose_bone in obj.pose.bones:
        pose_bone.matrix_basis.identity()
    bpy.context.view_layer.update()
    leg = next(limb for limb in api.limbs(obj) if limb.chain[-1].startswith("l-leg"))
    length = sum(obj.data.bones[name].length for name in leg.chain)
    _move(obj, SKINNED_BODY, SKINNED_CROUCH * length)
    bpy.context.view_layer.update()  # the arm handles hang from the spine: moved from where the crouch took them
    last, reach = SKINNED_REACH
    _move(obj, obj.ik_rigger.limb_of(last).handle, reach * length)


def load_capture() -> bpy.types.Object:
    """The motion capture with its motion, the scene set to its frames and frame rate, its armature returned."""
    with quiet():
        bpy.ops.import_anim.bvh(filepath=str(CAPTURE), update_scene_fps=True, update_scene_duration=True)
    return bpy.context.active_object


def frames(obj: bpy.types.Object) -> range:
    """The frames of ``obj``'s active action (after Auto-Rig, its motion baked onto the IK controls)."""
    start, end = obj.animation_data.action.frame_range
    return range(int(start), int(end) + 1)


def save(blend: Path) -> None:
    """Save the open file as ``blend``, whole, or raise a RigError saying why (nothing is left there): a
    disk that fills up as Blender writes the end of the file leaves it cut short, and Blender says nothing."""
    try:
        with quiet():
            bpy.ops.wm.save_as_mainfile(filepath=str(blend), check_existing=False)
        check_blend_file(blend)
    except RuntimeError as error:  # Blender's own failure: its words
        raise RigError(f"could not write '{blend}' ({str(error).strip()})",
                       hint="Make room on its disk, or give --out another folder.") from error
    except RigError as error:
        blend.unlink(missing_ok=True)
        raise RigError(f"Blender wrote '{blend}' incomplete, its end missing (its disk full?), and it was removed",
                       hint="Make room on its disk, or give --out another folder.") from error


def _rig_and_save(load: Callable[[], bpy.types.Object], blend: Path, what: str, source: Path,
                  kept: str) -> bpy.types.Object:
    """Load a character into a fresh scene, Auto-Rig it and save it as ``blend``; the armature."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    obj = load()
    built = api.auto_rig(obj)
    save(blend)
    print(f"Rigged {len(built)} limbs of {what}, {source.relative_to(ROOT).as_posix()}, {kept} on the IK controls: "
          + ", ".join(limb.name for limb in built))
    return obj


def rig_skinned(out: Path, pictures: bool) -> list[tuple[Path, str]]:
    """Rig, save and render the skinned sample (see the module's docstring); what was written."""
    blend = out / "sample_character_rigged.blend"
    obj = _rig_and_save(load_skinned, blend, "Godot's platformer robot", SKINNED, "its clips kept")
    written = [(blend, "the skinned character rigged, its clips playing through the rig")]
    if pictures:
        import rig_render

        clip = obj.animation_data.action
        obj.animation_data.action = None
        written.append((rig_render.render_still(obj, out / RENDER, lambda: pose_skinned(obj)),
                        "rendered with Workbench, posed, its controls in the guide's blue"))
        obj.animation_data.action = clip
    return written


def rig_capture(out: Path, pictures: bool) -> list[tuple[Path, str]]:
    """Rig, save and render the motion capture (see the module's docstring); what was written."""
    blend = out / "sample_capture_rigged.blend"
    obj = _rig_and_save(load_capture, blend, "the motion capture", CAPTURE, "its motion baked")
    written = [(blend, "the motion capture rigged, its motion playing through the rig")]
    if pictures:
        import rig_render

        written.append((rig_render.render_motion(obj, out / MOTION, frames(obj)),
                        "its motion played through the rig, rendered: the bones grey, the controls in blue"))
    return written


def writable(out: Path) -> str | None:
    """Why the samples cannot be written in ``out`` (made if missing), None when they can: said before any
    work, as the batch does."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as error:
        where = error.filename or out
        return f"cannot write the samples in '{out}': '{where}': {error.strerror or error}"
    # Blender's save moves a folder standing at its path aside as the .blend1 backup, and writes its file there.
    for name in SAMPLE_FILES:
        for path in (out / name, out / f"{name}1") if name.endswith(".blend") else (out / name,):
            if os.path.lexists(path) and not path.is_file():
                return f"'{path}' is there and is not a file, where the job writes its '{name}'"
    return None


def main() -> int:
    args = arguments()
    why = writable(args.out)
    if why is not None:
        print(f"rig_sample: error: {why}. Give --out a folder you can write in, or move that aside.", file=sys.stderr)
        return 2
    bpy.ops.wm.read_factory_settings(use_empty=True)
    ik_rigger.register()
    obj = load_character()
    try:
        plans = rig(obj)
    except RigError as error:
        print(f"rig_sample: error: could not rig the sample: {error.message}", file=sys.stderr)
        return 1
    print("\n".join(summary(obj, plans)))

    blend = args.out / "sample_rigged.blend"
    try:
        save(blend)
    except RigError as error:  # the disk full, the folder made read-only since
        print(f"rig_sample: error: {error}", file=sys.stderr)
        return 1
    written = [(blend, "the rigged character, to open in Blender 4.2 or newer")]
    pictures = not args.no_picture
    if pictures:
        try:
            picture = draw(obj, args.out / "sample_rig.png")
        except ImportError as error:
            print(f"rig_sample: warning: no pictures ({error}); the project's environment has matplotlib and Pillow: "
                  "scripts/rig_sample.sh", file=sys.stderr)
            pictures = False
        else:
            written.append((picture, "the rig at rest and posed, front and side"))
    # A sample that could not be rigged or written fails the job (exit 1) once the others are done; pictures a
    # Blender without matplotlib or Pillow cannot make are said, and the job still succeeds.
    failed = False
    for make, what in ((rig_skinned, "skinned"), (rig_capture, "motion-capture")):
        try:
            written.extend(make(args.out, pictures))
        except RigError as error:
            print(f"rig_sample: error: no {what} sample: {error}", file=sys.stderr)
            failed = True
        except ImportError as error:
            print(f"rig_sample: warning: no {what} sample's pictures ({error})", file=sys.stderr)
    if args.update_docs and pictures:
        for path, name in ((picture, DOCS_PICTURE.name), (args.out / RENDER, RENDER), (args.out / MOTION, MOTION)):
            if path.is_file():
                shutil.copyfile(path, ROOT / "docs" / name)
                written.append((ROOT / "docs" / name, "refreshed for README and docs/"))
    print("Wrote:")
    width = max(len(str(path)) for path, _ in written)
    print("\n".join(f"  {str(path):<{width}}  {what}" for path, what in written))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from blender_exit import leave

    leave(main())
