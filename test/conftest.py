"""Shared test set-up: ``pinref`` (the Pinocchio reference) importable from every test."""

from __future__ import annotations

import os
import sys
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
