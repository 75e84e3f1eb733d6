"""The contact split's QP solver (rbd_ros.dynamics.contact.qp, Goldfarb-Idnani) against quadprog, the
library that implements the same method, on thousands of random problems: dense ones and ones
shaped like the contact split (friction pyramids and sole wrench cones at random contact frames,
a random wrench to produce). Each answer is also checked on its own against the optimality
(KKT) conditions, which need no solver: stationarity, feasibility, signs, complementarity.
Where the tight constraints are linearly dependent (a sole's wrench cone at a corner) the
multipliers are not unique: there the answers, the active sets and the KKT conditions are
compared, the multipliers elsewhere."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import quadprog

from rbd_ros.dynamics.contact.contacts import Contact, _Cone
from rbd_ros.dynamics.contact.qp import INFEASIBLE, OPTIMAL, solve

Problem = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]


def dense(rng: np.random.Generator) -> Problem:
    n = int(rng.integers(2, 15))
    m = int(rng.integers(1, 25))
    meq = int(rng.integers(0, min(n, m) + 1))
    F = rng.standard_normal((n, n))
    return (F @ F.T + 0.1 * np.eye(n), 10 * rng.standard_normal(n),
            rng.standard_normal((m, n)), 3 * rng.standard_normal(m), meq)


def skew(p: np.ndarray) -> np.ndarray:
    return np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])


def rotation(rng: np.random.Generator, tilt: float) -> np.ndarray:
    axis = rng.standard_normal(3)
    axis /= np.linalg.norm(axis)
    a = tilt * rng.uniform(-1, 1)
    K = skew(axis)
    return np.asarray(np.eye(3) + math.sin(a) * K + (1 - math.cos(a)) * K @ K, dtype=float)


def contact_shaped(rng: np.random.Generator) -> Problem:
    """1-4 contacts (points or soles, some with force bounds) at random frames around the
    origin, tilted up to 40 degrees; the wrench a 60 kg body needs, pushed at random."""
    blocks, cones = [], []
    for _ in range(int(rng.integers(1, 5))):
        sole = rng.random() < 0.5
        c = Contact("l", half_length=0.1 if sole else 0.0, half_width=0.05 if sole else 0.0,
                    min_force=float(rng.choice([0.0, 20.0])),
                    max_force=float(rng.choice([math.inf, 400.0])))
        cone = _Cone(c, float(rng.uniform(0.3, 1.0)))
        R, p = rotation(rng, math.radians(40)), rng.uniform(-0.4, 0.4, 3) * [1, 1, 0.1]
        block = np.zeros((6, 6))
        block[:3, :3], block[3:, :3], block[3:, 3:] = R, skew(p) @ R, R
        blocks.append(block[:, : cone.size])
        cones.append(cone)
    A = np.hstack(blocks)
    n = A.shape[1]
    rows = np.zeros((sum(len(k.lower) for k in cones), n))
    r = o = 0
    for k in cones:
        rows[r : r + len(k.lower), o : o + k.size] = k.rows
        r, o = r + len(k.lower), o + k.size
    need = np.r_[60 * 9.81 * np.array([0, 0, 1.0]), np.zeros(3)]
    need += rng.standard_normal(6) * [60, 60, 100, 20, 20, 10] * rng.uniform(0, 1.5)
    G = np.diag(np.concatenate([k.weight for k in cones]))
    return (G, np.zeros(n), np.vstack([A, rows]),
            np.r_[need, np.concatenate([k.lower for k in cones])], 6)


def check_kkt(G: np.ndarray, a: np.ndarray, C: np.ndarray, b: np.ndarray, meq: int,
              x: np.ndarray, lam: np.ndarray) -> None:
    scale = max(1.0, float(np.abs(b).max()), float(np.abs(a).max()))
    s = C @ x - b
    np.testing.assert_allclose(G @ x - a, C.T @ lam, atol=1e-9 * scale)  # stationarity
    assert np.abs(s[:meq]).max(initial=0) < 1e-9 * scale  # the equalities hold
    assert s[meq:].min(initial=0) > -1e-9 * scale  # the inequalities hold
    assert lam[meq:].min(initial=0) >= 0  # their multipliers push, never pull
    assert np.abs(lam[meq:] * s[meq:]).max(initial=0) < 1e-9 * scale**2  # complementary


@pytest.mark.parametrize("make", [dense, contact_shaped])
def test_same_answers_as_quadprog(make: Callable[[np.random.Generator], Problem]) -> None:
    rng = np.random.default_rng(7)
    count = {OPTIMAL: 0, INFEASIBLE: 0}
    unique = 0
    for _ in range(3000):
        G, a, C, b, meq = make(rng)
        status, x, lam = solve(G, a, C, b, meq)
        try:
            xr, _, _, _, lr, _ = quadprog.solve_qp(G, a, C.T.copy(), b, meq)
        except ValueError as e:  # quadprog: "constraints are inconsistent, no solution"
            assert "inconsistent" in str(e)
            assert status == INFEASIBLE
            count[INFEASIBLE] += 1
            continue
        assert status == OPTIMAL
        count[OPTIMAL] += 1
        scale = max(1.0, float(np.abs(xr).max()))
        np.testing.assert_allclose(x, xr, atol=1e-9 * scale)
        # the same active set: the constraints that hold tight at either answer
        tight = np.abs(C @ x - b) < 1e-7 * scale
        assert (tight == (np.abs(C @ xr - b) < 1e-7 * scale)).all()
        # the multipliers are unique (none active: numpy < 2 has no rank of an empty matrix)
        if not tight.any() or np.linalg.matrix_rank(C[tight]) == tight.sum():
            unique += 1
            np.testing.assert_allclose(lam, lr, atol=1e-9 * max(1.0, float(np.abs(lr).max())))
        check_kkt(G, a, C, b, meq, x, lam)
    assert min(count.values()) > 300, count  # both kinds of answer well represented
    assert unique > 300, unique


def test_what_it_refuses() -> None:
    G = np.eye(2)
    # x0 >= 1 and -x0 >= 0: no x
    assert solve(G, np.zeros(2), np.array([[1.0, 0], [-1.0, 0]]), np.array([1.0, 0]), 0)[0] \
        == INFEASIBLE
    # two equalities on one line with different values
    assert solve(G, np.zeros(2), np.array([[1.0, 1], [2.0, 2]]), np.array([1.0, 3]), 2)[0] \
        == INFEASIBLE
    # G not positive definite
    assert solve(-G, np.zeros(2), np.array([[1.0, 0]]), np.array([0.0]), 0)[0] != OPTIMAL
    # without a constraint: the unconstrained minimum
    status, x, _ = solve(np.diag([2.0, 4.0]), np.array([2.0, 2.0]), np.zeros((0, 2)),
                         np.zeros(0), 0)
    assert status == OPTIMAL
    np.testing.assert_allclose(x, [1.0, 0.5], atol=1e-15)


def test_dependent_equalities_that_agree_are_met_once() -> None:
    """Two point feet: no force gives a moment about the line through them, so the six
    equalities have rank five. When the needed wrench has none either (a trot's stance pair
    carrying a body balanced over it), the answer is the least-norm one, as the pseudo-inverse
    gives it; when it has some, there is none."""
    p1, p2 = np.array([0.3, 0.2, 0.0]), np.array([-0.3, -0.2, 0.0])
    A = np.block([[np.eye(3), np.eye(3)], [skew(p1), skew(p2)]])
    assert np.linalg.matrix_rank(A) == 5
    up = np.zeros((2, 6))
    up[0, 2] = up[1, 5] = 1.0  # both normal forces >= 0
    C = np.vstack([A, up])
    need = A @ np.array([1.0, -2.0, 60.0, -1.0, 2.0, 40.0])
    status, x, lam = solve(np.eye(6), np.zeros(6), C, np.r_[need, 0.0, 0.0], 6)
    assert status == OPTIMAL
    np.testing.assert_allclose(x, np.linalg.pinv(A) @ need, atol=1e-12)
    np.testing.assert_array_equal(lam[6:], 0.0)
    along = np.r_[0.0, 0.0, 0.0, p1 - p2]  # a moment about the line through the feet
    assert solve(np.eye(6), np.zeros(6), C, np.r_[need + along, 0.0, 0.0], 6)[0] == INFEASIBLE
