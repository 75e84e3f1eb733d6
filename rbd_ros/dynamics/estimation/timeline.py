"""Stamped samples of an input (odometry, an IMU), looked up at another input's stamp."""

from __future__ import annotations

import bisect
from collections.abc import Callable

from ..multibody.model import F64

Interpolate = Callable[[F64, F64, float], F64]


class Timeline:
    """The last ``horizon_ns`` of samples, in stamp order. A sample older than the newest is
    dropped (a sensor does not go back in time), unless it is over ``restart_ns`` older: then
    the newest was wrong (a stamp far in the future) or the time went back (a recording that
    loops), and the timeline starts again from it."""

    def __init__(self, name: str, interpolate: Interpolate, horizon_ns: int = 2_000_000_000,
                 restart_ns: int = 1_000_000_000):
        self.name, self.interpolate, self.horizon = name, interpolate, horizon_ns
        self.restart = restart_ns
        self.stamps: list[int] = []
        self.values: list[F64] = []

    def add(self, stamp: int, value: F64) -> str:
        """Keep a sample; '' or what happened to it (dropped, or the timeline restarted)."""
        if self.stamps and stamp <= self.stamps[-1]:
            back = self.stamps[-1] - stamp
            if back > self.restart:
                self.stamps, self.values = [stamp], [value]
                return (f"the {self.name}'s stamps went back by {back * 1e-9:.6g} s: it "
                        "starts again from this one")
            if back:
                return f"dropped {self.name} older than the last one"
            self.values[-1] = value  # the same stamp again: the later message wins
            return ""
        self.stamps.append(stamp)
        self.values.append(value)
        old = bisect.bisect_left(self.stamps, stamp - self.horizon)
        if old > 0:
            del self.stamps[:old], self.values[:old]
        return ""

    def covers(self, t: int) -> bool:
        return bool(self.stamps) and self.stamps[0] <= t <= self.stamps[-1]

    def at(self, t: int, max_age_ns: int) -> tuple[F64 | None, str]:
        """(value at ``t``, note). Between two samples: interpolated, note empty. Outside the
        samples: the nearest one if at most ``max_age_ns`` away (the note says so), else None
        and the reason."""
        if not self.stamps:
            return None, f"no {self.name} yet"
        i = bisect.bisect_left(self.stamps, t)
        if i < len(self.stamps) and self.stamps[i] == t:
            return self.values[i], ""
        if 0 < i < len(self.stamps):
            t0, t1 = self.stamps[i - 1], self.stamps[i]
            return self.interpolate(self.values[i - 1], self.values[i], (t - t0) / (t1 - t0)), ""
        k = 0 if i == 0 else -1
        age = abs(t - self.stamps[k])
        when = "after" if i == 0 else "before"
        if age > max_age_ns:
            return None, (f"stale {self.name}: the nearest is {age * 1e-6:.1f} ms {when} the "
                          "joint state")
        return self.values[k], f"{self.name} held from {age * 1e-6:.1f} ms {when} the joint state"
