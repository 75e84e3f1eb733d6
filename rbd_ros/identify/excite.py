"""``rbd-ros excite``: an exciting trajectory for ``rbd-ros identify``.

Each joint follows a finite Fourier series of period ``T`` (so it can be run again and again):

    q_j(t) = c_j + sum_k (a_jk sin(k w t) + b_jk cos(k w t)),   w = 2 pi / T

about the middle of its range. The coefficients are chosen to make the base regressor (the
inertial and friction parameters ``identify`` fits) as well conditioned as they can over one
period, from a plain multi-sine (equal amplitudes on every harmonic, random phases) by
quasi-Newton steps on the logarithm of its condition number, its gradient analytic. Every
candidate is scaled into the
limits first, joint by joint (position, velocity, acceleration: each scales with the
amplitudes), then as a whole until the efforts fit; the result is checked at every sample of
``rate``. A plain multi-sine scaled into the same limits is reported beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..dynamics import Data, Model, ModelError, rnea, rnea_batch
from ..dynamics.algorithm.regressor import regressor_batch
from ..dynamics.algorithm.rnea import SLIDING_SPEED
from ..dynamics.multibody.model import F64
from .fit import BaseParameters, actuated, base_parameters, observed, rotors

MARGIN = 0.9  # of each limit, for what a controller's tracking error adds


@dataclass(frozen=True)
class Limits:
    """Per actuated joint: the position range, and the largest speed, acceleration, effort."""

    lower: F64
    upper: F64
    velocity: F64
    acceleration: F64
    effort: F64

    @classmethod
    def of(cls, model: Model, acceleration: float) -> Limits:
        joints = {j.idx_v: j for j in model.joints if j.idx_v >= 0}
        rows = actuated(model)
        if any(joints[r].nq != 1 for r in rows):
            raise ModelError("excite needs joints of one coordinate each (fixed base)")

        def each(name: str, default: float) -> F64:
            x = np.array([getattr(joints[r], name) for r in rows], dtype=np.float64)
            return np.where(np.isfinite(x), x, default)

        return cls(each("lower", -np.pi), each("upper", np.pi), each("velocity", 2.0),
                   np.full(rows.size, acceleration), each("effort", np.inf))


@dataclass(frozen=True)
class Fourier:
    """A periodic trajectory: ``a`` and ``b`` (joints, harmonics) about ``c``."""

    period: float
    c: F64
    a: F64
    b: F64

    def sample(self, t: F64) -> tuple[F64, F64, F64]:
        """Positions, velocities and accelerations at times ``t`` (samples, joints)."""
        dq, v, acc = motion(basis(self.period, self.a.shape[1], t), self.a, self.b)
        return self.c + dq, v, acc


Basis = tuple[F64, F64, F64]


def basis(period: float, harmonics: int, t: F64) -> Basis:
    """``sin(k w t)`` and ``cos(k w t)`` (samples, harmonics), and the frequencies ``k w``."""
    w: F64 = 2 * np.pi / period * np.arange(1, harmonics + 1, dtype=np.float64)
    wt = np.outer(t, w)
    return np.sin(wt), np.cos(wt), w


def motion(basis: Basis, a: F64, b: F64) -> tuple[F64, F64, F64]:
    """The positions about the centre, velocities and accelerations (samples, joints) of
    coefficients ``a`` and ``b`` (joints, harmonics) on ``basis``."""
    S, C, w = basis
    return S @ a.T + C @ b.T, C @ (a * w).T - S @ (b * w).T, -(S @ (a * w * w).T
                                                              + C @ (b * w * w).T)


def within(model: Model, lim: Limits, f: Fourier, t: F64) -> Fourier:
    """``f`` scaled down (joint by joint, then as a whole for the efforts) to use at most
    its limits at the times ``t``."""
    return Shape(model, lim, f.period, f.c, t).within(f.a, f.b).f


def condition(model: Model, base: BaseParameters, f: Fourier, t: F64) -> float:
    """The condition number of the base regressor (inertias and friction) over ``t``."""
    q, v, a = f.sample(t)
    return float(np.linalg.cond(observed(model, q, v, a, base.independent)
                                .reshape(-1, base.independent.size)))


@dataclass(frozen=True)
class Scaled:
    """:meth:`Shape.within`'s trajectory, its scales and where each binds."""

    f: Fourier
    s: F64  # each joint's scale
    g: float  # all joints' scale, for the efforts
    kind: NDArray[np.int64]  # what binds each joint's s: 0 position, 1 velocity, 2 acceleration
    at: NDArray[np.int64]  # at which sample
    sign: F64  # and that value's sign
    effort_at: int  # the sample where the efforts bind g (-1: g = 1, they do not)
    effort_joint: int  # and the joint
    effort_sign: float  # and its effort's sign


class Shape:
    """Fourier coefficients about ``c`` -> the trajectory within the limits at ``t``, and the
    logarithm of its base regressor's condition number with its gradient in the coefficients
    (what the optimiser climbs: see :meth:`cost`)."""

    def __init__(self, model: Model, lim: Limits, period: float, c: F64, t: F64) -> None:
        self.model, self.lim, self.period, self.c, self.t = model, lim, period, c, t
        self.rows = actuated(model)
        self.data = Data(model)
        half = np.minimum(lim.upper - c, c - lim.lower)
        #: what each joint's position (about c), velocity and acceleration may reach
        self.room = MARGIN * np.stack([half, lim.velocity, lim.acceleration])

    def within(self, a: F64, b: F64) -> Scaled:
        """The trajectory of ``a`` and ``b`` scaled into the limits: each joint by ``s`` (its
        largest use of position, velocity or acceleration at 1), then all by ``g`` (the
        largest at most 1 whose efforts fit, by regula falsi); and where each binds."""
        dq, v, acc = motion(basis(self.period, a.shape[1], self.t), a, b)
        signed = np.stack([dq, v, acc]) / self.room[:, None, :]  # (3, samples, joints)
        kinds = np.abs(signed)
        flat = kinds.reshape(-1, kinds.shape[2]).argmax(axis=0)
        kind, at = np.divmod(flat, kinds.shape[1])
        joints = np.arange(kinds.shape[2])
        s = 1.0 / np.maximum(kinds[kind, at, joints], 1e-12)
        lim = self.lim

        def over(g: float, k: int | None = None) -> tuple[float, int, int, float]:
            """The largest effort's excess over its limit (ratio - 1) at scale ``g``, over
            every sample or sample ``k``, its sample, joint and sign."""
            tau = np.atleast_2d(
                rnea_batch(self.model, self.c + g * s * dq, g * s * v, g * s * acc,
                           friction=True) if k is None else
                rnea(self.model, self.data, self.c + g * s * dq[k], g * s * v[k],
                     g * s * acc[k], friction=True))[:, self.rows]
            ratio = np.abs(tau) / (MARGIN * lim.effort)
            m = int(ratio.argmax())
            i, j = divmod(m, ratio.shape[1])
            return float(ratio.flat[m]) - 1.0, i, j, float(np.sign(tau[i, j]))

        g, (h, i, j, sign) = 1.0, over(1.0)
        if h > 0:  # the efforts bind: the largest g in (0, 1) at which they fit
            if over(0.0)[0] >= 0:
                raise ModelError("no trajectory keeps the efforts within their limits: gravity "
                                 "alone needs more than they allow, about the middle of the "
                                 "joint ranges")
            for _ in range(20):  # the root at the binding sample, then checked at them all
                g = self._root(lambda x, i=i: over(x, i)[0], g)
                h, i, j, sign = over(g)
                if h <= 1e-9:
                    break
        f = Fourier(self.period, self.c, a * (g * s)[:, None], b * (g * s)[:, None])
        return Scaled(f, s, g, kind, at, np.sign(signed[kind, at, joints]),
                      i if g < 1 else -1, j, sign)

    @staticmethod
    def _root(h: Any, g: float) -> float:
        """The root in (0, g] of ``h`` (negative at 0, positive at ``g``): regula falsi,
        Illinois' variant."""
        lo, h_lo, hi, h_hi, side, x = 0.0, h(0.0), g, h(g), 0, g
        for _ in range(100):
            x = (lo * h_hi - hi * h_lo) / (h_hi - h_lo)
            hx = h(x)
            if abs(hx) < 1e-13 or hi - lo < 1e-15:
                break
            if hx > 0:
                hi, h_hi = x, hx
                h_lo, side = (h_lo / 2 if side == -1 else h_lo), -1
            else:
                lo, h_lo = x, hx
                h_hi, side = (h_hi / 2 if side == 1 else h_hi), 1
        return x

    def cost(self, x: F64, base: BaseParameters) -> tuple[float, F64]:
        """``log cond W`` of the trajectory ``within`` makes of ``x`` (a then b, joints by
        harmonics), and its gradient. d log cond = <dW, M>, M from the Gram matrix's extreme
        eigenvectors; dW per joint's position, velocity and acceleration at all samples at
        once (one regressor call for all 3n directions), chained through the Fourier basis
        and through the scales ``s`` and ``g`` (each differentiated where it binds)."""
        n = self.c.size
        a, b = self._halves(x)
        at = self._log_cond(a, b, base)
        if at is None:
            return 1e3, np.zeros_like(x)
        value, sc, (q, v, acc), W, lam, U = at
        s, g, kind = sc.s, sc.g, sc.kind
        S, C, w = basis(self.period, a.shape[1], self.t)
        T, cols = len(self.t), base.independent
        u1, un = U[:, -1], U[:, 0]
        M = (np.outer(W @ u1, u1) / lam[-1] - np.outer(W @ un, un) / lam[0]).reshape(T, n, -1)
        Gq, Gv, Ga = self._moved(q, v, acc, M, cols)
        dA = Gq.T @ S + Gv.T @ (C * w) - Ga.T @ (S * w * w)  # d value / d scaled coefficients
        dB = Gq.T @ C - Gv.T @ (S * w) - Ga.T @ (C * w * w)
        # the scaled coefficients are g s_j (a_j, b_j): through s_j and g as well
        denom = self.room[kind, np.arange(n)]
        Sk, Ck = S[sc.at], C[sc.at]  # (joints, harmonics): the basis where each joint binds
        dsa = np.select([kind[:, None] == 0, kind[:, None] == 1], [Sk, Ck * w], -Sk * w * w)
        dsb = np.select([kind[:, None] == 0, kind[:, None] == 1], [Ck, -Sk * w], -Ck * w * w)
        ds_a = -(s**2 * sc.sign / denom)[:, None] * dsa  # d s_j / d (a_j, b_j)
        ds_b = -(s**2 * sc.sign / denom)[:, None] * dsb
        along = (dA * a).sum(axis=1) + (dB * b).sum(axis=1)  # d value / d (g s_j) * 1
        grad_a = g * s[:, None] * dA + g * along[:, None] * ds_a
        grad_b = g * s[:, None] * dB + g * along[:, None] * ds_b
        if sc.effort_at >= 0:  # the efforts bind g: it moves with x
            dg_a, dg_b = self._dg(a, b, sc, ds_a, ds_b)
            total = (along * s).sum()  # d value / d g
            grad_a += total * dg_a
            grad_b += total * dg_b
        return value, np.concatenate([grad_a.ravel(), grad_b.ravel()])

    def value(self, x: F64, base: BaseParameters) -> float:
        """:meth:`cost`'s value alone, without the gradient's work."""
        at = self._log_cond(*self._halves(x), base)
        return 1e3 if at is None else at[0]

    def _halves(self, x: F64) -> tuple[F64, F64]:
        """``x`` as the optimiser holds it (a then b) -> a and b, (joints, harmonics) each."""
        n = self.c.size
        return x[: x.size // 2].reshape(n, -1), x[x.size // 2 :].reshape(n, -1)

    def _log_cond(self, a: F64, b: F64, base: BaseParameters
                  ) -> tuple[float, Scaled, tuple[F64, F64, F64], F64, F64, F64] | None:
        """``log cond W`` of the trajectory ``within`` makes of ``a`` and ``b``, with what its
        gradient is made of (the scaled trajectory, its samples, W and the eigenpairs of its
        Gram matrix); None where no such trajectory is (a cost of 1e3 for the optimiser)."""
        try:
            sc = self.within(a, b)
        except ModelError:
            return None
        samples = sc.f.sample(self.t)
        cols = base.independent
        W = observed(self.model, *samples, cols).reshape(-1, cols.size)
        lam, U = np.linalg.eigh(W.T @ W)
        if not lam[0] > 0:
            return None
        return 0.5 * float(np.log(lam[-1] / lam[0])), sc, samples, W, lam, U

    def _moved(self, q: F64, v: F64, acc: F64, M: F64, cols: np.ndarray
               ) -> tuple[F64, F64, F64]:
        """<dW_t, M_t> of each joint's position, velocity and acceleration moved at every
        sample (each (samples, joints)): the rigid bodies' columns by differences of one
        regressor call for all 3n moves, the friction's and the armatures' exactly."""
        (T, n), h = q.shape, 1e-6
        rigid = 10 * self.model.nb
        inertial = cols < rigid
        M_rigid = np.zeros((T, n, rigid))
        M_rigid[:, :, cols[inertial]] = M[:, :, inertial]
        eye = np.eye(n)
        Q = np.concatenate([q, *(q + h * eye[j] for j in range(n)), *(q for _ in range(2 * n))])
        V = np.concatenate([v, *(v for _ in range(n)), *(v + h * eye[j] for j in range(n)),
                            *(v for _ in range(n))])
        A = np.concatenate([acc, *(acc for _ in range(2 * n)), *(acc + eye[j] for j in range(n))])
        Y = regressor_batch(self.model, Q, V, A)
        if self.rows.size != self.model.nv:
            Y = Y[:, self.rows]
        phi = np.einsum("ktjp,tjp->kt", Y.reshape(1 + 3 * n, T, n, rigid), M_rigid)
        d = (phi[1:] - phi[0]) / np.r_[np.full(2 * n, h), np.ones(n)][:, None]
        for k in np.flatnonzero((cols >= rigid) & (cols < rigid + n)):  # viscous friction's
            d[n + cols[k] - rigid] += M[:, cols[k] - rigid, k]  # d <W_t, M_t> / d v_j: M_tjk
        for k in np.flatnonzero((cols >= rigid + n) & (cols < rigid + 2 * n)):  # Coulomb's:
            j = cols[k] - rigid - n  # tanh(v_j / SLIDING_SPEED), so M_tjk times its slope
            d[n + j] += M[:, j, k] * (1.0 - np.tanh(v[:, j] / SLIDING_SPEED) ** 2) / SLIDING_SPEED
        rot = rotors(self.model)
        for k in np.flatnonzero(cols >= rigid + 2 * n):  # an armature's: d / d a_j, M_tjk
            j = rot[cols[k] - rigid - 2 * n]
            d[2 * n + j] += M[:, j, k]
        return d[:n].T, d[n : 2 * n].T, d[2 * n :].T

    def _dg(self, a: F64, b: F64, sc: Scaled, ds_a: F64, ds_b: F64) -> tuple[F64, F64]:
        """d g / d (a, b), from |tau_j(sample i)| = its limit held as the coefficients move
        (i, j where the efforts bind)."""
        n, s, g, i = self.c.size, sc.s, sc.g, sc.effort_at
        one = basis(self.period, a.shape[1], self.t[i : i + 1])
        S, C, w = one[0][0], one[1][0], one[2]
        pq, pv, pa = (x[0] for x in motion(one, a, b))
        q, v, acc = self.c + g * s * pq, g * s * pv, g * s * pa
        h = 1e-6
        eye = np.eye(n)
        states = np.concatenate([q[None], q + h * eye, np.repeat(q[None], 2 * n, axis=0)])
        vels = np.concatenate([v[None], np.repeat(v[None], n, axis=0), v + h * eye,
                               np.repeat(v[None], n, axis=0)])
        accs = np.concatenate([acc[None], np.repeat(acc[None], 2 * n, axis=0), acc + h * eye])
        tau = rnea_batch(self.model, states, vels, accs,
                         friction=True)[:, self.rows[sc.effort_joint]]
        e = sc.effort_sign * (tau[1:] - tau[0]) / h
        eq, ev, ea = e[:n], e[n : 2 * n], e[2 * n :]
        dtau_dg = float((eq * s * pq + ev * s * pv + ea * s * pa).sum())
        # d tau / d a_jk: through s_j p_j = s_j (basis . a_j)
        da = g * (s[:, None] * (eq[:, None] * S + ev[:, None] * C * w - ea[:, None] * S * w * w)
                  + (eq * pq + ev * pv + ea * pa)[:, None] * ds_a)
        db = g * (s[:, None] * (eq[:, None] * C - ev[:, None] * S * w - ea[:, None] * C * w * w)
                  + (eq * pq + ev * pv + ea * pa)[:, None] * ds_b)
        return -da / dtau_dg, -db / dtau_dg


def plain(model: Model, lim: Limits, period: float, harmonics: int, t: F64,
          rng: np.random.Generator) -> Fourier:
    """Equal amplitudes on every harmonic, random phases, scaled into the limits."""
    c = 0.5 * (lim.lower + lim.upper)
    phase = rng.uniform(0, 2 * np.pi, (c.size, harmonics))
    return within(model, lim, Fourier(period, c, np.cos(phase), np.sin(phase)), t)


@dataclass(frozen=True)
class Excitation:
    trajectory: Fourier
    multisine: Fourier
    condition: float
    multisine_condition: float


def excite(model: Model, period: float = 10.0, harmonics: int = 5, acceleration: float = 5.0,
           seed: int = 0, iterations: int = 100) -> Excitation:
    """The optimised trajectory and the plain multi-sine it starts from (see the module),
    after at most ``iterations`` quasi-Newton steps on the analytic gradient."""
    from scipy.optimize import minimize

    lim = Limits.of(model, acceleration)
    base = base_parameters(model)
    t = np.linspace(0.0, period, 20 * harmonics * 4, endpoint=False)  # 4 per fastest wiggle
    start = plain(model, lim, period, harmonics, t, np.random.default_rng(seed))
    shape = Shape(model, lim, period, start.c, t)
    x0 = np.concatenate([start.a.ravel(), start.b.ravel()])
    best = minimize(shape.cost, x0, args=(base,), jac=True, method="L-BFGS-B",
                    options={"maxiter": iterations}).x
    n = start.c.size
    found = within(model, lim, Fourier(period, start.c, best[: best.size // 2].reshape(n, -1),
                                       best[best.size // 2 :].reshape(n, -1)), t)
    dense = np.arange(0.0, period, 1e-3)  # every sample at 1 kHz: within the limits there
    found = within(model, lim, found, dense)
    multisine = within(model, lim, start, dense)
    return Excitation(found, multisine, condition(model, base, found, t),
                      condition(model, base, multisine, t))


#: where a joint trajectory controller named as in ros2_control's examples listens
TOPIC = "/joint_trajectory_controller/joint_trajectory"


def trajectory_points(f: Fourier, rate: float, periods: int, lead: float
                      ) -> tuple[NDArray[np.int64], F64, F64, F64]:
    """``f`` over ``periods`` periods, a point every ``1 / rate`` s: each point's time from
    the start (int ns; the first ``lead`` s in, while a joint trajectory controller moves from
    where the robot is to the first point), positions, velocities, accelerations."""
    t = np.arange(0.0, periods * f.period + 0.5 / rate, 1.0 / rate)
    q, v, a = f.sample(t)
    return np.round((t + lead) * 1e9).astype(np.int64), q, v, a


def trajectory_yaml(names: list[str], f: Fourier, rate: float, periods: int, lead: float,
                    said: str) -> str:
    """:func:`trajectory_points` as a trajectory_msgs/JointTrajectory in YAML (the message's
    fields), ``said`` in a comment on top."""
    ns, q, v, a = trajectory_points(f, rate, periods, lead)

    def row(x: F64) -> str:
        return "[" + ", ".join(f"{y:.6f}" for y in x) + "]"

    lines = [f"# {said}", f"joint_names: [{', '.join(names)}]", "points:"]
    for k, n in enumerate(ns.tolist()):
        lines += [f"- positions: {row(q[k])}", f"  velocities: {row(v[k])}",
                  f"  accelerations: {row(a[k])}",
                  f"  time_from_start: {{sec: {n // 10**9}, nanosec: {n % 10**9}}}"]
    return "\n".join(lines) + "\n"


def trajectory_bag(path: Path, names: list[str], f: Fourier, rate: float, periods: int,
                   lead: float, topic: str = TOPIC) -> None:
    """:func:`trajectory_points` as one trajectory_msgs/JointTrajectory message (stamp zero:
    start on arrival) on ``topic`` in a rosbag2 recording at ``path`` (a new folder), for
    ``rbd-ros replay`` or ``ros2 bag play`` to send to a joint trajectory controller."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    from ..bag.recording import JOINT_TRAJECTORY

    ts = get_typestore(Stores.ROS2_HUMBLE)
    T = ts.types
    ns, q, v, a = trajectory_points(f, rate, periods, lead)
    points = [T["trajectory_msgs/msg/JointTrajectoryPoint"](
        positions=q[k], velocities=v[k], accelerations=a[k], effort=np.zeros(0),
        time_from_start=T["builtin_interfaces/msg/Duration"](sec=n // 10**9, nanosec=n % 10**9))
        for k, n in enumerate(ns.tolist())]
    header = T["std_msgs/msg/Header"](stamp=T["builtin_interfaces/msg/Time"](sec=0, nanosec=0),
                                      frame_id="")
    msg = T[JOINT_TRAJECTORY](header=header, joint_names=names, points=points)
    with Writer(path, version=8) as writer:
        connection = writer.add_connection(topic, JOINT_TRAJECTORY, typestore=ts)
        writer.write(connection, 0, ts.serialize_cdr(msg, JOINT_TRAJECTORY))


def limits_used(model: Model, lim: Limits, f: Fourier, t: F64) -> F64:
    """(4, joints): the largest fraction of each limit used at ``t``: position (of the half
    range about the centre), velocity, acceleration, effort."""
    q, v, a = f.sample(t)
    tau = rnea_batch(model, q, v, a, friction=True)[:, actuated(model)]
    half = np.minimum(lim.upper - f.c, f.c - lim.lower)
    return np.array([np.abs(q - f.c).max(axis=0) / half, np.abs(v).max(axis=0) / lim.velocity,
                     np.abs(a).max(axis=0) / lim.acceleration,
                     np.abs(tau).max(axis=0) / lim.effort])
