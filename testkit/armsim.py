"""The bundled arm simulated exactly (RK4 on our ABA at 1 kHz), held at a posture by PD control
with a known wrench on one link: states and the external joint torques they carry, for the
momentum observer's tests; and the RK4 step that the observer's benchmark integrates with."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from rbd_ros.dynamics import Data, Model, aba, crba, gravity, load_urdf, rnea
from rbd_ros.robots import ARM

DT = 1e-3
HOLD = np.array([0.3, 0.6, -0.2, -1.0, 0.4, 0.8, -0.3])
State = tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def rk4(f: Callable[[float, np.ndarray], np.ndarray], t: float, x: np.ndarray,
        dt: float) -> np.ndarray:
    """One classical Runge-Kutta step of ``x' = f(t, x)`` from ``t`` to ``t + dt``."""
    k1 = f(t, x)
    k2 = f(t + dt / 2, x + dt / 2 * k1)
    k3 = f(t + dt / 2, x + dt / 2 * k2)
    step: np.ndarray = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + f(t + dt, x + dt * k3))
    return step


def fifth_link_wrench() -> np.ndarray:
    """(nb, 6) ``[force; torque]`` on the fifth link, in its frame."""
    wrench = np.zeros((load_urdf(ARM).nb, 6))
    wrench[4] = [5.0, -8.0, 3.0, 0.5, 0.2, -0.3]
    return wrench


def simulate(wrench: np.ndarray, seconds: float = 3.0, friction: Model | None = None,
             on: tuple[float, float] = (1.0, np.inf), swing: float = 0.0) -> Iterator[State]:
    """States (t, q, v, tau, external joint torque) of the arm held by PD from 0.2 rad off its
    posture (``swing``: swinging that far about it instead, each joint at its own pace),
    ``wrench`` (nb, 6) acting while ``on[0] <= t < on[1]``; with the joint friction of the
    model ``friction`` if given, its Coulomb part as a real joint's, ``sign(v)`` (the models
    take it smooth). The external joint torque is RNEA at the true acceleration minus the
    applied torques."""
    m = friction or load_urdf(ARM)
    d = Data(m)
    damping, coulomb = (np.array([(j.damping, j.friction) for j in m.joints]).T
                        if friction is not None else np.zeros((2, 7)))
    inertia = np.diag(crba(m, d, HOLD))
    pace = np.linspace(1.5, 3.0, 7)  # rad/s

    def control(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        want, speed = HOLD + swing * np.sin(pace * t), swing * pace * np.cos(pace * t)
        tau: np.ndarray = inertia * (100.0 * (want - q) + 20.0 * (speed - v)) \
            + gravity(m, d, q)
        return tau

    def accel(t: float, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
        return aba(m, d, q, v, tau - damping * v - coulomb * np.sign(v),
                   f_ext=wrench if on[0] <= t < on[1] else None)

    def f(t: float, x: np.ndarray) -> np.ndarray:
        q, v = x[:7], x[7:]
        return np.concatenate([v, accel(t, q, v, control(t, q, v))])

    x = np.concatenate([HOLD + 0.2, np.zeros(7)]) if not swing else \
        np.concatenate([HOLD, swing * pace])
    for k in range(round(seconds / DT)):
        t = k * DT
        q, v = x[:7], x[7:]
        tau = control(t, q, v)
        qdd = accel(t, q, v, tau)
        yield (t, q.copy(), v.copy(), tau,
               rnea(m, d, q, v, qdd) + damping * v + coulomb * np.sign(v) - tau)
        x = rk4(f, t, x, DT)
