"""``rbd-ros analyze`` of a legged robot's recording: the floating-base node's answers, state
by state, offline. The bundled quadruped trots in testkit/quadsim.py's Pinocchio simulation;
its recording carries what a real one does: efforts with 1 N m of noise, odometry at half the
joint states' rate and an IMU at a third, with stamps that jitter by up to 0.3 ms, so that the
node interpolates both."""

from __future__ import annotations

import collections
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin
import pyarrow.parquet as pq
import pytest
from geometry_msgs.msg import WrenchStamped
from quadsim import Run, simulate, trot
from recordings import write_joint_states, write_legged
from rosutil import NodeProcess, Probe, params_file
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from urdfs import with_floating_root

from rbd_ros.bag.errors import BagError
from rbd_ros.bag.legged import LeggedOptions, analyze_legged, floating_base_parameters
from rbd_ros.robots import QUADRUPED
from rbd_ros_interfaces.msg import Balance

CONFIG = Path(__file__).resolve().parents[2] / "config" / "floating_base.yaml"
FEET = [f"{leg}_foot" for leg in ("LF", "RF", "LH", "RH")]
POSTURE = {f"{x}_{j}": a for x in ("LF", "RF", "LH", "RH") for j, a in (("HFE", 0.6),
                                                                        ("KFE", -1.2))}
START = 600 * 10**9  # ns: the recording's first stamp
NODE = "/rbd_floating_base"


@pytest.fixture(scope="module")
def run() -> Run:
    return simulate(str(QUADRUPED), FEET, POSTURE, trot(FEET), 0.6)


@pytest.fixture(scope="module")
def recording(run: Run, tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(5)
    effort = run.tau + rng.normal(0.0, 1.0, run.tau.shape)
    # an IMU at a third of the rate: the base's specific force (its classical acceleration
    # less gravity, base frame) with 0.05 m/s^2 of noise
    R = [pin.Quaternion(*x[[6, 3, 4, 5]]).toRotationMatrix() for x in run.q]  # w, x, y, z
    imu = np.array([a[:3] + np.cross(v[3:6], v[:3]) + r.T @ [0.0, 0.0, 9.81]
                    for a, v, r in zip(run.a, run.v, R, strict=True)])
    imu += rng.normal(0.0, 0.05, imu.shape)
    return write_legged(tmp_path_factory.mktemp("legged") / "trot", QUADRUPED.read_text(),
                        run.t, run.q, run.v, effort, run.joints, START, odom_every=2,
                        jitter_ns=300_000, imu=(3, imu))


@pytest.fixture(scope="module")
def estimating(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The node's parameters file, contacts estimated from the efforts; and a state waits up to
    10 s (the most it may) for the odometry and IMU that bracket it (the default, 50 ms, is for
    a live robot: a replay stalled longer than that on a loaded machine makes the node hold the
    nearest sample, as it would live, where the analysis, on the recording's clock,
    interpolates)."""
    path = tmp_path_factory.mktemp("params") / "floating_base.yaml"
    text = CONFIG.read_text().replace("estimate_contacts: false", "estimate_contacts: true")
    path.write_text(text.replace("input_timeout: 0.05", "input_timeout: 10.0"))
    return path


def _at_rest(n: int) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """``n`` states 1 ms apart of the bundled quadruped at rest, its base 0.5 m up, legs bent:
    (joint names, t, q, zeros of the velocities' size)."""
    from rbd_ros.dynamics import load_urdf

    model = load_urdf(QUADRUPED, floating_base=True)
    q = np.tile([0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0, *np.tile([0.0, 0.4, -0.8], 4)], (n, 1))
    return list(model.state_joint_names), np.arange(n) * 1e-3, q, np.zeros((n, model.nv))


def _stamp(msg: object) -> int:
    s = msg.header.stamp  # type: ignore[attr-defined]
    return int(s.sec) * 10**9 + int(s.nanosec)


def test_the_analysis_is_what_the_node_answers_when_the_recording_is_replayed(
        recording: Path, estimating: Path, run: Run, tmp_path: Path, probe: Probe) -> None:
    out = tmp_path / "offline"
    params = floating_base_parameters(estimating)
    assert params is not None and params["estimate_contacts"] is True
    summary = analyze_legged([recording], out, LeggedOptions.from_parameters(params))
    assert summary.messages == len(run.t)
    table = pq.read_table(out / "legged.parquet").to_pydict()
    row = {round(t * 1e9): k for k, t in enumerate(table["t"])}
    assert len(row) == len(run.t)

    base = probe.listen(WrenchStamped, f"{NODE}/base_wrench", 2000)
    foot = probe.listen(WrenchStamped, f"{NODE}/contact/LH_foot/wrench", 2000)
    torques = probe.listen(JointState, f"{NODE}/joint_torques", 2000)
    balance = probe.listen(Balance, f"{NODE}/balance", 2000)
    status = probe.listen(String, f"{NODE}/status", 2000)
    reliable = params_file(tmp_path / "p.yaml", "rbd_floating_base", {
        "robot_description": QUADRUPED.read_text(), "joint_states_qos": "reliable"})
    node = NodeProcess("rbd_ros.nodes.floating_base_node", "--params-file", str(estimating),
                       "--params-file", str(reliable))
    try:
        assert probe.spin_until(probe.matched)
        assert probe.sent_to_us(*(t for t in probe.subscriptions if t.startswith(NODE)))
        probe.spin_for(0.3)
        player = subprocess.Popen([sys.executable, "-m", "rbd_ros.app.cli", "replay",
                                   str(recording), "--wait-for", "rbd_floating_base",
                                   "--wait-timeout", "300"], stderr=subprocess.PIPE, text=True)
        assert probe.spin_until(lambda: player.poll() is not None)
        # every answer in, before the node goes (under load the probe takes the outputs
        # hundreds of messages after the statuses; a stopped node's writers send no more)
        ok = sum(s.startswith("ok") for s in table["status"])
        probe.spin_until(lambda: len(status) >= len(run.t) and min(
            len(base), len(torques), len(balance)) >= ok)
    finally:
        node.stop()
    assert player.returncode == 0, player.stderr.read() if player.stderr else ""
    # every state said the same on ~/status, in the same order
    said = [s.data for s in status]
    differ = [(k, a, b) for k, (a, b) in enumerate(zip(said, table["status"], strict=False))
              if a != b]
    assert len(said) == len(table["status"]) and not differ, "\n".join(
        [str(len(said))] + [f"{k}: node {a!r}\n   analysis {b!r}" for k, a, b in differ[:3]])
    answered = [k for k, s in enumerate(table["status"]) if s.startswith("ok")]
    # the rest: while the estimator settles, and motions the feet cannot give (an IMU gives no
    # angular acceleration: the node takes it as zero, and the trot's attitude loop has some)
    print(collections.Counter(s.split(":")[0] for s in table["status"]))
    assert len(answered) > 0.6 * len(run.t)
    assert len(base) == len(torques) == len(balance) == len(answered)
    for msg in base:
        k = row[_stamp(msg)]
        f, t = msg.wrench.force, msg.wrench.torque
        np.testing.assert_allclose([f.x, f.y, f.z, t.x, t.y, t.z],
                                   [table[f"base_wrench_{w}"][k] for w in
                                    ("fx", "fy", "fz", "tx", "ty", "tz")], rtol=0, atol=1e-9)
    for msg in foot:  # a foot's wrench only while it is in touch
        k = row[_stamp(msg)]
        assert table["LH_foot_in_touch"][k] == 1.0
        assert msg.wrench.force.z == pytest.approx(table["LH_foot_wrench_fz"][k], abs=1e-9)
    assert 0 < len(foot) < len(base)  # it swings
    for msg in torques:
        k = row[_stamp(msg)]
        np.testing.assert_allclose(msg.effort, [table[f"tau_{n}"][k] for n in msg.name],
                                   rtol=0, atol=1e-9)
    for msg in balance:
        k = row[_stamp(msg)]
        assert msg.zmp_defined
        np.testing.assert_allclose([msg.zmp.x, msg.zmp.y, msg.capture_point.x,
                                    msg.capture_point.y, msg.zmp_margin,
                                    msg.capture_point_margin],
                                   [table[c][k] for c in ("zmp_x", "zmp_y", "capture_point_x",
                                                          "capture_point_y", "zmp_margin",
                                                          "capture_point_margin")],
                                   rtol=0, atol=1e-9)
        np.testing.assert_allclose([[p.x, p.y, p.z] for p in msg.support_polygon],
                                   table["support_polygon"][k], rtol=0, atol=1e-9)


def test_the_command_writes_the_table_pictures_and_summary(recording: Path, estimating: Path,
                                                          run: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(recording),
                        "--params", str(estimating), "--out", str(out), "--quiet"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{len(run.t)} joint states analysed (")
    assert {p.name for p in out.iterdir()} >= {"legged.mcap", "legged.parquet",
                                                "foot_loads.png", "balance.png", "balance_path.png",
                                                "summary.txt"}
    table = pq.read_table(out / "legged.parquet")
    rows = table.to_pydict()
    row = {round(t * 1e9): k for k, t in enumerate(rows["t"])}
    # the bag holds the node's topics, stamped and recorded at the joint states' stamps, and
    # an indexed reader (rosbags, from the bag's own schemas) reads what the table says
    from rosbags.highlevel import AnyReader

    with AnyReader([out / "legged.mcap"]) as bag:
        topics = {c.topic: c.msgtype for c in bag.connections}
        assert topics[f"{NODE}/balance"] == "rbd_ros_interfaces/msg/Balance"
        assert {f"{NODE}/{x}" for x in ("status", "base_wrench", "com_wrench",
                                        "center_of_mass", "joint_torques",
                                        "contact/RF_foot/wrench",
                                        "contact/RF_foot/center_of_pressure",
                                        "contact/RF_foot/estimated_force")} <= set(topics)
        seen: dict[str, int] = {}
        for c, ns, raw in bag.messages():
            m: Any = bag.deserialize(raw, c.msgtype)
            stamp = m.header.stamp.sec * 10**9 + m.header.stamp.nanosec \
                if hasattr(m, "header") else ns
            assert ns == stamp
            k = row[stamp]
            name = c.topic.removeprefix(f"{NODE}/")
            seen[name] = seen.get(name, 0) + 1
            if name == "status":
                assert m.data == rows["status"][k]
            elif name == "base_wrench":
                assert m.header.frame_id == "base"
                assert m.wrench.torque.y == rows["base_wrench_ty"][k]
            elif name == "balance":
                assert m.header.frame_id == "odom"
                assert (m.zmp.x, m.capture_point_margin, len(m.support_polygon)) == (
                    rows["zmp_x"][k], rows["capture_point_margin"][k],
                    len(rows["support_polygon"][k]))
            elif name == "joint_torques":
                assert list(m.effort) == [rows[f"tau_{n}"][k] for n in m.name]
    answered = sum(s.startswith("ok") for s in rows["status"])
    assert seen["status"] == len(run.t)
    assert seen["base_wrench"] == seen["balance"] == seen["joint_torques"] == answered
    assert "the wrench the base needs" in table.schema.field("base_wrench_fz").metadata[
        b"description"].decode()
    # the estimated contacts against the simulation's: the estimator's own accuracy
    t = np.round(np.array(table.column("t").to_pylist()) * 1e9).astype(np.int64)
    at = np.searchsorted(START + np.round(run.t * 1e9).astype(np.int64), t)
    touch = np.array([table.column(f"{f}_in_touch").to_pylist() for f in FEET]).T
    decided = ~np.isnan(touch).any(axis=1)
    right = (touch[decided] == 1.0) == run.contact[at[decided]]
    assert right.mean() > 0.95, right.mean()


def test_several_legged_recordings_each_into_a_folder_of_its_own(
        recording: Path, estimating: Path, tmp_path: Path) -> None:
    """A folder tree of legged recordings analysed at once (a process each): each one's table
    is, byte for byte, the one its own analysis writes, and one that cannot be analysed (an arm's, without
    odometry) fails with its name and why, the others kept."""
    import shutil

    fleet = tmp_path / "fleet"
    for day in ("day1", "day2"):
        shutil.copytree(recording, fleet / day / "trot")
    write_joint_states(fleet / "day2" / "arm", [START + k * 10**6 for k in range(20)],
                       np.zeros((20, 7)))
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(fleet),
                        "--params", str(estimating), "--out", str(out), "--jobs", "2"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "error: 1 of 3 recordings failed: day2/arm" in r.stderr, r.stderr
    table = r.stdout[r.stdout.index("recording  "):].splitlines()
    rows = {line.split()[0]: line for line in table[1:]}
    assert rows["day2/arm"].split()[1] == "failed"
    assert "no nav_msgs/msg/Odometry on topic /odom" in rows["day2/arm"], rows
    params = floating_base_parameters(estimating)
    assert params is not None
    alone = analyze_legged([recording], tmp_path / "alone", LeggedOptions.from_parameters(params))
    expected = (tmp_path / "alone" / "legged.parquet").read_bytes()
    for day in ("day1", "day2"):
        assert rows[f"{day}/trot"].split()[1:3] == ["ok", str(alone.messages)], rows
        assert f"{alone.answered:,} answered" in rows[f"{day}/trot"], rows
        assert (out / day / "trot" / "legged.parquet").read_bytes() == expected
        assert (out / day / "trot" / "balance_path.png").exists()


def test_analysed_as_an_arm_the_recording_says_how_to_analyse_it_as_legged(
        recording: Path, tmp_path: Path) -> None:
    from rbd_ros.bag.analyze import AnalyzeOptions, analyze

    summary = analyze([recording], tmp_path / "arm", AnalyzeOptions(progress=False,
                                                                    outputs=()))
    assert any(w.startswith("the recording has nav_msgs/msg/Odometry on /odom: a legged "
                            "robot's is analysed with the floating-base node's parameters "
                            "file (--params") for w in summary.warnings), summary.warnings


def test_what_a_legged_analysis_needs_is_asked_for(recording: Path, tmp_path: Path) -> None:
    with pytest.raises(BagError, match="no contact_links: give the floating-base node's"):
        analyze_legged([recording], tmp_path / "a", LeggedOptions())
    with pytest.raises(BagError, match=r"no nav_msgs/msg/Odometry on topic /base_odom"):
        analyze_legged([recording], tmp_path / "b",
                       LeggedOptions(contact_links=("LF_foot",), odom_topic="/base_odom"))
    r = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(recording),
                        "--params", str(CONFIG), "--command-topic", "/x", "--out",
                        str(tmp_path / "c")], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert "--command-topic: for a fixed-base robot's recording, not a legged one's" in r.stderr


def test_a_urdf_whose_root_is_a_floating_joint_is_a_legged_robots(tmp_path: Path) -> None:
    """A robot_description whose root is a floating joint from a "world" link (as some exports
    write it): analysed as an arm's it is refused with what to do, not a shape error; as a legged
    robot's its answers are, byte for byte, those of the same robot without that joint."""
    from rbd_ros.bag.analyze import AnalyzeOptions, analyze

    n = 40
    names, t, q, zero = _at_rest(n)
    plain = QUADRUPED.read_text()
    declared = with_floating_root(plain, "float")
    params = LeggedOptions.from_parameters(floating_base_parameters(CONFIG) or {})
    for name, text in (("plain", plain), ("declared", declared)):
        bag = write_legged(tmp_path / name, text, t, q, zero, zero[:, 6:], names, START)
        summary = analyze_legged([bag], tmp_path / f"out_{name}", params)
        assert summary.statuses == {"ok": n}, summary.text()
    assert (tmp_path / "out_declared" / "legged.parquet").read_bytes() == \
        (tmp_path / "out_plain" / "legged.parquet").read_bytes()
    with pytest.raises(BagError, match=r"the URDF's root is a floating joint .* --params"):
        analyze([tmp_path / "declared"], tmp_path / "arm", AnalyzeOptions(progress=False,
                                                                          outputs=()))


def test_a_humanoid_walking_its_base_forward_on_two_soles(tmp_path: Path) -> None:
    """Talos (a robot the analysis was not tuned on: flat soles, mimic joints), standing with its
    base moving forward at a steady 0.2 m/s, odometry at half the joint states' rate (every
    other state's pose interpolated; stamps exact here, where Pinocchio is given the true pose):
    no acceleration, so the ZMP is under the centre of mass, the capture point
    is ahead of it by c_dot / omega, the soles carry the weight, and the support polygon is the
    soles' outer corners; every number against Pinocchio's centre of mass."""
    from pinref import robot_path

    from rbd_ros.dynamics import load_urdf

    urdf = robot_path("talos")
    model = load_urdf(urdf, floating_base=True)
    names = list(model.state_joint_names)
    n = 300
    t = np.arange(n) * 1e-3
    q = np.zeros((n, 7 + len(names)))
    q[:, 0] = 0.2 * t  # forward, level, at the neutral posture
    q[:, 2], q[:, 6] = 1.0, 1.0
    v = np.zeros((n, 6 + len(names)))
    v[:, 0] = 0.2
    bag = write_legged(tmp_path / "talos", Path(urdf).read_text(), t, q, v,
                       np.zeros((n, len(names))), names, START, odom_every=2)
    params = tmp_path / "talos.yaml"
    params.write_text("rbd_floating_base:\n  ros__parameters:\n"
                      "    contact_links: [left_sole_link, right_sole_link]\n    contacts:\n"
                      + "".join(f"      {s}_sole_link: {{half_length: 0.1, half_width: 0.05}}\n"
                                for s in ("left", "right")))
    opts = LeggedOptions.from_parameters(floating_base_parameters(params) or {})
    summary = analyze_legged([bag], tmp_path / "out", opts)
    assert (summary.messages, summary.answered) == (n, n), summary.text()
    rows = pq.read_table(tmp_path / "out" / "legged.parquet").to_pydict()
    pm = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer())
    pd = pm.createData()
    mass = pin.computeTotalMass(pm)
    k = n // 2 + 1  # a state between two odometry samples
    x = np.r_[q[k, :7], np.zeros(pm.nq - 7)]  # the neutral posture (Talos' joints at zero)
    c = pin.centerOfMass(pm, pd, x)
    ground = rows["ground_height"][k]
    omega = np.sqrt(9.81 / (c[2] - ground))
    assert rows["omega"][k] == pytest.approx(omega, rel=1e-12)
    np.testing.assert_allclose([rows["zmp_x"][k], rows["zmp_y"][k]], c[:2], atol=1e-9)
    np.testing.assert_allclose([rows["capture_point_x"][k], rows["capture_point_y"][k]],
                               [c[0] + 0.2 / omega, c[1]], atol=1e-9)
    np.testing.assert_allclose(rows["linear_momentum_x"][k], mass * 0.2, rtol=1e-12)
    load = rows["left_sole_link_force_z"][k] + rows["right_sole_link_force_z"][k]
    assert load == pytest.approx(mass * 9.81, rel=1e-9)
    assert rows["base_wrench_fz"][k] == pytest.approx(mass * 9.81, rel=1e-9)
    polygon = np.array(rows["support_polygon"][k])
    assert polygon.shape == (4, 3) and rows["zmp_margin"][k] > 0.05


def test_recorded_active_contacts_are_the_contacts_in_touch(run: Run, tmp_path: Path) -> None:
    """Foot sensors' ActiveContacts recorded beside the states (without estimate_contacts):
    each state's contacts in touch are the last message's, as the node takes them; a message
    naming a link that is not a contact link is dropped, said and counted."""
    changes = {0: ["bogus_foot"]}
    for k in range(len(run.t)):
        touching = [f for j, f in enumerate(FEET) if run.contact[k, j]]
        if k == 0 or list(run.contact[k]) != list(run.contact[k - 1]):
            changes[k if k else 1] = touching
    bag = write_legged(tmp_path / "sensed", QUADRUPED.read_text(), run.t, run.q, run.v,
                       run.tau, run.joints, START, active=changes)
    params = floating_base_parameters(CONFIG)
    assert params is not None and params["estimate_contacts"] is False
    summary = analyze_legged([bag], tmp_path / "out", LeggedOptions.from_parameters(params))
    rows = pq.read_table(tmp_path / "out" / "legged.parquet").to_pydict()
    touch = np.array([rows[f"{f}_in_touch"] for f in FEET]).T
    assert np.isfinite(touch).all()  # every state answered
    np.testing.assert_array_equal(touch[1:] == 1.0, run.contact[1:])
    assert touch[0].all()  # until a message is taken, every contact link is in touch
    (why, count), = summary.refused.items()
    assert count == 1 and why.startswith("dropped active_contacts: ['bogus_foot'] are not")


def test_in_flight_the_robot_falls_and_the_bag_says_so(tmp_path: Path) -> None:
    """Foot sensors that say no foot touches, the motors slack, the robot at rest: the whole
    robot falls at g (a closed form), its joints do not move, and the bag's flight topics hold
    what the table does."""
    from rosbags.highlevel import AnyReader

    n = 50
    names, t, q, zero = _at_rest(n)
    bag = write_legged(tmp_path / "falling", QUADRUPED.read_text(), t, q, zero, zero[:, 6:],
                       names, START, active={0: []})
    params = floating_base_parameters(CONFIG) or {}
    summary = analyze_legged([bag], tmp_path / "out", LeggedOptions.from_parameters(params))
    assert summary.statuses == {"flight": n}
    rows = pq.read_table(tmp_path / "out" / "legged.parquet").to_pydict()
    np.testing.assert_allclose([[rows[f"flight_base_acceleration_{w}"][k] for w in
                                 ("fx", "fy", "fz", "tx", "ty", "tz")] for k in range(n)],
                               [[0.0, 0.0, -9.81, 0.0, 0.0, 0.0]] * n, atol=1e-9)
    np.testing.assert_allclose([[rows[f"flight_qdd_{j}"][k] for j in names] for k in range(n)],
                               0.0, atol=1e-9)
    with AnyReader([tmp_path / "out" / "legged.mcap"]) as reader:
        got: dict[str, list[Any]] = {}
        for c, _, raw in reader.messages():
            got.setdefault(c.topic, []).append(reader.deserialize(raw, c.msgtype))
    falls = got[f"{NODE}/flight/base_acceleration"]
    joints = got[f"{NODE}/flight/joint_accelerations"]
    assert len(falls) == len(joints) == n and f"{NODE}/base_wrench" not in got
    assert falls[0].header.frame_id == "base" and falls[0].accel.linear.z == pytest.approx(-9.81)
    assert list(joints[0].joint_names) == names
    assert list(joints[0].points[0].accelerations) == [rows[f"flight_qdd_{j}"][0] for j in names]
