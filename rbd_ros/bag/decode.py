"""sensor_msgs/JointState and std_msgs/Float64MultiArray decoded many at a time (their bytes:
:mod:`rbd_ros.wire.cdr`).

A driver publishes the same joint names in every message, so its messages share one byte
layout: the floats sit at the same offsets in each. Messages are grouped by layout (their
length and every byte but the stamp and the floats) and each group is read as one 2-D array,
which is what makes hour-long recordings fast to read. Names that change make more groups;
big-endian data (no ROS 2 middleware writes it) is refused with a clear error."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from ..wire.cdr import STAMP, CdrError, float64_array_at, joint_state_layout
from ..wire.layout_match import match_layout

F64 = NDArray[np.float64]
T = TypeVar("T")


@dataclass
class Group:
    """Messages that share one layout: their indices in the input, their joint names, stamps
    (ns) and values (an (n, 0) array where the messages carry no such field)."""

    index: NDArray[np.int64]
    names: tuple[str, ...]
    stamps: NDArray[np.int64]
    position: F64
    velocity: F64
    effort: F64


Span = tuple[int, int]


def _groups(data: NDArray[np.uint8], offsets: NDArray[np.int64],
            parse: Callable[[int, bytes], tuple[list[Span], list[Span], T]],
            bad: list[int] | None = None
            ) -> Iterator[tuple[NDArray[np.int64], list[NDArray[np.uint64]], T]]:
    """Messages (message ``k`` at ``data[offsets[k]:offsets[k+1]]``) grouped by layout: the
    first message not yet grouped is parsed (``parse(index, raw)`` gives the byte ranges
    every message of its layout shares with it, the (offset, 8-byte words) spans to read of
    each, and what the caller needs of the layout); its group is the messages of its length
    that have those bytes. Yields the members, their spans' words (a row per member, one
    array per span) and the caller's layout. With ``bad`` a list, a message ``parse`` refuses
    (ValueError) is added to it and left out; without, the ValueError is raised."""
    lengths = np.diff(offsets)
    remaining = np.arange(len(lengths))
    while remaining.size:
        first = int(remaining[0])
        raw = data[offsets[first] : offsets[first + 1]].tobytes()
        try:
            runs, spans, info = parse(first, raw)
        except ValueError:
            if bad is None:
                raise
            bad.append(first)
            remaining = remaining[1:]
            continue
        cand = remaining[lengths[remaining] == len(raw)]
        widths = [w for _, w in spans]
        out = np.empty((cand.size, sum(widths)), dtype=np.uint64)
        same = match_layout(data, offsets[cand], np.frombuffer(raw, dtype=np.uint8),
                      np.array(runs, dtype=np.int64).reshape(-1, 2),
                      np.array(spans, dtype=np.int64).reshape(-1, 2), out)
        members = cand[same]
        out = out[: members.size]
        cuts = np.cumsum([0, *widths])
        remaining = (remaining[~np.isin(remaining, members, assume_unique=True)]
                     if members.size < remaining.size else remaining[:0])
        yield members, [out[:, a:b] for a, b in itertools.pairwise(cuts)], info


def decode(data: NDArray[np.uint8], offsets: NDArray[np.int64],
           bad: list[int] | None = None) -> list[Group]:
    """Decode JointState messages (raw CDR, message ``k`` at ``data[offsets[k]:offsets[k+1]]``),
    one pass per layout. ``bad``: as in :func:`_groups` (unreadable messages skipped)."""

    def parse(k: int, raw: bytes) -> tuple[list[Span], list[Span], tuple[str, ...]]:
        try:
            lay = joint_state_layout(raw)
        except CdrError:
            raise ValueError(f"message {k} is not a little-endian sensor_msgs/JointState") \
                from None
        return lay.shared(), [(STAMP, 1), *lay.fields], lay.names

    groups = []
    for members, (stamp, *fields), names in _groups(data, offsets, parse, bad):
        sec = (stamp[:, 0] & 0xFFFFFFFF).astype(np.uint32).view(np.int32).astype(np.int64)
        nsec = (stamp[:, 0] >> 32).astype(np.int64)
        values = [f.view(np.float64) for f in fields]
        groups.append(Group(members, names, sec * 1_000_000_000 + nsec, *values))
    return groups


def without(groups: list[Group], bad: list[int], n: int) -> list[Group]:
    """The groups of a decode of ``n`` messages, numbered as if its ``bad`` ones (which no group
    holds) were left out: the messages are decoded once."""
    if bad:
        kept = np.ones(n, dtype=bool)
        kept[bad] = False
        renumber = np.cumsum(kept) - 1
        for g in groups:
            g.index = renumber[g.index]
    return groups


def decode_arrays(data: NDArray[np.uint8], offsets: NDArray[np.int64],
                  count_of: Callable[[bytes], int], bad: list[int] | None = None
                  ) -> list[tuple[NDArray[np.int64], F64]]:
    """Float64MultiArray messages, grouped by layout like :func:`decode`: for each group, the
    message indices and their ``data`` as rows. ``count_of`` gives the data length of a
    message (by deserializing it); it is asked once per layout. ``bad``: as in
    :func:`decode`."""

    def parse(k: int, raw: bytes) -> tuple[list[Span], list[Span], None]:
        try:
            count = count_of(raw)
        except Exception as e:  # the deserializer's own error for a message cut short
            raise ValueError(f"message {k} is not a std_msgs/Float64MultiArray: {e}") from None
        try:
            off = float64_array_at(raw, count)
        except CdrError:
            raise ValueError(f"message {k} is not a little-endian std_msgs/Float64MultiArray") \
                from None
        return [(0, off)], [(off, count)], None

    return [(members, values.view(np.float64)) for members, (values,), _ in
            _groups(data, offsets, parse, bad)]
