"""Computed-torque control of a fixed-base robot's joints.

The commanded acceleration of each controlled joint is the desired one plus a PD (and an
optional I) correction of the tracking error, and the efforts are the model's inverse dynamics
at the measured state for it:

    a_cmd = qdd_d + Kd (qd_d - qd) + Kp (q_d - q) + Ki integral(q_d - q)
    tau = M(q) a_cmd + C(q, qd) qd + g(q)  (+ the URDF's friction, a payload in the model)

which makes every joint's error a linear second-order system, e'' + Kd e' + Kp e = 0 (with a
perfect model): ``gains(omega, zeta)`` gives Kp = omega^2 and Kd = 2 zeta omega for a natural
frequency omega (rad/s) and a damping ratio zeta. Joints the model has that are not controlled
are given no acceleration. A continuous joint's position error is the shorter way round.

The integral term is kept within ``integral_limit`` (rad/s^2 of commanded acceleration per
joint) and does not grow on a joint whose effort is saturated in the direction of its error
(anti-windup: the state of the last command, :meth:`ComputedTorque.saturated`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..algorithm.rnea import rnea
from ..errors import ModelError
from ..multibody.model import Data, Model

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


def gains(omega: F64 | float, zeta: F64 | float) -> tuple[F64, F64]:
    """(Kp, Kd) that make each joint's error a second-order system of natural frequency
    ``omega`` (rad/s) and damping ratio ``zeta``."""
    w, z = np.asarray(omega, dtype=np.float64), np.asarray(zeta, dtype=np.float64)
    return w**2, 2 * z * w


def position_error(desired: F64, measured: F64, wrap: NDArray[np.bool_]) -> F64:
    """``desired - measured``, the joints ``wrap`` marks (continuous ones) the shorter way
    round (in (-pi, pi])."""
    e = np.asarray(desired, dtype=np.float64) - measured
    if wrap.any():
        e[wrap] = -np.remainder(-e[wrap] + np.pi, 2 * np.pi) + np.pi
    return e


def continuous(model: Model, v_index: I64) -> NDArray[np.bool_]:
    """Which of the joints at ``v_index`` are continuous (no position limits, an angle that
    wraps)."""
    kinds = {j.idx_v: j.kind for j in model.joints if j.nv == 1}
    return np.array([kinds.get(int(i)) == "continuous" for i in v_index], dtype=bool)


class ComputedTorque:
    """The law for the joints at velocity indices ``v_index`` of a fixed-base ``model`` (its
    configuration and velocity indices the same: revolute, continuous and prismatic joints),
    with per-joint gains ``kp`` (1/s^2), ``kd`` (1/s), ``ki`` (1/s^3) and ``integral_limit``
    (rad/s^2). ``friction``: add the URDF's joint friction to the efforts."""

    def __init__(self, model: Model, v_index: I64, kp: F64 | float, kd: F64 | float,
                 ki: F64 | float, integral_limit: F64 | float, friction: bool) -> None:
        if model.has_free_flyer or model.nq != model.nv:
            raise ModelError(f"model '{model.name}' has a floating base or multi-coordinate "
                             "joints: computed torque here is for fixed-base arms of revolute, "
                             "continuous and prismatic joints")
        self.model, self.data = model, Data(model)
        self.v_index = np.asarray(v_index, dtype=np.int64)
        n = self.v_index.size
        self.kp, self.kd, self.ki, self.limit = (
            np.broadcast_to(np.asarray(x, dtype=np.float64), (n,)).copy()
            for x in (kp, kd, ki, integral_limit))
        self.friction = friction
        self.integrating = bool(self.ki.any())
        # every joint, in the model's order (an arm's usual case: no indexing on each call)
        self.every = bool(np.array_equal(self.v_index, np.arange(model.nv)))
        self.wrap = continuous(model, self.v_index)
        self.integral = np.zeros(n)  # of the position error, rad s
        self.saturated = np.zeros(n, dtype=np.int8)  # sign of each effort's last saturation
        self.accelerations = np.zeros(model.nv)

    def reset(self) -> None:
        """The integral emptied (a new hold or a restart after stale states)."""
        self.integral[:] = 0.0
        self.saturated[:] = 0

    def efforts(self, q: F64, v: F64, desired: tuple[F64, F64, F64], dt: float) -> F64:
        """The model's efforts (nv,) at the measured ``q``, ``v`` (model order) for the
        controlled joints' desired (position, velocity, acceleration), ``dt`` s after the last
        call (0: the integral does not grow)."""
        idx = self.v_index
        qd, vd, ad = desired
        e = position_error(qd, q if self.every else q[idx], self.wrap)
        if dt > 0 and self.integrating:
            grow = np.sign(e) != self.saturated  # anti-windup: not further into a saturation
            self.integral[grow] += e[grow] * dt
            with np.errstate(divide="ignore", invalid="ignore"):
                bound = np.where(self.ki > 0, self.limit / self.ki, 0.0)
            np.clip(self.integral, -bound, bound, out=self.integral)
        a = self.accelerations
        if self.every:
            a[:] = ad + self.kd * (vd - v) + self.kp * e
        else:
            a[:] = 0.0
            a[idx] = ad + self.kd * (vd - v[idx]) + self.kp * e
        if self.integrating:
            a[idx] += self.ki * self.integral
        return rnea(self.model, self.data, q, v, a, friction=self.friction)
