"""What a trajectory controller's joints should do now, and whether a goal is met.

A :class:`Reference` holds each controlled joint at a position, or moves some of them along a
:class:`~.spline.Spline` from a start time (the others hold); a :class:`Goal` judges the
tracking error against its tolerances as control_msgs' FollowJointTrajectory defines them:
the path tolerance while the motion runs, then the goal tolerance from its end, met within
the goal time tolerance after it (zero: no limit) or failed.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .spline import Spline

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

WHAT = ("position", "velocity", "acceleration")


@dataclass(frozen=True)
class Tolerances:
    """Per joint bounds on the |error| of position, velocity and acceleration (inf: none)."""

    position: F64
    velocity: F64
    acceleration: F64

    @staticmethod
    def none(n: int) -> Tolerances:
        return Tolerances(*(np.full(n, np.inf) for _ in WHAT))

    def given(self, rows: Sequence[tuple[int, float, float, float]]) -> Tolerances:
        """These (the defaults) with the rows (joint index, position, velocity, acceleration)
        a goal gives, read as control_msgs reads them: 0 keeps the default, -1 (any negative
        value) removes the bound, a positive value replaces it."""
        out = [x.copy() for x in (self.position, self.velocity, self.acceleration)]
        for k, *values in rows:
            for x, value in zip(out, values, strict=True):
                if value < 0:
                    x[k] = np.inf
                elif value > 0:
                    x[k] = value
        return Tolerances(*out)

    def exceeded(self, names: Sequence[str], errors: Sequence[F64]) -> str:
        """'' when every |error| (position, velocity, acceleration; one value per joint of
        ``names``) is within its bound, else which joint is beyond which bound, by how much."""
        for what, e, bound in zip(WHAT, errors, (self.position, self.velocity,
                                                 self.acceleration), strict=True):
            over = np.flatnonzero(~(np.abs(e) <= bound))  # NaN is over too
            if over.size:
                k = int(over[np.argmax(np.abs(e[over]) - bound[over])])
                return f"{names[k]}: {what} error {e[k]:.4g} beyond the tolerance {bound[k]:.4g}"
        return ""


class Reference:
    """The desired (position, velocity, acceleration) of ``n`` controlled joints."""

    def __init__(self, hold: F64) -> None:
        self.hold = np.array(hold, dtype=np.float64)
        self.spline: Spline | None = None
        self.joints = np.zeros(0, dtype=np.int64)  # the spline's joints among the n
        self.back = self.joints  # the spline's joints in the n's order
        self.start_ns = 0

    def hold_at(self, positions: F64) -> None:
        """Hold every joint at ``positions``, at rest."""
        self.hold = np.array(positions, dtype=np.float64)
        self.spline = None

    def follow(self, spline: Spline, joints: I64, start_ns: int, hold: F64) -> None:
        """Move ``joints`` (indices among the n) along ``spline`` from ``start_ns``; the others
        hold at ``hold`` (where the reference had them when the motion came)."""
        self.hold = np.array(hold, dtype=np.float64)
        self.spline, self.joints, self.start_ns = spline, np.asarray(joints), start_ns
        self.back = np.argsort(self.joints)  # the spline's joints in the n's order

    def sample(self, t_ns: int) -> tuple[F64, F64, F64]:
        n = self.hold.size
        if self.spline is not None and self.joints.size == n:  # every joint moves
            q, v, a = self.spline.sample(t_ns - self.start_ns)
            return q[self.back], v[self.back], a[self.back]
        q, v, a = self.hold.copy(), np.zeros(n), np.zeros(n)
        if self.spline is not None:
            q[self.joints], v[self.joints], a[self.joints] = self.spline.sample(
                t_ns - self.start_ns)
        return q, v, a


class Outcome(enum.Enum):
    RUNNING = 0
    SUCCEEDED = 1
    PATH_TOLERANCE_VIOLATED = 2
    GOAL_TOLERANCE_VIOLATED = 3


class Goal:
    """A motion under way: ``spline`` on ``joints`` (indices among the controlled joints,
    named ``names``) from ``start_ns``, with its ``path`` and ``goal`` tolerances and
    ``goal_time_ns`` (0: no limit) of leeway after its end."""

    def __init__(self, spline: Spline, joints: I64, names: Sequence[str], start_ns: int,
                 path: Tolerances, goal: Tolerances, goal_time_ns: int) -> None:
        self.spline, self.joints, self.names = spline, np.asarray(joints), list(names)
        self.start_ns, self.end_ns = start_ns, start_ns + spline.duration_ns
        self.path, self.goal, self.goal_time_ns = path, goal, goal_time_ns

    def judge(self, t_ns: int, errors: Sequence[F64]) -> tuple[Outcome, str]:
        """The goal at ``t_ns`` with the tracking ``errors`` (position, velocity,
        acceleration; one value per goal joint): still running, met, or failed and why."""
        if t_ns < self.end_ns:
            why = self.path.exceeded(self.names, errors) if t_ns >= self.start_ns else ""
            if why:
                return (Outcome.PATH_TOLERANCE_VIOLATED,
                        f"{why} at {(t_ns - self.start_ns) * 1e-9:.3f} s of the trajectory")
            return Outcome.RUNNING, ""
        why = self.goal.exceeded(self.names, errors)
        if not why:
            return Outcome.SUCCEEDED, ""
        late = t_ns - self.end_ns
        if self.goal_time_ns and late > self.goal_time_ns:
            return (Outcome.GOAL_TOLERANCE_VIOLATED,
                    f"{why} {late * 1e-9:.3f} s after the trajectory's end (goal_time_tolerance "
                    f"{self.goal_time_ns * 1e-9:g} s)")
        return Outcome.RUNNING, ""
