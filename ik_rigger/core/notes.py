"""What a build or a batch run has to tell the user, by kind, decided where it is said.

Three kinds reach the user: an error stops and says what to do (``RigError``), a warning
asks them to look at something, a note records what was done. Notes and warnings travel
together in the same lists (a limb's ``notes``, a removal's messages), so a warning is a
``str`` that carries its kind: every reader that only shows text keeps working, and the
operators' reports and the batch's lines tell the two apart with ``is_warning``.
"""

from __future__ import annotations

from collections.abc import Iterable


class WarningNote(str):
    """A note the user should act on; a plain ``str`` note only records what was done."""

    __slots__ = ()


def warning(text: str) -> WarningNote:
    """``text`` marked as a warning."""
    return WarningNote(text)


def is_warning(note: str) -> bool:
    return isinstance(note, WarningNote)


def split(notes: Iterable[str]) -> tuple[list[str], list[str]]:
    """``notes`` as (warnings, notes), each in its order."""
    listed = list(notes)
    return [note for note in listed if is_warning(note)], [note for note in listed if not is_warning(note)]
