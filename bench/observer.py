"""Collision detection and a held load: delay, false alarms and tracking of the momentum
observer (``~/external_torques``) beside the acceleration-based estimate
(``~/external_torques_from_acceleration``), under sensor noise and a model that is off.

    .venv/bin/python bench/observer.py [--urdf ROBOT.urdf] [--seconds S]

The arm (the bundled one, or ``--urdf``: every joint moves) is simulated exactly (RK4 on our
ABA at 1 kHz) tracking a slow sinusoidal motion with PD + inverse dynamics; pushes (15 N on a
random link, random direction, 150 ms each) come at random times. What a driver would publish
is the simulated state plus white noise: positions ``--position-noise`` rad, velocities
``--velocity-noise`` rad/s, efforts ``--effort-noise`` N m. The estimators run on the exact
model, and on one whose link masses and inertias are ``--model-error`` off (1.05: 5 % heavier),
as a URDF from CAD is.

Each estimator's thresholds are set as a user would: 1.25 times the largest residual per joint
over a 20 s calibration run of normal motion without pushes (same noise, other seed). Then, on a
run with pushes: per push, the delay from its start to the first flag (a push never flagged is
missed); a false alarm is a flag raised more than 0.3 s after every push ended (hysteresis:
cleared below half the threshold).

A step: one push held on (15 N on the fifth link's origin, sideways), no noise, the exact model;
the delay until the residual of the joint it loads most reaches 10 / 17.6 of that joint's
torque (a push 1.76 times its threshold), with measured velocities and from positions only.

A held load: the same motion carrying a 1.7 kg box on the last link (``--payload-link``), which
the estimators' model lacks; the column is the RMS over 9 s (past the first second) of the
residual minus the load's joint torques, in % of their RMS: on the exact states (what the gain's
lags leave) and with the noise; for the default gain, of ``~/external_torques`` (the observer at
``EXTERNAL_GAIN``, the node's external_torques_gain: the flags are on the default's). "one lag"
is the residual before its second lag (``MomentumObserver.single_lag``), the observer as it was
before it had one.

The last row is a bound, not an estimator of rbd_ros: the FIR over the momentum's imbalance
(``dp/dt - tau - C^T v + g``, 60 states) with the least noise from the velocities that is as
late as the default observer (:func:`bound_weights`): how much any linear filter of these
signals could gain at that delay.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
from pathlib import Path

import numpy as np

from rbd_ros.dynamics import (
    Data,
    Model,
    aba,
    crba,
    gravity,
    load_urdf,
    load_urdf_string,
    rnea,
    rnea_batch,
)
from rbd_ros.dynamics.algorithm.momentum import momentum
from rbd_ros.dynamics.estimation.observer import (
    DEFAULT_GAIN,
    EXTERNAL_GAIN,
    CollisionDetector,
    MomentumObserver,
)
from rbd_ros.identify.excite import Limits
from rbd_ros.robots import ARM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testkit"))
from armsim import rk4

DT = 1e-3
#: the bound's row: the best linear filter (an FIR of ``TAPS`` states) as late as the default
BOUND = "bound: best FIR as late"
TAPS = 60
PUSH_S, FORCE = 0.15, 15.0
POSTURE = np.array([0.3, 0.6, -0.2, -1.0, 0.4, 0.8, -0.3])  # the bundled arm's
#: the held box (as Model.with_payload takes it): 1.7 kg, its centre off the flange, a solid
#: 8 x 6 x 12 cm box's inertia
BOX = (1.7, 0.02, -0.015, 0.06, 1.7 * (0.06**2 + 0.12**2) / 12, 0.0, 0.0,
       1.7 * (0.08**2 + 0.12**2) / 12, 0.0, 1.7 * (0.08**2 + 0.06**2) / 12)


def motion(t: float, m: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The desired motion of ``m``'s joints: each a slow sine about a posture, within its limits
    (0.4 rad about the bundled arm's posture; at most a quarter of a joint's range else)."""
    n = m.nv
    if m.name == "arm7":  # the bundled arm
        base, amp = POSTURE, np.full(n, 0.4)
    else:
        lim = Limits.of(m, np.inf)  # excite's: per joint, in the velocities' order
        lower, upper = lim.lower, lim.upper
        amp = np.minimum(0.4, (upper - lower) / 4)
        base = np.clip(0.3 * np.sin(np.arange(n) + 1.0), lower + amp, upper - amp)
    w = np.linspace(0.8, 1.6, n)
    return (base + amp * np.sin(w * t), amp * w * np.cos(w * t),
            -amp * w * w * np.sin(w * t))


def simulate(m: Model, seconds: float, pushes: list[tuple[float, int, np.ndarray]],
             friction: tuple[np.ndarray, np.ndarray] | None = None, held: bool = False
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t, q, v, tau) at 1 kHz of the arm tracking ``motion`` (``held``: holding its start)
    under PD + inverse dynamics, pushed by ``pushes`` (start, body, [force; torque] in its
    frame); ``friction``: each joint's Coulomb (N m, smoothed over 10 mrad/s) and viscous
    (N m s/rad) friction, which ``tau`` (the motors' torques) then works against and the
    controller does not know of."""
    d = Data(m)
    n, nv = round(seconds / DT), m.nv

    def wrench(t: float) -> np.ndarray | None:
        for start, body, w in pushes:
            if start <= t < start + PUSH_S:
                f = np.zeros((m.nb, 6))
                f[body] = w
                return f
        return None

    def control(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        qd, vd, ad = motion(0.0 if held else t, m)
        if held:
            vd, ad = np.zeros(nv), np.zeros(nv)
        a = ad + 400.0 * (qd - q) + 40.0 * (vd - v)
        tau: np.ndarray = crba(m, d, q) @ a + gravity(m, d, q)  # (Coriolis left to the PD)
        return tau

    def f(t: float, x: np.ndarray, tau: np.ndarray) -> np.ndarray:
        v = x[nv:]
        if friction is not None:
            tau = tau - friction[0] * np.tanh(v / 0.01) - friction[1] * v
        return np.concatenate([v, aba(m, d, x[:nv], v, tau, f_ext=wrench(t))])

    T, Q, V, TAU = np.arange(n) * DT, np.empty((n, nv)), np.empty((n, nv)), np.empty((n, nv))
    x = np.concatenate([motion(0.0, m)[0], np.zeros(nv) if held else motion(0.0, m)[1]])
    for k in range(n):
        t = T[k]
        tau = control(t, x[:nv], x[nv:])  # held over the step, as a 1 kHz controller does
        Q[k], V[k], TAU[k] = x[:nv], x[nv:], tau
        x = rk4(lambda t, x: f(t, x, tau), t, x, DT)  # noqa: B023 (called within the step)
    return T, Q, V, TAU


def measured(T: np.ndarray, Q: np.ndarray, V: np.ndarray, TAU: np.ndarray, seed: int,
             noise: tuple[float, float, float]) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    sq, sv, se = noise
    return (T, Q + sq * rng.standard_normal(Q.shape), V + sv * rng.standard_normal(V.shape),
            TAU + se * rng.standard_normal(TAU.shape))


@functools.cache
def bound_weights() -> np.ndarray:
    """The FIR over momentum imbalances (:func:`imbalances`, ``TAPS`` weights, the newest
    first) with the least velocity noise (the sum of its weights' squared steps: white noise on
    ``p`` enters through their differences) that is no later than the default observer: its
    step response is as high as the default's at the state where that reaches 10 / 17.6 (a
    push 1.76x its threshold is flagged), and its mean delay (a ramp's lag) is the same. A
    least-squares problem under three equality constraints: no linear filter of these
    signals with a window of ``TAPS`` states does better. The default's step response is
    taken from the observer itself, a torque step on an arm at rest."""
    m = load_urdf(ARM)
    d, q, z = Data(m), POSTURE.copy(), np.zeros(m.nv)
    observer, start, step = MomentumObserver(m, DEFAULT_GAIN), 200, np.zeros(TAPS)
    for k in range(start + TAPS):
        tau = gravity(m, d, q) - (k >= start) * np.eye(m.nv)[0]
        r = observer.update(k * DT, q, z, tau)
        if k >= start:
            step[k - start] = r[0]
    flag = int(np.argmax(step >= 10 / 17.6))
    D = np.eye(TAPS + 1, TAPS) - np.eye(TAPS + 1, TAPS, -1)
    # a torque step comes in half over its first step (the trapezoid), whole after: the FIR's
    # response at state k is the sum of its first k weights and half the next
    C = np.array([np.minimum(np.maximum(flag - np.arange(TAPS) + 0.5, 0.0), 1.0),
                  np.ones(TAPS), np.arange(TAPS) + 0.5])
    target = np.array([step[flag], 1.0, np.sum(1.0 - step)])
    kkt = np.block([[2 * D.T @ D, C.T], [C, np.zeros((3, 3))]])
    weights: np.ndarray = np.linalg.solve(kkt, np.r_[np.zeros(TAPS), target])[:TAPS]
    return weights


def imbalances(m: Model, T: np.ndarray, Q: np.ndarray, V: np.ndarray, TAU: np.ndarray
               ) -> np.ndarray:
    """Per state, ``dp/dt - (tau + C^T v - g)`` over the step before it (trapezoid; N m): the
    external torques, unfiltered, with all the velocities' noise in ``p``."""
    d = Data(m)
    P, drive = np.empty_like(V), np.empty_like(V)
    for k in range(len(T)):
        p, ctv = momentum(m, d, Q[k], V[k])
        P[k], drive[k] = p, TAU[k] + ctv - gravity(m, d, Q[k])
    out = np.zeros_like(V)
    out[1:] = np.diff(P, axis=0) / np.diff(T)[:, None] - 0.5 * (drive[1:] + drive[:-1])
    return out


def residuals(kind: str, m: Model, T: np.ndarray, Q: np.ndarray, V: np.ndarray,
              TAU: np.ndarray, *, published: bool = False) -> tuple[np.ndarray, float]:
    """Each state's residual by ``kind``, and the time it took per state (s); ``published``:
    what the dynamics node publishes as ``~/external_torques`` (at ``EXTERNAL_GAIN`` for the
    default gain, whose residual the flags are on)."""
    t0 = time.perf_counter()
    if kind == BOUND:
        raw, w = imbalances(m, T, Q, V, TAU), bound_weights()
        R = np.column_stack([np.convolve(raw[:, j], w)[: len(T)] for j in range(m.nv)])
    elif kind == "acceleration":  # as the node: backward differences of the velocities
        A = np.zeros_like(V)
        A[1:] = np.diff(V, axis=0) / DT
        R = rnea_batch(m, Q, V, A) - TAU
        R[0] = 0.0
    else:
        gain = float(kind.split("K=")[1].split()[0])
        observer = MomentumObserver(m, gain, external_gain=EXTERNAL_GAIN
                                    if published and gain == DEFAULT_GAIN else None)
        differenced = "no velocities" in kind  # the observer fits them to the positions
        one_lag = "one lag" in kind
        R = np.empty_like(Q)
        for k in range(len(T)):
            R[k] = observer.update(T[k], Q[k], np.zeros(m.nv) if differenced else V[k], TAU[k],
                                   differenced)
            if published:
                R[k] = observer.external_torques
            if one_lag:
                R[k] = observer.single_lag
    return R, (time.perf_counter() - t0) / len(T)


def held_load(arm: Model, link: str, kinds: list[str], noise: tuple[float, float, float]
              ) -> dict[str, str]:
    """Per estimator: the held load's error in % (the docstring), exact states / noisy."""
    carrying = arm.with_payload(link, BOX)
    T, Q, V, TAU = simulate(carrying, 10.0, [])
    d = Data(carrying)
    A = np.array([aba(carrying, d, Q[k], V[k], TAU[k]) for k in range(len(T))])
    load = (rnea_batch(arm, Q, V, A) - TAU)[1000:]  # the joint torques the box takes

    def error(states: tuple[np.ndarray, ...], kind: str) -> float:
        R, _ = residuals(kind, arm, *states, published=True)
        return float(100 * np.linalg.norm(R[1000:] - load) / np.linalg.norm(load))

    noisy = measured(T, Q, V, TAU, 4, noise)
    return {kind: f"{error((T, Q, V, TAU), kind):.2f} / {error(noisy, kind):.1f}"
            for kind in kinds}


def evaluate(R: np.ndarray, thresholds: np.ndarray, T: np.ndarray,
             pushes: list[tuple[float, int, np.ndarray]]) -> tuple[list[float], int, int]:
    """(detection delays in ms, pushes missed, false alarms)."""
    detector = CollisionDetector(thresholds, 0.5)
    rises = []
    for k in range(len(T)):
        was = detector.flags.any()
        detector.update(R[k])
        if detector.flags.any() and not was:
            rises.append(T[k])
    rises_a = np.array(rises)
    delays, missed = [], 0
    for start, _, _ in pushes:
        hit = rises_a[(rises_a >= start) & (rises_a < start + PUSH_S + 0.3)]
        if hit.size:
            delays.append((hit[0] - start) * 1e3)
        else:
            missed += 1
    false = sum(1 for r in rises if not any(s <= r < s + PUSH_S + 0.3 for s, _, _ in pushes))
    return delays, missed, false


def step_delays(m: Model, kinds: list[str]) -> dict[str, float]:
    """Per estimator: ms from a push's start until the residual of the joint it loads most
    reaches 10 / 17.6 of that joint's torque (the docstring's step)."""
    body = min(4, m.nb - 1)
    push = np.zeros((m.nb, 6))
    push[body] = (0.0, FORCE, 0.0, 0.0, 0.0, 0.0)
    start = 1.0
    T, Q, V, TAU = simulate(m, 1.3, [(start, body, push[body])])
    d, z = Data(m), np.zeros(m.nv)
    truth = np.array([gravity(m, d, q) - rnea(m, d, q, z, z, push) for q in Q])  # J^T f
    on = (T - start >= 0) & (T - start < PUSH_S)  # while it pushes
    j = int(np.abs(truth[on]).max(axis=0).argmax())
    out = {}
    for kind in kinds:
        R, _ = residuals(kind, m, T, Q, V, TAU)
        after = np.flatnonzero(on & (np.abs(R[:, j]) >= 10 / 17.6 * np.abs(truth[:, j])))
        out[kind] = (T[after[0]] - start) * 1e3 if after.size else float("nan")
    return out


def _scaled(urdf: str, factor: float) -> str:
    """``urdf`` with every link's mass and inertia times ``factor``."""
    def scale(match: re.Match[str]) -> str:
        return f'{match.group(1)}="{float(match.group(2)) * factor!r}"'

    return re.sub(r'(mass value|ixx|ixy|ixz|iyy|iyz|izz)="([-0-9.e]+)"', scale, urdf)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urdf", type=Path, default=ARM, help="the arm (default: the bundled)")
    parser.add_argument("--payload-link", help="where the held box is (default: the last link)")
    parser.add_argument("--seconds", type=float, default=60.0, help="of the run with pushes")
    parser.add_argument("--position-noise", type=float, default=1e-5)
    parser.add_argument("--velocity-noise", type=float, default=2e-3)
    parser.add_argument("--effort-noise", type=float, default=0.05)
    parser.add_argument("--model-error", type=float, default=1.05)
    args = parser.parse_args()
    truth = load_urdf(args.urdf)
    noise = (args.position_noise, args.velocity_noise, args.effort_noise)
    rng = np.random.default_rng(1)
    pushes = []
    t = 1.0
    while t < args.seconds - 1.0:
        body = int(rng.integers(2, truth.nb))
        direction = rng.standard_normal(3)
        pushes.append((t, body, np.r_[FORCE * direction / np.linalg.norm(direction), 0, 0, 0]))
        t += rng.uniform(1.0, 2.0)
    calib = measured(*simulate(truth, 20.0, []), 2, noise)
    run = measured(*simulate(truth, args.seconds, pushes), 3, noise)
    default = f"observer K={DEFAULT_GAIN:g}"
    kinds = ["observer K=50 one lag"] + [f"observer K={k:g}"
                                         for k in (50, EXTERNAL_GAIN, DEFAULT_GAIN, 300)] \
        + [f"{default} no velocities", "acceleration", BOUND]
    held = held_load(truth, args.payload_link or truth.body_names[-1], kinds, noise)
    steps = step_delays(truth, [default, f"{default} no velocities", BOUND])
    for error in sorted({1.0, args.model_error}):
        model = load_urdf_string(_scaled(args.urdf.read_text(), error))
        print(f"\n## {args.urdf.stem}, {truth.nv} joints, {len(pushes)} pushes of {FORCE:g} N "
              f"for {PUSH_S * 1e3:.0f} ms in {args.seconds:g} s; noise: q {noise[0]:g} rad, "
              f"v {noise[1]:g} rad/s, effort {noise[2]:g} N m; model's masses and inertias "
              f"x{error:g}")
        print(f"{'estimator':<28} {'thresholds N m (joint 1..)':<42} {'delay ms p50':>12} "
              f"{'p90':>6} {'missed':>7} {'false':>6} {'us/state':>9} "
              f"{'held load % exact / noisy' if error == 1.0 else ''}")
        levels = {}
        for kind in kinds:
            Rc, _ = residuals(kind, model, *calib)
            thresholds = 1.25 * np.abs(Rc[200:]).max(axis=0)  # past 0.2 s (start-up)
            levels[kind] = thresholds
            R, cost = residuals(kind, model, *run)
            delays, missed, false = evaluate(R, thresholds, run[0], pushes)
            p50, p90 = (np.percentile(delays, 50), np.percentile(delays, 90)) if delays else \
                (float("nan"), float("nan"))
            print(f"{kind:<28} {' '.join(f'{x:5.2f}' for x in thresholds):<42} {p50:12.1f} "
                  f"{p90:6.1f} {missed:7d} {false:6d} {cost * 1e6:9.1f} "
                  f"{held[kind] if error == 1.0 else ''}")
        if error == 1.0:
            print(f"(held load of the K={DEFAULT_GAIN:g} rows: the node's ~/external_torques, "
                  f"the observer at external_torques_gain {EXTERNAL_GAIN:g}/s; their thresholds, "
                  f"delays and flags at observer_gain {DEFAULT_GAIN:g}/s)")
        ratio = levels[f"{default} no velocities"] / levels[default]
        print(f"without velocities (fitted to the positions), K={DEFAULT_GAIN:g} (the default): "
              f"thresholds (the false-alarm level) {ratio.min():.2f}-{ratio.max():.2f}x those "
              "with measured velocities")
    print("\n## a push held on, 1.76x its threshold (no noise, exact model): flagged after "
          + ", ".join(f"{x:.0f} ms ({k})" for k, x in steps.items()))
    print("(acceleration: per state in one batch; the observer one state at a time, as the "
          "node runs it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
