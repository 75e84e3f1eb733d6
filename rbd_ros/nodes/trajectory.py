"""A desired joint trajectory sampled in time (no ROS types in here).

Between two points positions, velocities and accelerations are interpolated linearly; before
the first point the first is held, after the last the last position is held at rest. Fields a
point leaves empty are zero (positions: the first point's, or the measured position)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..dynamics.multibody.model import F64


class Trajectory:
    def __init__(self, v_index: list[int], times_ns: Sequence[int],
                 positions: F64, velocities: F64, accelerations: F64, start_ns: int) -> None:
        self.v_index = np.asarray(v_index)  # model velocity index of each trajectory joint
        self.times = np.asarray(times_ns, dtype=np.int64)  # time_from_start of each point, ns
        self.p, self.v, self.a = positions, velocities, accelerations  # (points, joints)
        self.start = start_ns

    def sample(self, t_ns: int) -> tuple[F64, F64, F64]:
        """Desired (position, velocity, acceleration) of the trajectory joints at ``t_ns``
        (integer ns, as the start: time is never rounded through float seconds)."""
        s = t_ns - self.start
        times = self.times
        if s <= times[0]:
            return self.p[0], self.v[0], self.a[0]
        if s >= times[-1]:
            z = np.zeros_like(self.p[-1])
            return self.p[-1], z, z
        k = int(np.searchsorted(times, s, side="right")) - 1
        w = float(s - times[k]) / float(times[k + 1] - times[k])
        return tuple((1 - w) * x[k] + w * x[k + 1] for x in (self.p, self.v, self.a))
