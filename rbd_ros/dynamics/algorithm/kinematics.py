"""Where the bodies are: world placements and the centre of mass."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import ModelError
from ..multibody.layout import MF_MASS, MF_MC, W_X
from ..multibody.model import F64, Data, Model, map_views, work_vectors
from ..multibody.spatial import joint_transform, load12, store


@njit(cache=True)
def placements_kernel(mi, mf, maps, lin, q, W, wv, out):
    """out[i] = (R row-major, p): body i's axes and origin in the world (the root's parent)."""
    qsrc, vsrc, vfull, mimic_rows, mimic_bodies, all_bodies, grav, qmul, qoff, vmul = \
        map_views(maps, lin)
    qf = work_vectors(maps, wv)[0]
    for k in range(qsrc.shape[0]):
        qf[k] = qmul[k] * q[qsrc[k]] + qoff[k]
    for i in range(mi.shape[0]):
        store(W, i, W_X, joint_transform(mi[i, 1], mf, i, qf, mi[i, 2]))
    world_placements(mi, W, out)


@njit(cache=True)
def world_placements(mi, W, out):
    """:func:`placements_kernel`'s second half: the world placements from the joint transforms
    already in ``W`` (``W_X``, as RNEA and ABA leave them for their ``q``)."""
    for i in range(mi.shape[0]):
        X = load12(W, i, W_X)
        p = mi[i, 0]
        for r in range(3):
            for c in range(3):
                # R_i = R_p E_i^T
                s = 0.0
                for k in range(3):
                    Rp = (1.0 if r == k else 0.0) if p < 0 else out[p, 3 * r + k]
                    s += Rp * X[3 * c + k]
                out[i, 3 * r + c] = s
            # p_i = p_p + R_p r_i
            s = 0.0 if p < 0 else out[p, 9 + r]
            for k in range(3):
                Rp = (1.0 if r == k else 0.0) if p < 0 else out[p, 3 * r + k]
                s += Rp * X[9 + k]
            out[i, 9 + r] = s


def placements(model: Model, data: Data, q: F64) -> F64:
    """(nb, 12): each body's rotation (row-major) and origin in the world frame."""
    q = model.check_vector(q, model.nq, "q")
    out = np.empty((model.nb, 12))
    placements_kernel(model.mi, model.mf, model.maps, model.lin, q, data.W, data.wv, out)
    return out


@njit(cache=True)
def com_kernel(mf, X):
    total = 0.0
    out = np.zeros(3)
    for i in range(X.shape[0]):
        m = mf[i, MF_MASS]
        if m <= 0.0:
            continue
        mc = (mf[i, MF_MC[0]], mf[i, MF_MC[1]], mf[i, MF_MC[2]])
        for r in range(3):
            out[r] += m * X[i, 9 + r] + X[i, 3 * r] * mc[0] + X[i, 3 * r + 1] * mc[1] \
                + X[i, 3 * r + 2] * mc[2]
        total += m
    return out / total


def center_of_mass(model: Model, body_placements: F64) -> F64:
    """Centre of mass of the moving bodies in the world frame."""
    return np.asarray(com_kernel(model.mf, body_placements), dtype=np.float64)


def link_placement(model: Model, body_placements: F64, link: str) -> tuple[F64, F64]:
    """(axes, origin) of a URDF link in the world frame, from its body's placement
    (:func:`placements`)."""
    frame = model.frames.get(link)
    if frame is None:
        raise ModelError(f"'{link}' is not a link of model '{model.name}'; links: "
                         f"{sorted(model.frames)}")
    R = body_placements[frame.body, :9].reshape(3, 3)
    return R @ frame.rotation, body_placements[frame.body, 9:] + R @ frame.translation
