"""The scene's time and the keys' time: Time Stretching (Output properties > Frame Range, the render
settings' ``frame_map_old`` and ``frame_map_new``) plays frame F from the keys at F * old / new.

Keys are written at the keys' own frames, so what they are made from (the poses a bake, a kept motion
or an export reads on each frame) is read there too: with the stretching off for the reading, given back
after (``keys_time``); an operator's range, the scene's frames, is baked at the keys' frames they play
(``keys_range``). A key of the frame the user sees (a snap's, a parent switch's) would have to go
between the keys' frames: it is refused, naming the setting (``check_unstretched``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import bpy

from ..core.errors import RigError


@contextmanager
def keys_time(scene: bpy.types.Scene) -> Iterator[None]:
    """For the block, each frame of ``scene`` plays its own keys (Time Stretching off); given back after.
    The caller shows the user's frame again after the block, which evaluates it stretched as before."""
    render = scene.render
    new = render.frame_map_new
    if render.frame_map_old == new:
        yield
        return
    render.frame_map_new = render.frame_map_old
    try:
        yield
    finally:
        render.frame_map_new = new


def keys_range(scene: bpy.types.Scene, first: int, last: int) -> tuple[int, int]:
    """The keys' frames that ``scene``'s frames ``first`` to ``last`` play (the same frames unless it stretches
    time): what an operator bakes when given the scene's or preview range."""
    render = scene.render
    old, new = render.frame_map_old, render.frame_map_new
    if old == new:
        return first, last
    return math.ceil(first * old / new - 1e-9), math.floor(last * old / new + 1e-9)


def check_unstretched(scene: bpy.types.Scene, frame: int) -> None:
    """Refuse to key the ``frame`` shown while ``scene`` stretches time: it plays the keys of another frame,
    where the key would have to go (between two frames, mostly)."""
    render = scene.render
    old, new = render.frame_map_old, render.frame_map_new
    if old == new:
        return
    raise RigError(f"the scene '{scene.name}' stretches time (Time Stretching: Old {old}, New {new}), so its frame "
                   f"{frame} plays the keys of frame {frame * old / new:g}, and no key written there would play on it",
                   hint="Set Time Stretching's New to its Old (Output properties > Frame Range) while keying, then "
                   "back: the keys stretch with the rest.")
