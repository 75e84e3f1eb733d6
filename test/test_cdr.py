"""The bytes rbd_ros reads and writes by offset = what rosbags' serialiser writes, at every
padding; bytes that are not the message are refused."""

from __future__ import annotations

import numpy as np
import pytest
from rosbags.typesys import Stores, get_typestore

from rbd_ros.wire.cdr import (
    CdrError,
    float64_array_at,
    joint_state,
    joint_state_layout,
)

TS = get_typestore(Stores.ROS2_HUMBLE)
NAMES = [["a"], ["joint1", "ab", "abc", "abcd", "elbow_joint_5"], []]


def _serialised(names: list[str], values: list[np.ndarray]) -> bytes:
    msg = TS.types["sensor_msgs/msg/JointState"](
        header=TS.types["std_msgs/msg/Header"](
            stamp=TS.types["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id=""),
        name=names, position=values[0], velocity=values[1], effort=values[2])
    return bytes(TS.serialize_cdr(msg, "sensor_msgs/msg/JointState"))


@pytest.mark.parametrize("names", NAMES)
@pytest.mark.parametrize("given", [(0, 0, 1), (1, 1, 1), (1, 0, 0), (0, 1, 1)])
def test_a_joint_state_template_is_rosbags_serialisation(names: list[str],
                                                         given: tuple[int, int, int]) -> None:
    """The recording tools build their JointState bytes by hand (no type store in the writer's
    process): the same bytes as rosbags' serialiser, every name length's padding included,
    and the layout finds each array where rosbags put it."""
    counts = tuple(len(names) * g for g in given)
    raw = joint_state(names, counts)  # type: ignore[arg-type]
    rng = np.random.default_rng(len(names))
    values = [rng.normal(size=n) for n in counts]
    lay = joint_state_layout(raw)
    assert lay.names == tuple(names) and lay.length == len(raw)
    assert [n for _, n in lay.fields] == list(counts)
    filled = bytearray(raw)
    for (at, n), x in zip(lay.fields, values, strict=True):
        filled[at : at + 8 * n] = x.astype("<f8").tobytes()
    assert bytes(filled) == _serialised(names, values)


def test_bytes_that_are_no_joint_state_are_refused() -> None:
    raw = joint_state(["joint1", "joint2"], (2, 2, 2))
    for bad in (raw[:3], raw[:20], raw[:-8], raw + b"\x00" * 16, b"\x00\x00" + raw[2:]):
        with pytest.raises(CdrError):
            joint_state_layout(bad)
    # what rclpy's serialize_message leaves after a message with empty arrays is no data
    tail = joint_state_layout(raw + b"\xff" * 12)
    assert tail.fields == joint_state_layout(raw).fields and tail.end == len(raw)


@pytest.mark.parametrize("count", [0, 1, 7])
def test_a_float_arrays_data_is_found_at_its_end(count: int) -> None:
    Dim, Layout = TS.types["std_msgs/msg/MultiArrayDimension"], TS.types[
        "std_msgs/msg/MultiArrayLayout"]
    for label in ("", "a", "ab", "abc", "abcd"):
        data = np.arange(count, dtype=np.float64) + 0.5
        msg = TS.types["std_msgs/msg/Float64MultiArray"](
            layout=Layout(dim=[Dim(label=label, size=count, stride=count)], data_offset=0),
            data=data)
        raw = bytes(TS.serialize_cdr(msg, "std_msgs/msg/Float64MultiArray"))
        at = float64_array_at(raw, count)
        assert np.frombuffer(raw[at:], "<f8").tolist() == data.tolist()
        with pytest.raises(CdrError):
            float64_array_at(raw, count + 1)


@pytest.mark.parametrize("contacts", [[], ["LF_foot"], ["left_sole_link", "ab", "abc", "RH"]])
@pytest.mark.parametrize("defined", [(True, True), (False, True), (True, False)])
def test_a_balance_is_rclpy_s_own_message(contacts: list[str],
                                          defined: tuple[bool, bool]) -> None:
    """rbd_ros_interfaces/Balance written by offset reads back, in rclpy, as the message built
    field by field, at every string length and polygon size (padding included)."""
    from geometry_msgs.msg import Point, Vector3
    from rclpy.serialization import deserialize_message

    from rbd_ros.wire.cdr import balance
    from rbd_ros_interfaces.msg import Balance

    rng = np.random.default_rng(len(contacts))
    head, zmp, xi = rng.normal(size=19), rng.normal(size=3), rng.normal(size=3)
    polygon, margins = rng.normal(size=(len(contacts), 3)), rng.normal(size=2)
    raw = balance("odom_frame", 12_345_678_901, head.tolist(),
                  zmp.tolist() if defined[0] else None, xi.tolist() if defined[1] else None,
                  3.5, contacts, polygon.tolist(), margins.tolist())
    want = Balance(
        center_of_mass=Point(x=head[0], y=head[1], z=head[2]),
        ground_height=head[18], zmp_defined=defined[0], capture_point_defined=defined[1],
        zmp=Point(x=zmp[0], y=zmp[1], z=zmp[2]) if defined[0] else Point(),
        capture_point=Point(x=xi[0], y=xi[1], z=xi[2]) if defined[1] else Point(),
        omega=3.5, contacts=contacts, support_polygon=[Point(x=p[0], y=p[1], z=p[2])
                                                       for p in polygon],
        zmp_margin=margins[0], capture_point_margin=margins[1])
    for k, field in enumerate(("center_of_mass_velocity", "linear_momentum", "angular_momentum",
                               "linear_momentum_rate", "angular_momentum_rate")):
        x, y, z = head[3 + 3 * k: 6 + 3 * k]
        setattr(want, field, Vector3(x=x, y=y, z=z))
    want.header.stamp.sec, want.header.stamp.nanosec = 12, 345_678_901
    want.header.frame_id = "odom_frame"
    assert deserialize_message(raw, Balance) == want


def test_a_balance_written_in_place_is_the_balance_written_anew() -> None:
    """The nodes' and the recordings' Balance bytes, filled in a kept template, equal the
    message written field by field (above: rclpy's own), state after state, as the contacts,
    the polygon's size and which points are defined change and come back."""
    from rbd_ros.dynamics.contact.balance import Balance
    from rbd_ros.wire.cdr import balance
    from rbd_ros.wire.stamped import BalanceBytes

    out = BalanceBytes("odom")
    rng = np.random.default_rng(7)
    sets = [["left_sole_link", "right_sole_link"], ["LF"], ["left_sole_link", "right_sole_link"],
            [], ["LF"]]
    for k, (contacts, vertices) in enumerate(zip(sets, (8, 1, 4, 0, 1), strict=True)):
        zmp = None if k % 2 else rng.normal(size=3)
        xi = None if k == 2 else rng.normal(size=3)
        b = Balance(rng.normal(size=3), rng.normal(size=3), rng.normal(size=6),
                    rng.normal(size=6), float(rng.normal()), zmp, xi, float(k),
                    rng.normal(size=(vertices, 3)), float(rng.normal()), float("nan"))
        head = np.concatenate((b.com, b.com_velocity, b.momentum, b.momentum_rate,
                               [b.ground_height])).tolist()
        want = balance("odom", 1_000_000_000 * k + 17, head,
                       None if zmp is None else zmp.tolist(), None if xi is None else xi.tolist(),
                       b.omega, contacts, b.support_polygon.tolist(),
                       (b.zmp_margin, b.capture_point_margin))
        assert out.fill(1_000_000_000 * k + 17, b, contacts) == want
