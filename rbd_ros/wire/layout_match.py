"""The one compiled pass over serialised sensor_msgs/JointState messages: which of them have a
layout's shared bytes (:meth:`rbd_ros.wire.cdr.JointStateLayout.shared`), and their numbers
side by side. Apart from :mod:`rbd_ros.wire.cdr` so that what only writes messages (the
analysis's writer process) starts without numba."""

from __future__ import annotations

import numpy as np
from numba import njit


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


@njit(cache=True, nogil=True)
def match_layout(data, starts, ref, runs, spans, out):  # pragma: no cover (compiled)
    """One pass over the messages starting at ``starts`` in ``data`` (bytes as uint8): which
    of them equal ``ref`` in every byte range of ``runs`` (a layout's shared bytes; compared 8
    bytes at a time); the 8-byte words of ``spans`` (offset, words) of each that does go side
    by side into the next row of ``out``. The recording tools' decoder groups thousands of
    messages with it; a node checks one message's layout (no spans)."""
    same = np.ones(starts.shape[0], dtype=np.bool_)
    m = 0
    for k in range(starts.shape[0]):
        s = starts[k]
        for r in range(runs.shape[0]):
            a, b = runs[r, 0], runs[r, 1]
            j = a
            while j + 8 <= b:
                if _word(data, s + j) != _word(ref, j):
                    same[k] = False
                    break
                j += 8
            while same[k] and j < b:
                if data[s + j] != ref[j]:
                    same[k] = False
                j += 1
            if not same[k]:
                break
        if same[k]:
            c = 0
            for q in range(spans.shape[0]):
                o = s + spans[q, 0]
                for w in range(spans[q, 1]):
                    out[m, c + w] = _word(data, o + 8 * w)
                c += spans[q, 1]
            m += 1
    return same
