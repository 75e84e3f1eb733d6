"""ruff and mypy over the package, as part of the test suite."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: ruff's and mypy's caches, outside the tree (colcon test must leave the source folder as it
#: was), one per venv
_KEY = hashlib.sha1(bytes(ROOT) + sys.prefix.encode()).hexdigest()[:8]
CACHE = Path(tempfile.gettempdir()) / f"rbd_ros-lint-{_KEY}"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_ruff() -> None:
    r = run("ruff", "check", "--cache-dir", str(CACHE / "ruff"), "rbd_ros", "test", "testkit",
            "bench", "scripts", "launch", "doc")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy() -> None:
    """Strict (mypy.ini), against Jazzy's rclpy and the pinned numpy's stubs (where a bare
    ndarray has default type arguments; numpy 1.x's have none)."""
    pytest.importorskip("rclpy", reason="mypy checks the nodes against rclpy's types")
    if int(version("numpy").split(".")[0]) < 2:
        pytest.skip(f"numpy {version('numpy')}: mypy checks against the pinned numpy's stubs")
    r = run("mypy", "--config-file", "mypy.ini", "--cache-dir", str(CACHE / "mypy"), "rbd_ros",
            "bench", "test", "testkit", "scripts", "doc/_ext")
    assert r.returncode == 0, r.stdout + r.stderr


def test_core_imports_no_ros() -> None:
    code = ("import sys, rbd_ros.dynamics; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('rclpy', 'std_msgs', 'sensor_msgs', 'geometry_msgs')]; print(bad); "
            "sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_no_function_is_over_60_lines() -> None:
    """A function of rbd_ros/ reads on one screen: the kernels too, whose parts are inlined
    helpers (inline="always"; splitting them cost nothing measurable in bench/run.py's per-call
    table)."""
    import ast

    long = []
    for path in sorted((ROOT / "rbd_ros").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > 60:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {lines}")
    assert not long, "functions over 60 lines:\n" + "\n".join(long)
