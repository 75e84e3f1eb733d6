"""The generalized-momentum observer of external joint torques (De Luca & Mattone 2005):

    r(t) = K (p(t) - p(0) - integral_0^t (tau + C^T v - g + r) ds),   p = M(q) v

``dp/dt = tau + C^T v - g + tau_ext``, so ``dr/dt = K (tau_ext - r)``: each joint's residual
follows its external torque through a first-order lag of time constant ``1/K``, from positions
and velocities alone (no acceleration, no differentiation of velocities). The integral is taken
by the trapezoid rule between successive states.
"""

from __future__ import annotations

import numpy as np

from .model import F64, Data, Model
from .momentum import momentum
from .rnea import gravity


class MomentumObserver:
    def __init__(self, model: Model, gain: float | F64) -> None:
        """``gain``: K, per joint or one for all (1/s; the residual's bandwidth)."""
        self.model, self.data = model, Data(model)
        self.gain = np.broadcast_to(np.asarray(gain, dtype=np.float64), (model.nv,)).copy()
        if not np.all(self.gain > 0):
            raise ValueError("the observer's gain must be positive")
        self.reset()

    def reset(self) -> None:
        """Start again: the next state is the new p(0), its residual zero."""
        self.residual: F64 = np.zeros(self.model.nv)
        self._p0: F64 | None = None
        self._integral = np.zeros(self.model.nv)
        self._last: tuple[float, F64] | None = None  # time, integrand without r

    def update(self, t: float, q: F64, v: F64, tau: F64) -> F64:
        """The residual (external joint torques) at time ``t`` (s) with the applied torques
        ``tau`` (the measured efforts, friction removed if the model carries it)."""
        p, ctv = momentum(self.model, self.data, q, v)
        drive = np.asarray(tau, dtype=np.float64) + ctv - gravity(self.model, self.data, q)
        if self._p0 is None or self._last is None:
            self._p0 = p
        else:
            dt = t - self._last[0]
            # trapezoid on (drive + r); r at t is unknown: solved from r = K (p - p0 - I)
            base = self._integral + 0.5 * dt * (self._last[1] + self.residual + drive)
            k = self.gain
            self.residual = k * (p - self._p0 - base) / (1.0 + 0.5 * dt * k)
            self._integral = base + 0.5 * dt * self.residual
        self._last = (t, drive)
        out: F64 = self.residual.copy()
        return out
