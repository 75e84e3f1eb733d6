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

import numpy as np
from numba import njit
from numpy.typing import NDArray

F64 = NDArray[np.float64]

JOINT_REVOLUTE = 0
JOINT_PRISMATIC = 1
JOINT_FREE = 2


# --------------------------------------------------------------------------- numpy (model build)


def rpy_matrix(rpy: F64 | list[float]) -> F64:
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


@njit(cache=True)
def joint_transform(jtype: int, mf_row: F64, q: F64, qi: int, X: F64) -> None:
    """``X = X_J(q) X_T`` for one joint, written into the 12-number row ``X``.

    ``mf_row`` holds ``E_T`` (0:9), ``r_T`` (9:12) and the motion subspace ``S`` (12:18)."""
    # rotation E_J^T (child axes in the joint frame) and translation r_J of the joint motion
    R00 = 1.0
    R01 = 0.0
    R02 = 0.0
    R10 = 0.0
    R11 = 1.0
    R12 = 0.0
    R20 = 0.0
    R21 = 0.0
    R22 = 1.0
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    if jtype == JOINT_REVOLUTE:
        x = mf_row[12]
        y = mf_row[13]
        z = mf_row[14]
        c = np.cos(q[qi])
        s = np.sin(q[qi])
        k = 1.0 - c
        R00 = c + k * x * x
        R01 = k * x * y - s * z
        R02 = k * x * z + s * y
        R10 = k * x * y + s * z
        R11 = c + k * y * y
        R12 = k * y * z - s * x
        R20 = k * x * z - s * y
        R21 = k * y * z + s * x
        R22 = c + k * z * z
    elif jtype == JOINT_PRISMATIC:
        t0 = mf_row[15] * q[qi]
        t1 = mf_row[16] * q[qi]
        t2 = mf_row[17] * q[qi]
    else:  # free flyer: position then unit quaternion (x, y, z, w)
        t0 = q[qi]
        t1 = q[qi + 1]
        t2 = q[qi + 2]
        qx = q[qi + 3]
        qy = q[qi + 4]
        qz = q[qi + 5]
        qw = q[qi + 6]
        n = np.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
        qx /= n
        qy /= n
        qz /= n
        qw /= n
        R00 = 1.0 - 2.0 * (qy * qy + qz * qz)
        R01 = 2.0 * (qx * qy - qz * qw)
        R02 = 2.0 * (qx * qz + qy * qw)
        R10 = 2.0 * (qx * qy + qz * qw)
        R11 = 1.0 - 2.0 * (qx * qx + qz * qz)
        R12 = 2.0 * (qy * qz - qx * qw)
        R20 = 2.0 * (qx * qz - qy * qw)
        R21 = 2.0 * (qy * qz + qx * qw)
        R22 = 1.0 - 2.0 * (qx * qx + qy * qy)
    # E = R^T E_T ;  r = r_T + E_T^T t
    for j in range(3):
        e0 = mf_row[j]
        e1 = mf_row[3 + j]
        e2 = mf_row[6 + j]
        X[j] = R00 * e0 + R10 * e1 + R20 * e2
        X[3 + j] = R01 * e0 + R11 * e1 + R21 * e2
        X[6 + j] = R02 * e0 + R12 * e1 + R22 * e2
        X[9 + j] = mf_row[9 + j] + e0 * t0 + e1 * t1 + e2 * t2


@njit(cache=True)
def xform_motion(X: F64, m: F64, out: F64) -> None:
    """out = X m (parent motion expressed in the child frame)."""
    w0 = m[0]
    w1 = m[1]
    w2 = m[2]
    u0 = m[3] - (X[10] * w2 - X[11] * w1)
    u1 = m[4] - (X[11] * w0 - X[9] * w2)
    u2 = m[5] - (X[9] * w1 - X[10] * w0)
    for j in range(3):
        out[j] = X[3 * j] * w0 + X[3 * j + 1] * w1 + X[3 * j + 2] * w2
        out[3 + j] = X[3 * j] * u0 + X[3 * j + 1] * u1 + X[3 * j + 2] * u2


@njit(cache=True)
def xform_force_to_parent(X: F64, f: F64, out: F64, add: bool) -> None:
    """out (+)= X^T f (child force expressed in the parent frame)."""
    n0 = X[0] * f[0] + X[3] * f[1] + X[6] * f[2]
    n1 = X[1] * f[0] + X[4] * f[1] + X[7] * f[2]
    n2 = X[2] * f[0] + X[5] * f[1] + X[8] * f[2]
    g0 = X[0] * f[3] + X[3] * f[4] + X[6] * f[5]
    g1 = X[1] * f[3] + X[4] * f[4] + X[7] * f[5]
    g2 = X[2] * f[3] + X[5] * f[4] + X[8] * f[5]
    n0 += X[10] * g2 - X[11] * g1
    n1 += X[11] * g0 - X[9] * g2
    n2 += X[9] * g1 - X[10] * g0
    if not add:
        out[:] = 0.0
    out[0] += n0
    out[1] += n1
    out[2] += n2
    out[3] += g0
    out[4] += g1
    out[5] += g2


@njit(cache=True)
def crm(v: F64, m: F64, out: F64) -> None:
    """out = v x m (motion cross product)."""
    out[0] = v[1] * m[2] - v[2] * m[1]
    out[1] = v[2] * m[0] - v[0] * m[2]
    out[2] = v[0] * m[1] - v[1] * m[0]
    out[3] = v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1]
    out[4] = v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2]
    out[5] = v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]


@njit(cache=True)
def crf_add(v: F64, f: F64, out: F64) -> None:
    """out += v x* f (force cross product)."""
    out[0] += v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] += v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] += v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] += v[1] * f[5] - v[2] * f[4]
    out[4] += v[2] * f[3] - v[0] * f[5]
    out[5] += v[0] * f[4] - v[1] * f[3]


@njit(cache=True)
def matvec6(M: F64, x: F64, out: F64) -> None:
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += M[r, c] * x[c]
        out[r] = s


@njit(cache=True)
def plucker6(X: F64, out: F64) -> None:
    """The 6x6 matrix of a 12-number transform row."""
    out[:] = 0.0
    for r in range(3):
        for c in range(3):
            e = X[3 * r + c]
            out[r, c] = e
            out[3 + r, 3 + c] = e
    # lower-left block: -E r^
    x = X[9]
    y = X[10]
    z = X[11]
    for r in range(3):
        e0 = X[3 * r]
        e1 = X[3 * r + 1]
        e2 = X[3 * r + 2]
        out[3 + r, 0] = -(e1 * z - e2 * y)
        out[3 + r, 1] = -(e2 * x - e0 * z)
        out[3 + r, 2] = -(e0 * y - e1 * x)


@njit(cache=True)
def congruence_add(X6: F64, Ia: F64, tmp: F64, out: F64) -> None:
    """out += X6^T Ia X6 (an inertia moved from a child frame into its parent's)."""
    for r in range(6):
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += Ia[r, k] * X6[k, c]
            tmp[r, c] = s
    for r in range(6):
        for c in range(r, 6):
            s = 0.0
            for k in range(6):
                s += X6[k, r] * tmp[k, c]
            out[r, c] += s
            if c != r:
                out[c, r] += s


@njit(cache=True)
def motion_subspace(jtype: int, mf_row: F64, S: F64) -> int:
    """Fill the 6 x nv motion subspace ``S`` (in the child frame) and return nv.

    A free flyer's velocity is ``[v; omega]`` (linear first, as in ROS and Pinocchio), so its
    ``S`` is the permutation that swaps the halves."""
    if jtype == JOINT_FREE:
        S[:, :] = 0.0
        for k in range(3):
            S[3 + k, k] = 1.0
            S[k, 3 + k] = 1.0
        return 6
    for k in range(6):
        S[k, 0] = mf_row[12 + k]
    return 1


@njit(cache=True)
def spd_inverse(A: F64, n: int, out: F64, tol: float) -> bool:
    """Inverse of the symmetric positive definite leading n x n block of ``A`` (Cholesky).
    Returns False if a pivot is not above ``tol`` (singular or indefinite)."""
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
    # invert L (lower triangular), then out = L^-T L^-1
    Li = np.zeros((n, n))
    for i in range(n):
        Li[i, i] = 1.0 / L[i, i]
        for j in range(i):
            s = 0.0
            for k in range(j, i):
                s -= L[i, k] * Li[k, j]
            Li[i, j] = s / L[i, i]
    for r in range(n):
        for c in range(n):
            s = 0.0
            for k in range(max(r, c), n):
                s += Li[k, r] * Li[k, c]
            out[r, c] = s
    return True
