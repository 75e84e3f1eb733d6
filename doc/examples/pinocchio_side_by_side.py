"""The same computations in Pinocchio and in rbd_ros, side by side, on the bundled 7-joint arm:
each line prints the largest difference of the two answers.

    .venv/bin/python doc/examples/pinocchio_side_by_side.py     (Pinocchio: pip install pin)

rbd_ros's vectors are in the order of ``model.joint_names`` (that of ``/joint_states``: a
continuous joint has one coordinate, a mimic joint none); Pinocchio's are in its own joint
order. On this arm (revolute joints only) the two differ at most by that order, so Pinocchio's
vectors are built by name.
"""

import numpy as np
import pinocchio as pin

from rbd_ros.dynamics import (
    Data,
    aba,
    crba,
    gravity,
    load_urdf,
    momentum,
    nonlinear_effects,
    regressor,
    rnea,
)
from rbd_ros.robots import ARM

pm = pin.buildModelFromUrdf(str(ARM))  # Pinocchio: a model and its data
pd = pm.createData()
model = load_urdf(ARM)  # rbd_ros: a model and its work arrays
data = Data(model)

at = [pm.joints[pm.getJointId(name)].idx_v for name in model.joint_names]


def pinocchio_order(x: np.ndarray) -> np.ndarray:
    """A vector in rbd_ros's joint order, in Pinocchio's."""
    y = np.zeros(pm.nv)
    y[at] = x
    return y


rng = np.random.default_rng(0)
q, v, a, tau = (rng.uniform(-1.0, 1.0, model.nv) for _ in range(4))
qp, vp, ap, taup = (pinocchio_order(x) for x in (q, v, a, tau))
M = pin.crba(pm, pd, qp)
M = np.triu(M) + np.triu(M, 1).T  # Pinocchio fills the upper triangle
C = pin.computeCoriolisMatrix(pm, pd, qp, vp)
p, ctv = momentum(model, data, q, v)

pairs = {
    "rnea(model, data, q, v, a)": (rnea(model, data, q, v, a),
                                   pin.rnea(pm, pd, qp, vp, ap)[at]),
    "aba(model, data, q, v, tau)": (aba(model, data, q, v, tau),
                                    pin.aba(pm, pd, qp, vp, taup)[at]),
    "crba(model, data, q)": (crba(model, data, q), M[np.ix_(at, at)]),
    "gravity(model, data, q)": (gravity(model, data, q),
                                pin.computeGeneralizedGravity(pm, pd, qp)[at]),
    "nonlinear_effects(model, data, q, v)": (nonlinear_effects(model, data, q, v),
                                             pin.nonLinearEffects(pm, pd, qp, vp)[at]),
    "momentum(model, data, q, v)[0]: M v": (p, (M @ vp)[at]),
    "momentum(model, data, q, v)[1]: C^T v": (ctv, (C.T @ vp)[at]),
    "regressor(model, data, q, v, a)": (
        regressor(model, data, q, v, a),
        pin.computeJointTorqueRegressor(pm, pd, qp, vp, ap)[at]),
}
for name, (ours, theirs) in pairs.items():
    print(f"{name:<40} max difference {np.abs(ours - theirs).max():.1e}")
