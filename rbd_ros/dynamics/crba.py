"""Joint-space mass matrix: the Composite-Rigid-Body Algorithm (Featherstone, Table 6.2)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .aba import free_axis
from .model import F64, MF_I, MF_S, W_X, Data, Model, map_views, work_vectors
from .spatial import (
    JOINT_FREE,
    congruence_add,
    dot6,
    joint_transform,
    load6,
    load12,
    mat_mul6,
    store,
    xforce_up,
)


@njit(cache=True)
def crba_core(mi, mf, maps, lin, q, W, M6, wv, Hr):
    """Mass matrix in reduced coordinates, ``G^T H G``, into ``Hr``."""
    qsrc, vsrc, vfull, mimic_rows, mimic_bodies, all_bodies, grav, qmul, qoff, vmul = \
        map_views(maps, lin)
    qf = work_vectors(maps, wv)[0]
    for k in range(qsrc.shape[0]):
        qf[k] = qmul[k] * q[qsrc[k]] + qoff[k]
    nb = mi.shape[0]
    mimic = mimic_rows.shape[0] > 0
    H = np.empty((vsrc.shape[0], vsrc.shape[0])) if mimic else Hr
    F, T = M6[nb, 0], M6[nb, 2]  # row c of F: the force IC S[:, c] carried towards the root
    for i in range(nb):
        store(W, i, W_X, joint_transform(mi[i, 1], mf, i, qf, mi[i, 2]))
        for r in range(6):
            for c in range(6):
                M6[i, 0, r, c] = mf[i, MF_I + 6 * r + c]
    for i in range(nb - 1, -1, -1):  # composite inertias IC
        p = mi[i, 0]
        if p >= 0:
            congruence_add(load12(W, i), M6[i, 0], T, M6[p, 0])
    H[:, :] = 0.0
    for i in range(nb):
        IC = M6[i, 0]
        vi = mi[i, 3]
        n = 6 if mi[i, 1] == JOINT_FREE else 1
        if n == 6:
            for c in range(6):
                for r in range(6):
                    F[c, r] = IC[r, free_axis(c)]
        else:
            store(F, 0, 0, mat_mul6(IC, load6(mf, i, MF_S)))
        j = i
        while True:  # H[i, j] = F^T S_j along the path to the root
            vj = mi[j, 3]
            for c in range(n):
                f = load6(F, c, 0)
                if mi[j, 1] == JOINT_FREE:
                    for l in range(6):
                        H[vi + c, vj + l] = f[free_axis(l)]
                        H[vj + l, vi + c] = f[free_axis(l)]
                else:
                    s = dot6(f, load6(mf, j, MF_S))
                    H[vi + c, vj] = s
                    H[vj, vi + c] = s
            if mi[j, 0] < 0:
                break
            X = load12(W, j)
            for c in range(n):
                store(F, c, 0, xforce_up(X, load6(F, c, 0)))
            j = mi[j, 0]
    if not mimic:
        return
    Hr[:, :] = 0.0
    for a in range(vsrc.shape[0]):
        for b in range(vsrc.shape[0]):
            Hr[vsrc[a], vsrc[b]] += vmul[a] * vmul[b] * H[a, b]


@njit(cache=True)
def crba_one(mi, mf, maps, lin, q, W, M6, wv):
    nv = maps[2]
    Hr = np.empty((nv, nv))
    crba_core(mi, mf, maps, lin, q, W, M6, wv, Hr)
    return Hr


@njit(cache=True, parallel=True, nogil=True)
def crba_many(mi, mf, maps, lin, Q, W0, M60, wv0, out):
    B = Q.shape[0]
    nchunk = min(B, 64)
    for c in prange(nchunk):
        W, M6, wv = np.empty_like(W0), np.empty_like(M60), np.empty_like(wv0)
        for b in range(c * B // nchunk, (c + 1) * B // nchunk):
            crba_core(mi, mf, maps, lin, Q[b], W, M6, wv, out[b])
    return out


def crba(model: Model, data: Data, q: F64) -> F64:
    """Joint-space mass matrix ``M(q)`` (nv x nv, reduced coordinates, symmetric)."""
    q = model.check_vector(q, model.nq, "q")
    return crba_one(model.mi, model.mf, model.maps, model.lin, q, data.W, data.M6, data.wv)


def crba_batch(model: Model, q: F64, out: F64 | None = None) -> F64:
    """Mass matrices of B configurations: ``q`` (B, nq) -> (B, nv, nv); ``out`` as in
    :func:`rnea_batch`."""
    Q = model.check_batch(q, model.nq, "q")
    d = Data(model)
    return crba_many(model.mi, model.mf, model.maps, model.lin, Q, d.W, d.M6, d.wv,
                     model.batch_out(out, (Q.shape[0], model.nv, model.nv)))
