"""A recording made up for benchmarks and for filling numba's cache: the bundled 7-joint arm at
1 kHz (sinusoidal joints and efforts) with its robot_description, written by rosbags."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def generate(path: Path, messages: int, rate: float = 1000.0) -> None:
    """A recording of the bundled arm: sinusoidal joints, efforts, the robot_description."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    from rbd_ros.robots import ARM
    from rbd_ros.wire.cdr import STAMP, joint_state, joint_state_layout

    ts = get_typestore(Stores.ROS2_HUMBLE)
    names = [f"joint{k}" for k in range(1, 8)]
    raw = joint_state(names, (7, 7, 7))
    fields = joint_state_layout(raw).fields
    template = np.frombuffer(raw, dtype=np.uint8)
    w = 2 * np.pi * np.linspace(0.2, 0.8, 7)
    with Writer(path, version=8) as writer:
        desc = writer.add_connection("/robot_description", "std_msgs/msg/String", typestore=ts)
        js = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=ts)
        writer.write(desc, 0, ts.serialize_cdr(ts.types["std_msgs/msg/String"](
            data=ARM.read_text()), "std_msgs/msg/String"))
        chunk = 100_000
        for start in range(0, messages, chunk):
            k = np.arange(start, min(start + chunk, messages))
            t = 1_000_000_000 + k / rate
            q = 0.5 * np.sin(w * t[:, None])
            v = 0.5 * w * np.cos(w * t[:, None])
            e = 10 * np.sin(w * t[:, None] + 0.3)
            rows = np.tile(template, (k.size, 1))
            sec = np.floor(t).astype(np.int64)
            nsec = np.rint((t - sec) * 1e9).astype(np.int64)
            rows[:, STAMP : STAMP + 4] = sec.astype("<i4")[:, None].view(np.uint8)
            rows[:, STAMP + 4 : STAMP + 8] = nsec.astype("<u4")[:, None].view(np.uint8)
            for (off, count), x in zip(fields, (q, v, e), strict=True):
                rows[:, off : off + 8 * count] = np.ascontiguousarray(x, "<f8").view(np.uint8)
            for ns, row in zip((sec * 1_000_000_000 + nsec).tolist(), rows, strict=True):
                writer.write(js, ns, row.tobytes())
