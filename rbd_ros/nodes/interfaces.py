"""The services and message of rbd_ros_interfaces, or one line on what to do without them.

colcon does not look inside a folder that is itself a package: a workspace built with a plain
``colcon build`` has rbd_ros but not its interface package, and the nodes would die with
``No module named 'rbd_ros_interfaces'``.
"""

from __future__ import annotations

try:
    from rbd_ros_interfaces.msg import ActiveContacts, Balance
    from rbd_ros_interfaces.srv import (
        CentroidalDynamics,
        FloatingBaseDynamics,
        ForwardDynamics,
        GravityTorques,
        InverseDynamics,
        MassMatrix,
    )
except ModuleNotFoundError as e:
    if not (e.name or "").startswith("rbd_ros_interfaces"):
        raise
    raise SystemExit(
        "error: the interface package rbd_ros_interfaces is not installed. It lives inside "
        "the rbd_ros repository, where colcon does not look by itself: build both with "
        "`colcon build --base-paths src/rbd_ros src/rbd_ros/rbd_ros_interfaces`, then "
        "`source install/setup.bash` (a pip set-up: bash scripts/setup.sh)") from None

__all__ = ["ActiveContacts", "Balance", "CentroidalDynamics", "FloatingBaseDynamics",
           "ForwardDynamics", "GravityTorques", "InverseDynamics", "MassMatrix"]
