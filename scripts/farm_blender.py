"""Dask workers in Blender binaries (scripts/farm.sh worker ADDRESS --blender BLENDER).

Starts N Blenders, each one Dask worker process (scripts/farm_worker.py run by Blender, see
``serve`` there), and starts a Blender again when one ends, as Dask's nanny does for the
workers it starts in the project's ``bpy``. Stopping this process by its id (SIGTERM, or
Ctrl-C) stops its Blenders, and waits for them; killed (SIGKILL), the system kills them with
it (their parent-death signal): no Blender goes on with a file behind the retry's back.
Standard library only: it runs beside any Blender.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

from farm_worker import ONE_PER_CORE, SITE

WORKER = Path(__file__).resolve().with_name("farm_worker.py")
# A Blender that ends this soon after it started could not start; so many in a row end the workers.
QUICK_SECONDS, QUICK_LIMIT = 30.0, 3
# How long the Blenders have to end on SIGTERM before they are killed.
STOP_SECONDS = 10.0
_PR_SET_PDEATHSIG = 1


def blender_command(blender: str, address: str) -> list[str]:
    """The command line that makes ``blender`` one Dask worker of the scheduler at ``address``."""
    return [blender, "--background", "--factory-startup", "--python-exit-code", "1", "--python", str(WORKER),
            "--", address]


class Slot:
    """One of the N workers: its Blender of the moment, the core it keeps to, its quick ends in a row."""

    def __init__(self, command: list[str], core: int | None) -> None:
        self.command = command
        self.core = core
        self.quick = 0
        self.process, self.started = self._start()

    def _start(self) -> tuple[subprocess.Popen, float]:
        core = self.core

        def prepare() -> None:  # in the child, before Blender starts (sizes its thread pools)
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if core is not None:
                os.sched_setaffinity(0, {core})

        # A session of its own, as the nanny's workers take one (scripts/farm_worker.py, own_session).
        process = subprocess.Popen(self.command, preexec_fn=prepare, start_new_session=True)
        return process, time.monotonic()

    def restart(self) -> bool:
        """Start a Blender in place of the one that ended; False when they keep ending at once."""
        code = self.process.returncode
        self.quick = self.quick + 1 if time.monotonic() - self.started < QUICK_SECONDS else 0
        if self.quick >= QUICK_LIMIT:
            print(f"farm: the worker Blender ended {self.quick} times within {QUICK_SECONDS:g} s of its start "
                  f"(last: exit code {code}); see its output above", file=sys.stderr, flush=True)
            return False
        print(f"farm: worker Blender {self.process.pid} ended (exit code {code}); starting another",
              file=sys.stderr, flush=True)
        self.process, self.started = self._start()
        return True


def stop(slots: list[Slot]) -> None:
    """End every Blender: SIGTERM, then SIGKILL for one still there after STOP_SECONDS."""
    for slot in slots:
        if slot.process.poll() is None:
            slot.process.terminate()
    deadline = time.monotonic() + STOP_SECONDS
    for slot in slots:
        try:
            slot.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            slot.process.kill()
            slot.process.wait()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="farm_blender.py")
    parser.add_argument("address")
    parser.add_argument("--blender", required=True)
    parser.add_argument("--site", required=True, help="the folder with Dask for the Blender's Python")
    parser.add_argument("--nworkers", type=int, required=True)
    args = parser.parse_args(argv)
    stopped: list[int] = []

    def stopping(signum: int, frame: FrameType | None) -> None:
        stopped.append(signum)

    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, stopping)
    os.environ[SITE] = args.site
    cores = sorted(os.sched_getaffinity(0)) if os.environ.get(ONE_PER_CORE) == "1" else []
    command = blender_command(args.blender, args.address)
    slots: list[Slot] = []
    try:
        for index in range(args.nworkers):
            slots.append(Slot(command, cores[index % len(cores)] if cores else None))
        while not stopped:
            for slot in slots:
                if slot.process.poll() is not None and not stopped and not slot.restart():
                    return 1
            time.sleep(0.5)
        return 0
    finally:
        stop(slots)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
