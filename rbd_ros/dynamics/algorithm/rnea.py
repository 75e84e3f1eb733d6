"""Inverse dynamics: the Recursive Newton-Euler Algorithm (Featherstone, Table 5.1)."""

from __future__ import annotations

import numpy as np
from numba import cfunc, njit, prange
from numba.np.numpy_support import carray

from ..multibody import _entry
from ..multibody.entry import KERNEL, OK, arrays, register, state
from ..multibody.layout import (
    LINEAR,
    MF_ARMATURE,
    MF_COULOMB,
    MF_DAMPING,
    MF_S,
    W_A,
    W_F,
    W_V,
    W_X,
)
from ..multibody.model import F64, NO_FEXT, Data, Model, map_views, work_vectors
from ..multibody.spatial import (
    JOINT_FREE,
    add6,
    crf,
    crm,
    dot6,
    inertia_mul,
    inertia_mul_linear,
    joint_transform,
    load6,
    load12,
    scale6,
    store,
    xforce_up,
    xmotion,
)


@njit(cache=True, inline="always")
def expand(qsrc, vsrc, qmul, qoff, vmul, q, v, qf, vf):
    """Full (mimic-included) positions and velocities from reduced ones."""
    for k in range(qsrc.shape[0]):
        qf[k] = qmul[k] * q[qsrc[k]] + qoff[k]
    for k in range(vsrc.shape[0]):
        vf[k] = vmul[k] * v[vsrc[k]]


#: rad/s (m/s): every algorithm takes a joint's Coulomb friction as ``Coulomb tanh(v /
#: SLIDING_SPEED)``: 76 % of it at this speed, 99 % from 2.5 times it. A real joint slower than
#: that may stick, its friction anywhere within +-Coulomb, and the sign of a measured velocity
#: that is noise about zero would flip the whole Coulomb torque from state to state (on a real
#: UR10e's motor currents ``sign(v)`` raised the observer's residual peaks of free motion up to
#: 1.6 times, and identify's held-out errors by 4-18 %)
SLIDING_SPEED = 0.02


@njit(cache=True)
def friction_torque(mf, qd, i):
    """Viscous plus Coulomb joint friction of 1-DOF body ``i`` at velocity ``qd``, the Coulomb
    part through ``tanh(qd / SLIDING_SPEED)``."""
    return mf[i, MF_DAMPING] * qd + mf[i, MF_COULOMB] * np.tanh(qd / SLIDING_SPEED)


def friction_slope(model: Model, v: F64) -> F64:
    """d/dv of the reduced joint friction torques at reduced velocities ``v`` (the matrix is
    diagonal: its diagonal): viscous plus Coulomb's ``tanh`` slope, steepest at rest (Coulomb /
    SLIDING_SPEED), each mimic joint's through its multiplier squared."""
    _, vsrc, _, _, _, _, _, _, _, vmul = map_views(model.maps, model.lin)
    bodies = np.flatnonzero(model.mi[:, 1] != JOINT_FREE)
    k = model.mi[bodies, 3]
    t = np.tanh(vmul[k] * v[vsrc[k]] / SLIDING_SPEED)
    slope = model.mf[bodies, MF_DAMPING] + model.mf[bodies, MF_COULOMB] * (1.0 - t * t) \
        / SLIDING_SPEED
    out = np.zeros(model.nv)
    np.add.at(out, vsrc[k], vmul[k] ** 2 * slope)
    return out


@njit(cache=True)
def joint_motion(jt, mf, i, x, vi):
    """S x for body i's joint: the spatial motion of joint rates ``x[vi:]``."""
    if jt == JOINT_FREE:  # [v; w] -> [w; v]
        return (x[vi + 3], x[vi + 4], x[vi + 5], x[vi], x[vi + 1], x[vi + 2])
    return scale6(x[vi], load6(mf, i, MF_S))


@njit(cache=True)
def rnea_core(mi, mf, maps, lin, q, v, a, fext, fric, W, wv, tau):
    """RNEA (Table 5.1) for reduced q, v, a; reduced torques into ``tau``.

    ``fext`` is empty or (nb, 6) ``[force; torque]`` per body in the body frame."""
    qsrc, vsrc, vfull, mimic_rows, mimic_bodies, all_bodies, grav, qmul, qoff, vmul = \
        map_views(maps, lin)
    qf, vf, af, tf, x, y, rhs = work_vectors(maps, wv)
    expand(qsrc, vsrc, qmul, qoff, vmul, q, v, qf, vf)
    for k in range(vsrc.shape[0]):
        af[k] = vmul[k] * a[vsrc[k]]
    nb = mi.shape[0]
    a0 = (0.0, 0.0, 0.0, -grav[0], -grav[1], -grav[2])
    has_fext = fext.shape[0] > 0
    for i in range(nb):
        p = mi[i, 0]
        jt = mi[i, 1]
        vi = mi[i, 3]
        X = joint_transform(jt, mf, i, qf, mi[i, 2])
        store(W, i, W_X, X)
        vJ = joint_motion(jt, mf, i, vf, vi)
        aJ = joint_motion(jt, mf, i, af, vi)
        if p < 0:
            vb = vJ
            ab = add6(xmotion(X, a0), aJ)
        else:
            vb = add6(xmotion(X, load6(W, p, W_V)), vJ)
            ab = add6(add6(xmotion(X, load6(W, p, W_A)), aJ), crm(vb, vJ))
        # f = I a + v x* I v - f_ext
        fb = add6(inertia_mul(mf, i, ab), crf(vb, inertia_mul(mf, i, vb)))
        if has_fext:
            fb = add6(fb, (-fext[i, 3], -fext[i, 4], -fext[i, 5], -fext[i, 0], -fext[i, 1],
                           -fext[i, 2]))
        store(W, i, W_V, vb)
        store(W, i, W_A, ab)
        store(W, i, W_F, fb)
    backward(mi, mf, W, vf, af, fric, tf, vsrc, vmul, tau)


@njit(cache=True, inline="always")
def backward(mi, mf, W, vf, af, fric, tf, vsrc, vmul, out):
    """RNEA's backward pass: joint forces from the body forces in ``W`` (summed into the
    parents on the way), with each joint's armature times its acceleration ``af`` (None: not)
    and friction (``fric``), into ``tf`` (full coordinates), then reduced (mimic joints onto
    their sources) into ``out``."""
    for i in range(mi.shape[0] - 1, -1, -1):
        vi = mi[i, 3]
        fb = load6(W, i, W_F)
        if mi[i, 1] == JOINT_FREE:
            tf[vi], tf[vi + 1], tf[vi + 2] = fb[3], fb[4], fb[5]
            tf[vi + 3], tf[vi + 4], tf[vi + 5] = fb[0], fb[1], fb[2]
        else:
            s = dot6(load6(mf, i, MF_S), fb)
            if fric:
                s += friction_torque(mf, vf[vi], i)
            if af is not None:
                s += mf[i, MF_ARMATURE] * af[vi]
            tf[vi] = s
        p = mi[i, 0]
        if p >= 0:
            store(W, p, W_F, add6(load6(W, p, W_F), xforce_up(load12(W, i, W_X), fb)))
    out[:] = 0.0
    for k in range(vsrc.shape[0]):
        out[vsrc[k]] += vmul[k] * tf[k]


@njit(cache=True)
def fext_torques(mi, mf, maps, lin, W, wv, fext, out):
    """What wrenches ``fext`` ((nb, 6) ``[force; torque]`` per body, body frame) change in
    RNEA's torques, into ``out`` (reduced): RNEA is affine in them, so this is its backward
    pass alone on ``-fext``, with the joint transforms the last RNEA at this ``q`` left in
    ``W`` (which it overwrites: ``W_F``)."""
    qsrc, vsrc, vfull, mimic_rows, mimic_bodies, all_bodies, grav, qmul, qoff, vmul = \
        map_views(maps, lin)
    qf, vf, af, tf, x, y, rhs = work_vectors(maps, wv)
    for i in range(mi.shape[0]):
        store(W, i, W_F, (-fext[i, 3], -fext[i, 4], -fext[i, 5], -fext[i, 0], -fext[i, 1],
                          -fext[i, 2]))
    backward(mi, mf, W, vf, None, False, tf, vsrc, vmul, out)


@njit(cache=True)
def gravity_again(mi, mf, maps, lin, W, wv, g):
    """Gravity torques g(q) into ``g``, on the joint transforms a call of :func:`rnea_core`
    left in ``W`` (at rest only gravity's acceleration propagates: no new sines and cosines)."""
    qsrc, vsrc, vfull, mimic_rows, mimic_bodies, all_bodies, grav, qmul, qoff, vmul = \
        map_views(maps, lin)
    qf, vf, af, tf, x, y, rhs = work_vectors(maps, wv)
    for i in range(mi.shape[0]):
        # at rest every body's acceleration is gravity's, a pure translation (0; u): it only
        # turns with each joint (u = E u_parent), and I (0; u) takes I's last three columns
        p = mi[i, 0]
        if p < 0:
            u0, u1, u2 = -grav[0], -grav[1], -grav[2]
        else:
            u0, u1, u2 = W[p, W_A + LINEAR], W[p, W_A + LINEAR + 1], W[p, W_A + LINEAR + 2]
        E = load12(W, i, W_X)  # E: its first nine entries
        ab = (0.0, 0.0, 0.0, E[0] * u0 + E[1] * u1 + E[2] * u2, E[3] * u0 + E[4] * u1 + E[5] * u2,
              E[6] * u0 + E[7] * u1 + E[8] * u2)
        store(W, i, W_A, ab)
        store(W, i, W_F, inertia_mul_linear(mf, i, ab))
    backward(mi, mf, W, vf, None, False, tf, vsrc, vmul, g)


@njit(cache=True, parallel=True, nogil=True)
def rnea_many(mi, mf, maps, lin, Q, V, A, fric, W0, wv0, tau, g):
    """RNEA for each state; with ``g`` (B, nv) rather than (0, nv), gravity torques too."""
    B = Q.shape[0]
    nchunk = min(B, 64)
    fext = np.zeros((0, 6))
    for c in prange(nchunk):
        W, wv = np.empty_like(W0), np.empty_like(wv0)
        for b in range(c * B // nchunk, (c + 1) * B // nchunk):
            rnea_core(mi, mf, maps, lin, Q[b], V[b], A[b], fext, fric, W, wv, tau[b])
            if g.shape[0]:
                gravity_again(mi, mf, maps, lin, W, wv, g[b])
    return tau


@cfunc(KERNEL, cache=True)
def _rnea(mi, mf, maps, lin, q, v, a, fext, nfext, fric, W, M6, wv, out, nb, nmaps, nlin, nwv):
    """rnea_core for :func:`rnea`, called by ``_entry.c`` (see :mod:`.entry`)."""
    mi, mf, maps, lin, W, M6, wv = arrays(mi, mf, maps, lin, W, M6, wv, nb, nmaps, nlin, nwv)
    q, v, a, fext = state(maps, q, v, a, fext, nfext)
    rnea_core(mi, mf, maps, lin, q, v, a, fext, fric != 0, W, wv, carray(out, v.shape))
    return OK


register("rnea", _rnea)


def rnea(
    model: Model,
    data: Data,
    q: F64,
    v: F64,
    a: F64,
    f_ext: F64 | None = None,
    friction: bool = False,
) -> F64:
    """Joint torques that produce accelerations ``a`` at state ``(q, v)``.

    ``f_ext``: optional (nb, 6) external wrenches ``[force; torque]`` acting on each body,
    expressed in the body frame. ``friction``: add the URDF's joint friction, ``damping v +
    friction tanh(v / 0.02)`` (``SLIDING_SPEED``) at each joint. With a free-flyer root,
    ``tau[:6]`` is the wrench ``[force; torque]`` (base frame) that the base needs: the reaction
    the environment must supply."""
    fext = NO_FEXT if f_ext is None else model.check_fext(f_ext)
    tau = _entry.rnea(data.entry, model, q, v, a, fext, friction)
    return data.again(_entry.rnea, model, q, v, a, fext, friction) if tau is None else tau


def gravity(model: Model, data: Data, q: F64) -> F64:
    """Generalized gravity torques ``g(q)`` (RNEA with zero velocity and acceleration)."""
    z = np.zeros(model.nv)
    return rnea(model, data, q, z, z)


def nonlinear_effects(model: Model, data: Data, q: F64, v: F64) -> F64:
    """Coriolis, centrifugal and gravity torques ``C(q, v) v + g(q)``."""
    return rnea(model, data, q, v, np.zeros(model.nv))


def rnea_batch(model: Model, q: F64, v: F64, a: F64, friction: bool = False,
               out: F64 | None = None, gravity_out: F64 | None = None) -> F64:
    """RNEA for B states at once: ``q`` (B, nq), ``v`` and ``a`` (B, nv) -> (B, nv).

    Runs compiled over all cores; no ``Data`` needed (each worker has its own). ``out``: an
    array to write into, reused across calls to avoid allocating (and page-faulting) big
    results on every chunk. ``gravity_out``: a (B, nv) array that also receives the gravity
    torques g(q) of each state, computed on the same joint transforms (cheaper than a second
    call at rest)."""
    Q = model.check_batch(q, model.nq, "q")
    V = model.check_batch(v, model.nv, "v", Q.shape[0])
    A = model.check_batch(a, model.nv, "a", Q.shape[0])
    d = Data(model)
    shape = (Q.shape[0], model.nv)
    g = np.empty((0, model.nv)) if gravity_out is None else model.batch_out(gravity_out, shape)
    return rnea_many(model.mi, model.mf, model.maps, model.lin, Q, V, A, friction, d.W, d.wv,
                     model.batch_out(out, shape), g)
