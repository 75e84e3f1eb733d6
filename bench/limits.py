"""A planned trajectory against the robot's limits (``rbd_ros.dynamics.control.limits``, what
``rbd-ros check`` runs): how fast the check is, on one core.

    .venv/bin/python bench/limits.py

The trajectories are like MoveIt's: random waypoints within the joint limits, quintic
rest-to-rest segments timed by the velocity limits alone (bench/tracking.py's), on a UR10, a
Panda and the bundled arm, each with 0 and 5 kg on its last link. Each is checked at 1 kHz
along the spline (every millisecond and every point): the samples a second, one thread, the best
of five; and what the check finds (the largest share of an effort limit, the first sample
over)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testkit"))
sys.path.insert(0, str(ROOT / "bench"))

from tracking import plain_urdf, trajectory  # noqa: E402

from rbd_ros.dynamics import load_urdf_string  # noqa: E402
from rbd_ros.dynamics.control.limits import check_limits  # noqa: E402

ARMS = {  # label -> (URDF, the link a payload goes on, joints made fixed)
    "ur10": ("ur10", "wrist_3_link", ()),
    "panda": ("panda", "panda_link7", ("panda_finger_joint1", "panda_finger_joint2")),
    "arm7 (bundled)": ("arm7", "link7", ()),
}


def urdf_of(name: str) -> str:
    if name == "arm7":
        from rbd_ros.robots import ARM

        return ARM.read_text()
    from pinref import ROBOTS, robot_path

    if name == "ur10":
        text: str = (ROBOTS / "ur_description" / "urdf" / "ur10_robot.urdf").read_text()
        return text
    return Path(robot_path(name)).read_text()


def check_speed(waypoints: int = 6, seed: int = 3) -> list[str]:
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return _check_speed(waypoints, seed)
    finally:
        numba.set_num_threads(threads)


def _check_speed(waypoints: int, seed: int) -> list[str]:
    lines = ["| arm | payload | motion | samples | samples a second (1 thread) | largest share "
             "of an effort limit | first over |", "|---|---|---|---|---|---|---|"]
    for label, (name, link, fixed) in ARMS.items():
        model = load_urdf_string(plain_urdf(urdf_of(name), fixed))
        spline, start = trajectory(model, np.random.default_rng(seed), waypoints=waypoints,
                                   share=1.0)
        joints = np.arange(model.nv)
        for kg in (0.0, 5.0):
            m = model if kg == 0 else model.with_payload(
                link, [kg, 0.0, 0.0, 0.05, 1e-3 * kg, 0.0, 0.0, 1e-3 * kg, 0.0, 1e-3 * kg])
            check = check_limits(m, spline, joints, start)  # (compiled once)
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                check = check_limits(m, spline, joints, start)
                times.append(time.perf_counter() - t0)
            used = check.used()[0].max()
            first = check.first_over() or "none"
            lines.append(f"| {label} | {kg:g} kg | {spline.duration_ns / 1e9:.2f} s, "
                         f"{waypoints} waypoints | {check.times_ns.size} | "
                         f"{check.times_ns.size / min(times):,.0f} | {used:.2f} | {first} |")
    return lines


if __name__ == "__main__":
    print("\n".join(check_speed()))
