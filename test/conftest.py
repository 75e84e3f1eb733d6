"""Shared test set-up: ``pinref`` (the Pinocchio reference) importable from every test."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# as the rbd-ros command runs (rbd_ros/cli.py): BLAS on one thread, set before numpy loads it
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from rbd_ros.local_ros import TESTS, isolate

# Every ROS participant of the test run, here and in the processes it starts, stays on this
# machine and in a domain of its own (RBD_TEST_DOMAIN, or 10-79: see rbd_ros.local_ros)
isolate(*TESTS)


def _build_the_entry_in_place() -> None:
    """The C entry (rbd_ros/dynamics/_entry.c) built beside its source when the rbd_ros
    imported here is this source tree and has none, or an older one: ``colcon test`` runs
    pytest from the source folder, which then comes first on sys.path (and in the nodes'
    processes), while a plain ``colcon build`` built the extension in build/ and install/ only.
    A few seconds; the compiler and numpy's headers are the package's build dependencies."""
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.find_spec("rbd_ros")
    if spec is None or spec.origin is None or Path(spec.origin).parent != root / "rbd_ros":
        return  # an installed rbd_ros: its own extension
    source = root / "rbd_ros" / "dynamics" / "_entry.c"
    built = source.with_name("_entry" + sysconfig.get_config_var("EXT_SUFFIX"))
    if built.exists() and built.stat().st_mtime >= source.stat().st_mtime:
        return
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=root,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"building {source.name} in place failed:\n{done.stdout}{done.stderr}")


_build_the_entry_in_place()


@pytest.fixture(scope="module")
def ros() -> Iterator[None]:
    """rclpy for the test module's probe nodes (the nodes under test run in processes)."""
    import rclpy

    rclpy.init()
    yield
    rclpy.shutdown()


@pytest.fixture
def probe(ros: None) -> Iterator[Any]:
    from rosutil import Probe

    p = Probe()
    yield p
    p.close()
