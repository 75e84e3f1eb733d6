"""Balance indicators of a legged robot from one contact split: the zero-moment point, the
instantaneous capture point and the support polygon, with each point's margin to the polygon.

All on the **ground plane**: perpendicular to gravity, through the lowest point in touch.

* **Support polygon**: the convex hull of the points in touch, projected along gravity onto the
  ground plane: a point contact's touching point, a sole's four corners. Its vertices run
  counter-clockwise seen from above. One point foot gives one vertex, two give a segment: a
  polygon with no area.
* **ZMP** (Vukobratovic; the centre of pressure of the whole contact wrench, Sardain and
  Bessonnet 2004): the point of the ground plane about which the contacts' total wrench has no
  moment parallel to the plane. Defined while the contacts push the robot up (their total force
  along gravity's opposite is positive). On flat ground with every contact on it, it is the
  centre of pressure and lies in the support polygon, on its edge when the feet start to tip.
  With contacts off the plane (stairs, a slope, a hand on a wall) it is still the point where
  the total wrench's moment is vertical, computed from the same wrench, but it is no longer a
  centre of pressure: it may leave the polygon while the robot is in balance, and a
  multi-contact criterion (Caron, Pham and Nakamura 2015) is what decides.
* **Capture point** (Pratt et al. 2006; the divergent component of motion of Englsberger et al.
  2015): ``xi = c + c_dot / omega``, ``omega = sqrt(g / z)``, ``z`` the centre of mass's height
  above the ground plane; projected onto the plane. Outside the support polygon the linear
  inverted pendulum cannot stop without a step: a step or a fall follows. Trotting and walking
  robots do exactly that at every step. Without gravity there is none (and the ground plane is
  taken perpendicular to the world's z).
* **Margins**: the signed distance of a point to the polygon's edge, m: positive inside (the
  distance to the nearest edge), negative outside (the distance to the polygon). A polygon with
  no area has no inside: its margins are never positive.

The contacts' total wrench and the centroidal momentum come from the split
(:class:`.contacts.Reaction`: ``com_wrench``, ``momentum``), whose rate is the total wrench plus
``m g`` (Newton and Euler for the whole robot).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..multibody.model import F64, Direct, Model
from .contacts import Contact, Reaction, _add, _cross, _dot, _three


@dataclass(slots=True)
class Balance:
    """One state's balance; world axes, SI units, points on the ground plane."""

    com: F64  # centre of mass, m
    com_velocity: F64  # m/s
    momentum: F64  # h_G: [linear; angular about the centre of mass]
    momentum_rate: F64  # dh_G/dt: the contacts' total wrench about the centre of mass + m g
    ground_height: float  # the ground plane's height along gravity's opposite, m
    zmp: F64 | None  # None while the contacts do not push the robot up
    capture_point: F64 | None  # None while the centre of mass is not above the ground plane
    #                            (or without gravity)
    omega: float  # sqrt(g / z), 1/s (0 without a capture point)
    support_polygon: F64  # (k, 3) vertices, counter-clockwise seen from above
    zmp_margin: float  # signed distance to the polygon's edge, m (NaN without a point)
    capture_point_margin: float


class Support:
    """The balance of a model standing on a set of contacts, state after state."""

    def __init__(self, model: Model, contacts: list[Contact]) -> None:
        g = np.asarray(model.gravity, dtype=float)
        self.g = float(np.linalg.norm(g))
        self.up = -g / self.g if self.g > 0 else np.array([0.0, 0.0, 1.0])  # no gravity: z up
        e1 = np.eye(3)[int(np.argmin(np.abs(self.up)))]  # world x on a z-up ground
        e1 = e1 - (e1 @ self.up) * self.up
        e1 /= np.linalg.norm(e1)
        self.plane = np.array([e1, np.cross(self.up, e1)])  # the ground plane's axes
        self.mass = model.total_mass
        self.halves = {c.link: (c.half_length, c.half_width) for c in contacts}
        # per set of links in touch: the soles' half sizes, and the kernel's scratch (the
        # points in touch, their plane coordinates, the hull's indices)
        self._kept: dict[tuple[str, ...], tuple[F64, F64, F64, np.ndarray]] = {}

    def balance(self, r: Reaction) -> Balance:
        """The balance of the feasible split ``r`` (its contacts are the ones in touch)."""
        links = tuple(r.points)
        kept = self._kept.get(links)
        if kept is None:
            k = len(links)
            kept = (np.array([self.halves[x] for x in links]), np.empty((4 * k, 3)),
                    np.empty((4 * k, 2)), np.empty(8 * k + 1, dtype=np.int64))
            if len(self._kept) < 64:  # 2^k sets of k contacts; a robot has a few
                self._kept[links] = kept
        out, polygon = np.empty(OUT), np.empty_like(kept[1])
        count = _BALANCE.call(np.array(list(r.points.values())), r.axes, self.up, self.plane,
                              r.com, r.momentum, r.com_wrench, self.mass, self.g, *kept, out,
                              polygon)
        return Balance(r.com, out[17:20], r.momentum, out[11:17], out[0],
                       out[1:4] if out[4] > 0 else None, out[5:8] if out[8] > 0 else None,
                       out[8], polygon[:count], out[9], out[10])


#: the length of :func:`_balance`'s ``out``
OUT = 20


@njit(cache=True, inline="always")
def _support(contact_points, axes, halves, u, plane, points, xy, hull, polygon):
    """The points in touch (a point contact's, a sole's four corners) into ``points``,
    projected onto the ground plane, their coordinates in the plane into ``xy``, the support
    polygon's indices into ``hull`` and its vertices into ``polygon``, counter-clockwise;
    returns the ground plane's height and the polygon's vertex count."""
    k = 0
    for c in range(contact_points.shape[0]):
        hx, hy = halves[c, 0], halves[c, 1]
        pc = _three(contact_points[c])
        if hx > 0 or hy > 0:
            ex, ey = _three(axes[c, :, 0]), _three(axes[c, :, 1])
            for sx, sy in ((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)):
                points[k, 0], points[k, 1], points[k, 2] = _add(_add(pc, ex, sx * hx), ey,
                                                                sy * hy)
                k += 1
        else:
            points[k, 0], points[k, 1], points[k, 2] = pc
            k += 1
    h = np.inf
    for i in range(k):
        h = min(h, _dot(_three(points[i]), u))
    for i in range(k):
        p = _three(points[i])
        p = _add(p, u, -(_dot(p, u) - h))
        points[i, 0], points[i, 1], points[i, 2] = p
        xy[i, 0], xy[i, 1] = _in_plane(p, plane)
    count = _hull(xy[:k], hull)
    for j in range(count):
        polygon[j] = points[hull[j]]
    return h, count


@njit(cache=True)
def _balance(contact_points, axes, up, plane, com, momentum, wrench, mass, g, halves, points,
             xy, hull, out, polygon):
    """Into ``out``: the ground height, the ZMP (3) and 1 if defined, the capture point (3),
    omega (0: undefined), the two margins (NaN without a point), the centroidal momentum's
    rate (6) and the centre of mass's velocity (3); into ``polygon`` the support polygon's
    vertices (:func:`_support`, with the scratch ``points``, ``xy`` and ``hull``); returns
    their count. Its 3-vectors are tuples (contacts.py's helpers): it makes no small array."""
    u = _three(up)
    h, count = _support(contact_points, axes, halves, u, plane, points, xy, hull, polygon)
    out[0] = h
    out[1:] = 0.0
    out[9] = out[10] = np.nan
    for j in range(3):
        out[11 + j] = wrench[j] - mass * g * up[j]  # Newton: the total wrench and m g
        out[14 + j] = wrench[3 + j]
        out[17 + j] = momentum[j] / mass
    centre = _three(com)
    z = _dot(centre, u) - h
    base = _add(centre, u, -z)  # the centre of mass's foot on the plane
    f, n = _three(wrench), _three(wrench, 3)
    push = _dot(f, u)
    if push > 1e-9 * mass * max(g, 1.0):  # the moment about ``base``; where it is vertical
        lever = _cross(u, _add(n, _cross(u, f), z))
        zmp = (base[0] + lever[0] / push, base[1] + lever[1] / push, base[2] + lever[2] / push)
        out[1], out[2], out[3] = zmp
        out[4] = 1.0
        out[9] = _margin(_in_plane(zmp, plane), xy, hull, count)
    if z > 0 and g > 0:
        omega = math.sqrt(g / z)
        xi = (centre[0] + momentum[0] / mass / omega, centre[1] + momentum[1] / mass / omega,
              centre[2] + momentum[2] / mass / omega)
        xi = _add(xi, u, -(_dot(xi, u) - h))
        out[5], out[6], out[7] = xi
        out[8] = omega
        out[10] = _margin(_in_plane(xi, plane), xy, hull, count)
    return count


_BALANCE = Direct(_balance)


@njit(cache=True, inline="always")
def _in_plane(p, plane):
    """``p``'s coordinates (a 3-tuple) along the ground plane's two axes (the rows of
    ``plane``), as a tuple."""
    return _dot(p, plane[0]), _dot(p, plane[1])


@njit(cache=True)
def _cross2(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


@njit(cache=True)
def _hull(xy, out):
    """Andrew's monotone chain: the convex hull's vertices of the 2-D points ``xy``,
    counter-clockwise, into ``out`` (indices); returns their count (1 or 2: no area)."""
    n = xy.shape[0]
    order = np.arange(n)
    for i in range(1, n):  # by x, then y (a handful of points: insertion sort)
        j = i
        while j > 0 and (xy[order[j], 0] < xy[order[j - 1], 0] or (
                xy[order[j], 0] == xy[order[j - 1], 0] and xy[order[j], 1] < xy[order[j - 1], 1])):
            order[j], order[j - 1] = order[j - 1], order[j]
            j -= 1
    k = 0
    for half in range(2):
        start = k
        for j in range(n):
            i = order[j] if half == 0 else order[n - 1 - j]
            while k >= start + 2 and _cross2(xy[out[k - 2]], xy[out[k - 1]], xy[i]) <= 1e-12:
                k -= 1
            out[k] = i
            k += 1
        k -= 1  # each half's last point is the other's first
    if k == 0 or (k == 2 and np.sum((xy[out[0]] - xy[out[1]]) ** 2) < 1e-24):
        k = 1  # every point in one place
    return k


@njit(cache=True, inline="always")
def _segment_distance(p, a, b):
    dx, dy = b[0] - a[0], b[1] - a[1]
    length = dx * dx + dy * dy
    s = 0.0 if length == 0 else min(1.0, max(0.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy)
                                                 / length))
    ex, ey = a[0] + s * dx - p[0], a[1] + s * dy - p[1]
    return math.sqrt(ex * ex + ey * ey)


@njit(cache=True)
def _margin(p, xy, hull, count):
    """Signed distance of ``p`` to the polygon ``xy[hull[:count]]``'s edge: + inside."""
    outside = count < 3
    nearest = np.inf
    for j in range(count):
        a, b = xy[hull[j]], xy[hull[(j + 1) % count]]
        nearest = min(nearest, _segment_distance(p, a, b))
        if count >= 3 and _cross2(a, b, p) < 0:
            outside = True
    return -nearest if outside else nearest
