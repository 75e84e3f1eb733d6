"""The compiled passes over serialised sensor_msgs/JointState messages: which of them have a
layout's shared bytes (:meth:`rbd_ros.wire.cdr.JointStateLayout.shared`), and their numbers
side by side (the recording tools' decoder); one message of a known layout read and merged
into the model's arrays (a node's). Apart from :mod:`rbd_ros.wire.cdr` so that what only writes
messages (the analysis's writer process) starts without numba."""

from __future__ import annotations

import numpy as np
from numba import njit

from .cdr import STAMP
from .joint_names import merge


@njit(cache=True, inline="always")
def _word(data, x):  # pragma: no cover (compiled)
    """The 8 bytes at ``data[x:x + 8]`` as one little-endian integer. The indices are unsigned
    so that numba adds no negative-index check to each: then LLVM makes the eight byte loads
    one unaligned load (5x faster on the whole decode)."""
    y = np.uint64(x)
    word = np.uint64(0)
    for k in range(8):
        word |= np.uint64(data[y + np.uint64(k)]) << np.uint64(8 * k)
    return word


@njit(cache=True, inline="always")
def _shares(data, s, ref, runs):  # pragma: no cover (compiled)
    """Whether the message at ``s`` in ``data`` equals ``ref`` in every byte range of
    ``runs`` (compared 8 bytes at a time)."""
    for r in range(runs.shape[0]):
        a, b = runs[r, 0], runs[r, 1]
        j = a
        while j + 8 <= b:
            if _word(data, s + j) != _word(ref, j):
                return False
            j += 8
        while j < b:
            if data[s + j] != ref[j]:
                return False
            j += 1
    return True


@njit(cache=True, nogil=True)
def match_layout(data, starts, ref, runs, spans, out):  # pragma: no cover (compiled)
    """One pass over the messages starting at ``starts`` in ``data`` (bytes as uint8): which
    of them equal ``ref`` in every byte range of ``runs`` (a layout's shared bytes); the 8-byte
    words of ``spans`` (offset, words) of each that does go side by side into the next row of
    ``out``. The recording tools' decoder groups thousands of messages with it."""
    same = np.ones(starts.shape[0], dtype=np.bool_)
    m = 0
    for k in range(starts.shape[0]):
        s = starts[k]
        same[k] = _shares(data, s, ref, runs)
        if same[k]:
            c = 0
            for q in range(spans.shape[0]):
                o = s + spans[q, 0]
                for w in range(spans[q, 1]):
                    out[m, c + w] = _word(data, o + 8 * w)
                c += spans[q, 1]
            m += 1
    return same


#: :func:`merge_message`'s verdict on a message that has not the layout (nothing read)
OTHER_LAYOUT = 3


@njit(cache=True, nogil=True)
def merge_message(data, ref, runs, fields, rows, cols, qcols, q, v, a, effort, stamps, seen,
                  scale, limit, stamp):  # pragma: no cover (compiled)
    """A node's joint state, read and merged in one call: OTHER_LAYOUT, and nothing read,
    unless ``data`` (the message's bytes) has the length and the shared bytes (``runs``) of
    ``ref``, the message its layout was read from; else its stamp (ns) into ``stamp[0]`` and
    :func:`~rbd_ros.wire.joint_names.merge`'s verdict on its numbers (``fields``: the offset
    and count of its positions, velocities and efforts)."""
    if data.shape[0] != ref.shape[0] or not _shares(data, 0, ref, runs):
        return OTHER_LAYOUT
    stamp[0] = header_stamp(data)
    return merge(rows, cols, qcols, _doubles(data, fields, 0), _doubles(data, fields, 1),
                 _doubles(data, fields, 2), stamp[0], q, v, a, effort, stamps, seen, scale,
                 limit)


@njit(cache=True, inline="always")
def u32(data, x):  # pragma: no cover (compiled)
    """The little-endian uint32 at ``data[x:x + 4]``."""
    y = np.uint64(x)
    return (np.int64(data[y]) | np.int64(data[y + np.uint64(1)]) << 8
            | np.int64(data[y + np.uint64(2)]) << 16 | np.int64(data[y + np.uint64(3)]) << 24)


@njit(cache=True, inline="always")
def header_stamp(data):  # pragma: no cover (compiled)
    """A message's header stamp (ns) from its little-endian CDR bytes: sec (int32), nanosec."""
    sec = u32(data, STAMP)
    if sec >= 2**31:
        sec -= 2**32
    return sec * 1_000_000_000 + u32(data, STAMP + 4)


@njit(cache=True, inline="always")
def _doubles(data, fields, i):  # pragma: no cover (compiled)
    """The doubles of field ``i`` (``fields[i]``: offset, count), viewed in ``data``."""
    o, n = fields[i, 0], fields[i, 1]
    return data[o : o + 8 * n].view(np.float64)
