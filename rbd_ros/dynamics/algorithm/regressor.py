"""The joint-torque regressor: ``tau = Y(q, v, a) pi``, linear in the bodies' inertial
parameters (the base of dynamic identification).

``pi`` holds ten parameters per body, in body order, each about the body's frame (the frame of
the joint that moves it, fixed links merged in), in Pinocchio's order (``PARAMETERS``): mass,
first moment ``m c``, rotational inertia about the frame origin ``[xx, xy, yy, xz, yz, zz]``.
Rows are the reduced coordinates of :func:`~rbd_ros.dynamics.rnea` (mimic joints onto their
sources; a free-flyer root's six rows are the base wrench). Friction and the rotor inertias'
``armature * a`` are not in ``Y``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..multibody.layout import INERTIA_SIZE, MF_I, MF_S, W_A, W_V, W_X
from ..multibody.model import F64, Data, Direct, Model, map_views
from ..multibody.spatial import JOINT_FREE, load6, load12, xforce_up
from .rnea import rnea_core

PARAMETERS = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


@njit(cache=True)
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True)
def body_block(vb, ab, B):
    """``B`` (6 x 10) with ``I a + v x* I v = B pi`` ([torque; force], body frame) for
    velocity ``vb`` and acceleration ``ab``. With ``v = [w; u]``, ``a = [dw; al]`` and
    ``ah = al + w x u``: the mass gives force ``ah``; the first moment ``h`` gives torque
    ``h x ah`` and force ``dw x h + w x (w x h)``; the rotational inertia gives torque
    ``Io dw + w x Io w``."""
    w, u = (vb[0], vb[1], vb[2]), (vb[3], vb[4], vb[5])
    dw = (ab[0], ab[1], ab[2])
    wu = _cross(w, u)
    ah = (ab[3] + wu[0], ab[4] + wu[1], ab[5] + wu[2])
    B[:, :] = 0.0
    for k in range(3):
        B[3 + k, 0] = ah[k]
        e = [0.0, 0.0, 0.0]
        e[k] = 1.0
        e3 = (e[0], e[1], e[2])
        t = _cross(e3, ah)
        f = _cross(dw, e3)
        g = _cross(w, _cross(w, e3))
        for r in range(3):
            B[r, 1 + k] = t[r]
            B[3 + r, 1 + k] = f[r] + g[r]
    # Io x for x = dw and x = w, as columns of [xx, xy, yy, xz, yz, zz]
    for c in range(6):
        ld = _io_column(c, dw)
        lw = _io_column(c, w)
        wl = _cross(w, lw)
        for r in range(3):
            B[r, 4 + c] = ld[r] + wl[r]


@njit(cache=True)
def _io_column(c, x):
    """Column ``c`` of the map from ``[xx, xy, yy, xz, yz, zz]`` to ``Io x``."""
    if c == 0:
        return (x[0], 0.0, 0.0)
    if c == 1:
        return (x[1], x[0], 0.0)
    if c == 2:
        return (0.0, x[1], 0.0)
    if c == 3:
        return (x[2], 0.0, x[0])
    if c == 4:
        return (0.0, x[2], x[1])
    return (0.0, 0.0, x[2])


@njit(cache=True)
def regressor_core(mi, mf, maps, lin, q, v, a, W, wv, tau, Y):
    """``Y`` (nv x 10 nb) at ``(q, v, a)``: RNEA's forward pass gives each body's velocity and
    acceleration; each body's block is carried up to the root through its ancestors' joints."""
    vsrc, vmul = map_views(maps, lin)[1], map_views(maps, lin)[9]
    rnea_core(mi, mf, maps, lin, q, v, a, np.zeros((0, 6)), False, W, wv, tau)
    Y[:, :] = 0.0
    B = np.empty((6, 10))
    for k in range(mi.shape[0]):
        body_block(load6(W, k, W_V), load6(W, k, W_A), B)
        j = k
        while True:
            vi = mi[j, 3]
            if mi[j, 1] == JOINT_FREE:  # rows [force; torque] of the base wrench
                for c in range(10):
                    for r in range(6):
                        Y[vsrc[vi + r], 10 * k + c] += B[r + 3 if r < 3 else r - 3, c]
            else:
                S = load6(mf, j, MF_S)
                row, mul = vsrc[vi], vmul[vi]
                for c in range(10):
                    Y[row, 10 * k + c] += mul * (S[0] * B[0, c] + S[1] * B[1, c]
                                                 + S[2] * B[2, c] + S[3] * B[3, c]
                                                 + S[4] * B[4, c] + S[5] * B[5, c])
            if mi[j, 0] < 0:
                break
            X = load12(W, j, W_X)
            for c in range(10):
                f = xforce_up(X, (B[0, c], B[1, c], B[2, c], B[3, c], B[4, c], B[5, c]))
                for r in range(6):
                    B[r, c] = f[r]
            j = mi[j, 0]


def regressor(model: Model, data: Data, q: F64, v: F64, a: F64) -> F64:
    """The joint-torque regressor ``Y`` (nv x 10 nb): ``rnea(q, v, a) = Y @ pi`` with ``pi``
    from :func:`inertial_parameters` (friction aside)."""
    q, v, a = model.check_state(q, v, a, "a")
    Y = np.empty((model.nv, 10 * model.nb))
    _REGRESSOR.call(model.mi, model.mf, model.maps, model.lin, q, v, a, data.W, data.wv,
                    np.empty(model.nv), Y)
    return Y


_REGRESSOR = Direct(regressor_core)


@njit(cache=True, parallel=True, nogil=True)
def regressor_many(mi, mf, maps, lin, Q, V, A, W0, wv0, out):
    B = Q.shape[0]
    nchunk = min(B, 64)
    for c in prange(nchunk):
        W, wv, tau = np.empty_like(W0), np.empty_like(wv0), np.empty(out.shape[1])
        for b in range(c * B // nchunk, (c + 1) * B // nchunk):
            regressor_core(mi, mf, maps, lin, Q[b], V[b], A[b], W, wv, tau, out[b])
    return out


def regressor_batch(model: Model, q: F64, v: F64, a: F64, out: F64 | None = None) -> F64:
    """Regressors of B states at once: ``q`` (B, nq), ``v`` and ``a`` (B, nv) -> (B, nv,
    10 nb), on all cores; ``out`` as in :func:`~rbd_ros.dynamics.rnea_batch`."""
    Q = model.check_batch(q, model.nq, "q")
    V = model.check_batch(v, model.nv, "v", Q.shape[0])
    A = model.check_batch(a, model.nv, "a", Q.shape[0])
    d = Data(model)
    Y = model.batch_out(out, (Q.shape[0], model.nv, 10 * model.nb))
    regressor_many(model.mi, model.mf, model.maps, model.lin, Q, V, A, d.W, d.wv, Y)
    return Y


def inertial_parameters(model: Model) -> F64:
    """The model's ten parameters per body (``PARAMETERS``), concatenated in body order."""
    out = np.empty((model.nb, 10))
    for i in range(model.nb):
        I6 = model.mf[i, MF_I : MF_I + INERTIA_SIZE].reshape(6, 6)
        Io = I6[:3, :3]
        out[i] = (I6[3, 3], I6[2, 4], I6[0, 5], I6[1, 3],
                  Io[0, 0], Io[0, 1], Io[1, 1], Io[0, 2], Io[1, 2], Io[2, 2])
    return out.reshape(-1)
