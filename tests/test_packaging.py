"""Packaging: the zip Blender's builder makes holds only the add-on, installs, and works.

The zip is built with ``scripts/build_extension.py``, using the builder of the Blender
running the tests. Installing happens in a separate process: ``bpy`` is one Blender
per process, the install must go through Blender's own extension operator in a
Blender that has never seen the repository's copy of the add-on, and that process
gets throwaway user folders so the real user's preferences and extensions are never
read or written. Works under the ``bpy`` module and inside a Blender binary.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import bpy
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ik_rigger"
BUILD_SCRIPT = ROOT / "scripts" / "build_extension.py"
BUILDER = Path(bpy.utils.system_resource("SCRIPTS")) / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
MODULE = "bl_ext.user_default.ik_rigger"
SUCCESS_MARKER = "IK_RIGGER_PACKAGE_OK"

# Top-level names that belong to the repository, never to the extension.
REPO_ONLY = {"tests", "scripts", "benchmarks", "requirements", "docs", "dist", "build", "pyproject.toml", "README.md"}

# Runs in the child process: install the zip into the user repository, enable it,
# then use an operator of the installed copy on a new armature.
INSTALL_SCRIPT = f"""
import os
import sys
from pathlib import Path

import bpy

MODULE = {MODULE!r}


def leave(code):
    # The bpy 4.2 module crashes in its C exit handlers (freeing Python classes after
    # Python has finalized) once a class with methods is registered: skip them, so
    # the exit code reports the checks.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def check(condition, message):
    if not condition:
        print("packaging check failed: " + message, file=sys.stderr)
        leave(1)


zip_path = sys.argv[-1]
repos = [repo.module for repo in bpy.context.preferences.extensions.repos]
check("user_default" in repos, f"no user_default extension repository, found {{repos}}")

result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
check(result == {{"FINISHED"}}, f"install returned {{result}}")
check(MODULE in bpy.context.preferences.addons, f"{{MODULE}} is not enabled")

# The add-on must come from the installed files, not from a copy on sys.path.
extensions_dir = Path(bpy.utils.user_resource("EXTENSIONS")).resolve()
module_file = Path(sys.modules[MODULE].__file__).resolve()
check(module_file.is_relative_to(extensions_dir), f"{{MODULE}} loaded from {{module_file}}")
operator = bpy.types.Operator.bl_rna_get_subclass_py("IK_RIGGER_OT_add_chain")
check(operator is not None, "ik_rigger.add_chain is not registered")
check(operator.__module__.startswith(MODULE + "."), f"ik_rigger.add_chain comes from {{operator.__module__}}")

armature = bpy.data.armatures.new("Rig")
obj = bpy.data.objects.new("Rig", armature)
bpy.context.scene.collection.objects.link(obj)
bpy.context.view_layer.objects.active = obj
obj.select_set(True)
bpy.ops.object.mode_set(mode="EDIT")
result = bpy.ops.ik_rigger.add_chain(base_name="leg")
check(result == {{"FINISHED"}}, f"add_chain returned {{result}}")
names = [bone.name for bone in armature.edit_bones]
check(any(name.startswith("leg") for name in names), f"no leg bones were added, bones: {{names}}")

print({SUCCESS_MARKER!r})
leave(0)
"""


def isolated_env(home: Path) -> dict[str, str]:
    """This process's environment with every Blender user folder moved under ``home``."""
    env = dict(os.environ)
    env.update({
        "HOME": str(home),
        "USERPROFILE": str(home),  # Windows' HOME.
        # When set, these and not HOME place Blender's config and thumbnail cache.
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "BLENDER_USER_RESOURCES": str(home / "blender"),
        "BLENDER_USER_CONFIG": str(home / "blender" / "config"),
        "BLENDER_USER_SCRIPTS": str(home / "blender" / "scripts"),
        "BLENDER_USER_EXTENSIONS": str(home / "blender" / "extensions"),
    })
    return env


def blender_command(script: Path, *args: str) -> list[str]:
    """Run ``script`` with ``args`` in a new Blender of the version running the tests."""
    if bpy.app.binary_path:
        # Inside a Blender binary: its bundled Python has no bpy module, start Blender itself.
        return [bpy.app.binary_path, "--background", "--factory-startup", "--python-exit-code", "1",
                "--python", str(script), "--", *args]
    return [sys.executable, str(script), *args]


@pytest.fixture(scope="module")
def built_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the extension once for this module, into a temporary folder rather than dist/."""
    output_dir = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--output-dir", str(output_dir), "--blender-ext", str(BUILDER)],
        capture_output=True, text=True, check=False, timeout=300,
    )
    assert result.returncode == 0, f"build failed:\n{result.stdout}\n{result.stderr}"
    zip_path = Path(result.stdout.strip().splitlines()[-1])
    assert zip_path.is_file() and zip_path.parent == output_dir.resolve(), result.stdout
    return zip_path


def test_zip_holds_only_the_add_on(built_zip: Path) -> None:
    with zipfile.ZipFile(built_zip) as archive:
        names = set(archive.namelist())
    # Blender installs the zip's root as the package: manifest beside __init__.py.
    assert {"blender_manifest.toml", "__init__.py"} <= names
    for name in names:
        parts = name.split("/")
        assert parts[0] not in REPO_ONLY, name
        assert not any(part.startswith(".") or part == "__pycache__" for part in parts), name
        assert not name.endswith(".pyc"), name
    sources = {
        path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py") if "__pycache__" not in path.parts
    }
    assert sources <= names, f"sources missing from the zip: {sorted(sources - names)}"


def test_zip_installs_and_runs_in_a_fresh_blender(built_zip: Path, tmp_path: Path) -> None:
    script = tmp_path / "install_extension.py"
    script.write_text(INSTALL_SCRIPT, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    # Run from the temporary folder so the repository's ik_rigger cannot be imported by accident.
    result = subprocess.run(
        blender_command(script, str(built_zip)),
        cwd=tmp_path, env=isolated_env(home), capture_output=True, text=True, check=False, timeout=300,
    )
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, output
    assert SUCCESS_MARKER in result.stdout.splitlines(), output
    assert (home / "blender" / "extensions" / "user_default" / "ik_rigger" / "__init__.py").is_file(), output


def test_installed_extension_rigs_poses_exports_and_survives_off_and_on(built_zip: Path, tmp_path: Path) -> None:
    """An animator's session with the installed copy (tests/installed_workflow.py): Auto-Rig on a motion
    capture from Pose mode, a handle the shin follows, snaps both ways, an export; the extension turned
    off (the rig still follows its handle: it needs no add-on) and on again (the limbs read back), a Remove."""
    home = tmp_path / "home"
    home.mkdir()
    output = tmp_path / "out"
    output.mkdir()
    result = subprocess.run(
        blender_command(ROOT / "tests" / "installed_workflow.py", str(built_zip),
                        str(ROOT / "tests" / "data" / "mixamo_freebvh.bvh"), str(output)),
        cwd=tmp_path, env=isolated_env(home), capture_output=True, text=True, check=False, timeout=300,
    )
    output_text = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, output_text
    assert "IK_RIGGER_INSTALLED_WORKFLOW_OK" in result.stdout.splitlines(), output_text
