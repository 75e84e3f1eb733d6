"""Odometry and IMU read from their bytes = what rclpy's own deserialisation gives."""

from __future__ import annotations

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Imu

from rbd_ros.nodes.base_inputs import read_imu, read_odometry
from rbd_ros.nodes.joint_states import JointStateError


def _odometry(rng: np.random.Generator, frame: str, child: str) -> Odometry:
    m = Odometry()
    m.header.stamp.sec, m.header.stamp.nanosec = int(rng.integers(0, 2**31)), 999_999_999
    m.header.frame_id, m.child_frame_id = frame, child
    p, o = m.pose.pose.position, m.pose.pose.orientation
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = rng.normal(size=7)
    t = m.twist.twist
    t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z = rng.normal(size=6)
    m.pose.covariance = rng.normal(size=36)  # numbers between the fields: a wrong offset shows
    m.twist.covariance = rng.normal(size=36)
    return m


@pytest.mark.parametrize("frame_len", range(9))
def test_odometry_fields_at_every_alignment_of_the_frame_names(frame_len: int) -> None:
    rng = np.random.default_rng(frame_len)
    for child_len in range(9):
        m = _odometry(rng, "f" * frame_len, "c" * child_len)
        stamp, pose, twist = read_odometry(serialize_message(m), Odometry)
        assert stamp == m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
        p, o, t = m.pose.pose.position, m.pose.pose.orientation, m.twist.twist
        assert pose == (p.x, p.y, p.z, o.x, o.y, o.z, o.w)
        assert twist == (t.linear.x, t.linear.y, t.linear.z,
                         t.angular.x, t.angular.y, t.angular.z)


@pytest.mark.parametrize("frame_len", range(9))
def test_imu_linear_acceleration_at_every_alignment(frame_len: int) -> None:
    rng = np.random.default_rng(frame_len)
    m = Imu()
    m.header.stamp.sec, m.header.stamp.nanosec = 1_795_000_000, 123_456_789
    m.header.frame_id = "i" * frame_len
    m.orientation_covariance, m.angular_velocity_covariance, m.linear_acceleration_covariance \
        = rng.normal(size=9), rng.normal(size=9), rng.normal(size=9)
    a = m.linear_acceleration
    a.x, a.y, a.z = rng.normal(size=3)
    m.angular_velocity.z = 7.0
    stamp, acc = read_imu(serialize_message(m), Imu)
    assert stamp == 1_795_000_000_123_456_789
    assert acc == (a.x, a.y, a.z)


def test_bytes_cut_short_or_of_an_unknown_encoding_are_refused_with_a_reason() -> None:
    raw = serialize_message(_odometry(np.random.default_rng(0), "odom", "base_link"))
    for cut in (raw[:3], raw[:40], raw[:-8]):
        with pytest.raises(JointStateError, match="cannot read"):
            read_odometry(cut, Odometry)
    with pytest.raises(JointStateError, match="cannot read"):
        read_imu(serialize_message(Imu())[:100], Imu)
    with pytest.raises(JointStateError, match="cannot read"):  # rclpy's turn: it cannot either
        read_odometry(b"\x00\x09" + raw[2:20], Odometry)
