"""The dynamics node in its own process, driven by a probe node over real DDS (loopback)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Wrench
from payloads import payload_values, with_payload
from rosutil import LATCHED, PATIENCE_S, SENSOR, NodeProcess, Probe, params_file
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from urdfs import inertia, joint, limit, link, robot, with_rotors

from rbd_ros.dynamics import Data, aba, crba, gravity, load_urdf, load_urdf_string, rnea
from rbd_ros.robots import ARM
from rbd_ros_interfaces.srv import ForwardDynamics, GravityTorques, InverseDynamics, MassMatrix

NAMES = [f"joint{k}" for k in range(1, 8)]
JOINTS = list(reversed(NAMES))  # the node's `joints` parameter: a different order on purpose
MODEL = load_urdf(ARM)
DATA = Data(MODEL)
Q = np.array([0.1, 0.5, -0.2, -1.1, 0.3, 0.8, -0.4])
V = np.array([0.2, -0.1, 0.3, 0.05, -0.2, 0.1, 0.4])
EFFORT = np.array([1.0, -20.0, 0.5, 12.0, -0.2, -1.0, 0.1])
NODE = "/rbd_dynamics"


@pytest.fixture(scope="module")
def node(ros: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    params = params_file(tmp_path_factory.mktemp("p") / "p.yaml", "rbd_dynamics",
                         {"robot_description": ARM.read_text(), "joints": JOINTS})
    proc = NodeProcess("rbd_ros.nodes.dynamics_node", "--params-file", str(params))
    yield proc
    out = proc.stop()
    print(out)


def joint_state(stamp_s: float, names: Sequence[str] = NAMES,
                q: Sequence[float] | np.ndarray = Q, v: Sequence[float] | np.ndarray = V,
                effort: Sequence[float] | np.ndarray = EFFORT) -> JointState:
    msg = JointState(name=list(names), position=list(q), velocity=list(v), effort=list(effort))
    msg.header.stamp = Time(sec=int(stamp_s), nanosec=round((stamp_s % 1) * 1e9))
    return msg


def by_name(msg: JointState) -> np.ndarray:
    return np.array([msg.effort[msg.name.index(n)] for n in NAMES])


def drive(probe: Probe, msgs: list[JointState], done: Callable[[], object],
          also: Callable[[], None] = lambda: None) -> bool:
    """Publish the messages, each from a publisher of its own (as several drivers would),
    again and again since discovery takes a moment (and ``also()`` each time), until done()."""
    pubs = [probe.node.create_publisher(JointState, "/joint_states", SENSOR) for _ in msgs]

    def publish_then_check() -> bool:
        also()
        for pub, m in zip(pubs, msgs, strict=True):
            pub.publish(m)
        return bool(done())

    ok = probe.spin_until(publish_then_check)
    for pub in pubs:
        probe.node.destroy_publisher(pub)
    return ok


def test_topics_carry_the_models_torques_and_accelerations(node: NodeProcess,
                                                           probe: Probe) -> None:
    grav = probe.listen(JointState, f"{NODE}/gravity_torques")
    grav_cmd = probe.listen(Float64MultiArray, f"{NODE}/gravity_command")
    accel = probe.listen(JointTrajectory, f"{NODE}/predicted_accelerations")
    ext = probe.listen(JointState, f"{NODE}/external_torques_from_acceleration")
    ff = probe.listen(JointState, f"{NODE}/feedforward_torques")
    ff_cmd = probe.listen(Float64MultiArray, f"{NODE}/feedforward_command")
    cmd = np.array([3.0, -25.0, 1.0, 10.0, 0.5, -1.5, 0.2])  # in NAMES order
    cmd_pub = probe.node.create_publisher(Float64MultiArray, "/effort_commands", 10)
    traj_pub = probe.node.create_publisher(JointTrajectory, "/desired_trajectory", 10)
    pd, vd, ad = Q + 0.1, V * 2, np.linspace(-1, 1, 7)
    traj = JointTrajectory(joint_names=NAMES, points=[JointTrajectoryPoint(
        positions=list(pd), velocities=list(vd), accelerations=list(ad),
        time_from_start=Duration(sec=0))])

    def send_inputs() -> None:
        cmd_pub.publish(Float64MultiArray(data=list(cmd[[NAMES.index(j) for j in JOINTS]])))
        traj_pub.publish(traj)

    assert probe.sent_to_us(*(f"{NODE}/{t}" for t in (
        "gravity_torques", "gravity_command", "predicted_accelerations",
        "external_torques_from_acceleration", "feedforward_torques", "feedforward_command")))
    # the command and the trajectory again with each state, until every output has come
    assert drive(probe, [joint_state(100.5)], lambda: bool(grav and accel and ext and ff
                                                            and grav_cmd and ff_cmd),
                 send_inputs)
    g = gravity(MODEL, DATA, Q)
    np.testing.assert_allclose(by_name(grav[-1]), g, atol=1e-9)
    assert grav[-1].header.stamp.sec == 100 and grav[-1].header.stamp.nanosec == 500_000_000
    np.testing.assert_allclose(grav_cmd[-1].data, g[[NAMES.index(j) for j in JOINTS]], atol=1e-9)
    pt = accel[-1].points[0]
    want = aba(MODEL, DATA, Q, V, cmd)
    np.testing.assert_allclose([pt.accelerations[accel[-1].joint_names.index(n)] for n in NAMES],
                               want, atol=1e-9)
    # the same velocities every time: the measured acceleration is zero; the external torque
    # is what the model needs beyond the measured effort
    np.testing.assert_allclose(by_name(ext[-1]), rnea(MODEL, DATA, Q, V, 0 * V) - EFFORT,
                               atol=1e-9)
    tau_ff = rnea(MODEL, DATA, pd, vd, ad)
    np.testing.assert_allclose(by_name(ff[-1]), tau_ff, atol=1e-9)
    np.testing.assert_allclose(ff_cmd[-1].data, tau_ff[[NAMES.index(j) for j in JOINTS]],
                               atol=1e-9)


def test_partial_and_reordered_messages_from_several_publishers(node: NodeProcess,
                                                                probe: Probe) -> None:
    grav = probe.listen(JointState, f"{NODE}/gravity_torques")
    q2 = Q + 0.3
    first, second = NAMES[:3][::-1], NAMES[3:]
    msgs = [joint_state(200.0, first, q2[[NAMES.index(n) for n in first]], [], []),
            joint_state(200.001, [*second, "some_other_robot_joint"],
                        [*q2[3:], 1.0], [], [])]
    want = gravity(MODEL, DATA, q2)
    assert drive(probe, msgs, lambda: bool(grav) and np.allclose(by_name(grav[-1]), want,
                                                                 atol=1e-9))


def test_a_burst_of_joint_states_is_not_dropped(node: NodeProcess, probe: Probe) -> None:
    """20 states sent back to back, as a driver that stalled and caught up would: the
    sensor-data profile's 5-deep queue would keep the last 5; every one is answered."""
    grav = probe.listen(JointState, f"{NODE}/gravity_torques", 100)
    pub = probe.node.create_publisher(JointState, "/joint_states", SENSOR)
    assert drive(probe, [joint_state(500.0)], lambda: bool(grav))  # connected both ways
    assert probe.spin_until(lambda: pub.get_subscription_count() > 0)
    grav.clear()
    for k in range(20):
        pub.publish(joint_state(600.0 + k / 1000, q=Q + k / 100))
    def burst() -> list[int]:
        return [round(m.header.stamp.nanosec / 1e6) for m in grav if m.header.stamp.sec == 600]

    probe.spin_until(lambda: len(burst()) >= 20)
    assert burst() == list(range(20))
    last = next(m for m in reversed(grav) if m.header.stamp.sec == 600)
    np.testing.assert_allclose(by_name(last), gravity(MODEL, DATA, Q + 0.19), atol=1e-9)


def test_services_answer_and_reject_with_reasons(node: NodeProcess, probe: Probe) -> None:
    order = [NAMES[k] for k in (3, 0, 6, 1, 5, 2, 4)]
    perm = [NAMES.index(n) for n in order]
    a = np.linspace(0.5, -0.5, 7)
    w = Wrench()
    w.force.z, w.torque.x = -20.0, 0.5
    res = probe.call(InverseDynamics, f"{NODE}/inverse_dynamics", InverseDynamics.Request(
        joint_names=order, positions=list(Q[perm]), velocities=list(V[perm]),
        accelerations=list(a[perm]), wrench_links=["tool"], wrenches=[w]))
    assert res.success, res.message
    f_ext = MODEL.link_wrenches({"tool": np.array([0, 0, -20.0, 0.5, 0, 0])})
    np.testing.assert_allclose(res.efforts, rnea(MODEL, DATA, Q, V, a, f_ext)[perm], atol=1e-9)
    assert list(res.joint_names) == order

    tau = np.linspace(-3, 3, 7)
    res = probe.call(ForwardDynamics, f"{NODE}/forward_dynamics", ForwardDynamics.Request(
        joint_names=order, positions=list(Q[perm]), velocities=list(V[perm]),
        efforts=list(tau[perm]), include_friction=True))
    assert res.success, res.message
    np.testing.assert_allclose(res.accelerations,
                               aba(MODEL, DATA, Q, V, tau, friction=True)[perm], atol=1e-9)

    res = probe.call(MassMatrix, f"{NODE}/mass_matrix", MassMatrix.Request(
        joint_names=NAMES, positions=list(Q)))
    assert res.success
    np.testing.assert_allclose(np.reshape(res.mass_matrix, (7, 7)), crba(MODEL, DATA, Q),
                               atol=1e-12)
    res = probe.call(GravityTorques, f"{NODE}/gravity_torques", GravityTorques.Request(
        joint_names=NAMES, positions=list(Q)))
    assert res.success
    np.testing.assert_allclose(res.efforts, gravity(MODEL, DATA, Q), atol=1e-12)

    nan_wrench = Wrench()
    nan_wrench.force.x = float("nan")
    q, extra, short = list(Q), [*NAMES, "elbow"], [*NAMES[:6], "elbow"]
    bad = [  # every service: a wrong size, an unknown joint, and what is peculiar to it
        (GravityTorques, GravityTorques.Request(joint_names=NAMES, positions=q[:6]),
         "positions has 6 entries for 7 joint names"),
        (GravityTorques, GravityTorques.Request(joint_names=extra, positions=[*q, 0.0]),
         "unknown joints ['elbow']"),
        (GravityTorques, GravityTorques.Request(joint_names=NAMES[:6], positions=q[:6]),
         "missing joints ['joint7']"),
        (GravityTorques, GravityTorques.Request(joint_names=NAMES),  # answered q = 0 before
         "positions has 0 entries for 7 joint names: a position is required"),
        (MassMatrix, MassMatrix.Request(joint_names=NAMES),
         "positions has 0 entries for 7 joint names: a position is required"),
        (ForwardDynamics, ForwardDynamics.Request(joint_names=NAMES, efforts=[1.0] * 7),
         "positions has 0 entries for 7 joint names: a position is required"),
        (InverseDynamics, InverseDynamics.Request(joint_names=NAMES, velocities=q),
         "positions has 0 entries for 7 joint names: a position is required"),
        (GravityTorques, GravityTorques.Request(joint_names=NAMES, positions=[*q[:6], np.nan]),
         "positions contains NaN or inf"),
        (MassMatrix, MassMatrix.Request(joint_names=NAMES, positions=q[:3]),
         "positions has 3 entries for 7 joint names"),
        (MassMatrix, MassMatrix.Request(joint_names=short, positions=q),
         "unknown joints ['elbow']"),
        (ForwardDynamics, ForwardDynamics.Request(joint_names=NAMES, positions=q,
                                                  efforts=[1.0] * 8),
         "efforts has 8 entries for 7 joint names"),
        (ForwardDynamics, ForwardDynamics.Request(joint_names=short, positions=q),
         "unknown joints ['elbow']"),
        (InverseDynamics, InverseDynamics.Request(joint_names=NAMES, positions=q,
                                                  velocities=q[:6]),
         "velocities has 6 entries for 7 joint names"),
        (InverseDynamics, InverseDynamics.Request(joint_names=extra, positions=[*q, 0.0]),
         "unknown joints ['elbow']"),
        (InverseDynamics, InverseDynamics.Request(joint_names=[*NAMES, "joint1"],
                                                  positions=[*q, 0.0]),
         "joint names repeat: ['joint1']"),
        (InverseDynamics, InverseDynamics.Request(joint_names=NAMES, positions=q,
                                                  accelerations=[np.inf] * 7),
         "accelerations contains NaN or inf"),
        (InverseDynamics, InverseDynamics.Request(joint_names=NAMES, positions=q,
                                                  wrench_links=["tool"], wrenches=[]),
         "1 wrench_links for 0 wrenches"),
        (InverseDynamics, InverseDynamics.Request(joint_names=NAMES, positions=q,
                                                  wrench_links=["no_such_link"], wrenches=[w]),
         "no link 'no_such_link'"),
        (InverseDynamics, InverseDynamics.Request(joint_names=NAMES, positions=q,
                                                  wrench_links=["tool"], wrenches=[nan_wrench]),
         "the wrench on link 'tool' must be 6 finite numbers"),
    ]
    names = {GravityTorques: "gravity_torques", MassMatrix: "mass_matrix",
             ForwardDynamics: "forward_dynamics", InverseDynamics: "inverse_dynamics"}
    for srv, req, reason in bad:
        res = probe.call(srv, f"{NODE}/{names[srv]}", req)
        assert not res.success and reason in res.message, (srv, res.message)
    assert node.alive()


def test_bad_input_is_dropped_and_the_node_keeps_running(node: NodeProcess,
                                                         probe: Probe) -> None:
    grav = probe.listen(JointState, f"{NODE}/gravity_torques")
    bad_urdf = probe.node.create_publisher(String, "/robot_description", LATCHED)
    probe.spin_until(lambda: bad_urdf.get_subscription_count() > 0)
    bad_urdf.publish(String(data="<robot name='broken'><link name='a'>"))
    nan_q = Q.copy()
    nan_q[2] = np.nan
    inf_v = V.copy()
    inf_v[0] = np.inf
    bad = [joint_state(300.0, q=nan_q), joint_state(300.1, v=inf_v),
           joint_state(300.2, q=Q[:5])]  # 5 positions for 7 names
    # the bad ones and then a good one from one publisher, until the good one is answered
    # (one writer's messages come in order): the last good model answers it, after the bad
    # ones were refused
    q3 = Q - 0.2
    want = gravity(MODEL, DATA, q3)
    pub = probe.node.create_publisher(JointState, "/joint_states", SENSOR)
    assert probe.spin_until(lambda: pub.get_subscription_count() > 0)

    def bad_then_good() -> bool:
        for m in bad:
            pub.publish(m)
        pub.publish(joint_state(301.0, q=q3))
        return bool(grav) and np.allclose(by_name(grav[-1]), want, atol=1e-9)

    assert probe.spin_until(bad_then_good)
    assert node.alive()
    assert all(np.all(np.isfinite(m.effort)) for m in grav)
    assert not any(m.header.stamp.sec == 300 for m in grav), "a bad message was used"
    # a bad URDF set as a parameter is refused with a reason
    res = probe.set_parameter(NODE, "robot_description", "<robot")
    assert not res.successful and "not well-formed XML" in res.reason
    res = probe.set_parameter(NODE, "joints", ["joint1", "wrist"])
    assert not res.successful and "wrist" in res.reason
    assert node.alive()


def test_description_published_after_start_up_is_picked_up(ros: None, probe: Probe,
                                                            tmp_path: Path) -> None:
    """And the joint states that came before it (a driver started first, a replay) are answered
    once it is in, each of them."""
    late = NodeProcess("rbd_ros.nodes.dynamics_node", "-r", "__ns:=/late")
    try:
        req = GravityTorques.Request(joint_names=NAMES, positions=list(Q))
        res = probe.call(GravityTorques, "/late/rbd_dynamics/gravity_torques", req)
        assert not res.success and "no model yet" in res.message
        answers = probe.listen(JointState, "/late/rbd_dynamics/gravity_torques", 100)
        states = probe.node.create_publisher(JointState, "/late/joint_states", SENSOR)
        pub = probe.node.create_publisher(String, "/late/robot_description", LATCHED)
        # everything matched first: the held states wait EARLY_S (5 s) for the description
        assert probe.spin_until(lambda: states.get_subscription_count() > 0
                                and pub.get_subscription_count() > 0)
        assert probe.sent_to_us("/late/rbd_dynamics/gravity_torques")
        stamps = [100.0 + 0.002 * k for k in range(30)]
        for t in stamps:
            states.publish(joint_state(t))
            probe.spin_for(0.002)
        assert not answers  # held: no model to answer them with
        pub.publish(String(data=ARM.read_text()))
        assert probe.spin_until(lambda: len(answers) >= len(stamps)), len(answers)
        assert [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in answers] == \
            pytest.approx(stamps, abs=1e-9)
        np.testing.assert_allclose(by_name(answers[-1]), gravity(MODEL, DATA, Q), atol=1e-12)
        assert probe.spin_until(lambda: probe.call(
            GravityTorques, "/late/rbd_dynamics/gravity_torques", req).success)
        res = probe.call(GravityTorques, "/late/rbd_dynamics/gravity_torques", req)
        np.testing.assert_allclose(res.efforts, gravity(MODEL, DATA, Q), atol=1e-12)
    finally:
        print(late.stop())


def test_floating_base_robot(ros: None, probe: Probe, tmp_path: Path) -> None:
    """A quadruped with a free-flyer root: the base stays at the origin, at rest."""
    from rbd_ros.robots import QUADRUPED

    model = load_urdf(QUADRUPED, floating_base=True)
    names = [j.name for j in model.joints if j.kind == "revolute"]
    params = params_file(tmp_path / "p.yaml", "/quad/rbd_dynamics", {
        "robot_description": QUADRUPED.read_text(), "floating_base": True})
    quad = NodeProcess("rbd_ros.nodes.dynamics_node", "-r", "__ns:=/quad", "--params-file",
                       str(params))
    try:
        grav = probe.listen(JointState, "/quad/rbd_dynamics/gravity_torques")
        q = np.linspace(-0.5, 0.5, 12)
        pub = probe.node.create_publisher(JointState, "/quad/joint_states", SENSOR)
        msg = JointState(name=names, position=list(q))

        def publish_then_check() -> bool:
            pub.publish(msg)
            return bool(grav)

        assert probe.spin_until(publish_then_check)
        want = gravity(model, Data(model), np.r_[model.neutral()[:7], q])[6:]
        got = np.array([grav[-1].effort[grav[-1].name.index(n)] for n in names])
        np.testing.assert_allclose(got, want, atol=1e-9)
    finally:
        print(quad.stop())


@pytest.mark.parametrize("args, reason", [
    (["-p", "gravity:=[0.0, 1.0]"], "gravity must be 3 finite numbers"),
    (["-p", "gravity:=up"], "expecting type 'DOUBLE_ARRAY'"),
    (["-p", "joint_states_qos:=fast"], "joint_states_qos must be one of"),
    (["-p", "publish_rate:=-1.0"], "publish_rate out of range Min: 0.0"),
    (["-r", "joint_states:=/9 bad"], "Couldn't parse remap rule"),
])
def test_a_bad_configuration_stops_with_its_reason(ros: None, args: list[str],
                                                   reason: str) -> None:
    proc = NodeProcess("rbd_ros.nodes.dynamics_node", *args)
    out = proc.proc.communicate(timeout=PATIENCE_S)[0]
    assert proc.proc.returncode == 2, out
    assert reason in out and "Traceback" not in out, out


def test_publish_rate_follows_sim_time(ros: None, probe: Probe, tmp_path: Path) -> None:
    """use_sim_time: a 100 Hz publish rate counts /clock's seconds, not the wall's: nothing
    while the clock stands, one answer for each 10 ms that /clock steps."""
    from rosgraph_msgs.msg import Clock

    params = params_file(tmp_path / "p.yaml", "/sim/rbd_dynamics", {
        "robot_description": ARM.read_text(), "use_sim_time": True, "publish_rate": 100.0,
        "joint_state_timeout": 60.0})  # (the driver's pace here is the machine's)
    sim = NodeProcess("rbd_ros.nodes.dynamics_node", "-r", "__ns:=/sim", "--params-file",
                      str(params))
    try:
        grav = probe.listen_sent(JointState, "/sim/rbd_dynamics/gravity_torques")
        states = probe.node.create_publisher(JointState, "/sim/joint_states", SENSOR)
        clock = probe.node.create_publisher(Clock, "/clock", 10)
        # (its /diagnostics are on the simulation's clock too: the graph's match is waited for)
        assert probe.spin_until(lambda: states.get_subscription_count() > 0
                                and clock.get_subscription_count() > 0 and probe.matched())
        for _ in range(50):  # a second of wall time, the simulation's clock not started
            states.publish(joint_state(7.0))
            probe.spin_for(0.02)
        assert not grav, "published on the wall clock"

        def at(ns: int) -> Callable[[], None]:
            def tick() -> None:
                clock.publish(Clock(clock=Time(sec=ns // 10**9, nanosec=ns % 10**9)))
                states.publish(joint_state(7.0))
            return tick

        # the clock starts at 10 s and steps 10 ms at a time until the answers reach the probe,
        # then 50 more steps, each waited for: one answer each
        ns = [10 * 10**9]

        def step() -> bool:
            ns[0] += 10_000_000
            at(ns[0])()
            return bool(grav)

        assert probe.spin_until(step)
        start = len(grav)
        for k in range(1, 51):
            step()
            want = start + k

            def answered(want: int = want) -> bool:
                return len(grav) >= want

            assert probe.spin_until(answered), (k, len(grav))
        for _ in range(25):  # the clock stands again, half a second of wall time
            at(ns[0])()
            probe.spin_for(0.02)
        # a clock step fires the timer once at most: never more answers than steps (a timer on
        # the wall's clock gives ~100 a second of wall time)
        steps = (ns[0] - 10 * 10**9) // 10_000_000
        assert len(grav) <= steps, f"{len(grav)} answers to {steps} steps of the clock"
        np.testing.assert_allclose(by_name(grav[-1][1]), gravity(MODEL, DATA, Q), atol=1e-9)
        assert grav[-1][1].header.stamp.sec == 7
    finally:
        print(sim.stop())


def _joint(name: str, kind: str, parent: str, child: str, extra: str = "") -> str:
    return joint(name, kind, parent, child, xyz="0 0 0.2", extra=limit() + extra)


#: a floating joint to a carrier, an arm joint, and a gripper finger that mimics it
GRIPPER = robot(*(link(n, 1, com="0 0 0.1", inertia=inertia(0.01, 0.01, 0.01))
                  for n in ("world", "cart", "a", "b")),
                _joint("mount", "floating", "world", "cart"),
                _joint("j1", "revolute", "cart", "a"),
                _joint("finger", "revolute", "a", "b", '<mimic joint="j1" multiplier="-0.5"/>'),
                name="carrier")


def test_mimic_and_floating_joints_in_requests(ros: None, probe: Probe, tmp_path: Path) -> None:
    """One rule for /joint_states and the services: a mimic joint may be named, its value is
    not used and it is not answered for; a floating joint named says what it is."""
    params = params_file(tmp_path / "p.yaml", "/grip/rbd_dynamics",
                         {"robot_description": GRIPPER})
    grip = NodeProcess("rbd_ros.nodes.dynamics_node", "-r", "__ns:=/grip", "--params-file",
                       str(params))

    model = load_urdf_string(GRIPPER)
    try:
        srv = "/grip/rbd_dynamics/gravity_torques"
        res = probe.call(GravityTorques, srv, GravityTorques.Request(
            joint_names=["finger", "j1"], positions=[123.0, 0.4]))
        assert res.success, res.message
        assert list(res.joint_names) == ["j1"]
        want = gravity(model, Data(model), np.r_[model.neutral()[:-1], 0.4])[-1:]
        np.testing.assert_allclose(res.efforts, want, atol=1e-12)
        res = probe.call(GravityTorques, srv, GravityTorques.Request(
            joint_names=["mount", "j1"], positions=[0.0, 0.4]))
        assert not res.success
        assert "['mount'] are floating joints" in res.message and "['j1']" in res.message
    finally:
        print(grip.stop())


def test_a_new_robot_description_swaps_everything(ros: None, probe: Probe,
                                                  tmp_path: Path) -> None:
    """A 7-joint arm swapped for a 6-joint one: commands in `joints` order (six joints, which
    both models have) are taken by the new model, and the robot_description parameter shows
    the model in use."""
    from rcl_interfaces.srv import GetParameters

    six = ARM.read_text().replace('<joint name="joint7" type="revolute">',
                                  '<joint name="joint7" type="fixed">')
    node = NodeProcess("rbd_ros.nodes.dynamics_node", "-r", "__ns:=/swap", "-p",
                       f"joints:=[{', '.join(NAMES[:6])}]")
    try:
        desc = probe.node.create_publisher(String, "/swap/robot_description", LATCHED)
        desc.publish(String(data=ARM.read_text()))
        req = GravityTorques.Request(joint_names=NAMES, positions=list(Q))
        assert probe.spin_until(lambda: probe.call(
            GravityTorques, "/swap/rbd_dynamics/gravity_torques", req).success)
        desc.publish(String(data=six))
        req6 = GravityTorques.Request(joint_names=NAMES[:6], positions=list(Q[:6]))
        assert probe.spin_until(lambda: probe.call(
            GravityTorques, "/swap/rbd_dynamics/gravity_torques", req6).success)
        got = probe.call(GetParameters, "/swap/rbd_dynamics/get_parameters",
                         GetParameters.Request(names=["robot_description"]))
        assert got.values[0].string_value == six
        # commands for the new robot, in its order, are taken: ABA predicts with them
        accel = probe.listen(JointTrajectory, "/swap/rbd_dynamics/predicted_accelerations")
        cmd = probe.node.create_publisher(Float64MultiArray, "/swap/effort_commands", 10)
        states = probe.node.create_publisher(JointState, "/swap/joint_states", SENSOR)
        tau = np.linspace(-1.0, 1.0, 6)
        state = JointState(name=NAMES[:6], position=list(Q[:6]), velocity=[0.0] * 6)

        def send() -> bool:
            cmd.publish(Float64MultiArray(data=list(tau)))
            states.publish(state)
            return bool(accel)

        assert probe.spin_until(send), "commands for the new robot were dropped"
        m6 = load_urdf_string(six)
        want = aba(m6, Data(m6), Q[:6], np.zeros(6), tau)
        np.testing.assert_allclose(accel[-1].points[0].accelerations, want, atol=1e-9)
    finally:
        print(node.stop())


def test_outputs_at_todays_stamps_are_exact(ros: None, probe: Probe, tmp_path: Path) -> None:
    """Positions only at 1 kHz with stamps of today on a motion of constant acceleration: the
    node's external torques from acceleration equal RNEA at the exact backward differences minus
    the measured effort, and the feed-forward is sampled at the exact time."""
    params = params_file(tmp_path / "p.yaml", "/ns/rbd_dynamics", {
        "robot_description": ARM.read_text(), "joint_states_qos": "reliable"})
    node = NodeProcess("rbd_ros.nodes.dynamics_node", "-r", "__ns:=/ns", "--params-file",
                       str(params))
    try:
        ext = probe.listen(JointState, "/ns/rbd_dynamics/external_torques_from_acceleration", 100)
        ff = probe.listen(JointState, "/ns/rbd_dynamics/feedforward_torques", 100)
        pub = probe.node.create_publisher(JointState, "/ns/joint_states", 100)
        traj = probe.node.create_publisher(JointTrajectory, "/ns/desired_trajectory", 10)
        t0 = 1_795_000_000 * 10**9 + 123_456_789  # ns; as float seconds good to ~238 ns
        c, acc = np.linspace(0.5, 2.0, 7), np.linspace(-3.0, 3.0, 7)
        # a trajectory from Q to Q + 0.5 over one second from t0, from rest to rest (quintic:
        # the minimum-jerk motion): the feed-forward at stamp t is RNEA on its closed form
        pts = [JointTrajectoryPoint(positions=list(Q + d), velocities=[0.0] * 7,
                                    accelerations=[0.0] * 7, time_from_start=Duration(sec=s))
               for d, s in ((0.0, 0), (0.5, 1))]
        msg = JointTrajectory(joint_names=NAMES, points=pts)
        msg.header.stamp = Time(sec=t0 // 10**9, nanosec=t0 % 10**9)
        assert probe.spin_until(lambda: pub.get_subscription_count() > 0
                                and traj.get_subscription_count() > 0)
        assert probe.sent_to_us("/ns/rbd_dynamics/external_torques_from_acceleration",
                                "/ns/rbd_dynamics/feedforward_torques")
        # the trajectory in: a state before it, sent (with it) until its feed-forward comes
        early = JointState(name=NAMES, position=list(Q), effort=list(EFFORT))
        early.header.stamp = Time(sec=t0 // 10**9 - 1, nanosec=t0 % 10**9)

        def primed() -> bool:
            traj.publish(msg)
            pub.publish(early)
            return bool(ff)

        assert probe.spin_until(primed)
        probe.spin_until(lambda: bool(ext))
        ext.clear()
        ff.clear()
        sent = {}
        for k in range(30):
            t = k * 1e-3
            stamp = t0 + k * 1_000_000
            q = Q + c * t + 0.5 * acc * t * t
            m = JointState(name=NAMES, position=list(q), effort=list(EFFORT))
            m.header.stamp = Time(sec=stamp // 10**9, nanosec=stamp % 10**9)
            pub.publish(m)
            sent[stamp] = q
            probe.spin_for(0.01)
        probe.spin_until(lambda: len([m for m in ext if m.header.stamp.sec >= t0 // 10**9])
                         >= 30 and len([m for m in ff if m.header.stamp.sec >= t0 // 10**9]) >= 30)
        probe.spin_for(0.2)
        ext[:] = [m for m in ext if m.header.stamp.sec >= t0 // 10**9]
        ff[:] = [m for m in ff if m.header.stamp.sec >= t0 // 10**9]
        assert len(ext) == 30 and len(ff) == 30
        for m in ext[2:-1]:
            stamp = m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
            t = (stamp - t0) * 1e-9
            v_est = c + acc * (t - 0.5e-3)  # backward differences, exactly
            want = rnea(MODEL, DATA, sent[stamp], v_est, acc) - EFFORT
            np.testing.assert_allclose(by_name(m), want, rtol=1e-9, atol=1e-9)
        for m in ff:
            stamp = m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
            x = (stamp - t0) / 1e9
            q = Q + 0.5 * (10 * x**3 - 15 * x**4 + 6 * x**5)
            v = np.full(7, 0.5 * (30 * x**2 - 60 * x**3 + 30 * x**4))
            a = np.full(7, 0.5 * (60 * x - 180 * x**2 + 120 * x**3))
            np.testing.assert_allclose(by_name(m), rnea(MODEL, DATA, q, v, a), rtol=0,
                                       atol=1e-11)
    finally:
        print(node.stop())


def test_urdf_warnings_reach_rosout(ros: None, probe: Probe, tmp_path: Path) -> None:
    """What is odd in a URDF is said through the node's logger, so on /rosout (it went to
    Python's stderr, where nothing in ROS sees it)."""
    from rcl_interfaces.msg import Log
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    noisy = ARM.read_text().replace(  # the tool's inertia, as a CAD export can leave it
        'ixx="0.000426667" ixy="0" ixz="0" iyy="0.000426667" iyz="0" izz="0.000426667"',
        'ixx="1e-7" ixy="5e-8" ixz="0" iyy="1e-8" iyz="0" izz="1e-7"')
    assert noisy != ARM.read_text()
    logs = probe.listen(Log, "/rosout", QoSProfile(
        depth=1000, reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL))
    params = params_file(tmp_path / "p.yaml", "/noisy/rbd_dynamics", {"robot_description": noisy})
    node = NodeProcess("rbd_ros.nodes.dynamics_node", "-r", "__ns:=/noisy", "--params-file",
                       str(params))
    try:
        def warned() -> bool:
            return any(m.name == "noisy.rbd_dynamics" and m.level == Log.WARN
                       and "link 'tool' has an inertia that is not positive semi-definite"
                       in m.msg for m in logs)

        assert probe.spin_until(warned), [m.msg for m in logs]
        res = probe.call(GravityTorques, "/noisy/rbd_dynamics/gravity_torques",
                         GravityTorques.Request(joint_names=NAMES, positions=list(Q)))
        assert res.success  # loaded as given
    finally:
        out = node.stop()
    assert "Traceback" not in out


def test_a_drivers_names_are_mapped_and_missing_joints_held(ros: None, probe: Probe,
                                                             tmp_path: Path) -> None:
    """joint_rename maps a driver's names (a prefix here) to the URDF's; held_joints stands in
    for a joint no message carries; effort_scales turn a driver's motor currents into torques
    (joint 2's here: the external torque of a robot at rest under gravity is then zero)."""
    params = params_file(tmp_path / "p.yaml", "/map/rbd_dynamics", {
        "robot_description": ARM.read_text(), "joint_rename": ["fer_joint*=joint*"],
        "held_joints": ["joint7"], "held_positions": [0.3],
        "effort_scale_joints": ["joint2"], "effort_scales": [8.0]})
    node = NodeProcess("rbd_ros.nodes.dynamics_node", "-r", "__ns:=/map", "--params-file",
                       str(params))
    try:
        grav = probe.listen(JointState, "/map/rbd_dynamics/gravity_torques")
        ext = probe.listen(JointState, "/map/rbd_dynamics/external_torques", 500)
        pub = probe.node.create_publisher(JointState, "/map/joint_states", SENSOR)
        g = gravity(MODEL, DATA, np.r_[Q[:6], 0.3])
        sent = [0]

        def send() -> bool:  # at rest, 100 Hz in stamps: the observer's residual would grow
            sent[0] += 1
            pub.publish(joint_state(1000.0 + 0.01 * sent[0], [f"fer_joint{k}" for k in
                                                               range(1, 7)],
                                    Q[:6], np.zeros(6), g[:6] / [1, 8, 1, 1, 1, 1]))
            return len(ext) > 100

        assert probe.spin_until(send)
        np.testing.assert_allclose(by_name(grav[-1]), g, atol=1e-12)
        external = dict(zip(ext[-1].name, ext[-1].effort, strict=True))
        np.testing.assert_allclose([external[n] for n in NAMES[:6]], 0.0, atol=1e-6)
    finally:
        print(node.stop())
    for args, said in (
            (["-p", "joint_rename:=['fer_*=panda']"], "write OLD=NEW, or OLD_*=NEW_*"),
            (["-p", "effort_scale_joints:=['joint2']", "-p", "effort_scales:=[0.0]"],
             "effort scales must be finite and not zero: {'joint2': 0.0}"),
            (["-p", "effort_scale_joints:=['joint2']"],
             "effort_scale_joints has 1 names, effort_scales 0 values")):
        bad = NodeProcess("rbd_ros.nodes.dynamics_node", *args)
        out = bad.proc.communicate(timeout=PATIENCE_S)[0]
        assert bad.proc.returncode == 2 and said in out, out


def test_a_double_ctrl_c_ends_a_working_node_quietly(probe: Probe, tmp_path: Path) -> None:
    """Ctrl-C in a terminal running `ros2 launch` reaches the node twice (the terminal's
    process group, then launch), at any moment of its work: four nodes computing from 500 Hz
    of joint_states each get two SIGINTs, at a different moment and gap. Each ends with exit 0,
    no traceback, no FATAL. (With rclpy's signal handler a KeyboardInterrupt raised inside a
    callback of the EventsExecutor aborted the node, rc -6, in 4 of 40 idle stops; a publish on
    the context it had shut down logged a FATAL.)"""
    import signal
    import time

    params = params_file(tmp_path / "p.yaml", "/**",
                         {"robot_description": ARM.read_text(), "joints": JOINTS})
    spaces = [f"/stop{k}" for k in range(4)]
    nodes = [NodeProcess("rbd_ros.nodes.dynamics_node", "--params-file", str(params),
                         "-r", f"__ns:={ns}") for ns in spaces]
    try:
        pubs = [probe.node.create_publisher(JointState, f"{ns}/joint_states", SENSOR)
                for ns in spaces]
        heard = [probe.listen(JointState, f"{ns}{NODE}/gravity_torques") for ns in spaces]

        def publish() -> bool:
            for pub in pubs:
                pub.publish(joint_state(time.time()))
            return all(heard)

        assert probe.spin_until(publish), "a node never computed"
        start = time.monotonic()
        for k, node in enumerate(nodes):
            while time.monotonic() < start + 0.3 * k:
                publish()
                probe.spin_for(0.002)
            node.proc.send_signal(signal.SIGINT)
            time.sleep((0.0, 0.005, 0.02, 0.05)[k])
            node.proc.send_signal(signal.SIGINT)
        outs = [node.proc.communicate(timeout=PATIENCE_S)[0] for node in nodes]
    finally:
        for node in nodes:
            node.proc.kill()
    for node, out in zip(nodes, outs, strict=True):
        assert node.proc.returncode == 0 and "Traceback" not in out and "FATAL" not in out, out


def test_a_payload_set_at_runtime_is_in_every_torque(node: NodeProcess, probe: Probe) -> None:
    """``payload_link`` and ``payload`` set while the node runs: its gravity torques are
    Pinocchio's for the URDF with the payload as a link of its own (the payload set first is
    carried once its link is); a payload that is not a rigid body's, or on a link the model
    lacks, is refused with the reason and changes nothing; an empty one takes it off."""
    pm = pin.buildModelFromXML(with_payload())
    req = GravityTorques.Request(joint_names=NAMES, positions=list(Q))

    def answer() -> np.ndarray:
        res = probe.call(GravityTorques, f"{NODE}/gravity_torques", req)
        assert res.success, res.message
        return np.array(res.efforts)

    bare = answer()
    plain = pin.buildModelFromXML(ARM.read_text())
    np.testing.assert_allclose(bare, pin.computeGeneralizedGravity(plain, plain.createData(), Q),
                               atol=1e-9)  # (no payload left on the node by another test)
    assert probe.set_parameter(NODE, "payload", payload_values()).successful  # carried once its link is set
    np.testing.assert_allclose(answer(), bare, atol=1e-12)
    assert probe.set_parameter(NODE, "payload_link", "link7").successful
    carried = answer()
    np.testing.assert_allclose(carried, pin.computeGeneralizedGravity(pm, pm.createData(), Q),
                               atol=1e-9)
    assert np.abs(carried - bare).max() > 1.0  # 1.7 kg at the wrist
    for values, said in (([*payload_values()[:4], 1.0, 0.0, 0.0, 1.0, 0.0, 3.0],
                          "triangle inequality"), (payload_values()[:9], "10 numbers")):
        result = probe.set_parameter(NODE, "payload", values)
        assert not result.successful and said in result.reason, result.reason
        np.testing.assert_allclose(answer(), carried, atol=1e-12)  # the last good one stays
    result = probe.set_parameter(NODE, "payload_link", "gripper")
    assert not result.successful and "no link 'gripper'" in result.reason
    assert probe.set_parameter(NODE, "payload", []).successful
    np.testing.assert_allclose(answer(), bare, atol=1e-12)
    assert probe.set_parameter(NODE, "payload_link", "").successful  # the node as it was
    assert node.alive()


def test_rotor_inertias_in_the_urdf_are_in_the_services_answers(ros: None, probe: Probe,
                                                                tmp_path: Path) -> None:
    """A robot_description whose transmissions give each motor a rotor (Drake's tags): the
    node's inverse dynamics, forward dynamics and mass matrix are Pinocchio's with the same
    armature (rotor inertia x gear ratio^2, 0.05-0.35 kg m^2 here)."""
    armature = np.linspace(0.05, 0.35, 7)
    urdf = with_rotors(ARM.read_text(), {n: (x / 1e4, 100.0) for n, x in zip(
        NAMES, armature.tolist(), strict=True)})
    pm = pin.buildModelFromXML(ARM.read_text())
    pm.gravity.linear = MODEL.gravity.copy()
    assert list(pm.names[1:]) == NAMES
    pm.armature = armature
    pd = pm.createData()
    params = params_file(tmp_path / "p.yaml", "/rotors/rbd_dynamics", {"robot_description": urdf})
    node = NodeProcess("rbd_ros.nodes.dynamics_node", "-r", "__ns:=/rotors", "--params-file",
                       str(params))
    try:
        a, tau, at = np.linspace(0.5, -0.5, 7), np.linspace(-3, 3, 7), "/rotors/rbd_dynamics"
        req = InverseDynamics.Request(joint_names=NAMES, positions=list(Q), velocities=list(V),
                                      accelerations=list(a))
        assert probe.spin_until(lambda: probe.call(
            InverseDynamics, f"{at}/inverse_dynamics", req).success)
        res = probe.call(InverseDynamics, f"{at}/inverse_dynamics", req)
        np.testing.assert_allclose(res.efforts, pin.rnea(pm, pd, Q, V, a), atol=1e-9)
        assert np.abs(np.asarray(res.efforts) - rnea(MODEL, DATA, Q, V, a)).max() > 0.1
        res = probe.call(ForwardDynamics, f"{at}/forward_dynamics", ForwardDynamics.Request(
            joint_names=NAMES, positions=list(Q), velocities=list(V), efforts=list(tau)))
        np.testing.assert_allclose(res.accelerations, pin.aba(pm, pd, Q, V, tau), atol=1e-9)
        res = probe.call(MassMatrix, f"{at}/mass_matrix", MassMatrix.Request(
            joint_names=NAMES, positions=list(Q)))
        M = pin.crba(pm, pd, Q)
        np.testing.assert_allclose(np.reshape(res.mass_matrix, (7, 7)),
                                   np.triu(M) + np.triu(M, 1).T, atol=1e-12)
    finally:
        print(node.stop())


def test_a_desired_trajectory_beyond_the_limits_is_said_on_status(node: NodeProcess,
                                                                  probe: Probe) -> None:
    """A desired trajectory that swings joint2 0.3 rad in 0.25 s from rest (cubic), about
    twice its 87 N m: ~/status names the joint and when, once the motion starts (the limit
    check's own figures are tested against Pinocchio in test/dynamics/test_limits.py); an
    empty trajectory, which stops the feed-forward, clears it."""
    status = probe.listen(String, f"{NODE}/status", LATCHED)
    ff = probe.listen(JointState, f"{NODE}/feedforward_torques")
    pub = probe.node.create_publisher(JointTrajectory, "/desired_trajectory", 10)
    target = Q.copy()
    target[1] += 0.3
    fast = JointTrajectory(joint_names=NAMES, points=[JointTrajectoryPoint(
        positions=list(target), velocities=[0.0] * 7,
        time_from_start=Duration(sec=0, nanosec=250_000_000))])
    said = "the desired_trajectory asks beyond the URDF's limits: "

    def saying() -> bool:
        return bool(ff and status and said in status[-1].data)

    assert drive(probe, [joint_state(1100.0, v=[0.0] * 7)], saying,
                 lambda: pub.publish(fast)), status[-1].data if status else "no status"
    assert re.search(r"joint2 at 0\.\d{3} s: effort \S+ N m over its URDF limit 87 N m",
                     status[-1].data), status[-1].data
    assert drive(probe, [joint_state(1101.0, v=[0.0] * 7)],
                 lambda: bool(status) and said not in status[-1].data,
                 lambda: pub.publish(JointTrajectory(joint_names=NAMES)))
    probe.node.destroy_publisher(pub)
