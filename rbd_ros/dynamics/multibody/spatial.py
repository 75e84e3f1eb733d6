"""Spatial algebra (Featherstone, *Rigid Body Dynamics Algorithms*, chapter 2).

Conventions used throughout the core:

* A motion vector is ``[omega; v]`` and a force vector is ``[n; f]`` (angular part first), as in
  Featherstone. Public functions that take or return a free-flyer velocity or a wrench use the
  ROS / Pinocchio order instead (linear part first); the kernels swap at the boundary.
* A Plücker transform ``X`` from frame A to frame B is stored as 12 numbers: the rotation ``E``
  (3x3, row-major; it maps A coordinates to B coordinates) followed by ``r``, the position of
  B's origin in A coordinates. As a 6x6 matrix, ``X = [[E, 0], [-E r^, E]]``.

The ``@njit`` helpers below work in place on preallocated rows so that the algorithms allocate
nothing per body.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .layout import LINEAR, MF_E, MF_I, MF_MASS, MF_MC, MF_R, MF_S

F64 = NDArray[np.float64]

JOINT_REVOLUTE = 0
JOINT_PRISMATIC = 1
JOINT_FREE = 2


# --------------------------------------------------------------------------- numpy (model build)


def rpy_matrix(rpy: F64 | Sequence[float]) -> F64:
    """Rotation matrix of URDF roll-pitch-yaw (fixed axes X, Y, Z): ``Rz(y) Ry(p) Rx(r)``."""
    r, p, y = (float(x) for x in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def skew(v: F64) -> F64:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def spatial_inertia(mass: float, com: F64, inertia_com: F64) -> F64:
    """6x6 spatial inertia about the frame origin of a body with ``mass`` at ``com`` whose
    rotational inertia about the centre of mass (frame axes) is ``inertia_com``."""
    cx = skew(np.asarray(com, dtype=float))
    out = np.zeros((6, 6))
    out[:3, :3] = inertia_com + mass * cx @ cx.T
    out[:3, 3:] = mass * cx
    out[3:, :3] = mass * cx.T
    out[3:, 3:] = mass * np.eye(3)
    return out


def rigid_body_problem(mass: float, inertia_com: F64) -> str | None:
    """Why no rigid body has ``mass`` and this rotational inertia about its centre of mass, or
    None: a positive mass, principal moments not negative and none above the sum of the
    others."""
    if not (np.isfinite(mass) and np.all(np.isfinite(inertia_com))):
        return "its mass and inertia must be finite numbers"
    if not mass > 0:
        return f"its mass is {mass:.4g} kg"
    moments = np.linalg.eigvalsh(inertia_com)
    tol = 1e-9 * max(float(moments[-1]), 1e-12)
    said = ", ".join(f"{m:.3g}" for m in moments)
    if moments[0] < -tol:
        return f"its inertia about the centre of mass has a negative principal moment ({said})"
    if moments[2] > moments[0] + moments[1] + tol:
        return f"its principal moments ({said}) break the triangle inequality"
    return None


def plucker(E: F64, r: F64) -> F64:
    """6x6 motion transform of rotation ``E`` and translation ``r`` (see module docstring)."""
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    X[3:, :3] = -E @ skew(r)
    return X


def inertia_in_parent(inertia: F64, E: F64, r: F64) -> F64:
    """Express a spatial inertia given in a child frame in the parent frame, where the child
    frame sits at ``r`` with axes ``E.T`` in the parent (``X^T I X``)."""
    X = plucker(E, r)
    out: F64 = X.T @ inertia @ X
    return out


# --------------------------------------------------------------------------- kernels
# Small vectors travel as tuples of floats: they live in registers, where array views would
# cost a reference count each. Arrays are read and written by index.
# A helper LLVM leaves as a call (numba compiles each function apart; the big ones are not
# inlined when linked) is inlined in numba's IR instead, inline="always": joint_transform,
# inertia_mul, the model's views and RNEA's passes made RNEA's compute 30 % slower as calls.


@njit(cache=True, inline="always")
def _axis_rotation(x, y, z, angle):
    """The rotation by ``angle`` about the unit axis (x, y, z), row-major (Rodrigues)."""
    c = np.cos(angle)
    s = np.sin(angle)
    k = 1.0 - c
    return (c + k * x * x, k * x * y - s * z, k * x * z + s * y,
            k * x * y + s * z, c + k * y * y, k * y * z - s * x,
            k * x * z - s * y, k * y * z + s * x, c + k * z * z)


@njit(cache=True, inline="always")
def _quaternion_rotation(qx, qy, qz, qw):
    """The rotation of the quaternion (x, y, z, w), normalised, row-major."""
    n = np.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    qx /= n
    qy /= n
    qz /= n
    qw /= n
    return (1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy - qz * qw), 2.0 * (qx * qz + qy * qw),
            2.0 * (qx * qy + qz * qw), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz - qx * qw),
            2.0 * (qx * qz - qy * qw), 2.0 * (qy * qz + qx * qw), 1.0 - 2.0 * (qx * qx + qy * qy))


@njit(cache=True, inline="always")
def joint_transform(jtype, mf, i, q, qi):
    """``X = X_J(q) X_T`` of body ``i`` as a 12-tuple (E row-major, then r), from ``mf[i]``'s
    ``E_T``, ``r_T`` and motion subspace ``S`` (see :mod:`.layout`)."""
    # rotation R (child axes in the joint frame) and translation t of the joint motion
    R00 = R11 = R22 = 1.0
    R01 = R02 = R10 = R12 = R20 = R21 = 0.0
    t0 = t1 = t2 = 0.0
    if jtype == JOINT_REVOLUTE:  # about the axis: S's angular part
        R00, R01, R02, R10, R11, R12, R20, R21, R22 = _axis_rotation(
            mf[i, MF_S], mf[i, MF_S + 1], mf[i, MF_S + 2], q[qi])
    elif jtype == JOINT_PRISMATIC:
        t0 = mf[i, MF_S + LINEAR] * q[qi]  # along the axis: S's linear part
        t1 = mf[i, MF_S + LINEAR + 1] * q[qi]
        t2 = mf[i, MF_S + LINEAR + 2] * q[qi]
    else:  # free flyer: position then unit quaternion (x, y, z, w)
        t0 = q[qi]
        t1 = q[qi + 1]
        t2 = q[qi + 2]
        R00, R01, R02, R10, R11, R12, R20, R21, R22 = _quaternion_rotation(
            q[qi + 3], q[qi + 4], q[qi + 5], q[qi + 6])
    # E = R^T E_T ;  r = r_T + E_T^T t
    T00, T01, T02 = mf[i, MF_E], mf[i, MF_E + 1], mf[i, MF_E + 2]
    T10, T11, T12 = mf[i, MF_E + 3], mf[i, MF_E + 4], mf[i, MF_E + 5]
    T20, T21, T22 = mf[i, MF_E + 6], mf[i, MF_E + 7], mf[i, MF_E + 8]
    return (
        R00 * T00 + R10 * T10 + R20 * T20,
        R00 * T01 + R10 * T11 + R20 * T21,
        R00 * T02 + R10 * T12 + R20 * T22,
        R01 * T00 + R11 * T10 + R21 * T20,
        R01 * T01 + R11 * T11 + R21 * T21,
        R01 * T02 + R11 * T12 + R21 * T22,
        R02 * T00 + R12 * T10 + R22 * T20,
        R02 * T01 + R12 * T11 + R22 * T21,
        R02 * T02 + R12 * T12 + R22 * T22,
        mf[i, MF_R] + T00 * t0 + T10 * t1 + T20 * t2,
        mf[i, MF_R + 1] + T01 * t0 + T11 * t1 + T21 * t2,
        mf[i, MF_R + 2] + T02 * t0 + T12 * t1 + T22 * t2,
    )


@njit(cache=True)
def load6(A, row, off):
    return (A[row, off], A[row, off + 1], A[row, off + 2], A[row, off + 3], A[row, off + 4],
            A[row, off + 5])


@njit(cache=True)
def load12(A, row, off):
    """A transform (E row-major, then r) stored at ``A[row, off:off+12]``."""
    return (A[row, off], A[row, off + 1], A[row, off + 2], A[row, off + 3], A[row, off + 4],
            A[row, off + 5], A[row, off + 6], A[row, off + 7], A[row, off + 8],
            A[row, off + 9], A[row, off + 10], A[row, off + 11])


@njit(cache=True)
def store(A, row, off, t):
    for k in range(len(t)):
        A[row, off + k] = t[k]


@njit(cache=True)
def add6(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5])


@njit(cache=True)
def scale6(s, a):
    return (s * a[0], s * a[1], s * a[2], s * a[3], s * a[4], s * a[5])


@njit(cache=True)
def dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True)
def xmotion(X, m):
    """X m: a parent's motion vector expressed in the child frame."""
    w0, w1, w2 = m[0], m[1], m[2]
    u0 = m[3] - (X[10] * w2 - X[11] * w1)
    u1 = m[4] - (X[11] * w0 - X[9] * w2)
    u2 = m[5] - (X[9] * w1 - X[10] * w0)
    return (X[0] * w0 + X[1] * w1 + X[2] * w2, X[3] * w0 + X[4] * w1 + X[5] * w2,
            X[6] * w0 + X[7] * w1 + X[8] * w2, X[0] * u0 + X[1] * u1 + X[2] * u2,
            X[3] * u0 + X[4] * u1 + X[5] * u2, X[6] * u0 + X[7] * u1 + X[8] * u2)


@njit(cache=True)
def xforce_up(X, f):
    """X^T f: a child's force vector expressed in the parent frame."""
    g0 = X[0] * f[3] + X[3] * f[4] + X[6] * f[5]
    g1 = X[1] * f[3] + X[4] * f[4] + X[7] * f[5]
    g2 = X[2] * f[3] + X[5] * f[4] + X[8] * f[5]
    return (X[0] * f[0] + X[3] * f[1] + X[6] * f[2] + X[10] * g2 - X[11] * g1,
            X[1] * f[0] + X[4] * f[1] + X[7] * f[2] + X[11] * g0 - X[9] * g2,
            X[2] * f[0] + X[5] * f[1] + X[8] * f[2] + X[9] * g1 - X[10] * g0, g0, g1, g2)


@njit(cache=True)
def crm(v, m):
    """v x m (motion cross product)."""
    return (v[1] * m[2] - v[2] * m[1], v[2] * m[0] - v[0] * m[2], v[0] * m[1] - v[1] * m[0],
            v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1],
            v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2],
            v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0])


@njit(cache=True)
def crf(v, f):
    """v x* f (force cross product)."""
    return (v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4],
            v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5],
            v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3],
            v[1] * f[5] - v[2] * f[4], v[2] * f[3] - v[0] * f[5], v[0] * f[4] - v[1] * f[3])


@njit(cache=True, inline="always")
def inertia_mul(mf, i, x):
    """I x for body i's spatial inertia, stored row-major at ``mf[i, MF_I:]``, by its
    structure ``[[Io, h^], [h^T, m 1]]`` (``h = m c``): ``[Io w + h x u; w x h + m u]`` for
    ``x = [w; u]``, a third of the full 6x6 product's work."""
    w0, w1, w2, u0, u1, u2 = x
    m = mf[i, MF_MASS]
    h0, h1, h2 = mf[i, MF_MC[0]], mf[i, MF_MC[1]], mf[i, MF_MC[2]]
    return (mf[i, MF_I] * w0 + mf[i, MF_I + 1] * w1 + mf[i, MF_I + 2] * w2 + h1 * u2 - h2 * u1,
            mf[i, MF_I + 6] * w0 + mf[i, MF_I + 7] * w1 + mf[i, MF_I + 8] * w2 + h2 * u0
            - h0 * u2,
            mf[i, MF_I + 12] * w0 + mf[i, MF_I + 13] * w1 + mf[i, MF_I + 14] * w2 + h0 * u1
            - h1 * u0,
            w1 * h2 - w2 * h1 + m * u0, w2 * h0 - w0 * h2 + m * u1, w0 * h1 - w1 * h0 + m * u2)


@njit(cache=True)
def inertia_mul_linear(mf, i, x):
    """I x for a motion ``x`` whose angular part is zero (only ``x[3:]`` is read)."""
    return (_row_linear(mf, i, MF_I, x), _row_linear(mf, i, MF_I + 6, x),
            _row_linear(mf, i, MF_I + 12, x), _row_linear(mf, i, MF_I + 18, x),
            _row_linear(mf, i, MF_I + 24, x), _row_linear(mf, i, MF_I + 30, x))


@njit(cache=True)
def _row_linear(mf, i, o, x):
    return mf[i, o + 3] * x[3] + mf[i, o + 4] * x[4] + mf[i, o + 5] * x[5]


@njit(cache=True)
def mat_mul6(A, x):
    """A x for a 6x6 array A."""
    return (A[0, 0] * x[0] + A[0, 1] * x[1] + A[0, 2] * x[2] + A[0, 3] * x[3] + A[0, 4] * x[4]
            + A[0, 5] * x[5],
            A[1, 0] * x[0] + A[1, 1] * x[1] + A[1, 2] * x[2] + A[1, 3] * x[3] + A[1, 4] * x[4]
            + A[1, 5] * x[5],
            A[2, 0] * x[0] + A[2, 1] * x[1] + A[2, 2] * x[2] + A[2, 3] * x[3] + A[2, 4] * x[4]
            + A[2, 5] * x[5],
            A[3, 0] * x[0] + A[3, 1] * x[1] + A[3, 2] * x[2] + A[3, 3] * x[3] + A[3, 4] * x[4]
            + A[3, 5] * x[5],
            A[4, 0] * x[0] + A[4, 1] * x[1] + A[4, 2] * x[2] + A[4, 3] * x[3] + A[4, 4] * x[4]
            + A[4, 5] * x[5],
            A[5, 0] * x[0] + A[5, 1] * x[1] + A[5, 2] * x[2] + A[5, 3] * x[3] + A[5, 4] * x[4]
            + A[5, 5] * x[5])


@njit(cache=True)
def congruence_add(X, Ia, T, out):
    """out += X^T Ia X: a symmetric inertia moved from a child frame into its parent's.

    Row r of ``T = Ia X`` is ``X^T`` applied to row r of ``Ia`` (Ia is symmetric), and row k of
    the (symmetric) result is ``X^T`` applied to column k of T: twelve force transforms."""
    for r in range(6):
        store(T, r, 0, xforce_up(X, load6(Ia, r, 0)))
    for k in range(6):
        g = xforce_up(X, (T[0, k], T[1, k], T[2, k], T[3, k], T[4, k], T[5, k]))
        for c in range(6):
            out[k, c] += g[c]


@njit(cache=True)
def inverse_cholesky(A, n, tol, Li):
    """``Li = L^-1`` (lower triangular) for the Cholesky factor ``L L^T`` of the symmetric
    positive definite leading n x n block of ``A``. False if a pivot is not above ``tol``
    (singular or indefinite)."""
    L = np.zeros((n, n))
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > tol:
            return False
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    Li[:n, :n] = 0.0
    for i in range(n):
        Li[i, i] = 1.0 / L[i, i]
        for j in range(i):
            s = 0.0
            for k in range(j, i):
                s -= L[i, k] * Li[k, j]
            Li[i, j] = s / L[i, i]
    return True


@njit(cache=True)
def spd_inverse(A, n, out, tol):
    """Inverse of the symmetric positive definite leading n x n block of ``A`` (Cholesky):
    ``L^-T L^-1``. Returns False if a pivot is not above ``tol`` (singular or indefinite)."""
    Li = np.empty((n, n))
    if not inverse_cholesky(A, n, tol, Li):
        return False
    for r in range(n):
        for c in range(n):
            s = 0.0
            for k in range(max(r, c), n):
                s += Li[k, r] * Li[k, c]
            out[r, c] = s
    return True


@njit(cache=True)
def free_axis(c):
    """Spatial index of free-flyer velocity ``c``: ``[v; w]`` maps into ``[w; v]``."""
    return c + 3 if c < 3 else c - 3
