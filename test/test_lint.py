"""ruff and mypy over the package, as part of the test suite."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: ruff's and mypy's caches, outside the tree (colcon test must leave the source folder as it
#: was), one per venv: Jazzy's and Kilted's venvs check one tree with different mypy options
_KEY = hashlib.sha1(bytes(ROOT) + sys.prefix.encode()).hexdigest()[:8]
CACHE = Path(tempfile.gettempdir()) / f"rbd_ros-lint-{_KEY}"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)


def test_ruff() -> None:
    r = run("ruff", "check", "--cache-dir", str(CACHE / "ruff"), "rbd_ros", "test", "testkit",
            "bench", "scripts", "launch", "doc")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy(tmp_path: Path) -> None:
    """Strict, against this distribution's rclpy: Kilted's is typed throughout; Jazzy's only in
    part (untyped calls, classes that take no type arguments), so there rclpy is opaque and
    everything else is checked as strictly. Always against the pinned numpy's stubs (where a
    bare ndarray has default type arguments; numpy 1.x's have none): where the floors run,
    setup.sh keeps the pinned numpy aside for it."""
    config = tmp_path / "mypy.ini"
    text = (ROOT / "mypy.ini").read_text()
    env = None
    if int(version("numpy").split(".")[0]) < 2:
        pinned = Path(sys.prefix) / "pinned-numpy"
        if not pinned.is_dir():
            pytest.skip(f"numpy {version('numpy')}: the pinned numpy's stubs are not in {pinned}"
                        " (bash scripts/setup.sh --test --over ... puts them there)")
        env = {**os.environ, "MYPYPATH": str(pinned)}
        # the floors' numba leaves untyped the calls the pinned one's ignores are for
        text = text.replace("[mypy]\n", "[mypy]\nwarn_unused_ignores = False\n", 1)
        text += "\n[mypy-numpy.*]\nignore_errors = True\n"
    if int(version("ros-rclpy").split(".")[0]) < 9:  # Jazzy: rclpy 7
        text = text.replace("[mypy]\n", "[mypy]\ndisallow_subclassing_any = False\n", 1)
        text += "\n[mypy-rclpy.*]\nfollow_imports = skip\n"
    config.write_text(text)
    r = run("mypy", "--config-file", str(config), "--cache-dir", str(CACHE / "mypy"), "rbd_ros",
            "bench", "test", "testkit", "scripts", "doc/_ext", env=env)
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
