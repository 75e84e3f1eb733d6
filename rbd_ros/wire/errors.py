"""The nodes' error for what they are given, and the range every number they are given must
be in."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


class InputError(ValueError):
    """A message or service request a node cannot use (a joint state, a command, a trajectory,
    odometry, an IMU reading, a request's joints or wrenches); the text says why and what to
    send instead. The node drops it, says so, and keeps its last good state."""


#: the largest magnitude an input value may have (a position, velocity, effort, odometry, a
#: request's numbers): beyond it no sensor reads and no request means it, and the dynamics'
#: products of such values (v^2 times an inertia) would no longer be finite
LIMIT = 1e9


def usable(a: NDArray[np.float64], what: str) -> NDArray[np.float64]:
    """``a`` if every value is finite and within LIMIT; else InputError naming ``what`` and
    the worst value. (Two reductions, no arithmetic that could overflow and warn.)"""
    if a.size and not (a.max() <= LIMIT and a.min() >= -LIMIT):  # False for NaN too
        flat = a.reshape(-1)
        if not np.isfinite(flat).all():
            raise InputError(f"{what} contains NaN or inf")
        worst = flat[np.argmax(np.abs(flat))]
        raise InputError(f"{what} contains {worst:.3g}: no reading or request means a value "
                         f"beyond {LIMIT:g}")
    return a
