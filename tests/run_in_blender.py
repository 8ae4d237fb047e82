"""Run the test suite inside a real Blender binary.

    blender --background --factory-startup --python-exit-code 1 \\
        --python tests/run_in_blender.py -- [pytest arguments]

Blender hands everything after ``--`` to this script, which passes it to pytest;
with nothing after ``--`` (or no ``--`` at all) the whole ``tests/`` folder runs.
Blender exits with pytest's exit code.

pytest must be installed into Blender's bundled Python once, for example:

    <blender python> -m ensurepip --upgrade
    <blender python> -m pip install pytest

where ``<blender python>`` is the interpreter in Blender's install folder, under
``<version>/python/bin/``; this script prints its exact path when pytest is missing.
"""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def pytest_args(argv: list[str]) -> list[str]:
    """The arguments after ``--``; none without it, since the rest is Blender's own command line."""
    if "--" not in argv:
        return []
    return argv[argv.index("--") + 1:]


def main() -> int:
    args = pytest_args(sys.argv)
    # Make the add-on importable as the tests expect, whatever the working directory.
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        import pytest
    except ImportError:
        print(
            "pytest is not installed in Blender's Python. Install it with:\n"
            f'    "{sys.executable}" -m ensurepip --upgrade\n'
            f'    "{sys.executable}" -m pip install pytest\n'
            "then run this script again.",
            file=sys.stderr,
        )
        return 1
    return int(pytest.main(args or [str(TESTS)]))


if __name__ == "__main__":
    sys.exit(main())
