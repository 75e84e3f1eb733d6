"""Replay a rosbag2 recording into a live ROS graph, for when ``ros2 bag play`` is not there.

Messages go out with their recorded timing (scaled by ``rate``) as the serialized bytes they
were recorded as, so nothing is decoded on the way. ``robot_description`` is published
transient-local, as robot_state_publisher does; with ``clock`` a ``/clock`` carries the
recording's time so nodes with ``use_sim_time`` follow it.
"""

from __future__ import annotations

import importlib
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


def replay(paths: list[Path], rate: float = 1.0, clock: bool = False,
           topics: list[str] | None = None, start_delay: float = 1.0) -> int:
    """Publish the recording; returns the number of messages sent. Playback starts once every
    topic has a subscriber, or after ``start_delay`` seconds, whichever comes first."""
    if not rate > 0:
        raise BagError(f"the rate factor must be > 0, got {rate}")
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
    owns_context = not rclpy.ok()
    if owns_context:
        rclpy.init()
    node = rclpy.create_node("rbd_replay")
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    pubs = {}
    for c in conns:
        qos = latched if c.topic.endswith("robot_description") else 100
        pubs[c.id] = node.create_publisher(message_class(c.msgtype), c.topic, qos)
    clock_pub = node.create_publisher(Clock, "/clock", 10) if clock else None
    deadline = time.monotonic() + start_delay  # let subscribers discover the publishers
    while time.monotonic() < deadline and \
            not all(p.get_subscription_count() for p in pubs.values()):
        time.sleep(0.02)
    time.sleep(0.2)  # matched on this side; give the other side a moment too
    sent = 0
    try:
        t0_bag = None
        t0 = time.monotonic()
        for conn, stamp, raw in reader.messages(connections=conns):
            if t0_bag is None:
                t0_bag = stamp
            due = t0 + (stamp - t0_bag) * 1e-9 / rate
            while (wait := due - time.monotonic()) > 0:
                time.sleep(min(wait, 0.01))
            if clock_pub is not None:
                msg = Clock()
                msg.clock.sec, msg.clock.nanosec = divmod(stamp, 1_000_000_000)
                clock_pub.publish(msg)
            pubs[conn.id].publish(bytes(raw))  # serialized: published as recorded
            sent += 1
    except KeyboardInterrupt:
        pass
    finally:
        reader.close()
        node.destroy_node()
        if owns_context:
            rclpy.try_shutdown()
    print(f"replayed {sent} messages", file=sys.stderr)
    return sent
