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
def mat_vec(M, x, transpose=False):
    """M x (or M^T x) for a 3x3 M, in loops: numba's @ needs scipy's BLAS."""
    out = np.zeros(3)
    for r in range(3):
        for k in range(3):
            out[r] += (M[k, r] if transpose else M[r, k]) * x[k]
    return out


@njit(cache=True, inline="always")
def cross3(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


@njit(cache=True)
def body_frame(X, b):
    """Body ``b``'s axes and origin in the world (the world itself for b < 0)."""
    if b < 0:
        return np.eye(3), np.zeros(3)
    return X[b, :9].copy().reshape(3, 3), X[b, 9:].copy()


@njit(cache=True)
def contact_geometry(X, body, contact_R, contact_p, normal, radius, size, R, p, A):
    """Each contact's axes R[c] (columns: two tangents, the normal) and point p[c] in the
    world (a round foot: where it touches; a sole: its centre), and A: contact-frame wrenches
    -> their sum about the first contact's point, world axes."""
    o = 0
    for c in range(size.shape[0]):
        Rb, pbody = body_frame(X, body[c])
        for j in range(3):
            R[c, :, j] = mat_vec(Rb, contact_R[c, :, j])
        p[c] = pbody + mat_vec(Rb, contact_p[c])
        if size[c] == 3:
            # tangents turn with the contact frame: its x axis in the surface (y if x is
            # normal to it)
            n = normal[c]
            for j in range(2):
                t = R[c, :, j] - np.sum(R[c, :, j] * n) * n
                length = np.sqrt(np.sum(t * t))
                if length > 0.1:
                    break
            t = t / length
            R[c, :, 0] = t
            R[c, :, 1] = cross3(n, t)
            R[c, :, 2] = n
            p[c] -= radius[c] * n
        r = p[c] - p[0]
        for j in range(3):
            A[:3, o + j] = R[c, :, j]
            A[3:, o + j] = cross3(r, R[c, :, j])
            if size[c] == 6:
                A[3:, o + 3 + j] = R[c, :, j]
        o += size[c]


@njit(cache=True)
def _distribute(w, X, com, body, link_R, link_p, size, R, p, com_wrench, wrenches, forces, cop,
                f_ext):
    """From the contact-frame wrenches ``w``: their sum about the centre of mass (world), each
    in its link's frame about the link's origin, each force in world axes, centres of pressure
    (world), and each as an external force on its body (body frame, about its origin)."""
    o = 0
    for c in range(size.shape[0]):
        f = mat_vec(R[c], w[o : o + 3])
        forces[c] = f
        tau = mat_vec(R[c], w[o + 3 : o + 6]) if size[c] == 6 else np.zeros(3)
        o += size[c]
        com_wrench[:3] += f
        com_wrench[3:] += tau + cross3(p[c] - com, f)
        Rb, pbody = body_frame(X, body[c])
        pl = pbody + mat_vec(Rb, link_p[c])
        in_body = (mat_vec(Rb, f, True), mat_vec(Rb, tau + cross3(p[c] - pl, f), True))
        wrenches[c, :3] = mat_vec(link_R[c], in_body[0], True)
        wrenches[c, 3:] = mat_vec(link_R[c], in_body[1], True)
        fn = np.sum(f * R[c, :, 2])
        cop[c] = p[c]
        if size[c] == 6 and fn > 1e-9:
            local = mat_vec(R[c], tau, True)
            cop[c] += R[c, :, 0] * (-local[1] / fn) + R[c, :, 1] * (local[0] / fn)
        if body[c] >= 0:
            f_ext[body[c], :3] += mat_vec(Rb, f, True)
            f_ext[body[c], 3:] += mat_vec(Rb, tau + cross3(p[c] - pbody, f), True)


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
    Rb = X[0, :9].copy().reshape(3, 3)
    need[:3] = mat_vec(Rb, base[:3])
    need[3:] = mat_vec(Rb, base[3:6]) - cross3(p[0] - X[0, 9:], need[:3])  # about p[0]
    E = np.empty((6, 6))
    # about a point of the contacts, what they cannot give is a pure moment
    _reachable(A, need, unmet, E)
    unmet[3:] += cross3(p[0] - com, unmet[:3])  # about the centre of mass
    C, b = C0.copy(), b0.copy()
    # the wrench balance along the span's basis: independent rows (met to rounding), then
    # rows of zeros, met wherever the others are
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
    P = contact_problem(model, tuple(contacts), mu)
    k, nb, n = len(contacts), model.nb, P.n
    scratch = np.empty(nb * 18 + 7 * n + 6 + len(P.b) + 9 * k)
    base, tau, com, h, cw, unmet = np.empty(model.nv), np.empty(model.nv), np.empty(3), \
        np.empty(6), np.empty(6), np.empty(6)
    wrenches, forces, points, cop = np.empty((k, 6)), np.empty((k, 3)), np.empty((k, 3)), \
        np.empty((k, 3))
    status = _SPLIT.call(model.mi, model.mf, model.maps, model.lin, q, v, a, data.W, data.wv,
                         P.body, P.contact_R, P.contact_p, P.normal, P.radius, P.size, P.link_R,
                         P.link_p, P.G, P.C, P.b, scratch, base, tau, com, h, cw, wrenches, forces,
                         points, cop, unmet)
    if status != OPTIMAL:
        A, need, _ = _equalities(scratch, nb, n)
        why = _unmet_reason(unmet, need) if status == UNMET else \
            _why_not(contacts, P.cones, A, P.rows, P.lower, need, mu)
        return Reaction(False, why, base[:6], np.zeros(6), com, tau=np.zeros(model.nv - 6),
                        momentum=h, unmet=unmet)
    # one row a link, by construction: zip's strict check would cost ~0.9 us each
    links = P.links
    return Reaction(True, "", base[:6], cw, com, dict(zip(links, wrenches)),  # noqa: B905
                    dict(zip(links, forces)), dict(zip(links, points)),  # noqa: B905
                    dict(zip(links, cop)), tau[6:], h,  # noqa: B905
                    _axes(scratch, model.nb, n, len(P.b), k), unmet)


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
