"""Replay a recording into the dynamics node across processes: its outputs must match the
offline analysis of the same samples."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from rosbags.rosbag2 import StoragePlugin
from rosutil import NodeProcess, Probe, params_file
from sensor_msgs.msg import JointState
from test_analyze import NAMES, pinocchio_torques, trajectory, write_rosbags

from rbd_ros.bag.analyze import Options, analyze
from rbd_ros.robots import ARM
from rbd_ros_interfaces.srv import GravityTorques


def test_replay_into_the_dynamics_node_matches_the_offline_analysis(
        tmp_path: Path, probe: Probe) -> None:
    t, q, v, a = trajectory()
    tau, _ = pinocchio_torques(q, v, a)
    effort = tau + 0.5 * np.sin(7 * (t - 10.0))[:, None]
    rec = {"t": t[:600], "q": q[:600], "v": v[:600], "effort": effort[:600]}
    bag = write_rosbags(tmp_path / "rec", rec, StoragePlugin.SQLITE3)
    out = tmp_path / "offline"
    analyze([bag], out, Options(filter="backward", progress=False, outputs=("parquet",)))
    table = pq.read_table(out / "analysis.parquet").to_pydict()
    offline = {round(s, 6): k for k, s in enumerate(table["t"])}

    grav = probe.listen(JointState, "/rbd_dynamics/gravity_torques", 1000)
    ext = probe.listen(JointState, "/rbd_dynamics/external_torques", 1000)
    params = params_file(tmp_path / "p.yaml", "rbd_dynamics", {
        "robot_description": ARM.read_text(), "joint_states_qos": "reliable"})
    node = NodeProcess("rbd_ros.nodes.dynamics_node", "--params-file", str(params))
    try:
        # the node is ready (model in, kernels compiled: minutes on a cold numba cache) once
        # it answers a service; replayed messages would otherwise pile up and be dropped
        ready = probe.call(GravityTorques, "/rbd_dynamics/gravity_torques",
                           GravityTorques.Request(joint_names=NAMES, positions=[0.0] * 7),
                           timeout=300)
        assert ready.success, ready.message
        probe.spin_for(0.5)
        player = subprocess.Popen([sys.executable, "-m", "rbd_ros.cli", "replay", str(bag),
                                   "--delay", "20",
                                   "--topics", "/joint_states", "/effort_commands",
                                   "--rate", "0.1"])  # the probe keeps up on a busy machine
        probe.spin_until(lambda: player.poll() is not None, 90.0)
        probe.spin_for(1.0)
        assert player.returncode == 0
    finally:
        print(node.stop())
    got = sorted(offline[round(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec, 6)]
                 for m in grav)
    assert len(grav) >= 570, f"{len(grav)} of 600 came back: {got[:5]} .. {got[-5:]}"

    def stamp(m: JointState) -> float:
        return round(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec, 6)

    matched = 0
    for m in grav:
        k = offline[stamp(m)]
        want = [table[f"gravity_{n}"][k] for n in NAMES]
        np.testing.assert_allclose([m.effort[m.name.index(n)] for n in NAMES], want, atol=1e-9)
        matched += 1
    for m in ext:  # the node's accelerations: backward differences, as --filter backward
        k = offline[stamp(m)]
        if k < 2:
            continue
        want = [table[f"residual_{n}"][k] for n in NAMES]
        np.testing.assert_allclose([m.effort[m.name.index(n)] for n in NAMES], want,
                                   atol=1e-6)
    assert matched == len(grav)


def _far_apart(path: Path) -> Path:
    """robot_description and a first joint state at t = 0 s, then 3 s of joint states at 1 kHz
    from t = 1e9 s (the gap of the project's own generated recordings, which the latched
    description no longer shows: it goes out first)."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_HUMBLE)
    JS, String = ts.types["sensor_msgs/msg/JointState"], ts.types["std_msgs/msg/String"]
    Header, Time = ts.types["std_msgs/msg/Header"], ts.types["builtin_interfaces/msg/Time"]
    with Writer(path, version=8) as w:
        desc = w.add_connection("/robot_description", "std_msgs/msg/String", typestore=ts)
        js = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=ts)
        w.write(desc, 1, ts.serialize_cdr(String(data=ARM.read_text()), "std_msgs/msg/String"))
        for k in range(3000):
            ns = 10**18 + k * 10**6 if k else 2
            msg = JS(header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
                     name=NAMES, position=np.zeros(7), velocity=np.zeros(7),
                     effort=np.zeros(7))
            w.write(js, ns, ts.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
    return path


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_replay_skips_long_gaps_and_stops_at_once_on_a_signal(tmp_path: Path, sig: str) -> None:
    import signal
    import time

    bag = _far_apart(tmp_path / "far")
    player = subprocess.Popen([sys.executable, "-m", "rbd_ros.cli", "replay", str(bag),
                               "--delay", "0.1"], stderr=subprocess.PIPE, text=True)
    assert player.stderr is not None
    line = player.stderr.readline()  # the gap comes right after the first message
    assert line.startswith("skipped a gap of 1e+09 s in the recording"), line
    time.sleep(1.0)  # replaying the joint states, in real time
    start = time.monotonic()
    player.send_signal(signal.Signals[sig])
    rest = player.stderr.read()
    assert player.wait(timeout=5) == 128 + signal.Signals[sig]
    assert time.monotonic() - start < 2.0
    assert "Traceback" not in rest
    done = rest.strip().splitlines()[-1]
    assert done.startswith("replayed ") and done.endswith(f" of 3001 messages (stopped by "
                                                          f"{sig})"), rest
    assert 500 < int(done.split()[1]) < 3001


def test_replay_without_joint_states_says_so(tmp_path: Path) -> None:
    bag = _far_apart(tmp_path / "far")
    r = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "replay", str(bag), "--delay",
                        "0.1", "--topics", "/robot_description"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "no sensor_msgs/JointState among the replayed topics" in r.stderr
    assert r.stderr.strip().endswith("replayed 1 of 1 messages")


def test_every_replayed_state_is_answered_every_time(tmp_path: Path, probe: Probe,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """20 runs of: the dynamics node (URDF from the recording's /robot_description) and the
    player, beside a second /joint_states subscriber (RViz, a recorder) that is there first,
    with an empty numba cache in half of them: every state answered, every time."""
    t, q, v, _ = trajectory()
    n = 400
    rec = {"t": t[:n], "q": q[:n], "v": v[:n], "effort": np.zeros((n, 7))}
    bag = write_rosbags(tmp_path / "rec", rec, StoragePlugin.SQLITE3)
    probe.listen(JointState, "/joint_states", 1000)  # the other subscriber, there first
    answers = probe.listen(JointState, "/rbd_dynamics/gravity_torques", 1000)
    warm = tmp_path / "warm"
    subprocess.run([sys.executable, "-c", "from rbd_ros.numba_cache import load_node_kernels; "
                    "load_node_kernels(False)"], env=dict(os.environ, NUMBA_CACHE_DIR=str(warm)),
                   check=True)
    counts = []
    for run in range(20):
        cache = tmp_path / f"cold{run}" if run % 2 == 0 else warm
        monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
        answers.clear()
        node = NodeProcess("rbd_ros.nodes.dynamics_node")
        # this test's ears must hear the node's answers from the first: they wait for its
        # output (made after its kernels, before its model), then the player starts at once
        assert probe.spin_until(
            lambda: probe.node.count_publishers("/rbd_dynamics/gravity_torques") > 0, 300.0)
        probe.spin_for(0.3)
        player = subprocess.Popen([sys.executable, "-m", "rbd_ros.cli", "replay", str(bag),
                                   "--wait-for", "rbd_dynamics", "--wait-timeout", "300"],
                                  stderr=subprocess.PIPE, text=True)
        try:
            probe.spin_until(lambda p=player: p.poll() is not None, 360.0)  # type: ignore[misc]
            probe.spin_until(lambda: len(answers) >= n, 5.0)
        finally:
            out = node.stop()
        assert player.returncode == 0, player.stderr.read() if player.stderr else ""
        stamps = {m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in answers}
        counts.append(len(stamps))
        lost = sorted(set(round(x * 1e9) for x in rec["t"]) - stamps)
        assert not lost, (run, len(lost), [(x - round(rec["t"][0] * 1e9)) / 1e6 for x in
                                            lost[:10]], out[-2000:])
    assert counts == [n] * 20
