"""Recordings for the tests, written by rosbags (an independent writer): joint states of the
bundled arm, with its robot_description and, if given, commanded efforts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from rbd_ros.robots import ARM

TS = get_typestore(Stores.ROS2_HUMBLE)
#: the interface package's message, as its .msg says
ACTIVE_CONTACTS = "rbd_ros_interfaces/msg/ActiveContacts"
TS.register(get_types_from_msg(
    (Path(__file__).resolve().parents[1] / "rbd_ros_interfaces" / "msg" /
     "ActiveContacts.msg").read_text(), ACTIVE_CONTACTS))
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
    return odometry_of(ns, np.array([0.0, 0.0, z, 0.0, 0.0, 0.0, 1.0]), np.zeros(6))


def write_legged(path: Path, urdf: str, t: np.ndarray, q: np.ndarray, v: np.ndarray,
                 effort: np.ndarray, joints: Sequence[str], start_ns: int,
                 odom_every: int = 1, jitter_ns: int = 0, seed: int = 0,
                 active: dict[int, list[str]] | None = None,
                 imu: tuple[int, np.ndarray] | None = None,
                 plugin: StoragePlugin = StoragePlugin.SQLITE3) -> Path:
    """A legged robot's recording: its robot_description, joint states ``k`` (``q[k, 7:]``,
    ``v[k, 6:]``, ``effort[k]``) stamped ``start_ns + t[k]`` and recorded then, and odometry
    (base pose ``q[k, :7]``, twist ``v[k, :6]`` in the base frame) at every ``odom_every``-th
    state, its stamp jittered by up to ``jitter_ns`` (recorded at the state's time); and
    ``active[k]``, the contact links in touch from state ``k`` on, as ActiveContacts recorded
    just before it; ``imu`` (every, specific forces): an Imu at every ``every``-th state, its
    linear acceleration the state's row of the forces (base frame), its stamp jittered too."""
    rng = np.random.default_rng(seed)
    with Writer(path, version=8, storage_plugin=plugin) as w:
        desc = w.add_connection("/robot_description", "std_msgs/msg/String", typestore=TS)
        js = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=TS)
        od = w.add_connection("/odom", "nav_msgs/msg/Odometry", typestore=TS)
        ac = w.add_connection("/active_contacts", ACTIVE_CONTACTS, typestore=TS) \
            if active else None
        im = w.add_connection("/imu", "sensor_msgs/msg/Imu", typestore=TS) if imu else None
        w.write(desc, start_ns - 1, string(urdf))
        for k, s in enumerate(t):
            ns = start_ns + round(s * 1e9)
            if k % odom_every == 0:
                jitter = int(rng.integers(-jitter_ns, jitter_ns + 1)) if jitter_ns else 0
                w.write(od, ns, odometry_of(ns + jitter, q[k, :7], v[k, :6]))
            if im is not None and imu and k % imu[0] == 0:
                jitter = int(rng.integers(-jitter_ns, jitter_ns + 1)) if jitter_ns else 0
                w.write(im, ns, imu_of(ns + jitter, imu[1][k]))
            if ac is not None and active and k in active:
                Time = TS.types["builtin_interfaces/msg/Time"]
                Header = TS.types["std_msgs/msg/Header"]
                msg = TS.types[ACTIVE_CONTACTS](
                    header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
                    links=list(active[k]))
                w.write(ac, ns - 1, bytes(TS.serialize_cdr(msg, ACTIVE_CONTACTS)))
            w.write(js, ns, joint_state(ns, joints, q[k, 7:], v[k, 6:], effort[k]))
    return path


def odometry_of(ns: int, pose: np.ndarray, twist: np.ndarray) -> bytes:
    """A nav_msgs/Odometry stamped ``ns``: ``pose`` (position, quaternion xyzw) in the world,
    ``twist`` (linear, angular) in the base frame."""
    t = TS.types
    Time, Header = t["builtin_interfaces/msg/Time"], t["std_msgs/msg/Header"]
    Vec, Point, Quat = (t["geometry_msgs/msg/Vector3"], t["geometry_msgs/msg/Point"],
                        t["geometry_msgs/msg/Quaternion"])
    p, o = [float(x) for x in pose[:3]], [float(x) for x in pose[3:7]]
    lin, ang = [float(x) for x in twist[:3]], [float(x) for x in twist[3:6]]
    msg = t["nav_msgs/msg/Odometry"](
        header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id="odom"),
        child_frame_id="base",
        pose=t["geometry_msgs/msg/PoseWithCovariance"](
            pose=t["geometry_msgs/msg/Pose"](position=Point(x=p[0], y=p[1], z=p[2]),
                                             orientation=Quat(x=o[0], y=o[1], z=o[2], w=o[3])),
            covariance=np.zeros(36)),
        twist=t["geometry_msgs/msg/TwistWithCovariance"](
            twist=t["geometry_msgs/msg/Twist"](linear=Vec(x=lin[0], y=lin[1], z=lin[2]),
                                               angular=Vec(x=ang[0], y=ang[1], z=ang[2])),
            covariance=np.zeros(36)))
    return bytes(TS.serialize_cdr(msg, "nav_msgs/msg/Odometry"))


def imu_of(ns: int, specific_force: np.ndarray) -> bytes:
    """A sensor_msgs/Imu stamped ``ns`` with this linear acceleration (the rest zero)."""
    t = TS.types
    Time, Header, Vec = (t["builtin_interfaces/msg/Time"], t["std_msgs/msg/Header"],
                         t["geometry_msgs/msg/Vector3"])
    f = [float(x) for x in specific_force]
    msg = t["sensor_msgs/msg/Imu"](
        header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id="base"),
        orientation=t["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
        orientation_covariance=np.zeros(9), angular_velocity=Vec(x=0.0, y=0.0, z=0.0),
        angular_velocity_covariance=np.zeros(9),
        linear_acceleration=Vec(x=f[0], y=f[1], z=f[2]),
        linear_acceleration_covariance=np.zeros(9))
    return bytes(TS.serialize_cdr(msg, "sensor_msgs/msg/Imu"))
