#!/usr/bin/env python3
"""Build the IK Rigger extension zip with Blender's own builder, then validate it.

    python scripts/build_extension.py [--output-dir DIR] [--blender-ext PATH]

Blender's builder (``blender_ext.py``, shipped with Blender and with the ``bpy``
wheel) packs the folder that holds ``blender_manifest.toml`` and needs the add-on's
``__init__.py`` in that same folder. This repository keeps the manifest at its root
and the add-on in ``ik_rigger/``, so the manifest and the package contents are staged
together in a temporary folder and the zip is built from there. The manifest's
``[build]`` exclusions still apply. The zip lands in ``dist/`` by default; its path
is the only thing printed on stdout, the builder's messages go to stderr.

The builder is looked up, in order: ``--blender-ext``, the ``bpy`` module visible to
this interpreter (found without importing it), the project's ``.venvs/*``. It runs
under this interpreter, which must be Python 3.11 or newer.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ik_rigger"
MANIFEST = ROOT / "blender_manifest.toml"
DEFAULT_OUTPUT_DIR = ROOT / "dist"

# Where the builder sits inside a Blender version folder (``bpy/5.2/``, ``4.2/``...).
BUILDER_IN_VERSION_DIR = Path("scripts/addons_core/bl_pkg/cli/blender_ext.py")
# Blender's list of valid tags, relative to the ``scripts/`` folder that holds the builder.
TAGS_IN_SCRIPTS_DIR = Path("modules/_bpy_internal/extensions/tags.py")


class BuildError(Exception):
    """A build step failed; the message says which and why."""


def version_key(version_dir: Path) -> tuple[int, ...]:
    """Sort key for Blender version folders such as ``4.2`` or ``5.2``."""
    return tuple(int(part) for part in version_dir.name.split(".") if part.isdigit())


def newest_builder(bpy_dirs: Iterable[Path]) -> Path | None:
    """The builder of the newest Blender version found under any of ``bpy_dirs``."""
    candidates = [
        version_dir
        for bpy_dir in bpy_dirs
        for version_dir in bpy_dir.glob("[0-9]*.[0-9]*")
        if (version_dir / BUILDER_IN_VERSION_DIR).is_file()
    ]
    if not candidates:
        return None
    return max(candidates, key=version_key) / BUILDER_IN_VERSION_DIR


def find_builder(explicit: Path | None) -> Path:
    """Locate ``blender_ext.py``: explicit path, this interpreter's ``bpy``, then the project venvs."""
    if explicit is not None:
        if not explicit.is_file():
            raise BuildError(f"--blender-ext: no such file: {explicit}")
        return explicit
    # find_spec locates the package without running it, so no Blender starts here.
    spec = importlib.util.find_spec("bpy")
    if spec is not None and spec.submodule_search_locations:
        builder = newest_builder(Path(location) for location in spec.submodule_search_locations)
        if builder is not None:
            return builder
    venv_bpy_dirs = [
        *ROOT.glob(".venvs/*/lib/python3.*/site-packages/bpy"),
        *ROOT.glob(".venvs/*/Lib/site-packages/bpy"),  # Windows venv layout.
    ]
    builder = newest_builder(venv_bpy_dirs)
    if builder is None:
        raise BuildError(
            "Blender's extension builder (blender_ext.py) was not found: install the project "
            "environments with scripts/setup.sh, run this script with a Python that has the "
            "bpy module, or pass --blender-ext PATH"
        )
    return builder


def read_manifest() -> dict[str, object]:
    """The parsed manifest, or a BuildError saying why it could not be read."""
    try:
        with MANIFEST.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise BuildError(f"cannot read {MANIFEST.name}: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise BuildError(f"{MANIFEST.name} is not valid TOML: {error}") from error


def stage(destination: Path) -> None:
    """Put the manifest beside the package contents, the layout the builder and installer expect."""
    if not (PACKAGE / "__init__.py").is_file():
        raise BuildError(f"add-on package not found: {PACKAGE.name}/__init__.py")
    shutil.copytree(PACKAGE, destination, dirs_exist_ok=True)
    shutil.copy2(MANIFEST, destination / MANIFEST.name)


def run_builder(builder: Path, args: Sequence[str], step: str) -> None:
    """Run one builder sub-command, echoing its output to stderr; raise on failure."""
    result = subprocess.run(
        [sys.executable, str(builder), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    sys.stderr.write(result.stdout)
    if result.returncode != 0:
        raise BuildError(f"{step} failed (exit code {result.returncode}), see the builder's messages above")


def build(output_dir: Path, builder: Path) -> Path:
    """Stage, build and validate the extension; return the zip's path."""
    manifest = read_manifest()
    zip_path = output_dir.resolve() / f"{manifest.get('id')}-{manifest.get('version')}.zip"
    output_dir.mkdir(parents=True, exist_ok=True)

    tags_args: list[str] = []
    # The builder sits in scripts/addons_core/bl_pkg/cli/, three levels below scripts/.
    tags = builder.resolve().parents[3] / TAGS_IN_SCRIPTS_DIR
    if tags.is_file():
        # Check tags against Blender's list, as `blender --command extension build` does.
        tags_args = ["--valid-tags", str(tags)]
    else:
        print(f"build_extension: warning: {tags} not found, tags are not checked", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="ik_rigger_stage_") as staging:
        stage(Path(staging))
        # Errors name files in the staging folder; say what those copies stand for.
        run_builder(builder, ["build", "--source-dir", staging, "--output-filepath", str(zip_path), *tags_args],
                    f"build (files under {staging} are copies of {MANIFEST.name} and {PACKAGE.name}/)")
    # Validate the archive itself: the check Blender runs before installing a zip.
    run_builder(builder, ["validate", str(zip_path), *tags_args], "validation of the built zip")
    return zip_path


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT_DIR,
                        help="where to write the zip (default: dist/ in the repository)")
    parser.add_argument("--blender-ext", type=Path, default=None,
                        help="path to Blender's blender_ext.py builder (default: found automatically)")
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    try:
        builder = find_builder(args.blender_ext)
        zip_path = build(args.output_dir, builder)
    except BuildError as error:
        print(f"build_extension: error: {error}", file=sys.stderr)
        return 1
    print(zip_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
