"""The floating-base node in its own process, on the bundled quadruped, over loopback DDS."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from geometry_msgs.msg import AccelStamped, PointStamped, PolygonStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.publisher import Publisher
from rosutil import SENSOR, NodeProcess, Probe, params_file
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String

from rbd_ros.dynamics import Data, load_urdf
from rbd_ros.dynamics.algorithm.floating import forward_dynamics, inverse_dynamics
from rbd_ros.dynamics.contact.balance import Support
from rbd_ros.dynamics.contact.contacts import Contact, solve
from rbd_ros.robots import QUADRUPED
from rbd_ros_interfaces.msg import ActiveContacts, Balance
from rbd_ros_interfaces.srv import CentroidalDynamics, FloatingBaseDynamics

CONFIG = Path(__file__).resolve().parents[2] / "config" / "floating_base.yaml"
NODE = "/rbd_floating_base"
MODEL = load_urdf(QUADRUPED, floating_base=True)
DATA = Data(MODEL)
NAMES = [j.name for j in MODEL.joints if j.kind == "revolute"]
FEET = [f"{leg}_foot" for leg in ("LF", "RF", "LH", "RH")]
Q_JOINTS = np.tile([0.0, 0.4, -0.8], 4)
WEIGHT = 21.0 * 9.81


@pytest.fixture(scope="module")
def node(ros: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    urdf = params_file(tmp_path_factory.mktemp("p") / "urdf.yaml", "rbd_floating_base",
                       {"robot_description": QUADRUPED.read_text()})
    proc = NodeProcess("rbd_ros.nodes.floating_base_node", "--params-file", str(CONFIG),
                       "--params-file", str(urdf))
    yield proc
    print(proc.stop())


def odom(stamp: int, z: float = 0.5, nan: bool = False, nanosec: int = 0) -> Odometry:
    msg = Odometry()
    msg.header.stamp.sec, msg.header.stamp.nanosec = stamp, nanosec
    msg.pose.pose.position.z = float("nan") if nan else z
    msg.pose.pose.orientation.w = 1.0
    return msg


def states(stamp: int) -> JointState:
    msg = JointState(name=NAMES, position=list(Q_JOINTS), velocity=[0.0] * 12,
                     effort=[0.0] * 12)
    msg.header.stamp.sec = stamp
    return msg


def run_until(probe: Probe, done: Callable[[], object], stamp: int,
              extra: Sequence[tuple[Publisher[Any], object]] = ()) -> bool:
    js = probe.node.create_publisher(JointState, "/joint_states", SENSOR)
    od = probe.node.create_publisher(Odometry, "/odom", SENSOR)

    def step() -> bool:
        for pub, msg in extra:
            pub.publish(msg)
        od.publish(odom(stamp))
        js.publish(states(stamp))
        return bool(done())

    ok = probe.spin_until(step)
    probe.node.destroy_publisher(js)
    probe.node.destroy_publisher(od)
    return ok


def q_full() -> np.ndarray:
    q: np.ndarray = np.r_[0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0, Q_JOINTS]
    return q


def test_contact_topics_exist_before_the_first_state(node: NodeProcess, probe: Probe) -> None:
    """A subscriber that joins before anything happens misses nothing."""
    assert probe.spin_until(lambda: all(
        probe.node.count_publishers(f"{NODE}/contact/{f}/{what}") == 1
        for f in FEET for what in ("wrench", "center_of_pressure")))


def test_standing_on_four_feet(node: NodeProcess, probe: Probe) -> None:
    base = probe.listen(WrenchStamped, f"{NODE}/base_wrench")
    feet = {f: probe.listen(WrenchStamped, f"{NODE}/contact/{f}/wrench") for f in FEET}
    tau = probe.listen(JointState, f"{NODE}/joint_torques")
    status = probe.listen(String, f"{NODE}/status")
    assert run_until(probe, lambda: base and tau and status and all(feet.values()), 10)
    assert status[-1].data == "ok"
    assert base[-1].header.frame_id == "base" and base[-1].header.stamp.sec == 10
    np.testing.assert_allclose(base[-1].wrench.force.z, WEIGHT, rtol=1e-9)
    z = np.zeros(MODEL.nv)
    want = solve(MODEL, DATA, q_full(), z, z, [Contact(f) for f in FEET], 0.7)
    for f in FEET:  # published in the foot's own frame
        w = feet[f][-1].wrench.force
        np.testing.assert_allclose([w.x, w.y, w.z], want.wrenches[f][:3], atol=1e-7)
    np.testing.assert_allclose(want.com_wrench[:3], [0, 0, WEIGHT], atol=1e-9 * WEIGHT)
    got = np.array([tau[-1].effort[tau[-1].name.index(n)] for n in NAMES])
    np.testing.assert_allclose(got, want.tau, atol=1e-7)


def test_active_contacts_flight_and_impossible_motion(node: NodeProcess, probe: Probe) -> None:
    status = probe.listen(String, f"{NODE}/status")
    flight = probe.listen(AccelStamped, f"{NODE}/flight/base_acceleration")
    active = probe.node.create_publisher(ActiveContacts, "/active_contacts", 10)
    imu = probe.node.create_publisher(Imu, "/imu", SENSOR)
    probe.spin_until(lambda: active.get_subscription_count() > 0)
    # (an IMU in free fall: once one has spoken the node waits for it, and this test's second
    # part leaves one that did)
    free_fall = Imu()
    free_fall.header.stamp.sec = 20
    assert run_until(probe, lambda: bool(flight and status) and status[-1].data == "flight", 20,
                     [(active, ActiveContacts(links=[])), (imu, free_fall)])
    a_base, _ = forward_dynamics(MODEL, DATA, q_full(), np.zeros(MODEL.nv), np.zeros(12))
    got = flight[-1].accel
    np.testing.assert_allclose([got.linear.x, got.linear.y, got.linear.z,
                                got.angular.x, got.angular.y, got.angular.z], a_base, atol=1e-9)
    assert status[-1].data == "flight"
    # an IMU that says the base falls faster than gravity: the feet would have to pull
    falling = Imu()
    falling.header.stamp.sec = 30
    falling.linear_acceleration.z = -8.0
    assert run_until(probe, lambda: status and "pull" in status[-1].data, 30,
                     [(active, ActiveContacts(links=FEET)), (imu, falling)])
    assert node.alive()


def test_service_and_bad_input(node: NodeProcess, probe: Probe) -> None:
    req = FloatingBaseDynamics.Request(joint_names=NAMES, positions=list(Q_JOINTS),
                                       contact_links=FEET)
    req.base_pose.position.z = 0.5
    req.base_pose.orientation.w = 1.0
    res = probe.call(FloatingBaseDynamics, f"{NODE}/floating_base_dynamics", req)
    assert res.success, res.message
    z = np.zeros(MODEL.nv)
    want = solve(MODEL, DATA, q_full(), z, z, [Contact(f) for f in FEET], 0.7)
    np.testing.assert_allclose(res.efforts, want.tau, atol=1e-7)
    assert list(res.contact_links) == FEET
    for f, w in zip(FEET, res.contact_wrenches, strict=True):  # link frames, as the topics
        np.testing.assert_allclose([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y,
                                    w.torque.z], want.wrenches[f], atol=1e-7)
    req.contact_links = ["LF_foot", "LH_foot"]  # the left feet cannot hold the body
    res = probe.call(FloatingBaseDynamics, f"{NODE}/floating_base_dynamics", req)
    assert not res.success and "point contacts carry no torque" in res.message
    req.contact_links = ["LF_knee"]
    res = probe.call(FloatingBaseDynamics, f"{NODE}/floating_base_dynamics", req)
    assert not res.success and "not contact links" in res.message
    # unknown contact links are refused when set, with the reason
    res = probe.set_parameter(NODE, "contact_links", ["LF_foot", "LF_toe", "LH_foot", "RH_foot"])
    assert not res.successful and "LF_toe" in res.reason
    res = probe.set_parameter(NODE, "friction_coefficient", -1.0)
    assert not res.successful and "friction" in res.reason
    # NaN in odometry and joint states: dropped, nothing non-finite published, still alive; a
    # good state sent after them from the same publishers (in order) is answered
    base = probe.listen(WrenchStamped, f"{NODE}/base_wrench")
    od = probe.node.create_publisher(Odometry, "/odom", SENSOR)
    js = probe.node.create_publisher(JointState, "/joint_states", SENSOR)
    imu = probe.node.create_publisher(Imu, "/imu", SENSOR)  # an earlier test started one
    assert probe.spin_until(lambda: bool(od.get_subscription_count() and js.get_subscription_count()
                                         and imu.get_subscription_count()))
    bad = states(40)
    bad.position = [float("nan")] * 12

    def bad_then_good() -> bool:
        od.publish(odom(40, nan=True))
        js.publish(bad)
        od.publish(odom(41))
        imu.publish(at_rest(41))
        js.publish(states(41))
        return any(m.header.stamp.sec == 41 for m in base)

    assert probe.spin_until(bad_then_good)
    assert node.alive()
    assert not any(m.header.stamp.sec == 40 for m in base)
    assert all(np.isfinite(m.wrench.force.z) for m in base)


def test_odometry_is_paired_with_each_state_by_stamp(node: NodeProcess, probe: Probe) -> None:
    """The base pose of a state's own stamp: interpolated between the odometry before and after
    it, even when the later odometry arrives after the state (input_timeout 10 s here: how long
    it comes after is this machine's pace); stale odometry is refused."""
    com = probe.listen(PointStamped, f"{NODE}/center_of_mass")
    status = probe.listen(String, f"{NODE}/status")
    od = probe.node.create_publisher(Odometry, "/odom", SENSOR)
    js = probe.node.create_publisher(JointState, "/joint_states", SENSOR)
    imu = probe.node.create_publisher(Imu, "/imu", SENSOR)  # an earlier test started one
    assert probe.spin_until(lambda: bool(od.get_subscription_count() and js.get_subscription_count()
                                         and imu.get_subscription_count()))
    assert probe.sent_to_us(f"{NODE}/center_of_mass", f"{NODE}/status")
    from rbd_ros.dynamics.algorithm.kinematics import center_of_mass, placements

    def com_at(z: float) -> np.ndarray:
        q = q_full()
        q[2] = z
        return center_of_mass(MODEL, placements(MODEL, DATA, q))

    def base(t: int, z: float, nanosec: int = 0) -> None:
        od.publish(odom(t, z=z, nanosec=nanosec))
        imu.publish(at_rest(t, nanosec))

    def answered() -> dict[int, Any]:
        return {m.header.stamp.sec: m for m in com if m.header.stamp.nanosec == 250_000_000}

    assert probe.set_parameter(NODE, "input_timeout", 10.0).successful
    try:
        for k in range(5):  # states at 50.x25 s, odometry at 50.x00 s and 50.x50 s
            t = 50 + k
            base(t, 0.5)
            probe.spin_for(0.02)
            js.publish(_stamped(t, 250_000_000))
            probe.spin_for(0.02)  # the state waits: no odometry after it yet
            base(t, 0.6, 500_000_000)
            def came(t: int = t) -> bool:
                return t in answered()

            assert probe.spin_until(came), [s.data for s in status]
    finally:
        assert probe.set_parameter(NODE, "input_timeout", 0.05).successful
    for m in answered().values():  # halfway in time: z = 0.55
        np.testing.assert_allclose([m.point.x, m.point.y, m.point.z], com_at(0.55), atol=1e-12)
    # odometry a second older than the state, and nothing newer: refused (after input_timeout,
    # 50 ms), said in ~/status
    status.clear()
    base(60, 0.5)
    probe.spin_for(0.05)
    js.publish(_stamped(61, 0))
    assert probe.spin_until(lambda: any("stale odometry" in m.data for m in status))
    assert not any(m.header.stamp.sec == 61 for m in com)


def at_rest(sec: int, nanosec: int = 0) -> Imu:
    """An IMU on a base at rest: its specific force is gravity's opposite."""
    msg = Imu()
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    msg.linear_acceleration.z = 9.81
    return msg


def _stamped(sec: int, nanosec: int) -> JointState:
    msg = states(sec)
    msg.header.stamp.nanosec = nanosec
    return msg


def test_bad_quaternions_are_refused(node: NodeProcess, probe: Probe) -> None:
    req = FloatingBaseDynamics.Request(joint_names=NAMES, positions=list(Q_JOINTS),
                                       contact_links=FEET)
    req.base_pose.orientation.w = 1.5
    res = probe.call(FloatingBaseDynamics, f"{NODE}/floating_base_dynamics", req)
    assert not res.success and "unit quaternion" in res.message
    # odometry with it: dropped, so the state's odometry is missing and it is not answered
    status = probe.listen(String, f"{NODE}/status")
    base = probe.listen(WrenchStamped, f"{NODE}/base_wrench")
    od = probe.node.create_publisher(Odometry, "/odom", SENSOR)
    js = probe.node.create_publisher(JointState, "/joint_states", SENSOR)
    assert probe.spin_until(
        lambda: bool(od.get_subscription_count() and js.get_subscription_count()))
    assert probe.sent_to_us(f"{NODE}/status")
    bad = odom(70)
    bad.pose.pose.orientation.w = 1.5

    def send() -> bool:
        od.publish(bad)
        js.publish(states(70))
        probe.spin_for(0.1)
        return any("odometry" in m.data for m in status)

    assert probe.spin_until(send), [m.data for m in status]
    assert not any(m.header.stamp.sec == 70 for m in base)
    assert node.alive()


def test_service_in_flight(node: NodeProcess, probe: Probe) -> None:
    rng = np.random.default_rng(1)
    qdd = rng.normal(size=12)
    req = FloatingBaseDynamics.Request(joint_names=NAMES, positions=list(Q_JOINTS),
                                       velocities=[0.1] * 12, accelerations=list(qdd))
    req.base_pose.position.z, req.base_pose.orientation.w = 0.5, 1.0
    res = probe.call(FloatingBaseDynamics, f"{NODE}/floating_base_dynamics", req)
    assert res.success and res.message == "flight"
    v = np.r_[np.zeros(6), [0.1] * 12]
    a_base, tau = inverse_dynamics(MODEL, DATA, q_full(), v, qdd)
    got = res.base_acceleration
    np.testing.assert_allclose([got.linear.x, got.linear.y, got.linear.z, got.angular.x,
                                got.angular.y, got.angular.z], a_base, atol=1e-9)
    np.testing.assert_allclose(res.efforts, tau, atol=1e-9)
    # and the identity: ABA with those torques gives back the accelerations
    np.testing.assert_allclose(forward_dynamics(MODEL, DATA, q_full(), v, tau)[1], qdd,
                               atol=1e-8)
    req.base_acceleration.linear.z = -9.81  # in flight the base's acceleration is not an input
    res = probe.call(FloatingBaseDynamics, f"{NODE}/floating_base_dynamics", req)
    assert not res.success and "leave base_acceleration zero" in res.message


def test_contact_parameters_per_link(node: NodeProcess, probe: Probe) -> None:
    """contacts.<link>.*: a round foot's radius moves the contact point and the torques."""
    assert probe.set_parameter(NODE, "contacts.LF_foot.radius", 0.02).successful
    req = FloatingBaseDynamics.Request(joint_names=NAMES, positions=list(Q_JOINTS),
                                       contact_links=FEET)
    req.base_pose.position.z, req.base_pose.orientation.w = 0.5, 1.0
    req.base_acceleration.linear.x = 2.0  # the feet push sideways: the radius matters
    res = probe.call(FloatingBaseDynamics, f"{NODE}/floating_base_dynamics", req)
    assert res.success, res.message
    z, a = np.zeros(MODEL.nv), np.zeros(MODEL.nv)
    a[0] = 2.0
    contacts = [Contact(f, radius=0.02 if f == "LF_foot" else 0.0) for f in FEET]
    want = solve(MODEL, DATA, q_full(), z, a, contacts, 0.7)
    np.testing.assert_allclose(res.efforts, want.tau, atol=1e-7)
    flat = solve(MODEL, DATA, q_full(), z, a, [Contact(f) for f in FEET], 0.7)
    assert np.abs(flat.tau - want.tau).max() > 1e-3
    # a sole that is half a sole is refused with the reason, and the node keeps the old one
    res = probe.set_parameter(NODE, "contacts.RF_foot.half_length", 0.1)
    assert not res.successful and "half_width > 0" in res.reason
    assert probe.call(FloatingBaseDynamics, f"{NODE}/floating_base_dynamics", req).success
    assert probe.set_parameter(NODE, "contacts.LF_foot.radius", 0.0).successful


def test_a_stale_joint_stops_the_answers_and_says_so(node: NodeProcess, probe: Probe) -> None:
    """Front and hind legs from two publishers; the hind legs' stops: no answer once its
    joints are over input_timeout old, ~/status and /diagnostics name them; it resumes. An IMU
    at rest with each state: once an IMU has spoken (an earlier test's) the node awaits it."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    base = probe.listen(WrenchStamped, f"{NODE}/base_wrench")
    status = probe.listen(String, f"{NODE}/status")
    diagnostics = probe.listen(DiagnosticArray, "/diagnostics")
    front, hind = NAMES[:6], NAMES[6:]
    pubs = [probe.node.create_publisher(JointState, "/joint_states", SENSOR) for _ in "fh"]
    od = probe.node.create_publisher(Odometry, "/odom", SENSOR)
    imu = probe.node.create_publisher(Imu, "/imu", SENSOR)
    t = [30 * 10**9]

    def step(with_hind: bool) -> bool:
        """One state (its odometry and IMU first); False, for ``step(...) or done``."""
        t[0] += 5_000_000
        sec, ns = divmod(t[0], 10**9)
        od.publish(odom(sec, nanosec=ns))
        imu.publish(at_rest(sec, ns))
        for pub, names in zip(pubs, (front, hind) if with_hind else (front,), strict=False):
            msg = JointState(name=names, position=[float(Q_JOINTS[NAMES.index(n)]) for n in names],
                             velocity=[0.0] * 6, effort=[0.0] * 6)
            msg.header.stamp.sec, msg.header.stamp.nanosec = sec, ns
            pub.publish(msg)
        probe.spin_for(0.005)
        return False

    def ours(d: DiagnosticArray) -> DiagnosticStatus | None:
        return next((s for s in d.status if s.name == "rbd_floating_base: health"), None)

    assert probe.spin_until(lambda: step(True) or bool(base and status
                                                        and status[-1].data == "ok"))
    hind_last = t[0]
    assert probe.spin_until(lambda: step(False) or status[-1].data.startswith(
        f"stale joint_states: {hind[0]} (last at")), status[-1].data
    assert probe.spin_until(lambda: step(False) or any(
        (h := ours(d)) is not None and h.level == DiagnosticStatus.ERROR
        and "stale joint_states" in h.message for d in diagnostics)), diagnostics[-1:]
    back = t[0]
    assert probe.spin_until(lambda: step(True) or (any(ns_of(m) > back for m in base)
                                                    and status[-1].data == "ok"))
    # no state answered while the hind legs' joints were over input_timeout (50 ms) old
    late = [ns_of(m) - hind_last for m in base if hind_last + 50_000_000 < ns_of(m) <= back]
    assert not late, late


def ns_of(m: Any) -> int:
    return int(m.header.stamp.sec) * 10**9 + int(m.header.stamp.nanosec)


def xyz(p: Any) -> list[float]:
    return [p.x, p.y, p.z]


def test_balance_and_the_centroidal_momentum_matrix(node: NodeProcess, probe: Probe) -> None:
    """``~/balance`` for each answered state, as the core computes it for that state (whose
    physics test/dynamics/test_balance.py checks): standing, the capture point inside the four
    feet and ~/status "ok"; the base running forward at 3 m/s, the capture point outside and
    ~/status says a step is needed. ``~/centroidal_dynamics``: A_G with its columns named, in
    the request's joint order, and a wrong request refused."""
    balance = probe.listen(Balance, f"{NODE}/balance")
    zmp = probe.listen(PointStamped, f"{NODE}/balance/zmp")
    capture = probe.listen(PointStamped, f"{NODE}/balance/capture_point")
    polygon = probe.listen(PolygonStamped, f"{NODE}/balance/support_polygon")
    status = probe.listen(String, f"{NODE}/status")
    od = probe.node.create_publisher(Odometry, "/odom", SENSOR)
    js = probe.node.create_publisher(JointState, "/joint_states", SENSOR)
    imu = probe.node.create_publisher(Imu, "/imu", SENSOR)  # an earlier test started one
    assert probe.spin_until(lambda: bool(
        od.get_subscription_count() and js.get_subscription_count()
        and imu.get_subscription_count()))
    assert probe.sent_to_us(*(f"{NODE}/{x}" for x in (
        "balance", "balance/zmp", "balance/capture_point", "balance/support_polygon")))
    feet = [Contact(f) for f in FEET]
    support = Support(MODEL, feet)
    for sec, speed in ((80, 0.0), (90, 3.0)):
        def step(sec: int = sec, speed: float = speed) -> bool:
            msg = odom(sec)
            msg.twist.twist.linear.x = speed
            od.publish(msg)
            imu.publish(at_rest(sec))
            js.publish(states(sec))
            return any(m.header.stamp.sec == sec for m in balance)

        assert probe.spin_until(step), [m.data for m in status[-3:]]
        got = next(m for m in balance if m.header.stamp.sec == sec)
        v = np.zeros(MODEL.nv)
        v[0] = speed
        want = support.balance(solve(MODEL, DATA, q_full(), v, np.zeros(MODEL.nv), feet, 0.7))
        assert got.header.frame_id == "odom" and list(got.contacts) == FEET
        np.testing.assert_allclose(xyz(got.center_of_mass), want.com, atol=1e-9)
        np.testing.assert_allclose(xyz(got.center_of_mass_velocity), [speed, 0, 0], atol=1e-9)
        np.testing.assert_allclose(xyz(got.linear_momentum) + xyz(got.angular_momentum),
                                   want.momentum, atol=1e-9)
        np.testing.assert_allclose(xyz(got.linear_momentum_rate)
                                   + xyz(got.angular_momentum_rate), want.momentum_rate,
                                   atol=1e-7)
        assert got.zmp_defined and got.capture_point_defined and want.capture_point is not None
        assert want.zmp is not None
        np.testing.assert_allclose(xyz(got.zmp), want.zmp, atol=1e-9)
        np.testing.assert_allclose(xyz(got.capture_point), want.capture_point, atol=1e-9)
        np.testing.assert_allclose([xyz(p) for p in got.support_polygon], want.support_polygon,
                                   atol=1e-9)
        assert len(got.support_polygon) == 4
        # and for RViz, the same points (the polygon's in float32)
        def arrived(sec: int = sec) -> bool:
            return all(any(m.header.stamp.sec == sec for m in x) for x in (zmp, capture,
                                                                           polygon))

        assert probe.spin_until(lambda: step() and arrived())
        for x, want_point in ((zmp, want.zmp), (capture, want.capture_point)):
            m = next(m for m in x if m.header.stamp.sec == sec)
            assert m.header.frame_id == "odom"
            np.testing.assert_allclose(xyz(m.point), want_point, atol=1e-9)
        shape = next(m for m in polygon if m.header.stamp.sec == sec)
        np.testing.assert_allclose([xyz(p) for p in shape.polygon.points],
                                   want.support_polygon, atol=1e-6)
        np.testing.assert_allclose([got.ground_height, got.omega, got.zmp_margin,
                                    got.capture_point_margin],
                                   [want.ground_height, want.omega, want.zmp_margin,
                                    want.capture_point_margin], atol=1e-9)
        if speed:
            assert got.capture_point_margin < 0
        else:
            assert got.capture_point_margin > 0
        # ~/status of the states that follow (unstamped: the last one of this speed's)
        said = ("ok; the capture point is outside the support polygon: a step or a fall follows"
                if speed else "ok")

        def settled(said: str = said) -> bool:
            return step() and bool(status) and status[-1].data == said

        assert probe.spin_until(settled), status[-1:]
    # A_G by service, the request's joints reversed: the columns follow the request's order
    rng = np.random.default_rng(3)
    names, positions = NAMES[::-1], list(Q_JOINTS[::-1])
    twist, vel = rng.normal(size=6), rng.normal(size=12)
    req = CentroidalDynamics.Request(joint_names=names, positions=positions,
                                     velocities=list(vel))
    req.base_pose.position.z, req.base_pose.orientation.w = 0.5, 1.0
    (req.base_twist.linear.x, req.base_twist.linear.y, req.base_twist.linear.z,
     req.base_twist.angular.x, req.base_twist.angular.y, req.base_twist.angular.z) = twist
    res = probe.call(CentroidalDynamics, f"{NODE}/centroidal_dynamics", req)
    assert res.success, res.message
    assert list(res.velocity_names) == [*(f"base_{p}_{a}" for p in ("linear", "angular")
                                          for a in "xyz"), *names]
    A = np.array(res.matrix).reshape(6, 18)
    h = np.r_[xyz(res.linear_momentum), xyz(res.angular_momentum)]
    np.testing.assert_allclose(A @ np.r_[twist, vel], h, atol=1e-9)
    from rbd_ros.dynamics import centroidal

    v = np.r_[twist, vel[::-1]]
    want_c = centroidal(MODEL, DATA, q_full(), v)
    np.testing.assert_allclose(h, want_c.momentum, atol=1e-9)
    np.testing.assert_allclose(A[:, 6:], want_c.matrix[:, 6:][:, ::-1], atol=1e-9)
    np.testing.assert_allclose(xyz(res.center_of_mass), want_c.com, atol=1e-9)
    req.velocities = [0.0] * 3
    res = probe.call(CentroidalDynamics, f"{NODE}/centroidal_dynamics", req)
    assert not res.success and "velocities has 3 entries" in res.message, res.message
    assert node.alive()
