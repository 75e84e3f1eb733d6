"""Recordings for the tests, written by rosbags (an independent writer): joint states of the
bundled arm, with its robot_description and, if given, commanded efforts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from rbd_ros.robots import ARM

TS = get_typestore(Stores.ROS2_HUMBLE)
NAMES = [f"joint{k}" for k in range(1, 8)]
EMPTY = np.empty(0)


def joint_state(ns: int, names: Sequence[str], q: np.ndarray = EMPTY, v: np.ndarray = EMPTY,
                e: np.ndarray = EMPTY) -> bytes:
    """A sensor_msgs/JointState stamped ``ns``, serialised."""
    JS, Header = TS.types["sensor_msgs/msg/JointState"], TS.types["std_msgs/msg/Header"]
    Time = TS.types["builtin_interfaces/msg/Time"]
    msg = JS(header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
             name=list(names), position=np.array(q, dtype=np.float64),
             velocity=np.array(v, dtype=np.float64), effort=np.array(e, dtype=np.float64))
    return bytes(TS.serialize_cdr(msg, "sensor_msgs/msg/JointState"))


def float_array(data: np.ndarray) -> bytes:
    """A std_msgs/Float64MultiArray of ``data``, serialised."""
    F64A = TS.types["std_msgs/msg/Float64MultiArray"]
    Layout = TS.types["std_msgs/msg/MultiArrayLayout"]
    return bytes(TS.serialize_cdr(F64A(layout=Layout(dim=[], data_offset=0),
                                       data=np.array(data, dtype=np.float64)),
                                  "std_msgs/msg/Float64MultiArray"))


def string(text: str) -> bytes:
    """A std_msgs/String, serialised."""
    return bytes(TS.serialize_cdr(TS.types["std_msgs/msg/String"](data=text),
                                  "std_msgs/msg/String"))


def description(urdf: str | None = None) -> bytes:
    """The robot_description of ``urdf``, by default the bundled arm's."""
    return string(urdf if urdf is not None else ARM.read_text())


def write_joint_states(path: Path, ns: Sequence[int], q: np.ndarray,
                       v: np.ndarray | None = None, effort: np.ndarray | None = None,
                       commands: np.ndarray | None = None, names: Sequence[str] = NAMES,
                       plugin: StoragePlugin = StoragePlugin.SQLITE3,
                       cut: frozenset[int] = frozenset(), description_at: int | None = None,
                       command_topic: str = "/effort_commands") -> Path:
    """Joint states ``k`` stamped (and recorded at) ``ns[k]``: positions, and velocities and
    efforts where given; the arm's robot_description first (recorded at ``description_at``,
    by default 1 ns before the first state); commands as Float64MultiArray on
    ``command_topic``, each 1 ns before its state. ``cut``: states (and their commands)
    written cut short, as damaged messages."""
    with Writer(path, version=8, storage_plugin=plugin) as w:
        desc = w.add_connection("/robot_description", "std_msgs/msg/String", typestore=TS)
        js = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=TS)
        cmd = (w.add_connection(command_topic, "std_msgs/msg/Float64MultiArray",
                                typestore=TS) if commands is not None else None)
        w.write(desc, int(ns[0]) - 1 if description_at is None else description_at,
                description())
        for k, t in enumerate(ns):
            if cmd is not None and commands is not None:
                raw = float_array(commands[k])
                w.write(cmd, int(t) - 1, raw[: len(raw) // 2] if k in cut else raw)
            raw = joint_state(int(t), names, q[k], EMPTY if v is None else v[k],
                              EMPTY if effort is None else effort[k])
            w.write(js, int(t), raw[: len(raw) // 2] if k in cut else raw)
    return path


def odometry(ns: int, z: float) -> bytes:
    """A nav_msgs/Odometry stamped ``ns``: the base ``z`` above the origin, level, at rest."""
    t = TS.types
    Time, Header = t["builtin_interfaces/msg/Time"], t["std_msgs/msg/Header"]
    Vec, Point, Quat = (t["geometry_msgs/msg/Vector3"], t["geometry_msgs/msg/Point"],
                        t["geometry_msgs/msg/Quaternion"])
    zero = Vec(x=0.0, y=0.0, z=0.0)
    msg = t["nav_msgs/msg/Odometry"](
        header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id="odom"),
        child_frame_id="base",
        pose=t["geometry_msgs/msg/PoseWithCovariance"](
            pose=t["geometry_msgs/msg/Pose"](position=Point(x=0.0, y=0.0, z=z),
                                             orientation=Quat(x=0.0, y=0.0, z=0.0, w=1.0)),
            covariance=np.zeros(36)),
        twist=t["geometry_msgs/msg/TwistWithCovariance"](
            twist=t["geometry_msgs/msg/Twist"](linear=zero, angular=zero),
            covariance=np.zeros(36)))
    return bytes(TS.serialize_cdr(msg, "nav_msgs/msg/Odometry"))
