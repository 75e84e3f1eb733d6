"""sensor_msgs/JointState in CDR, decoded many at a time.

A driver publishes the same joint names in every message, so its messages share one byte
layout: the floats sit at the same offsets in each. Messages are grouped by layout (their
length and every byte before the first float) and each group is read as one 2-D array with
numpy views, which is what makes hour-long recordings fast to read. Anything else (names that
change, big-endian data) falls back to decoding one message at a time with rosbags."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

F64 = NDArray[np.float64]


@dataclass
class Group:
    """Messages that share one layout: their indices in the input, their joint names, stamps
    (s) and values (an (n, 0) array where the messages carry no such field)."""

    index: NDArray[np.int64]
    names: tuple[str, ...]
    stamps: F64
    position: F64
    velocity: F64
    effort: F64


@dataclass(frozen=True)
class Layout:
    names: tuple[str, ...]
    fields: tuple[tuple[int, int], ...]  # (byte offset, count) of position, velocity, effort
    length: int

    def structure(self) -> list[tuple[int, int]]:
        """The byte ranges every message of this layout shares: all but the stamp and the
        floats."""
        cuts = sorted([(4, 12)] + [(off, off + 8 * n) for off, n in self.fields if n])
        runs, start = [], 0
        for a, b in cuts:
            if a > start:
                runs.append((start, a))
            start = b
        if start < self.length:
            runs.append((start, self.length))
        return runs


def _u32(raw: bytes, o: int) -> int:
    return int(struct.unpack_from("<I", raw, o)[0])


def layout(raw: bytes) -> Layout | None:
    """Offsets of one little-endian JointState message, or None if it is not one."""
    if len(raw) < 16 or raw[1] != 1:  # CDR_LE encapsulation
        return None
    try:
        o = 12 + 4 + _u32(raw, 12)  # after the stamp: frame_id
        o = (o + 3) & ~3
        names = []
        count = _u32(raw, o)
        o += 4
        for _ in range(count):
            n = _u32(raw, o)
            names.append(raw[o + 4 : o + 3 + n].decode())
            o = (o + 4 + n + 3) & ~3
        fields = []
        for _ in range(3):
            o = (o + 3) & ~3
            count = _u32(raw, o)
            o += 4
            if count:
                o += (8 - (o - 4) % 8) % 8  # doubles align to 8 from the data's start
            fields.append((o, count))
            o += 8 * count
        if o != len(raw):
            return None
        return Layout(tuple(names), tuple(fields), len(raw))
    except (struct.error, UnicodeDecodeError, IndexError):
        return None


def decode(raws: Sequence[bytes]) -> list[Group]:
    """Decode JointState messages (raw CDR), one numpy pass per layout."""
    n = len(raws)
    lengths = np.fromiter((len(r) for r in raws), dtype=np.int64, count=n)
    remaining = np.arange(n)
    groups = []
    while remaining.size:
        first = int(remaining[0])
        lay = layout(bytes(raws[first]))
        if lay is None:
            raise ValueError(f"message {first} is not a little-endian sensor_msgs/JointState")
        cand = remaining[lengths[remaining] == lay.length]
        rows = np.frombuffer(b"".join(raws[k] for k in cand),
                             dtype=np.uint8).reshape(cand.size, lay.length)
        same = np.ones(cand.size, dtype=bool)
        for a, b in lay.structure():  # compare slices (views), not a fancy-indexed copy
            same &= (rows[:, a:b] == rows[0, a:b]).all(axis=1)
        members, rows = cand[same], rows[same]
        remaining = np.setdiff1d(remaining, members, assume_unique=True)
        sec = rows[:, 4:8].copy().view("<i4")[:, 0]
        nsec = rows[:, 8:12].copy().view("<u4")[:, 0]
        values = [rows[:, off : off + 8 * count].copy().view("<f8") if count
                  else np.empty((members.size, 0)) for off, count in lay.fields]
        groups.append(Group(members, lay.names, sec + 1e-9 * nsec, *values))
    return groups
