"""Where numba keeps rbd_ros's compiled kernels, and filling that cache at install time.

numba compiles each kernel on its first call (about 20 s for the dynamics alone on these
machines) and keeps the machine code beside the module, in ``__pycache__``, or where
:mod:`rbd_ros.cache_dir` points it. The set-up script and a colcon build run ``python -m
rbd_ros.numba_cache`` once, so that a node loads its kernels in a fraction of a second instead
of compiling them when it starts.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path


def load_node_kernels(floating_base: bool = True) -> None:
    """The kernels a node calls, loaded from the cache (compiled if it is empty): each called
    once on a bundled robot with the argument types the nodes give it; with ``floating_base``
    also the floating-base node's. Once per process."""
    global _loaded
    if _loaded >= 1 + floating_base:
        return
    import numpy as np

    from .dynamics import Data, aba, crba, load_urdf, rnea
    from .dynamics.algorithm.floating import forward_dynamics, inverse_dynamics
    from .dynamics.contact.contacts import Contact, solve
    from .dynamics.estimation.contact_estimation import ContactEstimator
    from .dynamics.estimation.observer import CollisionDetector, MomentumObserver
    from .robots import ARM, QUADRUPED

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
    solve(robot, d, q, v, v, feet, 0.7)
    solve(robot, d, q, v, v, [sole], 0.7)
    forward_dynamics(robot, d, q, v, v[6:])
    inverse_dynamics(robot, d, q, v, v[6:])
    ContactEstimator(robot, [*feet[1:], sole]).update(0.0, q, v, v[6:])
    _loaded = 2


def _merge_once(n: int) -> None:
    """The kernels that read a joint state, with the types the nodes give them: a message's
    bytes and read-only values (cdr.match_layout, joint_names.merge)."""
    import numpy as np

    from .cdr import joint_state, joint_state_layout, match_layout
    from .joint_names import merge

    raw = np.frombuffer(joint_state(["a"], (1, 1, 1)), dtype=np.uint8)
    runs = np.array(joint_state_layout(raw.tobytes()).shared(), dtype=np.int64)
    match_layout(raw, np.zeros(1, dtype=np.int64), raw, runs, np.empty((0, 2), dtype=np.int64),
                 np.empty((1, 0), dtype=np.uint64))
    idx = np.arange(n)
    values = np.zeros(n)
    values.flags.writeable = False
    merge(idx, idx, idx, values, values, values, 1, np.zeros(n), np.zeros(n), np.zeros(n),
          np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool), np.ones(n), 1e9)


_loaded = 0  # 1: a fixed-base node's kernels are loaded, 2: a floating-base node's too


def fill() -> None:
    """Call every kernel once with the argument types the nodes and the analysis give it, so
    that each is compiled into the cache."""
    import numpy as np

    from .dynamics import aba_batch, crba_batch, load_urdf, regressor_batch, rnea_batch
    from .robots import ARM

    load_node_kernels()
    arm = load_urdf(ARM)
    Q, Z = np.tile(arm.neutral(), (4, 1)), np.zeros((4, arm.nv))
    rnea_batch(arm, Q, Z, Z, gravity_out=np.empty_like(Z))
    aba_batch(arm, Q, Z, Z)
    crba_batch(arm, Q)
    regressor_batch(arm, Q, Z, Z)  # rbd-ros identify
    try:  # the offline tools' own dependencies may not be installed where only nodes run
        from .bag.analyze import AnalyzeOptions, analyze
        from .bag.synthetic import generate
    except ImportError as e:
        print(f"rbd_ros: the analysis kernels are not compiled ({e}): `rbd-ros analyze` "
              "compiles them on its first run", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp) / "recording", 2000)
        analyze([Path(tmp) / "recording"], Path(tmp) / "out", AnalyzeOptions(progress=False))


def main() -> int:
    t = time.perf_counter()
    fill()
    where = os.environ.get("NUMBA_CACHE_DIR") or "beside the modules"
    print(f"rbd_ros: compiled kernels cached ({where}) in {time.perf_counter() - t:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
