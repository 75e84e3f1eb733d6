"""The joint-torque regressor (issue 13's base): ``Y pi`` is RNEA, and ``Y`` is Pinocchio's
``computeJointTorqueRegressor`` seen through our reduced coordinates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pinref import PinRef, random_state, rel_err, robot_path
from urdfs import trees

from rbd_ros.dynamics import Data, ModelError, load_urdf, load_urdf_string, rnea
from rbd_ros.dynamics.algorithm.regressor import inertial_parameters, regressor
from rbd_ros.dynamics.multibody.model import Model

ROBOTS = [(robot_path("panda"), False), (robot_path("talos"), True),
          (str(Path(robot_path("talos")).with_name("talos_reduced.urdf")), True)]


def pinocchio_regressor(m: Model, ref: PinRef, q: np.ndarray, v: np.ndarray,
                        a: np.ndarray) -> np.ndarray:
    """Pinocchio's regressor with its columns in our body order and its rows reduced."""
    Yp = pin.computeJointTorqueRegressor(ref.pm, ref.pd, ref.q(q), ref.G @ v, ref.G @ a)
    Yp = np.reshape(Yp, (ref.pm.nv, -1))  # eigenpy gives a 1 x n matrix as a vector
    jid = [ref.pm.getJointId(name) for name in m.body_joints]
    Y: np.ndarray = ref.G.T @ Yp[:, np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in jid])]
    return Y


@pytest.mark.parametrize("path, ff", ROBOTS)
def test_regressor_times_parameters_is_rnea_and_equals_pinocchios(path: str, ff: bool) -> None:
    m = load_urdf(path, floating_base=ff)
    d = Data(m)
    ref = PinRef(m, path, ff)
    pi = inertial_parameters(m)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, v, a, _ = random_state(m, rng)
        Y = regressor(m, d, q, v, a)
        assert Y.shape == (m.nv, 10 * m.nb)
        assert rel_err(Y @ pi, rnea(m, d, q, v, a)) < 1e-12
        assert rel_err(Y, pinocchio_regressor(m, ref, q, v, a)) < 1e-12


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(urdf=trees(), floating=st.booleans(), seed=st.integers(0, 2**31))
def test_regressor_on_random_trees(urdf: str, floating: bool, seed: int) -> None:
    m = load_urdf_string(urdf, floating_base=floating)
    if m.nv == 0:
        return
    d = Data(m)
    q, v, a, _ = random_state(m, np.random.default_rng(seed))
    Y = regressor(m, d, q, v, a)
    assert rel_err(Y @ inertial_parameters(m), rnea(m, d, q, v, a)) < 1e-9
    assert rel_err(Y, pinocchio_regressor(m, PinRef(m, urdf, floating), q, v, a)) < 1e-9


def test_regressor_refuses_a_state_of_the_wrong_size() -> None:
    m = load_urdf(robot_path("panda"))
    z = np.zeros(m.nv)
    with pytest.raises(ModelError, match=f"v must have {m.nv} entries"):
        regressor(m, Data(m), z, z[:-1], z)
