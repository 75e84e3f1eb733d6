"""The live demo: computed-torque feed-forward on the bundled arm.

Three processes on this machine (DDS on loopback, a domain of their own): the simulator
(our ABA at 1 kHz), the dynamics node, and this one, a PD controller that tracks a
sinusoidal trajectory, first alone and then with the dynamics node's feed-forward torques
(RNEA at the desired motion) added. It prints the tracking error of both runs and the dynamics
node's latency, then stops everything and exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .robots import ARM

# N m / rad and N m s / rad per joint: soft, so that gravity shows, and scaled to each joint's
# inertia so that the loop (1 kHz, a millisecond or two of delay) stays stable
KP = np.array([150.0, 150.0, 60.0, 60.0, 8.0, 10.0, 3.0])
KD = np.array([15.0, 15.0, 6.0, 6.0, 0.5, 1.0, 0.2])
AMPLITUDE = np.array([0.4, 0.3, 0.4, 0.3, 0.4, 0.4, 0.5])
FREQUENCY = 0.5  # Hz
Q0 = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.9, 0.0])


def desired(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w = 2 * np.pi * FREQUENCY
    s, c = np.sin(w * t), np.cos(w * t)
    return Q0 + AMPLITUDE * s, AMPLITUDE * w * c, -AMPLITUDE * w * w * s


def _params(path: Path, node: str, urdf: str, extra: str = "") -> str:
    body = "\n".join("      " + line for line in urdf.splitlines())
    path.write_text(f"{node}:\n  ros__parameters:\n    robot_description: |\n{body}\n{extra}")
    return str(path)


def _local_ros() -> None:
    """The demo's processes: on loopback, in a domain of their own (set, not defaulted: a
    shell set up for a robot must not put the demo's joint states and efforts on its
    network)."""
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ["ROS_DOMAIN_ID"] = str(150 + os.getpid() % 60)


def _start(tmp: str, module: str, node: str, urdf: str, extra: str = "",
           params_files: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    params = _params(Path(tmp) / f"{node}.yaml", node, urdf, extra)
    files = [a for f in (*params_files, params) for a in ("--params-file", f)]
    return subprocess.Popen([sys.executable, "-m", f"rbd_ros.nodes.{module}", "--ros-args",
                             *files, "--log-level", "error"])


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.send_signal(signal.SIGINT)
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()


def run(seconds: float = 4.0) -> int:
    _local_ros()
    import rclpy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from .nodes.common import SENSOR

    urdf = ARM.read_text()
    init = "    initial_positions: [" + ", ".join(f"{x:.3f}" for x in Q0) + "]\n"
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        procs += [_start(tmp, "simulator_node", "rbd_simulator", urdf, init),
                  _start(tmp, "dynamics_node", "rbd_dynamics", urdf)]
        rclpy.init()
        node = rclpy.create_node("rbd_demo_controller")
        state: dict[str, object] = {"ff": None, "mode": "wait"}
        errors: dict[str, list[float]] = {"PD only": [], "PD + feed-forward": []}
        latency: list[float] = []
        cmd = node.create_publisher(Float64MultiArray, "effort_commands", 10)
        traj_pub = node.create_publisher(JointTrajectory, "desired_trajectory", 10)
        t_start = [0.0]

        def on_state(msg: JointState) -> None:
            q, v = np.array(msg.position), np.array(msg.velocity)
            t = time.monotonic() - t_start[0]
            qd, vd, _ = desired(t)
            tau = KP * (qd - q) + KD * (vd - v)
            mode = state["mode"]
            if mode == "PD + feed-forward" and state["ff"] is not None:
                tau = tau + state["ff"]
            cmd.publish(Float64MultiArray(data=tau.tolist()))
            if mode in errors and t > 0.5:  # after half a second of settling
                errors[mode].append(float(np.max(np.abs(qd - q))))

        def on_ff(msg: Float64MultiArray) -> None:
            state["ff"] = np.array(msg.data)

        def on_ff_stamped(msg: JointState) -> None:
            stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            latency.append(time.time() - stamp)

        node.create_subscription(JointState, "joint_states", on_state, SENSOR)
        node.create_subscription(Float64MultiArray, "rbd_dynamics/feedforward_command", on_ff, 10)
        node.create_subscription(JointState, "rbd_dynamics/gravity_torques", on_ff_stamped, 10)

        def spin(duration: float) -> None:
            end = time.monotonic() + duration
            while time.monotonic() < end:
                rclpy.spin_once(node, timeout_sec=0.01)

        try:
            print("rbd_ros demo: simulator (ABA at 1 kHz) + dynamics node + PD controller, "
                  f"bundled 7-joint arm, {seconds:.0f} s per run")
            deadline = time.monotonic() + 30
            while not latency and time.monotonic() < deadline:
                spin(0.1)  # until the three processes see each other
            if not latency:
                print("error: the simulator and the dynamics node did not come up",
                      file=sys.stderr)
                return 1
            for mode in errors:
                t_start[0] = time.monotonic()
                if mode == "PD + feed-forward":
                    traj_pub.publish(_trajectory(node, JointTrajectory, JointTrajectoryPoint,
                                                 seconds))
                latency.clear()
                state["mode"] = mode
                spin(seconds)
                state["mode"] = "wait"
            _report(errors, latency)
        finally:
            node.destroy_node()
            rclpy.try_shutdown()
            _stop(procs)
    return 0


def _trajectory(node, JointTrajectory, JointTrajectoryPoint, seconds: float):
    """The desired motion, sampled every 10 ms from now, for the dynamics node."""
    from builtin_interfaces.msg import Duration

    msg = JointTrajectory(joint_names=[f"joint{k}" for k in range(1, 8)])
    msg.header.stamp = node.get_clock().now().to_msg()
    for k in range(int(seconds * 100) + 1):
        t = k / 100
        q, v, a = desired(t)
        msg.points.append(JointTrajectoryPoint(
            positions=q.tolist(), velocities=v.tolist(), accelerations=a.tolist(),
            time_from_start=Duration(sec=int(t), nanosec=round((t % 1) * 1e9))))
    return msg


def _report(errors: dict[str, list[float]], latency: list[float]) -> None:
    print(f"\n{'run':<20} {'samples':>8} {'mean |e|max (rad)':>18} {'worst (rad)':>12}")
    for mode, e in errors.items():
        print(f"{mode:<20} {len(e):8d} {np.mean(e):18.4f} {np.max(e):12.4f}")
    a, b = (np.mean(e) for e in errors.values())
    print(f"feed-forward reduces the mean tracking error {a / b:.1f} times")
    lat = np.array(latency) * 1e3
    print(f"dynamics node latency, joint state stamped -> torques received: p50 "
          f"{np.percentile(lat, 50):.2f} ms, p99 {np.percentile(lat, 99):.2f} ms over "
          f"{lat.size} messages")


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
    _local_ros()
    import rclpy
    from geometry_msgs.msg import AccelStamped, WrenchStamped
    from nav_msgs.msg import Odometry
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Imu, JointState
    from std_msgs.msg import String

    from rbd_ros_interfaces.msg import ActiveContacts  # type: ignore[attr-defined]

    from .robots import QUADRUPED

    config = str(Path(__file__).resolve().parents[1] / "config" / "floating_base.yaml")
    share = Path(sys.prefix) / "share" / "rbd_ros" / "config" / "floating_base.yaml"
    config = config if Path(config).exists() else str(share)
    feet = ["LF_foot", "RF_foot", "LH_foot", "RH_foot"]
    names = [f"{leg}_{j}" for leg in ("LF", "RF", "LH", "RH") for j in ("HAA", "HFE", "KFE")]
    with tempfile.TemporaryDirectory() as tmp:
        procs = [_start(tmp, "floating_base_node", "rbd_floating_base", QUADRUPED.read_text(),
                        params_files=(config,))]
        rclpy.init()
        node = rclpy.create_node("rbd_demo_quadruped")
        got: dict[str, object] = {}
        for f in feet:
            node.create_subscription(WrenchStamped, f"rbd_floating_base/contact/{f}/wrench",
                                     lambda m, f=f: got.__setitem__(f, m), 10)
        node.create_subscription(String, "rbd_floating_base/status",
                                 lambda m: got.__setitem__("status", m.data), 10)
        node.create_subscription(AccelStamped, "rbd_floating_base/flight/base_acceleration",
                                 lambda m: got.__setitem__("flight", m), 10)
        js = node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
        od = node.create_publisher(Odometry, "odom", qos_profile_sensor_data)
        imu = node.create_publisher(Imu, "imu", qos_profile_sensor_data)
        active = node.create_publisher(ActiveContacts, "active_contacts", 10)
        odom = Odometry()
        odom.pose.pose.position.z, odom.pose.pose.orientation.w = 0.5, 1.0
        print("rbd_ros demo: the floating-base node on the bundled quadruped (21 kg, point feet, "
              "mu 0.7)\n")
        print(f"{'situation':<30} {'LF':>7} {'RF':>7} {'LH':>7} {'RH':>7}  (vertical foot "
              "loads, N, in each foot's frame) / status")
        try:
            for k, (what, q, contacts, specific_force) in enumerate(STAND_SCRIPT):
                stamp = 100 + k
                m = Imu()
                m.linear_acceleration.z = 9.81 if specific_force is None else specific_force

                def send(with_state: bool, m: Imu = m, contacts: list[str] | None = contacts,
                         q: list[float] = q, stamp: int = stamp) -> None:
                    active.publish(ActiveContacts(links=feet if contacts is None else contacts))
                    imu.publish(m)
                    od.publish(odom)
                    if with_state:
                        msg = JointState(name=names, position=[float(x) for x in q])
                        msg.header.stamp.sec = stamp
                        js.publish(msg)
                    end = time.monotonic() + 0.05
                    while time.monotonic() < end:
                        rclpy.spin_once(node, timeout_sec=0.01)

                for _ in range(4):  # the situation first, so the node has it
                    send(False)
                got.clear()
                expect = feet if contacts is None else contacts

                def done(stamp: int = stamp, expect: list[str] = expect) -> bool:
                    if got.get("status") != "ok":
                        return "status" in got
                    return all(f in got and got[f].header.stamp.sec == stamp  # type: ignore[attr-defined]
                               for f in expect)

                deadline = time.monotonic() + 15
                while time.monotonic() < deadline and not done():
                    send(True)
                status = str(got.get("status", "no answer"))
                loads = [f"{got[f].wrench.force.z:7.1f}" if f in got and  # type: ignore[attr-defined]
                         got[f].header.stamp.sec == stamp else f"{'-':>7}"  # type: ignore[attr-defined]
                         for f in feet]
                if "flight" in got:
                    a = got["flight"].accel.linear  # type: ignore[attr-defined]
                    status += f": base falls at {a.z:.2f} m/s^2"
                print(f"{what:<30} {' '.join(loads)}  {status}")
        finally:
            node.destroy_node()
            rclpy.try_shutdown()
            _stop(procs)
    return 0
