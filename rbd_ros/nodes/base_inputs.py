"""The floating base's inputs, nav_msgs/Odometry and sensor_msgs/Imu, read from their CDR bytes.

rclpy turns every covariance of a message into a numpy array: 125 us for one Odometry (two of
36 numbers) and half that for an Imu, several times what the floating-base node spends on the
dynamics of a state. The node subscribes to the raw bytes instead and reads the few fields it
uses at their offsets (XCDR1, the encoding of every ROS 2 middleware); any other encoding is
handed to rclpy's own deserialisation.
"""

from __future__ import annotations

import struct
from typing import Any

from .joint_states import JointStateError

_ENDIAN = {b"\x00\x00": ">", b"\x00\x01": "<"}  # CDR_BE, CDR_LE: the encapsulation header


def _fields(raw: bytes) -> tuple[str, int, int]:
    """(struct byte order, stamp in ns, offset of the first 8-aligned field after the header's
    frame_id and the string that follows it)."""
    order = _ENDIAN[raw[:2]]
    sec, nanosec, n = struct.unpack_from(order + "iII", raw, 4)
    o = 16 + n  # data starts at 4: stamp 8, frame_id length 4, frame_id n
    return order, sec * 1_000_000_000 + nanosec, o


def _align(o: int, k: int) -> int:
    return o + (-(o - 4)) % k  # alignment counts from the start of the data, after the header


def _whole(raw: bytes, o: int, doubles: int) -> None:
    """The message is cut short if its ``doubles`` from ``o`` on are not all there."""
    if len(raw) < o + 8 * doubles:
        raise struct.error(f"{len(raw)} bytes where the message needs {o + 8 * doubles}")


def read_odometry(raw: bytes, kind: Any) -> tuple[int, tuple[float, ...], tuple[float, ...]]:
    """(stamp in ns, pose: position and quaternion xyzw, twist: linear and angular) of a
    serialised nav_msgs/Odometry (``kind``: its class, for an encoding read by rclpy)."""
    try:
        if raw[:2] not in _ENDIAN:
            return _odometry_message(raw, kind)
        order, stamp, o = _fields(raw)
        o = _align(o, 4)
        (n,) = struct.unpack_from(order + "I", raw, o)  # child_frame_id
        o = _align(o + 4 + n, 8)
        _whole(raw, o, 2 * (6 + 36) + 1)  # pose 7, twist 6, each with 36 covariances
        pose = struct.unpack_from(order + "7d", raw, o)
        twist = struct.unpack_from(order + "6d", raw, o + 8 * (7 + 36))
    except (struct.error, IndexError) as e:
        raise JointStateError(f"cannot read it ({e}): a message cut short?") from e
    return stamp, pose, twist


def read_imu(raw: bytes, kind: Any) -> tuple[int, tuple[float, ...]]:
    """(stamp in ns, linear acceleration) of a serialised sensor_msgs/Imu."""
    try:
        if raw[:2] not in _ENDIAN:
            return _imu_message(raw, kind)
        order, stamp, o = _fields(raw)
        o = _align(o, 8)
        _whole(raw, o, 4 + 9 + 3 + 9 + 3 + 9)  # orientation, angular velocity, linear
        #                                       acceleration, each with its 9 covariances
        return stamp, struct.unpack_from(order + "3d", raw, o + 8 * (4 + 9 + 3 + 9))
    except (struct.error, IndexError) as e:
        raise JointStateError(f"cannot read it ({e}): a message cut short?") from e


def _stamp(msg: Any) -> int:
    return int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)


def _deserialize(raw: bytes, kind: Any) -> Any:
    from rclpy.serialization import deserialize_message

    try:
        return deserialize_message(raw, kind)
    except Exception as e:  # rclpy raises its own error types for bytes it cannot read
        raise JointStateError(f"cannot read it ({e})") from e


def _odometry_message(raw: bytes, kind: Any) -> tuple[int, tuple[float, ...], tuple[float, ...]]:
    m = _deserialize(raw, kind)
    p, o, t = m.pose.pose.position, m.pose.pose.orientation, m.twist.twist
    return _stamp(m), (p.x, p.y, p.z, o.x, o.y, o.z, o.w), \
        (t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z)


def _imu_message(raw: bytes, kind: Any) -> tuple[int, tuple[float, ...]]:
    m = _deserialize(raw, kind)
    a = m.linear_acceleration
    return _stamp(m), (a.x, a.y, a.z)
