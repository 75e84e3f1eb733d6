"""The articulated-body factors ABA leaves per body (Featherstone, Table 7.1): in ``Data.M6[i]``
the articulated inertia IA, U^T (U = IA S) and D^-1 (D = S^T U), and in ``Data.W[i]`` u; and
what a sweep from the root solves with them: each joint's acceleration."""

from __future__ import annotations

from numba import njit

from .layout import MF_S
from .spatial import JOINT_FREE, add6, dot6, free_axis, load6, scale6

D_MIN = 1e-12  # smallest articulated inertia S^T IA S a joint may see


@njit(cache=True)
def urow(M6, i, c):
    """Row c of body i's stored U^T."""
    return (M6[i, 1, c, 0], M6[i, 1, c, 1], M6[i, 1, c, 2], M6[i, 1, c, 3], M6[i, 1, c, 4],
            M6[i, 1, c, 5])


@njit(cache=True)
def udu(Ut, Dinv, W, i, off):
    """U D^-1 u of a six-DOF joint, u at ``W[i, off:off+6]``."""
    t = [0.0] * 6
    for r in range(6):
        s = 0.0
        for k in range(6):
            for l in range(6):
                s += Ut[k, r] * Dinv[k, l] * W[i, off + l]
        t[r] = s
    return (t[0], t[1], t[2], t[3], t[4], t[5])


@njit(cache=True)
def joint_accel(jt, mf, i, M6, W, off, ab, qdd, vi):
    """qdd_i = D^-1 (u - U^T a') with u at ``W[i, off:]``; returns a_i = a' + S qdd_i."""
    if jt != JOINT_FREE:
        qdd[vi] = (W[i, off] - dot6(urow(M6, i, 0), ab)) * M6[i, 2, 0, 0]
        return add6(ab, scale6(qdd[vi], load6(mf, i, MF_S)))
    t = [0.0] * 6
    for c in range(6):
        t[c] = W[i, off + c] - dot6(urow(M6, i, c), ab)
    out = [ab[0], ab[1], ab[2], ab[3], ab[4], ab[5]]
    for c in range(6):
        s = 0.0
        for k in range(6):
            s += M6[i, 2, c, k] * t[k]
        qdd[vi + c] = s
        out[free_axis(c)] += s
    return (out[0], out[1], out[2], out[3], out[4], out[5])
