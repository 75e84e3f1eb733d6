"""A small dense strictly convex QP, solved by the dual active-set method of Goldfarb and Idnani
("A numerically stable dual method for solving strictly convex quadratic programs",
Mathematical Programming 27, 1983)::

    minimise    1/2 x^T G x - a^T x
    subject to  C[:meq] x  = b[:meq]
                C[meq:] x >= b[meq:]

with G symmetric positive definite; the equalities may be dependent if they agree (an equality
that is a combination of those already active, and met, is met wherever they are). The method
starts from the unconstrained minimum and adds violated constraints one at a time, dropping
those whose multiplier would turn negative, so every iterate is dual feasible and the first
primal feasible one is the optimum. It keeps
``J = L^-T Q`` and ``R`` (``G = L L^T``, ``L^-1 N = Q [R; 0]`` for the active normals ``N``)
and updates both with Givens rotations when a constraint enters or leaves.

The contact split (:mod:`.contacts`) solves one such problem per state; ``solve_qp`` is
compiled, so no QP library is needed at run time.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..multibody.model import F64
from ..multibody.spatial import inverse_cholesky

OPTIMAL, INFEASIBLE, NO_PROGRESS = 0, 1, 2
#: a constraint is violated below ``-TOL * (1 + |b_i|)``; a new normal is taken as dependent
#: on the active ones when its part outside their span is below ``TOL`` of its length
TOL = 1e-12


@njit(cache=True)
def _givens(a, b):
    """(c, s, h) with [c s; -s c] [a; b] = [h; 0]."""
    h = math.hypot(a, b)
    if h == 0.0:
        return 1.0, 0.0, 0.0
    return a / h, b / h, h


@njit(cache=True)
def _rotate_columns(J, i, k, c, s):
    """Columns i and k of J turned by the rotation that zeroes the second of (a_i, a_k)."""
    for r in range(J.shape[0]):
        x, y = J[r, i], J[r, k]
        J[r, i] = c * x + s * y
        J[r, k] = -s * x + c * y


@njit(cache=True)
def _diagonal(G):
    for i in range(G.shape[0]):
        for k in range(G.shape[1]):
            if i != k and G[i, k] != 0.0:
                return False
    return True


@njit(cache=True)
def _start(G, a, J, x):
    """``J = L^-T`` and the unconstrained minimum ``x = G^-1 a``; False when G is not
    positive definite. A diagonal G (the contact split's weights) directly."""
    n = G.shape[0]
    if _diagonal(G):
        J[:, :] = 0.0
        for i in range(n):
            if not G[i, i] > 0.0:
                return False
            J[i, i] = 1.0 / math.sqrt(G[i, i])
            x[i] = a[i] / G[i, i]
        return True
    Li = np.empty((n, n))
    if not inverse_cholesky(G, n, 0.0, Li):
        return False
    J[:, :] = Li.T
    y = np.empty(n)  # x = J (J^T a)
    for i in range(n):
        t = 0.0
        for k in range(n):
            t += J[k, i] * a[k]
        y[i] = t
    for i in range(n):
        t = 0.0
        for k in range(n):
            t += J[i, k] * y[k]
        x[i] = t
    return True


@njit(cache=True)
def _violated(C, b, meq, x, is_active, sign):
    """The constraint to add next: the first equality not yet active (entered from the side x
    is on), else the most violated inequality; -1 when x meets them all."""
    p, worst = -1, 0.0
    for i in range(C.shape[0]):
        if is_active[i]:
            continue
        s = -b[i]
        for k in range(x.shape[0]):
            s += C[i, k] * x[k]
        if i < meq:
            if s > 0.0:
                sign[i] = -1.0
            return i
        if s < -TOL * (1.0 + abs(b[i])) and s < worst:
            p, worst = i, s
    return p


@njit(cache=True)
def _add(J, R, d, q):
    """A constraint enters with ``d = J^T n``: rotations zero d below row q (turning J's
    columns with them) and R gains column q."""
    for i in range(d.shape[0] - 1, q, -1):
        c, s, h = _givens(d[i - 1], d[i])
        d[i - 1], d[i] = h, 0.0
        _rotate_columns(J, i - 1, i, c, s)
    for i in range(q + 1):
        R[i, q] = d[i]


@njit(cache=True)
def _drop(J, R, active, u, q, l):
    """Constraint ``active[l]`` leaves: its column of R goes, the Hessenberg part left behind
    is turned back to triangular (its rotations applied to J's columns too). Returns q - 1."""
    for j in range(l, q - 1):
        active[j], u[j] = active[j + 1], u[j + 1]
        for r in range(j + 2):
            R[r, j] = R[r, j + 1]
    q -= 1
    for j in range(l, q):
        c, s, h = _givens(R[j, j], R[j + 1, j])
        R[j, j], R[j + 1, j] = h, 0.0
        for k in range(j + 1, q):
            x, y = R[j, k], R[j + 1, k]
            R[j, k] = c * x + s * y
            R[j + 1, k] = -s * x + c * y
        _rotate_columns(J, j, j + 1, c, s)
    for r in range(q + 1):
        R[r, q] = 0.0
    return q


@njit(cache=True, inline="always")
def _directions(J, R, C, p, sign_p, q, d, z, r):
    """Step 2's directions for constraint ``p`` with ``q`` active: d = J^T n, the step in the
    primal z = J2 d2 and in the active multipliers r = R^-1 d1; returns |n|^2 and |d2|^2."""
    n = J.shape[0]
    nd = 0.0
    for i in range(n):
        t = 0.0
        for k in range(n):
            t += J[k, i] * C[p, k]
        d[i] = sign_p * t
        nd += t * t
    ztn = 0.0
    for i in range(q, n):
        ztn += d[i] * d[i]
    for i in range(n):
        t = 0.0
        for k in range(q, n):
            t += J[i, k] * d[k]
        z[i] = t
    for i in range(q - 1, -1, -1):  # r = R^-1 d[:q]
        t = d[i]
        for k in range(i + 1, q):
            t -= R[i, k] * r[k]
        r[i] = t / R[i, i]
    return nd, ztn


@njit(cache=True)
def solve_qp(G, a, C, b, meq, x, lam):
    """Solve the QP of the module's docstring into ``x`` (n) and its multipliers into ``lam``
    (one per row of C; zero for the inactive, >= 0 for the active inequalities). Returns
    OPTIMAL, INFEASIBLE (no x meets the constraints) or NO_PROGRESS (rounding stalls it)."""
    n, m = G.shape[0], C.shape[0]
    J = np.empty((n, n))
    R = np.zeros((n, n))
    d, z, r = np.empty(n), np.empty(n), np.empty(n)  # step 2's directions
    u = np.zeros(n + 1)  # multipliers of the active constraints, then the entering one's
    active = np.empty(n, dtype=np.int64)
    sign = np.ones(m)  # an equality entered from above is n^T x >= b with n, b negated
    is_active = np.zeros(m, dtype=np.bool_)
    lam[:] = 0.0
    if not _start(G, a, J, x):
        return NO_PROGRESS
    q = 0
    for _ in range(10 * (n + m) + 10):
        p = _violated(C, b, meq, x, is_active, sign)  # step 1: the constraint to add
        if p < 0:
            for j in range(q):
                lam[active[j]] = sign[active[j]] * u[j]
            return OPTIMAL
        u[q] = 0.0
        while True:  # step 2: move until constraint p holds
            nd, ztn = _directions(J, R, C, p, sign[p], q, d, z, r)
            t1, l = np.inf, -1  # the partial step: the first active multiplier to reach 0
            for j in range(q):
                if active[j] >= meq and r[j] > 0.0 and u[j] / r[j] < t1:
                    t1, l = u[j] / r[j], j
            s = -sign[p] * b[p]
            for k in range(n):
                s += sign[p] * C[p, k] * x[k]
            dependent = ztn <= TOL * TOL * nd
            if dependent and p < meq and abs(s) <= TOL * (1.0 + abs(b[p])):
                # a combination of the active equalities, and met: it holds wherever they do
                # (two point feet: no moment about the line through them, in the data too)
                is_active[p] = True
                break
            t2 = np.inf if dependent else -s / ztn  # the full step: constraint p holds
            if dependent and l < 0:
                return INFEASIBLE
            t = min(t1, t2)
            if not dependent:
                for i in range(n):
                    x[i] += t * z[i]
            for j in range(q):
                u[j] -= t * r[j]
            u[q] += t
            if not dependent and t2 <= t1:  # p enters
                _add(J, R, d, q)
                active[q] = p
                is_active[p] = True
                q += 1
                break
            up = u[q]  # a constraint leaves; p's multiplier so far moves with the others
            is_active[active[l]] = False
            q = _drop(J, R, active, u, q, l)
            u[q] = up
    return NO_PROGRESS


def solve(G: F64, a: F64, C: F64, b: F64, meq: int) -> tuple[int, F64, F64]:
    """:func:`solve_qp` with its outputs allocated: (status, x, multipliers)."""
    x, lam = np.empty(G.shape[0]), np.empty(C.shape[0])
    status = solve_qp(G, a, C, b, meq, x, lam)
    return int(status), x, lam
