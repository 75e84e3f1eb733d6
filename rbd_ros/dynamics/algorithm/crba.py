"""Joint-space mass matrix: the Composite-Rigid-Body Algorithm (Featherstone, Table 6.2)."""

from __future__ import annotations

import numpy as np
from numba import cfunc, njit, prange
from numba.np.numpy_support import carray

from ..multibody import _entry
from ..multibody.entry import KERNEL, OK, arrays, register
from ..multibody.layout import MAPS_NQ, MAPS_NV, MF_ARMATURE, MF_I, MF_MASS, MF_MC, MF_S, W_O, W_OS
from ..multibody.model import F64, Data, Model, map_views, mimic_scratch, vpos_view, work_vectors
from ..multibody.spatial import (
    JOINT_FREE,
    dot6,
    free_axis,
    joint_transform,
    load6,
    load12,
    store,
)


@njit(cache=True)
def _params(mf, i, M6, k):
    """Body ``i``'s spatial inertia as its ten parameters, into the 6x6 slot ``P = M6[k, 0]``
    (indexed, not a view: a view costs a reference count): row 0
    the mass and the first moment ``h = m c``, rows 1-3 the rotational inertia about the frame
    origin. (A composite inertia is moved and summed in this form: a tenth of the work of the
    6x6 congruence ``X^T I X``.)"""
    M6[k, 0, 0, 0] = mf[i, MF_MASS]
    for c in range(3):
        M6[k, 0, 0, 1 + c] = mf[i, MF_MC[c]]
    for r in range(3):
        for c in range(3):
            M6[k, 0, 1 + r, c] = mf[i, MF_I + 6 * r + c]


@njit(cache=True)
def _params_up(X, M6, k, j):
    """``Q += P`` moved from a child frame into its parent's (``P = M6[k, 0]``, ``Q = M6[j, 0]``;
    ``X``: parent to child). With
    ``R = E^T`` and ``r`` the child's origin: ``h' = R h + m r`` and
    ``Io' = R Io R^T - r (Rh)^T - (Rh) r^T - m r r^T + (2 r.(Rh) + m |r|^2) 1``."""
    m = M6[k, 0, 0, 0]
    r0, r1, r2 = X[9], X[10], X[11]
    h0, h1, h2 = M6[k, 0, 0, 1], M6[k, 0, 0, 2], M6[k, 0, 0, 3]
    g0 = X[0] * h0 + X[3] * h1 + X[6] * h2  # R h
    g1 = X[1] * h0 + X[4] * h1 + X[7] * h2
    g2 = X[2] * h0 + X[5] * h1 + X[8] * h2
    M6[j, 0, 0, 0] += m
    M6[j, 0, 0, 1] += g0 + m * r0
    M6[j, 0, 0, 2] += g1 + m * r1
    M6[j, 0, 0, 3] += g2 + m * r2
    d = 2.0 * (r0 * g0 + r1 * g1 + r2 * g2) + m * (r0 * r0 + r1 * r1 + r2 * r2)
    r, g = (r0, r1, r2), (g0, g1, g2)
    # T = Io R^T = Io E, row by row
    T = (_row_e(M6, k, 1, X), _row_e(M6, k, 2, X), _row_e(M6, k, 3, X))
    for a in range(3):
        for c in range(a, 3):  # (R T)[a, c] = sum_b E[b, a] T[b, c]; symmetric
            x = X[a] * T[0][c] + X[3 + a] * T[1][c] + X[6 + a] * T[2][c]
            x -= r[a] * g[c] + g[a] * r[c] + m * r[a] * r[c]
            if a == c:
                x += d
            M6[j, 0, 1 + a, c] += x
            if a != c:
                M6[j, 0, 1 + c, a] += x


@njit(cache=True)
def _force(M6, i, s):
    """``I s`` for the inertia of parameters ``P = M6[i, 0]``:
    ``[Io sa + h x sl; sa x h + m sl]``."""
    m, h0, h1, h2 = M6[i, 0, 0, 0], M6[i, 0, 0, 1], M6[i, 0, 0, 2], M6[i, 0, 0, 3]
    a0, a1, a2, l0, l1, l2 = s
    P = (M6[i, 0, 1, 0], M6[i, 0, 1, 1], M6[i, 0, 1, 2], M6[i, 0, 2, 0], M6[i, 0, 2, 1],
         M6[i, 0, 2, 2], M6[i, 0, 3, 0], M6[i, 0, 3, 1], M6[i, 0, 3, 2])  # Io, row-major
    return (P[0] * a0 + P[1] * a1 + P[2] * a2 + h1 * l2 - h2 * l1,
            P[3] * a0 + P[4] * a1 + P[5] * a2 + h2 * l0 - h0 * l2,
            P[6] * a0 + P[7] * a1 + P[8] * a2 + h0 * l1 - h1 * l0,
            a1 * h2 - a2 * h1 + m * l0, a2 * h0 - a0 * h2 + m * l1, a0 * h1 - a1 * h0 + m * l2)


@njit(cache=True, inline="always")
def _row_e(M6, i, k, X):
    """Row ``k`` of ``M6[i, 0]`` (a row of Io) times ``E`` (= ``R^T``)."""
    a, b, c = M6[i, 0, k, 0], M6[i, 0, k, 1], M6[i, 0, k, 2]
    return (a * X[0] + b * X[3] + c * X[6], a * X[1] + b * X[4] + c * X[7],
            a * X[2] + b * X[5] + c * X[8])


@njit(cache=True, inline="always")
def _compose(X, O):
    """The transform from a reference frame to a child: ``X`` (parent to child) after ``O``
    (reference to parent). ``E = E_X E_O``, ``r = r_O + E_O^T r_X``."""
    return (X[0] * O[0] + X[1] * O[3] + X[2] * O[6], X[0] * O[1] + X[1] * O[4] + X[2] * O[7],
            X[0] * O[2] + X[1] * O[5] + X[2] * O[8], X[3] * O[0] + X[4] * O[3] + X[5] * O[6],
            X[3] * O[1] + X[4] * O[4] + X[5] * O[7], X[3] * O[2] + X[4] * O[5] + X[5] * O[8],
            X[6] * O[0] + X[7] * O[3] + X[8] * O[6], X[6] * O[1] + X[7] * O[4] + X[8] * O[7],
            X[6] * O[2] + X[7] * O[5] + X[8] * O[8],
            O[9] + O[0] * X[9] + O[3] * X[10] + O[6] * X[11],
            O[10] + O[1] * X[9] + O[4] * X[10] + O[7] * X[11],
            O[11] + O[2] * X[9] + O[5] * X[10] + O[8] * X[11])


@njit(cache=True, inline="always")
def _motion_out(O, m):
    """``O^-1 m``: a motion of the child frame expressed in the reference frame."""
    w0 = O[0] * m[0] + O[3] * m[1] + O[6] * m[2]
    w1 = O[1] * m[0] + O[4] * m[1] + O[7] * m[2]
    w2 = O[2] * m[0] + O[5] * m[1] + O[8] * m[2]
    return (w0, w1, w2,
            O[0] * m[3] + O[3] * m[4] + O[6] * m[5] + O[10] * w2 - O[11] * w1,
            O[1] * m[3] + O[4] * m[4] + O[7] * m[5] + O[11] * w0 - O[9] * w2,
            O[2] * m[3] + O[5] * m[4] + O[8] * m[5] + O[9] * w1 - O[10] * w0)


@njit(cache=True, inline="always")
def _force_in(O, f):
    """``O^-T f``: a force of the reference frame expressed in the child frame."""
    n0 = f[0] - (O[10] * f[5] - O[11] * f[4])
    n1 = f[1] - (O[11] * f[3] - O[9] * f[5])
    n2 = f[2] - (O[9] * f[4] - O[10] * f[3])
    return (O[0] * n0 + O[1] * n1 + O[2] * n2, O[3] * n0 + O[4] * n1 + O[5] * n2,
            O[6] * n0 + O[7] * n1 + O[8] * n2, O[0] * f[3] + O[1] * f[4] + O[2] * f[5],
            O[3] * f[3] + O[4] * f[4] + O[5] * f[5], O[6] * f[3] + O[7] * f[4] + O[8] * f[5])


@njit(cache=True, inline="always")
def _unit(k):
    return (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0,
            1.0 if k == 3 else 0.0, 1.0 if k == 4 else 0.0, 1.0 if k == 5 else 0.0)


@njit(cache=True)
def crba_core(mi, mf, maps, lin, q, W, M6, wv, Hr):
    """Mass matrix in reduced coordinates, ``G^T H G``, into ``Hr``.

    Every body's inertia, composite inertia and motion subspace are expressed in the frame of
    its tree's root body (``O``: that frame to the body's, kept in ``W_O``), where composite
    inertias add without a transform and ``H[i, j] = S_j . (I^c_i S_i)`` for each ancestor
    ``j`` is a dot product (as Pinocchio's world-frame CRBA; the root's frame rather than the
    world keeps a floating base far from the origin exact). Each joint's armature adds to its
    diagonal entry."""
    qsrc, vsrc, vfull, mimic_rows, mimic_bodies, all_bodies, grav, qmul, qoff, vmul = \
        map_views(maps, lin)
    qf = work_vectors(maps, wv)[0]
    for k in range(qsrc.shape[0]):
        qf[k] = qmul[k] * q[qsrc[k]] + qoff[k]
    nb = mi.shape[0]  # M6[nb, 0]: scratch
    one = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    for i in range(nb):
        p = mi[i, 0]
        if p < 0:
            O = one
            _params(mf, i, M6, i)
        else:
            O = _compose(joint_transform(mi[i, 1], mf, i, qf, mi[i, 2]), load12(W, p, W_O))
            _params(mf, i, M6, nb)
            for r in range(4):
                for c in range(4 if r == 0 else 3):
                    M6[i, 0, r, c] = 0.0
            _params_up(O, M6, nb, i)
        store(W, i, W_O, O)
        if mi[i, 1] != JOINT_FREE:
            store(W, i, W_OS, _motion_out(O, load6(mf, i, MF_S)))
    for i in range(nb - 1, -1, -1):  # composite inertias: all in the root's frame
        p = mi[i, 0]
        if p >= 0:
            for r in range(4):
                for c in range(4 if r == 0 else 3):
                    M6[p, 0, r, c] += M6[i, 0, r, c]
    if mimic_rows.shape[0]:  # H in full coordinates, then reduced
        H = mimic_scratch(maps, wv)
        P = vpos_view(maps)
        _fill(mi, W, M6, H, P)
        _armature(mi, mf, H, P)
        _reduce(H, vsrc, vmul, mimic_rows, P, Hr)
    else:
        _fill(mi, W, M6, Hr, None)
        _armature(mi, mf, Hr, None)


@njit(cache=True, inline="always")
def _armature(mi, mf, H, P):
    """Each 1-DOF joint's armature onto its diagonal entry of ``H`` (at ``P`` as in
    :func:`_fill`)."""
    for i in range(mi.shape[0]):
        if mi[i, 1] != JOINT_FREE:
            a = _at(P, mi[i, 3])
            H[a, a] += mf[i, MF_ARMATURE]


@njit(cache=True)
def _fill(mi, W, M6, H, P):
    """``H[i, j] = S_j . (I^c_i S_i)`` for each body ``i`` and ancestor ``j``, at the rows and
    columns ``P`` says (full coordinates in :func:`_reduce`'s order; None: as they are, compiled
    without the lookup)."""
    H[:, :] = 0.0  # pairs on different branches stay zero
    for i in range(mi.shape[0]):
        vi = mi[i, 3]
        free = mi[i, 1] == JOINT_FREE
        for c in range(6 if free else 1):
            if free:
                f = _force(M6, i, _motion_out(load12(W, i, W_O), _unit(free_axis(c))))
            else:
                f = _force(M6, i, load6(W, i, W_OS))
            a = _at(P, vi + c)
            j = i
            while j >= 0:  # H[i, j] along the path to the root
                vj = mi[j, 3]
                if mi[j, 1] == JOINT_FREE:
                    fj = _force_in(load12(W, j, W_O), f)
                    for l in range(6 if j != i else c + 1):
                        b = _at(P, vj + l)
                        H[a, b] = H[b, a] = fj[free_axis(l)]
                else:
                    b = _at(P, vj)
                    H[a, b] = H[b, a] = dot6(f, load6(W, j, W_OS))
                j = mi[j, 0]


@njit(cache=True, inline="always")
def _at(P, k):
    return k if P is None else P[k]


@njit(cache=True)
def _reduce(H, vsrc, vmul, mimic_rows, P, Hr):
    """``Hr = G^T H G``, H in full coordinates with the rows and columns in the order ``P``
    (``Model`` vpos) says: the independent coordinates' block first, which is copied, then each
    mimic coordinate's row and column folded onto its source's (``G``: one entry a row, ``vmul``
    in column ``vsrc``)."""
    nv = Hr.shape[0]
    for A in range(nv):  # (numba's slice assignment of a strided block is 3x slower)
        for B in range(nv):
            Hr[A, B] = H[A, B]
    for k in range(mimic_rows.shape[0]):
        a = mimic_rows[k]
        A = vsrc[a]
        for b in range(H.shape[0]):
            h = H[nv + k, P[b]]
            if h == 0.0:  # b on another branch than a (most of the row)
                continue
            x = vmul[a] * vmul[b] * h
            Hr[A, vsrc[b]] += x
            if P[b] < nv:  # b independent: (b, a) is not visited as a row
                Hr[vsrc[b], A] += x


@njit(cache=True, parallel=True, nogil=True)
def crba_many(mi, mf, maps, lin, Q, W0, M60, wv0, out):
    B = Q.shape[0]
    nchunk = min(B, 64)
    for c in prange(nchunk):
        W, M6, wv = np.empty_like(W0), np.empty_like(M60), np.empty_like(wv0)
        for b in range(c * B // nchunk, (c + 1) * B // nchunk):
            crba_core(mi, mf, maps, lin, Q[b], W, M6, wv, out[b])
    return out


@cfunc(KERNEL, cache=True)
def _crba(mi, mf, maps, lin, q, v, x, fext, nfext, fric, W, M6, wv, out, nb, nmaps, nlin, nwv):
    """crba_core for :func:`crba`, called by ``_entry.c`` (see :mod:`.entry`)."""
    mi, mf, maps, lin, W, M6, wv = arrays(mi, mf, maps, lin, W, M6, wv, nb, nmaps, nlin, nwv)
    nv = maps[MAPS_NV]
    crba_core(mi, mf, maps, lin, carray(q, (maps[MAPS_NQ],)), W, M6, wv, carray(out, (nv, nv)))
    return OK


register("crba", _crba)


def crba(model: Model, data: Data, q: F64) -> F64:
    """Joint-space mass matrix ``M(q)`` (nv x nv, reduced coordinates, symmetric)."""
    H = _entry.crba(data.entry, model, q)
    return data.again(_entry.crba, model, q) if H is None else H


def crba_batch(model: Model, q: F64, out: F64 | None = None) -> F64:
    """Mass matrices of B configurations: ``q`` (B, nq) -> (B, nv, nv); ``out`` as in
    :func:`rnea_batch`."""
    Q = model.check_batch(q, model.nq, "q")
    d = Data(model)
    return crba_many(model.mi, model.mf, model.maps, model.lin, Q, d.W, d.M6, d.wv,
                     model.batch_out(out, (Q.shape[0], model.nv, model.nv)))
