"""Centroidal quantities of a floating-base robot (Orin and Goswami, "Centroidal momentum matrix
of a humanoid robot", 2008; Wensing and Orin, 2016): the centre of mass and its velocity, the
robot's spatial momentum about its centre of mass in world axes ``h_G = [m c_dot; k_G]``, the
centroidal momentum matrix ``A_G`` (``h_G = A_G v``) and, given accelerations, ``dh_G/dt``.

A free-flyer's first six rows of the mass matrix are the whole robot's momentum in the base's
frame, about its origin (``M[:6] v``, linear first, as the base twist): ``A_G`` is that momentum
moved to the centre of mass and turned into world axes (Wensing and Orin, section III). The rate
of change is RNEA's: the base rows of ``rnea(q, v, a)`` are the wrench the base needs, the
robot's momentum rate less gravity's wrench (``m g`` at the centre of mass, no moment about it),
moved the same way. CRBA, RNEA and the placements are the ones checked against Pinocchio
(``ccrba``, ``computeCentroidalMomentumTimeVariation``, ``centerOfMass``).

Per state, without ``A_G``, the momentum is one O(n) sum (:func:`momentum_about`) over the
bodies' velocities that RNEA has just computed: the contact split (:mod:`..contact.contacts`)
adds it to each answer for the cost of a loop over the bodies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..multibody.layout import W_V
from ..multibody.model import F64, Data, Model
from ..multibody.spatial import inertia_mul, load6, skew
from .crba import crba
from .kinematics import center_of_mass, placements
from .rnea import rnea


@dataclass(frozen=True)
class Centroidal:
    """One state's centroidal quantities; world axes, SI units."""

    com: F64  # centre of mass, world, m
    com_velocity: F64  # m/s
    momentum: F64  # h_G: [linear (kg m/s); angular about the centre of mass (kg m^2/s)]
    matrix: F64  # A_G (6 x nv): momentum = matrix @ v
    momentum_rate: F64 | None  # dh_G/dt [N; N m], when accelerations were given


def centroidal(model: Model, data: Data, q: F64, v: F64, a: F64 | None = None) -> Centroidal:
    """The centroidal quantities at ``(q, v)`` of a free-flyer model; with ``a`` (nv, the base's
    acceleration first, as :func:`.rnea` takes it) also the momentum's rate of change."""
    model.require_free_flyer()
    q, v, acc = model.check_state(q, v, np.zeros(model.nv) if a is None else a, "a")
    base_rows = crba(model, data, q)[:6].copy()
    X = placements(model, data, q)
    com = center_of_mass(model, X)
    to_com = _base_to_centroid(X[0, :9].reshape(3, 3), X[0, 9:] - com)
    matrix = to_com @ base_rows
    momentum = matrix @ v
    rate = None
    if a is not None:
        rate = to_com @ rnea(model, data, q, v, acc)[:6]
        rate[:3] += model.total_mass * model.gravity
    return Centroidal(com, momentum[:3] / model.total_mass, momentum, matrix, rate)


def _base_to_centroid(R: F64, offset: F64) -> F64:
    """The 6 x 6 map of a momentum (or wrench) ``[linear; angular]`` in the base's axes about
    its origin to world axes about a point ``offset`` behind the origin (the origin less it):
    the linear part turned, the angular part turned plus ``offset x linear``."""
    T = np.zeros((6, 6))
    T[:3, :3] = T[3:, 3:] = R
    T[3:, :3] = skew(offset) @ R
    return T


@njit(cache=True)
def momentum_about(mf, W, X, point, h):
    """``h`` = the bodies' momentum ``[linear; angular about point]`` in world axes, from each
    body's velocity in ``W`` (``W_V``, body frame, as RNEA leaves it) and its world placement
    ``X`` (nb x 12)."""
    h[:] = 0.0
    for i in range(X.shape[0]):
        n0, n1, n2, f0, f1, f2 = inertia_mul(mf, i, load6(W, i, W_V))  # body frame, origin
        R = X[i, :9]
        f = (R[0] * f0 + R[1] * f1 + R[2] * f2, R[3] * f0 + R[4] * f1 + R[5] * f2,
             R[6] * f0 + R[7] * f1 + R[8] * f2)
        r = (X[i, 9] - point[0], X[i, 10] - point[1], X[i, 11] - point[2])
        h[0] += f[0]
        h[1] += f[1]
        h[2] += f[2]
        h[3] += R[0] * n0 + R[1] * n1 + R[2] * n2 + r[1] * f[2] - r[2] * f[1]
        h[4] += R[3] * n0 + R[4] * n1 + R[5] * n2 + r[2] * f[0] - r[0] * f[2]
        h[5] += R[6] * n0 + R[7] * n1 + R[8] * n2 + r[0] * f[1] - r[1] * f[0]
