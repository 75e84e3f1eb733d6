"""Replay a rosbag2 recording into a live ROS graph, for when ``ros2 bag play`` is not there.

Messages go out with their recorded timing (scaled by ``rate``) as the serialized bytes they
were recorded as, so nothing is decoded on the way. Latched topics (recorded with a
transient-local publisher, or named ``robot_description`` or ``tf_static`` where the recording
keeps no QoS) are published transient-local, and their first message before anything else;
with ``clock`` a ``/clock`` carries the recording's time so nodes with ``use_sim_time`` follow
it.
"""

from __future__ import annotations

import importlib
import signal
import sys
import time
from pathlib import Path
from typing import Any

from .errors import BagError


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


def latched(conn: Any) -> bool:
    """Whether a recorded topic is latched: its publisher offered transient-local durability
    (or, where the recording keeps no QoS, its name is one that always is)."""
    from rosbags.interfaces import QosDurability

    profiles = getattr(getattr(conn, "ext", None), "offered_qos_profiles", None) or []
    if profiles and not isinstance(profiles, str):
        return any(bool(q.durability == QosDurability.TRANSIENT_LOCAL) for q in profiles)
    if isinstance(profiles, str) and profiles.strip():  # older rosbags: the YAML text
        return bool("durability: 1" in profiles)
    return bool(conn.topic.endswith(("robot_description", "tf_static")))


def _wait_for(node: Any, names: list[str], pubs: dict[str, Any], timeout: float) -> None:
    """Until each named node subscribes to every topic of ``pubs`` (topic -> our publisher) and
    each publisher has matched every subscriber the graph shows; BagError after ``timeout``
    seconds."""
    import rclpy

    def full(n: str) -> str:
        return n if n.startswith("/") else f"/{n}"

    deadline = time.monotonic() + timeout
    missing: list[str] = []
    while True:
        rclpy.spin_once(node, timeout_sec=0.05)
        missing = []
        for topic, pub in pubs.items():
            subs = node.get_subscriptions_info_by_topic(topic)
            have = {full(f"{s.node_namespace.rstrip('/')}/{s.node_name}") for s in subs}
            missing += [f"{n} on {topic}" for n in names if full(n) not in have]
            if pub.get_subscription_count() < len(subs):
                missing.append(f"matching {topic}")
        if not missing:
            return
        if time.monotonic() > deadline:
            raise BagError(f"waited {timeout:g} s for {', '.join(names)} to subscribe; still "
                           f"missing: {', '.join(missing)}. Is the node running (ros2 node "
                           "list), in this ROS_DOMAIN_ID, with matching QoS?")


def replay(paths: list[Path], rate: float = 1.0, clock: bool = False,
           topics: list[str] | None = None, start_delay: float = 1.0,
           max_gap: float = 5.0, wait_for: list[str] | None = None,
           wait_timeout: float = 60.0) -> tuple[int, int, int]:
    """Publish the recording: (messages sent, messages selected, the signal that stopped it
    or 0). Playback starts once every topic has a subscriber, or after ``start_delay``
    seconds, whichever comes first; with ``wait_for`` (node names), once each of those nodes
    subscribes to every replayed JointState topic (BagError after ``wait_timeout`` s).
    Latched topics' first messages go out first. A pause longer than ``max_gap`` recorded
    seconds is skipped (said on stderr). SIGINT and SIGTERM end it at once."""
    if not rate > 0:
        raise BagError(f"the rate factor must be > 0, got {rate}")
    if not max_gap > 0:
        raise BagError(f"the longest gap must be > 0 s, got {max_gap}")
    import rclpy
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from rosbags.highlevel import AnyReader
    from rosgraph_msgs.msg import Clock

    try:
        reader = AnyReader([Path(p) for p in paths])
        reader.open()
    except Exception as e:
        raise BagError(f"cannot read {', '.join(map(str, paths))}: {e}") from None
    conns = [c for c in reader.connections if topics is None or c.topic in topics]
    if not conns:
        raise BagError(f"none of {topics} is in the recording; topics: "
                       f"{sorted({c.topic for c in reader.connections})}")
    if not any(c.msgtype == "sensor_msgs/msg/JointState" for c in conns):
        print("warning: no sensor_msgs/JointState among the replayed topics: a dynamics node "
              "will have nothing to answer", file=sys.stderr)
    total = sum(c.msgcount for c in conns)
    owns_context = not rclpy.ok()
    if owns_context:  # our handlers, not rclpy's: a signal must stop the loop, not the context
        from rclpy.signals import SignalHandlerOptions

        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)

    def stop(signum: int, _frame: Any) -> None:
        raise StopSignalError(signum)

    node = rclpy.create_node("rbd_replay")
    latching = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL)
    pubs = {}
    first: dict[int, bytes | None] = {}  # latched topics: their first message, sent first
    for c in conns:
        if latched(c):
            first[c.id] = None
        qos = latching if c.id in first else 100
        pubs[c.id] = node.create_publisher(message_class(c.msgtype), c.topic, qos)
    clock_pub = node.create_publisher(Clock, "/clock", 10) if clock else None
    sent = stopped = 0
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        if first:
            for conn, _, raw in reader.messages(connections=[c for c in conns
                                                             if c.id in first]):
                if first[conn.id] is None:
                    first[conn.id] = bytes(raw)
                    pubs[conn.id].publish(first[conn.id])
                if all(x is not None for x in first.values()):
                    break
        if wait_for:
            _wait_for(node, wait_for, {c.topic: pubs[c.id] for c in conns
                                       if c.msgtype == "sensor_msgs/msg/JointState"},
                      wait_timeout)
        else:
            deadline = time.monotonic() + start_delay  # let subscribers discover us
            while time.monotonic() < deadline and \
                    not all(p.get_subscription_count() for p in pubs.values()):
                time.sleep(0.02)
        time.sleep(0.2)  # matched on this side; give the other side a moment too
        t0_bag = last = -1
        t0 = time.monotonic()
        skipped_ns = 0
        for conn, stamp, raw in reader.messages(connections=conns):
            if conn.id in first and first[conn.id] == bytes(raw):
                first[conn.id] = None  # sent already, first of all
                sent += 1
                continue
            if t0_bag < 0:
                t0_bag = last = stamp
            if stamp - last > max_gap * 1e9:
                skipped_ns += stamp - last
                print(f"skipped a gap of {(stamp - last) * 1e-9:.6g} s in the recording "
                      f"(longer than --max-gap {max_gap:g} s) after message {sent}",
                      file=sys.stderr)
            last = stamp
            due = t0 + (stamp - t0_bag - skipped_ns) * 1e-9 / rate
            while (wait := due - time.monotonic()) > 0:
                time.sleep(min(wait, 0.01))
            if clock_pub is not None:
                msg = Clock()
                msg.clock.sec, msg.clock.nanosec = divmod(stamp, 1_000_000_000)
                clock_pub.publish(msg)
            pubs[conn.id].publish(bytes(raw))  # serialized: published as recorded
            sent += 1
        # the last messages are still on their way when the loop ends: a publisher destroyed
        # now could take them with it (reliable readers acknowledge; best-effort ones cannot,
        # so a moment more)
        from rclpy.duration import Duration

        for pub in pubs.values():
            pub.wait_for_all_acked(Duration(seconds=2))
        time.sleep(0.2)
    except StopSignalError as e:
        stopped = e.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        reader.close()
        node.destroy_node()
        if owns_context:
            rclpy.try_shutdown()
    print(f"replayed {sent} of {total} messages"
          f"{' (stopped by ' + signal.Signals(stopped).name + ')' if stopped else ''}",
          file=sys.stderr)
    return sent, total, stopped
