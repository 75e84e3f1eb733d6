"""Forward dynamics: the Articulated-Body Algorithm (Featherstone, Table 7.1), O(n) on trees.

The mass matrix is never formed: pass 1 goes out from the root (velocities, bias terms), pass
2 back in (articulated inertias IA, U, D, u), pass 3 out again (accelerations). A free joint's
S is a permutation, so its U and D are picked from IA. Mimic joints are exact constraints
``qdd_m = k * qdd_src`` (:mod:`.aba_mimic`): a gripper's fingers are folded into the sweeps as
one coordinate, any other mimic joint is corrected after pass 3.
"""

from __future__ import annotations

import numpy as np
from numba import cfunc, njit, prange
from numba.np.numpy_support import carray

from ..errors import ModelError
from ..multibody import _entry
from ..multibody.configuration import integrate
from ..multibody.entry import KERNEL, arrays, register, state
from ..multibody.layout import MF_ARMATURE, MF_S, W_A, W_C, W_F, W_U, W_V, W_X
from ..multibody.model import F64, NO_FEXT, Data, Model, group_view, map_views, work_vectors
from ..multibody.spatial import (
    JOINT_FREE,
    add6,
    congruence_add,
    crf,
    crm,
    dot6,
    inertia_mul,
    joint_transform,
    load6,
    load12,
    mat_mul6,
    scale6,
    store,
    xforce_up,
    xmotion,
)
from .aba_mimic import (
    group_accel,
    group_fold,
    group_member_accel,
    group_start,
    group_up,
    mimic_correction,
)
from .articulated import (
    D_MIN,
    external_force,
    free_joint_factors,
    joint_accel,
    load_inertia,
)
from .crba import crba
from .rnea import expand, friction_slope, friction_torque, joint_motion


@njit(cache=True, inline="always")
def _velocities(mi, mf, W, M6, qf, vf, tf, fext, fric, grp):
    """Pass 1: velocities, bias accelerations c, bias forces pA; True if a mimic group
    starts."""
    nb = mi.shape[0]
    grouped = False
    has_fext = fext.shape[0] > 0
    for i in range(nb):
        p = mi[i, 0]
        jt = mi[i, 1]
        vi = mi[i, 3]
        X = joint_transform(jt, mf, i, qf, mi[i, 2])
        store(W, i, W_X, X)
        vJ = joint_motion(jt, mf, i, vf, vi)
        if jt != JOINT_FREE and fric:
            tf[vi] -= friction_torque(mf, vf[vi], i)
        vb = vJ if p < 0 else add6(xmotion(X, load6(W, p, W_V)), vJ)
        store(W, i, W_V, vb)
        store(W, i, W_C, crm(vb, vJ))
        load_inertia(mf, i, M6[i, 0])  # IA starts as the body's own inertia
        pA = crf(vb, inertia_mul(mf, i, vb))
        if has_fext:
            pA = add6(pA, external_force(fext, i))
        store(W, i, W_F, pA)
        if grp[i] != -1:
            grouped = True
            group_start(W, i)
    return grouped


@njit(cache=True, inline="always")
def _inertias(mi, mf, W, M6, tf, grp, vmul):
    """Pass 2: articulated inertias IA, U = IA S, D^-1 = (S^T U + the joint's armature)^-1,
    u = tau - S^T pA; -1, or the body whose joint sees a singular articulated inertia."""
    nb = mi.shape[0]
    Ia, T, Dt = M6[nb, 1], M6[nb, 2], M6[nb, 3]
    for i in range(nb - 1, -1, -1):
        if grp[i] >= 0:
            group_up(mi, mf, grp, vmul, tf, W, M6, T, i)
            continue
        if grp[i] == -2 and not group_fold(W, M6, i):
            for b in range(i + 1, nb):
                if grp[b] == i:
                    return b
        p = mi[i, 0]
        vi = mi[i, 3]
        IA = M6[i, 0]
        pA = load6(W, i, W_F)
        if mi[i, 1] != JOINT_FREE:
            S = load6(mf, i, MF_S)
            U = mat_mul6(IA, S)
            D = dot6(S, U) + mf[i, MF_ARMATURE]
            if not D > D_MIN:
                return i
            for k in range(6):
                M6[i, 1, 0, k] = U[k]
            M6[i, 2, 0, 0] = 1.0 / D
            u = tf[vi] - dot6(S, pA)
            W[i, W_U] = u
            if p >= 0:
                # Ia = IA - U U^T / D ;  pa = pA + Ia c + U u / D
                for r in range(6):
                    for c in range(6):
                        Ia[r, c] = IA[r, c] - U[r] * U[c] / D
                pa = add6(add6(pA, mat_mul6(Ia, load6(W, i, W_C))), scale6(u / D, U))
                X = load12(W, i, W_X)
                congruence_add(X, Ia, T, M6[p, 0])
                store(W, p, W_F, add6(load6(W, p, W_F), xforce_up(X, pa)))
        elif not free_joint_factors(IA, M6[i, 1], M6[i, 2], Dt, W, i, p, tf, vi, pA):
            return i
    return -1


@njit(cache=True, inline="always")
def _accelerations(mi, mf, W, M6, qdd, grp, vmul, grav):
    """Pass 3: accelerations, from the root (gravity as its acceleration) out."""
    a0 = (0.0, 0.0, 0.0, -grav[0], -grav[1], -grav[2])
    for i in range(mi.shape[0]):
        p = mi[i, 0]
        ab = add6(xmotion(load12(W, i, W_X), a0 if p < 0 else load6(W, p, W_A)), load6(W, i, W_C))
        if grp[i] >= 0:
            group_member_accel(mf, grp, vmul, W, qdd, i, mi[i, 3], ab)
            continue
        store(W, i, W_A, joint_accel(mi[i, 1], mf, i, M6, W, W_U, ab, qdd, mi[i, 3]))
        if grp[i] == -2:
            group_accel(W, i)


@njit(cache=True)
def aba_core(mi, mf, maps, lin, q, v, tau, fext, fric, W, M6, wv):
    """ABA (Table 7.1) for reduced q, v, tau; full accelerations out in ``af`` of
    :func:`work_vectors`. Returns -1, or the body whose joint sees a singular articulated
    inertia. ``M6[i]`` keeps IA, U^T and D^-1 of body i (:mod:`.articulated`)."""
    qsrc, vsrc, vfull, mimic_rows, mimic_bodies, all_bodies, grav, qmul, qoff, vmul = \
        map_views(maps, lin)
    qf, vf, qdd, tf, x, y, rhs = work_vectors(maps, wv)
    grp = group_view(maps)
    expand(qsrc, vsrc, qmul, qoff, vmul, q, v, qf, vf)
    # applied torques in full coordinates: independent joints get tau, mimic joints nothing
    tf[:] = 0.0
    for r in range(vfull.shape[0]):
        tf[vfull[r]] = tau[r]
    grouped = _velocities(mi, mf, W, M6, qf, vf, tf, fext, fric, grp)
    status = _inertias(mi, mf, W, M6, tf, grp, vmul)
    if status >= 0:
        return status
    _accelerations(mi, mf, W, M6, qdd, grp, vmul, grav)
    if mimic_rows.shape[0] > 0 and not grouped:
        mimic_correction(mi, mf, vsrc, vmul, vfull, mimic_rows, mimic_bodies, all_bodies, W, M6,
                         qdd, x, y, rhs)
    return -1


@njit(cache=True, parallel=True, nogil=True)
def aba_many(mi, mf, maps, lin, Q, V, T, fric, W0, M60, wv0, out):
    vfull = map_views(maps, lin)[2]
    B = Q.shape[0]
    errs = np.full(B, -1)
    nchunk = min(B, 64)
    fext = np.zeros((0, 6))
    for c in prange(nchunk):
        W, M6, wv = np.empty_like(W0), np.empty_like(M60), np.empty_like(wv0)
        qdd = work_vectors(maps, wv)[2]
        for b in range(c * B // nchunk, (c + 1) * B // nchunk):
            errs[b] = aba_core(mi, mf, maps, lin, Q[b], V[b], T[b], fext, fric, W, M6, wv)
            for r in range(vfull.shape[0]):
                out[b, r] = qdd[vfull[r]]
    return out, errs


@cfunc(KERNEL, cache=True)
def _aba(mi, mf, maps, lin, q, v, tau, fext, nfext, fric, W, M6, wv, out, nb, nmaps, nlin, nwv):
    """aba_core for :func:`aba`, called by ``_entry.c`` (see :mod:`.entry`): its status, and
    the accelerations of the joints that are not mimics."""
    mi, mf, maps, lin, W, M6, wv = arrays(mi, mf, maps, lin, W, M6, wv, nb, nmaps, nlin, nwv)
    q, v, tau, fext = state(maps, q, v, tau, fext, nfext)
    status = aba_core(mi, mf, maps, lin, q, v, tau, fext, fric != 0, W, M6, wv)
    vfull, qdd, qdd_out = map_views(maps, lin)[2], work_vectors(maps, wv)[2], carray(out, v.shape)
    for r in range(vfull.shape[0]):
        qdd_out[r] = qdd[vfull[r]]
    return status


register("aba", _aba)


def _singular(model: Model, body: int, *inputs: F64) -> ModelError:
    if not all(np.all(np.isfinite(x)) for x in inputs):
        return ModelError("q, v or tau contains NaN or inf: forward dynamics needs a finite "
                          "state and finite torques")
    name = model.body_joints[body]
    return ModelError(
        f"joint '{name}' drives a subtree with no inertia about its axis in model "
        f"'{model.name}' (articulated inertia D <= {D_MIN:g}): its acceleration is undefined. "
        "Give the links it moves a mass and an <inertial>, or make the joint fixed."
    )


def aba(
    model: Model,
    data: Data,
    q: F64,
    v: F64,
    tau: F64,
    f_ext: F64 | None = None,
    friction: bool = False,
) -> F64:
    """Joint accelerations produced by torques ``tau`` at state ``(q, v)``.

    ``f_ext`` as in :func:`rnea`. ``friction``: subtract the URDF's joint friction (as in
    :func:`rnea`) from the applied torque. With a free-flyer root, ``tau[:6]`` is a wrench
    applied to the base (zero for an unactuated base) and the result's first six entries are the
    base's acceleration ``[linear; angular]`` in the base frame (Pinocchio's convention)."""
    fext = NO_FEXT if f_ext is None else model.check_fext(f_ext)
    qdd = _entry.aba(data.entry, model, q, v, tau, fext, friction)
    if qdd is None:
        qdd = data.again(_entry.aba, model, q, v, tau, fext, friction)
        if qdd is None:
            raise _singular(model, data.entry.status, q, v, tau)
    return qdd


def aba_batch(model: Model, q: F64, v: F64, tau: F64, friction: bool = False,
              out: F64 | None = None) -> F64:
    """ABA for B states at once: ``q`` (B, nq), ``v`` and ``tau`` (B, nv) -> (B, nv);
    ``out`` as in :func:`rnea_batch`."""
    Q = model.check_batch(q, model.nq, "q")
    V = model.check_batch(v, model.nv, "v", Q.shape[0])
    T = model.check_batch(tau, model.nv, "tau", Q.shape[0])
    d = Data(model)
    out, errs = aba_many(model.mi, model.mf, model.maps, model.lin, Q, V, T, friction, d.W, d.M6,
                         d.wv, model.batch_out(out, (Q.shape[0], model.nv)))
    bad = np.flatnonzero(errs >= 0)
    if bad.size:
        b = int(bad[0])
        raise _singular(model, int(errs[b]), Q[b], V[b], T[b])
    return out


def euler_step(model: Model, data: Data, q: F64, v: F64, tau: F64, dt: float,
               f_ext: F64 | None = None) -> tuple[F64, F64]:
    """The state ``dt`` after ``(q, v)`` under torques ``tau`` (and ``f_ext``), with the URDF's
    joint friction: one semi-implicit Euler step (the new velocity, then the positions with
    it), the friction taken at the new velocity to first order, ``(M + dt D) a = M aba(...)``
    with ``D`` its slope. Coulomb's slope at rest (friction / SLIDING_SPEED) is steep: taken
    explicitly, a light joint's velocity would flip sign every step (on the bundled arm's
    wrist at 1 kHz, +-0.03 rad/s at rest); taken so, it settles."""
    a = aba(model, data, q, v, tau, f_ext, friction=True)
    slope = friction_slope(model, v)
    if slope.any():
        M = crba(model, data, q)
        a = np.linalg.solve(M + dt * np.diag(slope), M @ a).astype(np.float64, copy=False)
    v = v + dt * a
    return integrate(model, q, v, dt), v
