"""``rbd-ros excite``: an exciting trajectory for ``rbd-ros identify``.

Each joint follows a finite Fourier series of period ``T`` (so it can be run again and again):

    q_j(t) = c_j + sum_k (a_jk sin(k w t) + b_jk cos(k w t)),   w = 2 pi / T

about the middle of its range. The coefficients are chosen to make the base regressor (the
inertial and friction parameters ``identify`` fits) as well conditioned as they can over one
period, from a plain multi-sine (equal amplitudes on every harmonic, random phases) by
quasi-Newton steps on the logarithm of its condition number. Every candidate is scaled into the
limits first, joint by joint (position, velocity, acceleration: each scales with the
amplitudes), then as a whole until the efforts fit; the result is checked at every sample of
``rate``. A plain multi-sine scaled into the same limits is reported beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..dynamics import Model, ModelError, rnea_batch
from ..dynamics.model import F64
from .fit import BaseParameters, actuated, base_parameters, observation

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
        k = np.arange(1, self.a.shape[1] + 1)
        wt = np.outer(t, 2 * np.pi / self.period * k)
        s, co = np.sin(wt), np.cos(wt)
        w = 2 * np.pi / self.period * k
        q = self.c + s @ self.a.T + co @ self.b.T
        v = co @ (self.a * w).T - s @ (self.b * w).T
        acc = -(s @ (self.a * w * w).T + co @ (self.b * w * w).T)
        return q, v, acc

    def scaled(self, s: F64 | float) -> Fourier:
        s = np.broadcast_to(np.asarray(s, dtype=np.float64), self.c.shape)
        return Fourier(self.period, self.c, self.a * s[:, None], self.b * s[:, None])


def _use(lim: Limits, q: F64, v: F64, a: F64, c: F64) -> F64:
    """Each joint's largest use of its limits (1: at the limit, with the margin)."""
    half = np.minimum(lim.upper - c, c - lim.lower)
    use: F64 = np.max([np.abs(q - c).max(axis=0) / (MARGIN * half),
                       np.abs(v).max(axis=0) / (MARGIN * lim.velocity),
                       np.abs(a).max(axis=0) / (MARGIN * lim.acceleration)], axis=0)
    return use


def within(model: Model, lim: Limits, f: Fourier, t: F64) -> Fourier:
    """``f`` scaled down (joint by joint, then as a whole for the efforts) to use at most
    its limits at the times ``t``."""
    q, v, a = f.sample(t)
    f = f.scaled(1.0 / np.maximum(_use(lim, q, v, a, f.c), 1e-12))
    for _ in range(20):  # efforts are not linear in the amplitudes: shrink until they fit
        q, v, a = f.sample(t)
        tau = rnea_batch(model, q, v, a, friction=True)[:, actuated(model)]
        over = (np.abs(tau) / (MARGIN * lim.effort)).max()
        if over <= 1.0:
            return f
        f = f.scaled(0.9 / over if over > 1.1 else 0.97)
    raise ModelError("no trajectory keeps the efforts within their limits: gravity alone "
                     "needs more than they allow, about the middle of the joint ranges")


def condition(model: Model, base: BaseParameters, f: Fourier, t: F64) -> float:
    """The condition number of the base regressor (inertias and friction) over ``t``."""
    q, v, a = f.sample(t)
    W = observation(model, q, v, a).reshape(-1, base.independent.size + base.dependent.size)
    return float(np.linalg.cond(W[:, base.independent]))


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
           seed: int = 0, evaluations: int = 1500) -> Excitation:
    """The optimised trajectory and the plain multi-sine it starts from (see the module),
    after at most ``evaluations`` of the condition number (about 13 ms each for a 7-joint
    arm)."""
    from scipy.optimize import minimize

    lim = Limits.of(model, acceleration)
    base = base_parameters(model)
    t = np.linspace(0.0, period, 20 * harmonics * 4, endpoint=False)  # 4 per fastest wiggle
    start = plain(model, lim, period, harmonics, t, np.random.default_rng(seed))
    n = start.c.size

    def unpack(x: F64) -> Fourier:
        return within(model, lim, Fourier(period, start.c, x[: n * harmonics].reshape(n, -1),
                                          x[n * harmonics:].reshape(n, -1)), t)

    def cost(x: F64) -> float:
        try:
            return float(np.log(condition(model, base, unpack(x), t)))
        except ModelError:
            return 1e3

    x0 = np.concatenate([start.a.ravel(), start.b.ravel()])
    best = minimize(cost, x0, method="L-BFGS-B", options={"maxfun": evaluations}).x
    found = unpack(best)
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
