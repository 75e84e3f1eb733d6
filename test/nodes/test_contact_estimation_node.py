"""The floating-base node estimating its contacts (``estimate_contacts``), in its own process
over loopback DDS: the bundled quadruped trotting in the Pinocchio simulation of
testkit/quadsim.py, its joint states (efforts with noise) and odometry published as a robot's
driver and state estimator publish them, reliable (the node's ``joint_states_qos``), at most
50 states ahead of its answers: every state reaches it, at any speed of the machine."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from quadsim import Run, simulate, stand, trot
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosutil import PATIENCE_S, NodeProcess, Probe, params_file
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from rbd_ros.dynamics.estimation.contact_estimation import PROPOSAL_FLOOR
from rbd_ros.robots import QUADRUPED
from rbd_ros_interfaces.msg import ActiveContacts

CONFIG = Path(__file__).resolve().parents[2] / "config" / "floating_base.yaml"
NODE = "/rbd_floating_base"
FEET = [f"{leg}_foot" for leg in ("LF", "RF", "LH", "RH")]
POSTURE = {f"{x}_{j}": a for x in ("LF", "RF", "LH", "RH") for j, a in (("HFE", 0.6),
                                                                        ("KFE", -1.2))}
START = 400  # s: the stamps of the run (after the first test's)
RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


@pytest.fixture(scope="module")
def node(ros: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    extra = params_file(tmp_path_factory.mktemp("p") / "estimate.yaml", "rbd_floating_base",
                        {"robot_description": QUADRUPED.read_text(), "estimate_contacts": True,
                         "joint_states_qos": "reliable",
                         # a state waits up to 10 s (the most allowed) for its odometry:
                         # our new writers match on our side first, and under load the node's
                         # odometry reader can match a run's writer over 50 ms after its joint
                         # states reader (a CI run's first 51 states were all refused as stale,
                         # none answered, and the run waited for answers in vain)
                         "input_timeout": 10.0})
    proc = NodeProcess("rbd_ros.nodes.floating_base_node", "--params-file", str(CONFIG),
                       "--params-file", str(extra))
    yield proc
    print(proc.stop())


@pytest.fixture(scope="module")
def run() -> Run:
    return simulate(str(QUADRUPED), FEET, POSTURE, trot(FEET), 1.2)


def stamp_of(msg: object) -> int:
    s = msg.header.stamp  # type: ignore[attr-defined]
    return int(s.sec) * 10**9 + int(s.nanosec)


def publish(probe: Probe, run: Run, start: int, answered: Callable[[], int]) -> None:
    """The run as joint states (efforts with noise of 2 % of their RMS) and odometry, stamped
    ``start`` s on: 1 kHz of data, each state sent once ``answered()`` (the node's answers so
    far) is at most 50 behind."""
    js = probe.node.create_publisher(JointState, "/joint_states", RELIABLE)
    od = probe.node.create_publisher(Odometry, "/odom", RELIABLE)
    assert probe.spin_until(lambda: js.get_subscription_count() > 0
                            and od.get_subscription_count() > 0)
    rng = np.random.default_rng(3)
    sigma = 0.02 * np.sqrt(np.mean(run.tau ** 2))
    for k, t in enumerate(run.t):
        ns = start * 10**9 + round(t * 1e9)
        o = Odometry()
        o.header.stamp.sec, o.header.stamp.nanosec = divmod(ns, 10**9)
        p, q, v = o.pose.pose.position, o.pose.pose.orientation, run.v[k]
        p.x, p.y, p.z = run.q[k, :3]
        q.x, q.y, q.z, q.w = run.q[k, 3:7]
        o.twist.twist.linear.x, o.twist.twist.linear.y, o.twist.twist.linear.z = v[:3]
        o.twist.twist.angular.x, o.twist.twist.angular.y, o.twist.twist.angular.z = v[3:6]
        msg = JointState(name=run.joints, position=run.q[k, 7:].tolist(),
                         velocity=v[6:].tolist(),
                         effort=(run.tau[k] + rng.normal(0, sigma, len(run.joints))).tolist())
        msg.header.stamp = o.header.stamp
        def caught_up(k: int = k) -> bool:
            return k - answered() <= 50

        assert probe.spin_until(caught_up), (k, answered())
        od.publish(o)
        js.publish(msg)
    # every message delivered before the writers go (a writer deleted at once can take its
    # last unacknowledged messages with it: the run's last states, now and then, under load)
    from rclpy.duration import Duration

    for pub in (od, js):
        assert pub.wait_for_all_acked(Duration(seconds=PATIENCE_S))
        probe.node.destroy_publisher(pub)


def test_bad_estimation_parameters_are_refused(node: NodeProcess, probe: Probe) -> None:
    res = probe.set_parameter(NODE, "contact_threshold", 0.0)
    assert not res.successful and "fraction of the robot's weight" in res.reason
    res = probe.set_parameter(NODE, "contact_links", [])
    assert not res.successful and "at least one contact link" in res.reason
    status = probe.listen(String, f"{NODE}/status")
    js = probe.node.create_publisher(JointState, "/joint_states", RELIABLE)
    od = probe.node.create_publisher(Odometry, "/odom", RELIABLE)

    def step() -> bool:  # no effort yet (the first state): said, the node lives on
        o = Odometry()
        o.header.stamp.sec = 300
        o.pose.pose.orientation.w = 1.0
        od.publish(o)
        names = [f"{x}_{j}" for x in ("LF", "RF", "LH", "RH") for j in ("HAA", "HFE", "KFE")]
        m = JointState(name=names, position=[POSTURE.get(n, 0.0) for n in names],
                       velocity=[0.0] * len(names))
        m.header.stamp.sec = 300
        js.publish(m)
        return any("no effort" in s.data for s in status)

    assert probe.spin_until(step), [s.data for s in status]
    assert node.alive()


def test_the_node_finds_a_trotting_quadrupeds_contacts(node: NodeProcess, probe: Probe,
                                                       run: Run) -> None:
    got = probe.listen(ActiveContacts, f"{NODE}/estimated_contacts", 2000)
    force = probe.listen(WrenchStamped, f"{NODE}/contact/LF_foot/estimated_force", 2000)
    # the node's writers matched to our new readers first: under load that can take seconds,
    # and what it answers before is lost (the first 50 ms, which the checks below read)
    assert probe.sent_to_us(f"{NODE}/estimated_contacts", f"{NODE}/contact/LF_foot/estimated_force")
    publish(probe, run, START, lambda: len(got))
    last = START * 10**9 + round(run.t[-1] * 1e9)
    assert probe.spin_until(lambda: bool(got) and stamp_of(got[-1]) >= last), \
        f"{len(got)} estimates, the last at {stamp_of(got[-1]) if got else None}"
    index = {START * 10**9 + round(t * 1e9): k for k, t in enumerate(run.t)}
    seen = [(index[stamp_of(m)], set(m.links)) for m in got if stamp_of(m) in index]
    # every state once the estimator has settled, in order
    assert [k for k, _ in seen] == list(range(seen[0][0], len(run.t))), len(seen)
    right = np.mean([[(f in links) == run.contact[k, j] for j, f in enumerate(FEET)]
                     for k, links in seen])
    assert right >= 0.97, right
    # nothing decided before the estimator settled (5.6 ms after it starts), then the robot
    # standing on its four feet until the gait lifts the first (50 ms)
    assert run.t[min(seen)[0]] >= 0.0055, min(seen)
    early = [links for k, links in seen if run.t[k] < 0.05]
    assert early and all(links == set(FEET) for links in early), early
    # the estimated force on a foot in mid-stance is its true force
    mid = [(index[stamp_of(m)], m.wrench.force) for m in force if stamp_of(m) in index]
    j = FEET.index("LF_foot")
    stance = [(k, f) for k, f in mid if run.force[k, j, 2] > 40.0]
    assert stance
    err = [abs(f.z - run.force[k, j, 2]) for k, f in stance]
    assert np.median(err) < 5.0, np.median(err)
    assert force[-1].header.frame_id == "odom"


def test_the_node_proposes_a_threshold_from_the_first_second_the_robot_stands(
        node: NodeProcess, probe: Probe) -> None:
    """A robot standing for over a second: /diagnostics gives the contact_threshold proposed
    from it, as the core proposes it (between the floor and a third of a foot's load)."""
    from diagnostic_msgs.msg import DiagnosticArray

    standing = simulate(str(QUADRUPED), FEET, POSTURE, stand(FEET), 1.4)
    health = probe.listen(DiagnosticArray, "/diagnostics")
    base = probe.listen(WrenchStamped, f"{NODE}/base_wrench", 2000)
    assert probe.sent_to_us(f"{NODE}/base_wrench")
    publish(probe, standing, START + 100, lambda: len(base))

    def proposed() -> float | None:
        for msg in health:
            for status in msg.status:
                for kv in status.values:
                    if status.name.startswith("rbd_floating_base") and \
                            kv.key == "contact_threshold proposed":
                        return float(kv.value)
        return None

    assert probe.spin_until(lambda: proposed() is not None), \
        [kv.key for m in health for s in m.status for kv in s.values]
    assert PROPOSAL_FLOOR <= (proposed() or 0.0) < 0.1
