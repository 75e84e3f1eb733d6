"""Joint-space mass matrix: the Composite-Rigid-Body Algorithm (Featherstone, Table 6.2)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .model import F64, W_X, Data, Model
from .rnea import QF
from .spatial import (
    congruence_add,
    joint_transform,
    motion_subspace,
    plucker6,
    xform_force_to_parent,
)


@njit(cache=True)
def crba_core(M, W, M6, full, H, Hr):
    """Full mass matrix into ``H``, reduced ``G^T H G`` into ``Hr``."""
    mi, mf, qsrc, qlin, vsrc, vmul, vfull, mimic_rows, grav = M
    nb = mi.shape[0]
    qf = full[QF]
    S = np.empty((6, 6))
    Sj = np.empty((6, 6))
    F = np.empty((6, 6))
    col = np.empty(6)
    tmp66 = np.empty((6, 6))
    for i in range(nb):
        X = W[i, W_X : W_X + 12]
        joint_transform(mi[i, 1], mf[i], qf, mi[i, 2], X)
        plucker6(X, M6[i, 3])
        M6[i, 0, :, :] = mf[i, 18:54].reshape(6, 6)
    for i in range(nb - 1, -1, -1):
        p = mi[i, 0]
        if p >= 0:
            congruence_add(M6[i, 3], M6[i, 0], tmp66, M6[p, 0])
    H[:, :] = 0.0
    for i in range(nb):
        IC = M6[i, 0]
        vi = mi[i, 3]
        n = motion_subspace(mi[i, 1], mf[i], S)
        # F = IC S
        for c in range(n):
            for r in range(6):
                s = 0.0
                for k in range(6):
                    s += IC[r, k] * S[k, c]
                F[r, c] = s
        for r in range(n):
            for c in range(n):
                s = 0.0
                for k in range(6):
                    s += S[k, r] * F[k, c]
                H[vi + r, vi + c] = s
        j = i
        while mi[j, 0] >= 0:
            X = W[j, W_X : W_X + 12]
            for c in range(n):
                for k in range(6):
                    col[k] = F[k, c]
                xform_force_to_parent(X, col, F[:, c], False)
            j = mi[j, 0]
            vj = mi[j, 3]
            nj = motion_subspace(mi[j, 1], mf[j], Sj)
            for r in range(n):
                for c in range(nj):
                    s = 0.0
                    for k in range(6):
                        s += F[k, r] * Sj[k, c]
                    H[vi + r, vj + c] = s
                    H[vj + c, vi + r] = s
    Hr[:, :] = 0.0
    for a in range(vsrc.shape[0]):
        for b in range(vsrc.shape[0]):
            Hr[vsrc[a], vsrc[b]] += vmul[a] * vmul[b] * H[a, b]


@njit(cache=True)
def crba_one(M, q, W, M6, full, H):
    mi, mf, qsrc, qlin, vsrc, vmul, vfull, mimic_rows, grav = M
    for k in range(qsrc.shape[0]):
        full[QF, k] = qlin[k, 0] * q[qsrc[k]] + qlin[k, 1]
    Hr = np.empty((vfull.shape[0], vfull.shape[0]))
    crba_core(M, W, M6, full, H, Hr)
    return Hr


@njit(cache=True, parallel=True)
def crba_many(M, Q, W0, M60, full0, H0):
    mi, mf, qsrc, qlin, vsrc, vmul, vfull, mimic_rows, grav = M
    nv = vfull.shape[0]
    B = Q.shape[0]
    out = np.empty((B, nv, nv))
    nchunk = min(B, 64)
    for c in prange(nchunk):
        W = np.empty_like(W0)
        M6 = np.empty_like(M60)
        full = np.empty_like(full0)
        H = np.empty_like(H0)
        for b in range(c * B // nchunk, (c + 1) * B // nchunk):
            for k in range(qsrc.shape[0]):
                full[QF, k] = qlin[k, 0] * Q[b, qsrc[k]] + qlin[k, 1]
            crba_core(M, W, M6, full, H, out[b])
    return out


def crba(model: Model, data: Data, q: F64) -> F64:
    """Joint-space mass matrix ``M(q)`` (nv x nv, reduced coordinates, symmetric)."""
    q = model.check_vector(q, model.nq, "q")
    return crba_one(model.arrays, q, data.W, data.M6, data.full, data.H)


def crba_batch(model: Model, q: F64) -> F64:
    """Mass matrices of B configurations: ``q`` (B, nq) -> (B, nv, nv)."""
    Q = model.check_batch(q, model.nq, "q")
    d = Data(model)
    return crba_many(model.arrays, Q, d.W, d.M6, d.full, d.H)
