"""The window a call works in: the scene and view layer it shows, switched for a block and given back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import bpy


def _window() -> bpy.types.Window | None:
    """The context's window, or the first where the context has none (a script's, a timer's)."""
    return bpy.context.window or next(iter(bpy.context.window_manager.windows), None)


@contextmanager
def in_a_window() -> Iterator[None]:
    """The block in a context whose window shows the context's scene and view layer: a caller's context
    with no window (a script run by a timer or an application handler, an override of ``window=None``) or
    with a scene or view layer of its own (a script's ``temp_override(scene=...)``) has the window show them
    for the block, as a user would switch to them (``shown``), and then what it showed. Blender's mode
    switches, operators and exporters read the active object and the scene through the window, and an export
    under an override of the scene alone crashed Blender."""
    context = bpy.context
    scene, view_layer = getattr(context, "scene", None), getattr(context, "view_layer", None)
    window = context.window
    if window is not None and window.scene == scene and window.view_layer == view_layer:
        yield
        return
    window = _window()
    if window is None:  # Blender always has one, headless too
        yield
    elif scene is None or view_layer is None:  # the window's own, then
        with context.temp_override(window=window):
            yield
    else:
        with shown(scene, view_layer):
            yield


def remove_scene(scene: bpy.types.Scene) -> None:
    """Remove ``scene``, which no window shows (``shown`` gave the window back): Blender asks the context's
    window whether it shows the scene, and with none in the context it crashes."""
    window = _window()
    if window is None:
        bpy.data.scenes.remove(scene)
        return
    with bpy.context.temp_override(window=window):
        bpy.data.scenes.remove(scene)


@contextmanager
def shown(scene: bpy.types.Scene, view_layer: bpy.types.ViewLayer) -> Iterator[None]:
    """The window shows ``scene`` and ``view_layer`` for the block, as a user would switch to them (the block's
    context with it), then what it showed before. Under a context override of the scene alone, Blender's glTF
    exporter switches the window to the override's scene itself and leaves it there, and removing that scene
    then puts the window on the scene next to it by name, on its first view layer, or on none where the context
    has no window (freed, a crash at the next switch): the user's window ends where they left it only so."""
    window = _window()
    if window is None:  # Blender always has one, headless too
        with bpy.context.temp_override(scene=scene, view_layer=view_layer):
            yield
        return
    opened, opened_layer = window.scene, window.view_layer
    # Switching the window's scene sets the context's too, over a caller's override of it: under a block of its
    # own, which gives the caller's context back as it was.
    with bpy.context.temp_override(window=window):
        window.scene = scene
        window.view_layer = view_layer
        try:  # the scene and view layer too: a caller's override of them would outlast the window's
            with bpy.context.temp_override(window=window, scene=scene, view_layer=view_layer):
                yield
        finally:
            window.scene = opened
            window.view_layer = opened_layer
