"""Messages as their CDR bytes, without a message library: joint states read with their numbers
viewed in place, and the stamped outputs (joint torques, wrenches, points, the balance)
written in place. The nodes publish these bytes and the recording tools write them, so a
recording's analysis holds the very messages the node would have sent."""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..dynamics.contact.balance import Balance
from ..dynamics.multibody.model import F64, Direct
from . import cdr
from .errors import LIMIT, InputError, usable
from .joint_states import QUATERNION_TOLERANCE, JointStateMerger, Update, unit_base
from .layout_match import OTHER_LAYOUT, match_layout, merge_message
from .odometry_read import read_odometry

#: (stamp in ns, names, positions, velocities, efforts) of a joint state
JointStateValues = tuple[int, Sequence[str], Any, Any, Any]
_MERGE, _READ_ODOMETRY = Direct(merge_message), Direct(read_odometry)


class JointStateBytes:
    """A sensor_msgs/JointState with fixed names and efforts only, kept as its CDR bytes: each
    output writes its stamp and efforts in place and publishes the bytes (rclpy's conversion of
    a message object, its names included, costs ~8 us an output at 1 kHz)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.buf = bytearray(cdr.joint_state(list(names), (0, 0, len(names))))
        offset, count = cdr.joint_state_layout(bytes(self.buf)).fields[2]
        self.effort = np.frombuffer(self.buf, dtype="<f8", count=count, offset=offset)

    def fill(self, stamp: int, effort: F64) -> bytes:
        """The message stamped ``stamp`` (ns) with these efforts."""
        struct.pack_into("<iI", self.buf, cdr.STAMP, *divmod(stamp, 1_000_000_000))
        self.effort[:] = effort
        return bytes(self.buf)


class StampedBytes:
    """A geometry_msgs/WrenchStamped (6 numbers: force, torque) or PointStamped (3) in
    ``frame``, kept as its CDR bytes: each state writes its stamp and numbers in place and
    publishes the bytes (building rclpy's message and converting it costs ~20 us a topic)."""

    def __init__(self, frame: str, count: int) -> None:
        raw, offset = cdr.stamped(frame, count)
        self.buf = bytearray(raw)
        self.values = np.frombuffer(self.buf, dtype="<f8", count=count, offset=offset)

    def fill(self, stamp: int, values: F64) -> bytes:
        """The message stamped ``stamp`` (ns) with these numbers."""
        struct.pack_into("<iI", self.buf, cdr.STAMP, *divmod(stamp, 1_000_000_000))
        self.values[:] = values
        return bytes(self.buf)


class JointStateReader:
    """Serialised sensor_msgs/JointState messages as (stamp in ns, names, positions,
    velocities, efforts): numbers viewed in the bytes while messages keep one layout (a
    driver's do), read afresh when it changes; bytes in another encoding through ``other``
    (a node's: rclpy's deserialisation), else refused."""

    def __init__(self, other: Callable[[bytes], JointStateValues] | None = None) -> None:
        self.other = other
        self.layout: cdr.JointStateLayout | None = None
        self.ref = np.empty(0, dtype=np.uint8)  # the message the layout was read from
        self.runs = np.empty((0, 2), dtype=np.int64)  # the bytes every message of it shares
        self._at, self._none = np.zeros(1, dtype=np.int64), np.empty((0, 2), dtype=np.int64)
        self._out = np.empty((1, 0), dtype=np.uint64)
        #: by message length, the layouts kept for a compiled merge (:meth:`merge`)
        self._kept: dict[int, list[_Kept]] = {}

    def _same(self, raw: bytes) -> bool:
        """Whether ``raw`` has the last layout's shared bytes (one compiled pass)."""
        data = np.frombuffer(raw, dtype=np.uint8)
        return bool(match_layout(data, self._at, self.ref, self.runs, self._none, self._out)[0])

    def read(self, raw: bytes) -> JointStateValues:
        layout = self.layout
        if layout is None or len(raw) != layout.length or not self._same(raw):
            if cdr.byte_order(raw) != "<":
                if self.other is None:
                    raise InputError("not a little-endian CDR sensor_msgs/JointState")
                return self.other(raw)
            try:
                layout = cdr.joint_state_layout(raw)
            except cdr.CdrError as e:
                raise InputError(str(e)) from e
            self.layout = layout
            self.ref = np.frombuffer(bytes(raw), dtype=np.uint8)
            self.runs = np.array(layout.shared(), dtype=np.int64).reshape(-1, 2)
        sec, nanosec = struct.unpack_from("<iI", raw, cdr.STAMP)
        return (sec * 1_000_000_000 + nanosec, layout.names,
                *(np.frombuffer(raw, "<f8", n, o) for o, n in layout.fields))

    def merge(self, raw: bytes, merger: JointStateMerger, received: Callable[[int], None]
              ) -> tuple[int, Update]:
        """``raw`` read and merged into ``merger`` (:meth:`JointStateMerger.update`; InputError
        and nothing kept if it is unusable), ``received`` told its stamp first. A message of a
        layout already merged into ``merger`` (each publisher's: an arm's, a gripper's) goes
        in one compiled call (~2 us, where reading and merging apart take ~6 us); another, or
        one it refuses, the general way, which says why."""
        if type(raw) is bytes:
            for k in self._kept.get(len(raw), ()):
                if k.merger is merger:
                    verdict = _MERGE.call(np.frombuffer(raw, np.uint8), *k.args)
                    if verdict < 0:
                        t = int(k.stamp[0])
                        received(t)
                        return t, merger.merged(t, k.update, k.whole, k.differenced)
                    if verdict != OTHER_LAYOUT:
                        break  # refused: the general way says why
        t, names, position, velocity, effort = self.read(raw)
        received(t)
        update = merger.update(t, names, position, velocity, effort)
        if self.layout is not None and names is self.layout.names:  # read in place
            self._keep(_Kept(self, merger, self.layout))
        return t, update

    def _keep(self, new: _Kept) -> None:
        """Keep ``new``, with the last 7 others of its merger (a node's publishers)."""
        kept = [k for same in self._kept.values() for k in same
                if k.merger is new.merger and k.layout != new.layout]
        self._kept = {}
        for k in [*kept[-7:], new]:
            self._kept.setdefault(k.layout.length, []).append(k)


class _Kept:
    """How a message of ``layout``, as ``reader`` last read it, goes into ``merger`` in one
    compiled call (:func:`~rbd_ros.wire.layout_match.merge_message`'s arguments)."""

    __slots__ = ("args", "differenced", "layout", "merger", "stamp", "update", "whole")

    def __init__(self, reader: JointStateReader, merger: JointStateMerger,
                 layout: cdr.JointStateLayout) -> None:
        self.merger, self.layout = merger, layout
        self.update, rows, cols, qcols, self.whole = merger.plan(layout.names)
        fields = np.array(layout.fields, dtype=np.int64)
        self.differenced = not fields[1, 1] and bool(fields[0, 1])  # positions only
        self.stamp = np.zeros(1, dtype=np.int64)  # where the call writes the message's stamp
        self.args = (reader.ref, reader.runs, fields, rows, cols, qcols, merger.q, merger.v,
                     merger.a, merger.effort, merger.stamp, merger.seen, merger.scale, LIMIT,
                     self.stamp)


class BalanceBytes:
    """rbd_ros_interfaces/Balance messages in ``frame``, kept as their CDR bytes, one for each
    set of contacts and polygon size: each state writes its stamp and numbers in place
    (writing the message anew cost ~20 us a state, rclpy's ~50 us)."""

    def __init__(self, frame: str) -> None:
        self.frame = frame
        self._kept: dict[tuple[tuple[str, ...], int], tuple[bytearray, dict[str, Any]]] = {}

    def _template(self, contacts: tuple[str, ...], vertices: int
                  ) -> tuple[bytearray, dict[str, Any]]:
        raw, at = cdr.balance_template(self.frame, contacts, vertices)
        buf = bytearray(raw)
        sizes = {"head": 19, "zmp": 3, "capture_point": 3, "omega": 1,
                 "polygon": 3 * vertices, "margins": 2}
        views: dict[str, Any] = {k: np.frombuffer(buf, "<f8", n, at[k]) for k, n in sizes.items()}
        views["polygon"] = views["polygon"].reshape(vertices, 3)
        views.update(zmp_defined=at["zmp_defined"],
                     capture_point_defined=at["capture_point_defined"])
        if len(self._kept) < 64:  # contact sets and polygon sizes: a few
            self._kept[(contacts, vertices)] = (buf, views)
        return buf, views

    def fill(self, stamp: int, b: Balance, contacts: Sequence[str]) -> bytes:
        """The balance ``b`` stamped ``stamp`` (ns), ``contacts`` in touch."""
        key = (tuple(contacts), len(b.support_polygon))
        buf, v = self._kept.get(key) or self._template(*key)
        struct.pack_into("<iI", buf, cdr.STAMP, *divmod(stamp, 1_000_000_000))
        head = v["head"]
        head[0:3], head[3:6], head[6:12] = b.com, b.com_velocity, b.momentum
        head[12:18], head[18] = b.momentum_rate, b.ground_height
        for name, p in (("zmp", b.zmp), ("capture_point", b.capture_point)):
            buf[v[f"{name}_defined"]] = p is not None
            v[name][:] = 0.0 if p is None else p
        v["omega"][0] = b.omega
        v["polygon"][:] = b.support_polygon
        v["margins"][:] = b.zmp_margin, b.capture_point_margin
        return bytes(buf)


def odometry_sample(raw: bytes) -> tuple[int, F64]:
    """(stamp in ns, free-flyer state) of a nav_msgs/Odometry's XCDR1 bytes: its pose in the
    world and its twist in the base frame; InputError if the bytes cannot be read."""
    words, when = np.empty(13, dtype=np.uint64), np.empty(1, dtype=np.int64)
    x = words.view(np.float64)
    # bytes (rclpy's) by their entry point; other buffers (a recording's) through numba's
    # dispatch, which types them
    read = _READ_ODOMETRY.call if type(raw) is bytes else read_odometry
    if read(np.frombuffer(raw, dtype=np.uint8), when, words, x, LIMIT, QUATERNION_TOLERANCE):
        return int(when[0]), x
    try:
        stamp, x = cdr.odometry(raw)
    except cdr.CdrError as e:
        raise InputError(str(e)) from e
    return stamp, unit_base(x)


def imu_sample(raw: bytes) -> tuple[int, F64]:
    """(stamp in ns, linear acceleration: the specific force, base frame) of a
    sensor_msgs/Imu's XCDR1 bytes; InputError unless readable and finite."""
    try:
        stamp, acc = cdr.imu_linear_acceleration(raw)
    except cdr.CdrError as e:
        raise InputError(str(e)) from e
    return stamp, usable(np.array(acc), "the linear acceleration")
