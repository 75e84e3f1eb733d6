"""The processes a test run started that are still running. Every process the tests start
carries ``RBD_TEST_OWNER=<the test process's id>`` in its environment, inherited from the test
process (test/conftest.py sets it), and so do the processes those start (the demo's nodes, a
fleet's workers): found in /proc by that mark, however they were started."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

MARK = "RBD_TEST_OWNER"
#: what multiprocessing starts once for the process that uses it (dask does) and ends with it
_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def owned(owner: str) -> dict[int, str]:
    """pid -> command line of each running process (not a zombie) but this one whose
    environment carries ``MARK=owner``; multiprocessing's helpers of this process aside."""
    mark = f"{MARK}={owner}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if mark not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            status = (entry / "status").read_text()
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:  # ended meanwhile, or not ours to read
            continue
        command = line.decode(errors="replace").strip()
        if "\nState:\tZ" in status or (f"\nPPid:\t{os.getpid()}\n" in status
                                          and any(h in command for h in _HELPERS)):
            continue
        found[int(entry.name)] = command
    return found


def end(owner: str, among: set[int], grace: float) -> dict[int, str]:
    """Those of ``among`` still running after ``grace`` s (what is ending by itself gets that
    long), killed; their command lines."""
    deadline = time.monotonic() + grace
    while (left := {p: c for p, c in owned(owner).items() if p in among}) and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        with contextlib.suppress(OSError):  # ended meanwhile
            os.kill(pid, signal.SIGKILL)
    return left
