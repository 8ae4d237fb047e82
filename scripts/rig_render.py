"""Render a rigged character with Blender's own Workbench engine: a still and a motion.

As a module (``scripts/`` on ``sys.path``), after the character is rigged and saved::

    import rig_render
    rig_render.render_still(obj, "posed.png", pose=lambda: ...)
    rig_render.render_motion(obj, "walk.webp", action)

Workbench draws meshes only: no bones, no custom shapes. So the IK handles' rings and the
poles' diamonds are drawn as thin tubes (curve objects following their bone shapes' edges),
in the colour each control shows in Blender's theme, the guide's blue. A bare skeleton (a
motion capture) has no mesh to draw: its deforming bones are drawn as Blender's octahedral
bone shapes, one grey mesh the armature deforms. The controls, that mesh, the camera and the
world live in a scene of the picture's own that links the character's objects; that scene
and everything made for it is removed before returning, so the user's file never holds any
of it (each picture object carries ``PICTURE_MARK`` too, for a test to look for).

The motion is rendered frame by frame as PNGs and put together with Pillow (animated WebP).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import bpy
from mathutils import Euler, Matrix, Vector

# A custom property on every object made for a picture: none may ever reach a saved file.
PICTURE_MARK = "ik_rigger_picture"
STILL_SIZE = (560, 640)
MOTION_SIZE = (320, 360)
MOTION_STEP = 2  # render every other frame: half the size, still smooth at 12 frames a second
# The tubes' radius, as a fraction of the character's height.
TUBE = 0.006
# Seen from its front and a little to its left and above, as a rigger checks a pose.
VIEW = Vector((0.45, -1.0, 0.25))
CHARACTER_RGB = (0.78, 0.78, 0.76)
BACKGROUND_RGB = (0.16, 0.17, 0.19)
MARGIN = 1.12
PALETTE_COLOURS = 96
# Blender's octahedral bone in bone space, for a bone of length 1 along +Y: its head, its tail, and
# the square around it a tenth of the way along; a face from each end to each side of the square.
OCTAHEDRON = ((0.0, 0.0, 0.0), (0.0, 1.0, 0.0),
              (0.1, 0.1, 0.1), (-0.1, 0.1, 0.1), (-0.1, 0.1, -0.1), (0.1, 0.1, -0.1))
OCTAHEDRON_FACES = tuple((end, 2 + side, 2 + (side + 1) % 4) for end in (0, 1) for side in range(4))


def shape_matrix(obj: bpy.types.Object, pose_bone: bpy.types.PoseBone) -> Matrix:
    """Where Blender draws ``pose_bone``'s custom shape, in world space (``obj`` and ``pose_bone``
    as a depsgraph evaluated them)."""
    shown = pose_bone.custom_shape_transform or pose_bone
    scale = Vector(pose_bone.custom_shape_scale_xyz)
    if pose_bone.use_custom_shape_bone_size:
        scale *= pose_bone.bone.length
    return (obj.matrix_world @ shown.matrix @ Matrix.Translation(pose_bone.custom_shape_translation)
            @ Euler(pose_bone.custom_shape_rotation_euler).to_matrix().to_4x4()
            @ Matrix.Diagonal((*scale, 1.0)))


class Picture:
    """A scene of the picture's own: ``obj`` and the meshes it deforms linked in (they stay the
    user's; with none, a mesh of its deforming bones made for the picture), a camera, a world,
    Workbench, and a tube along each control's bone shape. ``remove`` takes the scene and
    everything made for it out of the file."""

    def __init__(self, obj: bpy.types.Object, size: tuple[int, int]) -> None:
        self.obj = obj
        self.scene = bpy.data.scenes.new("IK Rigger picture")
        self.made: list[bpy.types.ID] = []
        self.tubes: list[tuple[bpy.types.Object, str]] = []
        scene = self.scene
        scene.collection.objects.link(obj)
        self.meshes = [item for item in bpy.data.objects if item.type == "MESH" and item.find_armature() == obj]
        self.colours = [tuple(item.color) for item in self.meshes]  # the user's, given back by remove
        for item in self.meshes:
            scene.collection.objects.link(item)
        if not self.meshes:
            self.meshes = [self._bones_mesh()]
        source = bpy.context.scene
        scene.render.fps, scene.render.fps_base = source.render.fps, source.render.fps_base
        scene.render.engine = "BLENDER_WORKBENCH"
        scene.render.resolution_x, scene.render.resolution_y = size
        scene.render.resolution_percentage = 100
        scene.render.image_settings.file_format = "PNG"
        shading = scene.display.shading
        shading.light = "STUDIO"
        shading.color_type = "OBJECT"
        shading.show_object_outline = True
        shading.show_cavity = True
        scene.world = self._made(bpy.data.worlds.new("IK Rigger picture"))
        scene.world.color = BACKGROUND_RGB
        camera = self._made(bpy.data.objects.new("Picture camera", self._made(bpy.data.cameras.new("Picture"))))
        camera.data.type = "ORTHO"
        scene.collection.objects.link(camera)
        scene.camera = camera

    def _made(self, block):  # noqa: ANN001, ANN202  (any ID type, returned as it came)
        self.made.append(block)
        if isinstance(block, bpy.types.Object):
            block[PICTURE_MARK] = True
        return block

    def _bones_mesh(self) -> bpy.types.Object:
        """An octahedron on each deforming bone at rest, weighted to it alone, that ``obj`` deforms."""
        bones = [bone for bone in self.obj.data.bones if bone.use_deform]
        vertices = [tuple(bone.matrix_local @ (Vector(corner) * bone.length)) for bone in bones
                    for corner in OCTAHEDRON]
        faces = [tuple(index * len(OCTAHEDRON) + corner for corner in face)
                 for index in range(len(bones)) for face in OCTAHEDRON_FACES]
        mesh = self._made(bpy.data.meshes.new("Picture bones"))
        mesh.from_pydata(vertices, [], faces)
        body = self._made(bpy.data.objects.new("Picture bones", mesh))
        body.matrix_world = self.obj.matrix_world
        for index, bone in enumerate(bones):
            start = index * len(OCTAHEDRON)
            body.vertex_groups.new(name=bone.name).add(list(range(start, start + len(OCTAHEDRON))), 1.0, "REPLACE")
        body.modifiers.new("Armature", "ARMATURE").object = self.obj
        self.scene.collection.objects.link(body)
        return body

    @property
    def depsgraph(self) -> bpy.types.Depsgraph:
        return self.scene.view_layers[0].depsgraph

    def evaluated(self) -> bpy.types.Object:
        self.scene.view_layers[0].update()
        return self.obj.evaluated_get(self.depsgraph)

    def bounds(self) -> tuple[Vector, Vector]:
        """The world-space box around the character's evaluated meshes."""
        self.scene.view_layers[0].update()
        corners = [item.matrix_world @ Vector(corner) for item in self.meshes
                   for corner in item.evaluated_get(self.depsgraph).bound_box]
        return (Vector(tuple(min(corner[axis] for corner in corners) for axis in range(3))),
                Vector(tuple(max(corner[axis] for corner in corners) for axis in range(3))))

    def add_controls(self, height: float) -> None:
        """A tube along every edge of each control's bone shape, coloured as Blender shows the bone."""
        import rig_picture  # its palette reading, shared with the bone diagram

        for name in control_names(self.obj):
            pose_bone = self.obj.pose.bones[name]
            mesh = pose_bone.custom_shape.data
            curve = self._made(bpy.data.curves.new(f"Picture {name}", "CURVE"))
            curve.dimensions = "3D"
            for edge in mesh.edges:
                spline = curve.splines.new("POLY")
                spline.points.add(1)
                for point, index in zip(spline.points, edge.vertices):
                    point.co = (*mesh.vertices[index].co, 1.0)
            tube = self._made(bpy.data.objects.new(f"Picture {name}", curve))
            tube.color = (*rig_picture.palette_rgb(*rig_picture.bone_palette(pose_bone)), 1.0)
            self.scene.collection.objects.link(tube)
            self.tubes.append((tube, name))
        self.place_controls()
        for tube, _ in self.tubes:
            # The bevel is in the curve's own units, which the bone's length and the shape's scale stretch.
            tube.data.bevel_depth = TUBE * height / max(sum(tube.matrix_world.to_scale()) / 3.0, 1e-9)
            tube.data.bevel_resolution = 2

    def place_controls(self) -> None:
        evaluated = self.evaluated()
        for tube, name in self.tubes:
            tube.matrix_world = shape_matrix(evaluated, evaluated.pose.bones[name])
        for item in self.meshes:
            item.color = (*CHARACTER_RGB, 1.0)

    def frame(self, low: Vector, high: Vector) -> None:
        """Aim the orthographic camera along VIEW so it frames the box ``low``-``high`` with a margin."""
        camera, render = self.scene.camera, self.scene.render
        centre = (low + high) / 2.0
        direction = VIEW.normalized()
        rotation = direction.to_track_quat("Z", "Y").to_matrix()
        camera.matrix_world = Matrix.Translation(centre + direction * (high - low).length * 2.0) @ rotation.to_4x4()
        corners = [rotation.inverted() @ (Vector((x, y, z)) - centre) for x in (low.x, high.x)
                   for y in (low.y, high.y) for z in (low.z, high.z)]
        width = max(abs(corner.x) for corner in corners) * 2.0
        height = max(abs(corner.y) for corner in corners) * 2.0
        aspect = render.resolution_x / render.resolution_y
        camera.data.ortho_scale = max(width, height * aspect) * MARGIN
        camera.data.clip_end = (high - low).length * 6.0

    def render(self, path: Path) -> Path:
        from ik_rigger.rig.output import quiet  # Blender's own lines (frame, time, saved) held back

        self.place_controls()
        self.scene.render.filepath = str(path)
        with quiet(), without_egl_probe():
            bpy.ops.render.render(write_still=True, scene=self.scene.name)
        return path

    def remove(self) -> None:
        """The scene and all made for it out of the file; the character's own objects stay as they were."""
        bpy.data.scenes.remove(self.scene)
        for item, colour in zip(self.meshes, self.colours):
            item.color = colour
        # Objects first: removing a camera's data would take its object with it.
        for block in sorted(self.made, key=lambda block: not isinstance(block, bpy.types.Object)):
            for kind, blocks in ((bpy.types.Object, bpy.data.objects), (bpy.types.Curve, bpy.data.curves),
                                 (bpy.types.Mesh, bpy.data.meshes), (bpy.types.Camera, bpy.data.cameras),
                                 (bpy.types.World, bpy.data.worlds)):
                if isinstance(block, kind):
                    blocks.remove(block)
                    break


def control_names(obj: bpy.types.Object) -> list[str]:
    """The IK handles and poles of ``obj``'s rigged limbs that have a bone shape."""
    names = [name for limb in obj.ik_rigger.limbs for name in (limb.handle, limb.pole) if name]
    return [name for name in names if name in obj.pose.bones and obj.pose.bones[name].custom_shape]


# What Blender's GPU start prints in the headless ``bpy`` (EGL, no display) where the driver offers an
# OpenGL below 4.6: it asks for 4.6 first, is refused with this line, and takes the version there is
# (Mesa's software llvmpipe gives 4.5). Each context it starts for the first render prints it once.
# Harmless: the pictures are drawn the same, by the OpenGL 4.5 context.
EGL_PROBE = ("EGL Error (0x3009): EGL_BAD_MATCH: Arguments are inconsistent (for example, a valid context requires "
             "buffers not supplied by a valid surface).")


@contextmanager
def without_egl_probe() -> Iterator[None]:
    """What Blender prints to the process's stderr, but for ``EGL_PROBE``'s line: held back
    meanwhile and let through at the end, every other line as it was."""
    import ctypes

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            ctypes.CDLL(None).fflush(None)
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            kept = [line for line in sink.read().splitlines(keepends=True)
                    if line.rstrip(b"\r\n") != EGL_PROBE.encode()]
            if kept:
                os.write(2, b"".join(kept))


@contextmanager
def picture(obj: bpy.types.Object, size: tuple[int, int]) -> Iterator[Picture]:
    made = Picture(obj, size)
    try:
        yield made
    finally:
        made.remove()


def render_still(obj: bpy.types.Object, path: Path, pose: Callable[[], None]) -> Path:
    """``obj`` posed by ``pose``, rendered as a PNG at ``path`` (its colours cut to a palette: a
    third of the bytes, for pictures that live in the repository)."""
    from PIL import Image

    with picture(obj, STILL_SIZE) as shot:
        pose()
        low, high = shot.bounds()
        shot.add_controls((high - low).z)
        shot.frame(low, high)
        shot.render(path)
    with Image.open(path) as image:
        reduced = image.convert("RGB").quantize(colors=PALETTE_COLOURS)
    reduced.save(path, optimize=True)
    return path


def render_motion(obj: bpy.types.Object, path: Path, frames: range) -> Path:
    """``obj`` playing its active action over ``frames``, rendered and written as an animated WebP."""
    from PIL import Image

    with picture(obj, MOTION_SIZE) as shot, tempfile.TemporaryDirectory() as folder:
        shown = list(frames)[::MOTION_STEP]
        boxes = []
        for frame in shown:
            shot.scene.frame_set(frame)
            boxes.append(shot.bounds())
        low = Vector(tuple(min(box[0][axis] for box in boxes) for axis in range(3)))
        high = Vector(tuple(max(box[1][axis] for box in boxes) for axis in range(3)))
        shot.add_controls((high - low).z)
        shot.frame(low, high)
        pictures = []
        for index, frame in enumerate(shown):
            shot.scene.frame_set(frame)
            with Image.open(shot.render(Path(folder) / f"{index:04}.png")) as image:
                pictures.append(image.convert("RGB"))
        milliseconds = round(1000 * MOTION_STEP * shot.scene.render.fps_base / max(shot.scene.render.fps, 1))
        pictures[0].save(path, save_all=True, append_images=pictures[1:], duration=milliseconds, loop=0,
                         quality=80, method=6)
    return path
