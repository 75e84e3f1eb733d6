"""The documentation's pictures, drawn from real runs of the code (CI runs this and compares
what it draws with the committed pictures, so they match the code):

    .venv/bin/python scripts/pictures.py [OUT_DIR]     (default: doc/images)

It needs the test set-up (``scripts/setup.sh --test``): Talos comes from example-robot-data,
and the pushed arm is the tests' simulator (``testkit/armsim.py``).

* ``demo_tracking.png``: the live demo's tracking errors, PD alone, with the dynamics node's
  feed-forward, and by the trajectory controller's computed torque (``rbd-ros demo --plot``).
* ``analysis_joint2.png``: ``rbd-ros analyze`` of a recording of the bundled arm held by PD
  and pushed for 0.3 s, with noisy efforts: measured against model torque, external torque.
* ``observer_push.png``: the momentum observer at the default ``observer_gain`` (the residual
  the dynamics node's collision flags are on) and the flags on the same run.
* ``contacts.png``: contact forces and centres of pressure of the bundled quadruped and of
  Talos, standing and in a walking-like state."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testkit"))  # the tests' arm simulator and recording writer

from armsim import fifth_link_wrench, simulate  # noqa: E402
from recordings import write_joint_states  # noqa: E402

from rbd_ros.app.cli import main  # noqa: E402
from rbd_ros.bag.plotting import pyplot  # noqa: E402
from rbd_ros.dynamics import Data, load_urdf  # noqa: E402
from rbd_ros.dynamics.algorithm.kinematics import link_placement, placements  # noqa: E402
from rbd_ros.dynamics.contact.contacts import Contact, solve  # noqa: E402
from rbd_ros.dynamics.estimation.observer import (  # noqa: E402
    DEFAULT_GAIN,
    CollisionDetector,
    MomentumObserver,
)
from rbd_ros.dynamics.multibody.model import Model  # noqa: E402
from rbd_ros.robots import ARM, QUADRUPED  # noqa: E402

PUSH = (1.0, 1.3)  # s: when the push acts on the arm's fifth link
NOISE = 0.05  # N m: the efforts' noise (standard deviation)
THRESHOLD = 1.0  # N m: the collision threshold, every joint


def pushed_arm() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t, q, v, measured effort, true external torque) of the arm held by PD and pushed."""
    rows = list(simulate(fifth_link_wrench(), seconds=2.0, on=PUSH))
    t, q, v, tau, ext = (np.array([r[k] for r in rows]) for k in range(5))
    return t, q, v, tau + np.random.default_rng(7).normal(0.0, NOISE, tau.shape), ext


def analysis(out: Path, run: tuple[np.ndarray, ...]) -> int:
    t, q, v, effort, _ = run
    with tempfile.TemporaryDirectory() as tmp:
        stamps = np.rint(1e9 * (1.0 + t)).astype(np.int64).tolist()
        bag = write_joint_states(Path(tmp) / "pushed_arm", stamps, q, v, effort)
        status = main(["analyze", str(bag), "--out", str(Path(tmp) / "analysis"), "--quiet"])
        shutil.copy(Path(tmp) / "analysis" / "joint2.png", out / "analysis_joint2.png")
    return status


def observer(out: Path, run: tuple[np.ndarray, ...]) -> None:
    t, q, v, effort, ext = run
    obs = MomentumObserver(load_urdf(ARM), DEFAULT_GAIN)
    flags = CollisionDetector(np.full(7, THRESHOLD), 0.5)
    residual, flagged = np.empty_like(ext), np.empty(len(t), dtype=bool)
    for k in range(len(t)):
        residual[k] = obs.update(t[k], q[k], v[k], effort[k])
        flags.update(residual[k])
        flagged[k] = flags.flags.any()
    first = t[np.argmax(flagged & (t >= PUSH[0]))]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.axvspan(*PUSH, color="0.9", label="push on the fifth link")
    for j, color in zip((1, 3, 4), ("tab:blue", "tab:orange", "tab:green"), strict=True):
        ax.plot(t, ext[:, j], color=color, lw=1, ls="--")
        ax.plot(t, residual[:, j], color=color, lw=1.5, label=f"joint{j + 1}")
    ax.axhline(THRESHOLD, color="tab:red", lw=0.8)
    ax.axhline(-THRESHOLD, color="tab:red", lw=0.8, label=f"collision threshold {THRESHOLD} N m")
    ax.axvline(first, color="tab:red", ls=":", lw=1.2)
    ax.annotate(f"flagged {1000 * (first - PUSH[0]):.0f} ms after the push starts",
                (first, 0.8 * ext.max()), xytext=(8, 0), textcoords="offset points",
                color="tab:red")
    ax.set_xlim(0.6, 2.0)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("external torque (N m)")
    ax.set_title(f"Momentum observer at gain {DEFAULT_GAIN:.0f}/s (solid) against the true "
                 f"external torque (dashed), efforts with {NOISE} N m noise", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "observer_push.png", dpi=90)
    plt.close(fig)


def _state(m: Model, contacts: list[Contact], q: np.ndarray, a: np.ndarray, ax: Any,
           title: str, newtons_per_cm: float) -> None:
    """One top view: each contact's sole (or point), its centre of pressure, its vertical
    load and its horizontal force (an arrow, 1 cm per ``newtons_per_cm``); the centre of
    mass."""
    d = Data(m)
    r = solve(m, d, q, np.zeros(m.nv), a, contacts, 0.7)
    assert r.feasible, r.reason
    X = placements(m, d, q)
    for c in contacts:
        f = r.forces[c.link]
        if c.is_sole:
            R, p = link_placement(m, X, c.link)
            corners = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1], [1, 1]]) * \
                [c.half_length, c.half_width]
            world = p[:2] + corners @ R[:2, :2].T
            ax.fill(world[:, 0], world[:, 1], color="0.85", ec="0.4")
        else:
            ax.plot(*r.points[c.link][:2], "o", color="0.4", ms=9, mfc="none")
        cop = r.cop[c.link]
        ax.plot(*cop[:2], "o", color="tab:red", ms=4)
        ax.annotate("", cop[:2] + 0.01 * f[:2] / newtons_per_cm, cop[:2], arrowprops={"arrowstyle": "->",
                    "color": "tab:red", "lw": 1.5})
        ax.annotate(f"{f[2]:.0f} N", cop[:2], xytext=(6, -12), textcoords="offset points",
                    fontsize=8)
    ax.plot(*r.com[:2], "x", color="k", ms=8)
    ax.set_title(f"{title}\n(arrows: 1 cm per {newtons_per_cm:g} N)", fontsize=9)
    ax.set_aspect("equal")
    ax.margins(0.25)
    ax.tick_params(labelsize=7)


def contacts(out: Path) -> None:
    from pinref import robot_path

    plt = pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(12, 4))
    dog = load_urdf(QUADRUPED, floating_base=True)
    feet = [Contact(f"{leg}_foot") for leg in ("LF", "RF", "LH", "RH")]
    q = dog.neutral()
    q[7:] = [0.0, 0.4, -0.8] * 4
    a = np.zeros(dog.nv)
    _state(dog, feet, q, a, axes[0], "quadruped standing", 1.0)
    a[:3] = [1.0, 0.5, 0.0]  # walking: the base speeds up forwards and to the left
    _state(dog, [feet[0], feet[2], feet[3]], q, a, axes[1],
           "quadruped walking: right front foot\nswinging, base accelerating forwards-left", 1.0)
    talos = load_urdf(robot_path("talos"), floating_base=True)
    soles = [Contact(f"{s}_sole_link", half_length=0.1, half_width=0.05)
             for s in ("left", "right")]
    a = np.zeros(talos.nv)
    _state(talos, soles, talos.neutral(), a, axes[2], "Talos standing", 10.0)
    a[1] = -0.95  # swinging over the left foot: the body accelerates to its right
    _state(talos, soles[:1], talos.neutral(), a, axes[3],
           "Talos on its left foot, body\naccelerating right (mid-step)", 10.0)
    for ax in axes:
        ax.set_xlabel("x (m)", fontsize=8)
    axes[0].set_ylabel("y (m)", fontsize=8)
    fig.suptitle("Contact forces from the floating-base solve, seen from above: vertical load, "
                 "horizontal force (arrow), centre of pressure (red), centre of mass (x)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "contacts.png", dpi=90)
    plt.close(fig)


def draw(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    run = pushed_arm()
    status = analysis(out, run)
    observer(out, run)
    contacts(out)
    return status or main(["demo", "--plot", str(out / "demo_tracking.png")])


if __name__ == "__main__":
    sys.exit(draw(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "doc" / "images"))
