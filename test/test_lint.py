"""ruff and mypy over the package, as part of the test suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_ruff() -> None:
    r = run("ruff", "check", "rbd_ros", "test", "bench", "scripts", "launch")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy() -> None:
    r = run("mypy", "rbd_ros", "bench", "test")
    assert r.returncode == 0, r.stdout + r.stderr


def test_core_imports_no_ros() -> None:
    code = ("import sys, rbd_ros.dynamics; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('rclpy', 'std_msgs', 'sensor_msgs', 'geometry_msgs')]; print(bad); "
            "sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
