"""Floating-base dynamics (Featherstone, chapter 9) for a model with a free-flyer root.

The root is not actuated. Three questions, each answered in O(n) or with one CRBA:

* :func:`base_reaction` — given the whole motion (base and joint accelerations), the joint
  torques and the 6-D wrench the base needs. Nothing actuates the base, so that wrench is what
  the environment (the contacts) must supply: the reaction.
* :func:`forward_dynamics` — in flight (no reaction), base and joint accelerations for given
  joint torques: ABA with an unactuated root (the articulated-body sweep ends at the base).
* :func:`inverse_dynamics` — in flight, the base acceleration and joint torques that produce
  desired joint accelerations (Featherstone's Table 9.6 in composite-inertia form).

Velocities and accelerations of the base are ``[linear; angular]`` in the base frame and
wrenches are ``[force; torque]`` in the base frame, as everywhere in the core.
"""

from __future__ import annotations

import numpy as np

from ..multibody.configuration import quat_matrix
from ..multibody.model import F64, Data, Model
from .aba import aba
from .crba import crba
from .rnea import rnea


def _joints(model: Model, x: object, what: str) -> F64:
    model.require_free_flyer()
    return model.check_vector(x, model.nv - 6, what)


def base_reaction(model: Model, data: Data, q: F64, v: F64, a: F64,
                  f_ext: F64 | None = None) -> tuple[F64, F64]:
    """(wrench the base needs ``[force; torque]`` in the base frame, joint torques)."""
    model.require_free_flyer()
    tau = rnea(model, data, q, v, a, f_ext)
    return tau[:6], tau[6:]


def forward_dynamics(model: Model, data: Data, q: F64, v: F64, tau_joints: F64,
                     f_ext: F64 | None = None) -> tuple[F64, F64]:
    """(base acceleration, joint accelerations) with an unactuated base."""
    tj = _joints(model, tau_joints, "tau_joints")
    qdd = aba(model, data, q, v, np.r_[np.zeros(6), tj], f_ext)
    return qdd[:6], qdd[6:]


def inverse_dynamics(model: Model, data: Data, q: F64, v: F64, qdd_joints: F64,
                     f_ext: F64 | None = None) -> tuple[F64, F64]:
    """(base acceleration, joint torques) that realise ``qdd_joints`` with no base wrench.

    RNEA is affine in the base acceleration: ``tau(a_b) = tau(0) + H[:, :6] a_b``; the base
    row must vanish, so ``a_b = -H_bb^-1 tau_b(0)``."""
    qj = _joints(model, qdd_joints, "qdd_joints")
    tau0 = rnea(model, data, q, v, np.r_[np.zeros(6), qj], f_ext)
    H = crba(model, data, q)
    a_base = -np.linalg.solve(H[:6, :6], tau0[:6]).astype(np.float64)
    return a_base, tau0[6:] + H[6:, :6] @ a_base


def base_acceleration_from_imu(model: Model, q: F64, v: F64, specific_force: F64,
                               angular_acceleration: F64 | None = None) -> F64:
    """The base acceleration ``[linear; angular]`` of the model's convention (the time
    derivative of the base-frame twist) from an IMU in the base frame: its specific force
    ``a - g`` and, if known, its angular acceleration (else zero)."""
    model.require_free_flyer()
    R = quat_matrix(q[3:7])
    a_classical = np.asarray(specific_force, dtype=np.float64) + R.T @ model.gravity
    alpha = np.zeros(3) if angular_acceleration is None else np.asarray(angular_acceleration)
    return np.r_[a_classical - np.cross(v[3:6], v[:3]), alpha].astype(np.float64)
