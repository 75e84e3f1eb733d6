"""Contact estimation (the floating-base node's ``estimate_contacts``) on quadrupeds trotting
and bounding in place, simulated with Pinocchio (testkit/quadsim.py): how often the contact state
is right, how soon it settles after each touchdown and lift-off, and its cost per state.

    .venv/bin/python bench/contacts.py [--seconds S]

The efforts carry white noise of ``--noise`` times their RMS (2, 6 and 20 %: joint torques
estimated from motor currents carry about 1 N m, 20 % on the bundled quadruped) and the joint
velocities ``--velocity-noise`` rad/s (0, 0.02 and 0.05); the base pose and twist are exact, as a
state estimator's smoothed odometry nearly is. Two last rows per gait give the estimator a model
whose links' masses and inertias are 10-30 % off (20 % effort noise), then that with all the
defects of a real robot at once (``FRICTION``, ``JITTER_S``). The defaults were chosen on the
bundled quadruped; Solo-12 and ANYmal C were not looked at before they were measured (ANYmal C
was, after: doc/performance.md says where); Unitree's Go1 (``quadsim.UNSEEN``) is in no test
and was not looked at before it was measured.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testkit"))

from quadsim import (
    ALL_LEGS,
    Run,
    bound,
    estimate,
    settling,
    simulate,
    spurious,
    states,
    trot,
)
from wrongmodel import perturbed

from rbd_ros.dynamics import load_urdf_string
from rbd_ros.dynamics.contact.contacts import Contact
from rbd_ros.dynamics.estimation.contact_estimation import DEFAULT_GAIN, ContactEstimator

#: "all the defects": the efforts' noise (20 %) and the velocities' (0.02 rad/s), the model's
#: masses and inertias 10-30 % off, a Coulomb friction the model lacks of this fraction of the
#: efforts' RMS in every joint, and the stamps off by up to this (s)
FRICTION = 0.05
JITTER_S = 0.0004


def cost(robot: str, run: Run, gain: float) -> float:
    """us per ``ContactEstimator.update`` over the run's states (built beforehand)."""
    m, Q, V, E = states(robot, run)
    est = ContactEstimator(m, [Contact(f) for f in run.feet], gain=gain)
    est.update(-1.0, Q[0], V[0], E[0])  # compiled, outside the timing
    t0 = time.perf_counter()
    for k in range(len(run.t)):
        est.update(run.t[k], Q[k], V[k], E[k])
    return (time.perf_counter() - t0) / len(run.t) * 1e6


def row(robot: str, gait: str, noise: str, vnoise: str, run: Run, est: np.ndarray,
        settled: np.ndarray, us: float) -> None:
    right = float(np.mean(est[settled] == run.contact[settled]))
    late = settling(run, est, settled)
    down = [x[3] * 1e3 for x in late if x[1] == "touchdown"]
    up = [x[3] * 1e3 for x in late if x[1] == "lift-off"]
    print(f"| {robot} | {gait} | {noise} | {vnoise} | {len(late)} | {right:.2%} "
          f"| {np.median(down):.0f} / {max(down):.0f} | {np.median(up):.0f} / {max(up):.0f} "
          f"| {len(spurious(run, est, settled))} | {us:.0f} |", flush=True)


def contact_estimation(seconds: float, noises: tuple[float, ...] = (0.02, 0.06, 0.2),
                       velocity_noises: tuple[float, ...] = (0.0, 0.02, 0.05)) -> None:
    logging.getLogger("rbd_ros.dynamics").setLevel(logging.ERROR)  # ANYmal's CAD noise
    print(f"\n# Contact estimation: {seconds:.0f} s per gait at 1 kHz (bench/contacts.py); "
          f"effort noise as a fraction of the efforts' RMS and in N m, joint velocity noise "
          f"in rad/s; made up: edges farther than 10 ms from every true one")
    print("| robot | gait | effort noise | velocity noise | events | state right "
          "| touchdown p50 / max ms | lift-off p50 / max ms | made up | us/state |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for robot, (urdf, feet, posture) in ALL_LEGS.items():
        for name, gait in (("trot", trot), ("bound", bound)):
            run = simulate(urdf, feet, posture, gait(feet), seconds)
            rms = float(np.sqrt(np.mean(run.tau ** 2)))
            us = cost(robot, run, DEFAULT_GAIN)
            for noise in noises:
                for vnoise in velocity_noises:
                    est, settled = estimate(robot, run, noise, velocity_noise=vnoise)
                    row(robot, name, f"{noise:.0%}, {noise * rms:.2f} N m", f"{vnoise:g}", run,
                        est, settled, us)
            wrong = load_urdf_string(perturbed(Path(urdf).read_text(), 3), floating_base=True)
            est, settled = estimate(robot, run, 0.2, model=wrong)
            row(robot, name, "20 %, masses 10-30 % off", "0", run, est, settled, us)
            est, settled = estimate(robot, run, 0.2, velocity_noise=0.02, model=wrong,
                                    friction=FRICTION, jitter=JITTER_S)
            row(robot, name, "20 %, all the defects", "0.02", run, est, settled, us)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--noise", type=float, nargs="+", default=[0.02, 0.06, 0.2],
                        help="effort noise, fractions of the efforts' RMS")
    parser.add_argument("--velocity-noise", type=float, nargs="+", default=[0.0, 0.02, 0.05],
                        help="joint velocity noise, rad/s")
    args = parser.parse_args()
    contact_estimation(args.seconds, tuple(args.noise), tuple(args.velocity_noise))


if __name__ == "__main__":
    main()
