"""Joint-space mass matrix: the Composite-Rigid-Body Algorithm (Featherstone, Table 6.2)."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .aba import free_axis
from .model import F64, MF_I, MF_S, W_X, Data, Direct, Model, map_views, work_vectors
from .spatial import (
    JOINT_FREE,
    dot6,
    joint_transform,
    load6,
    load12,
    store,
    xforce_up,
)


@njit(cache=True)
def _params(mf, i, P):
    """Body ``i``'s spatial inertia as its ten parameters, into the 6x6 slot ``P``: row 0
    the mass and the first moment ``h = m c``, rows 1-3 the rotational inertia about the frame
    origin. (A composite inertia is moved and summed in this form: a tenth of the work of the
    6x6 congruence ``X^T I X``.)"""
    P[0, 0] = mf[i, MF_I + 21]  # from [[Io, h^], [h^T, m 1]]
    P[0, 1], P[0, 2], P[0, 3] = mf[i, MF_I + 16], mf[i, MF_I + 5], mf[i, MF_I + 9]
    for r in range(3):
        for c in range(3):
            P[1 + r, c] = mf[i, MF_I + 6 * r + c]


@njit(cache=True)
def _params_up(X, P, Q):
    """``Q += P`` moved from a child frame into its parent's (``X``: parent to child). With
    ``R = E^T`` and ``r`` the child's origin: ``h' = R h + m r`` and
    ``Io' = R Io R^T - r (Rh)^T - (Rh) r^T - m r r^T + (2 r.(Rh) + m |r|^2) 1``."""
    m = P[0, 0]
    r0, r1, r2 = X[9], X[10], X[11]
    h0, h1, h2 = P[0, 1], P[0, 2], P[0, 3]
    g0 = X[0] * h0 + X[3] * h1 + X[6] * h2  # R h
    g1 = X[1] * h0 + X[4] * h1 + X[7] * h2
    g2 = X[2] * h0 + X[5] * h1 + X[8] * h2
    Q[0, 0] += m
    Q[0, 1] += g0 + m * r0
    Q[0, 2] += g1 + m * r1
    Q[0, 3] += g2 + m * r2
    d = 2.0 * (r0 * g0 + r1 * g1 + r2 * g2) + m * (r0 * r0 + r1 * r1 + r2 * r2)
    r, g = (r0, r1, r2), (g0, g1, g2)
    # T = Io R^T = Io E, row by row
    T = (_row_e(P, 1, X), _row_e(P, 2, X), _row_e(P, 3, X))
    for a in range(3):
        for c in range(a, 3):  # (R T)[a, c] = sum_b E[b, a] T[b, c]; symmetric
            x = X[a] * T[0][c] + X[3 + a] * T[1][c] + X[6 + a] * T[2][c]
            x -= r[a] * g[c] + g[a] * r[c] + m * r[a] * r[c]
            if a == c:
                x += d
            Q[1 + a, c] += x
            if a != c:
                Q[1 + c, a] += x


@njit(cache=True)
def _force(P, s):
    """``I s`` for the inertia of parameters ``P``: ``[Io sa + h x sl; sa x h + m sl]``."""
    m, h0, h1, h2 = P[0, 0], P[0, 1], P[0, 2], P[0, 3]
    a0, a1, a2, l0, l1, l2 = s
    return (P[1, 0] * a0 + P[1, 1] * a1 + P[1, 2] * a2 + h1 * l2 - h2 * l1,
            P[2, 0] * a0 + P[2, 1] * a1 + P[2, 2] * a2 + h2 * l0 - h0 * l2,
            P[3, 0] * a0 + P[3, 1] * a1 + P[3, 2] * a2 + h0 * l1 - h1 * l0,
            a1 * h2 - a2 * h1 + m * l0, a2 * h0 - a0 * h2 + m * l1, a0 * h1 - a1 * h0 + m * l2)


@njit(cache=True)
def _spatial(P, out):
    """The 6x6 spatial inertia ``[[Io, h^], [h^T, m 1]]`` of parameters ``P``."""
    m, h0, h1, h2 = P[0, 0], P[0, 1], P[0, 2], P[0, 3]
    out[:, :] = 0.0
    for r in range(3):
        for c in range(3):
            out[r, c] = P[1 + r, c]
        out[3 + r, 3 + r] = m
    out[0, 4], out[0, 5], out[1, 3] = -h2, h1, h2
    out[1, 5], out[2, 3], out[2, 4] = -h0, -h1, h0
    for r in range(3):
        for c in range(3):
            out[3 + c, r] = out[r, 3 + c]


@njit(cache=True, inline="always")
def _row_e(P, k, X):
    """Row ``k`` of ``P`` (a row of Io) times ``E`` (= ``R^T``)."""
    return (P[k, 0] * X[0] + P[k, 1] * X[3] + P[k, 2] * X[6],
            P[k, 0] * X[1] + P[k, 1] * X[4] + P[k, 2] * X[7],
            P[k, 0] * X[2] + P[k, 1] * X[5] + P[k, 2] * X[8])


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
    F, IC = M6[nb, 0], M6[nb, 2]  # row c of F: the force IC S[:, c] carried to the root
    for i in range(nb):
        store(W, i, W_X, joint_transform(mi[i, 1], mf, i, qf, mi[i, 2]))
        _params(mf, i, M6[i, 0])
    for i in range(nb - 1, -1, -1):  # composite inertias, as ten parameters each
        p = mi[i, 0]
        if p >= 0:
            _params_up(load12(W, i), M6[i, 0], M6[p, 0])
    H[:, :] = 0.0
    for i in range(nb):
        P = M6[i, 0]
        vi = mi[i, 3]
        n = 6 if mi[i, 1] == JOINT_FREE else 1
        if n == 6:
            _spatial(P, IC)
            for c in range(6):
                for r in range(6):
                    F[c, r] = IC[r, free_axis(c)]
        else:
            store(F, 0, 0, _force(P, load6(mf, i, MF_S)))
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
    H = np.empty((model.nv, model.nv))  # allocated here: see rnea
    _CRBA.call(model.mi, model.mf, model.maps, model.lin, q, data.W, data.M6, data.wv, H)
    return H


_CRBA = Direct(crba_core)


def crba_batch(model: Model, q: F64, out: F64 | None = None) -> F64:
    """Mass matrices of B configurations: ``q`` (B, nq) -> (B, nv, nv); ``out`` as in
    :func:`rnea_batch`."""
    Q = model.check_batch(q, model.nq, "q")
    d = Data(model)
    return crba_many(model.mi, model.mf, model.maps, model.lin, Q, d.W, d.M6, d.wv,
                     model.batch_out(out, (Q.shape[0], model.nv, model.nv)))
