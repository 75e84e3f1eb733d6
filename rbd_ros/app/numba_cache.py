"""Where numba keeps rbd_ros's compiled kernels, and filling that cache at install time.

numba compiles each kernel on its first call (about 20 s for the dynamics alone on these
machines) and keeps the machine code beside the module, in ``__pycache__``, or where
:mod:`rbd_ros.runtime.cache_dir` points it. The set-up script and a colcon build run ``python -m
rbd_ros.app.numba_cache`` once, so that a node loads its kernels in a fraction of a second instead
of compiling them when it starts.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from ..runtime.kernels import load_node_kernels


def fill() -> None:
    """Call every kernel once with the argument types the nodes and the analysis give it, so
    that each is compiled into the cache."""
    import numpy as np

    from ..dynamics import aba_batch, crba_batch, load_urdf, regressor_batch, rnea_batch
    from ..robots import ARM

    load_node_kernels()
    arm = load_urdf(ARM)
    Q, Z = np.tile(arm.neutral(), (4, 1)), np.zeros((4, arm.nv))
    rnea_batch(arm, Q, Z, Z, gravity_out=np.empty_like(Z))
    aba_batch(arm, Q, Z, Z)
    crba_batch(arm, Q)
    regressor_batch(arm, Q, Z, Z)  # rbd-ros identify
    try:  # the offline tools' own dependencies may not be installed where only nodes run
        from ..bag.analyze import AnalyzeOptions, analyze
        from ..bag.synthetic import generate
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
