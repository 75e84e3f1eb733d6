"""Replay a rosbag2 recording into a live ROS graph, for when ``ros2 bag play`` is not there.

Messages go out with their recorded timing (scaled by ``rate``) as the serialized bytes they
were recorded as, so nothing is decoded on the way. Each topic is published with the QoS its
publishers offered when it was recorded (reliability, durability, history), and latched topics
(transient-local; named ``robot_description`` or ``tf_static`` where the recording keeps no
QoS) send their first message before anything else. The options are ``ros2 bag play``'s where
they apply: a loop, a start offset and a duration, remapping with ``--ros-args -r``, ``/clock``
at a fixed rate for ``use_sim_time``, pause and resume (services ``~/pause``, ``~/resume``,
``~/toggle_paused``), a progress line. An MCAP cut short (no summary at its end) is replayed up
to where it is damaged.
"""

from __future__ import annotations

import importlib
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import BagError
from .recording import IMU, JOINT_STATE, JOINT_TRAJECTORY, ODOMETRY, open_reader


def message_class(msgtype: str) -> Any:
    """The rclpy message class of ``pkg/msg/Name``."""
    pkg, _, name = msgtype.split("/")
    try:
        return getattr(importlib.import_module(f"{pkg}.msg"), name)
    except (ImportError, AttributeError):
        raise BagError(f"message type {msgtype} is not installed here") from None


class StopSignalError(Exception):
    """SIGINT or SIGTERM during a replay."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@dataclass
class Playback:
    """How to replay (``ros2 bag play``'s option names in the comments)."""

    rate: float = 1.0  # --rate: speed factor
    clock: float = 0.0  # --clock: /clock messages per second of wall time; 0: none
    topics: list[str] | None = None  # --topics: only these
    start_delay: float = 1.0  # --delay: wait at most this long for every topic's subscriber
    wait_for: list[str] | None = None  # nodes that must subscribe to the joint states (to
    #                                    every topic, in a recording without joint states) first
    wait_timeout: float = 60.0
    max_gap: float = 5.0  # recorded pauses longer than this are skipped
    loop: bool = False  # --loop
    start_offset: float = 0.0  # --start-offset: seconds after the recording's first message
    duration: float = 0.0  # --playback-duration: seconds of the recording; 0: to its end
    start_paused: bool = False  # --start-paused
    progress: float = 1.0  # progress lines per second (rewritten in place on a terminal); 0: none
    ros_args: list[str] = field(default_factory=list)  # after --ros-args: -r from:=to, ...

    def check(self) -> None:
        for name, value, least in (("rate factor", self.rate, 0), ("longest gap", self.max_gap, 0),
                                   ("clock rate", self.clock, None),
                                   ("start offset", self.start_offset, None),
                                   ("playback duration", self.duration, None),
                                   ("progress rate", self.progress, None)):
            if not (value > 0 if least == 0 else value >= 0):  # NaN included
                raise BagError(f"the {name} must be {'> 0' if least == 0 else '>= 0'}, "
                               f"got {value}")


def recorded_qos(conn: Any) -> Any:
    """The QoS to publish a recorded topic with: what its publishers offered when it was
    recorded, as ``ros2 bag play`` adapts it (reliable and transient-local only where every
    publisher was; the deepest history), or, where the recording keeps no QoS, reliable with
    a depth of 1000 (transient-local for ``robot_description`` and ``tf_static``). The history
    is at least 1000 deep (1 s at 1 kHz): it decides only what a reliable reader that fell
    behind can still be resent, and which of a latched topic's messages a late subscriber
    gets."""
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    from rosbags.interfaces import QosDurability, QosHistory, QosReliability
    from rosbags.rosbag2.metadata import parse_qos

    offered = getattr(getattr(conn, "ext", None), "offered_qos_profiles", None)
    if offered is None:
        offered = getattr(conn, "offered_qos", "")  # our MCAP reader: the YAML text
    try:
        profiles = parse_qos(offered) if isinstance(offered, str) else list(offered or ())
    except Exception:  # rosbags' own error types: an unreadable profile is no profile
        profiles = []
    if not profiles:
        latched = conn.topic.endswith(("robot_description", "tf_static"))
        return QoSProfile(depth=1 if latched else 1000, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL if latched
                          else DurabilityPolicy.VOLATILE)
    reliable = all(q.reliability == QosReliability.RELIABLE for q in profiles)
    latched = all(q.durability == QosDurability.TRANSIENT_LOCAL for q in profiles)
    keep_all = any(q.history == QosHistory.KEEP_ALL for q in profiles)
    depth = max(1000, *(q.depth for q in profiles))
    return QoSProfile(
        history=HistoryPolicy.KEEP_ALL if keep_all else HistoryPolicy.KEEP_LAST, depth=depth,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)


def latched(conn: Any) -> bool:
    """Whether a recorded topic is latched (its publishers offered transient-local)."""
    from rclpy.qos import DurabilityPolicy

    return bool(recorded_qos(conn).durability == DurabilityPolicy.TRANSIENT_LOCAL)


def _wait_for(node: Any, names: list[str], pubs: dict[str, Any], timeout: float,
              also: dict[str, Any] | None = None) -> None:
    """Until each named node subscribes to every topic of ``pubs`` (topic -> our publisher) and
    each publisher, of ``also`` too, has matched every subscriber the graph shows; BagError
    after ``timeout`` seconds."""

    def full(n: str) -> str:
        return n if n.startswith("/") else f"/{n}"

    deadline = time.monotonic() + timeout
    missing: list[str] = []
    while True:
        missing = []
        for topic, pub in {**(also or {}), **pubs}.items():
            subs = node.get_subscriptions_info_by_topic(topic)
            have = {full(f"{s.node_namespace.rstrip('/')}/{s.node_name}") for s in subs}
            if topic in pubs:
                missing += [f"{n} on {topic}" for n in names if full(n) not in have]
            if pub.get_subscription_count() < len(subs):
                missing.append(f"matching {topic}")
        if not missing:
            return
        if time.monotonic() > deadline:
            raise BagError(f"waited {timeout:g} s for {', '.join(names)} to subscribe; still "
                           f"missing: {', '.join(missing)}. Is the node running (ros2 node "
                           "list), in this ROS_DOMAIN_ID, with matching QoS?")
        time.sleep(0.05)


class _Clock:
    """The recording's time as it plays: runs at ``rate`` while playing, stands while paused,
    jumps over skipped gaps. Times in ns of the recording."""

    def __init__(self, rate: float, paused: bool) -> None:
        self.rate, self.paused = rate, paused
        self.lock = threading.Lock()
        self.start(0)

    def start(self, bag_ns: int) -> None:
        with self.lock:
            self.anchor_bag, self.anchor_wall = bag_ns, time.monotonic()

    def now(self) -> int:
        with self.lock:
            if self.paused:
                return self.anchor_bag
            return self.anchor_bag + int((time.monotonic() - self.anchor_wall) * self.rate * 1e9)

    def jump(self, ns: int) -> None:
        with self.lock:
            self.anchor_bag += ns

    def pause(self, paused: bool) -> bool:
        """Pause or resume; whether that changed anything."""
        now = self.now()
        with self.lock:
            if paused == self.paused:
                return False
            self.paused = paused
            self.anchor_bag, self.anchor_wall = now, time.monotonic()
            return True


class _Player:
    def __init__(self, node: Any, clock: _Clock, opts: Playback, total: int) -> None:
        from rosgraph_msgs.msg import Clock

        self.node, self.clock, self.opts, self.total = node, clock, opts, total
        self.clock_pub = node.create_publisher(Clock, "/clock", 10) if opts.clock else None
        self.clock_msg = Clock()
        self.next_tick = self.next_line = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.sent = 0
        self.window = (0, 0)  # this pass's first and last recorded ns
        self.skipped = 0  # ns of recorded gaps skipped in this pass
        from std_srvs.srv import Trigger

        def service(name: str, paused: bool | None) -> None:
            def answer(_req: Any, res: Any) -> Any:
                want = not self.clock.paused if paused is None else paused
                res.success = self.clock.pause(want)
                res.message = ("paused" if want else "playing") + ("" if res.success else
                                                                   " already")
                return res
            node.create_service(Trigger, f"~/{name}", answer)

        service("pause", True)
        service("resume", False)
        service("toggle_paused", None)

    def wait_until(self, bag_ns: int) -> None:
        """Sleep until the recording's clock reaches ``bag_ns``, ticking /clock and the
        progress line meanwhile. /clock never runs past ``bag_ns`` (a process woken late,
        on a busy machine, would otherwise stamp time past a message not yet sent, or past
        the window's end)."""
        while True:
            now = time.monotonic()
            if self.clock_pub is not None and now >= self.next_tick:
                self.next_tick = max(self.next_tick + 1 / self.opts.clock, now)
                ns = min(self.clock.now(), bag_ns)
                self.clock_msg.clock.sec, self.clock_msg.clock.nanosec = divmod(ns, 10**9)
                self.clock_pub.publish(self.clock_msg)
            if self.opts.progress and now >= self.next_line:
                self.next_line = max(self.next_line + 1 / self.opts.progress, now)
                self.progress()
            ahead = bag_ns - self.clock.now()
            if ahead <= 0 and not self.clock.paused:
                return
            wake = min(self.next_tick if self.clock_pub is not None else now + 0.01,
                       self.next_line if self.opts.progress else now + 0.01,
                       now + 0.01, now + max(ahead, 0) * 1e-9 / self.opts.rate)
            time.sleep(max(wake - now, 0.0))

    def progress(self, end: str = "") -> None:
        first, last = self.window
        length = last - first - self.skipped  # the gaps skipped so far are not played
        at = min(max(self.clock.now() - first - self.skipped, 0), length) * 1e-9
        line = (f"[{'paused' if self.clock.paused else 'playing'}] {at:8.2f} of "
                f"{length * 1e-9:.2f} s, {self.sent} of {self.total} messages")
        if self.tty:
            print(f"\r{line}\x1b[K", end=end, file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)


def _selected(reader: Any, conns: list[Any], opts: Playback) -> tuple[int, int]:
    """The first and last recorded ns of the replayed window (offset and duration applied)."""
    if hasattr(reader, "start_time"):  # rosbags: from the index, without reading messages
        first, last = reader.start_time, reader.end_time
    else:
        stamps = [s for _, s, _ in reader.messages(connections=conns)]
        if not stamps:
            raise BagError("the recording has no messages on the replayed topics")
        first, last = min(stamps), max(stamps)
    start = first + int(opts.start_offset * 1e9)
    if start > last:
        raise BagError(f"--start-offset {opts.start_offset:g} s is past the recording's end "
                       f"({(last - first) * 1e-9:.3f} s after its first message)")
    stop = min(last, start + int(opts.duration * 1e9)) if opts.duration else last
    return start, stop


def replay(paths: list[Path], opts: Playback) -> tuple[int, int, int]:
    """Publish the recording: (messages sent, messages in the recording's replayed topics, the
    signal that stopped it or 0). Playback starts once every topic has a subscriber, or after
    ``start_delay`` seconds, whichever comes first; with ``wait_for`` (node names), once each
    of those nodes subscribes to every replayed JointState topic, or to every replayed topic in
    a recording without joint states (a trajectory for a controller) (BagError after
    ``wait_timeout`` s). A pause longer than ``max_gap`` recorded seconds is skipped (said on
    stderr). SIGINT and SIGTERM end it at once."""
    opts.check()
    import rclpy

    reader, conns = _opened(paths, opts)
    total = sum(c.msgcount for c in conns)
    window = _selected(reader, conns, opts)
    owns_context = not rclpy.ok()
    if owns_context:  # our handlers, not rclpy's: a signal must stop the loop, not the context
        from rclpy.signals import SignalHandlerOptions

        rclpy.init(args=["rbd-ros-replay", "--ros-args", *opts.ros_args] if opts.ros_args
                   else None, signal_handler_options=SignalHandlerOptions.NO)

    def stop(signum: int, _frame: Any) -> None:
        raise StopSignalError(signum)

    node = rclpy.create_node("rbd_replay")
    pubs = {c.id: node.create_publisher(message_class(c.msgtype), c.topic, recorded_qos(c))
            for c in conns}
    first: dict[int, bytes | None] = {c.id: None for c in conns if latched(c)}
    player = _Player(node, _Clock(opts.rate, opts.start_paused), opts, total)
    player.window = window
    executor, spinner = _spinning(node)
    stopped = 0
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        _send_latched(reader, conns, pubs, first, player)
        _await_subscribers(node, conns, pubs, opts)
        while True:
            _pass(reader, conns, pubs, first, player)
            if not opts.loop:
                break
            first = {}  # a loop sends every message again, latched ones too
        if opts.progress:
            player.progress(end="\n")
        _delivered(pubs)
    except StopSignalError as e:
        stopped = e.signum
        if opts.progress and player.tty:
            print(file=sys.stderr)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        executor.shutdown(timeout_sec=1.0)
        spinner.join(timeout=2.0)
        reader.close()
        node.destroy_node()
        if owns_context:
            rclpy.try_shutdown()
    _said(reader, player.sent, total, stopped)
    return player.sent, total, stopped


def _spinning(node: Any) -> tuple[Any, threading.Thread]:
    """An executor spinning ``node`` (its pause services) on a thread of its own."""
    from rclpy.executors import SingleThreadedExecutor

    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    return executor, spinner


def _said(reader: Any, sent: int, total: int, stopped: int) -> None:
    """On stderr: how much was replayed, and why not all."""
    damage = getattr(reader, "damage", None)
    if damage:
        print(f"the recording ends in damage ({damage}): replayed what came before it",
              file=sys.stderr)
    print(f"replayed {sent} of {total} messages"
          f"{' (stopped by ' + signal.Signals(stopped).name + ')' if stopped else ''}",
          file=sys.stderr)


def _delivered(pubs: dict[int, Any]) -> None:
    """The last messages are still on their way when the loop ends: a publisher destroyed now
    could take them with it. Reliable readers acknowledge (when the writer next asks, seconds
    apart in Fast DDS): every publisher's readers awaited at once, for at most 2 s; best-effort
    ones cannot, so a moment more."""
    from rclpy.duration import Duration

    deadline = time.monotonic() + 2.0
    waiting = list(pubs.values())
    while waiting and time.monotonic() < deadline:
        waiting = [p for p in waiting if not p.wait_for_all_acked(Duration(seconds=0.02))]
    time.sleep(0.2)


def _opened(paths: list[Path], opts: Playback) -> tuple[Any, list[Any]]:
    """The recording's reader and the connections replayed (BagError if none; what is
    damaged or missing said on stderr)."""
    reader, damaged = open_reader(paths, paged=False)  # rosbags' reader: it seeks in time
    if damaged:
        print(f"warning: {damaged}; replaying it up to where it is damaged", file=sys.stderr)
    conns = [c for c in reader.connections if opts.topics is None or c.topic in opts.topics]
    if not conns:
        reader.close()
        raise BagError(f"none of {opts.topics} is in the recording; topics: "
                       f"{sorted({c.topic for c in reader.connections})}")
    if not any(c.msgtype in (JOINT_STATE, JOINT_TRAJECTORY) for c in conns):
        # (a trajectory, as excite records one, is for a controller: nothing to warn of)
        print("warning: no sensor_msgs/JointState among the replayed topics: a dynamics node "
              "will have nothing to answer", file=sys.stderr)
    return reader, conns


def _send_latched(reader: Any, conns: list[Any], pubs: dict[int, Any],
                  first: dict[int, bytes | None], player: _Player) -> None:
    """The latched topics' first messages, wherever the replayed window starts."""
    if not first:
        return
    for conn, _, raw in reader.messages(connections=[c for c in conns if c.id in first]):
        if first[conn.id] is None:
            first[conn.id] = bytes(raw)
            pubs[conn.id].publish(first[conn.id])
            player.sent += 1
        if all(x is not None for x in first.values()):
            break


def _await_subscribers(node: Any, conns: list[Any], pubs: dict[int, Any],
                       opts: Playback) -> None:
    """Until the ``wait_for`` nodes subscribe (BagError after ``wait_timeout``), or else until
    every topic has a subscriber or ``start_delay`` is over."""
    if opts.wait_for:
        states = [c for c in conns if c.msgtype == JOINT_STATE] or conns
        # a legged robot's odometry and IMU: matched with whoever subscribes to them
        sensors = [c for c in conns if c.msgtype in (ODOMETRY, IMU)]
        _wait_for(node, opts.wait_for, {pubs[c.id].topic_name: pubs[c.id] for c in states},
                  opts.wait_timeout, {pubs[c.id].topic_name: pubs[c.id] for c in sensors})
    else:
        deadline = time.monotonic() + opts.start_delay  # let subscribers discover us
        while time.monotonic() < deadline and \
                not all(p.get_subscription_count() for p in pubs.values()):
            time.sleep(0.02)
    time.sleep(0.2)  # matched on this side; give the other side a moment too


def _pass(reader: Any, conns: list[Any], pubs: dict[int, Any], first: dict[int, bytes | None],
          player: _Player) -> None:
    """One pass over the window: each message when the recording's clock reaches it."""
    start, stop = player.window
    opts, clock = player.opts, player.clock
    clock.start(start)
    player.skipped = 0
    last = start
    for conn, stamp, raw in _window(reader, conns, start, stop):
        if conn.id in first and first[conn.id] == bytes(raw):
            first[conn.id] = None  # sent already, first of all
            continue
        if stamp - last > opts.max_gap * 1e9:
            jump = max(0, stamp - clock.now())
            clock.jump(jump)
            player.skipped += jump
            print(f"skipped a gap of {(stamp - last) * 1e-9:.6g} s in the recording "
                  f"(longer than --max-gap {opts.max_gap:g} s) after message {player.sent}",
                  file=sys.stderr)
        last = stamp
        player.wait_until(stamp)
        pubs[conn.id].publish(bytes(raw))  # serialized: published as recorded
        player.sent += 1


def _window(reader: Any, conns: list[Any], start: int, stop: int
            ) -> Iterator[tuple[Any, int, bytes]]:
    """The messages recorded from ``start`` to ``stop`` (ns, both included)."""
    if hasattr(reader, "start_time"):  # rosbags reads from the index: nothing before start
        yield from reader.messages(connections=conns, start=start, stop=stop + 1)
        return
    for m in reader.messages(connections=conns):
        if m[1] > stop:
            return
        if m[1] >= start:
            yield m
