"""Pinocchio as the independent reference, on the same URDF, mapped joint by joint by name.

Pinocchio knows nothing of mimic joints here (they load as independent joints) and gives
continuous joints two coordinates (cos, sin); ``G`` maps our reduced velocities to Pinocchio's
(``v_pin = G v``), so the references are ``G^T rnea_pin``, ``G^T M_pin G`` and the reduced
solve ``(G^T M G)^-1 G^T (tau_pin - h)``."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pinocchio as pin

from rbd_ros.dynamics import Model

ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
if not ROBOTS.is_dir():  # a ROS workspace's colcon test: example-robot-data has no rosdep key
    import pytest

    pytest.skip("the real robots need example-robot-data (pip install example-robot-data)",
                allow_module_level=True)

#: name -> (URDF under example-robot-data, free-flyer root)
REAL = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "panda": ("panda_description/urdf/panda.urdf", False),
    "kinova": ("kinova_description/robots/kinova.urdf", False),
    "baxter": ("baxter_description/urdf/baxter.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "anymal_c": ("anymal_c_simple_description/urdf/anymal.urdf", True),
    "talos": ("talos_data/robots/talos_full_v2.urdf", True),
}


def robot_path(name: str) -> str:
    return os.fspath(ROBOTS / REAL[name][0])


class PinRef:
    def __init__(self, model: Model, source: str, floating_base: bool) -> None:
        """``source``: a URDF file, or the URDF itself."""
        self.m = model
        build = pin.buildModelFromXML if source.lstrip().startswith("<") else \
            pin.buildModelFromUrdf
        self.pm = build(source, pin.JointModelFreeFlyer()) if floating_base else build(source)
        self.pd = self.pm.createData()
        self.pm.gravity.linear = model.gravity.copy()
        G = np.zeros((self.pm.nv, model.nv))
        for jid in range(1, self.pm.njoints):
            jm, name = self.pm.joints[jid], self.pm.names[jid]
            if name == "root_joint":
                G[:6, :6] = np.eye(6)
                continue
            J = model.joint(name)
            if J.mimic is not None:
                G[jm.idx_v, model.joint(J.mimic[0]).idx_v] = J.mimic[1]
            else:
                G[jm.idx_v, J.idx_v] = 1.0
        self.G = G

    def q(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio configuration of our reduced q."""
        m, qp = self.m, np.zeros(self.pm.nq)
        qfull = m.qlin[:, 0] * np.asarray(q)[m.qsrc] + m.qlin[:, 1]  # mimic joints too
        for jid in range(1, self.pm.njoints):
            jm, name = self.pm.joints[jid], self.pm.names[jid]
            if name == "root_joint":
                qp[:7] = q[:7]
                continue
            # position of this joint in our full coordinates
            b = m.body_joints.index(name)
            x = qfull[m.mi[b, 2]]
            if jm.nq == 2:
                qp[jm.idx_q : jm.idx_q + 2] = np.cos(x), np.sin(x)
            else:
                qp[jm.idx_q] = x
        return qp

    def rnea(self, q: np.ndarray, v: np.ndarray, a: np.ndarray,
             fext: pin.StdVec_Force | None = None) -> np.ndarray:
        args = (self.pm, self.pd, self.q(q), self.G @ v, self.G @ a)
        tau = pin.rnea(*args, fext) if fext is not None else pin.rnea(*args)
        out: np.ndarray = self.G.T @ tau
        return out

    def crba(self, q: np.ndarray) -> np.ndarray:
        M = pin.crba(self.pm, self.pd, self.q(q))
        M = np.triu(M) + np.triu(M, 1).T
        out: np.ndarray = self.G.T @ M @ self.G
        return out

    def gravity(self, q: np.ndarray) -> np.ndarray:
        out: np.ndarray = self.G.T @ pin.computeGeneralizedGravity(self.pm, self.pd, self.q(q))
        return out

    def aba(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Pinocchio's own ABA where it applies (no mimic), else the reduced solve."""
        if self.m.nv_full == self.m.nv:
            out: np.ndarray = self.G.T @ pin.aba(self.pm, self.pd, self.q(q), self.G @ v,
                                                 self.G @ tau)
            return out
        h = pin.nonLinearEffects(self.pm, self.pd, self.q(q), self.G @ v)
        return np.linalg.solve(self.crba(q), tau - self.G.T @ h)


def random_state(model: Model, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """A random (q, v, a, tau) within joint limits (and +-pi where there are none)."""
    q = np.empty(model.nq)
    for j in model.joints:
        if j.idx_q < 0:
            continue
        if j.kind == "floating":
            q[j.idx_q : j.idx_q + 3] = rng.uniform(-1, 1, 3)
            quat = rng.normal(size=4)
            q[j.idx_q + 3 : j.idx_q + 7] = quat / np.linalg.norm(quat)
        else:
            lo = j.lower if np.isfinite(j.lower) else -np.pi
            hi = j.upper if np.isfinite(j.upper) else np.pi
            q[j.idx_q : j.idx_q + j.nq] = rng.uniform(lo, hi, j.nq)
    v = rng.normal(size=model.nv)
    a = rng.normal(size=model.nv)
    tau = rng.normal(scale=5.0, size=model.nv)
    return q, v, a, tau


def rel_err(x: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(x - ref)) / max(np.max(np.abs(ref)), 1e-300))
