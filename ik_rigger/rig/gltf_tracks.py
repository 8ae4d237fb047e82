"""The NLA tracks Blender 4.4's glTF exporter takes apart wrongly, taken apart as its other versions do.

The export writes each clip as an NLA track of its own, which the glTF exporter writes as one animation
(``export_animation_mode="NLA_TRACKS"``). The exporter of Blender 4.4 (io_scene_gltf2 4.4) gives the
animation of each track but the last the next track's strips, and never mutes the first track: with two
clips or more, every clip but the last plays another clip over the first one, for the whole scene's frames.
For the export, its ``__get_nla_tracks_obj`` is replaced by one that groups the tracks as 4.3's and 4.5's do
(a track that blends joins the one before, each group named after its first track).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

_EXPORTER = "io_scene_gltf2"
_TRACKS = f"{_EXPORTER}.blender.exp.animation.tracks"
_GROUPING = "__get_nla_tracks_obj"
_WRONG = (4, 4)  # the exporter versions whose grouping is wrong (its bl_info's first two numbers)


def _wrong_grouping() -> ModuleType | None:
    """The exporter's tracks module where it groups the tracks wrongly, else None."""
    exporter = sys.modules.get(_EXPORTER)
    if exporter is None or tuple(getattr(exporter, "bl_info", {}).get("version", ()))[:2] != _WRONG:
        return None
    tracks = importlib.import_module(_TRACKS)
    return tracks if hasattr(tracks, _GROUPING) else None


def _object_tracks(tracks: ModuleType, obj_uuid: str, export_settings: dict):
    """The object's NLA tracks with strips, grouped as the exporter of 4.3 and 4.5 groups them."""
    obj = export_settings["vtree"].nodes[obj_uuid].blender_object
    found = tracks.TracksData()
    data = obj.animation_data
    groups: list[list] = []
    for index, track in enumerate(data.nla_tracks if data is not None else ()):
        if len(track.strips) == 0:
            continue
        stored = tracks.NLATrack(index, track.strips[0].frame_start, track.strips[-1].frame_end, track.is_solo,
                                 track.mute)
        if groups and any(strip.blend_type != "REPLACE" for strip in track.strips):
            groups[-1].append(stored)
        else:
            groups.append([stored])
    for group in groups:
        found.add(tracks.TrackData(group, data.nla_tracks[group[0].idx].name, "OBJECT"))
    return found


@contextmanager
def tracks_grouped() -> Iterator[None]:
    """For the block, the glTF exporter groups an object's NLA tracks as its versions but 4.4 do."""
    tracks = _wrong_grouping()
    if tracks is None:
        yield
        return
    wrong = getattr(tracks, _GROUPING)
    setattr(tracks, _GROUPING, lambda obj_uuid, export_settings: _object_tracks(tracks, obj_uuid, export_settings))
    try:
        yield
    finally:
        setattr(tracks, _GROUPING, wrong)
