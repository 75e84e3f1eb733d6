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
