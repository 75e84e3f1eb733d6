"""A joint trajectory's points joined into a motion, as joint_trajectory_controller joins them.

Each segment between two points is a polynomial in time whose order the two points decide:
linear when either gives positions alone (the velocity is the segment's slope, the
acceleration zero), cubic (Hermite) when both give velocities, quintic when both also give
accelerations. The motion starts from a given state (position, velocity, acceleration: the
state when the trajectory arrived) and reaches the first point at its ``time_from_start``;
from the last point on, that point holds as it is given (its velocity and acceleration, zero
where it gives none: a controller's goal ends at rest; a single point is a desired state).
Times are integer nanoseconds from the trajectory's start, never rounded through float
seconds.
"""

from __future__ import annotations

import bisect

import numpy as np
from numpy.typing import NDArray

from ..errors import TrajectoryError

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


def _coefficients(T: F64, p: F64, v: F64, a: F64) -> F64:
    """(segments, 6, joints) coefficients of each segment's p(s) = sum c_k s^k, s in [0, T]
    seconds, between the knots ``p``, ``v``, ``a`` (segments + 1, joints; NaN rows: the knot
    gives none): linear where either end gives no velocities, cubic Hermite where either gives
    no accelerations, quintic where both give both."""
    given_v = np.asarray(~np.isnan(v).any(axis=1))  # (knots,): the knot gives them
    given_a = np.asarray(~np.isnan(a).any(axis=1))
    linear = ~(given_v[:-1] & given_v[1:])[:, None]
    quintic = (given_a[:-1] & given_a[1:])[:, None] & ~linear
    v, a = np.nan_to_num(v), np.nan_to_num(a)
    p0, p1, v0, v1, a0, a1 = p[:-1], p[1:], v[:-1], v[1:], a[:-1], a[1:]
    T = T[:, None]
    dp = p1 - p0
    c = np.zeros((len(T), 6, p.shape[1]))
    c[:, 0] = p0
    c[:, 1] = np.where(linear, dp / T, v0)
    c[:, 2] = np.where(linear, 0.0, np.where(
        quintic, a0 / 2, (3 * dp - (2 * v0 + v1) * T) / T**2))
    c[:, 3] = np.where(linear, 0.0, np.where(
        quintic, (20 * dp - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T**2) / (2 * T**3),
        (-2 * dp + (v0 + v1) * T) / T**3))
    c[:, 4] = np.where(quintic, (-30 * dp + (14 * v1 + 16 * v0) * T
                                 + (3 * a0 - 2 * a1) * T**2) / (2 * T**4), 0.0)
    c[:, 5] = np.where(quintic, (12 * dp - 6 * (v1 + v0) * T - (a0 - a1) * T**2)
                       / (2 * T**5), 0.0)
    return c


class Spline:
    """The motion through ``positions`` (points, joints) at ``times_ns`` (from the start,
    strictly increasing, >= 0) from the state ``start`` (position, velocity, acceleration;
    ``start`` is reached at time 0). ``velocities`` and ``accelerations`` are (points, joints)
    arrays with a NaN row where a point gives none, or None where no point does."""

    def __init__(self, times_ns: I64 | list[int], positions: F64, velocities: F64 | None,
                 accelerations: F64 | None, start: tuple[F64, F64, F64]) -> None:
        times = np.asarray(times_ns, dtype=np.int64)
        q = np.asarray(positions, dtype=np.float64)
        n, joints = q.shape
        if n == 0 or times.shape != (n,):
            raise TrajectoryError(f"{times.size} times for {n} points: give one "
                                  "time_from_start per point, and at least one point")
        if times[0] < 0 or np.any(np.diff(times) <= 0):
            raise TrajectoryError("the points' time_from_start must be >= 0 and strictly "
                                  "increasing")
        p0, v0, a0 = (np.asarray(x, dtype=np.float64) for x in start)
        missing = np.full_like(q, np.nan)
        v = missing if velocities is None else np.asarray(velocities, dtype=np.float64)
        a = missing if accelerations is None else np.asarray(accelerations, dtype=np.float64)
        edges = times
        if times[0] > 0:  # from the start state to the first point
            edges = np.r_[0, times]
            q, v, a = (np.vstack([x0, x]) for x0, x in ((p0, q), (v0, v), (a0, a)))
        self.knots = edges[:-1]  # each segment's start, ns
        self._knots = self.knots.tolist()  # (for bisect: a lookup without numpy's overhead)
        self.coeffs = _coefficients(np.diff(edges) * 1e-9, q, v, a)
        self.start = (p0, v0, a0)
        # the last point as given: zero where it gives no velocities or accelerations
        self.end = (q[-1].copy(), *(np.zeros(joints) if np.isnan(x[-1]).any() else x[-1].copy()
                                    for x in (v, a)))
        self.duration_ns = int(times[-1])
        self.joints = joints

    def sample(self, t_ns: int) -> tuple[F64, F64, F64]:
        """(position, velocity, acceleration) at ``t_ns`` from the start: the start's position
        at rest before 0, the last point as given from its time on. (One time, as a controller
        asks at each joint state: its segment's polynomial and two derivatives in one product,
        a few microseconds, where :meth:`sample_many`'s masks cost 40.)"""
        t = int(t_ns)
        if t < 0:
            return self.start[0].copy(), np.zeros(self.joints), np.zeros(self.joints)
        if t >= self.duration_ns:
            q, v, a = (x.copy() for x in self.end)
            return q, v, a
        k = bisect.bisect_right(self._knots, t) - 1
        s = (t - self._knots[k]) * 1e-9
        s2, s3 = s * s, s * s * s
        basis = np.array([[1.0, s, s2, s3, s2 * s2, s2 * s3],
                          [0.0, 1.0, 2 * s, 3 * s2, 4 * s3, 5 * s2 * s2],
                          [0.0, 0.0, 2.0, 6 * s, 12 * s2, 20 * s3]])
        q, v, a = basis @ self.coeffs[k]
        return q, v, a

    def sample_many(self, t_ns: I64) -> tuple[F64, F64, F64]:
        """:meth:`sample` at each of ``t_ns``: three (len(t_ns), joints) arrays."""
        t = np.asarray(t_ns, dtype=np.int64)
        q = np.empty((t.size, self.joints))
        v, a = np.zeros_like(q), np.zeros_like(q)
        before, after = t < 0, t >= self.duration_ns
        q[before] = self.start[0]  # at rest where it starts until the start
        q[after], v[after], a[after] = self.end
        inside = ~(before | after)
        if inside.any() and self.knots.size:
            ti = t[inside]
            k = np.searchsorted(self.knots, ti, side="right") - 1
            s = ((ti - self.knots[k]) * 1e-9)[:, None]
            c = self.coeffs[k]  # (samples, 6, joints)
            q[inside] = c[:, 0] + s * (c[:, 1] + s * (c[:, 2] + s * (c[:, 3] + s * (
                c[:, 4] + s * c[:, 5]))))
            v[inside] = c[:, 1] + s * (2 * c[:, 2] + s * (3 * c[:, 3] + s * (
                4 * c[:, 4] + s * 5 * c[:, 5])))
            a[inside] = 2 * c[:, 2] + s * (6 * c[:, 3] + s * (12 * c[:, 4] + s * 20 * c[:, 5]))
        return q, v, a


def sample_times(spline: Spline, step_ns: int) -> I64:
    """Every ``step_ns`` from the start to the last point, every point's time, and just before
    the last (its segment's own velocity, where the last point's may differ)."""
    t = np.union1d(np.arange(0, spline.duration_ns, step_ns, dtype=np.int64),
                   np.append(spline.knots, spline.duration_ns))
    return np.union1d(t, [max(spline.duration_ns - 1, 0)])


def beyond_limits(spline: Spline, names: list[str], lower: F64, upper: F64, velocity: F64,
                  step_ns: int = 10_000_000) -> str:
    """'' when the motion keeps every joint (``names``) within its position limits
    [``lower``, ``upper``] and its speed within ``velocity``, sampled at every point and every
    ``step_ns`` between; else the first place it does not: which joint, when, by how much."""
    t = sample_times(spline, step_ns)
    q, v, _ = spline.sample_many(t)
    eps = 1e-9
    checks = (("position", q, q < lower - eps, lower), ("position", q, q > upper + eps, upper),
              ("velocity", v, np.abs(v) > velocity * (1 + eps), velocity))
    first = None
    for what, x, over, bound in checks:
        rows, cols = np.nonzero(over)
        if rows.size and (first is None or rows[0] < first[0]):
            first = (int(rows[0]), int(cols[0]), what, x, bound)
    if first is None:
        return ""
    k, j, what, x, bound = first
    limit = (f"its URDF limits [{lower[j]:.4g}, {upper[j]:.4g}]" if what == "position"
             else f"its URDF velocity limit {bound[j]:.4g}")
    return f"{names[j]} at {t[k] * 1e-9:.3f} s: {what} {x[k, j]:.4g} beyond {limit}"
