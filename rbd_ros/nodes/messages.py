"""Messages to arrays and arrays to messages: every conversion between a ROS message and the
numbers the core takes, in one place (joint states by name are :mod:`rbd_ros.wire.joint_states`';
what needs no rclpy, the joint states' bytes read and the outputs' written, is
:mod:`rbd_ros.wire.stamped`, which the recording tools share).

A wrench is ``[force; torque]`` and an acceleration ``[linear; angular]``, the order of the
messages and of the core's public functions. The floating base's odometry and IMU are read
from their bytes: rclpy turns every covariance of a message into a numpy array (125 us for one
Odometry, two of 36 numbers, half that for an Imu: several times what the floating-base node
spends on the dynamics of a state), so the node subscribes to the raw bytes and reads the few
fields it uses at their offsets (:mod:`rbd_ros.wire.cdr`); bytes of another encoding than XCDR1 are
handed to rclpy's own deserialisation. Joint states too: rclpy's JointState (its names as
strings, three arrays) costs ~11 us at 1 kHz, and a driver sends the same names in every message,
so their layout is read once and each message's stamp and numbers are viewed in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Accel, Point, Vector3, Wrench

from ..dynamics.multibody.model import F64
from ..wire import cdr
from ..wire.errors import InputError, usable
from ..wire.joint_states import base_state
from ..wire.stamped import JointStateReader, JointStateValues, imu_sample, odometry_sample


def stamp_ns(stamp: Any) -> int:
    """A builtin_interfaces Time or Duration as integer nanoseconds. Never float seconds: a
    double holds today's time since 1970 in ~238 ns steps, and stamps are differenced."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def stamp_msg(ns: int) -> Time:
    """Integer nanoseconds as a builtin_interfaces Time."""
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def joint_state_reader(kind: Any) -> JointStateReader:
    """A reader of serialised joint states (``kind``: the message class), bytes in another
    encoding than XCDR1 read by rclpy."""

    def other(raw: bytes) -> JointStateValues:
        m = _deserialize(raw, kind)
        return stamp_ns(m.header.stamp), m.name, m.position, m.velocity, m.effort

    return JointStateReader(other)


def wrench_array(w: Wrench) -> F64:
    """A geometry_msgs Wrench as ``[force; torque]`` (the core checks it, naming its link)."""
    return np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z])


def wrench(w: F64) -> Wrench:
    out = Wrench()
    out.force.x, out.force.y, out.force.z = (float(x) for x in w[:3])
    out.torque.x, out.torque.y, out.torque.z = (float(x) for x in w[3:])
    return out


def accel_array(a: Accel) -> F64:
    """A geometry_msgs Accel as ``[linear; angular]``; InputError unless finite."""
    return usable(np.array([a.linear.x, a.linear.y, a.linear.z, a.angular.x, a.angular.y,
                            a.angular.z]), "the base acceleration")


def accel(a: F64) -> Accel:
    out = Accel()
    out.linear.x, out.linear.y, out.linear.z = (float(x) for x in a[:3])
    out.angular.x, out.angular.y, out.angular.z = (float(x) for x in a[3:])
    return out


def vector3(v: F64) -> Vector3:
    return Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def point(p: F64) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def pose_twist_state(pose: Any, twist: Any) -> F64:
    """geometry_msgs Pose (world) and Twist (base frame) as a free flyer's state (see
    :func:`.joint_states.base_state`, which checks them)."""
    p, o, lin, ang = pose.position, pose.orientation, twist.linear, twist.angular
    return base_state([p.x, p.y, p.z], [o.x, o.y, o.z, o.w],
                      [lin.x, lin.y, lin.z, ang.x, ang.y, ang.z])


def float_values(data: Sequence[float], names: Sequence[str], what: str) -> F64:
    """A Float64MultiArray's ``data``, one finite value per name of ``names`` in that order."""
    a = np.asarray(data, dtype=np.float64)
    if a.shape != (len(names),):
        raise InputError(f"expected {len(names)} {what} in the order {list(names)}, "
                         f"got {len(a)}")
    return usable(a, what)


def odometry_state(raw: bytes, kind: Any) -> tuple[int, F64]:
    """(stamp in ns, free-flyer state) of a serialised nav_msgs/Odometry: its pose in the
    world and its twist in the base frame (``kind``: its class, for an encoding rclpy reads)."""
    if cdr.byte_order(raw) is not None:
        return odometry_sample(raw)
    m = _deserialize(raw, kind)
    return stamp_ns(m.header.stamp), pose_twist_state(m.pose.pose, m.twist.twist)


def imu_specific_force(raw: bytes, kind: Any) -> tuple[int, F64]:
    """(stamp in ns, linear acceleration: the specific force, base frame) of a serialised
    sensor_msgs/Imu; InputError unless finite."""
    if cdr.byte_order(raw) is not None:
        return imu_sample(raw)
    m = _deserialize(raw, kind)
    a = m.linear_acceleration
    return stamp_ns(m.header.stamp), usable(np.array([a.x, a.y, a.z]), "the linear acceleration")


def _deserialize(raw: bytes, kind: Any) -> Any:
    from rclpy.serialization import deserialize_message

    try:
        return deserialize_message(raw, kind)
    except Exception as e:  # rclpy raises its own error types for bytes it cannot read
        raise InputError(f"cannot read it ({e})") from e
