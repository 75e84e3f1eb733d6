"""The generalized-momentum observer of external joint torques (De Luca & Mattone 2005):

    r(t) = K (p(t) - p(0) - integral_0^t (tau + C^T v - g + r) ds),   p = M(q) v

``dp/dt = tau + C^T v - g + tau_ext``, so ``dr/dt = K (tau_ext - r)``: ``r`` follows each
joint's external torque through a first-order lag of time constant ``1/K``, from positions and
velocities alone (no acceleration, no differentiation of velocities). But ``r`` carries the
velocities' noise times ``K M(q)`` unfiltered (it holds ``p`` itself), so the residual given is
``r`` through a second lag of the same ``K``, ``dy/dt = K (r - y)``: ``y`` follows the external
torque critically damped, ``K^2 / (s + K)^2`` (a ramp 2/K late, a step within 1 % after
6.6/K), and the velocities' white noise is cut by about ``sqrt(K dt / 2)``. Both are integrated
by the trapezoid rule between successive states. Without measured velocities, each joint's is
the slope of a cubic fitted to its last positions (``WINDOW_S``): the residual's noise then
stays near that of measured velocities, and the residual is a quarter of the window old
(``FIT_AT``). The same observer runs at a second gain beside the first if asked
(``external_gain``), sharing the model's terms: the dynamics node flags collisions on the
faster residual and publishes the smoother one.

External torques have one sign everywhere in rbd_ros: ``tau_ext`` is the torque the
environment applies at the joints, ``M(q) a + h(q, v) = tau + tau_ext`` with ``tau`` the
measured (motor) efforts. A hand pushing a joint forward gives a positive ``tau_ext``.
:func:`external_torques` is the same quantity from a measured acceleration, without lag.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from ..algorithm.momentum import observer_terms_core
from ..algorithm.rnea import SLIDING_SPEED, rnea
from ..errors import ModelError
from ..multibody.model import F64, Data, Direct, Model
from ..multibody.spatial import JOINT_FREE

#: the observer's state: a row each (a column a joint), by bank (the residual at ``gain`` from
#: row 0, at ``external_gain`` from row ``BANK``): p(0); the integral of the integrand without
#: r; r (one lag); the residual (r through the second lag); the time since the start; how many
#: states p(0) is the mean of. Then the banks': the integrand's last value; scratch for p and
#: for C^T v - g; the joint's velocity through the first lag at ``gain``, through both (as late
#: as its residual), and its last value
(P0, INTEGRAL, R1, RESIDUAL, SINCE, P0_STATES) = range(6)
BANK = 6
LAST_DRIVE, P_NOW, DRIFT, V_LAG, V_LAGGED, V_LAST = range(2 * BANK, 2 * BANK + 6)
ROWS = 2 * BANK + 6


@njit(cache=True, inline="always")
def _bank(S, o, i, p, drive, gain, dt):
    """Joint ``i``'s step in the bank of rows from ``o`` at gain ``gain`` (:func:`observer_step`;
    ``S[LAST_DRIVE]`` still the last state's)."""
    if dt < 0.0:
        S[o + P0, i], S[o + SINCE, i], S[o + P0_STATES, i] = p, 0.0, 1.0
    elif S[o + SINCE, i] + dt < 1.0 / gain:
        S[o + INTEGRAL, i] += 0.5 * dt * (S[LAST_DRIVE, i] + drive)
        S[o + SINCE, i] += dt
        S[o + P0_STATES, i] += 1.0
        S[o + P0, i] += (p - S[o + INTEGRAL, i] - S[o + P0, i]) / S[o + P0_STATES, i]
    else:
        # trapezoid on (drive + r); r at t is unknown: solved from r = K (p - p0 - I)
        half = 0.5 * dt * gain
        base = S[o + INTEGRAL, i] + 0.5 * dt * (S[LAST_DRIVE, i] + S[o + R1, i] + drive)
        r = gain * (p - S[o + P0, i] - base) / (1.0 + half)
        S[o + INTEGRAL, i] = base + 0.5 * dt * r
        # the second lag, dy/dt = K (r - y), by the same trapezoid
        S[o + RESIDUAL, i] = ((1.0 - half) * S[o + RESIDUAL, i]
                              + half * (S[o + R1, i] + r)) / (1.0 + half)
        S[o + R1, i] = r


@njit(cache=True)
def observer_step(mi, mf, maps, lin, q, v, tau, fric, W, wv, gain, external_gain, dt, S):
    """One step of the observer in its state ``S`` (rows: ``P0`` ... ``V_LAST``), at ``gain``
    and, for the joints whose ``external_gain`` is positive, at that gain too (the second
    bank). ``dt < 0``: the first state. The states of the first 1 / K s only set p(0), as the
    mean of their ``p - integral``: one state's velocity noise in p(0) would stay in r for
    1 / K, and the second lag would show it whole."""
    p, drift = S[P_NOW], S[DRIFT]
    observer_terms_core(mi, mf, maps, lin, q, v, fric, W, wv, p, drift)
    for i in range(p.shape[0]):
        drive = tau[i] + drift[i]
        if dt < 0.0:
            S[V_LAG, i], S[V_LAGGED, i] = v[i], v[i]
        else:  # the velocity through the residual's two lags, by the same trapezoid
            half = 0.5 * dt * gain[i]
            last = S[V_LAG, i]
            S[V_LAG, i] = ((1.0 - half) * last + half * (S[V_LAST, i] + v[i])) / (1.0 + half)
            S[V_LAGGED, i] = ((1.0 - half) * S[V_LAGGED, i]
                              + half * (last + S[V_LAG, i])) / (1.0 + half)
        S[V_LAST, i] = v[i]
        _bank(S, 0, i, p[i], drive, gain[i], dt)
        if external_gain[i] > 0.0:
            _bank(S, BANK, i, p[i], drive, external_gain[i], dt)
        S[LAST_DRIVE, i] = drive


@njit(cache=True)
def _lagged(S, gain, since, out):
    """``out`` (3, nv): the residual, each joint's velocity as late, and whether it has
    settled (1.0: ``since``, the time since the observer's start, is ``SETTLE / K`` or
    more)."""
    for i in range(S.shape[1]):
        out[0, i], out[1, i] = S[RESIDUAL, i], S[V_LAGGED, i]
        out[2, i] = 1.0 if since * gain[i] >= SETTLE else 0.0


#: 1/s: the dynamics node's observer_gain unless set. A push 1.76x its threshold is flagged
#: after 10 ms (14 ms from positions only); on the bundled arm with typical sensor noise
#: (bench/observer.py) a held load's residual is within 1 % of it on exact states, and pushes
#: are flagged after 6 ms (median). A lower gain passes less noise and lags more
DEFAULT_GAIN = 200.0
#: 1/s: the dynamics node's external_torques_gain unless set: its ``~/external_torques`` comes
#: from the observer at this gain, its collision flags from the same at ``DEFAULT_GAIN`` (a
#: lower gain passes less of the velocities' noise, a higher one flags sooner)
EXTERNAL_GAIN = 180.0
#: collision thresholds from a recording of free motion: the envelope of its residual's peaks
#: (``rbd_ros.bag.thresholds``) times this
THRESHOLD_MARGIN = 1.5
#: rad/s (m/s): a collision threshold's ``moving`` part is all there above about this speed (the
#: friction of a joint that slides, where at rest it sticks), the speed where the observer's
#: removed Coulomb friction is whole too
MOVING_SPEED = SLIDING_SPEED
#: the speeds a free-motion recording's residual peaks are kept for: 0, then from 1 mrad/s up,
#: three to an octave (the last one open)
SPEED_EDGES = np.concatenate(([0.0], 1e-3 * 2.0 ** (np.arange(40) / 3.0)))
#: a collision flag is cleared below this fraction of its threshold (the node's default)
COLLISION_RELEASE = 0.5
#: collision flags wait this many 1 / K after each (re)start of the observer: its first 1 / K
#: only sets p(0), whose error (the velocities' noise) then decays as exp(-K t) through the
#: lags, to 4 % of it at 6 / K; and the thresholds are drawn from the residuals after it
SETTLE = 6.0
#: states further apart than this restart the observer (its integral would span what happened
#: between them), in the dynamics node and over a recording
GAP_S = 0.5
#: without measured velocities, each joint's is the slope of a cubic fitted to its positions over
#: this span back from the newest state (at least the last two states): eighteen states at
#: 1 kHz (the slope's noise a twelfth of one difference's), nine at 500 Hz, one difference at
#: 100 Hz
WINDOW_S = 0.0175
#: and the state fitted is taken at this point of the window (-1 its oldest state, 0 its mean
#: time, 1 the newest): the residual is then a quarter of the window old (4.25 ms at 1 kHz),
#: where at the mean time it was half (8.5 ms). A cubic's slope is no noisier there: the
#: centre's is confounded with the cubic term (0.84x the centre's noise at 1 kHz)
FIT_AT = 0.5
HISTORY = 64  # states kept for the fit at most
#: what ``observer_over``'s ``clock`` holds: the last state's stamp, the states taken since the
#: start, whether they are differenced, the ring's next slot and how many it holds, the start's
#: stamp
LAST, TAKEN, MODE, SLOT, FILL, START = range(6)


@njit(cache=True, nogil=True)
def _fit(hist_ns, hist_q, hist_e, newest, n, start, base_q, q, v, e):
    """The ``n`` states up to ``newest`` in the ring at time ``tc`` (returned, s after ``start``;
    ``FIT_AT`` in their span): ``q`` and ``v`` (from ``base_q`` on) the value and slope there of
    a cubic fitted to each coordinate's positions by least squares (a lower degree for fewer
    than four states), ``e`` the efforts interpolated to ``tc``. A cubic's slope has no bias
    from the motion's jerk, where a line's grows with the window squared."""
    size = hist_ns.shape[0]
    rows = np.empty(n, dtype=np.int64)
    t = np.empty(n)
    for i in range(n):  # oldest first
        rows[i] = (newest - n + 1 + i + size) % size
        t[i] = 1e-9 * (hist_ns[rows[i]] - start)
    mean = t.mean()
    half = np.abs(t - mean).max()
    at = FIT_AT if n >= 4 else 0.0  # a line's slope is best at its centre
    tc = mean + at * half
    degree = min(3, n - 1)
    A = np.empty((n, degree + 1))
    for i in range(n):
        x = (t[i] - mean) / half  # within [-1, 1]: the normal equations stay well conditioned
        for p in range(degree + 1):
            A[i, p] = x**p
    unit = np.zeros((degree + 1, 2))  # the value and the slope at ``at``
    for p in range(degree + 1):
        unit[p, 0] = at**p
        if p > 0:
            unit[p, 1] = p * at ** (p - 1)
    w = A @ np.linalg.solve(A.T @ A, unit)  # per state: its weight in the value and the slope
    q[base_q:] = 0.0
    v[:] = 0.0
    for i in range(n):
        for j in range(v.shape[0]):
            x = hist_q[rows[i], base_q + j]
            q[base_q + j] += w[i, 0] * x
            v[j] += w[i, 1] * x / half
    for i in range(n - 1):  # the efforts between the two states around tc
        if t[i + 1] >= tc:
            f = (tc - t[i]) / (t[i + 1] - t[i])
            e[:] = (1.0 - f) * hist_e[rows[i]] + f * hist_e[rows[i + 1]]
            break
    return tc


@njit(cache=True, inline="always")
def _usable(q, v, tau, diff, base_v):
    """A state's inputs are finite (a differenced joint's velocity is not used)."""
    for j in range(q.shape[0]):
        if not np.isfinite(q[j]):
            return False
    for j in range(tau.shape[0]):
        if not (np.isfinite(tau[j]) and (np.isfinite(v[j]) or (diff and j >= base_v))):
            return False
    return True


@njit(cache=True, inline="always")
def _windowed(hist_ns, hist_q, hist_e, clock, t, q, tau, window, base_q, qm, vm, em):
    """A state of differenced velocities into the ring, and the state the observer takes: the
    fit of the window's states (:func:`_fit`); its time from the start in s, or NaN while the
    first states only fill the window (it spans WINDOW_S first)."""
    size = hist_ns.shape[0]
    h = clock[SLOT]
    hist_ns[h], hist_q[h], hist_e[h] = t, q, tau
    clock[SLOT], clock[FILL] = (h + 1) % size, min(clock[FILL] + 1, size)
    n = 2  # the states within the window, and the one before this at least
    while n < clock[FILL] and t - hist_ns[(h - n + size) % size] <= window:
        n += 1
    if n >= clock[FILL] and n < size:
        return np.nan
    return _fit(hist_ns, hist_q, hist_e, h, n, clock[START], base_q, qm, vm, em)


@njit(cache=True, inline="always")
def _peaks(S, out, t, peak, peak_ns, binned):
    """Each settled joint's residual into its largest so far, overall and at its speed."""
    for j in range(S.shape[1]):
        if out[2, j] == 0.0:
            continue  # not settled: no flag, no peak
        size_j = abs(S[RESIDUAL, j])
        if size_j > peak[j]:
            peak[j], peak_ns[j] = size_j, t
        b = np.searchsorted(SPEED_EDGES, abs(out[1, j]), side="right") - 1
        binned[j, b] = max(binned[j, b], size_j)


@njit(cache=True, nogil=True)
def observer_over(mi, mf, maps, lin, ns, q, v, differenced, tau, fric, W, wv, gain,
                  external_gain, gap_ns, S, hist_ns, hist_q, hist_e, clock, when, peak,
                  peak_ns, binned, out):
    """The observer over states ``ns`` (int ns stamps), in order, as the dynamics node runs it:
    at ``gain``, and at ``external_gain`` where positive (``S``'s second bank, ``BANK``).

    ``differenced`` per state: its velocities are not measured. The state the observer takes
    is then that of the states within ``WINDOW_S`` back (at least two) at ``FIT_AT`` of their
    span (:func:`_fit`; a free flyer's pose and twist as given: the newest). The residual is
    then a quarter of the window old.

    A state with a non-finite input is passed over; one at the last one's stamp too (pieces of
    one state); a stamp further than ``gap_ns`` on, or back, or a change between measured and
    differenced velocities restarts the observer. Each joint's largest residual magnitude and
    its stamp go into ``peak`` and ``peak_ns``, and its largest at each speed (``SPEED_EDGES``)
    into ``binned`` (not those of states the observer has not settled in). Kept between
    calls: ``S`` (the observer's state), the last states for the fit (``hist_*``, a ring),
    ``clock`` (by ``LAST`` ... ``START``) and ``when`` (the last step's time, s from the
    start). ``out[k]``: the residual state ``k`` gives, as the dynamics node answers it, each
    joint's velocity as late and whether it has settled (NaN: none; a piece of the last state,
    at its stamp: the last ones). Returns how many states gave a residual."""
    nq, nv = q.shape[1], tau.shape[1]
    base_q = 7 if nq != nv else 0  # a free flyer's coordinates come first
    base_v = 6 if nq != nv else 0
    window = np.int64(round(WINDOW_S * 1e9))
    qm, vm, em = np.empty(nq), np.empty(nv), np.empty(nv)
    stepped = 0
    for k in range(ns.shape[0]):
        out[k] = np.nan
        diff = 1 if differenced[k] else 0
        if not _usable(q[k], v[k], tau[k], diff, base_v):
            continue
        t, taken = ns[k], clock[TAKEN]
        if taken > 0 and t == clock[LAST]:
            if when[0] >= 0.0:
                _lagged(S, gain, when[0], out[k])
            continue
        if taken > 0 and (t < clock[LAST] or t - clock[LAST] > gap_ns or diff != clock[MODE]):
            taken = 0
        if taken == 0:
            S[:] = 0.0
            clock[MODE], clock[FILL], clock[START] = diff, 0, t
            when[0] = -1.0  # no step yet
        clock[LAST], clock[TAKEN] = t, taken + 1
        if diff:
            tc = _windowed(hist_ns, hist_q, hist_e, clock, t, q[k], tau[k], window, base_q, qm,
                           vm[base_v:], em)
            if np.isnan(tc):
                continue
            qm[:base_q], vm[:base_v] = q[k, :base_q], v[k, :base_v]
        else:
            qm[:], vm[:], em[:] = q[k], v[k], tau[k]
            tc = 1e-9 * (t - clock[START])
        observer_step(mi, mf, maps, lin, qm, vm, em, fric, W, wv, gain, external_gain,
                      -1.0 if when[0] < 0.0 else tc - when[0], S)
        when[0] = tc
        stepped += 1
        _lagged(S, gain, tc, out[k])
        _peaks(S, out[k], t, peak, peak_ns, binned)
    return stepped


_OVER = Direct(observer_over)


def _gains(gain: float | F64, nv: int) -> F64:
    """``gain``, one for all joints or one per joint, as one per joint; ModelError unless
    every one is positive."""
    g: F64 = np.broadcast_to(np.asarray(gain, dtype=np.float64), (nv,)).copy()
    if not np.all(g > 0):
        raise ModelError("the observer's gains must be positive")
    return g


class _Run:
    """What :func:`observer_over` keeps between calls, for one model."""

    def __init__(self, model: Model, gain: float | F64, friction: bool,
                 external_gain: float | F64 | None = None) -> None:
        self.model, self.data, self.friction = model, Data(model), bool(friction)
        self.gain = _gains(gain, model.nv)
        #: zeros: no second bank (:func:`observer_step`)
        self.external_gain = np.zeros(model.nv) if external_gain is None else \
            _gains(external_gain, model.nv)
        self.state = np.zeros((ROWS, model.nv))
        self.hist_ns = np.zeros(HISTORY, dtype=np.int64)
        self.hist_q = np.zeros((HISTORY, model.nq))
        self.hist_e = np.zeros((HISTORY, model.nv))
        self.clock = np.zeros(START + 1, dtype=np.int64)
        self.when = np.zeros(1)
        self.peak = np.zeros(model.nv)  # N m (N)
        self.peak_ns = np.zeros(model.nv, dtype=np.int64)  # where each was (0: none)
        self.binned = np.zeros((model.nv, len(SPEED_EDGES)))  # and at each speed
        m = model  # the arguments around a call's states (the arrays change in place only)
        self._model = (m.mi, m.mf, m.maps, m.lin)
        self._kept = (self.friction, self.data.W, self.data.wv, self.gain, self.external_gain,
                      round(GAP_S * 1e9), self.state, self.hist_ns, self.hist_q, self.hist_e,
                      self.clock, self.when, self.peak, self.peak_ns, self.binned)

    def args(self, ns: np.ndarray, q: F64, v: F64, differenced: np.ndarray, tau: F64,
             out: F64) -> tuple[object, ...]:
        return (*self._model, ns, q, v, differenced, tau, *self._kept, out)

    def restart(self) -> None:
        self.state[:] = 0.0
        self.clock[:] = 0


class ResidualPeaks(_Run):
    """Each joint's largest observer residual over a recording, given in blocks in time order
    (:func:`observer_over`): over free motion, the level a collision threshold must clear."""

    def __init__(self, model: Model, gain: float, friction: bool = False) -> None:
        super().__init__(model, gain, friction)
        self.states = 0  # states that gave a residual

    def add(self, ns: np.ndarray, q: F64, v: F64, differenced: np.ndarray, tau: F64) -> F64:
        """A block of states: stamps (int ns), positions, velocities, whether each state's
        velocities are not measured (then fitted to the positions, as the node does), efforts.
        Returns each state's residual, each joint's velocity as late, and whether it has
        settled (``out[:, 0]``, ``out[:, 1]``, ``out[:, 2]``; NaN where it gives none:
        :func:`observer_over`)."""
        f64 = np.float64
        out = np.empty((len(ns), 3, self.model.nv))
        self.states += observer_over(*self.args(
            np.ascontiguousarray(ns, dtype=np.int64), np.ascontiguousarray(q, dtype=f64),
            np.ascontiguousarray(v, dtype=f64), np.ascontiguousarray(differenced, dtype=np.bool_),
            np.ascontiguousarray(tau, dtype=f64), out))
        return out


def external_torques(model: Model, data: Data, q: F64, v: F64, a: F64, effort: F64,
                     friction: bool = False) -> F64:
    """``tau_ext = M(q) a + h(q, v) - effort``: the external joint torques of a measured motion
    (``a`` differenced from velocities: no lag, but their noise), the sign of
    :class:`MomentumObserver`'s residual. ``friction``: the URDF's joint friction is in the
    efforts, not external."""
    effort = model.check_vector(effort, model.nv, "effort")
    return rnea(model, data, q, v, a, friction=friction) - effort


class MomentumObserver(_Run):
    """The residual of one robot, state after state (the module's docstring): the external
    joint torques, each through two first-order lags of time constant 1 / K."""

    def __init__(self, model: Model, gain: float | F64, friction: bool = False,
                 external_gain: float | F64 | None = None) -> None:
        """``gain``: K, per joint or one for all (1/s; each lag's bandwidth).
        ``friction``: the efforts given to :meth:`update` include the URDF's joint friction,
        which is then not external: removed from them (its Coulomb part through ``tanh(v /
        SLIDING_SPEED)``: below that speed a joint may stick, and a noisy velocity's sign would
        flip it whole). ``external_gain``: a second K (per joint or one), for
        :attr:`external_torques`: the same observer at that gain beside the first, sharing its
        model terms (a lower one gives a smoother estimate to read, the first a faster residual
        to flag collisions on, as the dynamics node does)."""
        super().__init__(model, gain, friction, external_gain)
        self._ns = np.zeros(1, dtype=np.int64)
        self._flag = np.zeros(1, dtype=np.bool_)
        self._out = np.zeros((1, 3, model.nv))  # the last state's (not settled)

    @property
    def residual(self) -> F64:
        """The last residual (a copy)."""
        r: F64 = self.state[RESIDUAL].copy()
        return r

    @property
    def external_torques(self) -> F64:
        """The last residual at ``external_gain`` (a copy; without one, :attr:`residual`)."""
        r: F64 = self.state[BANK + RESIDUAL if self.external_gain[0] > 0.0 else RESIDUAL].copy()
        return r

    @property
    def speed(self) -> F64:
        """Each joint's speed (rad/s, m/s) through the residual's two lags: as late as the last
        residual. What a collision threshold that grows with speed takes."""
        s: F64 = np.abs(self.state[V_LAGGED])
        return s

    @property
    def last(self) -> F64:
        """The last state's residual, each joint's velocity as late and whether it has settled
        (1.0 or 0.0), as a (1, 3, nv) view: what :meth:`CollisionDetector.update_from` takes."""
        return self._out

    @property
    def settled(self) -> np.ndarray:
        """Per joint, whether the observer has run ``SETTLE / K`` since its (re)start: before,
        its residual carries the start's error, and no collision is flagged."""
        settled: np.ndarray = self._out[0, 2] == 1.0
        return settled

    @property
    def single_lag(self) -> F64:
        """The last ``r`` (the module's docstring; a copy): the residual before its second lag,
        one lag of 1 / K behind the external torques but with all the velocities' noise
        times K. For gains near the sampling rate, where the second lag filters nothing."""
        r: F64 = self.state[R1].copy()
        return r

    def reset(self) -> None:
        """Start again: the next state is the new p(0), its residual zero."""
        self.restart()
        self._out[:] = 0.0

    def set_external_gain(self, gain: float | F64) -> None:
        """A new ``external_gain`` (positive): :attr:`external_torques` starts again from the
        next state (its first 1 / K s set its p(0)); the residual at ``gain``, its flags and
        their settling go on untouched."""
        self.external_gain[:] = _gains(gain, self.model.nv)  # in place: the call holds it
        self.state[BANK : 2 * BANK] = 0.0

    def update(self, t: float, q: F64, v: F64, tau: F64, differenced: bool = False) -> F64:
        """The residual (external joint torques) at time ``t`` (s) with the applied torques
        ``tau`` (the measured efforts). ``t`` must increase from call to call (a state at the
        last one's time is passed over; one further than ``GAP_S`` on, or back, restarts).

        ``differenced``: the joint velocities in ``v`` are not measured (joint states without
        velocities) and are not used: each joint's is fitted to its last positions
        (:func:`observer_over`), and the residual is that of a quarter of the window back
        (``FIT_AT``). A first state so given only starts the observer. The residual is zero for
        the first 1 / K s after each start (they set p(0))."""
        m = self.model
        q, v, tau = m.check_state(q, v, tau, "tau")
        self._ns[0] = round(t * 1e9)
        self._flag[0] = differenced
        _OVER.call(*self.args(self._ns, q[None], v[None], self._flag, tau[None], self._out))
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


#: the dynamics node's parameters of the collision thresholds, :func:`collision_level`'s parts:
#: at rest, once moving, per unit of speed
THRESHOLD_PARAMETERS = ("collision_thresholds", "collision_thresholds_moving",
                        "collision_thresholds_per_speed")


def thresholds_problem(name: str, values: Sequence[float]) -> str:
    """Why ``values`` cannot be the part ``name`` (of ``THRESHOLD_PARAMETERS``) of collision
    thresholds, or '' if they can: at rest positive, the others not negative, all finite."""
    rest = name == THRESHOLD_PARAMETERS[0]
    if all(math.isfinite(x) and (x > 0 if rest else x >= 0) for x in values):
        return ""
    return f"{name} must be {'positive numbers' if rest else 'numbers >= 0'}, got {list(values)}"


def collision_level(thresholds: F64, moving: F64, per_speed: F64, velocity: F64) -> F64:
    """The collision thresholds at these velocities (one per joint, or rows of them):
    ``thresholds + moving tanh(|velocity| / MOVING_SPEED) + per_speed |velocity|``."""
    s = np.abs(velocity)
    level: F64 = thresholds + moving * np.tanh(s / MOVING_SPEED) + per_speed * s
    return level


class CollisionDetector:
    """Per-joint collision flags from residuals, with hysteresis: a joint is flagged when its
    residual's magnitude exceeds its threshold, and stays flagged until it falls below
    ``release`` times it (a residual hovering at the threshold under noise then flags once,
    not at every crossing). Each joint's threshold grows with its speed (the observer's
    :attr:`MomentumObserver.speed`, as late as the residual), as the model's error does:
    :func:`collision_level`."""

    def __init__(self, thresholds: F64, release: float, moving: F64 | float = 0.0,
                 per_speed: F64 | float = 0.0) -> None:
        self.thresholds = np.array(thresholds, dtype=np.float64).reshape(-1)
        self.moving, self.per_speed = (
            np.broadcast_to(np.asarray(x, dtype=np.float64), self.thresholds.shape).copy()
            for x in (moving, per_speed))
        for name, part in zip(THRESHOLD_PARAMETERS,
                              (self.thresholds, self.moving, self.per_speed), strict=True):
            problem = thresholds_problem(name, part.ravel().tolist())
            if problem:
                raise ModelError(problem)
        if not 0.0 < release <= 1.0:
            raise ModelError(f"the release fraction must be in (0, 1], got {release}")
        self.release = release
        self.flags = np.zeros(self.thresholds.shape, dtype=bool)
        size = self.thresholds.size  # flag_states' arguments for one state
        self._given, self._cols = np.zeros((1, 3, size)), np.arange(size)
        self._level, self._out = np.zeros((1, size)), np.zeros((1, size))
        self._level[0] = self.thresholds
        self.level = self._level[0]  # the thresholds at the last update's speeds
        #: while any joint is flagged, those whose residual is over ``release`` times their
        #: threshold (the flagged among them): where the contact shows, for
        #: :func:`likely_links`; none else
        self.loaded = self.flags.copy()

    def clear(self) -> None:
        """No joint flagged: a new stretch of states, where the last one's flags mean nothing
        (the observer restarted)."""
        self.flags[:] = False
        self.loaded = self.flags.copy()

    def update(self, residual: F64, velocity: F64 | None = None,
               settled: np.ndarray | None = None) -> bool:
        """New flags from the residuals and the joints' velocities as late (None: at rest),
        in the thresholds' order; a joint not ``settled`` (:attr:`MomentumObserver.settled`)
        is not flagged. True if any flag changed."""
        given = self._given[0]
        given[0] = residual
        given[1] = 0.0 if velocity is None else velocity
        given[2] = 1.0 if settled is None else settled
        return self.update_from(self._given, self._cols)

    def update_from(self, last: F64, cols: np.ndarray) -> bool:
        """:meth:`update` from an observer's :attr:`MomentumObserver.last` (one state's
        residual, velocity as late and settled, of every joint); the thresholds' joints are
        its ``cols`` (int64; -1: a joint with no residual, never flagged). True if any flag
        changed."""
        changed = flag_states(last, cols, self.thresholds, self.moving, self.per_speed,
                              self.release, self.flags, self._level, self._out)
        if self.flags.any():
            x = last[0, 0, np.maximum(cols, 0)]
            self.loaded = self.flags | ((cols >= 0) & (np.abs(x) >= self.release * self.level))
        elif changed:  # the last flag cleared (with none, none is loaded: as it was)
            self.loaded = self.flags.copy()
        return bool(changed)


@njit(cache=True, nogil=True)
def flag_states(observed, cols, rest, moving, per_speed, release, flags, level,
                out):  # pragma: no cover (compiled)
    """Collision flags, state after state, with hysteresis: a joint is flagged once its
    residual's magnitude exceeds its threshold at that state's speed (:func:`collision_level`'s,
    written into ``level``) and stays flagged until it falls below ``release`` times it.

    ``observed``: per state, the residual, the velocity as late and whether settled (planes
    0, 1, 2; :meth:`ResidualPeaks.add`'s); the thresholds' joints are its columns ``cols``
    (-1: none). ``flags`` are kept from call to call. A joint not settled (0) is cleared; a NaN
    residual (no state) keeps them. ``out``: per state and joint, 1.0 flagged, 0.0 not, NaN no
    decision. Returns how many flags changed."""
    changed = 0
    for r in range(observed.shape[0]):
        for j in range(cols.shape[0]):
            c = cols[j]
            out[r, j] = np.nan
            if c < 0:
                level[r, j] = rest[j]
                continue
            s = abs(observed[r, 1, c])
            on = rest[j] + moving[j] * np.tanh(s / MOVING_SPEED) + per_speed[j] * s
            level[r, j] = on
            x = abs(observed[r, 0, c])
            flag = flags[j]
            if observed[r, 2, c] == 0.0:
                flag = False
            elif not np.isnan(x):
                flag = x >= release * on if flag else x > on
                out[r, j] = 1.0 if flag else 0.0
            if flag != flags[j]:
                flags[j] = flag
                changed += 1
    return changed
