"""The floating base's inputs, nav_msgs/Odometry and sensor_msgs/Imu, read from their bytes.

rclpy turns every covariance of a message into a numpy array: 125 us for one Odometry (two of
36 numbers) and half that for an Imu, several times what the floating-base node spends on the
dynamics of a state. The node subscribes to the raw bytes instead and reads the few fields it
uses at their offsets (:mod:`rbd_ros.cdr`); bytes of another encoding than XCDR1 are handed to
rclpy's own deserialisation.
"""

from __future__ import annotations

from typing import Any

from .. import cdr
from .joint_states import JointStateError


def read_odometry(raw: bytes, kind: Any) -> tuple[int, tuple[float, ...], tuple[float, ...]]:
    """(stamp in ns, pose: position and quaternion xyzw, twist: linear and angular) of a
    serialised nav_msgs/Odometry (``kind``: its class, for an encoding read by rclpy)."""
    if cdr.byte_order(raw) is None:
        m = _deserialize(raw, kind)
        p, o, t = m.pose.pose.position, m.pose.pose.orientation, m.twist.twist
        return _stamp(m), (p.x, p.y, p.z, o.x, o.y, o.z, o.w), \
            (t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z)
    try:
        return cdr.odometry(raw)
    except cdr.CdrError as e:
        raise JointStateError(str(e)) from e


def read_imu(raw: bytes, kind: Any) -> tuple[int, tuple[float, ...]]:
    """(stamp in ns, linear acceleration) of a serialised sensor_msgs/Imu."""
    if cdr.byte_order(raw) is None:
        m = _deserialize(raw, kind)
        a = m.linear_acceleration
        return _stamp(m), (a.x, a.y, a.z)
    try:
        return cdr.imu_linear_acceleration(raw)
    except cdr.CdrError as e:
        raise JointStateError(str(e)) from e


def _stamp(msg: Any) -> int:
    return int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)


def _deserialize(raw: bytes, kind: Any) -> Any:
    from rclpy.serialization import deserialize_message

    try:
        return deserialize_message(raw, kind)
    except Exception as e:  # rclpy raises its own error types for bytes it cannot read
        raise JointStateError(f"cannot read it ({e})") from e
