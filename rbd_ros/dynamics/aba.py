"""Forward dynamics: the Articulated-Body Algorithm (Featherstone, Table 7.1), O(n) on trees.

The mass matrix is never formed. Mimic joints are exact constraints ``qdd_m = k * qdd_src``:
the articulated-body factorization is computed once, ``M^-1`` is applied to each constraint
direction with two more O(n) sweeps over the stored factors, and the small (n_mimic x n_mimic)
system for the constraint forces is solved. The result equals the reduced-coordinate solve
``(G^T M G) qdd = G^T (tau - h)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .errors import ModelError
from .model import F64, W_A, W_C, W_F, W_U, W_V, W_X, Data, Model
from .rnea import AF, QF, TF, VF, friction_torque
from .spatial import (
    JOINT_FREE,
    congruence_add,
    crf_add,
    crm,
    joint_transform,
    matvec6,
    motion_subspace,
    plucker6,
    spd_inverse,
    xform_force_to_parent,
    xform_motion,
)

D_MIN = 1e-12  # smallest articulated inertia S^T IA S a joint may see


@njit(cache=True)
def aba_core(M, tau, fext, fric, W, M6, full, Y):
    """ABA on full coordinates (rows QF, VF of ``full``), reduced ``tau`` in; full
    accelerations out in row AF. Returns -1, or the body whose joint sees a singular
    articulated inertia."""
    mi, mf, qsrc, qlin, vsrc, vmul, vfull, mimic_rows, grav = M
    nb = mi.shape[0]
    qf = full[QF]
    vf = full[VF]
    qdd = full[AF]
    tf = full[TF]
    vJ = np.empty(6)
    tmp = np.empty(6)
    pa = np.empty(6)
    S = np.empty((6, 6))
    Ia = np.empty((6, 6))
    tmp66 = np.empty((6, 6))
    zero = np.zeros(6)
    a0 = np.zeros(6)
    a0[3] = -grav[0]
    a0[4] = -grav[1]
    a0[5] = -grav[2]
    has_fext = fext.shape[0] > 0
    # applied torques in full coordinates: independent joints get tau, mimic joints nothing
    tf[:] = 0.0
    for r in range(vfull.shape[0]):
        tf[vfull[r]] = tau[r]
    # pass 1: velocities, bias accelerations c, bias forces pA
    for i in range(nb):
        p = mi[i, 0]
        jt = mi[i, 1]
        vi = mi[i, 3]
        X = W[i, W_X : W_X + 12]
        joint_transform(jt, mf[i], qf, mi[i, 2], X)
        plucker6(X, M6[i, 3])
        if jt == JOINT_FREE:
            for k in range(3):
                vJ[k] = vf[vi + 3 + k]
                vJ[3 + k] = vf[vi + k]
        else:
            for k in range(6):
                vJ[k] = mf[i, 12 + k] * vf[vi]
            if fric:
                tf[vi] -= friction_torque(mf, vf[vi], i)
        vb = W[i, W_V : W_V + 6]
        if p < 0:
            xform_motion(X, zero, vb)
        else:
            xform_motion(X, W[p, W_V : W_V + 6], vb)
        for k in range(6):
            vb[k] += vJ[k]
        crm(vb, vJ, W[i, W_C : W_C + 6])
        Ii = mf[i, 18:54].reshape(6, 6)
        M6[i, 0, :, :] = Ii
        pA = W[i, W_F : W_F + 6]
        matvec6(Ii, vb, tmp)
        pA[:] = 0.0
        crf_add(vb, tmp, pA)
        if has_fext:
            for k in range(3):
                pA[k] -= fext[i, 3 + k]
                pA[3 + k] -= fext[i, k]
    # pass 2: articulated inertias IA, U = IA S, Dinv = (S^T U)^-1, u = tau - S^T pA
    for i in range(nb - 1, -1, -1):
        p = mi[i, 0]
        vi = mi[i, 3]
        IA = M6[i, 0]
        U = M6[i, 1]
        Dinv = M6[i, 2]
        pA = W[i, W_F : W_F + 6]
        u = W[i, W_U : W_U + 6]
        n = motion_subspace(mi[i, 1], mf[i], S)
        for c in range(n):
            for r in range(6):
                s = 0.0
                for k in range(6):
                    s += IA[r, k] * S[k, c]
                U[r, c] = s
        for c in range(n):
            s = 0.0
            for k in range(6):
                s += S[k, c] * pA[k]
            u[c] = tf[vi + c] - s
        if n == 1:
            D = 0.0
            for k in range(6):
                D += S[k, 0] * U[k, 0]
            if not D > D_MIN:
                return i
            Dinv[0, 0] = 1.0 / D
        else:
            for r in range(n):
                for c in range(n):
                    s = 0.0
                    for k in range(6):
                        s += S[k, r] * U[k, c]
                    tmp66[r, c] = s
            if not spd_inverse(tmp66, n, Dinv, D_MIN):
                return i
        if p >= 0:
            # Ia = IA - U Dinv U^T ;  pa = pA + Ia c + U Dinv u
            for r in range(6):
                for c in range(6):
                    s = 0.0
                    for k in range(n):
                        for l in range(n):
                            s += U[r, k] * Dinv[k, l] * U[c, l]
                    Ia[r, c] = IA[r, c] - s
            matvec6(Ia, W[i, W_C : W_C + 6], pa)
            for r in range(6):
                s = 0.0
                for k in range(n):
                    for l in range(n):
                        s += U[r, k] * Dinv[k, l] * u[l]
                pa[r] += pA[r] + s
            congruence_add(M6[i, 3], Ia, tmp66, M6[p, 0])
            xform_force_to_parent(W[i, W_X : W_X + 12], pa, W[p, W_F : W_F + 6], True)
    # pass 3: accelerations
    for i in range(nb):
        p = mi[i, 0]
        vi = mi[i, 3]
        ab = W[i, W_A : W_A + 6]
        X = W[i, W_X : W_X + 12]
        if p < 0:
            xform_motion(X, a0, ab)
        else:
            xform_motion(X, W[p, W_A : W_A + 6], ab)
        for k in range(6):
            ab[k] += W[i, W_C + k]
        n = motion_subspace(mi[i, 1], mf[i], S)
        accel_step(M6[i, 1], M6[i, 2], W[i, W_U : W_U + 6], S, n, ab, qdd, vi, tmp)
    if mimic_rows.shape[0] > 0:
        mimic_correction(M, W, M6, full, Y)
    return -1


@njit(cache=True)
def accel_step(U, Dinv, u, S, n, ab, qdd, vi, tmp):
    """qdd_i = Dinv (u - U^T a'), then a_i = a' + S qdd_i (``ab`` holds a' on entry)."""
    for c in range(n):
        s = u[c]
        for k in range(6):
            s -= U[k, c] * ab[k]
        tmp[c] = s
    for c in range(n):
        s = 0.0
        for l in range(n):
            s += Dinv[c, l] * tmp[l]
        qdd[vi + c] = s
    for k in range(6):
        s = 0.0
        for c in range(n):
            s += S[k, c] * qdd[vi + c]
        ab[k] += s


@njit(cache=True)
def minv_apply(M, W, M6, x, out):
    """out = M^-1 x in full coordinates, reusing the factors of the last ``aba_core``."""
    mi, mf = M[0], M[1]
    nb = mi.shape[0]
    pA = np.zeros((nb, 6))
    ab = np.zeros((nb, 6))
    u = np.empty((nb, 6))
    S = np.empty((6, 6))
    pa = np.empty(6)
    tmp = np.empty(6)
    for i in range(nb - 1, -1, -1):
        p = mi[i, 0]
        vi = mi[i, 3]
        U = M6[i, 1]
        Dinv = M6[i, 2]
        n = motion_subspace(mi[i, 1], mf[i], S)
        for c in range(n):
            s = 0.0
            for k in range(6):
                s += S[k, c] * pA[i, k]
            u[i, c] = x[vi + c] - s
        if p >= 0:
            for r in range(6):
                s = 0.0
                for k in range(n):
                    for l in range(n):
                        s += U[r, k] * Dinv[k, l] * u[i, l]
                pa[r] = pA[i, r] + s
            xform_force_to_parent(W[i, W_X : W_X + 12], pa, pA[p], True)
    for i in range(nb):
        p = mi[i, 0]
        if p >= 0:
            xform_motion(W[i, W_X : W_X + 12], ab[p], ab[i])
        n = motion_subspace(mi[i, 1], mf[i], S)
        accel_step(M6[i, 1], M6[i, 2], u[i], S, n, ab[i], out, mi[i, 3], tmp)


@njit(cache=True)
def mimic_correction(M, W, M6, full, Y):
    """Add the constraint forces that make every mimic joint follow its source exactly."""
    mi, mf, qsrc, qlin, vsrc, vmul, vfull, mimic_rows, grav = M
    qdd = full[AF]
    m = mimic_rows.shape[0]
    x = np.zeros(qdd.shape[0])
    # constraint j: qdd[row_j] - k_j qdd[src_j] = 0  (row A_j = e_row - k e_src)
    for j in range(m):
        row = mimic_rows[j]
        src = vfull[vsrc[row]]
        x[:] = 0.0
        x[row] = 1.0
        x[src] -= vmul[row]
        minv_apply(M, W, M6, x, Y[:, j])
    K = np.empty((m, m))
    rhs = np.empty(m)
    for j in range(m):
        row = mimic_rows[j]
        src = vfull[vsrc[row]]
        rhs[j] = -(qdd[row] - vmul[row] * qdd[src])
        for l in range(m):
            K[j, l] = Y[row, l] - vmul[row] * Y[src, l]
    # K = A M^-1 A^T is symmetric positive definite
    Kinv = np.empty((m, m))
    spd_inverse(K, m, Kinv, 0.0)
    for j in range(m):
        lam = 0.0
        for l in range(m):
            lam += Kinv[j, l] * rhs[l]
        for k in range(qdd.shape[0]):
            qdd[k] += Y[k, j] * lam


@njit(cache=True)
def aba_one(M, q, v, tau, fext, fric, W, M6, full, Y):
    mi, mf, qsrc, qlin, vsrc, vmul, vfull, mimic_rows, grav = M
    for k in range(qsrc.shape[0]):
        full[QF, k] = qlin[k, 0] * q[qsrc[k]] + qlin[k, 1]
    for k in range(vsrc.shape[0]):
        full[VF, k] = vmul[k] * v[vsrc[k]]
    err = aba_core(M, tau, fext, fric, W, M6, full, Y)
    out = np.empty(vfull.shape[0])
    for r in range(vfull.shape[0]):
        out[r] = full[AF, vfull[r]]
    return out, err


@njit(cache=True, parallel=True)
def aba_many(M, Q, V, T, fric, W0, M60, full0, Y0):
    mi, mf, qsrc, qlin, vsrc, vmul, vfull, mimic_rows, grav = M
    B = Q.shape[0]
    out = np.empty((B, V.shape[1]))
    errs = np.full(B, -1)
    nchunk = min(B, 64)
    fext = np.zeros((0, 6))
    for c in prange(nchunk):
        W = np.empty_like(W0)
        M6 = np.empty_like(M60)
        full = np.empty_like(full0)
        Y = np.empty_like(Y0)
        for b in range(c * B // nchunk, (c + 1) * B // nchunk):
            for k in range(qsrc.shape[0]):
                full[QF, k] = qlin[k, 0] * Q[b, qsrc[k]] + qlin[k, 1]
            for k in range(vsrc.shape[0]):
                full[VF, k] = vmul[k] * V[b, vsrc[k]]
            errs[b] = aba_core(M, T[b], fext, fric, W, M6, full, Y)
            for r in range(vfull.shape[0]):
                out[b, r] = full[AF, vfull[r]]
    return out, errs


def _singular(model: Model, body: int) -> ModelError:
    name = model.body_joints[body]
    return ModelError(
        f"joint '{name}' drives a subtree with no inertia about its axis in model "
        f"'{model.name}' (articulated inertia D <= {D_MIN:g}): its acceleration is undefined. "
        "Give the links it moves a mass and an <inertial>, or make the joint fixed."
    )


def aba(
    model: Model,
    data: Data,
    q: F64,
    v: F64,
    tau: F64,
    f_ext: F64 | None = None,
    friction: bool = False,
) -> F64:
    """Joint accelerations produced by torques ``tau`` at state ``(q, v)``.

    ``f_ext`` as in :func:`rnea`. ``friction``: subtract the URDF's viscous + Coulomb joint
    friction from the applied torque. With a free-flyer root, ``tau[:6]`` is a wrench applied to
    the base (zero for an unactuated base) and the result's first six entries are the base's
    acceleration ``[linear; angular]`` in the base frame (Pinocchio's convention)."""
    q = model.check_vector(q, model.nq, "q")
    v = model.check_vector(v, model.nv, "v")
    tau = model.check_vector(tau, model.nv, "tau")
    fext = model.check_fext(f_ext)
    out, err = aba_one(model.arrays, q, v, tau, fext, friction, data.W, data.M6, data.full,
                       data.mimic)
    if err >= 0:
        raise _singular(model, err)
    return out


def aba_batch(model: Model, q: F64, v: F64, tau: F64, friction: bool = False) -> F64:
    """ABA for B states at once: ``q`` (B, nq), ``v`` and ``tau`` (B, nv) -> (B, nv)."""
    Q = model.check_batch(q, model.nq, "q")
    V = model.check_batch(v, model.nv, "v", Q.shape[0])
    T = model.check_batch(tau, model.nv, "tau", Q.shape[0])
    d = Data(model)
    out, errs = aba_many(model.arrays, Q, V, T, friction, d.W, d.M6, d.full, d.mimic)
    bad = np.flatnonzero(errs >= 0)
    if bad.size:
        raise _singular(model, int(errs[bad[0]]))
    return out
