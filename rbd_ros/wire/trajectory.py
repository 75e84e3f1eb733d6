"""A trajectory_msgs/JointTrajectory's points, as any message library gives them (rclpy's
messages, rosbags', a YAML or JSON file's fields read into objects): checked as
joint_trajectory_controller checks them and made the arrays a
:class:`~..dynamics.control.Spline` takes."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dynamics.multibody.model import F64
from .errors import InputError, usable


def trajectory_points(points: Sequence[Any], n: int
                      ) -> tuple[list[int], F64, F64 | None, F64 | None]:
    """A JointTrajectory's points for ``n`` joints as a :class:`~..dynamics.control.Spline`
    takes them: their times from the start (ns), positions, and velocities and accelerations
    with a NaN row where a point gives none (None where no point does). InputError, naming the
    point, unless every point has ``n`` positions, velocities and accelerations empty or ``n``
    long (accelerations only with velocities), every value finite and the times strictly
    increasing (joint_trajectory_controller's rules)."""
    q = np.zeros((len(points), n))
    v, a = np.full_like(q, np.nan), np.full_like(q, np.nan)
    for k, pt in enumerate(points):
        for f, out in (("positions", q), ("velocities", v), ("accelerations", a)):
            vals = getattr(pt, f)
            if len(vals) not in (0, n) or (f == "positions" and len(vals) != n):
                raise InputError(f"point {k} has {len(vals)} {f} for {n} joints")
            if len(vals):
                out[k] = usable(np.asarray(vals, dtype=np.float64), f"point {k}'s {f}")
        if len(pt.accelerations) and not len(pt.velocities):
            raise InputError(f"point {k} has accelerations but no velocities")
    times = [int(pt.time_from_start.sec) * 1_000_000_000 + int(pt.time_from_start.nanosec)
             for pt in points]
    if any(b <= a for a, b in itertools.pairwise(times)) or (times and times[0] < 0):
        raise InputError("the points' time_from_start must be >= 0 and strictly increasing")
    given = [None if np.isnan(x).all() else x for x in (v, a)]
    return times, q, given[0], given[1]
