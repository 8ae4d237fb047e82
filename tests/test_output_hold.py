"""What Blender prints is held back and handed over hold by hold (``rig.output.blender_output``): a hold's
lines are its own, whatever the holds before it or around it printed, and the process's output is its
own again after each."""

from __future__ import annotations

import os

import pytest

from ik_rigger.rig.output import blender_output


def _held_lines(text: bytes) -> list[str]:
    with blender_output() as lines:
        os.write(1, text)
    return lines


def test_each_hold_hands_over_its_own_lines_alone():
    assert _held_lines(b"Info: a long first line that the next hold must not see again\nsecond\n") == [
        "Info: a long first line that the next hold must not see again", "second"]
    assert _held_lines(b"short\n") == ["short"]
    assert _held_lines(b"") == []


def test_a_hold_inside_another_keeps_its_lines_from_the_outer_one():
    with blender_output() as outer:
        os.write(1, b"before\n")
        inner = _held_lines(b"inner\n")
        os.write(1, b"after\n")
    assert inner == ["inner"]
    assert outer == ["before", "after"]


def test_a_failure_inside_a_hold_gives_the_output_back(capfd):
    with pytest.raises(RuntimeError), blender_output():
        os.write(1, b"held\n")
        raise RuntimeError("failed inside")
    os.write(1, b"shown\n")
    assert _held_lines(b"next\n") == ["next"]
    assert capfd.readouterr().out == "shown\n"
