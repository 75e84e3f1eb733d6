"""The live demo: computed-torque feed-forward and control on the bundled arm.

Processes on this machine (DDS on loopback, a domain of their own): the simulator (our ABA at
1 kHz), the dynamics node, and this one, a PD controller that tracks a sinusoidal trajectory,
first alone and then with the dynamics node's feed-forward torques (RNEA at the desired motion)
added; then the trajectory controller node follows the same sine, sent as a
FollowJointTrajectory goal, by computed torque. It prints the tracking error of the three runs
and the dynamics node's latency, then stops everything and exits.

The loop runs in lockstep: the simulator steps once per answer of the controller; in the
second run the controller answers a joint state only once it has the dynamics node's
feed-forward for that state's stamp, in the third this process hands each state to the
trajectory controller and its command back to the simulator. So every step has exactly one
step of delay, however slow the machine: a busy machine makes the demo take longer, never
unstable.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..robots import ARM
from ..runtime.local_ros import DEMO, isolate

# N m / rad and N m s / rad per joint: soft, so that gravity shows, and scaled to each joint's
# inertia (the loop has one 1 ms step of delay: lockstep)
KP = np.array([150.0, 150.0, 60.0, 60.0, 8.0, 10.0, 3.0])
KD = np.array([15.0, 15.0, 6.0, 6.0, 0.5, 1.0, 0.2])
AMPLITUDE = np.array([0.4, 0.3, 0.4, 0.3, 0.4, 0.4, 0.5])
FREQUENCY = 0.5  # Hz
Q0 = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.9, 0.0])
NAMES = [f"joint{k}" for k in range(1, 8)]
SETTLE_S = 0.5  # the first half second of each run is not scored
STALL_S = 30.0  # a run has stalled when no step is made for this long (wall)
CT = "computed torque"
# the trajectory controller's goal: it holds where the arm is for HOLD_S, joins the sine in
# RAMP_S, and stops STOP_S after the sine's end
HOLD_S, RAMP_S, STOP_S = 0.2, 0.5, 0.5


def desired(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w = 2 * np.pi * FREQUENCY
    s, c = np.sin(w * t), np.cos(w * t)
    return Q0 + AMPLITUDE * s, AMPLITUDE * w * c, -AMPLITUDE * w * w * s


def _die_with_parent() -> None:
    """In a child before it runs: SIGTERM when the demo dies, even by SIGKILL (a timeout), so
    that no node is left running (Linux; elsewhere the child outlives a killed demo)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _params(path: Path, node: str, urdf: str, extra: str = "") -> str:
    body = "\n".join("      " + line for line in urdf.splitlines())
    path.write_text(f"{node}:\n  ros__parameters:\n    robot_description: |\n{body}\n{extra}")
    return str(path)


class _Process:
    """A node in its own process; its log lines are passed through and counted."""

    def __init__(self, tmp: str, module: str, node: str, urdf: str, extra: str = "",
                 params_files: tuple[str, ...] = (), remaps: tuple[str, ...] = ()) -> None:
        params = _params(Path(tmp) / f"{node}.yaml", node, urdf, extra)
        files = [a for f in (*params_files, params) for a in ("--params-file", f)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"rbd_ros.nodes.{module}", "--ros-args", *files,
             *(a for r in remaps for a in ("-r", r)), "--log-level", "error"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, preexec_fn=_die_with_parent)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            sys.stderr.write(line)

    def count(self, text: str) -> int:
        return sum(text in line for line in self.lines)


def _stop(procs: list[_Process]) -> None:
    for p in procs:
        p.proc.send_signal(signal.SIGINT)
    for p in procs:
        try:
            p.proc.wait(10)
        except subprocess.TimeoutExpired:
            p.proc.kill()
        p.reader.join(5)


class _Controller:
    """PD (plus feed-forward) on each joint state, or the trajectory controller's command for
    it; answers stamped with the state's stamp.

    The simulator publishes the state it waits in again every 0.1 s without an answer: then
    the answer (or the feed-forward or command it waits for) was lost or is late, and is asked
    again."""

    def __init__(self, seconds: float, publish: Any, ask_ff: Any,
                 forward: Any = None) -> None:
        self.seconds = seconds
        self.publish = publish  # (stamp, efforts) -> None
        self.ask_ff = ask_ff  # () -> None: the desired trajectory to the dynamics node again
        self.forward = forward  # (stamp, q, v) -> None: a state to the trajectory controller
        self.last: tuple[int, np.ndarray] | None = None  # the last answer: (stamp, efforts)
        self.mode = "pause"  # no answer: the lockstep simulator waits
        self.start = 0  # ns: the run's t = 0
        self.pending: tuple[int, np.ndarray, np.ndarray] | None = None
        self.arrived: dict[int, float] = {}  # state stamp -> wall time it arrived
        self.ff: dict[int, np.ndarray] = {}
        self.forwarded: int | None = None  # the state handed to the trajectory controller
        self.errors: dict[str, list[float]] = {"PD only": [], "PD + feed-forward": [], CT: []}
        self.ff_after: list[float] = []  # s from a joint state to its feed-forward
        self.steps = 0

    def on_state(self, stamp: int, q: np.ndarray, v: np.ndarray) -> None:
        last = self.last
        if last is not None and stamp <= last[0]:
            if stamp == last[0]:
                self.publish(*last)  # the simulator's state again: the answer was lost
            return
        if self.pending is not None and stamp == self.pending[0]:
            if stamp not in self.ff and self.mode == "PD + feed-forward":
                self.ask_ff()  # again, still without its feed-forward
            if self.mode == CT:
                self.forwarded = None  # again, still without its command
        self.pending = (stamp, q, v)
        self.arrived.setdefault(stamp, time.monotonic())
        self.answer()

    def on_ff(self, stamp: int, tau: np.ndarray) -> None:
        if self.mode != "PD + feed-forward":
            return
        if stamp in self.arrived and stamp not in self.ff:
            self.ff_after.append(max(0.0, time.monotonic() - self.arrived[stamp]))
        self.ff[stamp] = tau
        self.answer()

    def on_command(self, tau: np.ndarray) -> None:
        """The trajectory controller's command for the state handed to it last. One equal to
        the last command sent answers a copy of an earlier state (the same state, the same
        command) late, and is dropped."""
        if self.mode != CT or self.pending is None or (
                self.last is not None and np.array_equal(self.last[1], tau)):
            return
        self._sent(tau)

    def begin(self, mode: str, start: int | None = None) -> int:
        """Start a run at the state the simulator waits with; its stamp (or ``start``) is the
        run's t = 0."""
        assert self.pending is not None
        self.start = self.pending[0] if start is None else start
        self.mode = mode
        self.answer()
        return self.start

    def answer(self) -> None:
        if self.pending is None or self.mode == "pause":
            return
        stamp, q, v = self.pending
        t = (stamp - self.start) * 1e-9
        if t >= self.seconds + (STOP_S + SETTLE_S if self.mode == CT else 0.0):
            self.mode = "pause"
            return
        if self.mode == CT:  # its command comes to on_command
            if self.forwarded != stamp:
                self.forwarded = stamp
                self.forward(stamp, q, v)
            return
        qd, vd, _ = desired(t)
        tau = KP * (qd - q) + KD * (vd - v)
        if self.mode == "PD + feed-forward":
            ff = self.ff.get(stamp)
            if ff is None:
                return  # until the dynamics node's answer for this state is in
            tau = tau + ff
            self.ff = {s: x for s, x in self.ff.items() if s > stamp}
        self._sent(tau)

    def _sent(self, tau: np.ndarray) -> None:
        """``tau`` to the simulator for the pending state, which is scored."""
        assert self.pending is not None
        stamp, q, _ = self.pending
        t = (stamp - self.start) * 1e-9
        self.publish(stamp, tau)
        self.last = (stamp, tau)
        self.pending = None
        self.steps += 1
        self.arrived = {s: w for s, w in self.arrived.items() if s >= stamp}
        if SETTLE_S <= t < self.seconds:
            self.errors[self.mode].append(float(np.max(np.abs(desired(t)[0] - q))))


def run(seconds: float = 4.0, plot: Path | None = None) -> int:
    """The demo; with ``plot``, a picture of both runs' tracking errors is written there."""
    isolate(*DEMO)
    import rclpy

    urdf = ARM.read_text()
    init = ("    lockstep: true\n    initial_positions: ["
            + ", ".join(f"{x:.3f}" for x in Q0) + "]\n")
    procs: list[_Process] = []
    with tempfile.TemporaryDirectory() as tmp:
        procs += [_Process(tmp, "simulator_node", "rbd_simulator", urdf, init),
                  _Process(tmp, "dynamics_node", "rbd_dynamics", urdf,
                           "    joint_states_qos: reliable\n")]
        rclpy.init()
        arm = _ArmController(seconds)

        def trajectory_controller() -> None:
            procs.append(_Process(
                tmp, "trajectory_controller_node", "rbd_trajectory_controller", urdf,
                f"    joints: {NAMES}\n    friction: true\n    joint_states_qos: reliable\n"
                "    joint_state_timeout: 60.0\n",  # (lockstep: a busy machine's pause)
                remaps=("joint_states:=ct_joint_states", "commands:=ct_commands")))

        try:
            print("rbd_ros demo: simulator (ABA at 1 kHz, in lockstep) + dynamics node + PD "
                  f"controller, then the trajectory controller, bundled 7-joint arm, "
                  f"{seconds:.0f} s per run")
            walls = arm.runs(trajectory_controller)
        finally:
            arm.node.destroy_node()
            rclpy.try_shutdown()
            _stop(procs)
    if walls is None:
        return 1
    status = _report(arm.ctl, walls, seconds, procs[0].count("simulation reset"), arm.result)
    if plot is not None and status == 0:
        _plot(arm.ctl.errors, plot)
    return status


class _ArmController:
    """The demo's ROS side: a node that runs ``_Controller`` on the simulator's joint states and
    the dynamics node's feed-forward, and sends it the desired trajectory."""

    def __init__(self, seconds: float) -> None:
        import rclpy
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionClient
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        from ..nodes.messages import stamp_ns

        self.seconds = seconds
        self.node = node = rclpy.create_node("rbd_demo_controller")
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.cmd = node.create_publisher(JointState, "effort_command_states", reliable)
        out = JointState(name=NAMES)

        def publish(stamp: int, tau: np.ndarray) -> None:
            out.header.stamp.sec, out.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
            out.effort = tau.tolist()
            self.cmd.publish(out)

        self.trajectory: JointTrajectory | None = None  # the feed-forward run's, once begun

        def ask_ff() -> None:
            if self.trajectory is not None:
                self.traj_pub.publish(self.trajectory)

        to_ct = node.create_publisher(JointState, "ct_joint_states", reliable)
        state = JointState(name=NAMES)

        def forward(stamp: int, q: np.ndarray, v: np.ndarray) -> None:
            state.header.stamp.sec, state.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
            state.position, state.velocity = q.tolist(), v.tolist()
            to_ct.publish(state)

        self.ctl = ctl = _Controller(seconds, publish, ask_ff, forward)
        self.commands = 0  # the trajectory controller's, counted

        def on_command(msg: Float64MultiArray) -> None:
            self.commands += 1
            ctl.on_command(np.array(msg.data))

        node.create_subscription(Float64MultiArray, "ct_commands", on_command, reliable)
        self.action = ActionClient(node, FollowJointTrajectory,
                                   "rbd_trajectory_controller/follow_joint_trajectory")
        self.result = "no goal"
        node.create_subscription(JointState, "joint_states", lambda m: ctl.on_state(
            stamp_ns(m.header.stamp), np.array(m.position), np.array(m.velocity)), reliable)
        node.create_subscription(JointState, "rbd_dynamics/feedforward_torques", lambda m: (
            ctl.on_ff(stamp_ns(m.header.stamp), np.array(m.effort))), reliable)
        self.traj_pub = node.create_publisher(JointTrajectory, "desired_trajectory", reliable)

    def spin_until(self, done: Any, limit: float) -> bool:
        import rclpy

        end = time.monotonic() + limit
        while not done() and time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.05)
        return bool(done())

    def _steps_until_paused(self) -> bool:
        """Spin until the run ends (True), or no step is made for STALL_S (False)."""
        import rclpy

        ctl = self.ctl
        steps, moved = ctl.steps, time.monotonic()
        while ctl.mode != "pause":
            rclpy.spin_once(self.node, timeout_sec=0.05)
            if ctl.steps != steps:
                steps, moved = ctl.steps, time.monotonic()
            elif time.monotonic() - moved > STALL_S:
                return False
        return True

    def runs(self, trajectory_controller: Any) -> dict[str, float] | None:
        """The three runs, PD alone, with feed-forward, then the trajectory controller (started
        by ``trajectory_controller()``): each one's wall time per step (ms), or None after
        saying why they could not be made."""
        ctl = self.ctl
        up = self.spin_until(lambda: ctl.pending is not None and self.cmd.get_subscription_count()
                             and self.traj_pub.get_subscription_count(), 60.0)
        if not up:
            print("error: the simulator and the dynamics node did not come up in 60 s",
                  file=sys.stderr)
            return None
        walls: dict[str, float] = {}
        for mode in ctl.errors:
            if mode == CT:
                start = self._goal(trajectory_controller)
                if start is None:
                    return None
                ctl.begin(mode, start)
            else:
                start = ctl.begin(mode)
            if mode == "PD + feed-forward":
                self.trajectory = _trajectory(start, self.seconds)
                self.traj_pub.publish(self.trajectory)
            t0, steps = time.monotonic(), ctl.steps
            if not self._steps_until_paused():
                waits = {"PD + feed-forward": "the dynamics node's feed-forward",
                         CT: "the trajectory controller's command"}.get(mode) \
                    if ctl.pending is not None else "the simulator's joint state"
                print(f"error: run '{mode}' stalled after {ctl.steps} steps: no step for "
                      f"{STALL_S:.0f} s, waiting for {waits}", file=sys.stderr)
                return None
            walls[mode] = 1e3 * (time.monotonic() - t0) / max(ctl.steps - steps, 1)
            self.spin_until(lambda: ctl.pending is not None, 5.0)
        return walls

    def _goal(self, trajectory_controller: Any) -> int | None:
        """Start the trajectory controller and send it the sine as a FollowJointTrajectory
        goal: the sine's start (ns), or None after saying why it could not be."""
        ctl = self.ctl
        assert ctl.pending is not None
        trajectory_controller()
        # the waiting state handed over until a command comes back (the controller is up and
        # both topics are matched): each answer is the command for that state, not stepped
        deadline = time.monotonic() + 60.0
        while not self.commands and time.monotonic() < deadline:
            ctl.forward(*ctl.pending)
            self.spin_until(lambda: self.commands > 0, 0.2)
        if not self.commands or not self.spin_until(self.action.server_is_ready, 30.0):
            print("error: the trajectory controller did not answer in 60 s", file=sys.stderr)
            return None
        begin = ctl.pending[0] + round(HOLD_S * 1e9)
        sent = self.action.send_goal_async(_goal(begin, self.seconds))
        if not self.spin_until(sent.done, 30.0) or not sent.result().accepted:
            print("error: the trajectory controller did not accept the goal", file=sys.stderr)
            return None
        result = sent.result().get_result_async()

        def said(future: Any) -> None:
            from action_msgs.msg import GoalStatus

            r = future.result()
            ok = r.status == GoalStatus.STATUS_SUCCEEDED
            self.result = (f"{'succeeded' if ok else 'failed'} (error_code "
                           f"{r.result.error_code}: {r.result.error_string})")

        self.result = "not ended when the run ended"
        result.add_done_callback(said)
        return begin + round(RAMP_S * 1e9)


def _plot(errors: dict[str, list[float]], path: Path) -> None:
    """Each run's largest joint error at every 1 ms step, after the first SETTLE_S."""
    from ..bag.plotting import pyplot

    plt = pyplot()

    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    for mode, e in errors.items():
        ax.plot(SETTLE_S + np.arange(len(e)) * 1e-3, e, label=f"{mode}: mean {np.mean(e):.3f}",
                lw=1.2)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("largest joint error (rad)")
    ax.set_title("bundled 7-joint arm along a sine: PD, PD + rbd_ros's feed-forward, "
                 "rbd_ros's computed torque", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    print(f"tracking errors plotted in {path}")


def _trajectory(start: int, seconds: float) -> Any:
    """The desired motion from ``start`` (ns, simulated time), every 10 ms."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    msg = JointTrajectory(joint_names=NAMES)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(start, 1_000_000_000)
    for k in range(int(seconds * 100) + 1):
        q, v, a = desired(k / 100)
        sec, nanosec = divmod(k * 10_000_000, 1_000_000_000)
        msg.points.append(JointTrajectoryPoint(
            positions=q.tolist(), velocities=v.tolist(), accelerations=a.tolist(),
            time_from_start=Duration(sec=sec, nanosec=nanosec)))
    return msg


def _goal(begin: int, seconds: float) -> Any:
    """The sine as a FollowJointTrajectory goal stamped ``begin`` (ns): its points every 10 ms
    from RAMP_S on, then a stop at rest STOP_S after its end."""
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    sine = _trajectory(begin, seconds)
    ramp = round(RAMP_S * 1e9)
    for p in sine.points:
        ns = p.time_from_start.sec * 1_000_000_000 + p.time_from_start.nanosec + ramp
        p.time_from_start = Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
    q, v, _ = desired(seconds)
    end = round((RAMP_S + seconds + STOP_S) * 1e9)
    sine.points.append(JointTrajectoryPoint(
        positions=(q + v * STOP_S / 2).tolist(), velocities=[0.0] * len(q),
        accelerations=[0.0] * len(q),
        time_from_start=Duration(sec=end // 1_000_000_000, nanosec=end % 1_000_000_000)))
    return FollowJointTrajectory.Goal(trajectory=sine)


def _report(ctl: _Controller, walls: dict[str, float], seconds: float, resets: int,
            goal: str) -> int:
    """The table; 1 (and why) where a run has no valid result. ``goal``: how the trajectory
    controller's goal ended."""
    expected = round((seconds - SETTLE_S) * 1000)
    print(f"\n{'run':<20} {'samples':>8} {'mean |e|max (rad)':>18} {'worst (rad)':>12} "
          f"{'wall ms/step':>13}")
    for mode, e in ctl.errors.items():
        per_step = walls.get(mode, np.nan)
        mean = f"{np.mean(e):18.4f}" if e else f"{'-':>18}"
        worst = f"{np.max(e):12.4f}" if e else f"{'-':>12}"
        print(f"{mode:<20} {len(e):8d} {mean} {worst} {per_step:13.2f}")
    problems = [f"the simulator reset {resets} times (the state blew up)"] if resets else []
    problems += [f"run '{m}' has {len(e)} of {expected} samples" for m, e in ctl.errors.items()
                 if abs(len(e) - expected) > 1]
    problems += [f"run '{m}' has a non-finite tracking error" for m, e in ctl.errors.items()
                 if not np.all(np.isfinite(e))]
    if problems:
        print("error: no valid comparison: " + "; ".join(problems), file=sys.stderr)
        return 1
    a, b, c = (np.mean(e) for e in ctl.errors.values())
    print(f"feed-forward reduces the mean tracking error {a / b:.1f} times")
    print(f"computed torque (the trajectory controller node, 20 rad/s): {a / c:.0f} times below "
          f"PD alone, on a simulator that is its own model (a plant that is not: "
          f"bench/tracking.py); its FollowJointTrajectory goal {goal}")
    lat = 1e3 * np.array(ctl.ff_after)
    print(f"dynamics node: feed-forward in p50 {np.percentile(lat, 50):.2f} ms, p99 "
          f"{np.percentile(lat, 99):.2f} ms after the joint state ({lat.size} states)")
    return 0


#: (what happens, hip/knee angles per leg [HAA, HFE, KFE] x 4, active feet, IMU specific force)
STAND_SCRIPT = [
    ("standing on four feet", [0.0, 0.4, -0.8] * 4, None, None),
    ("feet moved left (hips)", [0.15, 0.4, -0.8] * 4, None, None),
    ("hind legs tucked under", [0.0, 0.4, -0.8] * 2 + [0.0, 0.9, -1.4] * 2, None, None),
    ("right front foot lifted", [0.0, 0.4, -0.8] * 4, ["LF_foot", "LH_foot", "RH_foot"], None),
    ("pushing off: IMU reads 2 g", [0.0, 0.4, -0.8] * 4, None, 19.62),
    ("dropping faster than gravity", [0.0, 0.4, -0.8] * 4, None, -5.0),
    ("in flight (no contact)", [0.0, 0.4, -0.8] * 4, [], None),
]


def run_quadruped() -> int:
    """The floating-base node on the bundled quadruped: foot loads through a scripted
    sequence of postures, contact sets and base accelerations, including impossible ones."""
    isolate(*DEMO)
    import rclpy

    from ..robots import QUADRUPED

    config = str(Path(__file__).resolve().parents[2] / "config" / "floating_base.yaml")
    share = Path(sys.prefix) / "share" / "rbd_ros" / "config" / "floating_base.yaml"
    config = config if Path(config).exists() else str(share)
    with tempfile.TemporaryDirectory() as tmp:
        procs = [_Process(tmp, "floating_base_node", "rbd_floating_base",
                          QUADRUPED.read_text(), params_files=(config,))]
        rclpy.init()
        probe = _QuadrupedProbe()
        print("rbd_ros demo: the floating-base node on the bundled quadruped (21 kg, point feet, "
              "mu 0.7)\n")
        print(f"{'situation':<30} {'LF':>7} {'RF':>7} {'LH':>7} {'RH':>7}  (vertical foot "
              "loads, N, in each foot's frame) / status")
        try:
            for k, (what, q, contacts, specific_force) in enumerate(STAND_SCRIPT):
                print(f"{what:<30} {probe.situation(100 + k, q, contacts, specific_force)}")
        finally:
            probe.node.destroy_node()
            rclpy.try_shutdown()
            _stop(procs)
    return 0


QUADRUPED_FEET = ("LF_foot", "RF_foot", "LH_foot", "RH_foot")
QUADRUPED_JOINTS = tuple(f"{leg}_{j}" for leg in ("LF", "RF", "LH", "RH")
                         for j in ("HAA", "HFE", "KFE"))


class _QuadrupedProbe:
    """The quadruped demo's ROS side: sends a situation (joint state, odometry, IMU, contacts)
    to the floating-base node and reads its foot loads and status back."""

    def __init__(self) -> None:
        import rclpy
        from geometry_msgs.msg import AccelStamped, WrenchStamped
        from nav_msgs.msg import Odometry
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import Imu, JointState
        from std_msgs.msg import String

        from ..nodes.interfaces import ActiveContacts

        self.node = node = rclpy.create_node("rbd_demo_quadruped")
        self.got: dict[str, Any] = {}
        got = self.got
        for f in QUADRUPED_FEET:
            node.create_subscription(WrenchStamped, f"rbd_floating_base/contact/{f}/wrench",
                                     lambda m, f=f: got.__setitem__(f, m), 10)
        node.create_subscription(String, "rbd_floating_base/status",
                                 lambda m: got.__setitem__("status", m.data), 10)
        node.create_subscription(AccelStamped, "rbd_floating_base/flight/base_acceleration",
                                 lambda m: got.__setitem__("flight", m), 10)
        self.js = node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
        self.od = node.create_publisher(Odometry, "odom", qos_profile_sensor_data)
        self.imu = node.create_publisher(Imu, "imu", qos_profile_sensor_data)
        self.active = node.create_publisher(ActiveContacts, "active_contacts", 10)
        self.odom = Odometry()
        self.odom.pose.pose.position.z, self.odom.pose.pose.orientation.w = 0.5, 1.0

    def send(self, stamp: int, q: list[float] | None, contacts: list[str],
             specific_force: float) -> None:
        """The situation's contacts, IMU and odometry (and, with ``q``, its joint state); then
        50 ms of answers."""
        import rclpy
        from sensor_msgs.msg import Imu, JointState

        from ..nodes.interfaces import ActiveContacts

        m = Imu()  # odometry and IMU of the state's stamp, as a state estimator's
        m.linear_acceleration.z = specific_force
        m.header.stamp.sec = self.odom.header.stamp.sec = stamp
        self.active.publish(ActiveContacts(links=contacts))
        self.imu.publish(m)
        self.od.publish(self.odom)
        if q is not None:
            msg = JointState(name=list(QUADRUPED_JOINTS), position=[float(x) for x in q],
                             effort=[0.0] * len(QUADRUPED_JOINTS))  # motors off
            msg.header.stamp.sec = stamp
            self.js.publish(msg)
        end = time.monotonic() + 0.05
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.01)

    def situation(self, stamp: int, q: list[float], contacts: list[str] | None,
                  specific_force: float | None) -> str:
        """The node's vertical foot loads and status for one situation, as the demo prints
        them."""
        touching = list(QUADRUPED_FEET) if contacts is None else contacts
        force = 9.81 if specific_force is None else specific_force
        for _ in range(4):  # the situation first, so the node has it
            self.send(stamp, None, touching, force)
        got = self.got
        got.clear()

        def done() -> bool:
            if got.get("status") != "ok":
                return "status" in got
            return all(f in got and got[f].header.stamp.sec == stamp for f in touching)

        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not done():
            self.send(stamp, q, touching, force)
        status = str(got.get("status", "no answer"))
        loads = [f"{got[f].wrench.force.z:7.1f}" if f in got and got[f].header.stamp.sec == stamp
                 else f"{'-':>7}" for f in QUADRUPED_FEET]
        if "flight" in got:
            status += f": base falls at {got['flight'].accel.linear.z:.2f} m/s^2"
        return f"{' '.join(loads)}  {status}"
