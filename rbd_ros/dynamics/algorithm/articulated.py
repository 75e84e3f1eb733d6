"""The articulated-body factors ABA leaves per body (Featherstone, Table 7.1): in ``Data.M6[i]``
the articulated inertia IA, U^T (U = IA S) and D^-1 (D = S^T U), and in ``Data.W[i]`` u; and
what a sweep from the root solves with them: each joint's acceleration. Also what ABA's
passes do per body beyond Table 7.1's one-coordinate joint: a six-DOF joint's factors, the
body's inertia and an external wrench."""

from __future__ import annotations

from numba import njit

from ..multibody.layout import MF_I, MF_S, W_F, W_U, W_X
from ..multibody.spatial import (
    JOINT_FREE,
    add6,
    dot6,
    free_axis,
    load6,
    load12,
    scale6,
    spd_inverse,
    store,
    xforce_up,
)

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


@njit(cache=True)
def load_inertia(mf, i, IA):
    """IA = body i's own spatial inertia (6x6)."""
    for r in range(6):
        for c in range(6):
            IA[r, c] = mf[i, MF_I + 6 * r + c]


@njit(cache=True)
def external_force(fext, i):
    """The bias force of an external wrench ``[force; torque]`` on body i: minus it, as
    ``[n; f]``."""
    return (-fext[i, 3], -fext[i, 4], -fext[i, 5], -fext[i, 0], -fext[i, 1], -fext[i, 2])


@njit(cache=True)
def free_joint_factors(IA, Ut, Dinv, Dt, W, i, p, tf, vi, pA):
    """A six-DOF joint's factors (its S is a permutation: U = IA S picks columns of IA, D =
    S^T IA S a block, ``Dt`` its scratch) and u; its bias force carried to the parent ``p``
    (it passes no inertia on: Ia = 0, pa = pA + U D^-1 u). False if D is singular."""
    for c in range(6):
        for r in range(6):
            Ut[c, r] = IA[r, free_axis(c)]
        for k in range(6):
            Dt[c, k] = IA[free_axis(c), free_axis(k)]
        W[i, W_U + c] = tf[vi + c] - pA[free_axis(c)]
    if not spd_inverse(Dt, 6, Dinv, D_MIN):
        return False
    if p >= 0:
        pa = add6(pA, udu(Ut, Dinv, W, i, W_U))
        store(W, p, W_F, add6(load6(W, p, W_F), xforce_up(load12(W, i, W_X), pa)))
    return True
