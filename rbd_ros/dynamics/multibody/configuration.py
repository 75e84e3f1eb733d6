"""Moving along a velocity in configuration space (free flyers live on SE(3))."""

from __future__ import annotations

import math

import numpy as np

from .model import F64, Model


def _quat_mul(a: F64, b: F64) -> F64:
    """Hamilton product of quaternions stored (x, y, z, w)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ])


def quat_matrix(quat: F64) -> F64:
    """Rotation matrix of a unit quaternion (x, y, z, w)."""
    x, y, z, w = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _se3_exp(v: F64, w: F64) -> tuple[F64, F64]:
    """(quaternion, translation) of the screw motion with body twist (v, w) for unit time."""
    th = float(np.linalg.norm(w))
    wx = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    if th < 1e-8:
        V = np.eye(3) + 0.5 * wx + wx @ wx / 6.0
        quat = np.r_[0.5 * w, 1.0]
    else:
        V = (np.eye(3) + (1 - np.cos(th)) / th**2 * wx
             + (th - np.sin(th)) / th**3 * wx @ wx)
        quat = np.r_[np.sin(th / 2) * w / th, np.cos(th / 2)]
    return quat / np.linalg.norm(quat), V @ v


def integrate(model: Model, q: F64, v: F64, dt: float = 1.0) -> F64:
    """Configuration reached from ``q`` moving at constant velocity ``v`` for ``dt``.

    A free flyer moves along the screw of its body twist (the SE(3) exponential, as
    Pinocchio's ``integrate``); every other coordinate adds ``v * dt``."""
    q = model.check_vector(q, model.nq, "q")
    v = model.check_vector(v, model.nv, "v")
    out = np.empty(model.nq)
    for j in model.joints:
        if j.idx_q < 0:
            continue  # a mimic joint follows its source
        iq, iv = j.idx_q, j.idx_v
        if j.kind == "floating":
            dquat, dp = _se3_exp(v[iv : iv + 3] * dt, v[iv + 3 : iv + 6] * dt)
            quat = q[iq + 3 : iq + 7]
            out[iq : iq + 3] = q[iq : iq + 3] + quat_matrix(quat) @ dp
            nq = _quat_mul(quat, dquat)
            out[iq + 3 : iq + 7] = nq / np.linalg.norm(nq)
        else:
            out[iq : iq + j.nq] = q[iq : iq + j.nq] + v[iv : iv + j.nv] * dt
    return out


def interpolate_base(x0: F64, x1: F64, s: float) -> F64:
    """A free flyer's ``[position; quaternion (x, y, z, w); twist]`` a fraction ``s`` of the
    way from ``x0`` to ``x1``: position and twist linearly, orientation along the shortest
    great arc (slerp)."""
    out = x0 + s * (x1 - x0)
    a, b = x0[3:7], x1[3:7]
    c = float(a @ b)
    if c < 0:  # q and -q are the same rotation: take the short way
        b, c = -b, -c
    th = math.acos(min(c, 1.0))
    if th < 1e-9:
        quat = a + s * (b - a)
    else:
        quat = (math.sin((1 - s) * th) * a + math.sin(s * th) * b) / math.sin(th)
    out[3:7] = quat / np.linalg.norm(quat)
    return out
