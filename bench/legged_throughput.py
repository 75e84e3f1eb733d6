"""Throughput of ``rbd-ros analyze`` on a legged robot's recording: the bundled quadruped
trotting (testkit/quadsim.py's Pinocchio simulation, one steady 0.5 s period repeated) at 1 kHz,
its efforts with 1 N m of noise, odometry at 500 Hz with jittered stamps; with the contacts
estimated from the efforts and with every contact in touch. Joint states analysed a second,
against the recording's own rate.

    .venv/bin/python bench/legged_throughput.py [--seconds S]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testkit"))

from quadsim import simulate, trot  # noqa: E402
from recordings import write_legged  # noqa: E402

from rbd_ros.bag.legged import LeggedOptions, analyze_legged, floating_base_parameters  # noqa: E402
from rbd_ros.robots import QUADRUPED  # noqa: E402

FEET = [f"{leg}_foot" for leg in ("LF", "RF", "LH", "RH")]
POSTURE = {f"{x}_{j}": a for x in ("LF", "RF", "LH", "RH") for j, a in (("HFE", 0.6),
                                                                        ("KFE", -1.2))}


def recording(folder: Path, seconds: float) -> Path:
    run = simulate(str(QUADRUPED), FEET, POSTURE, trot(FEET), 1.0)
    period = (run.t >= 0.5) & (run.t < 1.0)  # a steady period, repeated
    reps = int(np.ceil(seconds / 0.5))
    q, v, tau = (np.tile(x[period], (reps, 1)) for x in (run.q, run.v, run.tau))
    t = np.arange(len(q)) * 1e-3
    effort = tau + np.random.default_rng(0).normal(0.0, 1.0, tau.shape)
    return write_legged(folder / "trot", QUADRUPED.read_text(), t, q, v, effort, run.joints,
                        100 * 10**9, odom_every=2, jitter_ns=300_000)


def legged_throughput(seconds: float) -> None:
    print(f"\n# analyze of a legged recording ({seconds:g} s of a quadruped trotting at 1 kHz;"
          " bench/legged_throughput.py)")
    with tempfile.TemporaryDirectory() as tmp:
        bag = recording(Path(tmp), seconds)
        params = floating_base_parameters(ROOT / "config" / "floating_base.yaml") or {}
        print("| contacts | outputs | states | s | states a second | x real time |")
        print("|---|---|---|---|---|---|")
        for estimate in (True, False):
            for outputs in (("mcap", "parquet", "png"), ("parquet",)):
                opts = LeggedOptions.from_parameters({**params, "estimate_contacts": estimate},
                                                     outputs=outputs)
                analyze_legged([bag], Path(tmp) / "warm", opts)  # kernels loaded, files cached
                t0 = time.perf_counter()
                s = analyze_legged([bag], Path(tmp) / "out", opts)
                dt = time.perf_counter() - t0
                print(f"| {'estimated' if estimate else 'all in touch'} | {', '.join(outputs)} "
                      f"| {s.messages} | {dt:.2f} | {s.messages / dt:,.0f} | "
                      f"{s.messages / dt / 1000:.1f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=20.0)
    legged_throughput(parser.parse_args().seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
