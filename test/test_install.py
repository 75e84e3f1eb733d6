"""What a ROS user installs, a ROS user can launch, from the prefix it was installed into: the
pip venv (the set-up makes it a ROS prefix: ament index marker, share/rbd_ros, lib/rbd_ros
executables) or a colcon install space (``colcon test`` puts it on AMENT_PREFIX_PATH)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rosutil import Probe, params_file

from rbd_ros.dynamics import Data, gravity, load_urdf
from rbd_ros.robots import ARM
from rbd_ros.runtime.launch_support import robot_description
from rbd_ros_interfaces.srv import GravityTorques

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def ament(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The prefix rbd_ros is installed into, on AMENT_PREFIX_PATH: this venv when the set-up
    made it one (it need not be activated), else the one the environment names (colcon's)."""
    from ament_index_python import PackageNotFoundError, get_package_prefix

    if (Path(sys.prefix) / "share" / "ament_index" / "resource_index" / "packages" /
            "rbd_ros").is_file():
        path = os.environ.get("AMENT_PREFIX_PATH")
        monkeypatch.setenv("AMENT_PREFIX_PATH",
                           sys.prefix + (os.pathsep + path if path else ""))
    try:
        return Path(get_package_prefix("rbd_ros"))
    except PackageNotFoundError:
        pytest.fail("rbd_ros is not installed in a ROS prefix: run scripts/setup.sh, or source "
                    "the colcon workspace's install/setup.bash")


def test_the_package_share_resolves_through_the_ament_index(ament: Path) -> None:
    from ament_index_python import get_package_prefix, get_package_share_directory

    share = Path(get_package_share_directory("rbd_ros"))
    assert share == ament / "share" / "rbd_ros"
    # this tree's package, installed
    assert (share / "package.xml").read_text() == (ROOT / "package.xml").read_text(), \
        f"{share} holds another package.xml than this tree's: set up (or colcon build) again"
    for f in ("package.xml", "launch/dynamics.launch.py", "launch/floating_base.launch.py",
              "launch/trajectory_controller.launch.py", "config/dynamics.yaml",
              "config/floating_base.yaml", "config/trajectory_controller.yaml",
              "urdf/arm7.urdf"):
        assert (share / f).is_file(), f
    lib = Path(get_package_prefix("rbd_ros")) / "lib" / "rbd_ros"
    for exe in ("dynamics_node", "floating_base_node", "simulator_node",
                "trajectory_controller_node"):
        assert os.access(lib / exe, os.X_OK), exe


def test_every_public_entry_point_resolves() -> None:
    """The console scripts as installed load, and ``rbd-ros`` and ``python -m rbd_ros.app.cli``
    run (``python -m rbd_ros.app.numba_cache``: test_numba_cache.py)."""
    from importlib.metadata import entry_points

    scripts = [e for e in entry_points(group="console_scripts") if e.value.startswith("rbd_ros.")]
    assert {e.name for e in scripts} >= {"rbd-ros", "dynamics_node", "floating_base_node",
                                         "simulator_node", "trajectory_controller_node"}
    for e in scripts:
        assert callable(e.load()), e.value
    command = shutil.which("rbd-ros", path=os.pathsep.join(
        [str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    assert command, "the rbd-ros command is not installed beside this Python or on the PATH"
    for run in ([command, "--help"],
                [sys.executable, "-m", "rbd_ros.app.cli", "info", "arm"]):
        r = subprocess.run(run, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def test_the_node_starts_through_its_lib_executable(ament: Path, probe: Probe,
                                                    tmp_path: Path) -> None:
    """As `ros2 run rbd_ros dynamics_node --ros-args --params-file <share>/config/...` does."""
    from ament_index_python import get_package_prefix, get_package_share_directory

    exe = Path(get_package_prefix("rbd_ros")) / "lib" / "rbd_ros" / "dynamics_node"
    config = Path(get_package_share_directory("rbd_ros")) / "config" / "dynamics.yaml"
    urdf = params_file(tmp_path / "urdf.yaml", "/installed/rbd_dynamics",
                       {"robot_description": ARM.read_text()})
    proc = subprocess.Popen([str(exe), "--ros-args", "-r", "__ns:=/installed", "--params-file",
                             str(config), "--params-file", str(urdf)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        q = [0.1, 0.5, -0.2, -1.1, 0.3, 0.8, -0.4]
        res = probe.call(GravityTorques, "/installed/rbd_dynamics/gravity_torques",
                         GravityTorques.Request(joint_names=[f"joint{k}" for k in range(1, 8)],
                                                positions=q))
        assert res.success, res.message
        m = load_urdf(ARM)
        np.testing.assert_allclose(res.efforts, gravity(m, Data(m), np.array(q)), atol=1e-12)
    finally:
        proc.send_signal(signal.SIGINT)
        out = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0 and "Traceback" not in out, out


def test_a_xacro_description_file_is_expanded(tmp_path: Path) -> None:
    """description_file:=robot.urdf.xacro and its xacro_args in the launch files (xacro is a
    requirement)."""
    xacro = tmp_path / "arm.urdf.xacro"
    xacro.write_text(ARM.read_text().replace(
        "<robot ", '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" ', 1).replace(
        '<mass value="0.4"/>', '<xacro:arg name="tool_mass" default="0.8"/>'
                               '<mass value="${float(\'$(arg tool_mass)\') / 2}"/>'))
    [params] = robot_description(str(xacro))
    from rbd_ros.dynamics import load_urdf_string

    assert load_urdf_string(params["robot_description"]).total_mass == \
        pytest.approx(load_urdf(ARM).total_mass)
    # with arguments, as xacro_args:='tool_mass:=2.0' passes them
    [params] = robot_description(str(xacro), "tool_mass:=2.0")
    assert load_urdf_string(params["robot_description"]).total_mass == \
        pytest.approx(load_urdf(ARM).total_mass + 0.6)
    for bad, why in (("tool_mass=2", "'tool_mass=2' is not NAME:=VALUE"),
                     (":=2", "':=2' is not NAME:=VALUE")):
        with pytest.raises(ValueError, match=why):
            robot_description(str(xacro), bad)
    with pytest.raises(ValueError, match="xacro_args given, but description_file"):
        robot_description(str(ARM), "tool_mass:=2.0")


@pytest.mark.long
def test_the_colcon_recipe_on_the_pip_wheels_runs_as_written(tmp_path: Path) -> None:
    """getting_started.md's colcon workspace on the pip wheels, its lines as the page has them
    (``~/rbd_ros``: this clone, whose committed tree is cloned; ``~/ros2_ws``: a new folder),
    with ``colcon test`` narrowed to the installed package's own tests (test_install.py: the
    ament index, the lib executables, a launch) so that the step takes minutes; then the
    workspace's clone has no file the build or the tests wrote."""
    import re

    if not (ROOT / ".git").exists():
        pytest.skip("the recipe clones this repository: run it from a git clone")
    venv = Path(sys.prefix)
    if not (venv / "bin" / "colcon").exists():
        pytest.skip("colcon is not installed: pip install -r requirements-test.txt")
    page = (ROOT / "doc" / "getting_started.md").read_text()
    found = re.search(r"```bash\n(source ~/rbd_ros/\.venv/bin/activate\n.*?)```", page, re.S)
    assert found, "getting_started.md has no colcon recipe on the pip wheels"
    ws = tmp_path / "ros2_ws"
    script = (found[1].replace("~/rbd_ros/.venv", str(venv)).replace("~/rbd_ros", str(ROOT))
              .replace("~/ros2_ws", str(ws))
              .replace("colcon test --packages-select rbd_ros",
                       "colcon test --packages-select rbd_ros --pytest-args test/test_install.py"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH", "PYTHONPATH", "VIRTUAL_ENV")}
    r = subprocess.run(["bash", "-eo", "pipefail", "-c", script], capture_output=True, text=True,
                       timeout=1800, env=env)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-6000:]
    result = re.search(r"Summary: (\d+) tests, 0 errors, 0 failures", r.stdout)
    assert result and int(result[1]) > 0, r.stdout[-3000:]
    written = subprocess.run(["git", "status", "--porcelain", "--ignored"], capture_output=True,
                             text=True, cwd=ws / "src" / "rbd_ros", check=True).stdout
    assert written == "", f"the build or the tests wrote into src/rbd_ros:\n{written}"
