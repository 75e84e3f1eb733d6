"""Weighted least squares on the base parameters (Gautier & Khalil's method).

The parameters ``phi`` of a model are its ten inertial parameters per body
(:func:`~rbd_ros.dynamics.inertial_parameters`) followed by a viscous and a Coulomb friction
coefficient per actuated coordinate (then the drive's offsets, below), then the armature of
each joint whose URDF gives it a rotor inertia (:func:`rotors`), so that each actuated torque
is ``tau = Y phi``:

* only some combinations of ``phi`` act on the torques: the *base parameters*, found
  numerically by a QR decomposition with column pivoting of the regressor at random states
  (Gautier 1990), are the independent columns, each with the dependent ones folded in
  (``phi_b = phi[independent] + beta @ phi[dependent]``);
* the recording is reduced, block by block, to per-joint normal equations (``Y_j^T Y_j``,
  ``Y_j^T tau_j``, ``tau_j^T tau_j``): an hour at 1 kHz is never held at once, and the
  residual of any ``phi_b`` follows from them without a second pass;
* ordinary least squares, then each joint weighted by its residual's standard deviation
  (torques of joints measured with different noise count by their quality).

With ``drive``, each joint's measured effort ``e`` is taken for ``tau / k + o`` (a motor
current, a torque sensor with a bias): the offsets ``c = k o`` join ``phi`` (after the
friction) as columns of ones, and the scales are solved by alternating least squares on the
same per-joint normal equations (each joint's residual measured in its own efforts, so that no
scale collapses to zero). One overall factor cannot be told from efforts (stronger motors and
heavier links predict the same ones): the first measured joint's efforts set the unit (its
``k`` is 1), the others' scales are found relative to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..dynamics import Model, inertial_parameters, regressor_batch
from ..dynamics.algorithm.rnea import SLIDING_SPEED
from ..dynamics.multibody.model import F64, I64


def actuated(model: Model) -> I64:
    """The reduced coordinates whose efforts a driver measures: all but a free-flyer base."""
    return np.arange(6 if model.has_free_flyer else 0, model.nv)


def rotors(model: Model) -> I64:
    """Which actuated coordinates (indices into :func:`actuated`) have an armature to identify:
    those whose joint the URDF gives a rotor inertia (``Joint.armature`` above zero)."""
    with_rotor = {j.idx_v for j in model.joints if j.armature > 0 and j.idx_v >= 0}
    return np.flatnonzero([r in with_rotor for r in actuated(model)])


def joint_parameters(model: Model, drive: bool = False) -> int:
    """How many parameters follow the bodies': friction, the drive's offsets, armatures."""
    return (3 if drive else 2) * actuated(model).size + rotors(model).size


def nominal(model: Model, drive: bool = False) -> F64:
    """The model's own ``phi``: its inertias, its URDF friction (``damping``, ``friction``)
    and its joints' armatures; with ``drive``, offsets of zero."""
    act = set(actuated(model).tolist())
    by_v = {j.idx_v: j for j in model.joints if j.idx_v in act}
    rows = actuated(model)
    return np.concatenate([inertial_parameters(model),
                           [by_v[r].damping if r in by_v else 0.0 for r in rows],
                           [by_v[r].friction if r in by_v else 0.0 for r in rows],
                           np.zeros(rows.size if drive else 0),
                           [by_v[rows[k]].armature for k in rotors(model)]])


def observation(model: Model, q: F64, v: F64, a: F64, drive: bool = False) -> F64:
    """``Y`` of B states: (B, n actuated, 10 nb + :func:`joint_parameters`), ``tau = Y @
    phi`` (with ``drive``, ``k e = Y @ phi``)."""
    rows = actuated(model)
    Y = regressor_batch(model, q, v, a)[:, rows, :]
    return np.concatenate([Y, _joint_columns(np.asarray(v, dtype=np.float64)[:, rows],
                                             np.asarray(a, dtype=np.float64)[:, rows],
                                             drive, rotors(model))], axis=2)


def observed(model: Model, q: F64, v: F64, a: F64, cols: I64, drive: bool = False) -> F64:
    """``observation(model, q, v, a, drive)[:, :, cols]`` without building the other
    columns."""
    rows, rigid = actuated(model), 10 * model.nb
    out = np.zeros((len(q), rows.size, cols.size))
    inertial = cols < rigid
    Y = regressor_batch(model, q, v, a)
    out[:, :, inertial] = Y[:, rows[:, None], cols[inertial]]
    own = cols[~inertial] - rigid
    if own.size:
        V = np.asarray(v, dtype=np.float64)[:, rows]
        A = np.asarray(a, dtype=np.float64)[:, rows]
        out[:, :, ~inertial] = _joint_columns(V, A, drive, rotors(model))[:, :, own]
    return out


def _joint_columns(V: F64, A: F64, drive: bool, rot: I64) -> F64:
    """The columns of each joint's own parameters at velocities ``V`` and accelerations ``A``
    (B, n): viscous and Coulomb friction, with ``drive`` the effort offset, then the armature
    of the coordinates ``rot`` (B, n, 2 n or 3 n, plus their number)."""
    n = V.shape[1]
    first = 3 * n if drive else 2 * n
    F = np.zeros((V.shape[0], n, first + rot.size))
    idx = np.arange(n)
    F[:, idx, idx] = V
    F[:, idx, n + idx] = np.tanh(V / SLIDING_SPEED)  # the Coulomb law of rnea's friction
    if drive:
        F[:, idx, 2 * n + idx] = 1.0
    F[:, rot, first + np.arange(rot.size)] = A[:, rot]
    return F


@dataclass(frozen=True)
class BaseParameters:
    independent: I64  # columns of phi kept
    dependent: I64  # columns folded into them
    beta: F64  # (independent, dependent): phi_b = phi[independent] + beta @ phi[dependent]
    drive: bool = False  # phi ends with each joint's effort offset (times its scale)

    def of(self, phi: F64) -> F64:
        """The base parameters of full parameters ``phi``."""
        return phi[self.independent] + self.beta @ phi[self.dependent]


def base_parameters(model: Model, states: int = 0, seed: int = 0,
                    drive: bool = False) -> BaseParameters:
    """The base parameters of ``model`` (with ``drive``, its offsets too), from its regressor
    at random states within its joint limits (``states``: how many; by default enough for five
    rows per column)."""
    from scipy.linalg import qr

    rng = np.random.default_rng(seed)
    n = actuated(model).size
    p = 10 * model.nb + joint_parameters(model, drive)
    B = states or max(50, 5 * p // max(n, 1))
    q = np.array([random_configuration(model, rng) for _ in range(B)])
    v, a = rng.normal(size=(B, model.nv)), rng.normal(size=(B, model.nv))
    W = observation(model, q, v, a, drive).reshape(-1, p)
    _, R, piv = qr(W, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    r = int(np.sum(d > d[0] * max(W.shape) * np.finfo(float).eps * 1e3))
    beta = np.linalg.solve(R[:r, :r], R[:r, r:])
    order = np.argsort(piv[:r])  # keep the independent columns in phi's order
    return BaseParameters(np.sort(piv[:r]), piv[r:], beta[order], drive)


def random_configuration(model: Model, rng: np.random.Generator) -> F64:
    """A configuration within the joint limits (+-pi where there are none)."""
    q = model.neutral()
    for j in model.joints:
        if j.idx_q < 0:
            continue
        if j.kind == "floating":
            quat = rng.normal(size=4)
            q[j.idx_q : j.idx_q + 3] = rng.uniform(-1, 1, 3)
            q[j.idx_q + 3 : j.idx_q + 7] = quat / np.linalg.norm(quat)
        else:
            lo = j.lower if np.isfinite(j.lower) else -np.pi
            hi = j.upper if np.isfinite(j.upper) else np.pi
            q[j.idx_q : j.idx_q + j.nq] = rng.uniform(lo, hi, j.nq)
    return q


class NormalEquations:
    """Per-joint ``Y_j^T Y_j``, ``Y_j^T tau_j`` and ``tau_j^T tau_j`` of the base columns,
    summed over the blocks of states given to :meth:`add`, kept per fold (consecutive parts
    of the recording, for cross-validation); zero for the joints whose efforts are not
    ``measured`` (their rows say nothing)."""

    def __init__(self, model: Model, base: BaseParameters,
                 measured: NDArray[np.bool_] | None = None, folds: int = 1) -> None:
        self.model, self.base = model, base
        n, r = actuated(model).size, base.independent.size
        self.measured = np.ones(n, dtype=bool) if measured is None else measured
        self.folds_G = np.zeros((folds, n, r, r))
        self.folds_b = np.zeros((folds, n, r))
        self.folds_tt = np.zeros((folds, n))
        self.folds_count = np.zeros(folds, dtype=np.int64)

    @property
    def G(self) -> F64:
        out: F64 = self.folds_G.sum(axis=0)
        return out

    @property
    def b(self) -> F64:
        out: F64 = self.folds_b.sum(axis=0)
        return out

    @property
    def tt(self) -> F64:
        out: F64 = self.folds_tt.sum(axis=0)
        return out

    @property
    def count(self) -> int:
        return int(self.folds_count.sum())

    def add(self, q: F64, v: F64, a: F64, tau: F64, fold: int = 0) -> None:
        """Add B states and their measured efforts ``tau`` (B, nv) to ``fold``."""
        Y = observation(self.model, q, v, a, self.base.drive)[:, :, self.base.independent]
        T = np.asarray(tau, dtype=np.float64)[:, actuated(self.model)]
        Y[:, ~self.measured] = 0.0
        T = np.where(self.measured, T, 0.0)
        self.folds_G[fold] += np.einsum("bjr,bjs->jrs", Y, Y)
        self.folds_b[fold] += np.einsum("bjr,bj->jr", Y, T)
        self.folds_tt[fold] += np.einsum("bj,bj->j", T, T)
        self.folds_count[fold] += T.shape[0]

    def residual_rms(self, phi_b: F64, scale: F64 | float = 1.0) -> F64:
        """Each joint's effort residual RMS for base parameters ``phi_b`` (and the drive's
        ``scale``: efforts ``Y phi_b / scale``)."""
        return _residual_rms(self.G, self.b, self.tt, self.count, phi_b, scale)


def _residual_rms(G: F64, b: F64, tt: F64, count: int, phi_b: F64,
                  scale: F64 | float = 1.0) -> F64:
    sq = tt - 2.0 * b @ phi_b / scale + np.einsum("r,jrs,s->j", phi_b, G, phi_b) / np.square(scale)
    rms: F64 = np.sqrt(np.maximum(sq, 0.0) / max(count, 1))
    return rms


@dataclass(frozen=True)
class Fit:
    phi_b: F64  # the identified base parameters
    sigma: F64  # each joint's residual standard deviation, the weights' inverse
    std: F64  # each base parameter's standard deviation
    condition: float  # of the weighted base regressor, its columns scaled to unit norm
    excited: int  # how many directions of the base parameters the data determine
    scale: F64  # each joint's effort scale k (ones without the drive)
    held: NDArray[np.bool_]  # scales not found: the first joint's, and those not determined


class TooFewStatesError(ValueError):
    """Fewer torque samples than base parameters."""


def solve(normal: NormalEquations) -> Fit:
    """Ordinary, then weighted least squares on the accumulated normal equations. Directions
    of the base parameters the data do not excite (a joint that never moves) are left at zero
    (minimum norm) and counted, not guessed. With the drive, the scales are found in each pass
    too (see :func:`_scales`)."""
    n, r = normal.G.shape[0], normal.G.shape[1]
    used = normal.measured
    if normal.count * used.sum() <= r:
        raise TooFewStatesError(f"{normal.count} joint states cannot identify {r} base parameters")
    w, k = used.astype(np.float64), np.ones(n)
    fixed = np.zeros(n, dtype=bool)
    dof = max(normal.count - r / used.sum(), 1.0)
    for weighted in (False, True):
        if normal.base.drive:
            k, fixed = _scales(normal, w, weighted)
        phi, cov, excited, condition = _weighted(normal, w, k)[3]
        sigma = np.maximum(normal.residual_rms(phi, k) * np.sqrt(normal.count / dof), 1e-12)
        sigma[~used] = np.inf  # no weight: nothing measured
        w = 1.0 / sigma**2
    return Fit(phi, sigma, np.sqrt(np.maximum(np.diag(cov), 0.0)), condition, excited, k,
               fixed)


def _weighted(normal: NormalEquations, w: F64, k: F64
              ) -> tuple[float, F64, F64, tuple[F64, F64, int, float]]:
    """Least squares of ``sum_j w_j |Y_j phi / k_j - e_j|^2`` for the scales ``k``: that sum,
    its gradient by ``k`` (the best ``phi`` held: it is optimal), and the solution."""
    solution = _least_squares(np.einsum("j,jrs->rs", w / k**2, normal.G),
                              np.einsum("j,jr->r", w / k, normal.b))
    phi = solution[0]
    s, u = np.einsum("r,jrs,s->j", phi, normal.G, phi), normal.b @ phi
    f = float(np.sum(w * (s / k**2 - 2.0 * u / k + normal.tt)))
    return f, w * (2.0 * u / k**2 - 2.0 * s / k**3), phi, solution


def _scales(normal: NormalEquations, w: F64, check: bool) -> tuple[F64, NDArray[np.bool_]]:
    """The drive's scales that minimise the effort residual (the first joint's is 1), the
    base parameters solved for each (variable projection, on log k by L-BFGS-B). With
    ``check`` (``w`` the inverse variances), a scale the data do not determine to 5 % (a
    joint whose torque is mostly its own friction: scaling both predicts the same efforts)
    is held at 1 and flagged, and the others are found again."""
    from scipy.optimize import minimize

    n = normal.G.shape[0]
    k, fixed = np.ones(n), ~normal.measured
    fixed[np.argmax(normal.measured)] = True  # the first joint measured sets the unit
    while True:
        free = np.flatnonzero(~fixed)
        if not free.size:
            return k, fixed

        def fun(x: F64, free: I64 = free) -> tuple[float, F64]:
            kk = k.copy()
            kk[free] = np.exp(x)
            f, g, _, _ = _weighted(normal, w, kk)
            return f, g[free] * kk[free]

        sol = minimize(fun, np.log(k[free]), jac=True, method="L-BFGS-B",
                       bounds=[(np.log(0.05), np.log(20.0))] * free.size,
                       options={"maxiter": 1000, "ftol": 1e-15, "gtol": 1e-10})
        k[free] = np.exp(sol.x)
        if not check:
            return k, fixed
        h = 1e-4  # the Hessian in log k by central differences of the gradient
        H = np.array([(fun(sol.x + h * e)[1] - fun(sol.x - h * e)[1]) / (2 * h)
                      for e in np.eye(free.size)])
        ev, V = np.linalg.eigh(0.5 * (H + H.T))
        ev = np.maximum(ev, 1e-12 * max(ev[-1], 1e-300))
        std = np.sqrt(np.diag((V / ev) @ V.T) * 2.0)  # of log k: relative
        loose = free[std > 0.05]
        if not loose.size:
            return k, fixed
        k[loose], fixed[loose] = 1.0, True


def _least_squares(G: F64, b: F64) -> tuple[F64, F64, int, float]:
    """``G x = b`` for a normal matrix ``G``, its columns scaled to unit norm and its
    eigenvalues below 1e-12 of the largest dropped: ``x``, its covariance (up to the weights'
    scale), the rank kept and the scaled regressor's condition number."""
    d = np.sqrt(np.maximum(np.diag(G), 0.0))
    moved = d > 1e-9 * d.max(initial=0.0)  # a column of rounding noise is no information
    s = np.where(moved, 1.0 / np.where(moved, d, 1.0), 0.0)
    ev, V = np.linalg.eigh(G * np.outer(s, s))
    keep = ev > max(ev[-1], 1e-300) * 1e-12
    inv = (V[:, keep] / ev[keep]) @ V[:, keep].T
    cond = float(np.sqrt(ev[-1] / ev[keep].min())) if keep.any() else np.inf
    return s * (inv @ (s * b)), inv * np.outer(s, s), int(keep.sum()), cond


def predict(model: Model, base: BaseParameters, phi_b: F64, q: F64, v: F64, a: F64,
            scale: F64 | float = 1.0) -> F64:
    """Actuated efforts (B, n actuated) of base parameters ``phi_b`` at B states (torques
    without the drive; with it, ``Y phi_b / scale``)."""
    out: F64 = observation(model, q, v, a, base.drive)[:, :, base.independent] @ phi_b / scale
    return out


def offsets(model: Model, phi: F64, scale: F64) -> F64:
    """Each joint's effort offset ``o`` (``e = tau / k + o``) in full parameters ``phi``."""
    n = actuated(model).size
    out: F64 = phi[10 * model.nb + 2 * n : 10 * model.nb + 3 * n] / scale
    return out


#: the pulls towards the URDF tried by cross-validation (0: plain least squares; 1: the data
#: and the URDF weigh alike in every column's own scale)
PULLS = np.r_[0.0, np.logspace(-6, 1, 15)]


@dataclass(frozen=True)
class Pull:
    """Weighted least squares pulled towards the URDF's base parameters: minimise the data's
    weighted residual plus ``strength`` times ``sum_i D_ii (phi_b - prior_b)_i^2``, ``D`` the
    weighted normal matrix's diagonal (each column in its own scale). The strength is the one
    whose fits, each on all folds but one, predict the left-out fold best."""

    strength: float
    phi_b: F64  # the pulled base parameters
    metric: F64  # the quadratic form minimised: the weighted normal matrix plus the pull
    lost: float  # the chosen strength's cross-validated RMS over plain least squares'


def pulled(normal: NormalEquations, fit: Fit, prior_b: F64) -> Pull:
    """``fit``'s weights and scales, pulled towards ``prior_b`` as strongly as
    cross-validation over the folds says the data bear (plain least squares with one fold)."""
    w = np.where(normal.measured, 1.0 / (fit.sigma * fit.scale) ** 2, 0.0)

    def solve(G: F64, b: F64, strength: float) -> tuple[F64, F64]:
        Gw, bw = np.einsum("j,jrs->rs", w, G), np.einsum("j,jr->r", w * fit.scale, b)
        D = np.diag(np.diag(Gw))
        A = Gw + strength * D
        return prior_b + _least_squares(A, bw - Gw @ prior_b)[0], A

    folds = normal.folds_count.size
    G, b = normal.G, normal.b
    err = np.zeros((PULLS.size, folds))  # each left-out fold's weighted squared residual
    for i, strength in enumerate(PULLS if folds > 1 else ()):
        for f in range(folds):
            phi, _ = solve(G - normal.folds_G[f], b - normal.folds_b[f], strength)
            rms = _residual_rms(normal.folds_G[f], normal.folds_b[f], normal.folds_tt[f],
                                int(normal.folds_count[f]), phi, fit.scale)
            err[i, f] = float(np.sum(w * fit.scale**2 * rms**2 * normal.folds_count[f]))
    # a pull is taken only where it predicts the left-out folds better than plain least
    # squares by more than twice the standard error of that gain (paired over the folds): a
    # gain within the folds' own scatter is no reason to leave the data
    gain = err[:1] - err
    sure = gain.mean(axis=1) > 2.0 * gain.std(axis=1, ddof=1) / np.sqrt(folds) \
        if folds > 1 else np.zeros(PULLS.size, dtype=bool)
    cv = np.sqrt(err.sum(axis=1) / max(normal.count, 1))
    best = int(np.argmin(np.where(sure, cv, np.inf))) if sure.any() else 0
    phi, A = solve(G, b, float(PULLS[best]))
    return Pull(float(PULLS[best]), phi, A, float(cv[best] / cv[0]) if cv[0] > 0 else 1.0)


def pseudo_inertia(p: F64) -> F64:
    """The 4x4 pseudo-inertia ``[[Sigma, h], [h^T, m]]`` of ten parameters, with
    ``Sigma = tr(Io)/2 1 - Io``: positive definite exactly when the parameters are those of a
    physical body (positive mass, inertia within the triangle inequalities; Wensing 2017)."""
    m, h = p[0], p[1:4]
    Io = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(Io) * np.eye(3) - Io
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


def parameters_of(J: F64) -> F64:
    """The ten parameters of a pseudo-inertia (the inverse of :func:`pseudo_inertia`)."""
    Io = np.trace(J[:3, :3]) * np.eye(3) - J[:3, :3]
    return np.array([J[3, 3], J[0, 3], J[1, 3], J[2, 3],
                     Io[0, 0], Io[0, 1], Io[1, 1], Io[0, 2], Io[1, 2], Io[2, 2]])


_UPPER = np.triu_indices(4)
LOG_DIAG = (-12.0, 10.0)
#: each body's mass stays within these factors of the URDF's: a recording that moves a link's
#: mass only through a weakly excited combination (a UR10e's upper arm, through the base
#: joint's inertia) otherwise puts 160 kg there for 13, at no gain on held-out data
MASS_RANGE = (0.5, 2.0)
_DIAG = np.array([k for k, (r, c) in enumerate(zip(*_UPPER, strict=True)) if r == c])


def _theta_of(J: F64) -> F64:
    """Log-Cholesky coordinates of a pseudo-inertia (made positive definite first): ``J = U
    U^T`` with ``U`` upper triangular, its diagonal stored as logarithms."""
    w, V = np.linalg.eigh(J)
    J = (V * np.maximum(w, 1e-9 * max(w.max(), 1e-12))) @ V.T
    flip = np.eye(4)[::-1]
    U = flip @ np.linalg.cholesky(flip @ J @ flip) @ flip  # the upper-triangular factor
    theta: F64 = U[_UPPER].copy()
    theta[_DIAG] = np.log(theta[_DIAG])
    return theta


def _J_of(theta: F64) -> F64:
    U = np.zeros((4, 4))
    t = theta.copy()
    t[_DIAG] = np.exp(t[_DIAG])
    U[_UPPER] = t
    J: F64 = U @ U.T
    return J


def _dphi_dtheta(theta: F64) -> F64:
    """The ten parameters' derivatives by the log-Cholesky coordinates (``J = U U^T`` and the
    parameters are linear in ``J``)."""
    U = np.zeros((4, 4))
    t = theta.copy()
    t[_DIAG] = np.exp(t[_DIAG])
    U[_UPPER] = t
    out = np.empty((10, 10))
    for k, (r, c) in enumerate(zip(*_UPPER, strict=True)):
        dU = np.zeros((4, 4))
        dU[r, c] = t[k] if r == c else 1.0
        out[:, k] = parameters_of(dU @ U.T + U @ dU.T)
    return out


def consistent(model: Model, base: BaseParameters, pull: Pull, normal: NormalEquations,
               prior: F64) -> F64:
    """Full parameters ``phi`` of physical bodies, non-negative friction and armatures that fit
    the data as the pulled least squares do (``pull``: the data's weighted residual plus the
    pull towards the URDF), as nearly as physics allows, and stay nearest the ``prior`` (the
    URDF's) where neither says anything, each mass within ``MASS_RANGE`` of the URDF's: each
    body's pseudo-inertia in log-Cholesky coordinates (Rucker & Wensing 2022), solved by
    scipy's least squares."""
    from scipy.optimize import least_squares

    nb, n, m = model.nb, actuated(model).size, rotors(model).size
    nd = prior.size - 10 * nb - 2 * n - m  # the drive's offsets: free, held by no prior
    Gw = pull.metric / max(normal.count, 1)
    L = np.linalg.cholesky(Gw + 1e-12 * np.trace(Gw) * np.eye(len(Gw))).T
    scale = np.maximum(np.abs(prior), 1e-3 * np.max(np.abs(prior[: 10 * nb]), initial=1.0))
    theta0 = np.concatenate([_theta_of(pseudo_inertia(prior[10 * i : 10 * i + 10]))
                             for i in range(nb)])
    x0 = np.concatenate([theta0, np.maximum(prior[10 * nb : 10 * nb + 2 * n], 1e-9),
                         prior[10 * nb + 2 * n :]])
    # what the prior holds: the bodies, not the friction (a URDF's is mostly absent, not
    # zero: held there it bent the rest, on a real UR10e to 16-34 % behind least squares),
    # nor the armatures (a datasheet's rotor and gear, often without the gearbox's inertia)
    held = np.r_[np.ones(10 * nb), np.zeros(2 * n + nd + m)]

    def phi_of(x: F64) -> F64:
        bodies = [parameters_of(_J_of(x[10 * i : 10 * i + 10])) for i in range(nb)]
        return np.concatenate([*bodies, x[10 * nb :]])

    P = np.zeros((base.independent.size, prior.size))  # base.of(phi) = P phi
    P[np.arange(base.independent.size), base.independent] = 1.0
    P[:, base.dependent] = base.beta
    LP = L @ P

    def residual(x: F64) -> F64:
        phi = phi_of(x)
        return np.concatenate([LP @ phi - L @ pull.phi_b, 1e-3 * held * (phi - prior) / scale])

    def jacobian(x: F64) -> F64:
        D = np.eye(x.size)  # d phi / d x: a 10x10 block per body, friction as it is
        for i in range(nb):
            D[10 * i : 10 * i + 10, 10 * i : 10 * i + 10] = _dphi_dtheta(x[10 * i : 10 * i + 10])
        return np.vstack([LP @ D, (1e-3 * held / scale)[:, None] * D])

    # each factor's diagonal within [e^-12, e^10] (a body's square-root scale: no body
    # degenerates to a point or a rod, none grows without bound where the data are silent)
    lower = np.concatenate([np.full(10 * nb, -np.inf), np.zeros(2 * n), np.full(nd, -np.inf),
                            np.zeros(m)])
    upper = np.full(x0.size, np.inf)
    for i in range(nb):
        lower[10 * i + _DIAG], upper[10 * i + _DIAG] = LOG_DIAG
        if prior[10 * i] > 0:  # the mass, J_33 = U_33^2: within MASS_RANGE of the URDF's
            lower[10 * i + 9], upper[10 * i + 9] = 0.5 * np.log(prior[10 * i] *
                                                                np.array(MASS_RANGE))
    x0 = np.clip(x0, lower + 1e-9, upper - 1e-9)
    sol = least_squares(residual, x0, jac=jacobian, bounds=(lower, upper), x_scale="jac",
                        max_nfev=500)
    x = sol.x.copy()
    x[(lower == 0.0) & (x < 1e-12)] = 0.0  # at the bound: zero (the solver leaves 1e-36)
    return phi_of(x)
