"""The kernels a node calls, loaded from numba's cache (:mod:`rbd_ros.app.numba_cache` fills it
at install) before the node answers its first message."""

from __future__ import annotations


def load_node_kernels(floating_base: bool = True) -> None:
    """The kernels a node calls, loaded from the cache (compiled if it is empty): each called
    once on a bundled robot with the argument types the nodes give it; with ``floating_base``
    also the floating-base node's. Once per process."""
    global _loaded
    if _loaded >= 1 + floating_base:
        return
    import numpy as np

    from ..dynamics import Data, aba, centroidal, crba, load_urdf, rnea
    from ..dynamics.algorithm.floating import forward_dynamics, inverse_dynamics
    from ..dynamics.contact.balance import Support
    from ..dynamics.contact.contacts import Contact, solve
    from ..dynamics.estimation.contact_estimation import ContactEstimator
    from ..dynamics.estimation.observer import CollisionDetector, MomentumObserver
    from ..robots import ARM, QUADRUPED
    from ..wire.odometry_read import read_odometry

    arm = load_urdf(ARM)
    d = Data(arm)
    z = np.zeros(arm.nv)
    rnea(arm, d, arm.neutral(), z, z)
    aba(arm, d, arm.neutral(), z, z)
    crba(arm, d, arm.neutral())
    MomentumObserver(arm, 1.0).update(0.0, arm.neutral(), z, z)
    CollisionDetector(np.ones(arm.nv), 0.5).update(z, z, np.ones(arm.nv, dtype=bool))
    _merge_once(arm.nv)
    _loaded = max(_loaded, 1)
    if not floating_base:
        return
    robot = load_urdf(QUADRUPED, floating_base=True)
    d = Data(robot)
    q, v = robot.neutral(), np.zeros(robot.nv)
    feet = [Contact(link) for link in robot.frames if link.endswith("foot")]
    sole = Contact(feet[0].link, half_length=0.05, half_width=0.03)
    Support(robot, feet).balance(solve(robot, d, q, v, v, feet, 0.7))
    solve(robot, d, q, v, v, [sole], 0.7)
    centroidal(robot, d, q, v)
    forward_dynamics(robot, d, q, v, v[6:])
    inverse_dynamics(robot, d, q, v, v[6:])
    ContactEstimator(robot, [*feet[1:], sole]).update(0.0, q, v, v[6:])
    words = np.empty(13, dtype=np.uint64)  # bytes as rclpy gives them: read-only
    read_odometry(np.frombuffer(b"", dtype=np.uint8), np.empty(1, dtype=np.int64), words,
                  words.view(np.float64), 1.0, 1.0)
    _loaded = 2


def _merge_once(n: int) -> None:
    """The kernels that read a joint state, with the types the nodes give them: a message's
    bytes and read-only values (layout_match.match_layout and merge_message,
    joint_names.merge)."""
    import numpy as np

    from ..wire.cdr import joint_state, joint_state_layout
    from ..wire.joint_names import merge
    from ..wire.layout_match import match_layout, merge_message

    raw = np.frombuffer(joint_state(["a"], (1, 1, 1)), dtype=np.uint8)
    layout = joint_state_layout(raw.tobytes())
    runs = np.array(layout.shared(), dtype=np.int64)
    match_layout(raw, np.zeros(1, dtype=np.int64), raw, runs, np.empty((0, 2), dtype=np.int64),
                 np.empty((1, 0), dtype=np.uint64))
    idx = np.arange(n)
    values = np.zeros(n)
    values.flags.writeable = False
    arrays = (np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n, dtype=np.int64),
              np.zeros(n, dtype=bool), np.ones(n))
    merge(idx, idx, idx, values, values, values, 1, *arrays, 1e9)
    one = np.zeros(1, dtype=np.int64)
    merge_message(raw, raw, runs, np.array(layout.fields, dtype=np.int64), one, one, one,
                  *arrays, 1e9, one)


_loaded = 0  # 1: a fixed-base node's kernels are loaded, 2: a floating-base node's too
