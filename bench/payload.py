"""Payload identification against recording length: ``rbd-ros identify --payload link7`` on the
bundled arm carrying 1.7 kg (``testkit/payloads.py``), its efforts from Pinocchio on the URDF with
the payload plus the URDF's joint friction and white noise, the recording named as the arm
without it; three quarters of each recording fitted. Three seeds per length: the worst error."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testkit"))

from builtarm import NAMES, efforts, exciting, write  # noqa: E402
from payloads import COM, MASS, with_payload  # noqa: E402

from rbd_ros.dynamics import load_urdf  # noqa: E402
from rbd_ros.identify.payload import identify_payload  # noqa: E402
from rbd_ros.identify.run import IdentifyOptions  # noqa: E402
from rbd_ros.robots import ARM  # noqa: E402

NOISE = 0.3  # N m


def payload_accuracy(lengths: tuple[float, ...] = (5.0, 10.0, 20.0, 40.0)) -> None:
    friction = {j.name: (j.damping, j.friction) for j in load_urdf(ARM).joints}
    fv, fc = (np.array([friction[n][k] for n in NAMES]) for k in (0, 1))
    urdf = with_payload()
    print(f"\n## identify --payload on the arm carrying {MASS} kg on link7, effort noise "
          f"{NOISE} N m (500 Hz), worst of three seeds")
    print(f"{'recording s':>11} {'mass error %':>13} {'+- (1 sigma) %':>15} {'CoM error mm':>13} "
          f"{'+- mm':>7} {'inertia physical':>17} {'fit s':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for seconds in lengths:
            rows = []
            for seed in (1, 2, 3):
                rng = np.random.default_rng(seed)
                t, q, v, a = exciting(seconds, rng)
                exact = efforts(urdf, q, v, a, fv, fc)
                bag = write(Path(tmp) / f"r{seconds}_{seed}", t, q,
                            exact + rng.normal(scale=NOISE, size=exact.shape))
                start = time.perf_counter()
                payload, _ = identify_payload([bag], Path(tmp) / f"o{seconds}_{seed}",
                                              IdentifyOptions(), "link7")
                rows.append((abs(payload.mass - MASS) / MASS * 100,
                             payload.mass_sigma / MASS * 100,
                             np.linalg.norm(payload.com - COM) * 1e3,
                             np.linalg.norm(payload.com_sigma) * 1e3,
                             payload.not_physical() is None, time.perf_counter() - start))
            worst = np.array([r[:4] for r in rows]).max(axis=0)
            physical = sum(r[4] for r in rows)
            print(f"{seconds:11.0f} {worst[0]:13.3f} {worst[1]:15.3f} {worst[2]:13.2f} "
                  f"{worst[3]:7.2f} {physical:>15d}/3 {max(r[5] for r in rows):6.1f}")


if __name__ == "__main__":
    payload_accuracy()
