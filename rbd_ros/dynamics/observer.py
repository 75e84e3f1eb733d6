"""The generalized-momentum observer of external joint torques (De Luca & Mattone 2005):

    r(t) = K (p(t) - p(0) - integral_0^t (tau + C^T v - g + r) ds),   p = M(q) v

``dp/dt = tau + C^T v - g + tau_ext``, so ``dr/dt = K (tau_ext - r)``: each joint's residual
follows its external torque through a first-order lag of time constant ``1/K``, from positions
and velocities alone (no acceleration, no differentiation of velocities). The integral is taken
by the trapezoid rule between successive states.

External torques have one sign everywhere in rbd_ros: ``tau_ext`` is the torque the
environment applies at the joints, ``M(q) a + h(q, v) = tau + tau_ext`` with ``tau`` the
measured (motor) efforts. A hand pushing a joint forward gives a positive ``tau_ext``.
:func:`external_torques` is the same quantity from a measured acceleration, without lag.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .configuration import integrate
from .errors import ModelError
from .model import F64, Data, Direct, Model
from .momentum import observer_terms_core
from .rnea import rnea
from .spatial import JOINT_FREE


@njit(cache=True)
def observer_step(mi, mf, maps, lin, q, v, tau, fric, W, wv, gain, dt, S):
    """One step of the observer in its state ``S`` (rows: p(0), the integral without r, the
    last integrand without r, r, then scratch for p and C^T v - g). ``dt < 0``: the first
    state, which only sets p(0) and the integrand."""
    p, drift = S[4], S[5]
    observer_terms_core(mi, mf, maps, lin, q, v, fric, W, wv, p, drift)
    for i in range(p.shape[0]):
        drive = tau[i] + drift[i]
        if dt < 0.0:
            S[0, i] = p[i]
        else:
            # trapezoid on (drive + r); r at t is unknown: solved from r = K (p - p0 - I)
            base = S[1, i] + 0.5 * dt * (S[2, i] + S[3, i] + drive)
            r = gain[i] * (p[i] - S[0, i] - base) / (1.0 + 0.5 * dt * gain[i])
            S[1, i] = base + 0.5 * dt * r
            S[3, i] = r
        S[2, i] = drive


_STEP = Direct(observer_step)

DEFAULT_GAIN = 50.0  # 1/s: the dynamics node's observer_gain unless set
#: collision thresholds from a recording of free motion: its residual's peak times this
THRESHOLD_MARGIN = 1.5

#: a recording's joint states further apart than this restart the observer (its integral would
#: span what happened between them), as the dynamics node does
GAP_S = 0.5


@njit(cache=True, nogil=True)
def observer_over(mi, mf, maps, lin, ns, q, v, differenced, tau, fric, W, wv, gain, gap_ns, S,
                  last, clock, peak, peak_ns):
    """The observer over recorded states, as the dynamics node runs it on each: ``ns`` the
    stamps (int ns), ``differenced`` per state: its velocities are not recorded, so the state
    is taken at the midpoint after the one before (:meth:`MomentumObserver.update`). A state
    with a non-finite input is passed over; one at the last one's stamp too (pieces of one
    state); a stamp further than ``gap_ns`` on, or back, restarts the observer. Each joint's
    largest residual magnitude and its stamp go into ``peak`` and ``peak_ns``. Kept between
    calls: ``S`` (the observer's), ``last`` (the last state's positions and efforts), ``clock``
    (its stamp, how many states taken since the start, the last step in ns, whether
    differenced). Returns how many states the observer took."""
    nv = q.shape[1]
    qm, vm, em = np.empty(nv), np.empty(nv), np.empty(nv)
    stepped = 0
    for k in range(ns.shape[0]):
        diff = 1 if differenced[k] else 0
        usable = True
        for j in range(nv):
            if not (np.isfinite(q[k, j]) and np.isfinite(tau[k, j])
                    and (diff or np.isfinite(v[k, j]))):
                usable = False
        if not usable:
            continue
        t, taken = ns[k], clock[1]
        step = t - clock[0]
        if taken > 0 and step == 0:
            continue
        if taken > 0 and (step < 0 or step > gap_ns or diff != clock[3]):
            taken = 0
        if taken == 0:
            S[:] = 0.0
        clock[0], clock[1], clock[3] = t, taken + 1, diff
        if diff and taken == 0:  # a first state without velocities only starts the observer
            last[0], last[1] = q[k], tau[k]
            continue
        if diff:
            h = 1e-9 * step
            for j in range(nv):
                qm[j] = 0.5 * (q[k, j] + last[0, j])
                vm[j] = (q[k, j] - last[0, j]) / h
                em[j] = 0.5 * (tau[k, j] + last[1, j])
            # the midpoints are half the last step and half this one apart
            dt = -1.0 if taken == 1 else 0.5e-9 * (clock[2] + step)
        else:
            qm[:], vm[:], em[:] = q[k], v[k], tau[k]
            dt = -1.0 if taken == 0 else 1e-9 * step
        observer_step(mi, mf, maps, lin, qm, vm, em, fric, W, wv, gain, dt, S)
        last[0], last[1], clock[2] = q[k], tau[k], step
        stepped += 1
        for j in range(nv):
            if abs(S[3, j]) > peak[j]:
                peak[j], peak_ns[j] = abs(S[3, j]), t
    return stepped


class ResidualPeaks:
    """Each joint's largest observer residual over a recording, given in blocks in time order
    (:func:`observer_over`): over free motion, the level a collision threshold must clear."""

    def __init__(self, model: Model, gain: float, friction: bool = False) -> None:
        if model.nq != model.nv:
            raise ModelError("residual peaks over a recording need a model whose positions are "
                             "its velocities' integrals (no free flyer)")
        self.model, self.data, self.friction = model, Data(model), bool(friction)
        self.gain = np.full(model.nv, float(gain))
        if not np.all(self.gain > 0):
            raise ModelError("the observer's gain must be positive")
        self._state = np.zeros((6, model.nv))
        self._last = np.zeros((2, model.nv))
        self._clock = np.zeros(4, dtype=np.int64)
        self.peak = np.zeros(model.nv)  # N m (N)
        self.peak_ns = np.zeros(model.nv, dtype=np.int64)  # where each was (0: none)
        self.states = 0  # states the observer took (a first one without velocities: none)

    def add(self, ns: np.ndarray, q: F64, v: F64, differenced: np.ndarray, tau: F64) -> None:
        """A block of states: stamps (int ns), positions, velocities, whether each state's
        velocities are not recorded (then differenced here, as the node does), efforts."""
        m, f64 = self.model, np.float64
        self.states += observer_over(
            m.mi, m.mf, m.maps, m.lin, np.ascontiguousarray(ns, dtype=np.int64),
            np.ascontiguousarray(q, dtype=f64), np.ascontiguousarray(v, dtype=f64),
            np.ascontiguousarray(differenced, dtype=np.bool_), np.ascontiguousarray(tau, dtype=f64),
            self.friction, self.data.W, self.data.wv, self.gain, round(GAP_S * 1e9), self._state,
            self._last, self._clock, self.peak, self.peak_ns)


def external_torques(model: Model, data: Data, q: F64, v: F64, a: F64, effort: F64,
                     friction: bool = False) -> F64:
    """``tau_ext = M(q) a + h(q, v) - effort``: the external joint torques of a measured motion
    (``a`` differenced from velocities: no lag, but their noise), the sign of
    :class:`MomentumObserver`'s residual. ``friction``: the URDF's joint friction is in the
    efforts, not external."""
    effort = model.check_vector(effort, model.nv, "effort")
    return rnea(model, data, q, v, a, friction=friction) - effort


class MomentumObserver:
    """The residual of one robot, state after state (the module's docstring): the external
    joint torques, each through a first-order lag of time constant 1 / K."""

    def __init__(self, model: Model, gain: float | F64, friction: bool = False) -> None:
        """``gain``: K, per joint or one for all (1/s; the residual's bandwidth).
        ``friction``: the efforts given to :meth:`update` include the URDF's joint friction,
        which is then not external: removed from them."""
        self.model, self.data, self.friction = model, Data(model), bool(friction)
        self.gain = np.broadcast_to(np.asarray(gain, dtype=np.float64), (model.nv,)).copy()
        if not np.all(self.gain > 0):
            raise ModelError("the observer's gain must be positive")
        self._state = np.zeros((6, model.nv))
        self.reset()

    @property
    def residual(self) -> F64:
        """The last residual (a copy)."""
        r: F64 = self._state[3].copy()
        return r

    def reset(self) -> None:
        """Start again: the next state is the new p(0), its residual zero."""
        self._state[:] = 0.0
        self._last_t: float | None = None  # time of the last state the observer took
        self._given: tuple[float, F64] | None = None  # the last state's own time and efforts

    def update(self, t: float, q: F64, v: F64, tau: F64, differenced: bool = False) -> F64:
        """The residual (external joint torques) at time ``t`` (s) with the applied torques
        ``tau`` (the measured efforts). ``t`` must increase from call to call.

        ``differenced``: ``v`` is the backward difference of the positions over the step
        since the last call (joint states without velocities). Such a difference is the
        velocity of the step's midpoint, to second order, and a lagging one at ``t``: at 1 kHz
        it would put ``K M a / 2000`` into the residual while the robot accelerates. The state
        is then taken at the midpoint (positions and efforts halfway), and so is the residual:
        half a step old. A first state so given only starts the observer: its residual is
        zero, and p(0) is taken at the midpoint after it."""
        m = self.model
        q, v, tau = m.check_state(q, v, tau, "tau")
        if differenced:
            before, self._given = self._given, (t, tau)
            if before is None:
                # the first state's velocity is no difference over one step (there was none,
                # or it spans what made the observer start again): it starts at the next one
                return self.residual
            h = 0.5 * (t - before[0])
            q = q - h * v if m.nq == m.nv else integrate(m, q, v, -h)
            tau, t = 0.5 * (tau + before[1]), t - h
        dt = -1.0 if self._last_t is None else t - self._last_t
        self._last_t = t
        _STEP.call(m.mi, m.mf, m.maps, m.lin, q, v, tau, self.friction, self.data.W,
                   self.data.wv, self.gain, float(dt), self._state)
        return self.residual


def likely_links(model: Model, flagged: np.ndarray) -> list[str]:
    """The links a contact most likely acts on, from the joints whose residual is flagged
    (bool, one per velocity): a force on a link shows in the joints from the root to it, and in
    no joint below it, so each deepest flagged joint (no flagged joint below it) names the link
    it moves. One link for one contact on a chain; one per branch for contacts on several.
    A contact whose force happens to have no moment about the deepest joint's axis is put one
    joint higher: isolation is to the joint, not finer."""
    vsrc, parent = model.vsrc, model.mi[:, 0]
    hit = np.array([bool(flagged[vsrc[model.mi[i, 3]]]) if model.mi[i, 1] != JOINT_FREE
                    else bool(np.any(flagged[vsrc[model.mi[i, 3]]:vsrc[model.mi[i, 3]] + 6]))
                    for i in range(model.nb)])
    covered = np.zeros(model.nb, dtype=bool)  # a flagged body lies below
    for i in range(model.nb - 1, -1, -1):
        if parent[i] >= 0 and (hit[i] or covered[i]):
            covered[parent[i]] = True
    return [model.body_names[i] for i in range(model.nb) if hit[i] and not covered[i]]


class CollisionDetector:
    """Per-joint collision flags from residuals, with hysteresis: a joint is flagged when its
    residual's magnitude exceeds its threshold, and stays flagged until it falls below
    ``release`` times it (a residual hovering at the threshold under noise then flags once,
    not at every crossing)."""

    def __init__(self, thresholds: F64, release: float) -> None:
        self.thresholds = np.asarray(thresholds, dtype=np.float64)
        if not (np.all(np.isfinite(self.thresholds)) and np.all(self.thresholds > 0)):
            raise ModelError("collision thresholds must be finite and positive")
        if not 0.0 < release <= 1.0:
            raise ModelError(f"the release fraction must be in (0, 1], got {release}")
        self.release = self.thresholds * release
        self.flags = np.zeros(self.thresholds.shape, dtype=bool)

    def update(self, residual: F64) -> bool:
        """New flags from the residuals (in the thresholds' order); True if any changed."""
        size = np.abs(residual)
        flags = np.where(self.flags, size >= self.release, size > self.thresholds)
        changed = bool(np.any(flags != self.flags))
        self.flags = flags
        return changed
