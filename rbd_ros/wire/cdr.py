"""The bytes of the few ROS 2 messages rbd_ros reads or writes by offset, without a message
library: sensor_msgs/JointState, std_msgs/Float64MultiArray, nav_msgs/Odometry,
sensor_msgs/Imu and rbd_ros_interfaces/Balance.

They are in CDR (XCDR1), what every ROS 2 middleware writes: a 4-byte encapsulation header
(``CDR_LE`` or ``CDR_BE`` first), then the data, each number aligned to its own size counted
from the data's start (:func:`align`); a string is its length (NUL included) and its bytes;
a sequence its count and its items. A std_msgs/Header opens each of these messages but the
array: the stamp at ``STAMP``, the frame id's length at ``FRAME_ID``.

The recording tools decode and write thousands of messages at these offsets at once
(:mod:`rbd_ros.bag.decode`, :mod:`rbd_ros.bag.writers`); the floating-base node reads its
odometry and IMU from their bytes (rclpy's messages cost more than its dynamics), and both
nodes read joint states and write their stamped outputs as bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

ENCAPSULATION = 4  # bytes before the data: the representation identifier, then options
CDR_BE, CDR_LE = b"\x00\x00", b"\x00\x01"  # the identifiers of big- and little-endian CDR
_ORDER = {CDR_BE: ">", CDR_LE: "<"}
STAMP = 4  # header.stamp: sec (int32), then nanosec (uint32)
STAMP_END = 12
FRAME_ID = 12  # header.frame_id: its length (uint32), then its bytes
COVARIANCE = 36  # doubles of a pose's or twist's covariance (Odometry)
IMU_COVARIANCE = 9  # doubles of each covariance of an Imu
#: bytes a serialiser may leave unused after a message's data: rclpy's serialize_message (Fast
#: CDR's size bound) leaves up to 12 after a JointState with empty arrays; they are no data
TAIL = 16


class CdrError(ValueError):
    """Bytes that are not the message they should be: cut short, garbled, or another type."""


def align(offset: int, size: int) -> int:
    """``offset`` moved on to the next multiple of ``size`` counted from the data's start."""
    return offset + (ENCAPSULATION - offset) % size


def byte_order(raw: bytes) -> str | None:
    """struct's byte order of XCDR1 bytes (``"<"`` or ``">"``); None for another encoding."""
    return _ORDER.get(bytes(raw[:2]))


def _u32(raw: bytes, offset: int, order: str = "<") -> int:
    return int(struct.unpack_from(order + "I", raw, offset)[0])


def _string(raw: bytes, offset: int, order: str = "<") -> tuple[bytes, int]:
    """The string at ``offset`` (aligned there first), without its NUL, and where it ends."""
    offset = align(offset, 4)
    end = offset + 4 + _u32(raw, offset, order)
    return bytes(raw[offset + 4 : end - 1]), end


def _header(raw: bytes) -> tuple[str, int, int]:
    """(struct byte order, stamp in ns, the offset after header.frame_id) of XCDR1 bytes."""
    order = byte_order(raw)
    if order is None:
        raise CdrError(f"encapsulation {bytes(raw[:2]).hex()} is not CDR")
    sec, nanosec = struct.unpack_from(order + "iI", raw, STAMP)
    return order, sec * 1_000_000_000 + nanosec, _string(raw, FRAME_ID, order)[1]


def _require(raw: bytes, end: int) -> None:
    """The message reaches ``end``: else a CdrError (cut short)."""
    if len(raw) < end:
        raise CdrError(f"{len(raw)} bytes where it needs {end}")


def _doubles(raw: bytes, order: str, offset: int, count: int) -> tuple[float, ...]:
    _require(raw, offset + 8 * count)
    return struct.unpack_from(f"{order}{count}d", raw, offset)


@contextmanager
def _reading(what: str) -> Iterator[None]:
    """Bytes a reader cannot walk through are a CdrError that says so."""
    try:
        yield
    except (struct.error, IndexError, UnicodeDecodeError, CdrError) as e:
        raise CdrError(f"cannot read it as {what} ({e}): a message cut short?") from e


# ------------------------------------------------------------------ sensor_msgs/JointState


@dataclass(frozen=True)
class JointStateLayout:
    """Where the numbers of a little-endian JointState are: a driver publishes the same names in
    every message, so its messages share one layout."""

    names: tuple[str, ...]
    fields: tuple[tuple[int, int], ...]  # (byte offset, count) of position, velocity, effort
    length: int  # of the message, its unused tail (TAIL) included
    end: int  # of its data
    #: the alignment's padding (start, end): a serialiser need not clear it (Fast CDR leaves
    #: what its buffer held, so it differs from message to message)
    pads: tuple[tuple[int, int], ...] = ()

    def shared(self) -> list[tuple[int, int]]:
        """The byte ranges every message of this layout has in common: all but the stamp, the
        numbers and the padding."""
        cuts = sorted([(STAMP, STAMP_END), *self.pads]
                      + [(o, o + 8 * n) for o, n in self.fields if n])
        runs, start = [], 0
        for a, b in cuts:
            if a > start:
                runs.append((start, a))
            start = b
        if start < self.end:
            runs.append((start, self.end))
        return runs


def joint_state_layout(raw: bytes) -> JointStateLayout:
    """The layout of one little-endian JointState message (CdrError if it is not one)."""
    if bytes(raw[:2]) != CDR_LE:
        raise CdrError("not little-endian CDR")
    with _reading("a sensor_msgs/JointState"):
        return _joint_state_layout(raw)


def _joint_state_layout(raw: bytes) -> JointStateLayout:
    pads: list[tuple[int, int]] = []

    def at(o: int, size: int) -> int:
        """``o`` aligned to ``size``; the bytes skipped are padding."""
        a = align(o, size)
        if a > o:
            pads.append((o, a))
        return a

    o = at(_string(raw, FRAME_ID)[1], 4)
    count, o = _u32(raw, o), o + 4
    names = []
    for _ in range(count):
        name, o = _string(raw, at(o, 4))
        names.append(name.decode())
    fields = []
    for _ in range(3):
        o = at(o, 4)
        count = _u32(raw, o)
        o = at(o + 4, 8) if count else o + 4
        fields.append((o, count))
        o += 8 * count
    if not 0 <= len(raw) - o < TAIL:
        raise CdrError(f"{len(raw)} bytes where its names and arrays end at {o}")
    return JointStateLayout(tuple(names), tuple(fields), len(raw), o, tuple(pads))


class _Writer:
    """Little-endian CDR bytes, written in order: each number aligned to its size."""

    def __init__(self, stamp: int = 0) -> None:
        """The encapsulation header, then a std_msgs/Header's stamp (ns)."""
        self.out = bytearray(CDR_LE + b"\x00\x00")
        self.out += struct.pack("<iI", *divmod(stamp, 1_000_000_000))

    def pad(self, size: int) -> None:
        self.out.extend(bytes(align(len(self.out), size) - len(self.out)))

    def u32(self, value: int) -> None:
        self.pad(4)
        self.out += struct.pack("<I", value)

    def string(self, text: str) -> None:
        b = text.encode() + b"\x00"
        self.u32(len(b))
        self.out += b

    def doubles(self, values: Sequence[float]) -> None:
        self.pad(8)
        self.out += struct.pack(f"<{len(values)}d", *values)

    def strings(self, texts: Sequence[str]) -> None:
        """A sequence of strings: its length, then each."""
        self.u32(len(texts))
        for text in texts:
            self.string(text)

    def array(self, values: Sequence[float]) -> None:
        """A sequence of doubles: its length, then (if any) the doubles, aligned."""
        self.u32(len(values))
        if len(values):
            self.doubles(values)


def joint_state(names: list[str], counts: tuple[int, int, int]) -> bytes:
    """A little-endian JointState with these names, a zero stamp, an empty frame id and
    ``counts`` zeros of position, velocity and effort: a template whose numbers the recording
    tools fill in place (see :func:`joint_state_layout`)."""
    w = _Writer()
    w.string("")  # header.frame_id
    w.strings(names)
    for count in counts:
        w.array([0.0] * count)
    return bytes(w.out)


def stamped(frame: str, count: int) -> tuple[bytes, int]:
    """A little-endian message of a std_msgs/Header (a zero stamp, ``frame``) and then
    ``count`` doubles, all zero (a geometry_msgs/WrenchStamped: 6, force then torque; a
    PointStamped: 3), and where its doubles are: a template whose stamp (at ``STAMP``) and
    doubles are written in place."""
    w = _Writer()
    w.string(frame)
    w.pad(8)
    return bytes(w.out) + bytes(8 * count), len(w.out)


def balance(frame: str, stamp: int, head: Sequence[float], zmp: Sequence[float] | None,
            capture_point: Sequence[float] | None, omega: float, contacts: Sequence[str],
            polygon: Sequence[Sequence[float]], margins: Sequence[float]) -> bytes:
    """A little-endian rbd_ros_interfaces/Balance stamped ``stamp`` (ns) in ``frame``:
    ``head`` its 19 doubles from the centre of mass to the ground height, in the message's
    order; a point given as None is not defined (and written as zeros)."""
    return _balance(frame, stamp, head, zmp, capture_point, omega, contacts, polygon,
                    margins)[0]


def balance_template(frame: str, contacts: Sequence[str], vertices: int
                     ) -> tuple[bytes, dict[str, int]]:
    """A Balance in ``frame`` with these contacts and a polygon of ``vertices`` zeros (a zero
    stamp, both points undefined), and the byte offset of each field written in place:
    ``head`` (19 doubles), ``zmp_defined`` and ``capture_point_defined`` (a bool each),
    ``zmp`` and ``capture_point`` (3 doubles), ``omega``, ``polygon`` (3 doubles a vertex,
    back to back) and ``margins`` (2)."""
    return _balance(frame, 0, [0.0] * 19, None, None, 0.0, contacts, [[0.0] * 3] * vertices,
                    (0.0, 0.0))


def _balance(frame: str, stamp: int, head: Sequence[float], zmp: Sequence[float] | None,
             capture_point: Sequence[float] | None, omega: float, contacts: Sequence[str],
             polygon: Sequence[Sequence[float]], margins: Sequence[float]
             ) -> tuple[bytes, dict[str, int]]:
    w = _Writer(stamp)
    w.string(frame)
    at: dict[str, int] = {}

    def doubles(name: str, values: Sequence[float]) -> None:
        w.pad(8)
        at[name] = len(w.out)
        w.doubles(values)

    doubles("head", head)
    for name, p in (("zmp", zmp), ("capture_point", capture_point)):
        at[f"{name}_defined"] = len(w.out)
        w.out.append(p is not None)
        doubles(name, (0.0, 0.0, 0.0) if p is None else p)
    doubles("omega", (omega,))
    w.strings(contacts)
    w.u32(len(polygon))
    w.pad(8)
    at["polygon"] = len(w.out)
    for vertex in polygon:
        w.doubles(vertex)
    doubles("margins", margins)
    return bytes(w.out), at


def trajectory_accelerations(stamp: int, names: Sequence[str],
                              accelerations: Sequence[float]) -> bytes:
    """A little-endian trajectory_msgs/JointTrajectory stamped ``stamp`` (ns): ``names`` and one
    point with only these accelerations (the floating-base node's flight output)."""
    w = _Writer(stamp)
    w.string("")  # header.frame_id
    w.strings(names)
    w.u32(1)  # one point: positions, velocities, accelerations, effort, time_from_start
    for values in ((), (), accelerations, ()):
        w.array(values)
    w.u32(0)
    w.u32(0)
    return bytes(w.out)


# ------------------------------------------------------------- std_msgs/Float64MultiArray


def float64_array_at(raw: bytes, count: int) -> int:
    """Byte offset of the ``count`` doubles that end a little-endian CDR message (the ``data``
    of a std_msgs/Float64MultiArray); CdrError if its bytes do not end that way."""
    offset = len(raw) - 8 * count
    if len(raw) < 8 or bytes(raw[:2]) != CDR_LE or offset < 8 or (
            count and (offset - ENCAPSULATION) % 8):
        raise CdrError(f"{len(raw)} bytes cannot end in {count} little-endian doubles")
    if count not in (_u32(raw, offset - 4), _u32(raw, offset - 8)):  # then maybe padding
        raise CdrError(f"no count of {count} before its last {count} doubles")
    return offset


# ---------------------------------------------------------- nav_msgs/Odometry, sensor_msgs/Imu


def odometry(raw: bytes) -> tuple[int, NDArray[np.float64]]:
    """(stamp in ns, the pose's position and quaternion xyzw then the twist's linear and
    angular parts: 13 numbers) of an Odometry in XCDR1."""
    with _reading("a nav_msgs/Odometry"):
        order, stamp, o = _header(raw)
        o = align(_string(raw, o, order)[1], 8)  # after child_frame_id
        _require(raw, o + 8 * (2 * (6 + COVARIANCE) + 1))  # the whole message is there
        kind = order + "f8"
        x = np.concatenate((np.frombuffer(raw, kind, 7, o),
                            np.frombuffer(raw, kind, 6, o + 8 * (7 + COVARIANCE))))
    return stamp, x.astype(np.float64, copy=False)


def active_contacts(raw: bytes) -> tuple[int, list[str]]:
    """(stamp in ns, links) of an rbd_ros_interfaces/ActiveContacts in XCDR1."""
    with _reading("an rbd_ros_interfaces/ActiveContacts"):
        order, stamp, o = _header(raw)
        count = _u32(raw, align(o, 4), order)
        o = align(o, 4) + 4
        links = []
        for _ in range(count):
            name, o = _string(raw, o, order)
            links.append(name.decode())
    return stamp, links


def imu_linear_acceleration(raw: bytes) -> tuple[int, tuple[float, ...]]:
    """(stamp in ns, linear acceleration) of an Imu in XCDR1: after the orientation (4) and the
    angular velocity (3), each with its covariance."""
    with _reading("a sensor_msgs/Imu"):
        order, stamp, o = _header(raw)
        o = align(o, 8)
        skip = 4 + IMU_COVARIANCE + 3 + IMU_COVARIANCE
        _require(raw, o + 8 * (skip + 3 + IMU_COVARIANCE))  # the whole message is there
        return stamp, _doubles(raw, order, o + 8 * skip, 3)
