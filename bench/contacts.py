"""Contact estimation (the floating-base node's ``estimate_contacts``) on quadrupeds trotting
and bounding in place, simulated with Pinocchio (test/quadsim.py): how often the contact state
is right, how soon it settles after each touchdown and lift-off, and its cost per state.

    .venv/bin/python bench/contacts.py [--seconds S]

The efforts carry white noise of ``--noise`` times their RMS (2 %); the base pose and twist are
exact, as a state estimator's smoothed odometry nearly is. The defaults were chosen on the
bundled quadruped; Solo-12 and ANYmal C were not looked at before they were measured.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

from quadsim import LEGS, Run, bound, estimate, settling, simulate, states, trot

from rbd_ros.dynamics.contact_estimation import DEFAULT_GAIN, ContactEstimator
from rbd_ros.dynamics.contacts import Contact


def cost(robot: str, run: Run, gain: float) -> float:
    """us per ``ContactEstimator.update`` over the run's states (built beforehand)."""
    m, Q, V, E = states(robot, run)
    est = ContactEstimator(m, [Contact(f) for f in run.feet], gain=gain)
    est.update(-1.0, Q[0], V[0], E[0])  # compiled, outside the timing
    t0 = time.perf_counter()
    for k in range(len(run.t)):
        est.update(run.t[k], Q[k], V[k], E[k])
    return (time.perf_counter() - t0) / len(run.t) * 1e6


def contact_estimation(seconds: float, noise: float) -> None:
    logging.getLogger("rbd_ros.dynamics").setLevel(logging.ERROR)  # ANYmal's CAD noise
    print(f"\n# Contact estimation: {seconds:.0f} s per gait at 1 kHz, effort noise "
          f"{noise:.0%} of the RMS (bench/contacts.py)")
    print("| robot | gait | gain 1/s | events | state right | touchdown p50 / max ms "
          "| lift-off p50 / max ms | us/state |")
    print("|---|---|---|---|---|---|---|---|")
    for robot, (urdf, feet, posture) in LEGS.items():
        for name, gait in (("trot", trot), ("bound", bound)):
            run = simulate(urdf, feet, posture, gait(feet), seconds)
            for gain in (DEFAULT_GAIN, 200.0):
                est, settled = estimate(robot, run, noise, gain=gain)
                right = float(np.mean(est[settled] == run.contact[settled]))
                late = settling(run, est, settled)
                down = [x[3] * 1e3 for x in late if x[1] == "touchdown"]
                up = [x[3] * 1e3 for x in late if x[1] == "lift-off"]
                print(f"| {robot} | {name} | {gain:.0f} | {len(late)} | {right:.2%} "
                      f"| {np.median(down):.0f} / {max(down):.0f} "
                      f"| {np.median(up):.0f} / {max(up):.0f} | {cost(robot, run, gain):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--noise", type=float, default=0.02)
    args = parser.parse_args()
    contact_estimation(args.seconds, args.noise)


if __name__ == "__main__":
    main()
