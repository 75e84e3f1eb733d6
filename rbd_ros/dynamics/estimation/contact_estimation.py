"""Which contacts of a legged robot touch, from its joint efforts alone (no foot sensors).

The robot's momentum observer (:mod:`.observer`, on the floating-base model: the base rows
unactuated) gives the external joint torques ``tau_ext``, each through a first-order lag of
time constant ``1 / gain`` (its first lag alone: at 1000/s the second filters no noise).
Touching contacts are what pushes on the robot, so ``tau_ext = sum_c J_c^T w_c``, with
``w_c`` each contact's force (a sole's: force and torque) in its contact frame
(:mod:`.contacts`: tangents, then the normal). The joint rows of this relation are solved for
all the contact links' wrenches at once, by least squares (square for a quadruped's point feet:
each leg's three joints give its foot's force). The base rows are left out: they carry the
base twist's noise times the robot's mass times the gain.

A contact touches once its estimated normal force exceeds ``threshold`` (a fraction of the
robot's weight) while its point moves slower than ``max_speed`` (a foot in the air is not
touching, however the efforts' noise reads), and lets go once the force falls below
``release`` times the threshold (hysteresis: a force hovering at the threshold under noise
gives one touchdown, not many) or the point moves faster than ``LIFT_SPEEDS`` times
``max_speed``. The contact points' speeds come from the joint velocities and the base twist.

Two cues from the contact point's motion keep the efforts' noise (1 N m on joints whose torque
comes from motor currents) from making edges that never happened:

* a touching contact stays down through a dip of its force below the release until
  ``STILL_HOLD`` after its force was last above the touchdown force, and judges the release on
  the mean of its last two normal forces: a lightly loaded stance under noise reads a few
  newtons either side of zero, and one state's velocity noise moves the observer's momentum
  and the foot's speed at once (a force that dips for one state while the foot seems to move);
  a foot that lifts moves away from the surface, and that lets it go at once;
* a contact touches down only while it is still or slowing down, and not if it was moving away
  from the surface just before (its normal speed through a RISING_LAG lag): a foot at the top
  of its swing is slow for a few milliseconds, where a noisy force would otherwise set it down;
* a touching contact that moves away from the surface faster than the still speed lets go.

The joint velocities' noise (0.02 rad/s is a few cm/s at a long leg's foot, about the still
speed) is measured as the robot moves: each velocity's second difference, whose median size is
the noise's at 1 kHz (a joint's own motion changes it by its jerk times dt^2). The still speed
grows by NOISE_SIGMAS times the spread that noise gives each contact point's speed, so a
standing foot under noisy velocities still reads as still; with exact velocities it stays the
``STILL_SPEEDS`` fraction of ``max_speed``.

The observer starts from zero (its first ``1 / gain`` s set p(0)) against feet that may already
carry the robot: for ``SETTLING / gain`` s after each start (the first state, a gap in the stamps)
its estimate is not settled and no contact is decided; the first settled state decides each
contact afresh, so a robot that starts standing starts with its feet down, not with touchdowns
that never happened.

The threshold can be proposed from data: :func:`propose_threshold` takes the normal forces of
a robot standing on all its contacts (:class:`StandingSecond` collects a second of them) and
proposes PROPOSAL_SIGMAS times their largest noise, between PROPOSAL_FLOOR of the weight and
PROPOSAL_SHARE of the lightest contact's load.

External torques on the legs that are not foot forces (a knee on a step, a hand pushing the
body) are read as foot forces: the estimate is for robots that touch the world with their
contact links only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..algorithm.kinematics import placements_kernel
from ..algorithm.rnea import fext_torques
from ..contact.contacts import (
    Contact,
    _add,
    _cross,
    _in_body,
    _origin,
    _three,
    check_contacts,
    contact_geometry,
    contact_problem,
)
from ..errors import ModelError
from ..multibody.model import F64, Direct, Model
from .observer import GAP_S, R1, MomentumObserver

#: the contact observer's gain, 1/s: its lag is 1/gain (1 ms, a sample at 1 kHz). A contact's
#: force is some tens of newtons against noise of a few tenths, so speed wins over smoothing
DEFAULT_GAIN = 1000.0
#: a contact touches above this fraction of the robot's weight...
DEFAULT_THRESHOLD = 0.04
#: ...and lets go below this fraction of the threshold
DEFAULT_RELEASE = 0.5
#: m/s: a contact touches down only while its point is this slow...
DEFAULT_MAX_SPEED = 0.1
#: ...and a touching one lets go when it moves this many times faster (a foot in stance is
#: still: only a swing moves it so)
LIFT_SPEEDS = 3.0
#: a contact slower than this fraction of the touchdown speed is still: a contact touches down
#: only if it is still or slowing down, and was not moving away from the surface (a swing foot
#: at the top of its arc is slow, not stopped); a touching one that moves away from the
#: surface faster lets go
STILL_SPEEDS = 0.25
#: s: how long after its force was last above the touchdown force a touching contact stays
#: down through a dip below the release (the efforts' noise under a lightly loaded stance; a
#: foot that stays unloaded is let go)
STILL_HOLD = 0.02
#: a threshold proposed from a standing robot (:func:`propose_threshold`) is this many times
#: the largest noise of a standing contact's normal force...
PROPOSAL_SIGMAS = 2.0
#: ...at least this fraction of the weight (a swing leg's model error, which a stand does not
#: show, reads as a force too)...
PROPOSAL_FLOOR = 0.02
#: ...and at most this fraction of the lightest standing contact's load (a lightly loaded
#: stance must stay above it)
PROPOSAL_SHARE = 1.0 / 3.0
#: the fewest standing states a proposal is made from...
PROPOSAL_STATES = 100
#: ...and, s, how long a robot stands for :class:`StandingSecond`
PROPOSAL_S = 1.0
#: in lags (1 / gain): p(0)'s span, then the residual within 1 % of a force already there
#: (e^-4.6); 6 ms at the default gain
SETTLING = 5.6
#: the still speed grows by this many times the spread the velocities' noise gives a still
#: contact's speed (each joint's noise tracked from its velocity's second differences)...
NOISE_SIGMAS = 2.0
#: ...each the mean of the first NOISE_START states' (as a median: MEDIAN_OVER_MEAN times it,
#: for white noise), then a running median moved this fraction a state
NOISE_START = 16
NOISE_STEP = 0.02
MEDIAN_OVER_MEAN = 0.6745 / np.sqrt(2.0 / np.pi)
#: s: the lag of the normal speed that a touchdown needs not to be away from the surface
RISING_LAG = 0.005
#: a second difference of white noise of sigma has sigma sqrt(6); its size's median is 0.6745
#: times that
MEDIAN_SECOND_DIFFERENCE = 0.6745 * np.sqrt(6.0)
#: the rows of the velocities' ``noise`` (:func:`_velocity_noise`): the last two velocities,
#: the running median of the second difference's size, how many second differences were seen
#: and their sum
V_LAST, V_BEFORE, V_MEDIAN, V_SEEN, V_SUM = range(5)


@njit(cache=True)
def _contact_map(mi, mf, maps, lin, q, W, wv, body, contact_R, contact_p, normal, radius, size,
                 X, R, p, geometry, f_ext, col, A):
    """``A``: the joint torques (rows) each component of each contact's wrench (columns, in
    its contact frame) applies, ``J_c^T``; ``R`` and ``p``: the contact frames in the world."""
    placements_kernel(mi, mf, maps, lin, q, W, wv, X)
    contact_geometry(X, body, contact_R, contact_p, normal, radius, size, R, p, geometry)
    o = 0
    for c in range(size.shape[0]):
        b = body[c]
        lever = _add(_three(p[c]), _origin(X, b), -1.0)  # from the body's origin (world axes)
        for j in range(size[c]):
            f_ext[:] = 0.0
            axis = _three(R[c, :, j % 3])
            if j < 3:  # a force along the axis, at the contact point
                f, t = axis, _cross(lever, axis)
            else:  # a sole's torque about the axis
                f, t = (0.0, 0.0, 0.0), axis
            f_ext[b, 0], f_ext[b, 1], f_ext[b, 2] = _in_body(X, b, f)
            f_ext[b, 3], f_ext[b, 4], f_ext[b, 5] = _in_body(X, b, t)
            fext_torques(mi, mf, maps, lin, W, wv, f_ext, col)
            for r in range(col.shape[0]):
                A[r, o + j] = -col[r]  # RNEA's torques drop by what the contact supplies
        o += size[c]


@njit(cache=True, nogil=True)
def _contact_step(mi, mf, maps, lin, q, v, r, W, wv, body, contact_R, contact_p, normal,
                  radius, size, X, R, p, geometry, f_ext, col, A, offsets, limits, t, settled,
                  touching, memory, noise, forces, normal_force):
    """One state's decision (the module's docstring) at time ``t`` from the observer's
    residual ``r``: the contact map ``A`` at ``q``, the wrenches that explain ``r``'s joint
    rows by least squares, each contact's force (world axes) and normal force, and
    ``touching`` updated with ``limits`` (touchdown force, release force, touchdown speed,
    lift-off speed, still speed, how long after its force was last above the touchdown force a
    touching contact stays down) and each contact's ``memory`` of the last state (its point's
    speed away from the surface through RISING_LAG, and its speed; when its force was last
    above the touchdown force; the state's time; its normal force) and the velocities' ``noise``
    (:func:`_velocity_noise`)."""
    _contact_map(mi, mf, maps, lin, q, W, wv, body, contact_R, contact_p, normal, radius, size,
                 X, R, p, geometry, f_ext, col, A)
    J = A[6:]  # the joint rows; by least squares, as normal equations lightly regularised
    G = J.T @ J  # (a leg at a singular posture leaves them singular)
    G += (1e-12 * np.trace(G) + 1e-300) * np.eye(G.shape[0])
    w = np.linalg.solve(G, J.T @ r[6:])
    on, off, slow, fast, still0, hold = limits
    _velocity_noise(v, noise)
    for c in range(offsets.shape[0]):
        o = offsets[c]
        speed2 = 0.0  # the contact point's velocity along its axes: J_c v (A is J^T)
        spread2 = 0.0  # and the variance its magnitude gets from the velocities' noise
        for i in range(3):
            u = 0.0
            for k in range(A.shape[0]):
                u += A[k, o + i] * v[k]
                spread2 += (A[k, o + i] * noise[V_MEDIAN, k]) ** 2
            speed2 += u * u
        speed, fn = np.sqrt(speed2), w[o + 2]
        # a touching contact lets go on the mean of this state's and the last state's force
        fa = fn if np.isinf(memory[c, 4]) else 0.5 * (fn + memory[c, 4])
        memory[c, 4] = fn
        still = still0 + NOISE_SIGMAS * np.sqrt(spread2) / MEDIAN_SECOND_DIFFERENCE
        rising, last = memory[c, 0], memory[c, 1]
        # u: along the normal, away from the surface; its lagged value tells a swing's apex
        # (rising until just now) from a foot set down (falling until just now)
        lagged = u
        if np.isfinite(rising):
            lagged = rising + (1.0 - np.exp(-(t - memory[c, 3]) / RISING_LAG)) * (u - rising)
        memory[c, 0], memory[c, 1], memory[c, 3] = lagged, speed, t
        if fn > on:
            memory[c, 2] = t
        if not settled:
            touching[c] = False
        elif touching[c]:
            touching[c] = speed < fast and u < still and (fa > off or t - memory[c, 2] < hold)
        else:
            touching[c] = fn > on and rising < still0 and (speed < still
                                                           or speed < min(slow, last))
        for i in range(3):
            forces[c, i] = R[c, i, 0] * w[o] + R[c, i, 1] * w[o + 1] + R[c, i, 2] * w[o + 2]
        normal_force[c] = fn


@njit(cache=True, inline="always")
def _velocity_noise(v, noise):
    """Each velocity's noise, tracked in ``noise``'s rows (V_LAST ...; the velocities NaN until
    given). At 1 kHz a joint's own motion moves the second difference by its jerk times dt^2,
    far below a sensor's noise, and an impact is one sample: the median is the noise's
    (MEDIAN_SECOND_DIFFERENCE sigma). The first NOISE_START are averaged (a start is standing),
    then a running median follows."""
    for k in range(v.shape[0]):
        last, before = noise[V_LAST, k], noise[V_BEFORE, k]
        if not np.isnan(before):
            d = abs(v[k] - 2.0 * last + before)
            noise[V_SEEN, k] += 1.0
            if noise[V_SEEN, k] <= NOISE_START:
                noise[V_SUM, k] += d
                noise[V_MEDIAN, k] = MEDIAN_OVER_MEAN * noise[V_SUM, k] / noise[V_SEEN, k]
            elif d > noise[V_MEDIAN, k]:
                noise[V_MEDIAN, k] *= 1.0 + NOISE_STEP
            else:
                noise[V_MEDIAN, k] *= 1.0 - NOISE_STEP
        noise[V_BEFORE, k], noise[V_LAST, k] = last, v[k]


_STEP = Direct(_contact_step)


@dataclass
class ContactEstimate:
    """One state's estimate, per contact link in the estimator's order."""

    touching: dict[str, bool]  # all False until settled
    forces: dict[str, F64]  # the estimated force on the link, world axes, N
    normal_forces: dict[str, float]  # its component along the contact's normal, N
    settled: bool  # whether the observer has run long enough since its start to decide


class ContactEstimator:
    """State after state, which contacts touch and with what force (the module's docstring)."""

    def __init__(self, model: Model, contacts: list[Contact], gain: float = DEFAULT_GAIN,
                 threshold: float = DEFAULT_THRESHOLD, release: float = DEFAULT_RELEASE,
                 max_speed: float = DEFAULT_MAX_SPEED) -> None:
        """``contacts``: the links that can touch (:class:`.contacts.Contact`; their frames,
        round feet and normals are used, not their force bounds); ``gain``: the observer's,
        1/s; ``threshold``: a fraction of the robot's weight; ``release``: of the threshold;
        ``max_speed``: m/s, the contact point's fastest for a touchdown."""
        model.require_free_flyer()
        if not contacts:
            raise ModelError("contact estimation needs at least one contact link")
        check_contacts(model, contacts, 1.0)
        if not (np.isfinite(threshold) and threshold > 0):
            raise ModelError(f"the contact threshold must be a positive fraction of the "
                             f"robot's weight, got {threshold}")
        if not 0.0 < release <= 1.0:
            raise ModelError(f"the contact release must be in (0, 1], got {release}")
        if not (np.isfinite(max_speed) and max_speed > 0):
            raise ModelError(f"the contact's largest touchdown speed must be positive (m/s), "
                             f"got {max_speed}")
        self.model, self.contacts = model, list(contacts)
        self.links = [c.link for c in contacts]
        self.observer = MomentumObserver(model, gain)
        self.settling = SETTLING / gain
        weight = model.total_mass * float(np.linalg.norm(model.gravity))
        self.weight, self.threshold = weight, threshold  # N, fraction of the weight
        self.on, self.off = threshold * weight, threshold * release * weight
        self._limits = np.array([self.on, self.off, max_speed, LIFT_SPEEDS * max_speed,
                                 STILL_SPEEDS * max_speed, STILL_HOLD])
        P = contact_problem(model, tuple(contacts), 1.0)
        self._frames = (P.body, P.contact_R, P.contact_p, P.normal, P.radius, P.size)
        self._offsets = np.r_[0, np.cumsum(P.size)[:-1]]
        k, n = len(contacts), P.n
        self._X, self._R, self._p = np.empty((model.nb, 12)), np.empty((k, 3, 3)), \
            np.empty((k, 3))
        self._geometry, self._f_ext = np.zeros((6, n)), np.zeros((model.nb, 6))
        self._col, self.A = np.empty(model.nv), np.empty((model.nv, n))
        self.touching = np.zeros(k, dtype=bool)
        self._forces, self._normal = np.zeros((k, 3)), np.zeros(k)
        self._memory = np.full((k, 5), -np.inf)
        self._noise = np.full((5, model.nv), np.nan)  # the velocities' (_velocity_noise)
        self._noise[V_MEDIAN:] = 0.0
        self._tau = np.zeros(model.nv)
        self._t = -np.inf  # the last state's time, s

    def update(self, t: float, q: F64, v: F64, effort: F64) -> ContactEstimate:
        """The estimate at time ``t`` (s, increasing) from the full state (base pose and twist
        from odometry) and the measured joint efforts (``nv - 6``, the model's joint order).
        Time that goes back, or jumps over ``observer.GAP_S`` (a recording replayed again, a
        pause), starts the estimate again, as it starts the observer: no contact is decided
        until it has settled, and what each contact did before is forgotten."""
        m = self.model
        if t < self._t or t - self._t > GAP_S:
            self._memory[:] = -np.inf
            self.touching[:] = False
        self._t = t
        self._tau[6:] = m.check_vector(effort, m.nv - 6, "effort")
        q, v, _ = m.check_state(q, v, self._tau, "effort")
        self.observer.update(t, q, v, self._tau)
        r = self.observer.state[R1]  # r before the second lag: at this gain it filters nothing
        if not np.all(np.isfinite(r)):
            self.observer.reset()
            raise ModelError("the contact observer's residual is not finite (a state far from "
                             "the last one?): restarted")
        settled = bool(self.observer.when[0] >= self.settling)  # s since the observer started
        _STEP.call(m.mi, m.mf, m.maps, m.lin, q, v, r, self.observer.data.W,
                   self.observer.data.wv, *self._frames, self._X, self._R, self._p,
                   self._geometry, self._f_ext, self._col, self.A, self._offsets, self._limits,
                   t, settled, self.touching, self._memory, self._noise, self._forces,
                   self._normal)
        return ContactEstimate(dict(zip(self.links, self.touching.tolist(), strict=True)),
                               dict(zip(self.links, self._forces.copy(), strict=True)),
                               dict(zip(self.links, self._normal.tolist(), strict=True)),
                               settled)


@dataclass
class ThresholdProposal:
    """A contact threshold proposed from a robot standing on all its contacts."""

    threshold: float  # fraction of the robot's weight, for ContactEstimator(threshold=...)
    noise: dict[str, float]  # N: each contact's normal force's noise, standing
    load: dict[str, float]  # N: each contact's mean normal force, standing
    capped: bool  # the noise asked for more than PROPOSAL_SHARE of the lightest load allows

    def summary(self) -> str:
        """One line: the proposal and what it comes from."""
        link = max(self.noise, key=self.noise.__getitem__)
        light = min(self.load, key=self.load.__getitem__)
        why = (f"{PROPOSAL_SIGMAS:g} x the noise of the standing contacts' normal forces, up "
               f"to {self.noise[link]:.3g} N on {link}")
        if self.capped:
            why = (f"capped at {PROPOSAL_SHARE:.2g} of the lightest standing load, "
                   f"{self.load[light]:.3g} N on {light}: the efforts are too noisy for a "
                   f"threshold to tell a light stance from the air ({why})")
        return f"contact_threshold {self.threshold:.3g} ({why})"


def propose_threshold(estimator: ContactEstimator, normal_forces: np.ndarray
                      ) -> ThresholdProposal:
    """A ``threshold`` for ``estimator``'s contacts from its settled estimates' normal forces
    (``ContactEstimate.normal_forces``, one row per state, the estimator's contact order) over
    a robot standing on all of them: PROPOSAL_SIGMAS times the largest contact's noise (from
    successive differences, so the body's slow sway is not counted), at least PROPOSAL_FLOOR
    of the weight and at most PROPOSAL_SHARE of the lightest contact's load."""
    f = np.asarray(normal_forces, dtype=float)
    k = len(estimator.links)
    if f.ndim != 2 or f.shape[1] != k:
        raise ModelError(f"normal forces must be one row per state of {k} contacts, got shape "
                         f"{f.shape}")
    if len(f) < PROPOSAL_STATES:
        raise ModelError(f"a threshold needs at least {PROPOSAL_STATES} standing states, got "
                         f"{len(f)}")
    if not np.all(np.isfinite(f)):
        raise ModelError("the normal forces hold NaN or inf")
    load = f.mean(axis=0)
    idle = [x for x, c in zip(estimator.links, load, strict=True) if c <= 0]
    if idle:
        raise ModelError(f"contacts {idle} carry no load: propose a threshold from the robot "
                         f"standing on all of them")
    noise = np.std(np.diff(f, axis=0), axis=0) / np.sqrt(2.0)
    weight = estimator.weight
    want = max(PROPOSAL_SIGMAS * float(noise.max()) / weight, PROPOSAL_FLOOR)
    cap = PROPOSAL_SHARE * float(load.min()) / weight
    links = estimator.links
    return ThresholdProposal(min(want, cap), dict(zip(links, noise.tolist(), strict=True)),
                             dict(zip(links, load.tolist(), strict=True)), want > cap)


class StandingSecond:
    """Estimates of a robot standing on all its contacts, collected until PROPOSAL_S s of them
    make a :class:`ThresholdProposal`; a contact that lifts (or an estimate not settled)
    starts the collection again."""

    def __init__(self, estimator: ContactEstimator) -> None:
        self.estimator = estimator
        self._rows: list[list[float]] = []
        self._start = 0.0

    def add(self, t: float, estimate: ContactEstimate) -> ThresholdProposal | None:
        """The proposal once ``estimate`` (at ``t``, s) completes a standing second."""
        if not estimate.settled or not all(estimate.touching.values()):
            self._rows.clear()
            return None
        if not self._rows:
            self._start = t
        self._rows.append(list(estimate.normal_forces.values()))
        if t - self._start < PROPOSAL_S or len(self._rows) < PROPOSAL_STATES:
            return None
        rows, self._rows = self._rows, []
        try:
            return propose_threshold(self.estimator, np.array(rows))
        except ModelError:  # a contact that touched carried nothing on average: stand again
            return None
