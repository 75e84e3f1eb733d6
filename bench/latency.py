"""Latency of the dynamics node at 1 kHz, measured from outside it, beside a do-nothing echo.

A driver (this process) stamps each joint state with the time it publishes it and receives the
node's ``~/gravity_torques``, stamped with the same stamp; latency is receive time - stamp.
The echo node republishes each joint state unchanged: the limit of rclpy on this machine. It
subscribes with the nodes' joint_states QoS (best effort, 20 deep), so all three meet the same
queue. All on loopback, in a domain of its own.
"""

from __future__ import annotations

import math
import os
import struct
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testkit"))
from rosutil import Process

from rbd_ros.runtime.local_ros import BENCH, isolate


def _echo(extra: str = "") -> str:
    """The echo node's script: joint_states back on ``echo``, as fast as rclpy can, spun and
    stopped as the nodes are (``common.run``); ``extra``: lines run on ``node`` first."""
    body = textwrap.indent(extra + """pub = node.create_publisher(JointState, "echo", 10)
node.create_subscription(JointState, "joint_states", pub.publish, SENSOR)
""", "    ")
    return f"""import rclpy
from sensor_msgs.msg import JointState
from rbd_ros.nodes.common import SENSOR, run
def build():
    node = rclpy.create_node("echo")
{body}    return node
raise SystemExit(run(build, []))
"""


ECHO = _echo()

#: the echo with the dynamics node's other entities, idle: its subscriptions, services and
#: timers (rclpy's executor pays per entity on each wake where it rebuilds its wait set)
ECHO_TWIN = _echo("""from std_msgs.msg import String
from rbd_ros_interfaces.srv import ForwardDynamics, GravityTorques, InverseDynamics, MassMatrix
for k in range(4):
    node.create_subscription(String, f"idle_{k}", lambda m: None, 10)
for k, srv in enumerate((InverseDynamics, ForwardDynamics, MassMatrix, GravityTorques)):
    node.create_service(srv, f"~/idle_{k}", lambda req, res: res)
node.create_timer(0.02, lambda: None)
node.create_timer(1.0, lambda: None)
""")


#: the echo that also takes the floating-base node's odometry (as it does: each state waits
#: for its odometry) and has its other subscriptions, service and timer, idle
ECHO_FB_TWIN = _echo("""from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu
from std_msgs.msg import String
from rbd_ros_interfaces.srv import FloatingBaseDynamics
node.create_subscription(Odometry, "odom", lambda m: None, SENSOR, raw=True)
node.create_subscription(Imu, "imu", lambda m: None, SENSOR, raw=True)
for k in range(3):
    node.create_subscription(String, f"idle_{k}", lambda m: None, 10)
node.create_service(FloatingBaseDynamics, "~/idle", lambda req, res: res)
node.create_timer(1.0, lambda: None)
""")


def _timed(module: str, cls: str, topic: str, tag: str, patch: str = "") -> str:
    """A node's script (``rbd_ros.nodes.<module>``, class ``cls``), timed inside: from each
    joint state's arrival (its callback) to its output on ``topic`` handed to rclpy, as ns into
    ``<tag>_<pid>.txt`` in the folder ``$RBD_BENCH_INSIDE`` (a few clock reads and dict lookups
    a state; a wait for the state's odometry counts, as it delays the output); ``patch``: lines
    run first."""
    return f"""import atexit, os, time
from rclpy.publisher import Publisher
from rbd_ros.nodes import {module} as nodes
clock, took, arrived, topics = time.perf_counter_ns, [], [0], {{}}
on_state, publish = nodes.{cls}._on_joint_states, Publisher.publish
def timed_state(node, live, raw):
    arrived[0] = clock()
    on_state(node, live, raw)
def timed_publish(pub, msg):
    if arrived[0]:
        name = topics.get(id(pub)) or topics.setdefault(id(pub), pub.topic_name)
        if name == "/{topic}":
            took.append(clock() - arrived[0])
            arrived[0] = 0
    publish(pub, msg)
nodes.{cls}._on_joint_states, Publisher.publish = timed_state, timed_publish
path = os.path.join(os.environ["RBD_BENCH_INSIDE"], f"{tag}_{{os.getpid()}}.txt")
atexit.register(lambda: open(path, "w").write(" ".join(map(str, took))))
{patch}raise SystemExit(nodes.main())
"""


def _fb_timed(tag: str, topic: str = "rbd_floating_base/base_wrench", patch: str = "") -> str:
    return _timed("floating_base_node", "FloatingBaseNode", topic, tag, patch)


def _without_physics(tag: str, spin_us: int = 0) -> str:
    """The floating-base node without its physics: ``Live.answer`` replaced by the first
    state's answer, given again to every state (after spinning ``spin_us``); its subscriptions,
    reads, pairing, timers and publishing as they are. What it adds to the echo is what the
    node adds but the physics; the node less it, the physics' own cost there."""
    spin = (f"    end = time.perf_counter_ns() + {spin_us * 1000}\n"
            "    while time.perf_counter_ns() < end:\n        pass\n") if spin_us else ""
    return _fb_timed(tag, patch=f"""answer, kept = nodes.Live.answer, {{}}
def first(live, p, f, note, balance=True):
    a = kept.get(balance)
    if a is None:  # its reaction's arrays are the Live's: no later call overwrites them
        a = kept[balance] = answer(live, p, f, note, balance)
    a.t = p.t
{spin}    return a
nodes.Live.answer = first
""")


def _start(args: list[str]) -> Process:
    return Process(sys.executable, *args)


def measure(node: Any, names: list[str], topic: str, n: int, rate: float = 1000.0,
            answer_type: Any = None, odom: bool = False,
            positions: list[float] | None = None) -> tuple[int, np.ndarray, int]:
    """Publish n joint states at ``rate`` and time the answers (stamped messages) on
    ``topic``: (states unanswered, latencies in ms, periods the driver woke too late for).
    ``odom``: each state follows an odometry message of its stamp (a floating base);
    ``positions``: the joint positions sent (default: random, fixed)."""
    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState

    received: dict[tuple[int, int], float] = {}

    def on_answer(raw: bytes) -> None:
        # the stamp read from the bytes: each answer's type costs the driver alike (rclpy's
        # deserialisation took 14 us for Talos's JointState, 37 us for a Balance)
        received[struct.unpack_from("<iI", raw, 4)] = time.time()

    sub = node.create_subscription(answer_type or JointState, topic, on_answer, 10, raw=True)
    pub = node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
    if odom:
        from nav_msgs.msg import Odometry

        base = node.create_publisher(Odometry, "odom", qos_profile_sensor_data)
        pose = Odometry()
        pose.pose.pose.position.z, pose.pose.pose.orientation.w = 1.0, 1.0

    def send(msg: Any) -> None:
        if odom:
            pose.header.stamp = msg.header.stamp
            base.publish(pose)
        pub.publish(msg)

    rng = np.random.default_rng(0)
    q = positions or rng.uniform(-0.5, 0.5, len(names)).tolist()
    period = 1.0 / rate

    def paced(count: int) -> tuple[list[tuple[int, int, float]], int]:
        """Send ``count`` states at the rate: (stamps and send times, periods missed)."""
        sent: list[tuple[int, int, float]] = []
        t0 = time.monotonic()
        k = late = 0
        while len(sent) < count:
            # wait for answers until the next send is due, asleep in the wait set: a driver
            # that polled here would take a whole core of this 2-core machine from the nodes
            while (left := t0 + k * period - time.monotonic()) > 0:
                rclpy.spin_once(node, timeout_sec=left)
            # a driver that woke late sends the state of now, once, as a control loop that
            # overran does: sending the missed periods back to back would flood the node's
            # queue and count the driver's stall as the node's drops
            due = int((time.monotonic() - t0) / period)
            late += max(0, due - k)
            k = max(k, due) + 1
            now = time.time()
            msg = JointState(name=names, position=q, velocity=[0.0] * len(names),
                             effort=[0.0] * len(names))
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(now), int((now % 1) * 1e9)
            send(msg)
            sent.append((msg.header.stamp.sec, msg.header.stamp.nanosec, now))
        return sent, late

    # warm up: slowly until answers flow (discovery, first calls), then half a second at the
    # rate (every process alike: what starting up leaves behind is not the steady state, and
    # a warm-up faster than the rate would leave a backlog in the node's queue)
    deadline = time.monotonic() + 30
    while not received and time.monotonic() < deadline:
        paced(1)
        rclpy.spin_once(node, timeout_sec=0.01)
    paced(int(0.5 * rate))
    received.clear()
    sent, late = paced(n)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.01)
    node.destroy_subscription(sub)
    node.destroy_publisher(pub)
    if odom:
        node.destroy_publisher(base)
    lat = np.array([received[(s, ns)] - t for s, ns, t in sent if (s, ns) in received]) * 1e3
    return n - lat.size, lat, late


Case = tuple[str, Callable[[str], Process],
             Callable[[Any], tuple[int, np.ndarray, int]]]


def _interleaved(cases: list[Case], rounds: int) -> dict[str, tuple[int, np.ndarray, int]]:
    """Each case in turn, ``rounds`` times, a fresh process each time (``start(tmp)``),
    measured by ``run(driver)``: per case (states unanswered, latencies pooled, driver late).
    Interleaved, so the machine's drift over the run falls on every case alike, and each round
    starts one case further on, so no case is always first or last (the last of a round was
    1.2x the first in p99, measured with the echo in both places)."""
    import rclpy

    rclpy.init()
    driver = rclpy.create_node("latency_driver")
    drops = {c[0]: 0 for c in cases}
    late = {c[0]: 0 for c in cases}
    lat: dict[str, list[np.ndarray]] = {c[0]: [] for c in cases}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(rounds):
                for label, start, run in cases[r % len(cases):] + cases[:r % len(cases)]:
                    proc = start(tmp)
                    try:
                        dropped, got, skipped = run(driver)
                    finally:
                        ended = None if proc.alive() else proc.proc.returncode
                        printed = proc.stop()
                    drops[label] += dropped
                    if not got.size:
                        tail = "\n    ".join(printed.strip().splitlines()[-15:]) or "nothing"
                        print(f"  ({label}: no answer in 30 s in one round, the node not started "
                              f"or not found{'' if ended is None else f', it ended ({ended})'}; "
                              f"its states count as dropped. It printed:\n    {tail})")
                    late[label] += skipped
                    lat[label].append(got)
    finally:
        driver.destroy_node()
        rclpy.try_shutdown()
    return {k: (drops[k], np.concatenate(lat[k]), late[k]) for k in lat}


def _echoes(label: str, run: Callable[[Any], tuple[int, np.ndarray, int]]
            ) -> tuple[Case, Case]:
    """The echo measured first and, as a case of its own, last: its p99 over the first's is
    how far two runs of the same process differ in this table, the resolution of its ratios."""
    def start(tmp: str) -> Process:
        return _start(["-c", ECHO])

    return (label, start, run), (f"{label}, again", start, run)


def _table(results: dict[str, tuple[int, np.ndarray, int]], echo: str) -> None:
    """Rows of dropped, p50, p99, max, driver late; then each node's p50 and p99 over the
    echo's, its two cases pooled (their p99s over each other: the table's own noise)."""
    print(f"{'node':<42} {'dropped':>8} {'p50':>7} {'p99':>7} {'max':>7} {'driver late':>12}")
    for label, (dropped, x, late) in results.items():
        print(f"{label:<42} {dropped:8d} {np.percentile(x, 50):7.3f} "
              f"{np.percentile(x, 99):7.3f} {x.max():7.3f} {late:12d}")
    print("  driver late: periods the driver woke too late to send in (it then sends once, "
          "for now)")
    pooled = np.concatenate([results[echo][1], results[f"{echo}, again"][1]])
    e50, e99 = np.percentile(pooled, [50, 99])
    for label, (_, x, _) in results.items():
        if not label.startswith(echo):
            print(f"  {label}: p50 = {np.percentile(x, 50) / e50:.2f}, "
                  f"p99 = {np.percentile(x, 99) / e99:.2f} x the echo's")
    spread = (np.percentile(results[f"{echo}, again"][1], 99)
              / np.percentile(results[echo][1], 99))
    print(f"  the echo's two cases: p99 {spread:.2f} x each other (the table's resolution)")


def latency(n: int, rounds: int = 5) -> None:
    """Each node alone on the machine, in turn, ``rounds`` times (n / rounds messages a time,
    a fresh process each), latencies pooled."""
    isolate(*BENCH)
    from pinref import robot_path

    from rbd_ros.dynamics import load_urdf
    from rbd_ros.robots import ARM

    labels = {"arm": "dynamics node, bundled arm (7)", "observer":
              "dynamics node, arm, observer + collision", "talos":
              "dynamics node, talos free flyer (nv 38)"}

    def start(tag: str, path: str, params: str, topic: str = "rbd_dynamics/gravity_torques"
              ) -> Callable[[str], Process]:
        return lambda tmp: _start_node(tmp, "dynamics_node", "rbd_dynamics", path, params,
                                       _timed("dynamics_node", "DynamicsNode", topic, tag))

    def node(path: str, ff: bool) -> Case:
        names = load_urdf(path, floating_base=ff).state_joint_names
        return (labels["talos" if ff else "arm"],
                start("talos" if ff else "arm", path,
                      f"    floating_base: {'true' if ff else 'false'}\n"),
                lambda d: measure(d, names, "rbd_dynamics/gravity_torques", n // rounds))

    echo_names = [f"joint{k}" for k in range(1, 8)]
    first, again = _echoes("echo (rclpy limit)",
                           lambda d: measure(d, echo_names, "echo", n // rounds))
    observer: Case = (
        labels["observer"], start("observer", str(ARM), "    collision_thresholds: [50.0]\n",
                                  "rbd_dynamics/external_torques"),
        lambda d: measure(d, echo_names, "rbd_dynamics/external_torques", n // rounds))
    twin: Case = ("echo with the node's subscriptions, services and timers",
                  lambda tmp: _start(["-c", ECHO_TWIN]),
                  lambda d: measure(d, echo_names, "echo", n // rounds))
    cases = [first, twin, node(str(ARM), False), observer, node(robot_path("talos"), True),
             again]
    print(f"\n## Dynamics node at 1 kHz joint_states, {n} messages in {rounds} interleaved "
          "rounds, best effort 20 deep; latency = answer received - joint state stamped (ms)")
    _inside_table(cases, rounds, "echo (rclpy limit)", labels, twin[0])


def _start_node(tmp: str, module: str, node: str, urdf_path: str, params: str,
                script: str | None = None) -> Process:
    """``python -m rbd_ros.nodes.<module>`` (or ``python -c script``) with ``params`` (YAML
    lines) and the URDF."""
    urdf = "\n".join("      " + x for x in Path(urdf_path).read_text().splitlines())
    file = Path(tmp) / f"{node}.yaml"
    file.write_text(f"{node}:\n  ros__parameters:\n{params}    robot_description: |\n{urdf}\n")
    what = ["-c", script] if script else ["-m", f"rbd_ros.nodes.{module}"]
    return _start([*what, "--ros-args", "--params-file", str(file), "--log-level", "error"])


def first_answer(cache: str) -> float:
    """Seconds from starting the dynamics node (bundled arm) to its first gravity torques, with
    numba's cache in ``cache`` (states sent every 10 ms from before the start)."""
    import rclpy
    from sensor_msgs.msg import JointState

    from rbd_ros.dynamics import load_urdf
    from rbd_ros.robots import ARM

    isolate(*BENCH)
    names = load_urdf(str(ARM)).state_joint_names
    rclpy.init()
    node = rclpy.create_node("first_answer")
    got: list[float] = []
    node.create_subscription(JointState, "rbd_dynamics/gravity_torques",
                             lambda m: got.append(time.monotonic()), 10)
    pub = node.create_publisher(JointState, "joint_states", 10)
    old = os.environ.get("NUMBA_CACHE_DIR")
    os.environ["NUMBA_CACHE_DIR"] = cache
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.monotonic()
            proc = _start_node(tmp, "dynamics_node", "rbd_dynamics", str(ARM), "")
            try:
                while not got and time.monotonic() - t0 < 120:
                    pub.publish(JointState(name=names, position=[0.1] * len(names)))
                    rclpy.spin_once(node, timeout_sec=0.01)
            finally:
                proc.stop()
    finally:
        if old is None:
            del os.environ["NUMBA_CACHE_DIR"]
        else:
            os.environ["NUMBA_CACHE_DIR"] = old
        node.destroy_node()
        rclpy.try_shutdown()
    return got[0] - t0 if got else math.inf


def floating_latency(n: int, rounds: int = 3) -> None:
    """The floating-base node on Talos (both feet in contact, QP every message) at 500 Hz,
    each state after an odometry message of its stamp, beside the echo at the same rate;
    interleaved rounds, fresh processes, latencies pooled (as ``latency``)."""
    from geometry_msgs.msg import WrenchStamped

    from rbd_ros_interfaces.msg import Balance

    run, node, first, twin, again = _standing(n, rounds)
    labels = {"bare": "the node without its physics (first answer again)",
              "node": "floating-base node, talos, 500 Hz",
              "balance": "the same, to ~/balance (ZMP, capture point, polygon)"}
    cases: list[Case] = [
        first, twin, (labels["bare"], node(_without_physics("bare")),
                      run("rbd_floating_base/base_wrench", WrenchStamped)),
        (labels["node"], node(_fb_timed("node")),
         run("rbd_floating_base/base_wrench", WrenchStamped)),
        (labels["balance"], node(_fb_timed("balance", "rbd_floating_base/balance")),
         run("rbd_floating_base/balance", Balance)), again]
    print(f"\n## Floating-base node, Talos (nv 38, two flat feet), joint_states + odom at 500 Hz, "
          f"{n} messages in {rounds} interleaved rounds; latency to ~/base_wrench or ~/balance "
          "(ms)")
    _inside_table(cases, rounds, first[0], labels, twin[0])


def driver_step(n: int, rounds: int = 3, delays: tuple[int, ...] = (0, 15, 30, 45)) -> None:
    """The floating-base node without its physics, made to spin ``delays`` (us) more on each
    state: how this bench's latency grows with a node's own time. A node that answers before
    the driver is back in its wait is taken at once; a later one waits for the driver to wake."""
    from geometry_msgs.msg import WrenchStamped

    run, node, first, twin, again = _standing(n, rounds)
    labels = {f"spin{d}": f"without physics, {d} us more a state" for d in delays}
    cases: list[Case] = [first, twin, *(
        (labels[f"spin{d}"], node(_without_physics(f"spin{d}", d)),
         run("rbd_floating_base/base_wrench", WrenchStamped)) for d in delays), again]
    print(f"\n## The floating-base node without its physics, spinning more a state ({n} states "
          f"in {rounds} interleaved rounds, as floating_latency)")
    _inside_table(cases, rounds, first[0], labels, twin[0])


def _standing(n: int, rounds: int) -> tuple[
        Callable[[str, Any], Callable[[Any], tuple[int, np.ndarray, int]]],
        Callable[[str], Callable[[str], Process]], Case, Case, Case]:
    """Talos standing upright, soles flat (every state has an answer), at 500 Hz after an
    odometry message of its stamp: ``run(topic, type)`` measures a case, ``node(script)``
    starts the floating-base node from a script; the echo's two cases and the twin."""
    from sensor_msgs.msg import JointState

    isolate(*BENCH)
    from pinref import robot_path

    from rbd_ros.dynamics import load_urdf

    path = robot_path("talos")
    names = load_urdf(path, floating_base=True).state_joint_names
    sole = "{half_length: 0.1, half_width: 0.05}"
    params = ("    contact_links: [left_sole_link, right_sole_link]\n    contacts:\n"
              f"      left_sole_link: {sole}\n      right_sole_link: {sole}\n")

    def run(topic: str, kind: Any) -> Callable[[Any], tuple[int, np.ndarray, int]]:
        return lambda d: measure(d, names, topic, n // rounds, 500.0, kind, odom=True,
                                 positions=[0.0] * len(names))

    def node(script: str) -> Callable[[str], Process]:
        return lambda tmp: _start_node(tmp, "floating_base_node", "rbd_floating_base", path,
                                       params, script)

    first, again = _echoes("echo (rclpy limit), 500 Hz", run("echo", JointState))
    twin: Case = ("echo taking the odometry too, with the node's other entities",
                  lambda tmp: _start(["-c", ECHO_FB_TWIN]), run("echo", JointState))
    return run, node, first, twin, again


def _inside_table(cases: list[Case], rounds: int, echo: str, labels: dict[str, str],
                  twin: str) -> None:
    """``_interleaved`` and its table, with what the timed nodes (``_timed``, their tags
    ``labels``' keys) measured inside, each beside its p50 over the twin's (how the one grows
    with the other: ``driver_step``)."""
    with tempfile.TemporaryDirectory() as inside:
        os.environ["RBD_BENCH_INSIDE"] = inside
        try:
            results = _interleaved(cases, rounds)
        finally:
            del os.environ["RBD_BENCH_INSIDE"]
        _table(results, echo)
        t50 = np.percentile(results[twin][1], 50)
        print("  inside each node, a joint state's arrival to the output measured handed to "
              "rclpy (us), beside its p50 over the twin's (us):")
        for tag, label in labels.items():
            took = [np.array(f.read_text().split(), dtype=float)[100:]
                    for f in sorted(Path(inside).glob(f"{tag}_*.txt"))]
            if took:
                x = np.concatenate(took) / 1e3
                gap = (np.percentile(results[label][1], 50) - t50) * 1e3
                print(f"    {label}: p50 {np.percentile(x, 50):.1f}, p90 "
                      f"{np.percentile(x, 90):.1f}; over the twin's: {gap:.0f}")


def stale_stop(rates: tuple[float, ...] = (100.0, 1000.0), trials: int = 5) -> None:
    """How long after one of two joint-state publishers dies the dynamics node's outputs stop
    (its joint_state_timeout at the default), and after both die ~/status says so: the arm's
    joints 1-6 and the gripper's joint 7 from two publishers at ``rate``; the gripper's stops."""
    import rclpy

    from rbd_ros.robots import ARM

    isolate(*BENCH)
    print("\n## A joint's publisher dies (dynamics node, bundled arm, joint_state_timeout "
          "0.05 s): from its last\n   state to the last output computed (stamps), and from "
          "the last of all states to ~/status saying so (wall)")
    print(f"{'driver rate':>12} {'last output after (ms): median':>32} {'max':>6} "
          f"{'silence said after (ms): median':>33} {'max':>6}")
    rclpy.init()
    driver = rclpy.create_node("stale_driver")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for rate in rates:
                proc = _start_node(tmp, "dynamics_node", "rbd_dynamics", str(ARM), "")
                try:
                    stop_ms, said_ms = _stale_trials(driver, rate, trials)
                finally:
                    proc.stop()
                print(f"{rate:9.0f} Hz {np.median(stop_ms):32.1f} {max(stop_ms):6.1f} "
                      f"{np.median(said_ms):33.1f} {max(said_ms):6.1f}")
    finally:
        driver.destroy_node()
        rclpy.try_shutdown()


def _stale_trials(driver: Any, rate: float, trials: int) -> tuple[list[float], list[float]]:
    """``trials`` times: both publishers for 0.5 s, the gripper's stopped for 0.4 s (ms from
    its last state to the last output), both again, then silence (ms to ~/status)."""
    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from rbd_ros.nodes.common import LATCHED

    names = [f"joint{k}" for k in range(1, 8)]
    outputs: list[int] = []
    status: list[tuple[float, str]] = []
    sub = driver.create_subscription(JointState, "rbd_dynamics/gravity_torques", lambda m: (
        outputs.append(m.header.stamp.sec * 10**9 + m.header.stamp.nanosec)), 100)
    st = driver.create_subscription(String, "rbd_dynamics/status", lambda m: (
        status.append((time.monotonic(), m.data))), LATCHED)
    arm = driver.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
    grip = driver.create_publisher(JointState, "joint_states", qos_profile_sensor_data)

    def run(seconds: float, gripper: bool) -> int:
        end, last = time.monotonic() + seconds, 0
        while time.monotonic() < end:
            t = time.time_ns()
            msg = JointState(name=names[:6], position=[0.1] * 6)
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t, 10**9)
            arm.publish(msg)
            if gripper:
                g = JointState(name=names[6:], position=[0.1])
                g.header.stamp = msg.header.stamp
                grip.publish(g)
                last = t
            wake = time.monotonic() + 1.0 / rate
            while (left := wake - time.monotonic()) > 0:
                rclpy.spin_once(driver, timeout_sec=left)
        return last

    stop_ms, said_ms = [], []
    deadline = time.monotonic() + 60
    while not outputs and time.monotonic() < deadline:
        run(0.1, True)
    for _ in range(trials):
        died = run(0.5, True)  # the gripper's last state
        run(0.4, False)
        stop_ms.append((max(outputs) - died) / 1e6)
        run(0.3, True)
        quiet = time.monotonic()
        end = quiet + 1.0
        while time.monotonic() < end:
            rclpy.spin_once(driver, timeout_sec=0.01)
        said = [t for t, text in status if t >= quiet and "none for" in text]
        said_ms.append((said[0] - quiet) * 1e3 if said else math.inf)
    for entity in (sub, st):
        driver.destroy_subscription(entity)
    for entity in (arm, grip):
        driver.destroy_publisher(entity)
    return stop_ms, said_ms
