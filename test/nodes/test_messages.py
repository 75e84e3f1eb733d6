"""Odometry, IMU and joint states read from their bytes = what rclpy's own deserialisation gives; wrenches and
accelerations to arrays and back."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Imu, JointState

from rbd_ros.nodes.messages import (
    accel,
    accel_array,
    imu_specific_force,
    joint_state_reader,
    odometry_state,
    wrench,
    wrench_array,
)
from rbd_ros.wire.errors import InputError
from rbd_ros.wire.odometry_read import read_odometry
from rbd_ros.wire.stamped import StampedBytes
from rbd_ros.wire.trajectory import trajectory_points


def _odometry(rng: np.random.Generator, frame: str, child: str) -> Odometry:
    m = Odometry()
    m.header.stamp.sec, m.header.stamp.nanosec = int(rng.integers(0, 2**31)), 999_999_999
    m.header.frame_id, m.child_frame_id = frame, child
    p, o = m.pose.pose.position, m.pose.pose.orientation
    p.x, p.y, p.z = rng.normal(size=3)
    quaternion = rng.normal(size=4)
    o.x, o.y, o.z, o.w = quaternion / np.linalg.norm(quaternion)
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
        stamp, x = odometry_state(serialize_message(m), Odometry)
        assert stamp == m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
        # read in the compiled pass, not left to the Python way
        words = np.empty(13, dtype=np.uint64)
        assert read_odometry(np.frombuffer(serialize_message(m), dtype=np.uint8),
                             np.empty(1, dtype=np.int64), words, words.view(np.float64), 1e9,
                             1e-3)
        assert words.view(np.float64).tolist() == x.tolist()
        p, o, t = m.pose.pose.position, m.pose.pose.orientation, m.twist.twist
        assert x[:3].tolist() == [p.x, p.y, p.z]
        np.testing.assert_allclose(x[3:7], [o.x, o.y, o.z, o.w], rtol=0, atol=1e-15)
        assert x[7:].tolist() == [t.linear.x, t.linear.y, t.linear.z,
                                  t.angular.x, t.angular.y, t.angular.z]


@pytest.mark.parametrize(("field", "value", "said"), [
    ("x", float("nan"), "contains NaN or inf"), ("linear_y", 1e12, "beyond"),
    ("w", 1.01, "unit quaternion"), ("w", 1.0005, None), ("sec", -5, None)])
def test_odometry_the_compiled_reading_refuses_is_read_or_refused_the_python_way(
        field: str, value: float, said: str | None) -> None:
    """The node reads odometry in one compiled pass; what that pass does not take (a value
    not finite or too large, a quaternion off unit) is read by cdr.odometry and unit_base,
    which refuse it with its reason or, within the tolerance, normalise it; a stamp before
    1970 reads as it is."""
    from rbd_ros.wire import cdr
    from rbd_ros.wire.joint_states import unit_base

    m = _odometry(np.random.default_rng(3), "odom", "base_link")
    o = m.pose.pose.orientation
    o.x, o.y, o.z, o.w = 0.0, 0.0, 0.0, 1.0
    if field == "sec":
        m.header.stamp.sec = value
    elif field == "linear_y":
        m.twist.twist.linear.y = value
    else:
        setattr(o if field == "w" else m.pose.pose.position, field, value)
    raw = serialize_message(m)
    if said is not None:
        with pytest.raises(InputError, match=said):
            odometry_state(raw, Odometry)
        return
    stamp, x = odometry_state(raw, Odometry)
    want_stamp, want = cdr.odometry(raw)
    assert stamp == want_stamp == m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
    assert x.tolist() == unit_base(want).tolist() and abs(x[6] - 1.0) < 1e-15


def _big_endian(m: Odometry) -> bytes:
    """``m`` in big-endian XCDR1, written field by field (rclpy writes the machine's order)."""
    out = bytearray(b"\x00\x00\x00\x00")

    def align(size: int) -> None:
        out.extend(b"\0" * (-(len(out) - 4) % size))

    out += struct.pack(">iI", m.header.stamp.sec, m.header.stamp.nanosec)
    for name in (m.header.frame_id, m.child_frame_id):
        align(4)
        out += struct.pack(">I", len(name) + 1) + name.encode() + b"\0"
    align(8)
    p, o, t = m.pose.pose.position, m.pose.pose.orientation, m.twist.twist
    out += struct.pack(">43d", p.x, p.y, p.z, o.x, o.y, o.z, o.w, *m.pose.covariance)
    out += struct.pack(">42d", t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y,
                       t.angular.z, *m.twist.covariance)
    return bytes(out)


@pytest.mark.parametrize("frame_len", range(3))
def test_big_endian_odometry_reads_as_the_little_endian(frame_len: int) -> None:
    m = _odometry(np.random.default_rng(frame_len), "f" * frame_len, "base_link")
    stamp, x = odometry_state(_big_endian(m), Odometry)
    want_stamp, want = odometry_state(serialize_message(m), Odometry)
    assert stamp == want_stamp
    assert x.tolist() == want.tolist()


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
    stamp, acc = imu_specific_force(serialize_message(m), Imu)
    assert stamp == 1_795_000_000_123_456_789
    assert acc.tolist() == [a.x, a.y, a.z]


def test_one_reader_follows_joint_states_whose_layout_changes_from_message_to_message() -> None:
    """One reader, the messages of two publishers interleaved and a third that changes its
    frame, names, and which arrays it fills: each read as rclpy reads it."""
    rng = np.random.default_rng(3)
    reader = joint_state_reader(JointState)
    shapes = [(["a", "b"], "", (2, 2, 2)), (["gripper"], "base", (1, 0, 1)),
              (["a", "b"], "", (2, 2, 2)), (["a", "bb"], "", (2, 2, 2)),
              (["a", "b"], "x", (2, 0, 0)), (["a", "b"], "", (0, 2, 2)), ([], "", (0, 0, 0))]
    for k in range(3 * len(shapes)):
        names, frame, counts = shapes[k % len(shapes)]
        m = JointState(name=names, position=rng.normal(size=counts[0]).tolist(),
                       velocity=rng.normal(size=counts[1]).tolist(),
                       effort=rng.normal(size=counts[2]).tolist())
        m.header.frame_id = frame
        m.header.stamp.sec, m.header.stamp.nanosec = 1_795_000_000 + k, 999_999_999 - k
        stamp, got_names, *values = reader.read(serialize_message(m))
        assert stamp == (1_795_000_000 + k) * 10**9 + 999_999_999 - k
        assert list(got_names) == names
        for got, want in zip(values, (m.position, m.velocity, m.effort), strict=True):
            assert np.asarray(got).tolist() == want.tolist()


def test_padding_that_differs_from_message_to_message_is_one_layout() -> None:
    """Fast CDR does not clear the alignment's padding (rclpy's serialize_message leaves
    different bytes there in each message): a driver's messages that differ only there are
    one layout, read once (a reader that parsed every message again cost ~40 us a state on a
    humanoid), and so are they for the recording tools' decoder."""
    from rbd_ros.bag.decode import decode
    from rbd_ros.wire import cdr

    names = ["j", "joint_22", "hip", "a_long_joint_name"]  # names of every length mod 4
    m = JointState(name=names, position=[0.1] * 4, velocity=[0.2] * 4, effort=[0.3] * 4)
    first = serialize_message(m)
    layout = cdr.joint_state_layout(first)
    assert layout.pads, "these names leave padding"
    rng = np.random.default_rng(0)
    messages = []
    for k in range(5):
        garbled = bytearray(first)
        for a, b in layout.pads:
            garbled[a:b] = rng.integers(1, 256, b - a, dtype=np.uint8).tobytes()
        garbled[cdr.STAMP:cdr.STAMP_END] = np.array([k, 0], dtype="<i4").tobytes()
        messages.append(bytes(garbled))
    reader = joint_state_reader(JointState)
    reader.read(first)
    parsed = reader.layout
    for k, raw in enumerate(messages):
        stamp, got, pos, vel, eff = reader.read(raw)
        assert reader.layout is parsed  # not parsed again
        assert (stamp, list(got)) == (k * 10**9, names)
        assert (pos.tolist(), vel.tolist(), eff.tolist()) == ([0.1] * 4, [0.2] * 4, [0.3] * 4)
    data = np.frombuffer(b"".join(messages), dtype=np.uint8)
    offsets = np.cumsum([0] + [len(x) for x in messages])
    groups = decode(data, offsets)
    assert len(groups) == 1 and groups[0].stamps.tolist() == [k * 10**9 for k in range(5)]


def _two_publishers(names: list[str], k: int, rng: np.random.Generator) -> bytes:
    """Message ``k`` of an arm's publisher (positions, velocities, efforts of its first five
    joints) and a wrist's (positions only) interleaved, padding garbled as Fast CDR leaves it;
    a NaN at k = 20, a huge value at 41, a negative second at 50."""
    from rbd_ros.wire import cdr

    m = JointState(name=names[:5] if k % 3 else names[5:])
    n = len(m.name)
    m.position = rng.normal(size=n).tolist()
    if k % 3:
        m.velocity, m.effort = rng.normal(size=n).tolist(), rng.normal(size=n).tolist()
    if k in (20, 41):
        m.position[1] = [math.nan, 1e12][k == 41]
    m.header.stamp.sec = -3 if k == 50 else 1_795_000_000 + k // 7
    m.header.stamp.nanosec = (k * 48_611_111) % 10**9
    raw = bytearray(serialize_message(m))
    for a, b in cdr.joint_state_layout(bytes(raw)).pads:
        raw[a:b] = rng.integers(0, 256, b - a, dtype=np.uint8).tobytes()
    return bytes(raw)


def test_a_joint_state_merged_in_one_compiled_call_is_the_one_read_and_merged_apart() -> None:
    """A node reads and merges a message of a layout it knows in one compiled call: the arm's
    joints then hold what reading the message and merging its arrays apart gives, message
    after message (two publishers interleaved, one of positions only, padding that differs,
    stamps that go back, a NaN and a huge value refused with the same reason, a negative
    second), and only each publisher's first message and a refusal are read the general way."""
    from rbd_ros.dynamics import load_urdf
    from rbd_ros.robots import ARM
    from rbd_ros.wire.joint_states import JointStateMerger
    from rbd_ros.wire.stamped import JointStateValues

    model = load_urdf(ARM)
    fused, apart = JointStateMerger(model), JointStateMerger(model)
    reader, plain = joint_state_reader(JointState), joint_state_reader(JointState)
    general: list[bytes] = []
    read = reader.read

    def counted(raw: bytes) -> JointStateValues:
        general.append(raw)
        return read(raw)

    reader.read = counted  # type: ignore[method-assign]
    rng = np.random.default_rng(5)
    for k in range(60):
        raw = _two_publishers(model.state_joint_names, k, rng)
        try:
            want = plain.read(raw)
            want_update = apart.update(*want)
        except InputError as e:
            with pytest.raises(InputError) as got:
                reader.merge(raw, fused, lambda t: None)
            assert str(got.value) == str(e)
        else:
            stamps: list[int] = []
            assert reader.merge(raw, fused, stamps.append) == (want[0], want_update)
            assert stamps == [want[0]]
        for field in ("q", "v", "a", "effort", "stamp", "seen"):
            np.testing.assert_array_equal(getattr(fused, field), getattr(apart, field), field)
        assert (fused.latest, fused.whole, fused.differenced) == \
            (apart.latest, apart.whole, apart.differenced)
    assert len(general) == 4, len(general)


@pytest.mark.parametrize("frame_len", range(9))
def test_stamped_outputs_written_as_bytes_are_what_rclpy_reads(frame_len: int) -> None:
    """The floating-base node's wrenches and points, written in place in their bytes, read
    back by rclpy as the stamp, frame and numbers written (at every alignment of the frame)."""
    from geometry_msgs.msg import PointStamped, WrenchStamped
    from rclpy.serialization import deserialize_message

    frame = "f" * frame_len
    wrench_bytes, point_bytes = StampedBytes(frame, 6), StampedBytes(frame, 3)
    stamp = 1_795_000_000_123_456_789
    w = deserialize_message(wrench_bytes.fill(stamp, np.arange(1.0, 7.0)), WrenchStamped)
    p = deserialize_message(point_bytes.fill(stamp, np.array([0.5, -1.5, 2.5])), PointStamped)
    for m in (w, p):
        assert (m.header.stamp.sec, m.header.stamp.nanosec, m.header.frame_id) == \
            (1_795_000_000, 123_456_789, frame)
    assert wrench_array(w.wrench).tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert [p.point.x, p.point.y, p.point.z] == [0.5, -1.5, 2.5]


def test_bytes_cut_short_or_of_an_unknown_encoding_are_refused_with_a_reason() -> None:
    raw = serialize_message(_odometry(np.random.default_rng(0), "odom", "base_link"))
    for cut in (raw[:3], raw[:40], raw[:-8]):
        with pytest.raises(InputError, match="cannot read"):
            odometry_state(cut, Odometry)
    with pytest.raises(InputError, match="cannot read"):
        imu_specific_force(serialize_message(Imu())[:100], Imu)
    with pytest.raises(InputError, match="cannot read"):  # rclpy's turn: it cannot either
        odometry_state(b"\x00\x09" + raw[2:20], Odometry)
    reader = joint_state_reader(JointState)
    state = serialize_message(JointState(name=["a"], position=[1.0], velocity=[0.0],
                                         effort=[0.0]))
    assert reader.read(state)[1] == ("a",)
    for cut in (state[:3], state[:20], state[:-8], state + b"\0" * 16,
                b"\x00\x09" + state[2:20]):
        with pytest.raises(InputError, match="cannot read"):
            reader.read(cut)


def test_wrenches_and_accelerations_go_both_ways_and_refuse_nan() -> None:
    w = np.array([1.0, -2.0, 3.5, 0.25, -0.5, 7.0])  # [force; torque]
    out = wrench(w)
    assert (out.force.x, out.torque.z) == (1.0, 7.0)
    assert wrench_array(out).tolist() == w.tolist()
    assert accel_array(accel(w)).tolist() == w.tolist()  # [linear; angular]
    bad = accel(w)
    bad.angular.y = float("nan")
    with pytest.raises(InputError, match="the base acceleration contains NaN or inf"):
        accel_array(bad)
    bad.angular.y = 1e12  # finite, but no reading
    with pytest.raises(InputError, match=r"contains 1e\+12: no reading or request means"):
        accel_array(bad)


def test_trajectory_points_as_the_controller_takes_them() -> None:
    """Positions on every point; velocities and accelerations where given (a NaN row where a
    point gives none, None where none does); what cannot be followed refused, naming it."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectoryPoint

    def point(t: float, **f: list[float]) -> JointTrajectoryPoint:
        return JointTrajectoryPoint(time_from_start=Duration(sec=int(t), nanosec=round(
            (t % 1) * 1e9)), **f)

    times, q, v, a = trajectory_points(
        [point(0.5, positions=[0.1, 0.2], velocities=[1.0, 2.0]),
         point(1.25, positions=[3.0, 4.0])], 2)
    assert times == [500_000_000, 1_250_000_000]
    assert q.tolist() == [[0.1, 0.2], [3.0, 4.0]]
    assert v is not None and v[0].tolist() == [1.0, 2.0] and np.isnan(v[1]).all()
    assert a is None
    nan = float("nan")
    for bad, why in (([point(0.0, positions=[1.0])], "point 0 has 1 positions for 2 joints"),
                     ([point(0.0, velocities=[1.0, 2.0])], "point 0 has 0 positions"),
                     ([point(1.0, positions=[0, 0]), point(1.0, positions=[0, 0])],
                      "strictly increasing"),
                     ([point(0.0, positions=[0, 0], accelerations=[1.0, 1.0])],
                      "accelerations but no velocities"),
                     ([point(0.0, positions=[0, 0], velocities=[nan, 0.0])],
                      "point 0's velocities contains NaN or inf")):
        with pytest.raises(InputError, match=why):
            trajectory_points(bad, 2)
