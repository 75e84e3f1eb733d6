"""The momentum observer on a simulated arm (RK4 on ABA at 1 kHz) holding a posture under PD
control, with a wrench applied to one link from t = 1 s: the residual is zero before it and
equals the external joint torque (RNEA at the true acceleration minus the applied torques)
within 1 % from 5/K seconds after it."""

from __future__ import annotations

import numpy as np
import pytest

from rbd_ros.dynamics import Data, aba, crba, gravity, load_urdf, rnea
from rbd_ros.dynamics.observer import MomentumObserver
from rbd_ros.robots import ARM

K = 100.0  # 1/s
DT = 1e-3


def test_residual_converges_to_the_external_joint_torques() -> None:
    m = load_urdf(ARM)
    d = Data(m)
    wrench = np.zeros((m.nb, 6))
    wrench[4] = [5.0, -8.0, 3.0, 0.5, 0.2, -0.3]  # [force; torque] on the fifth link
    hold = np.array([0.3, 0.6, -0.2, -1.0, 0.4, 0.8, -0.3])
    inertia = np.diag(crba(m, d, hold))

    def control(q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return inertia * (100.0 * (hold - q) - 20.0 * v) + gravity(m, d, q)

    def f(t: float, x: np.ndarray) -> np.ndarray:
        q, v = x[:7], x[7:]
        return np.concatenate([v, aba(m, d, q, v, control(q, v),
                                      f_ext=wrench if t >= 1.0 else None)])

    x = np.concatenate([hold + 0.2, np.zeros(7)])
    observer = MomentumObserver(m, K)
    before, after, size = [], [], 0.0
    for k in range(3000):
        t = k * DT
        q, v = x[:7], x[7:]
        tau = control(q, v)
        r = observer.update(t, q, v, tau)
        qdd = aba(m, d, q, v, tau, f_ext=wrench if t >= 1.0 else None)
        external = rnea(m, d, q, v, qdd) - tau
        if t < 1.0:
            before.append(np.abs(r).max())
        elif t >= 1.0 + 5.0 / K:
            size = max(size, np.abs(external).max())
            after.append(np.abs(r - external).max() / np.abs(external).max())
        k1 = f(t, x)
        k2 = f(t + DT / 2, x + DT / 2 * k1)
        k3 = f(t + DT / 2, x + DT / 2 * k2)
        x = x + DT / 6 * (k1 + 2 * k2 + 2 * k3 + f(t + DT, x + DT * k3))
    # while the arm swings freely, the residual stays under 1 % of the torque to detect (the
    # trapezoid rule's error at 1 kHz), and at rest it is exact
    assert max(before) < 0.01 * size and before[-1] < 1e-4
    assert max(after) < 0.01
    assert after[-1] < 1e-4  # at rest, exact


def test_gain_must_be_positive() -> None:
    with pytest.raises(ValueError, match="gain must be positive"):
        MomentumObserver(load_urdf(ARM), 0.0)
