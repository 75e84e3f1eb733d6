"""The dynamics node beside a driver and a controller, each a real process or node over DDS:
a joint whose publisher dies stops the outputs, the command order comes from the controller
(never guessed), and commands are clamped to the URDF's effort limits."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rosutil import (
    LATCHED,
    PATIENCE_S,
    SENSOR,
    EffortController,
    NodeProcess,
    Probe,
    Process,
    params_file,
)
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from rbd_ros.dynamics import Data, gravity, load_urdf, load_urdf_string
from rbd_ros.robots import ARM

NAMES = [f"joint{k}" for k in range(1, 8)]
CONTROLLER_JOINTS = ["joint3", "joint1", "joint2", "joint7", "joint5", "joint4", "joint6"]
MODEL = load_urdf(ARM)
Q = np.array([0.1, 0.5, -0.2, -1.1, 0.3, 0.8, -0.4])
G = gravity(MODEL, Data(MODEL), Q)
RATE_S = 0.005  # the driver's period: 200 Hz
TIMEOUT_NS = 50_000_000  # joint_state_timeout's default


def state(stamp_ns: int, names: Sequence[str]) -> JointState:
    idx = [NAMES.index(n) for n in names]
    msg = JointState(name=list(names), position=list(Q[idx]), velocity=[0.0] * len(idx),
                     effort=[0.0] * len(idx))
    msg.header.stamp = Time(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
    return msg


def ns(msg: JointState) -> int:
    return int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)


class Driver:
    """An arm's driver (joints 1-6) and a gripper's (joint7), publishing separately at 200 Hz
    with today's stamps, while the probe spins."""

    def __init__(self, probe: Probe, ns_: str) -> None:
        self.probe = probe
        self.arm = probe.node.create_publisher(JointState, f"{ns_}/joint_states", SENSOR)
        self.gripper = probe.node.create_publisher(JointState, f"{ns_}/joint_states", SENSOR)
        self.last_gripper = 0

    def step(self, gripper: bool = True) -> None:
        t = time.time_ns()
        self.arm.publish(state(t, NAMES[:6]))
        if gripper:
            self.gripper.publish(state(t, NAMES[6:]))
            self.last_gripper = t
        self.probe.spin_for(RATE_S)

    def until(self, done: Callable[[], object], gripper: bool = True) -> bool:
        """Driving (the gripper too, if ``gripper``) until ``done()``, or PATIENCE_S."""
        end = time.monotonic() + PATIENCE_S
        while not done():
            if time.monotonic() > end:
                return False
            self.step(gripper)
        return True


def ours(msg: DiagnosticArray) -> DiagnosticStatus:
    """The dynamics node's status on /diagnostics."""
    return next(s for s in msg.status if s.name == "rbd_dynamics: health")


def start(tmp_path: Path, ns_: str, urdf: str, *args: str, **params: object) -> NodeProcess:
    p = params_file(tmp_path / f"{ns_.strip('/')}.yaml", f"{ns_}/rbd_dynamics",
                    {"robot_description": urdf, **params})
    return NodeProcess("rbd_ros.nodes.dynamics_node", "-r", f"__ns:={ns_}", *args,
                       "--params-file", str(p))


@pytest.fixture
def controller() -> Iterator[Process]:
    """The effort controller, its joints in CONTROLLER_JOINTS' order."""
    proc = EffortController(CONTROLLER_JOINTS)
    yield proc
    proc.stop()


def test_a_joint_whose_publisher_dies_stops_every_output(ros: None, probe: Probe,
                                                         tmp_path: Path) -> None:
    """The gripper's driver stops: no output is computed for an arm state stamped over
    ``joint_state_timeout`` after the gripper's last, none is published from the moment
    ~/status names the joint until it says ok again, and the outputs resume by themselves when
    the gripper comes back. Judged by stamps (the states' and the node's own publication times),
    never by how soon anything arrives."""
    node = start(tmp_path, "/stale", ARM.read_text(), joints=NAMES)
    try:
        grav = probe.listen_sent(JointState, "/stale/rbd_dynamics/gravity_torques")
        cmd = probe.listen_sent(Float64MultiArray, "/stale/rbd_dynamics/gravity_command")
        status = probe.listen_sent(String, "/stale/rbd_dynamics/status", LATCHED)
        diagnostics = probe.listen(DiagnosticArray, "/diagnostics")
        driver = Driver(probe, "/stale")
        assert probe.sent_to_us("/stale/rbd_dynamics/gravity_torques",
                                "/stale/rbd_dynamics/gravity_command")
        assert driver.until(lambda: grav and cmd), "no output while both drivers run"
        np.testing.assert_allclose(cmd[-1][1].data, G, atol=1e-9)
        # /diagnostics (1 Hz) with both drivers running: a second in good health, joint states
        # heard (under load this test's driver, a Python loop, can stall past
        # joint_state_timeout, and the node rightly warns for that second: a later one is
        # waited for)
        def fine() -> list[dict[str, str]]:
            return [values for h in map(ours, diagnostics) if h.level == DiagnosticStatus.OK
                    and float((values := {v.key: v.value for v in h.values}).get(
                        "joint_states rate (Hz)", 0)) > 0]

        assert driver.until(fine), [ours(d).message for d in diagnostics]
        values = fine()[0]
        assert values["model"] == "arm7" and values["joints"] == ", ".join(NAMES)
        assert values["command order"] == ", ".join(NAMES)

        def stale() -> bool:
            return "stale joint_states: joint7 (last at" in status[-1][1].data

        diagnostics.clear()
        assert driver.until(stale, gripper=False), status[-1][1].data
        died = driver.last_gripper
        assert "joint1" not in status[-1][1].data.split("the joint state")[0]
        assert driver.until(lambda: any(ours(d).level == DiagnosticStatus.ERROR and "joint7" in
                                        ours(d).message for d in diagnostics), gripper=False)
        back = time.time_ns()
        assert driver.until(lambda: status[-1][1].data == "ok" and grav[-1][0] > back), \
            "the outputs did not resume"
        # the status the gripper's death brought (a stall of this test's driver before it
        # can flap the status, and ~/status, latched, keeps one message: a flap's "ok" may
        # never reach us)
        went = next(t for t, m in status if t > died and "stale joint_states: joint7" in m.data)
        came = next(t for t, m in status if m.data == "ok" and t > went)
        late = [ns(m) - died for _, m in grav if died + TIMEOUT_NS < ns(m) < back]
        assert not late, f"arm states answered {late} ns after the gripper's last"
        for topic, box in (("gravity_torques", grav), ("gravity_command", cmd)):
            sent = [t for t, _ in box if went < t < came]
            assert not sent, f"{len(sent)} {topic} published while ~/status said stale"
        # every driver silent: the status says so, and how long the joint states have been
        # silent, over the timeout (said to the millisecond: 0.0501 s reads "0.050 s")
        assert probe.spin_until(lambda: "none for" in status[-1][1].data), status[-1][1].data
        quiet = float(status[-1][1].data.split("none for ")[1].split(" s")[0])
        assert quiet >= 0.05, status[-1][1].data
    finally:
        print(node.stop())


def test_the_command_order_comes_from_the_controller(ros: None, probe: Probe, tmp_path: Path,
                                                     controller: Process) -> None:
    """`joints` unset, effort_commands remapped to /effort_controller/commands: the
    *_command outputs come in that controller's `joints` order, read from its parameter."""
    node = start(tmp_path, "/ctl", ARM.read_text(), "-r",
                 "effort_commands:=/effort_controller/commands")
    try:
        cmd = probe.listen(Float64MultiArray, "/ctl/rbd_dynamics/gravity_command")
        grav = probe.listen(JointState, "/ctl/rbd_dynamics/gravity_torques")
        pub = probe.node.create_publisher(JointState, "/ctl/joint_states", SENSOR)

        def send() -> bool:  # until both outputs came (each matches the probe on its own)
            pub.publish(state(time.time_ns(), NAMES))
            return bool(cmd) and bool(grav)

        assert probe.spin_until(send), \
            f"{len(cmd)} gravity_command, {len(grav)} gravity_torques messages"
        want = [G[NAMES.index(j)] for j in CONTROLLER_JOINTS]
        np.testing.assert_allclose(cmd[-1].data, want, atol=1e-9)
        assert grav
    finally:
        print(node.stop())


def test_without_an_order_the_command_topics_stay_silent(ros: None, probe: Probe,
                                                         tmp_path: Path) -> None:
    """`joints` unset and no controller to ask: nothing on *_command (the by-name topics go
    on), and ~/status says what to set."""
    node = start(tmp_path, "/noorder", ARM.read_text())
    try:
        cmd = probe.listen(Float64MultiArray, "/noorder/rbd_dynamics/gravity_command")
        grav = probe.listen(JointState, "/noorder/rbd_dynamics/gravity_torques")
        status = probe.listen(String, "/noorder/rbd_dynamics/status", LATCHED)
        pub = probe.node.create_publisher(JointState, "/noorder/joint_states", SENSOR)

        def send() -> bool:
            pub.publish(state(time.time_ns(), NAMES))
            return len(grav) > 20

        assert probe.spin_until(send)
        assert not cmd
        # (the latched status may be handed over after the first outputs: wait for it)
        assert probe.spin_until(lambda: bool(status))
        assert "set the joints parameter" in status[-1].data, status
        assert "no joint order" in status[-1].data
    finally:
        print(node.stop())


def test_commands_are_clamped_to_the_effort_limits(ros: None, probe: Probe,
                                                   tmp_path: Path) -> None:
    """joint2's limit lowered under its gravity torque: ~/gravity_command holds it at the
    limit, ~/gravity_torques says the torque as computed, ~/status counts the clamps; with
    clamp_to_effort_limits false the command is as computed."""
    limit = 5.0
    urdf = ARM.read_text().replace('effort="87"', f'effort="{limit}"', 2).replace(
        f'effort="{limit}"', 'effort="87"', 1)  # joint2 only
    model = load_urdf_string(urdf)
    assert [j.effort for j in model.joints][:3] == [87.0, limit, 87.0]
    assert abs(G[1]) > limit
    node = start(tmp_path, "/clamp", urdf, joints=NAMES)
    try:
        cmd = probe.listen(Float64MultiArray, "/clamp/rbd_dynamics/gravity_command")
        grav = probe.listen(JointState, "/clamp/rbd_dynamics/gravity_torques")
        status = probe.listen(String, "/clamp/rbd_dynamics/status", LATCHED)
        pub = probe.node.create_publisher(JointState, "/clamp/joint_states", SENSOR)

        def send(done: Callable[[], object]) -> bool:
            pub.publish(state(time.time_ns(), NAMES))
            return bool(done())

        assert probe.spin_until(lambda: send(lambda: cmd and grav))
        want = G.copy()
        want[1] = np.sign(G[1]) * limit
        np.testing.assert_allclose(cmd[-1].data, want, atol=1e-9)
        np.testing.assert_allclose([grav[-1].effort[grav[-1].name.index(n)] for n in NAMES], G,
                                   atol=1e-9)
        assert probe.spin_until(lambda: send(lambda: status and "clamped" in status[-1].data)), \
            status
        assert f"joint2 asked {G[1]:.4g}, limit 5" in status[-1].data, status[-1].data
        assert probe.set_parameter("/clamp/rbd_dynamics", "clamp_to_effort_limits",
                                   False).successful
        # (commands sent before the change may still be on their way)
        assert probe.spin_until(lambda: send(lambda: abs(cmd[-1].data[1]) > limit))
        np.testing.assert_allclose(cmd[-1].data, G, atol=1e-9)
    finally:
        print(node.stop())
