"""``p = M v`` and ``C^T v`` against Pinocchio (its CRBA and its Christoffel Coriolis matrix,
seen through our reduced coordinates), and against ``dM/dt = C + C^T``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pinref import PinRef, random_state, robot_path
from urdfs import trees

from rbd_ros.dynamics import Data, crba, load_urdf, load_urdf_string, rnea
from rbd_ros.dynamics.algorithm.momentum import momentum, observer_terms_core
from rbd_ros.dynamics.algorithm.rnea import SLIDING_SPEED
from rbd_ros.dynamics.multibody.model import Model

ROBOTS = [(robot_path("panda"), False), (robot_path("talos"), True),
          (str(Path(robot_path("talos")).with_name("talos_reduced.urdf")), True)]


def pinocchio_ctv(ref: PinRef, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    C = pin.computeCoriolisMatrix(ref.pm, ref.pd, ref.q(q), ref.G @ v)
    ctv: np.ndarray = ref.G.T @ (np.reshape(C, (ref.pm.nv, ref.pm.nv)).T @ (ref.G @ v))
    return ctv


def sliding_friction(m: Model, v: np.ndarray) -> np.ndarray:
    """Each joint's URDF friction at ``v`` on its coordinate (a mimic joint's on its source's,
    through its multiplier): viscous, and Coulomb times tanh(speed / SLIDING_SPEED)."""
    out, index = np.zeros(m.nv), {j.name: j.idx_v for j in m.joints}
    for j in m.joints:
        if j.nv != 1 or j.kind == "floating":
            continue
        k, mult = (j.idx_v, 1.0) if j.mimic is None else (index[j.mimic[0]], j.mimic[1])
        speed = mult * v[k]
        out[k] += mult * (j.damping * speed + j.friction * np.tanh(speed / SLIDING_SPEED))
    return out


def check(m: Model, source: str, ff: bool, seed: int) -> None:
    d = Data(m)
    q, v, _, _ = random_state(m, np.random.default_rng(seed))
    p, ctv = momentum(m, d, q, v)
    # the observer's terms in one call: C^T v - g - friction (g: RNEA at rest; the friction
    # each joint's URDF gives, its Coulomb part through tanh(v / SLIDING_SPEED))
    z = np.zeros(m.nv)
    for fric in (False, True):
        p2, drift = np.empty(m.nv), np.empty(m.nv)
        observer_terms_core(m.mi, m.mf, m.maps, m.lin, q, v, fric, d.W, d.wv, p2, drift)
        np.testing.assert_array_equal(p2, p)
        want = ctv - rnea(m, d, q, z, z) - (sliding_friction(m, v) if fric else 0.0)
        np.testing.assert_allclose(drift, want, rtol=1e-12,
                                   atol=1e-12 * max(1.0, np.abs(drift).max()))
    scale = max(1.0, float(np.abs(p).max()) * float(np.abs(v).max()))
    np.testing.assert_allclose(p, crba(m, d, q) @ v, rtol=1e-10, atol=1e-10 * scale)
    np.testing.assert_allclose(ctv, pinocchio_ctv(PinRef(m, source, ff), q, v), rtol=1e-9,
                               atol=1e-9 * scale)
    # C v (RNEA without gravity) + C^T v = dM/dt v: central differences of M along v
    if not ff:  # (a free flyer's configuration is not moved by q + h v)
        h = 1e-6
        dM = (crba(m, d, q + h * v) - crba(m, d, q - h * v)) / (2 * h)
        cv = rnea(m.with_gravity(np.zeros(3)), Data(m), q, v, z)
        np.testing.assert_allclose(cv + ctv, dM @ v, rtol=1e-6, atol=1e-6 * scale)


@pytest.mark.parametrize("path, ff", ROBOTS)
def test_momentum_and_coriolis_transpose_equal_pinocchios(path: str, ff: bool) -> None:
    m = load_urdf(path, floating_base=ff)
    for seed in range(3):
        check(m, path, ff, seed)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(urdf=trees(), floating=st.booleans(), seed=st.integers(0, 2**31))
def test_momentum_on_random_trees(urdf: str, floating: bool, seed: int) -> None:
    m = load_urdf_string(urdf, floating_base=floating)
    if m.nv:
        check(m, urdf, floating, seed)
