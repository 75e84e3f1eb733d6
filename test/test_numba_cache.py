"""numba's cache filled at install leaves the nodes nothing to compile; a read-only package
folder moves the cache somewhere writable."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from nav_msgs.msg import Odometry
from rosutil import SENSOR, NodeProcess, Probe, params_file
from sensor_msgs.msg import JointState

from rbd_ros.dynamics import load_urdf
from rbd_ros.robots import ARM, QUADRUPED
from rbd_ros.runtime.cache_dir import cache_folder, drop_stale_kernels

CONFIG = Path(__file__).resolve().parents[1] / "config"


def test_a_read_only_package_folder_moves_the_cache_to_the_user_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache_folder(tmp_path / "writable") is None  # numba's own place, beside the modules
    package = tmp_path / "read_only"
    package.mkdir()
    (package / "dynamics").write_text("")  # a file where the folder would be: cannot be made
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert cache_folder(package) == tmp_path / "cache" / "rbd_ros" / "numba"
    assert not (tmp_path / "cache").exists()  # nothing made to find out: numba makes it
    (tmp_path / "cache").mkdir(mode=0o500)  # and where it could not, the temporary folder
    if os.geteuid() != 0:  # (root writes anywhere)
        assert cache_folder(package) == Path(tempfile.gettempdir()) / f"rbd_ros-numba-{os.getuid()}"


def test_kernels_cached_before_a_source_was_edited_are_dropped(tmp_path: Path) -> None:
    """A kernel's cached machine code holds the helpers it calls from other files, which
    numba's own check (the defining file's time stamp) misses: every cached kernel goes when any
    source is newer than one of them, none while the cache is newer than every source."""
    package = tmp_path / "pkg"
    (package / "dynamics" / "__pycache__").mkdir(parents=True)
    sources = [package / "__init__.py", package / "dynamics" / "rnea.py",
               package / "dynamics" / "entry.py"]
    cached = [package / "dynamics" / "__pycache__" / n
              for n in ("entry._rnea-56.py311.nbi", "entry._rnea-56.py311.1.nbc")]
    for f in sources + cached:
        f.write_text("")
    for f in sources:
        os.utime(f, (1000.0, 1000.0))  # installed, then the cache filled
    for f in cached:
        os.utime(f, (2000.0, 2000.0))
    assert not drop_stale_kernels(package) and all(f.exists() for f in cached)
    os.utime(sources[1], (3000.0, 3000.0))  # rnea.py edited: entry's kernel holds the old RNEA
    assert drop_stale_kernels(package)
    assert not any(f.exists() for f in cached) and all(f.exists() for f in sources)
    assert not drop_stale_kernels(package)  # nothing left to drop


def test_the_cache_filled_at_set_up_leaves_nothing_for_the_nodes_to_compile(
        ros: None, probe: Probe, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The nodes start on the cache `scripts/setup.sh` filled (`python -m
    rbd_ros.app.numba_cache`, as a package's install would): each kernel is loaded, none
    compiled. (Fails after a source was edited until that command runs again.)"""
    monkeypatch.setenv("NUMBA_DEBUG_CACHE", "1")  # numba says each kernel loaded or saved
    arm = params_file(tmp_path / "arm.yaml", "rbd_dynamics",
                      {"robot_description": ARM.read_text()})
    legs = params_file(tmp_path / "legs.yaml", "rbd_floating_base",
                       {"robot_description": QUADRUPED.read_text()})
    nodes = [NodeProcess("rbd_ros.nodes.dynamics_node", "--params-file", str(arm)),
             NodeProcess("rbd_ros.nodes.floating_base_node", "--params-file",
                         str(CONFIG / "floating_base.yaml"), "--params-file", str(legs))]
    try:
        answers = [probe.listen(JointState, "/rbd_dynamics/gravity_torques"),
                   probe.listen(JointState, "/rbd_floating_base/joint_torques")]
        js = probe.node.create_publisher(JointState, "/joint_states", SENSOR)
        od = probe.node.create_publisher(Odometry, "/odom", SENSOR)
        names = [j.name for j in load_urdf(QUADRUPED).joints if j.kind == "revolute"]
        arm_names = load_urdf(ARM).state_joint_names

        def step() -> bool:
            base = Odometry()
            base.pose.pose.position.z, base.pose.pose.orientation.w = 0.5, 1.0
            od.publish(base)
            js.publish(JointState(name=names, position=[0.0, 0.4, -0.8] * 4,
                                  velocity=[0.0] * 12, effort=[0.0] * 12))
            js.publish(JointState(name=arm_names, position=[0.1] * len(arm_names)))
            return all(answers)

        assert probe.spin_until(step), "the nodes did not answer"
    finally:
        out = [n.stop() for n in nodes]
    for text in out:
        assert "[cache] data loaded" in text  # numba's debug output is there to be read
        saved = [line for line in text.splitlines() if "saved to" in line]
        assert not saved, f"compiled at start, not at install: {saved[:3]}"
