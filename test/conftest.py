"""Shared test set-up: ``pinref`` (the Pinocchio reference) importable from every test."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def _test_what_colcon_installed() -> None:
    """``colcon test`` runs ``python -m pytest`` in the source folder, which puts that folder
    first on sys.path: its rbd_ros (no compiled extension, kernels cached beside it) would
    shadow the one colcon built and installed. When an installed rbd_ros is on the path too,
    the source folder is taken off it, here and in the processes the tests start (Python's
    PYTHONSAFEPATH: ``python -m`` does not prepend its working directory), so the tests run
    what was installed and write nothing into the source folder."""
    root = Path(__file__).resolve().parents[1]

    def is_root(entry: str) -> bool:
        return Path(entry or ".").resolve() == root

    if any(not is_root(p) and Path(p or ".", "rbd_ros", "__init__.py").is_file()
           for p in sys.path):
        sys.path[:] = [p for p in sys.path if not is_root(p)]
        os.environ["PYTHONSAFEPATH"] = "1"


_test_what_colcon_installed()
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testkit"))  # the helpers
# as the rbd-ros command runs (rbd_ros/app/cli.py): BLAS on one thread, set before numpy loads it
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from rbd_ros.runtime.local_ros import TESTS, isolate  # noqa: E402 (after the path is settled)

# Every ROS participant of the test run, here and in the processes it starts, stays on this
# machine and in a domain of its own (RBD_TEST_DOMAIN, or 10-79: see rbd_ros.runtime.local_ros); with
# pytest-xdist (-n), each worker (gw0, gw1, ...) in its own
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_DOMAIN = (isolate(*TESTS, run=os.getppid(), slot=int(_WORKER[2:])) if _WORKER
           else isolate(*TESTS))
# and what a test starts that picks a domain of its own (the demo, from 80-89 by process id)
# picks this one: the demo of one run never meets another run's, nor another worker's nodes
os.environ["RBD_TEST_DOMAIN"] = str(_DOMAIN)

from leftovers import MARK, end, owned  # noqa: E402

# every process the tests start, and what those start, carries this process's id: what is
# still running when the test (or the module, for a module's fixtures) that started it ends is
# killed, and that test fails (.ci/run also looks for any left when the suites are done)
_OWNER = os.environ[MARK] = str(os.getpid())
GRACE_S = 60.0  # s: what is ending by itself (a stopped node's interpreter) has this long


def _nothing_left(before: set[int], what: str) -> None:
    left = end(_OWNER, set(owned(_OWNER)) - before, GRACE_S)
    if left:
        pytest.fail(f"{what} left {len(left)} process(es) running (now killed): "
                    + "; ".join(left.values()), pytrace=False)


@pytest.fixture(autouse=True)
def _every_process_ends_with_its_test() -> Iterator[None]:
    before = set(owned(_OWNER))  # the module's fixtures' processes, started before
    yield
    _nothing_left(before, "the test")


@pytest.fixture(autouse=True, scope="module")
def _every_process_ends_with_its_module() -> Iterator[None]:
    yield
    _nothing_left(set(), "the module's fixtures")


def _build_the_entry_in_place() -> None:
    """The C entry (rbd_ros/dynamics/multibody/_entry.c) built beside its source when the rbd_ros
    imported here is this source tree and has none, or an older one: ``colcon test`` runs
    pytest from the source folder, which then comes first on sys.path (and in the nodes'
    processes), while a plain ``colcon build`` built the extension in build/ and install/ only.
    A few seconds; the compiler and numpy's headers are the package's build dependencies."""
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.find_spec("rbd_ros")
    if spec is None or spec.origin is None or Path(spec.origin).parent != root / "rbd_ros":
        return  # an installed rbd_ros: its own extension
    source = root / "rbd_ros" / "dynamics" / "multibody" / "_entry.c"
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


@pytest.fixture(scope="module")
def recording() -> dict[str, Any]:
    """The bundled arm's recording for the recording tools' tests (testkit/armrec.py): its
    arrays by name."""
    from armrec import arm_recording

    return arm_recording()


#: the tests' packages that have no rosdep key (requirements-test.txt): a workspace set up by
#: `rosdep install` lacks them, and a test module that needs one is skipped, saying what to
#: install, instead of failing to collect
PIP_ONLY = {"rosbags": "rosbags", "quadprog": "quadprog", "mcap": "mcap",
            "mcap_ros2": "mcap-ros2-support", "example_robot_data": "example-robot-data"}


#: without ROS 2 at all (``bash scripts/setup.sh --no-ros``: the core and the offline tools as
#: a library), the tests that need it are skipped, saying so; where rclpy is installed, a ROS
#: package that fails to import is an error like any other
NO_ROS = importlib.util.find_spec("rclpy") is None
WITHOUT_ROS = "needs ROS 2 (rclpy and the messages), which this venv lacks: bash scripts/setup.sh"


def _ros_package(name: str) -> bool:
    return name in ("rclpy", "rosutil", "rbd_ros_interfaces", "builtin_interfaces",
                    "rcl_interfaces", "ament_index_python", "rosidl_runtime_py") or \
        name.endswith(("_msgs", "_srvs"))


def _missing(text: str) -> str | None:
    # "No module named 'rosbags.highlevel'"; "import of rosbags halted" (blocked)
    missing = re.search(r"No module named '(\w+)|import of (\w+) halted", text)
    return (missing[1] or missing[2]) if missing else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long runs' files first when they are selected (``-m "long or not long"``, as .ci/run
    runs the suite): each takes minutes, and a file runs in one process (``--dist loadfile``),
    so one started last would end the run minutes after the rest."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    report = yield
    if report.failed and isinstance(collector, pytest.Module):
        missing = _missing(str(report.longrepr))
        pip = PIP_ONLY.get(missing or "")
        if pip:
            report.outcome = "skipped"
            report.longrepr = (str(collector.path), None,
                               f"Skipped: needs {pip}, which has no rosdep key: pip install {pip} "
                               "(or pip install -r requirements-test.txt)")
        elif NO_ROS and missing and _ros_package(missing):
            report.outcome = "skipped"
            report.longrepr = (str(collector.path), None, f"Skipped: {WITHOUT_ROS}")
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A test that imports ROS as it runs, without ROS 2: skipped, saying so."""
    report = yield
    if NO_ROS and report.failed and call.excinfo is not None and \
            call.excinfo.errisinstance(ModuleNotFoundError):
        missing = _missing(str(call.excinfo.value))
        if missing and _ros_package(missing):
            report.outcome = "skipped"
            report.longrepr = (str(item.path), None, f"Skipped: {WITHOUT_ROS}")
    return report
