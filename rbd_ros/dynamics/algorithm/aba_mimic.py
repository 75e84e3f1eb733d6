"""Mimic joints in ABA: exact constraints ``qdd_m = k * qdd_src``, solved one of two ways, both
equal to the reduced-coordinate solve ``(G^T M G) qdd = G^T (tau - h)``:

* a gripper's fingers (a source joint and its mimic joints hanging from one body, nothing else
  below them) form a group that the sweeps treat as one joint of one coordinate
  (:func:`group_up`, :func:`group_fold`): still O(n);
* any other mimic joint: after the articulated-body factorization, ``M^-1`` is applied to each
  constraint direction with two more O(n) sweeps over the stored factors (:func:`minv_apply`),
  and the small (n_mimic x n_mimic) system for the constraint forces is solved
  (:func:`mimic_correction`).

The groups' terms live in ``Data.W``'s ``W_G*`` slots, the sweeps' in its ``W_S*`` slots (see
:mod:`.layout`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..multibody.layout import (
    MF_ARMATURE,
    MF_S,
    W_A,
    W_C,
    W_F,
    W_GA,
    W_GD,
    W_GU,
    W_GW,
    W_SA,
    W_SP,
    W_SU,
    W_X,
)
from ..multibody.spatial import (
    JOINT_FREE,
    add6,
    congruence_add,
    dot6,
    free_axis,
    load6,
    load12,
    mat_mul6,
    scale6,
    spd_inverse,
    store,
    xforce_up,
    xmotion,
)
from .articulated import D_MIN, joint_accel, udu, urow


@njit(cache=True)
def group_start(W, i):
    """Body ``i`` is in a group or hosts one: its terms start at zero (coupling U, D and w)."""
    for k in range(6):
        W[i, W_GU + k] = 0.0
    W[i, W_GD], W[i, W_GW] = 0.0, 0.0


@njit(cache=True)
def group_accel(W, i):
    """The coordinate of the group hanging from body ``i`` (its acceleration ``a`` known):
    ``theta'' = (u - U^T a) / D``."""
    W[i, W_GA] = (W[i, W_GW] - dot6(load6(W, i, W_GU), load6(W, i, W_A))) / W[i, W_GD]


@njit(cache=True)
def group_member_accel(mf, grp, vmul, W, qdd, i, vi, ab):
    """A group member's acceleration: its coordinate's (``k theta''``, solved at the host)
    added to ``ab``, what its parent's motion gives it."""
    qdd[vi] = vmul[vi] * W[grp[i], W_GA]
    store(W, i, W_A, add6(ab, scale6(qdd[vi], load6(mf, i, MF_S))))


@njit(cache=True)
def group_up(mi, mf, grp, vmul, tf, W, M6, T, c):
    """Carry group member ``c``'s terms to its parent. A member's subtree moves with its
    parent's acceleration ``a`` and the group's coordinate ``theta''``: the force it needs is
    ``Ic a + U theta'' + p`` (``Ic`` the rigid composite inertia), and its part of the group's
    equation ``U^T a + D theta'' + w = 0`` (``w``: bias forces minus the torques applied,
    projected on the group's coordinate with each joint's multiplier ``k``). Through the
    joint (``a_c = X a + k S theta'' + c``) with ``V = k Ic S + U``: ``Ic' += X^T Ic X``,
    ``U' += X^T V``, ``p' += X^T (Ic c + p)``, ``D' += k^2 (S^T Ic S + the joint's armature)
    + 2 k S^T U + D``, ``w' += V^T c + k S^T p + w - k tau``. A member keeps U, D and w in its
    ``W_GU``, ``W_GD`` and ``W_GW`` slots; its parent, a member or the group's host, receives
    them there too."""
    b = mi[c, 0]
    vi = mi[c, 3]
    k = vmul[vi]
    X = load12(W, c, W_X)
    S = load6(mf, c, MF_S)
    Ic = M6[c, 0]
    U = load6(W, c, W_GU)
    pc = load6(W, c, W_F)
    cc = load6(W, c, W_C)
    IS = mat_mul6(Ic, S)
    V = add6(scale6(k, IS), U)
    W[b, W_GD] += k * k * (dot6(S, IS) + mf[c, MF_ARMATURE]) + 2.0 * k * dot6(S, U) + W[c, W_GD]
    W[b, W_GW] += dot6(V, cc) + k * dot6(S, pc) + W[c, W_GW] - k * tf[vi]
    store(W, b, W_GU, add6(load6(W, b, W_GU), xforce_up(X, V)))
    store(W, b, W_F, add6(load6(W, b, W_F), xforce_up(X, add6(mat_mul6(Ic, cc), pc))))
    congruence_add(X, Ic, T, M6[b, 0])


@njit(cache=True)
def group_fold(W, M6, i):
    """Eliminate the coordinate of the group hanging from body ``i``: ``theta'' = (u - U^T a)
    / D`` with ``u = -w``, so ``IA -= U U^T / D`` and ``pA += U u / D``; ``u`` is kept for
    the accelerations. False when the group has no inertia along its coordinate."""
    D = W[i, W_GD]
    if not D > D_MIN:
        return False
    U = load6(W, i, W_GU)
    u = -W[i, W_GW]
    W[i, W_GW] = u
    IA = M6[i, 0]
    for r in range(6):
        for c in range(6):
            IA[r, c] -= U[r] * U[c] / D
    store(W, i, W_F, add6(load6(W, i, W_F), scale6(u / D, U)))
    return True


@njit(cache=True)
def minv_apply(mi, mf, W, M6, x, out, bodies):
    """out = M^-1 x in full coordinates from the factors of the last ``aba_core``, computed
    only for ``bodies`` (topologically sorted). Exact when x is zero outside ``bodies`` and
    ``bodies`` holds every ancestor of its members: the entries of ``out`` at those bodies are
    then right, the others untouched."""
    n = bodies.shape[0]
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for t in range(n):
        store(W, bodies[t], W_SP, zero)
    for t in range(n - 1, -1, -1):
        i = bodies[t]
        p = mi[i, 0]
        vi = mi[i, 3]
        pA = load6(W, i, W_SP)
        if mi[i, 1] != JOINT_FREE:
            if x[vi] == 0.0 and pA == zero:  # off the constrained joints' paths to the root
                W[i, W_SU] = 0.0
                continue
            u = x[vi] - dot6(load6(mf, i, MF_S), pA)
            W[i, W_SU] = u
            pa = add6(pA, scale6(u * M6[i, 2, 0, 0], urow(M6, i, 0)))
        else:
            for c in range(6):
                W[i, W_SU + c] = x[vi + c] - pA[free_axis(c)]
            pa = add6(pA, udu(M6[i, 1], M6[i, 2], W, i, W_SU))
        if p >= 0:
            store(W, p, W_SP, add6(load6(W, p, W_SP), xforce_up(load12(W, i, W_X), pa)))
    for t in range(n):
        i = bodies[t]
        p = mi[i, 0]
        ab = zero if p < 0 else xmotion(load12(W, i, W_X), load6(W, p, W_SA))
        store(W, i, W_SA, joint_accel(mi[i, 1], mf, i, M6, W, W_SU, ab, out, mi[i, 3]))


@njit(cache=True)
def mimic_correction(mi, mf, vsrc, vmul, vfull, mimic_rows, mimic_bodies, all_bodies, W, M6,
                     qdd, x, y, rhs):
    """Add the constraint forces that make every mimic joint follow its source exactly.

    Constraint j reads ``qdd[row_j] - k_j qdd[src_j] = 0`` (row ``A_j = e_row - k e_src``).
    ``K = A M^-1 A^T`` needs ``M^-1 A_j^T`` only at constrained joints, so each column is
    computed only on the bodies between the root and those joints; the correction
    ``M^-1 A^T lam`` takes one full sweep."""
    m = mimic_rows.shape[0]
    K = np.empty((m, m))
    Kinv = np.empty((m, m))
    for j in range(m):
        row = mimic_rows[j]
        src = vfull[vsrc[row]]
        x[:] = 0.0
        x[row] = 1.0
        x[src] -= vmul[row]
        minv_apply(mi, mf, W, M6, x, y, mimic_bodies)
        for l in range(m):
            rl = mimic_rows[l]
            K[l, j] = y[rl] - vmul[rl] * y[vfull[vsrc[rl]]]
        rhs[j] = -(qdd[row] - vmul[row] * qdd[src])
    spd_inverse(K, m, Kinv, 0.0)
    x[:] = 0.0
    for j in range(m):
        lam = 0.0
        for l in range(m):
            lam += Kinv[j, l] * rhs[l]
        row = mimic_rows[j]
        x[row] += lam
        x[vfull[vsrc[row]]] -= vmul[row] * lam
    minv_apply(mi, mf, W, M6, x, y, all_bodies)
    for k in range(qdd.shape[0]):
        qdd[k] += y[k]
