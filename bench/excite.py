"""Excitation quality on the bundled arm: ``rbd-ros excite``'s optimised trajectory beside the
plain multi-sine it starts from, each run for 30 s on the arm as built (inertias 0.6-1.4 times
the URDF's, friction the URDF lacks; efforts from Pinocchio with 0.5 N m of white noise) and
identified: the base regressor's condition number, and per joint the identified model's RMS
error against the exact torques of a recording neither saw, over all its states and where the
joint slides (the arm's Coulomb friction is sign(v), the models' tanh(v / SLIDING_SPEED)).

    .venv/bin/python bench/excite.py

About a minute (identifying the two recordings is most of it).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as rbd-ros excite runs it (rbd_ros.app.cli)

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testkit"))

from builtarm import NAMES, built_arm, efforts, exciting, sliding_rms, write

from rbd_ros.dynamics import load_urdf, rnea_batch
from rbd_ros.dynamics.algorithm.rnea import SLIDING_SPEED
from rbd_ros.identify.excite import excite
from rbd_ros.identify.run import IdentifyOptions, identify
from rbd_ros.robots import ARM

RATE, NOISE, SECONDS = 500.0, 0.5, 30.0


def excitation_quality() -> None:
    print(f"\n# Excitation: {SECONDS:.0f} s of each on the arm as built, {NOISE} N m of effort "
          "noise (bench/excite.py)")
    model = load_urdf(ARM)
    t0 = time.perf_counter()
    found = excite(model)
    took = time.perf_counter() - t0
    rng = np.random.default_rng(21)
    built = built_arm(rng)
    fv, fc = rng.uniform(0.1, 2.0, len(NAMES)), rng.uniform(0.2, 3.0, len(NAMES))
    t = np.arange(0.0, SECONDS, 1.0 / RATE)
    _, q, v, a = exciting(t[-1] + 1.0 / RATE, rng)
    exact = efforts(built, q, v, a, fv, fc)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        unseen = write(Path(tmp) / "unseen", t, q, exact + rng.normal(scale=NOISE,
                                                                      size=exact.shape))
        for name, f in (("optimised", found.trajectory), ("multi-sine", found.multisine)):
            qf, vf, af = f.sample(t)
            e = efforts(built, qf, vf, af, fv, fc)
            bag = write(Path(tmp) / name, t, qf, e + rng.normal(scale=NOISE, size=e.shape))
            identify([bag], Path(tmp) / f"out_{name}", IdentifyOptions(), [unseen])
            fitted = load_urdf(Path(tmp) / f"out_{name}" / "identified.urdf")
            miss = rnea_batch(fitted, q, v, a, friction=True) - exact
            rows[name] = np.sqrt(np.mean(miss**2, axis=0))
            rows[f"{name}, sliding"] = sliding_rms(miss, v)
    cond = {"optimised": found.condition, "multi-sine": found.multisine_condition}
    print(f"optimised in {took:.0f} s")
    print("| trajectory | condition number | " + " | ".join(NAMES) + " | mean |")
    print("|---|---|" + "---|" * (len(NAMES) + 1))
    for name, err in rows.items():
        print(f"| {name} | {cond[name.split(',')[0]]:.0f} | "
              + " | ".join(f"{x:.3f}" for x in err) + f" | {err.mean():.3f} |")
    print("(per joint: RMS error against the exact torques of an unseen recording, N m; "
          f"'sliding': its states where the joint is faster than {5 * SLIDING_SPEED:g} rad/s, "
          "where the arm's Coulomb friction, sign(v), and the model's, tanh(v / "
          f"{SLIDING_SPEED:g}), agree)")


if __name__ == "__main__":
    excitation_quality()
