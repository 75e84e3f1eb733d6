"""Inverse dynamics: the Recursive Newton-Euler Algorithm (Featherstone, Table 5.1)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .model import F64, W_A, W_F, W_V, W_X, Data, Model
from .spatial import (
    JOINT_FREE,
    crf_add,
    crm,
    joint_transform,
    matvec6,
    xform_force_to_parent,
    xform_motion,
)

# indices of the rows of Data.full
QF, VF, AF, TF = 0, 1, 2, 3


@njit(cache=True)
def expand(M, q, v, a, full):
    """Full (mimic-included) q, v, a from reduced ones, into rows QF, VF, AF of ``full``."""
    mi, mf, qsrc, qlin, vsrc, vmul, vfull, mimic_rows, grav = M
    for k in range(qsrc.shape[0]):
        full[QF, k] = qlin[k, 0] * q[qsrc[k]] + qlin[k, 1]
    for k in range(vsrc.shape[0]):
        full[VF, k] = vmul[k] * v[vsrc[k]]
        full[AF, k] = vmul[k] * a[vsrc[k]]


@njit(cache=True)
def friction_torque(mf, qd, i):
    """Viscous plus Coulomb joint friction of 1-DOF body ``i`` at velocity ``qd``."""
    return mf[i, 54] * qd + mf[i, 55] * np.sign(qd)


@njit(cache=True)
def rnea_core(M, fext, fric, W, full, tau):
    """RNEA on the full coordinates already in ``full``; writes reduced torques into ``tau``.

    ``fext`` is empty or (nb, 6) ``[force; torque]`` per body in the body frame."""
    mi, mf, qsrc, qlin, vsrc, vmul, vfull, mimic_rows, grav = M
    nb = mi.shape[0]
    vJ = np.empty(6)
    aJ = np.empty(6)
    tmp = np.empty(6)
    a0 = np.zeros(6)
    a0[3] = -grav[0]
    a0[4] = -grav[1]
    a0[5] = -grav[2]
    zero = np.zeros(6)
    qf = full[QF]
    vf = full[VF]
    af = full[AF]
    tf = full[TF]
    has_fext = fext.shape[0] > 0
    for i in range(nb):
        p = mi[i, 0]
        jt = mi[i, 1]
        vi = mi[i, 3]
        X = W[i, W_X : W_X + 12]
        joint_transform(jt, mf[i], qf, mi[i, 2], X)
        if jt == JOINT_FREE:
            for k in range(3):
                vJ[k] = vf[vi + 3 + k]
                vJ[3 + k] = vf[vi + k]
                aJ[k] = af[vi + 3 + k]
                aJ[3 + k] = af[vi + k]
        else:
            for k in range(6):
                s = mf[i, 12 + k]
                vJ[k] = s * vf[vi]
                aJ[k] = s * af[vi]
        vb = W[i, W_V : W_V + 6]
        ab = W[i, W_A : W_A + 6]
        if p < 0:
            xform_motion(X, zero, vb)
            xform_motion(X, a0, ab)
        else:
            xform_motion(X, W[p, W_V : W_V + 6], vb)
            xform_motion(X, W[p, W_A : W_A + 6], ab)
        for k in range(6):
            vb[k] += vJ[k]
            ab[k] += aJ[k]
        crm(vb, vJ, tmp)
        for k in range(6):
            ab[k] += tmp[k]
        # f = I a + v x* I v - f_ext
        Ii = mf[i, 18:54].reshape(6, 6)
        fb = W[i, W_F : W_F + 6]
        matvec6(Ii, ab, fb)
        matvec6(Ii, vb, tmp)
        crf_add(vb, tmp, fb)
        if has_fext:
            for k in range(3):
                fb[k] -= fext[i, 3 + k]
                fb[3 + k] -= fext[i, k]
    for i in range(nb - 1, -1, -1):
        vi = mi[i, 3]
        fb = W[i, W_F : W_F + 6]
        if mi[i, 1] == JOINT_FREE:
            for k in range(3):
                tf[vi + k] = fb[3 + k]
                tf[vi + 3 + k] = fb[k]
        else:
            s = 0.0
            for k in range(6):
                s += mf[i, 12 + k] * fb[k]
            if fric:
                s += friction_torque(mf, vf[vi], i)
            tf[vi] = s
        p = mi[i, 0]
        if p >= 0:
            xform_force_to_parent(W[i, W_X : W_X + 12], fb, W[p, W_F : W_F + 6], True)
    tau[:] = 0.0
    for k in range(vsrc.shape[0]):
        tau[vsrc[k]] += vmul[k] * tf[k]


@njit(cache=True)
def rnea_one(M, q, v, a, fext, fric, W, full):
    expand(M, q, v, a, full)
    tau = np.empty(v.shape[0])
    rnea_core(M, fext, fric, W, full, tau)
    return tau


@njit(cache=True, parallel=True)
def rnea_many(M, Q, V, A, fric, W0, full0):
    B = Q.shape[0]
    tau = np.empty((B, V.shape[1]))
    nchunk = min(B, 64)
    fext = np.zeros((0, 6))
    for c in prange(nchunk):
        W = np.empty_like(W0)
        full = np.empty_like(full0)
        for b in range(c * B // nchunk, (c + 1) * B // nchunk):
            expand(M, Q[b], V[b], A[b], full)
            rnea_core(M, fext, fric, W, full, tau[b])
    return tau


def rnea(
    model: Model,
    data: Data,
    q: F64,
    v: F64,
    a: F64,
    f_ext: F64 | None = None,
    friction: bool = False,
) -> F64:
    """Joint torques that produce accelerations ``a`` at state ``(q, v)``.

    ``f_ext``: optional (nb, 6) external wrenches ``[force; torque]`` acting on each body,
    expressed in the body frame. ``friction``: add the URDF's viscous + Coulomb joint friction.
    With a free-flyer root, ``tau[:6]`` is the wrench ``[force; torque]`` (base frame) that the
    base needs: the reaction the environment must supply."""
    q = model.check_vector(q, model.nq, "q")
    v = model.check_vector(v, model.nv, "v")
    a = model.check_vector(a, model.nv, "a")
    fext = model.check_fext(f_ext)
    return rnea_one(model.arrays, q, v, a, fext, friction, data.W, data.full)


def gravity(model: Model, data: Data, q: F64) -> F64:
    """Generalized gravity torques ``g(q)`` (RNEA with zero velocity and acceleration)."""
    z = np.zeros(model.nv)
    return rnea(model, data, q, z, z)


def nonlinear_effects(model: Model, data: Data, q: F64, v: F64) -> F64:
    """Coriolis, centrifugal and gravity torques ``C(q, v) v + g(q)``."""
    return rnea(model, data, q, v, np.zeros(model.nv))


def rnea_batch(model: Model, q: F64, v: F64, a: F64, friction: bool = False) -> F64:
    """RNEA for B states at once: ``q`` (B, nq), ``v`` and ``a`` (B, nv) -> (B, nv).

    Runs compiled over all cores; no ``Data`` needed (each worker has its own)."""
    Q = model.check_batch(q, model.nq, "q")
    V = model.check_batch(v, model.nv, "v", Q.shape[0])
    A = model.check_batch(a, model.nv, "a", Q.shape[0])
    d = Data(model)
    return rnea_many(model.arrays, Q, V, A, friction, d.W, d.full)
