"""The one error a user can cause: "this rig can't be rigged like this"."""

from __future__ import annotations


class RigError(Exception):
    """A problem with the user's data, reported to them rather than raised as a bug.

    Carries the bone (or file) at fault and what the user can do about it, so the
    message that reaches the status bar, the batch report or a script is always the
    same three parts: where, what is wrong, what to do.
    """

    def __init__(self, problem: str, *, bone: str = "", hint: str = "") -> None:
        self.problem = problem
        self.bone = bone
        self.hint = hint
        super().__init__(self.message)

    @property
    def message(self) -> str:
        where = f"'{self.bone}': " if self.bone else ""
        what_to_do = f" {self.hint}" if self.hint else ""
        return f"{where}{self.problem}.{what_to_do}"


def a_kind(kind: str) -> str:
    """A kind of thing (Blender's object type, say) with its article: "an armature", "a mesh"."""
    kind = kind.lower()
    return f"{'an' if kind[:1] in tuple('aeiou') else 'a'} {kind}"
