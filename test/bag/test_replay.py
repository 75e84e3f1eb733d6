"""Replay a recording into the dynamics node across processes: its outputs must match the
offline analysis of the same samples."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from armrec import pinocchio_torques, trajectory, write_rosbags
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from recordings import (
    NAMES,
    TS,
    description,
    joint_state,
    odometry,
    string,
    write_joint_states,
)
from rosbags.rosbag2 import StoragePlugin
from rosgraph_msgs.msg import Clock
from rosutil import LATCHED, PATIENCE_S, SENSOR, NodeProcess, Probe, params_file
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

from rbd_ros.bag.analyze import AnalyzeOptions, analyze
from rbd_ros.dynamics import Data, gravity, load_urdf
from rbd_ros.robots import ARM


def test_replay_into_the_dynamics_node_matches_the_offline_analysis(
        tmp_path: Path, probe: Probe) -> None:
    t, q, v, a = trajectory()
    tau, _ = pinocchio_torques(q, v, a)
    effort = tau + 0.5 * np.sin(7 * (t - 10.0))[:, None]
    rec = {"t": t[:600], "q": q[:600], "v": v[:600], "effort": effort[:600]}
    bag = write_rosbags(tmp_path / "rec", rec, StoragePlugin.SQLITE3)
    out = tmp_path / "offline"
    analyze([bag], out, AnalyzeOptions(filter="backward", progress=False, outputs=("parquet",)))
    table = pq.read_table(out / "analysis.parquet").to_pydict()
    offline = {round(s, 6): k for k, s in enumerate(table["t"])}

    grav = probe.listen(JointState, "/rbd_dynamics/gravity_torques", 1000)
    ext = probe.listen(JointState, "/rbd_dynamics/external_torques_from_acceleration", 1000)
    params = params_file(tmp_path / "p.yaml", "rbd_dynamics", {
        "robot_description": ARM.read_text(), "joint_states_qos": "reliable"})
    node = NodeProcess("rbd_ros.nodes.dynamics_node", "--params-file", str(params))
    try:
        # the lossless recipe: the node's outputs reach the probe, the player waits for the
        # node's subscription, everything reliable
        assert probe.sent_to_us("/rbd_dynamics/gravity_torques",
                                "/rbd_dynamics/external_torques_from_acceleration")
        player = subprocess.Popen([sys.executable, "-m", "rbd_ros.app.cli", "replay", str(bag),
                                   "--wait-for", "rbd_dynamics", "--wait-timeout", "300",
                                   "--topics", "/joint_states", "/effort_commands"])
        assert probe.spin_until(lambda: player.poll() is not None), "the player did not end"
        assert player.returncode == 0
        assert probe.spin_until(lambda: len(grav) >= 600 and len(ext) >= 600), \
            (len(grav), len(ext))
        probe.spin_for(0.5)
    finally:
        print(node.stop())
    assert len(grav) == len(ext) == 600, (len(grav), len(ext))

    def stamp(m: JointState) -> float:
        t: float = round(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec, 6)
        return t

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
        want = [table[f"tau_external_{n}"][k] for n in NAMES]
        np.testing.assert_allclose([m.effort[m.name.index(n)] for n in NAMES], want,
                                   atol=1e-6)
    assert matched == len(grav)


def _far_apart(path: Path) -> Path:
    """robot_description and a first joint state at t = 0 s, then 10 min of joint states at
    10 Hz from t = 1e9 s (the gap of the project's own generated recordings, which the latched
    description no longer shows: it goes out first)."""
    ns = [2] + [10**18 + k * 10**8 for k in range(1, 6000)]
    zeros = np.zeros((len(ns), 7))
    return write_joint_states(path, ns, zeros, zeros, zeros, description_at=1)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_replay_skips_long_gaps_and_stops_at_once_on_a_signal(tmp_path: Path, sig: str) -> None:
    import signal
    import time

    bag = _far_apart(tmp_path / "far")
    player = subprocess.Popen([sys.executable, "-m", "rbd_ros.app.cli", "replay", str(bag),
                               "--delay", "0.1"], stderr=subprocess.PIPE, text=True)
    assert player.stderr is not None
    line = player.stderr.readline()  # the gap comes right after the first message
    while line.startswith("[playing]"):  # the progress line (each second)
        line = player.stderr.readline()
    assert line.startswith("skipped a gap of 1e+09 s in the recording"), line
    time.sleep(1.0)  # replaying the joint states, in real time: 10 min of them are left
    player.send_signal(signal.Signals[sig])
    rest = player.stderr.read()
    assert player.wait(timeout=PATIENCE_S) == 128 + signal.Signals[sig]
    assert "Traceback" not in rest
    progress = [x for x in rest.splitlines() if x.startswith("[playing]")]
    assert progress and all(re.search(r" of 599\.\d+ s, ", x) for x in progress), progress
    done = rest.strip().splitlines()[-1]
    # stopped long before the end (each state took a tenth of a second)
    assert done.startswith("replayed ") and done.endswith(f" of 6001 messages (stopped by "
                                                          f"{sig})"), rest
    assert 2 < int(done.split()[1]) < 6001


def test_replay_without_joint_states_says_so(tmp_path: Path) -> None:
    bag = _far_apart(tmp_path / "far")
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "replay", str(bag), "--delay",
                        "0.1", "--topics", "/robot_description"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "no sensor_msgs/JointState among the replayed topics" in r.stderr
    assert r.stderr.strip().endswith("replayed 1 of 1 messages")


def _play_once_answered(probe: Probe, bag: Path, node: str = "rbd_dynamics",
                        answer: str = "gravity_torques") -> subprocess.Popen[str]:
    """The player, started (with --wait-for ``node``) once the node says on /diagnostics that
    its ``answer`` reaches the probe (its writer has matched our reader: made after its
    kernels, before its model). The graph shows the node's publisher sooner, and under load
    what a node sends before that match is lost."""
    assert probe.sent_to_us(f"/{node}/{answer}")
    return subprocess.Popen([sys.executable, "-m", "rbd_ros.app.cli", "replay", str(bag),
                             "--wait-for", node, "--wait-timeout", "300"],
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.long
def test_every_replayed_state_is_answered_every_time(tmp_path: Path, probe: Probe,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Five runs of the lossless replay recipe: the dynamics node with reliable joint states
    (URDF from the recording's /robot_description) and the player with --wait-for, beside a
    second /joint_states subscriber (RViz, a recorder) that is there first, the first run on an
    empty numba cache (the node then compiles its kernels for a minute before it subscribes) and
    the others on the cache it filled: every state answered, every time. (It ran 20 times in a
    test of 20 runs; flakes are looked for by running the long tests 20 times over, beside busy
    processes.)"""
    t, q, v, _ = trajectory()
    n = 400
    rec = {"t": t[:n], "q": q[:n], "v": v[:n], "effort": np.zeros((n, 7))}
    bag = write_rosbags(tmp_path / "rec", rec, StoragePlugin.SQLITE3)
    probe.listen(JointState, "/joint_states", 1000)  # the other subscriber, there first
    answers = probe.listen(JointState, "/rbd_dynamics/gravity_torques", 1000)
    params = params_file(tmp_path / "p.yaml", "rbd_dynamics", {"joint_states_qos": "reliable"})
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))  # empty: the first run compiles
    counts = []
    for run in range(5):
        answers.clear()
        node = NodeProcess("rbd_ros.nodes.dynamics_node", "--params-file", str(params))
        player = _play_once_answered(probe, bag)

        def exited(p: subprocess.Popen[str] = player) -> bool:
            return p.poll() is not None

        try:
            assert probe.spin_until(exited), "the player did not end"
            probe.spin_until(lambda: len(answers) >= n)  # (then: which were lost)
        finally:
            out = node.stop()
        assert player.returncode == 0, player.stderr.read() if player.stderr else ""
        stamps = {m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in answers}
        counts.append(len(stamps))
        lost = sorted(set(round(x * 1e9) for x in rec["t"]) - stamps)
        assert not lost, (run, len(lost), [(x - round(rec["t"][0] * 1e9)) / 1e6 for x in
                                            lost[:10]], out[-2000:])
    assert counts == [n] * 5


def test_best_effort_replay_beside_a_busy_process_answers_what_it_receives(
        tmp_path: Path, probe: Probe) -> None:
    """The node's default joint-state QoS (best effort, for a live robot) with another process
    busy beside it: a replay at 1 kHz may lose states (that is what best effort does; lossless
    replay is the reliable recipe above), but what comes back is answered right, for states
    that were sent, in order."""
    t, q, v, _ = trajectory()
    n = 1000
    rec = {"t": t[:n], "q": q[:n], "v": v[:n], "effort": np.zeros((n, 7))}
    bag = write_rosbags(tmp_path / "rec", rec, StoragePlugin.SQLITE3)
    answers = probe.listen(JointState, "/rbd_dynamics/gravity_torques", 1000)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    node = NodeProcess("rbd_ros.nodes.dynamics_node")
    try:
        player = _play_once_answered(probe, bag)
        assert probe.spin_until(lambda: player.poll() is not None), "the player did not end"
        # the last state's answer, or what came before it: none comes after the player's end
        # but what was in flight
        probe.spin_until(lambda: len(answers) >= n, 5.0)
    finally:
        busy.kill()
        out = node.stop()
    assert player.returncode == 0, player.stderr.read() if player.stderr else ""
    sent = {round(x * 1e9): k for k, x in enumerate(rec["t"])}
    got = [sent[m.header.stamp.sec * 10**9 + m.header.stamp.nanosec] for m in answers]
    print(f"best effort beside a busy process: {len(got)} of {n} states answered")
    assert got == sorted(set(got)), "answers out of order or repeated"
    assert got, f"no state answered: {out[-2000:]}"
    model = load_urdf(ARM)
    d = Data(model)
    for m, k in zip(answers, got, strict=True):
        np.testing.assert_allclose([m.effort[m.name.index(n)] for n in NAMES],
                                   gravity(model, d, rec["q"][k]), atol=1e-9)


def _qos(reliable: bool, latched: bool, depth: int = 10) -> Any:
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )

    zero = QosTime(0, 0)
    return [Qos(QosHistory.KEEP_LAST, depth,
                QosReliability.RELIABLE if reliable else QosReliability.BEST_EFFORT,
                QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE,
                zero, zero, QosLiveliness.AUTOMATIC, zero, False)]


def _states(path: Path, plugin: StoragePlugin, seconds: float = 2.0,
            with_status: bool = True) -> tuple[Path, int]:
    """Joint states at 100 Hz from t = 100 s, header stamp = recorded time; a latched
    /robot_description first and (``with_status``) a best-effort /status at 10 Hz (100 kB each),
    each with its recorded QoS.
    Returns the path and the first recorded ns."""
    from rosbags.rosbag2 import Writer

    zeros = np.zeros(7)
    t0 = 100 * 10**9
    with Writer(path, version=9, storage_plugin=plugin) as w:
        desc = w.add_connection("/robot_description", "std_msgs/msg/String", typestore=TS,
                                offered_qos_profiles=_qos(True, True, 1))
        js = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=TS,
                              offered_qos_profiles=_qos(True, False))
        status = w.add_connection("/status", "std_msgs/msg/String", typestore=TS,
                                  offered_qos_profiles=_qos(False, False))
        w.write(desc, t0, description())
        for k in range(round(seconds * 100)):
            ns = t0 + k * 10**7
            w.write(js, ns, joint_state(ns, NAMES, zeros, zeros, zeros))
            if with_status and k % 10 == 5:
                # 100 kB each: an MCAP of several chunks (rosbags closes one at 1 MiB)
                w.write(status, ns, string(f"{k:<100000}"))
    return path, t0


def _ms(m: JointState, t0: int) -> int:
    ms: int = round((m.header.stamp.sec * 10**9 + m.header.stamp.nanosec - t0) / 1e6)
    return ms


def test_replay_loops_a_window_remapped_with_recorded_qos_and_clock(
        tmp_path: Path, probe: Probe) -> None:
    """ros2 bag play's options: --loop over --start-offset 0.5 --playback-duration 0.5,
    --clock 50, --ros-args -r, each topic with the QoS it was recorded with."""
    import signal

    bag, t0 = _states(tmp_path / "rec", StoragePlugin.SQLITE3)
    states = probe.listen(JointState, "/robot1/joint_states", 1000)
    ticks = probe.listen(Clock, "/clock", 1000)
    descriptions = probe.listen(String, "/robot_description", LATCHED)
    player = subprocess.Popen(
        [sys.executable, "-m", "rbd_ros.app.cli", "replay", str(bag), "--wait-for", "probe",
         "--wait-timeout", "300", "--start-offset", "0.5", "--playback-duration", "0.5",
         "--loop", "--clock", "50", "--progress", "0",
         "--ros-args", "-r", "/joint_states:=/robot1/joint_states"],
        stderr=subprocess.PIPE, text=True)
    start = time.monotonic()
    try:
        assert probe.spin_until(lambda: len(states) >= 140 and len(ticks) > 50), \
            (len(states), len(ticks))
        wall = time.monotonic() - start
        qos = {t: [i.qos_profile for i in probe.node.get_publishers_info_by_topic(t)]
               for t in ("/robot1/joint_states", "/status", "/robot_description",
                         "/joint_states")}
    finally:
        player.send_signal(signal.SIGINT)
        _, err = player.communicate(timeout=PATIENCE_S)
    assert player.returncode == 128 + signal.SIGINT, err
    assert "Traceback" not in err
    assert qos["/joint_states"] == [], "not remapped"
    assert [(p.reliability, p.durability) for p in qos["/robot1/joint_states"]] == \
        [(ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE)]
    assert [p.reliability for p in qos["/status"]] == [ReliabilityPolicy.BEST_EFFORT]
    assert [p.durability for p in qos["/robot_description"]] == \
        [DurabilityPolicy.TRANSIENT_LOCAL]
    assert len(descriptions) == 1  # before the window: still sent first, once
    ms = [_ms(m, t0) for m in states]
    passes: list[list[int]] = [[]]
    for x in ms:
        if passes[-1] and x < passes[-1][-1]:
            passes.append([])
        passes[-1].append(x)
    assert len(passes) >= 2, ms
    for p in passes[:-1]:  # the last pass was cut by the signal
        assert p == list(range(500, 1001, 10)), p
    # /clock: at most 50 a second of wall time (fewer when the player runs late), within the
    # window, forward but at each new pass, at least 20 ms of the recording a tick
    clock = np.array([(c.clock.sec * 10**9 + c.clock.nanosec - t0) / 1e6 for c in ticks])
    assert len(ticks) <= 50 * wall + 2, (len(ticks), wall)
    assert clock.min() >= 500 - 1 and clock.max() <= 1000 + 1, (clock.min(), clock.max())
    steps = np.diff(clock)
    assert (steps >= 0).sum() >= len(steps) - len(passes) + 1
    assert np.median(steps) > 10, np.median(steps)


def test_a_cut_short_mcap_plays_to_its_damage_with_the_recorded_qos(
        tmp_path: Path, probe: Probe) -> None:
    from rbd_ros.bag.readers import McapSource
    from rbd_ros.bag.replay import recorded_qos

    bag, t0 = _states(tmp_path / "rec", StoragePlugin.MCAP, seconds=3.0)
    mcap = next(bag.glob("*.mcap"))
    data = mcap.read_bytes()
    mcap.write_bytes(data[: int(len(data) * 0.7)])  # a crash: no summary, the end cut off
    reader = McapSource(mcap)
    assert reader.damage is not None  # read up to where the cut is
    readable = sum(c.msgcount for c in reader.connections)
    qos = {c.topic: recorded_qos(c) for c in reader.connections}  # from the channel metadata
    assert qos["/status"].reliability == ReliabilityPolicy.BEST_EFFORT
    assert qos["/robot_description"].durability == DurabilityPolicy.TRANSIENT_LOCAL
    js = next(c for c in reader.connections if c.topic == "/joint_states").msgcount
    assert 100 < js < 300

    states = probe.listen(JointState, "/joint_states", 1000)
    probe.listen(String, "/status", SENSOR)  # best effort, as recorded
    probe.listen(String, "/robot_description", LATCHED)
    player = subprocess.Popen([sys.executable, "-m", "rbd_ros.app.cli", "replay", str(mcap),
                               "--wait-for", "probe", "--wait-timeout", "300", "--rate", "5"],
                              stderr=subprocess.PIPE, text=True)
    assert probe.spin_until(lambda: player.poll() is not None), "the player did not end"
    text = player.stderr.read() if player.stderr else ""
    assert player.returncode == 0, text
    assert probe.spin_until(lambda: len(states) >= js), (len(states), js)
    assert [_ms(m, t0) for m in states] == list(range(0, js * 10, 10))
    assert "has no valid end" in text and "the recording ends in damage" in text
    assert text.strip().splitlines()[-1] == f"replayed {readable} of {readable} messages"


def test_replay_pauses_and_resumes(tmp_path: Path, probe: Probe) -> None:
    """Started paused, resumed, paused (the player's own count of what it sent stands while it
    says it is paused, and that is what came), resumed again; stopped by a signal before the
    recording's end."""
    import signal

    bag, t0 = _states(tmp_path / "rec", StoragePlugin.SQLITE3, seconds=120.0,
                     with_status=False)
    states = probe.listen(JointState, "/joint_states", 1000)
    log = tmp_path / "stderr"
    with log.open("w") as err:
        player = subprocess.Popen([sys.executable, "-m", "rbd_ros.app.cli", "replay", str(bag),
                                   "--start-paused", "--progress", "20", "--wait-for", "probe",
                                   "--wait-timeout", "300"], stderr=err, text=True)

    def lines() -> list[str]:
        return [x for x in log.read_text().splitlines() if x.startswith("[")]

    def counts(state: str, since: int = 0) -> list[int]:
        """The player's count of the messages it sent, on each of its lines in ``state`` after
        its first ``since`` lines, up to its last line."""
        run = lines()[since:]
        while run and not run[-1].startswith(f"[{state}]"):
            run.pop()
        out = []
        while run and run[-1].startswith(f"[{state}]"):
            out.append(int(run.pop().split(", ")[-1].split()[0]))
        return out[::-1]

    try:
        assert probe.spin_until(lambda: len(counts("paused")) >= 20)  # a second, paused
        assert states == [] and set(counts("paused")) == {1}  # the description alone
        assert probe.call(Trigger, "/rbd_replay/resume", Trigger.Request(), retry=False).success
        assert probe.spin_until(lambda: len(states) >= 60)
        before = len(lines())  # the lines written before the pause: none of them counts
        assert probe.call(Trigger, "/rbd_replay/pause", Trigger.Request(), retry=False).success
        again = probe.call(Trigger, "/rbd_replay/pause", Trigger.Request(), retry=False)
        assert not again.success and again.message == "paused already"
        # paused: once the player has said so on 22 lines since, its count stands (a message on
        # its way when the pause came may be counted on the first)
        assert probe.spin_until(lambda: len(counts("paused", before)) >= 2 + 20)
        stood = counts("paused", before)[1:]
        assert len(set(stood)) == 1, stood
        held = stood[0] - 1  # joint states sent: all but the description
        assert held >= 60, (held, stood)
        assert probe.spin_until(lambda: len(states) >= held), (len(states), held)
        probe.spin_for(0.5)
        assert len(states) == held, (len(states), held)
        assert probe.call(Trigger, "/rbd_replay/toggle_paused", Trigger.Request(),
                          retry=False).success
        assert probe.spin_until(lambda: len(states) >= held + 60)
    finally:
        player.send_signal(signal.SIGINT)
        player.wait(PATIENCE_S)
    text = log.read_text()
    assert player.returncode == 128 + signal.SIGINT, text
    assert [_ms(m, t0) for m in states] == list(range(0, len(states) * 10, 10))
    assert "[paused]" in text and "[playing]" in text


def test_a_legged_recording_is_answered_state_for_state(tmp_path: Path, probe: Probe) -> None:
    """The floating-base node with reliable inputs, its states let wait for their odometry,
    and the player with --wait-for, a busy process beside them: every joint state of a 1 kHz
    recording of a standing quadruped (joint states and odometry) is answered."""
    from geometry_msgs.msg import WrenchStamped
    from rosbags.rosbag2 import Writer

    from rbd_ros.robots import QUADRUPED

    n, t0 = 3000, 200 * 10**9
    model = load_urdf(QUADRUPED, floating_base=True)
    names = [j.name for j in model.joints if j.kind == "revolute"]
    q = np.tile([0.0, 0.4, -0.8], 4)
    bag = tmp_path / "legged"
    with Writer(bag, version=8, storage_plugin=StoragePlugin.SQLITE3) as w:
        js = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=TS)
        od = w.add_connection("/odom", "nav_msgs/msg/Odometry", typestore=TS)
        for k in range(n):
            ns = t0 + k * 10**6
            w.write(od, ns, odometry(ns, 0.5))
            w.write(js, ns, joint_state(ns, names, q, np.zeros(12), np.zeros(12)))
    config = Path(__file__).resolve().parents[2] / "config" / "floating_base.yaml"
    # a state waits for its odometry up to input_timeout of wall time: under load the odometry's
    # reader can lag the joint states' by more than the default 50 ms (a CI run lost 31)
    params = params_file(tmp_path / "p.yaml", "rbd_floating_base", {
        "robot_description": QUADRUPED.read_text(), "joint_states_qos": "reliable",
        "input_timeout": 10.0})
    answers = probe.listen(WrenchStamped, "/rbd_floating_base/base_wrench", 10_000)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    node = NodeProcess("rbd_ros.nodes.floating_base_node", "--params-file", str(config),
                       "--params-file", str(params))
    try:
        player = _play_once_answered(probe, bag, "rbd_floating_base", "base_wrench")
        assert probe.spin_until(lambda: player.poll() is not None), "the player did not end"
        probe.spin_until(lambda: len(answers) >= n)  # (then: which were lost)
    finally:
        busy.kill()
        out = node.stop()
    assert player.returncode == 0, player.stderr.read() if player.stderr else ""
    got = {m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in answers}
    lost = sorted({t0 + k * 10**6 for k in range(n)} - got)
    print(f"legged replay beside a busy process: {len(got)} of {n} states answered")
    assert not lost, (len(lost), [(x - t0) / 1e6 for x in lost[:10]], out[-2000:])
    weight = model.total_mass * 9.81
    np.testing.assert_allclose([m.wrench.force.z for m in answers], weight, rtol=1e-9)
