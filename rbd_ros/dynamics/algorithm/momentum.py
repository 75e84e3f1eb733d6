"""Generalized momentum ``p = M(q) v`` and ``C(q, v)^T v``, in one O(n) pass, without forming
``M`` or ``C``: what a momentum observer needs (``dp/dt = tau + C^T v - g + tau_ext``; De Luca
& Mattone 2005), with no acceleration.

With ``H_j`` the spatial momentum of the subtree that joint ``j`` carries (body ``j`` and all
below it, in body ``j``'s frame): ``p_j = S_j^T H_j``. Differentiating ``p = sum_k J_k^T I_k
v_k`` along the motion, the terms with accelerations and velocity products give ``M a + C v``;
the remaining one, from the joint axes turning with their bodies (``dS_j/dt = v_j x S_j``), is
``(C^T v)_j = (v_j x S_j)^T H_j``. ``C`` is the Christoffel-symbol Coriolis matrix (``dM/dt =
C + C^T``), as Pinocchio's ``computeCoriolisMatrix``. Reduced coordinates as everywhere.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..multibody.layout import MF_ARMATURE, MF_S, W_F, W_V, W_X
from ..multibody.model import F64, Data, Direct, Model, map_views, work_vectors
from ..multibody.spatial import (
    JOINT_FREE,
    add6,
    crm,
    dot6,
    inertia_mul,
    joint_transform,
    load6,
    load12,
    store,
    xforce_up,
    xmotion,
)
from .rnea import expand, friction_torque, gravity_again, joint_motion


@njit(cache=True)
def momentum_core(mi, mf, maps, lin, q, v, W, wv, p, ctv):
    """``p = M v`` and ``ctv = C^T v`` (reduced) at ``(q, v)``; the armature, constant, adds
    to ``p`` only."""
    qsrc, vsrc, _, _, _, _, _, qmul, qoff, vmul = map_views(maps, lin)
    work = work_vectors(maps, wv)
    qf, vf = work[0], work[1]
    expand(qsrc, vsrc, qmul, qoff, vmul, q, v, qf, vf)
    nb = mi.shape[0]
    for i in range(nb):
        par = mi[i, 0]
        X = joint_transform(mi[i, 1], mf, i, qf, mi[i, 2])
        store(W, i, W_X, X)
        vJ = joint_motion(mi[i, 1], mf, i, vf, mi[i, 3])
        vb = vJ if par < 0 else add6(xmotion(X, load6(W, par, W_V)), vJ)
        store(W, i, W_V, vb)
        store(W, i, W_F, inertia_mul(mf, i, vb))  # the body's momentum; its subtree's below
    p[:] = 0.0
    ctv[:] = 0.0
    for i in range(nb - 1, -1, -1):
        vi = mi[i, 3]
        H = load6(W, i, W_F)
        vb = load6(W, i, W_V)
        if mi[i, 1] == JOINT_FREE:  # S: [v; w] picks H's [force; torque] parts
            for c in range(6):
                S = [0.0] * 6
                S[c + 3 if c < 3 else c - 3] = 1.0
                s6 = (S[0], S[1], S[2], S[3], S[4], S[5])
                p[vsrc[vi + c]] += dot6(s6, H)
                ctv[vsrc[vi + c]] += dot6(crm(vb, s6), H)
        else:
            S = load6(mf, i, MF_S)
            k = vmul[vi]
            p[vsrc[vi]] += k * (dot6(S, H) + mf[i, MF_ARMATURE] * vf[vi])
            ctv[vsrc[vi]] += k * dot6(crm(vb, S), H)
        par = mi[i, 0]
        if par >= 0:
            store(W, par, W_F, add6(load6(W, par, W_F), xforce_up(load12(W, i, W_X), H)))


@njit(cache=True)
def observer_terms_core(mi, mf, maps, lin, q, v, fric, W, wv, p, drift):
    """What a momentum observer needs at ``(q, v)``, in one call: ``p = M v`` and ``drift =
    C^T v - g(q)``, less the URDF's joint friction if ``fric`` (so that ``dp/dt = tau + drift +
    tau_ext`` with ``tau`` the motor torques): viscous, and Coulomb through ``tanh(v /
    SLIDING_SPEED)``."""
    momentum_core(mi, mf, maps, lin, q, v, W, wv, p, drift)
    g = np.empty_like(drift)
    gravity_again(mi, mf, maps, lin, W, wv, g)  # on the transforms momentum_core left in W
    drift -= g
    if fric:
        _, vsrc, _, _, _, _, _, _, _, vmul = map_views(maps, lin)
        vf = work_vectors(maps, wv)[1]  # gravity_again leaves the full velocities alone
        for i in range(mi.shape[0]):
            if mi[i, 1] != JOINT_FREE:
                k = mi[i, 3]
                drift[vsrc[k]] -= vmul[k] * friction_torque(mf, vf[k], i)


def momentum(model: Model, data: Data, q: F64, v: F64) -> tuple[F64, F64]:
    """``(M(q) v, C(q, v)^T v)`` in reduced coordinates."""
    q = model.check_vector(q, model.nq, "q")
    v = model.check_vector(v, model.nv, "v")
    p, ctv = np.empty(model.nv), np.empty(model.nv)
    _MOMENTUM.call(model.mi, model.mf, model.maps, model.lin, q, v, data.W, data.wv, p, ctv)
    return p, ctv


_MOMENTUM = Direct(momentum_core)
