"""A nav_msgs/Odometry's stamp and free-flyer state read from its little-endian CDR bytes in one
compiled pass: the floating-base node reads one with every joint state, and the same reading
in Python (:func:`rbd_ros.wire.cdr.odometry`, then the checks of
:func:`rbd_ros.wire.joint_states.unit_base`) cost 10 us of the 20 us an odometry message took.
Bytes it does not take (big-endian, cut short, a value not finite or beyond the limit, a
quaternion that is not a unit one) go the Python way, which reads them or says what is wrong."""

from __future__ import annotations

import numpy as np
from numba import njit

from .layout_match import _word, header_stamp, u32


@njit(cache=True, inline="always")
def _string_end(data, o):  # pragma: no cover (compiled)
    """Where the string at ``o`` (aligned to 4 from the data's start first) ends; -1 past the
    bytes."""
    o += (4 - o) % 4
    if o + 4 > data.shape[0]:
        return -1
    return o + 4 + u32(data, o)


@njit(cache=True, nogil=True)
def read_odometry(data, stamp, words, x, limit, tolerance):  # pragma: no cover (compiled)
    """From ``data`` (an Odometry's bytes as uint8): its stamp (ns) into ``stamp[0]`` and the
    pose's position and quaternion xyzw then the twist's linear and angular parts into ``x``
    (13 doubles: a float64 view of ``words``, where the bytes are gathered), the quaternion
    normalised; False (``x`` then unspecified) unless the bytes are little-endian CDR, whole,
    every value finite and within ``limit``, and the quaternion's norm within ``tolerance``
    of 1."""
    n = data.shape[0]
    if n < 16 or data[0] != 0 or data[1] != 1:
        return False
    stamp[0] = header_stamp(data)
    o = _string_end(data, 12)  # after header.frame_id
    if o < 0:
        return False
    o = _string_end(data, o)  # after child_frame_id
    if o < 0:
        return False
    o += (4 - o) % 8  # aligned to 8 from the data's start
    if o + 8 * 85 > n:  # pose, its covariance, twist, its covariance
        return False
    for k in range(7):
        words[k] = _word(data, o + 8 * k)
    for k in range(6):
        words[7 + k] = _word(data, o + 8 * (43 + k))
    for k in range(13):
        if not abs(x[k]) <= limit:  # False for NaN too
            return False
    norm = np.sqrt(x[3] ** 2 + x[4] ** 2 + x[5] ** 2 + x[6] ** 2)
    if not abs(norm - 1.0) <= tolerance:
        return False
    for k in range(3, 7):
        x[k] /= norm
    return True
