"""Readers of exported files that are not ours, and the comparison with Blender's evaluated rig.

Khronos' glTF Validator and three.js run in Node (``tests/node``, installed by
``scripts/setup.sh``); Blender's FBX importer runs in a fresh Python process
(``tests/fbx_reader.py``), and assimp (the Open Asset Import Library, as WebAssembly in
Node) is an FBX reader that is not Blender's: it turns the FBX into a .glb three.js
plays. Each reports every joint's world matrix on every frame of every
clip; ``compare`` holds it against the poses Blender evaluates for the rig, each clip played
alone, in world space.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix

NODE = Path(__file__).resolve().parent / "node"
FBX_READER = Path(__file__).resolve().parent / "fbx_reader.py"
# Blender's Z up to glTF's Y up: (x, y, z) -> (x, z, -y).
Y_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
POSITION = 1e-4  # of the character's height
DEGREES = 0.05


def _node(script: str, *args: str) -> subprocess.CompletedProcess:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed for the export tests' readers (Node 20 or later)"
    assert (NODE / "node_modules" / "three").is_dir(), "run scripts/setup.sh: it installs tests/node's readers"
    return subprocess.run([node, str(NODE / script), *args], capture_output=True, text=True, timeout=600)


def validate(path: str) -> dict:
    """Khronos' glTF Validator's report on ``path``."""
    done = _node("validate.mjs", path)
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def _matrices(values: dict[str, list[float]]) -> dict[str, np.ndarray]:
    # Both readers give 16 values column by column.
    return {name: np.array(flat, dtype=np.float64).reshape(4, 4).T for name, flat in values.items()}


@dataclass
class Played:
    """What a reader played: the joints, their rest and each clip's frames (joint -> world matrix)."""

    joints: list[str]
    rest: dict[str, np.ndarray]
    clips: dict[str, list[dict[str, np.ndarray]]]


def three_play(path: str, fps: float) -> Played:
    """three.js's GLTFLoader and AnimationMixer on ``path``, sampled every 1/fps s."""
    done = _node("play.mjs", path, repr(fps))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    return Played(out["joints"], _matrices(out["rest"]),
                  {name: [_matrices(frame) for frame in clip["frames"]] for name, clip in out["clips"].items()})


def three_skins(path: str, fps: float) -> tuple[dict[str, np.ndarray], dict[str, list[dict[str, np.ndarray]]]]:
    """three.js's skinning of each skinned mesh of ``path``: its vertices in world space at rest, and on
    each frame of each clip (sampled every 1/fps s), each mesh's as an (N, 3) array."""
    done = _node("play.mjs", path, repr(fps), "--skin")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)

    def points(frame: dict) -> dict[str, np.ndarray]:
        return {name: np.array(flat, dtype=np.float64).reshape(-1, 3) for name, flat in frame["#skins"].items()}

    return points(out["rest"]), {name: [points(frame) for frame in clip["frames"]]
                                 for name, clip in out["clips"].items()}


def blender_skins(obj: bpy.types.Object, meshes: list[str], action: bpy.types.Action,
                  frames: list[int]) -> list[dict[str, np.ndarray]]:
    """The world positions of every vertex of ``meshes`` as Blender deforms them on each frame, ``action``
    playing alone on ``obj`` from its rest pose (as ``blender_world``)."""
    out = []
    for depsgraph in _played_alone(obj, action, frames):
        found = {}
        for name in meshes:
            evaluated = bpy.data.objects[name].evaluated_get(depsgraph)
            flat = np.empty(3 * len(evaluated.data.vertices))
            evaluated.data.vertices.foreach_get("co", flat)
            world = np.array(evaluated.matrix_world)
            found[name] = flat.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3]
        out.append(found)
    return out


def skin_gap(played: dict[str, np.ndarray], expected: dict[str, np.ndarray], axes: np.ndarray) -> float:
    """The farthest any vertex of either side is from the nearest of the other (a reader splits and
    reorders vertices): each mesh's points compared as sets, Blender's turned by ``axes``."""
    worst = 0.0
    for name, points in expected.items():
        ours, theirs = points @ axes.T, played[name]
        gaps = np.linalg.norm(ours[:, None, :] - theirs[None, :, :], axis=-1)
        worst = max(worst, float(gaps.min(axis=1).max()), float(gaps.min(axis=0).max()))
    return worst


# assimp keeps an FBX file's unit: Blender writes metres as centimetres.
ASSIMP_UNIT = 100.0


def _quaternion_matrix(w: float, x: float, y: float, z: float) -> np.ndarray:
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _key(keys: list, tick: float) -> list[float]:
    """The value of the key nearest ``tick`` (the file is sampled on every frame)."""
    return min(keys, key=lambda key: abs(key[0] - tick))[1]


def _assimp_worlds(nodes: list[tuple[str, int, np.ndarray]], channels: dict[str, dict], tick: float | None
                   ) -> dict[str, np.ndarray]:
    worlds: list[np.ndarray] = []
    first: dict[str, int] = {}  # a name's node is the first found depth first, as assimp's FindNode finds it
    for index, (name, parent, rest) in enumerate(nodes):
        local = rest
        first.setdefault(name, index)
        channel = channels.get(name) if first[name] == index else None
        if channel is not None and tick is not None:
            local = np.eye(4)
            local[:3, :3] = _quaternion_matrix(*_key(channel["rotationkeys"], tick)) @ np.diag(
                _key(channel["scalingkeys"], tick))
            local[:3, 3] = _key(channel["positionkeys"], tick)
        worlds.append(local if parent < 0 else worlds[parent] @ local)
    return {name: worlds[index] for name, index in first.items()}


def assimp_play(path: str, fps: float) -> Played:
    """assimp's reading of the FBX at ``path`` (its node tree and animations), every take played on
    every frame: world matrices composed here from assimp's nodes and keys (in the FBX's Y up)."""
    done = _node("fbx_read.mjs", path)
    assert done.returncode == 0, done.stderr
    scene = json.loads(done.stdout)
    nodes: list[tuple[str, int, np.ndarray]] = []  # name, parent's index, local rest; parents first

    def add(node: dict, parent: int) -> None:
        nodes.append((node["name"], parent, np.array(node["transformation"], dtype=np.float64).reshape(4, 4)))
        index = len(nodes) - 1
        for child in node.get("children", []):
            add(child, index)

    add(scene["rootnode"], -1)
    clips = {}
    for animation in scene.get("animations", []):
        channels = {channel["name"]: channel for channel in animation["channels"]}
        per_frame = animation["tickspersecond"] / fps
        count = round(animation["duration"] / per_frame) + 1
        clips[animation["name"]] = [_assimp_worlds(nodes, channels, frame * per_frame) for frame in range(count)]
    return Played([name for name, _, _ in nodes], _assimp_worlds(nodes, {}, None), clips)


def fbx_play(path: str) -> Played:
    """Blender's FBX importer in a fresh process: each take played on every frame."""
    done = subprocess.run([sys.executable, str(FBX_READER), path], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return Played(out["joints"], _matrices(out["rest"]),
                  {name: [_matrices(frame) for frame in frames] for name, frames in out["clips"].items()})


def _assign(data: bpy.types.AnimData, action: bpy.types.Action) -> None:
    """``action`` as the active action, through its slot: Blender 4.4 and 4.5 assign none of another name
    (a take an importer made for an object of another name)."""
    data.action = action
    if getattr(data, "action_slot", True) is None and action.slots:
        data.action_slot = action.slots[0]


def blender_world(obj: bpy.types.Object, action: bpy.types.Action, frames: list[int],
                  names: list[str]) -> list[dict[str, np.ndarray]]:
    """The world matrices of ``names`` on each frame, ``action`` playing alone from the rest pose (the
    NLA off), read independently of the export: the active action swapped, the scene evaluated per
    frame; the pose and action put back afterwards."""
    out = []
    for depsgraph in _played_alone(obj, action, frames):
        evaluated = obj.evaluated_get(depsgraph)
        world = np.array(evaluated.matrix_world)
        out.append({name: world @ np.array(evaluated.pose.bones[name].matrix) for name in names})
    return out


def _played_alone(obj: bpy.types.Object, action: bpy.types.Action, frames: list[int]) -> Iterator[bpy.types.Depsgraph]:
    """The scene evaluated on each of ``frames`` with ``action`` playing alone on ``obj`` from its rest pose (the
    NLA off); the pose, action, frame and the bones' switches (custom properties) put back afterwards, so
    the next clip starts from the switches as they were, not as this one left them."""
    pose = [(bone, bone.matrix_basis.copy()) for bone in obj.pose.bones]
    switches = [(bone, key, bone[key]) for bone in obj.pose.bones for key in bone.keys()
                if isinstance(bone[key], (int, float))]
    for bone, _ in pose:
        bone.matrix_basis = Matrix.Identity(4)
    data = obj.animation_data
    saved = data.action, data.use_nla
    slot = getattr(data, "action_slot", None)
    data.use_nla = False
    _assign(data, action)
    scene = bpy.context.scene
    current = scene.frame_current
    try:
        for frame in frames:
            scene.frame_set(frame)
            yield bpy.context.evaluated_depsgraph_get()
    finally:
        data.action, data.use_nla = saved
        if slot is not None:
            data.action_slot = slot
        for bone, basis in pose:
            bone.matrix_basis = basis
        for bone, key, value in switches:
            bone[key] = value
        scene.frame_set(current)


def blender_rest(obj: bpy.types.Object, names: list[str]) -> dict[str, np.ndarray]:
    world = np.array(obj.matrix_world)
    return {name: world @ np.array(obj.data.bones[name].matrix_local) for name in names}


def height(obj: bpy.types.Object) -> float:
    """The character's height: the rest skeleton's extent along the world's up, heads to tails."""
    world = obj.matrix_world
    heights = [(world @ point).z for bone in obj.data.bones for point in (bone.head_local, bone.tail_local)]
    return max(heights) - min(heights)


def _rotation(matrix: np.ndarray) -> np.ndarray:
    """The rotation nearest the matrix's 3x3 part (its scale, and any shear, taken out)."""
    u, _, vt = np.linalg.svd(matrix[:3, :3])
    return u @ vt


def _degrees(a: np.ndarray, b: np.ndarray) -> float:
    cosine = (np.trace(a.T @ b) - 1.0) / 2.0
    sine = np.linalg.norm([(a.T @ b)[2, 1] - (a.T @ b)[1, 2], (a.T @ b)[0, 2] - (a.T @ b)[2, 0],
                           (a.T @ b)[1, 0] - (a.T @ b)[0, 1]]) / 2.0
    return float(np.degrees(np.arctan2(sine, cosine)))


def compare(played_frames: list[dict[str, np.ndarray]], played_rest: dict[str, np.ndarray],
            expected_frames: list[dict[str, np.ndarray]], expected_rest: dict[str, np.ndarray],
            size: float, axes: np.ndarray, unit: float = 1.0) -> tuple[float, float]:
    """The largest position gap (relative to ``size``) and turn gap (degrees) of every joint on
    every frame. ``axes`` turns Blender's world into the reader's, whose lengths are ``unit``
    times Blender's. Rotations are compared as each joint's turn from its rest in world space,
    which no exporter's choice of bone axes changes."""
    assert len(played_frames) == len(expected_frames), (len(played_frames), len(expected_frames))
    worst_position = worst_degrees = 0.0
    for played, expected in zip(played_frames, expected_frames):
        for name, matrix in expected.items():
            got = played[name]
            gap = np.linalg.norm(got[:3, 3] / unit - axes @ matrix[:3, 3]) / size
            worst_position = max(worst_position, float(gap))
            if abs(np.linalg.det(matrix[:3, :3])) < 1e-18:
                continue  # a bone scaled to nothing shows no turn
            turn_expected = axes @ _rotation(matrix) @ _rotation(expected_rest[name]).T @ axes.T
            turn_played = _rotation(got) @ _rotation(played_rest[name]).T
            worst_degrees = max(worst_degrees, _degrees(turn_expected, turn_played))
    return worst_position, worst_degrees
