"""Contact reactions of a floating-base robot standing on flat, horizontal ground.

Nothing actuates the base, so the wrench it needs (RNEA's first six rows, Featherstone ch. 9)
must come from the contacts. That wrench is split over the active contacts by a small QP:

    minimise    sum_c |f_c|^2 + TORQUE_WEIGHT * |tau_c|^2
    subject to  sum_c (f_c, tau_c + (p_c - p_base) x f_c) = required wrench (world axes)
                f_cz >= 0                          (unilateral: the ground only pushes)
                |f_cx|, |f_cy| <= mu f_cz          (friction pyramid, world axes)
                |tau_c,x|, |tau_c,y| in the sole's axes within the sole's half width and half
                length times f_cz                  (a flat foot: centre of pressure on the sole)

Each contact wrench is expressed in world-aligned axes at the contact point (a point contact
at the link origin, a flat foot at the sole centre = link origin; a point contact carries no
torque). The world's z axis is the ground normal. The QP is solved by quadprog; an infeasible
one (the ground would have to pull, or push outside the friction cone or off the soles) is
reported with a reason instead of a solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import quadprog

from .errors import ModelError
from .floating import base_reaction
from .kinematics import center_of_mass, link_placement, placements
from .model import F64, Data, Model
from .rnea import rnea

TORQUE_WEIGHT = 10.0  # per (N m)^2, relative to 1 per N^2: prefer forces to sole torques


@dataclass(frozen=True)
class Contact:
    """A link that can touch the ground: a point, or a flat foot with a rectangular sole."""

    link: str
    half_length: float = 0.0  # sole half size along the link's x axis, m (0: a point)
    half_width: float = 0.0  # along the link's y axis

    @property
    def is_foot(self) -> bool:
        return self.half_length > 0 and self.half_width > 0


@dataclass
class Reaction:
    """The answer for one state. ``feasible`` False: see ``reason``; the rest is not set."""

    feasible: bool
    reason: str
    base_wrench: F64  # [force; torque] the base needs, base frame
    com_wrench: F64  # total contact wrench about the centre of mass, world axes
    com: F64  # centre of mass, world
    wrenches: dict[str, F64]  # per active contact: [force; torque] world axes at the contact
    cop: dict[str, F64]  # per active contact: centre of pressure, world (a point: itself)
    rotation: dict[str, F64]  # per active contact: the link's axes in the world
    tau: F64  # joint torques consistent with the contact wrenches


def check_contacts(model: Model, contacts: list[Contact], mu: float) -> None:
    if not np.isfinite(mu) or mu <= 0:
        raise ModelError(f"the friction coefficient must be > 0, got {mu}")
    for c in contacts:
        if c.link not in model.frames:
            raise ModelError(f"contact link '{c.link}' is not a link of model '{model.name}'; "
                             f"links: {sorted(model.frames)}")
        if not (c.half_length >= 0 and c.half_width >= 0):
            raise ModelError(f"contact '{c.link}': sole sizes must be >= 0")


def solve(model: Model, data: Data, q: F64, v: F64, a: F64, contacts: list[Contact],
          mu: float) -> Reaction:
    """Contact wrenches, centre of pressure and joint torques that realise the motion
    ``(q, v, a)`` (free-flyer model; ``a`` includes the base acceleration)."""
    model.require_free_flyer()
    base_wrench, _ = base_reaction(model, data, q, v, a)
    X = placements(model, data, q)
    Rb, pb = X[0, :9].reshape(3, 3), X[0, 9:]
    com = center_of_mass(model, X)
    need = np.r_[Rb @ base_wrench[:3], Rb @ base_wrench[3:]]  # world axes, about the base
    empty = Reaction(False, "", base_wrench, np.zeros(6), com, {}, {}, {},
                     np.zeros(model.nv - 6))
    if not contacts:
        empty.reason = "no contact is active"
        return empty
    if need[2] < -1e-9:
        empty.reason = (f"the contacts would have to pull on the ground: the motion needs "
                        f"{need[2]:.3f} N upwards from them")
        return empty
    frames = [link_placement(model, X, c.link) for c in contacts]
    sizes = [6 if c.is_foot else 3 for c in contacts]
    n = sum(sizes)
    A = np.zeros((6, n))  # sum of contact wrenches about the base origin
    G = np.zeros((n, n))
    ineq: list[F64] = []
    o = 0
    for c, (R, p), k in zip(contacts, frames, sizes, strict=True):
        r = p - pb
        A[:3, o : o + 3] = np.eye(3)
        A[3:, o : o + 3] = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
        G[o : o + 3, o : o + 3] = np.eye(3)
        fz = np.zeros(n)
        fz[o + 2] = 1.0
        ineq.append(fz)
        for axis in (0, 1):
            for sign in (1.0, -1.0):
                row = mu * fz.copy()
                row[o + axis] -= sign
                ineq.append(row)
        if k == 6:
            A[3:, o + 3 : o + 6] = np.eye(3)
            G[o + 3 : o + 6, o + 3 : o + 6] = TORQUE_WEIGHT * np.eye(3)
            for axis, half in ((0, c.half_width), (1, c.half_length)):
                for sign in (1.0, -1.0):  # |(R^T tau)_axis| <= half * f_z
                    row = half * fz.copy()
                    row[o + 3 : o + 6] -= sign * R[:, axis]
                    ineq.append(row)
        o += k
    C = np.vstack([A, *ineq]).T
    b = np.r_[need, np.zeros(len(ineq))]
    try:
        w = quadprog.solve_qp(G + 1e-9 * np.eye(n), np.zeros(n), C, b, 6)[0]
    except ValueError:
        empty.reason = ("no contact wrenches can produce this motion: the ground would have "
                        f"to push outside the friction cone (mu = {mu}) or with the centre of "
                        "pressure off the support (the soles, or the line or polygon of the "
                        "contact points)")
        return empty
    wrenches: dict[str, F64] = {}
    cop: dict[str, F64] = {}
    rotation: dict[str, F64] = {}
    f_ext = np.zeros((model.nb, 6))
    com_wrench = np.zeros(6)
    o = 0
    for c, (R, p), k in zip(contacts, frames, sizes, strict=True):
        wc = np.r_[w[o : o + 3], w[o + 3 : o + 6] if k == 6 else np.zeros(3)]
        wrenches[c.link], rotation[c.link] = wc, R
        cop[c.link] = p + np.array([-wc[4] / wc[2], wc[3] / wc[2], 0.0]) if wc[2] > 1e-9 else p
        com_wrench += np.r_[wc[:3], wc[3:] + np.cross(p - com, wc[:3])]
        body = model.frames[c.link].body
        Rbody, pbody = X[body, :9].reshape(3, 3), X[body, 9:]
        f_ext[body, :3] += Rbody.T @ wc[:3]
        f_ext[body, 3:] += Rbody.T @ (wc[3:] + np.cross(p - pbody, wc[:3]))
        o += k
    tau = rnea(model, data, q, v, a, f_ext)
    return Reaction(True, "", base_wrench, com_wrench, com, wrenches, cop, rotation, tau[6:])
