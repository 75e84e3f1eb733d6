"""Contact reactions of a floating-base robot: feet on the ground, on slopes, hands on walls.

Nothing actuates the base, so the wrench it needs (RNEA's first six rows, Featherstone ch. 9)
must come from the contacts. That wrench is split over the active contacts by a small QP
(:mod:`.qp`, compiled) whose variables are each contact's wrench in its own contact frame::

    minimise    sum_c |f_c|^2 + TORQUE_WEIGHT * |tau_c|^2
    subject to  sum_c (contact wrenches, moved to the base origin) = the wrench the base needs
                each wrench inside its contact's cone (below)

A contact is a frame fixed in a link (``offset`` and ``rpy`` from the link's frame) and one of:

* a **point**: the force acts at the frame's origin, or for a round foot of ``radius`` r at the
  point of its sphere that touches the surface (origin - r n). The surface normal ``n`` is a
  world direction (``normal``: the ground is [0, 0, 1], a wall is horizontal). No torque. The
  friction cone ``|f_t| <= mu f_n`` is approximated from inside by FRICTION_SIDES faces, turned
  with the contact frame's x axis so that the answer does not depend on the robot's heading.
* a **sole**: a rectangle of half sizes (``half_length`` along x, ``half_width`` along y)
  centred at the frame's origin, flat on its surface, so the normal is the frame's z axis.
  Its wrench at the centre lies in the contact wrench cone of Caron, Pham and Nakamura,
  "Stability of surface contacts for humanoid robots" (ICRA 2015): forces at the four corners,
  each in the friction pyramid inscribed in the cone (mu / sqrt(2) per axis), which bounds
  the friction, keeps the centre of pressure on the sole and bounds the yaw torque.

Every contact's normal force also lies within [min_force, max_force]. An impossible motion is
reported with the constraints that fail, per contact (``Reaction.reason``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ..algorithm.centroidal import momentum_about
from ..algorithm.floating import base_reaction
from ..algorithm.kinematics import center_of_mass, com_kernel, placements, world_placements
from ..algorithm.rnea import fext_torques, rnea_core
from ..errors import ModelError
from ..multibody.model import F64, Data, Direct, Model
from ..multibody.spatial import rpy_matrix
from .qp import OPTIMAL, solve_qp

TORQUE_WEIGHT = 10.0  # per (N m)^2, relative to 1 per N^2: prefer forces to sole torques
#: m: point contacts are given no moment about their point or line; a measured motion asks for
#: one (noise, model error, a round foot's contact patch, leg accelerations the node is not
#: given: up to 15 mm on the bundled quadruped's simulated trot). Up to this lever of the
#: contacts' total force it is left out (``Reaction.unmet``) and the rest split; beyond it the
#: motion is refused
UNMET_LEVER = 0.02
UNMET = 9  # the split's status when it is refused for that (the QP's are 0-2)
FRICTION_SIDES = 8  # a point's cone: its inscribed pyramid with this many faces


@dataclass(frozen=True)
class Contact:
    """Where and how a link can touch its surroundings (see the module's docstring)."""

    link: str
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)  # contact frame origin, link frame, m
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)  # contact frame axes, as a URDF origin
    radius: float = 0.0  # a round foot's radius, m (points only)
    half_length: float = 0.0  # a sole's half size along the contact frame's x, m
    half_width: float = 0.0  # along its y
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)  # world surface normal (points only)
    min_force: float = 0.0  # bounds on the normal force, N
    max_force: float = math.inf

    @property
    def is_sole(self) -> bool:
        return self.half_length > 0 or self.half_width > 0


@dataclass
class Reaction:
    """The answer for one state. ``feasible`` False: see ``reason``; per contact fields empty."""

    feasible: bool
    reason: str
    base_wrench: F64  # [force; torque] the base needs, base frame
    com_wrench: F64  # total contact wrench about the centre of mass, world axes
    com: F64  # centre of mass, world
    wrenches: dict[str, F64] = field(default_factory=dict)  # [force; torque], link frame,
    #                                                          about the link's origin
    forces: dict[str, F64] = field(default_factory=dict)  # the same force, world axes
    points: dict[str, F64] = field(default_factory=dict)  # contact frame origin (a round
    #                                                        foot: its touching point), world
    cop: dict[str, F64] = field(default_factory=dict)  # centre of pressure, world (a point:
    #                                                     the point)
    tau: F64 = field(default_factory=lambda: np.zeros(0))  # joint torques with these wrenches
    momentum: F64 = field(default_factory=lambda: np.zeros(6))  # the centroidal momentum h_G:
    #                               [linear; angular about the centre of mass], world axes
    axes: F64 = field(default_factory=lambda: np.zeros((0, 3, 3)))  # each contact's axes in
    #                  the world, in the order of ``wrenches``: columns two tangents, the normal
    unmet: F64 = field(default_factory=lambda: np.zeros(6))  # the part of the wrench the base
    #   needs that no split over these contacts can give (world axes, about the centre of
    #   mass): two point feet give no moment about the line through them, one gives none


class _Cone:
    """One contact's constraints ``rows @ x >= lower`` on its wrench ``x`` in its contact frame
    (a point: the force; a sole: force and torque at the sole's centre), with a name per row."""

    def __init__(self, c: Contact, mu: float) -> None:
        self.size = 6 if c.is_sole else 3
        rows: list[list[float]] = []
        lower: list[float] = []
        self.kinds: list[str] = []

        def add(kind: str, row: list[float], low: float = 0.0) -> None:
            rows.append(row + [0.0] * (self.size - len(row)))
            lower.append(low)
            self.kinds.append(kind)

        add("unilateral" if c.min_force == 0 else "minimum normal force", [0, 0, 1], c.min_force)
        if math.isfinite(c.max_force):
            add("maximum normal force", [0, 0, -1], -c.max_force)
        if not c.is_sole:
            inner = mu * math.cos(math.pi / FRICTION_SIDES)
            for k in range(FRICTION_SIDES):
                t = (2 * k + 1) * math.pi / FRICTION_SIDES
                add("friction", [-math.cos(t), -math.sin(t), inner])
        else:
            X, Y, m = c.half_length, c.half_width, mu / math.sqrt(2.0)
            for s in (1.0, -1.0):
                add("friction", [s, 0, m])
                add("friction", [0, s, m])
                add("centre of pressure", [0, 0, Y, s, 0, 0])  # |tau_x| <= Y f_z
                add("centre of pressure", [0, 0, X, 0, s, 0])  # |tau_y| <= X f_z
            for s1 in (1.0, -1.0):
                for s2 in (1.0, -1.0):
                    # tau_z >= -m (X + Y) f_z + |Y f_x - m tau_x| + |X f_y - m tau_y|
                    add("yaw torque", [-s1 * Y, -s2 * X, m * (X + Y), s1 * m, s2 * m, 1.0])
                    # tau_z <= m (X + Y) f_z - |Y f_x + m tau_x| - |X f_y + m tau_y|
                    add("yaw torque", [-s1 * Y, -s2 * X, m * (X + Y), -s1 * m, -s2 * m, -1.0])
        self.rows, self.lower = np.array(rows), np.array(lower)
        self.weight = np.r_[np.ones(3), TORQUE_WEIGHT * np.ones(self.size - 3)]


def check_contacts(model: Model, contacts: list[Contact], mu: float) -> None:
    """Raise :class:`ModelError`, saying what to fix, unless every contact names a link of
    ``model`` once, with sizes, bounds and a normal that make sense, and ``mu`` > 0."""
    if not math.isfinite(mu) or mu <= 0:
        raise ModelError(f"the friction coefficient must be > 0, got {mu}")
    seen: set[str] = set()
    for c in contacts:
        if c.link not in model.frames:
            raise ModelError(f"contact link '{c.link}' is not a link of model '{model.name}'; "
                             f"links: {sorted(model.frames)}")
        if c.link in seen:
            raise ModelError(f"contact link '{c.link}' is listed twice")
        seen.add(c.link)
        numbers = [*c.offset, *c.rpy, *c.normal, c.radius, c.half_length, c.half_width,
                   c.min_force]
        if len(c.offset) != 3 or len(c.rpy) != 3 or len(c.normal) != 3 or \
                not all(math.isfinite(x) for x in numbers):
            raise ModelError(f"contact '{c.link}': offset, rpy and normal must be 3 finite "
                             "numbers each, and the sizes finite")
        if min(c.radius, c.half_length, c.half_width, c.min_force) < 0:
            raise ModelError(f"contact '{c.link}': radius, sole sizes and min_force must be >= 0")
        if c.is_sole and (c.half_length == 0 or c.half_width == 0 or c.radius > 0):
            raise ModelError(f"contact '{c.link}': a sole needs half_length > 0 and "
                             "half_width > 0 and no radius (a point or round foot: both 0)")
        if math.hypot(*c.normal) < 1e-9:
            raise ModelError(f"contact '{c.link}': the normal must not be zero")
        if not c.max_force > c.min_force:
            raise ModelError(f"contact '{c.link}': max_force ({c.max_force}) must exceed "
                             f"min_force ({c.min_force})")


class _Problem:
    """What does not change from state to state for one model and contact set: the cones,
    stacked into the QP's constraint matrix, and where each contact frame sits on its body."""

    def __init__(self, model: Model, contacts: tuple[Contact, ...], mu: float) -> None:
        self.links = tuple(c.link for c in contacts)
        self.cones = [_Cone(c, mu) for c in contacts]
        self.size = np.array([k.size for k in self.cones], dtype=np.int64)
        self.n = int(self.size.sum())
        self.rows = np.zeros((sum(len(k.lower) for k in self.cones), self.n))
        r = o = 0
        for k in self.cones:
            self.rows[r : r + len(k.lower), o : o + k.size] = k.rows
            r, o = r + len(k.lower), o + k.size
        self.lower = np.concatenate([k.lower for k in self.cones])
        self.G = np.diag(np.concatenate([k.weight for k in self.cones]))
        # the QP's constraints, one row each: the 6 equalities, filled per state, then the cones
        self.C = np.zeros((6 + len(self.lower), self.n))
        self.C[6:] = self.rows
        self.b = np.r_[np.zeros(6), self.lower]
        frames = [model.frames[c.link] for c in contacts]
        self.body = np.array([f.body for f in frames], dtype=np.int64)
        # link frames and contact frames (axes, origin) in their body's frame
        self.link_R = np.array([f.rotation for f in frames])
        self.link_p = np.array([f.translation for f in frames])
        self.contact_R = np.array([f.rotation @ rpy_matrix(c.rpy)
                                   for f, c in zip(frames, contacts, strict=True)])
        self.contact_p = np.array([f.translation + f.rotation @ np.array(c.offset, dtype=float)
                                   for f, c in zip(frames, contacts, strict=True)])
        self.normal = np.array([np.array(c.normal) / math.hypot(*c.normal) for c in contacts])
        self.radius = np.array([c.radius for c in contacts])


@functools.lru_cache(maxsize=64)
def contact_problem(model: Model, contacts: tuple[Contact, ...], mu: float) -> _Problem:
    return _Problem(model, contacts, mu)


@njit(cache=True, inline="always")
def _three(x, o=0):
    """``x[o : o + 3]`` as a tuple: a tuple stays in registers where a small array is
    allocated (a state's split made ~40 of them, 2 us)."""
    return (x[o], x[o + 1], x[o + 2])


@njit(cache=True, inline="always")
def _turn(M, x, transpose=False):
    """M x (or M^T x) for a 3x3 array M and a 3-tuple x, as a tuple."""
    if transpose:
        return (M[0, 0] * x[0] + M[1, 0] * x[1] + M[2, 0] * x[2],
                M[0, 1] * x[0] + M[1, 1] * x[1] + M[2, 1] * x[2],
                M[0, 2] * x[0] + M[1, 2] * x[1] + M[2, 2] * x[2])
    return (M[0, 0] * x[0] + M[0, 1] * x[1] + M[0, 2] * x[2],
            M[1, 0] * x[0] + M[1, 1] * x[1] + M[1, 2] * x[2],
            M[2, 0] * x[0] + M[2, 1] * x[1] + M[2, 2] * x[2])


@njit(cache=True, inline="always")
def _in_body(X, b, x):
    """World vector ``x`` (a tuple) in body ``b``'s axes (``X``: placements, nb x 12; the
    world itself for b < 0)."""
    return x if b < 0 else _turn(X[b, :9].reshape(3, 3), x, True)


@njit(cache=True, inline="always")
def _in_world(X, b, x):
    """Body ``b``'s vector ``x`` (a tuple, its axes) in world axes."""
    return x if b < 0 else _turn(X[b, :9].reshape(3, 3), x)


@njit(cache=True, inline="always")
def _origin(X, b):
    return (0.0, 0.0, 0.0) if b < 0 else (X[b, 9], X[b, 10], X[b, 11])


@njit(cache=True, inline="always")
def _add(a, b, s=1.0):
    """a + s b for 3-tuples."""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


@njit(cache=True, inline="always")
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, inline="always")
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True, inline="always")
def _moment(tau, p, o, f):
    """tau + (p - o) x f for 3-tuples: a wrench's moment moved from ``p`` to ``o``."""
    return _add(tau, _cross(_add(p, o, -1.0), f))


@njit(cache=True)
def contact_geometry(X, body, contact_R, contact_p, normal, radius, size, R, p, A):
    """Each contact's axes R[c] (columns: two tangents, the normal) and point p[c] in the
    world (a round foot: where it touches; a sole: its centre), and A: contact-frame wrenches
    -> their sum about the first contact's point, world axes."""
    o = 0
    for c in range(size.shape[0]):
        b = body[c]
        for j in range(3):
            R[c, 0, j], R[c, 1, j], R[c, 2, j] = _in_world(X, b, _three(contact_R[c, :, j]))
        pc = _add(_origin(X, b), _in_world(X, b, _three(contact_p[c])))
        if size[c] == 3:
            # tangents turn with the contact frame: its x axis in the surface (y if x is
            # normal to it)
            n = _three(normal[c])
            t, length = n, 0.0
            for j in range(2):
                axis = _three(R[c, :, j])
                t = _add(axis, n, -_dot(axis, n))
                length = math.sqrt(_dot(t, t))
                if length > 0.1:
                    break
            t = (t[0] / length, t[1] / length, t[2] / length)
            side = _cross(n, t)
            for r in range(3):
                R[c, r, 0], R[c, r, 1], R[c, r, 2] = t[r], side[r], n[r]
            pc = _add(pc, n, -radius[c])
        p[c, 0], p[c, 1], p[c, 2] = pc
        lever = _add(pc, _three(p[0]), -1.0)
        for j in range(3):
            axis = _three(R[c, :, j])
            arm = _cross(lever, axis)
            for r in range(3):
                A[r, o + j], A[3 + r, o + j] = axis[r], arm[r]
                if size[c] == 6:
                    A[3 + r, o + 3 + j] = axis[r]
        o += size[c]


@njit(cache=True)
def _distribute(w, X, com, body, link_R, link_p, size, R, p, com_wrench, wrenches, forces, cop,
                f_ext):
    """From the contact-frame wrenches ``w``: their sum about the centre of mass (world), each
    in its link's frame about the link's origin, each force in world axes, centres of pressure
    (world), and each as an external force on its body (body frame, about its origin)."""
    o = 0
    for c in range(size.shape[0]):
        Rc, b, pc = R[c], body[c], _three(p[c])
        f = _turn(Rc, _three(w, o))
        tau = _turn(Rc, _three(w, o + 3)) if size[c] == 6 else (0.0, 0.0, 0.0)
        o += size[c]
        about_com = _moment(tau, pc, _three(com), f)
        pbody = _origin(X, b)
        pl = _add(pbody, _in_world(X, b, _three(link_p[c])))
        f_body = _in_body(X, b, f)
        f_link = _turn(link_R[c], f_body, True)
        tau_link = _turn(link_R[c], _in_body(X, b, _moment(tau, pc, pl, f)), True)
        fn = _dot(f, _three(Rc[:, 2]))
        cp = pc
        if size[c] == 6 and fn > 1e-9:
            local = _turn(Rc, tau, True)
            cp = _add(_add(pc, _three(Rc[:, 0]), -local[1] / fn), _three(Rc[:, 1]),
                      local[0] / fn)
        for j in range(3):
            forces[c, j] = f[j]
            com_wrench[j] += f[j]
            com_wrench[3 + j] += about_com[j]
            wrenches[c, j], wrenches[c, 3 + j] = f_link[j], tau_link[j]
            cop[c, j] = cp[j]
        if b >= 0:
            tau_body = _in_body(X, b, _moment(tau, pc, pbody, f))
            for j in range(3):
                f_ext[b, j] += f_body[j]
                f_ext[b, 3 + j] += tau_body[j]


@njit(cache=True)
def _equalities(scratch, nb, n):
    """The QP's equality rows ``A`` (6 x n) and the wrench the contacts must give (``need``),
    where :func:`_split` carves them from ``scratch``, after the placements (nb x 12); and
    where the rest of ``scratch`` starts."""
    o = nb * 12
    end = o + 6 * n + 6
    return scratch[o : o + 6 * n].reshape(6, n), scratch[o + 6 * n : end], end


@njit(cache=True)
def _column_norm(M, j):
    t = 0.0
    for r in range(M.shape[0]):
        t += M[r, j] * M[r, j]
    return np.sqrt(t)


@njit(cache=True)
def _reachable(A, need, unmet, E):
    """Split ``need`` into what the contacts can give (the part in the span of ``A``'s columns,
    left in ``need``) and the rest (into ``unmet``): two point feet give no moment about the
    line through them, one gives none at all, and a measured motion always asks for a little
    (noise, model error), which no split could meet. Into ``E``'s first rows an orthonormal
    basis of that span (Gram-Schmidt with column pivoting, in ``[N; N m]``), zeros after."""
    n = A.shape[1]
    res = A.copy()  # each column less its part in the basis so far
    norms = np.empty(n)
    scale = 0.0
    for j in range(n):
        norms[j] = _column_norm(res, j)
        scale = max(scale, norms[j])
    E[:] = 0.0
    rank = 0
    while rank < 6:  # the column farthest from the basis next (rank-revealing)
        best = -1
        for j in range(n):
            if norms[j] > 1e-9 * scale and (best < 0 or norms[j] > norms[best]):
                best = j
        if best < 0:
            break
        for r in range(6):
            E[rank, r] = res[r, best] / norms[best]
        for j in range(n):  # modified Gram-Schmidt: every column less its part along it
            t = 0.0
            for r in range(6):
                t += E[rank, r] * res[r, j]
            for r in range(6):
                res[r, j] -= t * E[rank, r]
            norms[j] = _column_norm(res, j)
        rank += 1
    unmet[:] = 0.0
    if rank < 6:
        unmet[:] = need
        for k in range(rank):
            unmet -= np.sum(E[k] * need) * E[k]
        need -= unmet


@njit(cache=True)
def _balance_rows(A, need, unmet, p0, com, C, b):
    """The QP's first six rows, ``C`` and ``b``: the wrench balance along a basis of what the
    contacts can give (independent rows, met to rounding, then rows of zeros, met wherever the
    others are), and into ``unmet`` what they cannot give: about a point of the contacts a
    pure moment, then about the centre of mass."""
    n = A.shape[1]
    E = np.empty((6, 6))
    _reachable(A, need, unmet, E)
    unmet[3], unmet[4], unmet[5] = _moment(_three(unmet, 3), _three(p0), _three(com),
                                           _three(unmet))
    for r in range(6):
        for j in range(n):
            t = 0.0
            for i in range(6):
                t += E[r, i] * A[i, j]
            C[r, j] = t
        t = 0.0
        for i in range(6):
            t += E[r, i] * need[i]
        b[r] = t


@njit(cache=True, inline="always")
def _needed(X, base, p0, need):
    """The wrench the base needs (RNEA's base rows: base frame, about its origin) in world
    axes, about ``p0``, into ``need``."""
    force = _in_world(X, 0, _three(base))
    moment = _moment(_in_world(X, 0, _three(base, 3)), _origin(X, 0), _three(p0), force)
    need[0], need[1], need[2], need[3], need[4], need[5] = force + moment


@njit(cache=True)
def _split(mi, mf, maps, lin, q, v, a, W, wv, body, contact_R, contact_p, normal, radius, size,
           link_R, link_p, G, C0, b0, scratch, base, tau, com, momentum, com_wrench, wrenches,
           forces, p, cop, unmet):
    """One state's whole split, in one compiled call: the wrench the base needs (RNEA's base
    rows, into ``base``), the bodies' placements, the centre of mass and the centroidal
    momentum (into ``com`` and ``momentum``), the contacts' geometry, the QP, and with its
    answer the wrenches and the joint torques (RNEA's with the contact wrenches added, into
    ``tau``). ``scratch`` is carved, in this order, into the placements
    (nb x 12), the QP's equality rows ``A`` (6 x n), the wrench the contacts must give
    (``need``: world axes, about the first contact's point), the QP's answer and multipliers, the
    contact axes (k x 3 x 3) and the wrenches on the bodies (nb x 6); :func:`solve` reads
    ``A`` and ``need`` back when the QP fails. Returns the QP's status, or UNMET (no QP)
    when the moment the contacts cannot give is beyond ``UNMET_LEVER``."""
    nb, n, k = mi.shape[0], G.shape[0], size.shape[0]
    X = scratch[: nb * 12].reshape(nb, 12)
    A, need, o = _equalities(scratch, nb, n)
    w, lam = scratch[o : o + n], scratch[o + n : o + n + C0.shape[0]]
    o += n + C0.shape[0]
    R = scratch[o : o + 9 * k].reshape(k, 3, 3)
    f_ext = scratch[o + 9 * k : o + 9 * k + 6 * nb].reshape(nb, 6)
    rnea_core(mi, mf, maps, lin, q, v, a, np.zeros((0, 6)), False, W, wv, base)
    world_placements(mi, W, X)  # from the joint transforms RNEA left in W
    com[:] = com_kernel(mf, X)
    momentum_about(mf, W, X, com, momentum)  # from the body velocities RNEA left in W
    A[:] = 0.0
    contact_geometry(X, body, contact_R, contact_p, normal, radius, size, R, p, A)
    _needed(X, base, p[0], need)
    C, b = C0.copy(), b0.copy()
    if np.any(size == 6):  # a sole's six columns span every wrench: the balance is A w = need
        unmet[:] = 0.0
        C[:6, :] = A
        b[:6] = need
    else:
        _balance_rows(A, need, unmet, p[0], com, C, b)
    moment = unmet[3] ** 2 + unmet[4] ** 2 + unmet[5] ** 2
    if moment > UNMET_LEVER ** 2 * (need[0] ** 2 + need[1] ** 2 + need[2] ** 2):
        return UNMET
    status = solve_qp(G, np.zeros(n), C, b, 6, w, lam)
    if status == OPTIMAL:
        com_wrench[:] = 0.0
        f_ext[:] = 0.0
        _distribute(w, X, com, body, link_R, link_p, size, R, p, com_wrench, wrenches, forces,
                    cop, f_ext)
        fext_torques(mi, mf, maps, lin, W, wv, f_ext, tau)
        for i in range(tau.shape[0]):
            tau[i] += base[i]
    return status


_SPLIT = Direct(_split)


def solve(model: Model, data: Data, q: F64, v: F64, a: F64, contacts: list[Contact],
          mu: float) -> Reaction:
    """Contact wrenches, centres of pressure and joint torques that realise the motion
    ``(q, v, a)`` (free-flyer model; ``a`` includes the base acceleration)."""
    model.require_free_flyer()
    if not contacts:
        base_wrench, _ = base_reaction(model, data, q, v, a)
        com = center_of_mass(model, placements(model, data, q))
        return Reaction(False, "no contact is active", base_wrench, np.zeros(6), com,
                        tau=np.zeros(model.nv - 6))
    q, v, a = model.check_state(q, v, a, "a")
    return Split(model, contacts, mu)(data, q, v, a)


class Split:
    """:func:`solve` for one model and a non-empty contact set, kept for state after state: its
    arrays are made once and the Reaction of each call holds views of them, which the next
    call overwrites (as Pinocchio's Data holds its last answer). A node answering a stream
    uses one per contact set: it saves a state ~5 us of allocations, dicts and lookups. It
    takes the state as the caller keeps it, unchecked: contiguous float64 vectors of the
    model's sizes (:func:`solve` checks a user's)."""

    def __init__(self, model: Model, contacts: list[Contact], mu: float) -> None:
        model.require_free_flyer()
        self.model, self.contacts, self.mu = model, contacts, mu
        P = self.problem = contact_problem(model, tuple(contacts), mu)
        k, nb, n = len(contacts), model.nb, P.n
        self.scratch = scratch = np.empty(nb * 18 + 7 * n + 6 + len(P.b) + 9 * k)
        base, tau = np.empty(model.nv), np.empty(model.nv)
        self.com, self.h, self.cw, self.unmet = np.empty(3), np.empty(6), np.empty(6), np.empty(6)
        wrenches, forces, points, cop = (np.empty((k, 6)), np.empty((k, 3)), np.empty((k, 3)),
                                         np.empty((k, 3)))
        self.base = base[:6]
        self._model = (model.mi, model.mf, model.maps, model.lin)
        self._rest = (P.body, P.contact_R, P.contact_p, P.normal, P.radius, P.size, P.link_R,
                      P.link_p, P.G, P.C, P.b, scratch, base, tau, self.com, self.h, self.cw,
                      wrenches, forces, points, cop, self.unmet)
        self.links = links = list(P.links)  # one row a link, by construction
        # the answer, whose arrays each call overwrites
        self._ok = Reaction(True, "", self.base, self.cw, self.com,
                            dict(zip(links, wrenches, strict=True)),
                            dict(zip(links, forces, strict=True)),
                            dict(zip(links, points, strict=True)),
                            dict(zip(links, cop, strict=True)), tau[6:], self.h,
                            _axes(scratch, nb, n, len(P.b), k), self.unmet)

    def __call__(self, data: Data, q: F64, v: F64, a: F64) -> Reaction:
        """The split of the motion ``(q, v, a)``."""
        status = _SPLIT.call(*self._model, q, v, a, data.W, data.wv, *self._rest)
        if status == OPTIMAL:
            return self._ok
        P, nb = self.problem, self.model.nb
        A, need, _ = _equalities(self.scratch, nb, P.n)
        why = _unmet_reason(self.unmet, need) if status == UNMET else \
            _why_not(self.contacts, P.cones, A, P.rows, P.lower, need, self.mu)
        return Reaction(False, why, self.base, np.zeros(6), self.com,
                        tau=np.zeros(self.model.nv - 6), momentum=self.h, unmet=self.unmet)


def _axes(scratch: F64, nb: int, n: int, rows: int, k: int) -> F64:
    """The contact axes (k x 3 x 3, world) where :func:`_split` carved them from ``scratch``."""
    o = nb * 12 + 7 * n + 6 + rows  # after the placements, A, need, the answer, multipliers
    return scratch[o : o + 9 * k].reshape(k, 3, 3)


def _unmet_reason(unmet: F64, need: F64) -> str:
    """Why the split is refused when what the contacts cannot give (a moment about the point
    or line of point contacts) is more than a real foot's contact patch and model error
    explain (``UNMET_LEVER``)."""
    moment = float(np.linalg.norm(unmet[3:]))
    lever = moment / max(float(np.linalg.norm(need[:3])), 1e-9)
    return (f"no contact wrenches at all can give the wrench this motion needs: point contacts "
            f"carry no torque, so the needed moment must vanish about the point (or the line) "
            f"they form; it is {moment:.3g} N m, as if the centre of pressure were "
            f"{lever * 100:.3g} cm off them (up to {UNMET_LEVER * 100:g} cm is taken as a "
            f"foot's contact patch, model error and unknown leg accelerations); a sole or "
            f"another contact is needed")


_STAGES = (("unilateral", "minimum normal force", "maximum normal force"), ("friction",),
           ("centre of pressure",), ("yaw torque",))


def _why_not(contacts: list[Contact], cones: list[_Cone], A: F64, rows: F64, lower: F64,
             need: F64, mu: float) -> str:
    """Which constraints make the QP infeasible. The kinds are added one at a time (normal
    force, friction, centre of pressure, yaw); the first that cannot be met is named, with the
    contacts whose rows of that kind would have to give (the least squared violation)."""
    scale = max(1.0, float(np.abs(need).max()))
    owner = [c.link for c, k in zip(contacts, cones, strict=True) for _ in k.kinds]
    kinds = [kind for k in cones for kind in k.kinds]
    n = A.shape[1]
    for stage, names in enumerate(_STAGES):
        hard = [i for i, kind in enumerate(kinds) if any(kind in s for s in _STAGES[:stage])]
        soft = [i for i, kind in enumerate(kinds) if kind in names]
        m = len(soft)
        if not m:
            continue
        G = np.diag(np.r_[1e-6 * np.ones(n), np.ones(m)])
        C = np.vstack([np.c_[A, np.zeros((6, m))], np.c_[rows[hard], np.zeros((len(hard), m))],
                       np.c_[rows[soft], np.eye(m)], np.c_[np.zeros((m, n)), np.eye(m)]])
        b = np.r_[need, lower[hard], lower[soft], np.zeros(m)]
        x, lam = np.empty(n + m), np.empty(len(b))
        if solve_qp(G, np.zeros(n + m), C, b, 6, x, lam) != OPTIMAL:
            break
        slack = x[n:]
        failed: dict[str, set[str]] = {}
        for i, s in zip(soft, slack, strict=True):
            if s > 1e-6 * scale:
                failed.setdefault(owner[i], set()).add(kinds[i])
        if failed:
            what = "; ".join(f"{link}: {', '.join(sorted(k))}" for link, k in failed.items())
            pulls = any("unilateral" in k for k in failed.values())
            hint = {0: "the ground would have to pull" if pulls else
                       "the normal force would leave its bounds",
                    1: f"outside the friction cone, mu = {mu}",
                    2: "the centre of pressure would leave the sole",
                    3: "more yaw torque than the sole's friction gives"}[stage]
            return f"the contacts cannot give the wrench this motion needs ({hint}): {what}"
    return "the contacts cannot give the wrench this motion needs (numerical trouble in the QP)"
