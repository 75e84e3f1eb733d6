"""The trajectory controller closing a loop over ROS, on a plant that is not ours: MuJoCo's arm
(bench/tracking.py's plant) stepped at 1 kHz of wall time in this process, which publishes
each step's joint state (best effort, stamped with the step's time, as a driver does) and
applies the latest effort command that has come (as an effort controller keeps its last
command); the controller node in its own process, timed inside (from a joint state's callback
to its command handed to rclpy); a FollowJointTrajectory goal sent as MoveIt sends it
(accepted, then its result awaited), stamped 0.3 s ahead. Each arm on an idle machine, then
beside ``python3 -c 'while 1: pass'`` (2 cores: the busy process, this one and the node's).

    .venv/bin/python bench/control_loop.py

Per arm: the states published and the commands received (one command answers each state, in
order: states minus commands are the unanswered), the latency from a state's publish to its
command's arrival (paired in order), the node's time per state inside, the periods this
process woke too late for (it then steps the missed periods at once and publishes the last),
the goal's result, and the tracking error through ROS against the same motion and gains in
one process (bench/tracking.py: the command applied at the step it answers, no transport).

MuJoCo is a bench dependency only: ``.venv/bin/python -m pip install -r
requirements-bench.txt``."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "testkit"))

from latency import _start_node, _timed  # noqa: E402
from tracking import ARMS, DT, Plant, W, plain_urdf, track, trajectory, urdf_of, waypoints_of  # noqa: E402

from rbd_ros.dynamics import load_urdf_string  # noqa: E402
from rbd_ros.runtime.local_ros import BENCH, isolate  # noqa: E402

NODE = "rbd_trajectory_controller"
LEAD_S = 0.3  # the goal's header stamp: this far after it is sent


def closed_loop(label: str, name: str, fixed: tuple[str, ...], tmp: str,
                seed: int = 7) -> list[str]:
    """One arm through ROS: its table rows' cells and a line on the goal's result."""
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectoryPoint

    text = plain_urdf(urdf_of(name), fixed)
    model = load_urdf_string(text)
    names = list(model.state_joint_names)
    spline, start = trajectory(model, np.random.default_rng(seed))
    times, points = waypoints_of(model, np.random.default_rng(seed), 4, 0.9)
    alone = track(Plant(text, model), model, spline, start, "computed torque", model)
    plant = Plant(text, model)
    plant.reset(start)
    urdf = Path(tmp) / f"{name}.urdf"
    urdf.write_text(text)
    params = (f"    joints: {names}\n    natural_frequency: {W}\n    damping_ratio: 1.0\n"
              "    friction: true\n    joint_state_timeout: 1.0\n")  # (the quiet 0.2 s below)
    proc = _start_node(tmp, "trajectory_controller_node", NODE, str(urdf), params,
                       _timed("trajectory_controller_node", "TrajectoryControllerNode",
                              "commands", f"ctl_{name}"))
    node = rclpy.create_node(f"mujoco_plant_{name}_{os.getpid()}_{time.monotonic_ns()}")
    got: list[tuple[float, np.ndarray]] = []
    node.create_subscription(Float64MultiArray, "commands",
                             lambda m: got.append((time.time(), np.array(m.data))), 1000)
    pub = node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
    client = ActionClient(node, FollowJointTrajectory, f"/{NODE}/follow_joint_trajectory")
    msg = JointState(name=names)
    sent: list[tuple[int, float]] = []  # (stamp ns, wall time of publish)
    log: list[tuple[int, np.ndarray]] = []  # (stamp ns, q)
    tau = np.zeros(len(names))
    t0 = time.time()
    k = late = 0

    def period(stepping: bool) -> None:
        """Wait for the next period (asleep in rclpy's wait set), apply the latest command,
        step (each missed period too) and publish the state."""
        nonlocal k, late, tau
        while (left := t0 + (k + 1) * DT - time.time()) > 0:
            rclpy.spin_once(node, timeout_sec=left)
        due = int((time.time() - t0) / DT)
        late += max(0, due - k - 1)
        for _ in range(max(1, due - k)):
            if got:
                tau = got[-1][1]
            if stepping:
                plant.step(tau)
            k += 1
        q, v = plant.state()
        stamp = round((t0 + k * DT) * 1e9)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
        msg.position, msg.velocity = q.tolist(), v.tolist()
        pub.publish(msg)
        sent.append((stamp, time.time()))
        log.append((stamp, q))

    try:
        # until the controller answers, the arm stays where it is (its physics waits too)
        deadline = time.time() + 60
        while not got and time.time() < deadline:
            period(stepping=False)
        assert got, f"{label}: no command in 60 s; the node printed:\n{proc.stop()}"
        for _ in range(500):  # half a second holding
            period(stepping=True)
        assert client.wait_for_server(timeout_sec=10)
        # a quiet 0.2 s (the arm's time stands still, the effort controller keeps its holding
        # command): every command after it answers a state sent after it, so they pair in order
        quiet = time.time() + 0.2
        while time.time() < quiet:
            rclpy.spin_once(node, timeout_sec=quiet - time.time())
        t0 += 0.2
        sent.clear()
        got.clear()
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = names
        begin = round((t0 + k * DT + LEAD_S) * 1e9)
        goal.trajectory.header.stamp.sec, goal.trajectory.header.stamp.nanosec = \
            divmod(begin, 10**9)
        zero = [0.0] * len(names)
        for t_ns, q in zip(times[1:], points[1:], strict=True):  # (the first: where it is)
            goal.trajectory.points.append(JointTrajectoryPoint(
                positions=q.tolist(), velocities=zero, accelerations=zero,
                time_from_start=_duration(int(t_ns))))
        accepted = client.send_goal_async(goal)
        end = begin + spline.duration_ns + 500_000_000
        while log[-1][0] < end:
            period(stepping=True)
        result = None
        if accepted.done() and accepted.result().accepted:
            future = accepted.result().get_result_async()
            wait = time.time() + 10
            while not future.done() and time.time() < wait:
                period(stepping=True)
            result = future.result().result if future.done() else None
        for _ in range(100):  # the last answers in flight
            rclpy.spin_once(node, timeout_sec=0.002)
    finally:
        printed = proc.stop()
        node.destroy_node()
    inside = np.array(_inside(tmp, f"ctl_{name}")) * 1e-3  # us
    n_sent = sum(1 for s, _ in sent)
    answered = min(len(got), n_sent)
    lat = np.array([got[j][0] - sent[j][1] for j in range(answered)]) * 1e3  # ms
    moving = [(s, q) for s, q in log if begin <= s <= end]
    err = np.array([spline.sample(s - begin)[0] - q for s, q in moving])
    rms, worst = float(np.sqrt(np.mean(err**2))), float(np.abs(err).max())
    said = ("no result" if result is None else
            f"error_code {result.error_code}, {result.error_string!r}")
    if result is None:
        said += "; the node printed: " + " | ".join(printed.strip().splitlines()[-5:])
    row = (f"| {label} | {n_sent} | {n_sent - answered} | {np.percentile(lat, 50):.3f} / "
           f"{np.percentile(lat, 99):.3f} / {lat.max():.3f} | {np.percentile(inside, 50):.0f} / "
           f"{np.percentile(inside, 99):.0f} | {late} | {rms:.4f} / {worst:.4f} | "
           f"{alone[0]:.4f} / {alone[1]:.4f} |")
    return [row, f"- {label}: the goal's result: {said}"]


def _duration(ns: int) -> object:
    from builtin_interfaces.msg import Duration

    return Duration(sec=ns // 10**9, nanosec=ns % 10**9)


def _inside(tmp: str, tag: str) -> list[int]:
    files = list(Path(tmp).glob(f"{tag}_*.txt"))
    return [int(x) for f in files for x in f.read_text().split()]


def control_loop() -> None:
    isolate(*BENCH)
    import rclpy

    print("\n## The trajectory controller in a closed loop over ROS: MuJoCo's arm at 1 kHz "
          "(this process), the node in its own; idle, then beside a busy process")
    print("| arm | beside | states | unanswered | state to command p50 / p99 / max (ms) | "
          "inside the node p50 / p99 (us) | periods woken late | through ROS RMS / worst (rad) "
          "| in one process RMS / worst (rad) |")
    print("|---|---|---|---|---|---|---|---|---|")
    notes: list[str] = []
    rclpy.init()
    try:
        for busy in (False, True):
            beside = subprocess.Popen([sys.executable, "-c", "while 1: pass"]) if busy else None
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    os.environ["RBD_BENCH_INSIDE"] = tmp
                    for label, (name, _, fixed, _) in ARMS.items():
                        row, note = closed_loop(label, name, fixed, tmp)
                        print(row.replace(" | ", f" | {'a busy process' if busy else 'nothing'}"
                                                 " | ", 1), flush=True)
                        notes.append(note + (" (beside a busy process)" if busy else ""))
            finally:
                if beside is not None:
                    beside.kill()
    finally:
        rclpy.try_shutdown()
    print("\n".join(notes))


if __name__ == "__main__":
    control_loop()
