"""Collision detection with the thresholds ``rbd-ros analyze`` proposes from free motion: one
threshold per joint (1.5 x its residual's peak, as analyze gave before) beside thresholds that
grow with each joint's speed (``collision_thresholds``, ``_moving``, ``_per_speed``: 1.5 x the
envelope of its peaks at each speed, what analyze gives now), on a model that is wrong.

    .venv/bin/python bench/collisions.py [--urdf ROBOT.urdf] [--seconds S]
                                         [--ur10e DIR --ur10e-urdf FILE]
                                         [--gen3 DIR --gen3-urdf FILE]
                                         [--panda DIR [--panda-urdf FILE]]
                                         [--doosan DIR --doosan-model FILE]

**Simulated, with a real robot's defects.** The arm (bench/observer.py's: the bundled one, or
``--urdf``) tracks a sinusoidal motion at 1 kHz with Coulomb and viscous friction its model
lacks (10 % and 5 % of each joint's RMS torque, per rad/s for the latter); the estimator's
model has every link's mass and inertia 10-30 % off (a random sign per link). What the driver
publishes: positions with 1e-5 rad of noise, velocities 2e-3 rad/s, efforts 1 N m, stamps
that jitter by +-0.4 ms. Thresholds from 30 s of free motion and 10 s of holding still (other
noise: a user's recording of normal work); then a run moving, and one holding still, each with
pushes (``PUSH`` N on a random link, random direction, at a random point ``REACH`` from its
origin, 150 ms). Per push, its size in sigmas: its largest joint torque over the standard
deviation of that joint's residual in free motion. Columns: the thresholds at rest (joint
1 ..); pushes flagged, and of those at least 15 sigma; the delay from a push's start to the
first flag (p50, p90, the 15-sigma pushes' worst); false alarms (a flag raised more than 0.3 s
after every push ended); and the link the node names (``likely_links`` of
``CollisionDetector.loaded`` within 20 ms of the first flag) right, or one link off. With
measured velocities and from positions only (``differenced``).

**Real: a UR10e** (``--ur10e``: ``dataset_ur10e`` of github.com/shamilmamedov/
dynamic_calibration at 11af40e; ``--ur10e-urdf``: its ``URe/urdf/ur10e.urdf``): 100 Hz, efforts
that are motor currents (made torques as bench/identify_real.py does). Thresholds from the
14-harmonic run of free motion (50 s); the 15-harmonic run (free) checked for false flags; the
two recordings of a person pushing the arm held at a pose (``collision/
ur-20_01_22-push_pose_{1,2}.csv``) for the pushes: a push is a stretch where some joint's
residual stands over 20 N m from where it was (at least 30 N m at its peak), from where it
rose 15 x the residual's standard deviation at rest (its first second); its delay is from
there to the first flag. No record says where the person pushed, so the named link is shown,
not scored.

**Real: a Kinova Gen3** (``--gen3 DIR --gen3-urdf FILE`` as bench/identify_real.py takes them:
1 kHz, joint torque sensors, two optimised trajectories of 4.7 and 2.3 s): thresholds from
each trajectory, checked on the other (free motion too: every flag is false).

**Real: a Franka Emika Panda** (``--panda DIR``, ``--panda-urdf FILE`` as
bench/identify_real.py takes them: about 1 kHz with stamps 0.7-8.8 ms apart, joint torque
sensors): thresholds from 0-10 s of its exciting trajectory, checked on 10-13.3 s, and the
other way; with the stock URDF and with the one ``rbd-ros identify`` makes of the first part.

**Pushes added to real recordings** (with ``--panda`` and ``--ur10e``): real free motion has no
hit whose link is known, so pushes (``PUSH`` N on a random link at ``REACH``, 150 ms) are
taken off the recorded efforts of the other recording (``J^T f``: what the motors of a stiff
position controller do against a push; the motion stays as recorded), thresholds from the
first; with the URDF, and with the identified one and the node's ``friction: true``. The noise,
the stamps and the model's error are the robot's own; the pushed link is known, so it is scored.

**Real: a DOOSAN M0609 hit while it moves** (``--doosan DIR --doosan-model FILE``): 320
labelled collisions at 100 Hz, motor currents; bench/doosan.py says what and how.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testkit"))

from identify_real import (
    GEN3_JOINTS,
    PANDA_JOINTS,
    UR10E_JOINTS,
    gen3,
    panda,
    panda_parts,
    recorded_only,
    ur10e_csv,
    ur10e_gains,
    write_bag,
)
from observer import PUSH_S, simulate
from wrongmodel import perturbed

from rbd_ros.bag.thresholds import envelope
from rbd_ros.dynamics import Data, Model, load_urdf, load_urdf_string, rnea
from rbd_ros.dynamics.estimation.observer import (
    DEFAULT_GAIN,
    SPEED_EDGES,
    THRESHOLD_MARGIN,
    THRESHOLD_PARAMETERS,
    CollisionDetector,
    ResidualPeaks,
    collision_level,
    likely_links,
)
from rbd_ros.robots import ARM

if TYPE_CHECKING:
    from rbd_ros.bag.analyze import AnalyzeOptions

SIGMAS = 15.0  # a push this many standard deviations of free motion's residual over it
PUSH = 40.0  # N: the simulated pushes
REACH = 0.08  # m: they act this far from their link's origin (a moment about its joint too)
NOISE = (1e-5, 2e-3, 1.0)  # rad, rad/s, N m
JITTER_S = 4e-4
AFTER_S = 0.3  # a flag this long after a push ended is a false alarm
ISOLATE_S = 0.02  # the link is named from the joints loaded within this of the first flag


def observed(model: Model, runs: list[tuple[np.ndarray, ...]], differenced: bool,
             friction: bool = False) -> tuple[ResidualPeaks, np.ndarray]:
    """The observer over runs (one after the other, a second apart) as the node runs it: (its
    peaks, per state the residual, the joints' speeds and whether it had settled);
    ``friction``: the model's joint friction taken off the efforts (the node's ``friction``)."""
    peaks, out, offset = ResidualPeaks(model, DEFAULT_GAIN, friction), [], 0.0
    for t, q, v, e in runs:
        ns = np.round((t + offset) * 1e9).astype(np.int64)
        out.append(peaks.add(ns, q, v, np.full(len(t), differenced), e))
        offset += t[-1] + 1.0
    return peaks, np.concatenate(out)


def flags_over(out: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per state and joint, the node's flag (hysteresis at half) with these thresholds (rows:
    rest, moving, per_speed), each state at its speeds; and where the node looks for the
    contact's link (``CollisionDetector.loaded``)."""
    detector = CollisionDetector(np.maximum(thresholds[0], 1e-9), 0.5, *thresholds[1:])
    flags = np.zeros(out[:, 0].shape, dtype=bool)
    loaded = np.zeros(out[:, 0].shape, dtype=bool)
    for k in range(len(out)):
        if np.all(np.isfinite(out[k, 0])):
            detector.update(out[k, 0], out[k, 1], out[k, 2] == 1.0)
        flags[k], loaded[k] = detector.flags, detector.loaded
    return flags, loaded


def rules(peak: np.ndarray, binned: np.ndarray) -> dict[str, np.ndarray]:
    """The two ways to thresholds from free motion's peaks (rows: rest, moving, per_speed):
    one per joint; the envelope over the joint's speed (analyze's)."""
    return {"one per joint": np.vstack([THRESHOLD_MARGIN * peak, np.zeros((2, len(peak)))]),
            "with speed": envelope(binned).T}


def simulated(urdf: Path, seconds: float) -> None:
    truth = load_urdf(urdf)
    model = load_urdf_string(perturbed(urdf.read_text(), 7))
    rng = np.random.default_rng(1)
    free = simulate(truth, 5.0, [])
    rms = np.sqrt(np.mean(free[3] ** 2, axis=0))
    friction = (0.10 * rms, 0.05 * rms)
    pushes, when = [], 1.0
    while when < seconds - 1.0:
        wrench = push_wrench(rng)
        pushes.append((when, int(rng.integers(2, truth.nb)), wrench))
        when += rng.uniform(1.0, 2.0)

    def measured(run: tuple[np.ndarray, ...], seed: int) -> tuple[np.ndarray, ...]:
        g = np.random.default_rng(seed)
        t, q, v, e = run
        return (t + g.uniform(-JITTER_S, JITTER_S, t.shape),
                *(x + s * g.standard_normal(x.shape) for x, s in zip((q, v, e), NOISE,
                                                                       strict=True)))

    # a user's recording of normal work: 30 s moving, then 10 s holding still
    calib = [measured(simulate(truth, 30.0, [], friction), 2),
             measured(simulate(truth, 10.0, [], friction, held=True), 4)]
    print(f"\n## {urdf.stem}, {truth.nv} joints: masses and inertias 10-30 % off, unmodelled "
          f"friction, noise q {NOISE[0]:g} rad, v {NOISE[1]:g} rad/s, effort {NOISE[2]:g} N m, "
          f"stamps +-{JITTER_S * 1e3:g} ms; {len(pushes)} pushes of {PUSH:g} N for "
          f"{PUSH_S * 1e3:.0f} ms in {seconds:g} s, while it moves and while it holds still")
    print(f"{'run':<7} {'velocities':<11} {'thresholds':<14} {'at rest N m (joint 1..)':<44} "
          f"{'flagged':>8} {'>=15 sd':>8} {'ms p50':>7} {'p90':>5} {'15sd max':>9} "
          f"{'false':>6} {'link':>5} {'+-1':>5}")
    calibrated = {differenced: observed(model, calib, differenced)
                  for differenced in (False, True)}
    for held in (False, True):
        exact = simulate(truth, seconds, pushes, friction, held)
        run = measured(exact, 3)
        size = push_torques(truth, exact, pushes)
        for differenced, (peaks, free_out) in calibrated.items():
            sd = np.nanstd(free_out[:, 0], axis=0)
            big: np.ndarray = (size / sd).max(axis=1) >= SIGMAS
            _, out = observed(model, [run], differenced)
            for name, thresholds in rules(peaks.peak, peaks.binned).items():
                row = scored(model, run[0], *flags_over(out, thresholds), pushes, big)
                print(f"{'held' if held else 'moving':<7} "
                      f"{'positions' if differenced else 'measured':<11} {name:<14} "
                      f"{' '.join(f'{x:5.2f}' for x in thresholds[0]):<44} {row}")


def push_wrench(rng: np.random.Generator) -> np.ndarray:
    """A push: ``PUSH`` N in a random direction at a random point ``REACH`` from its link's
    origin, as the wrench there (force; its moment about the origin)."""
    force, at = rng.standard_normal(3), rng.standard_normal(3)
    force *= PUSH / np.linalg.norm(force)
    at *= REACH / np.linalg.norm(at)
    wrench: np.ndarray = np.r_[force, np.cross(at, force)]
    return wrench


def push_torques(m: Model, exact: tuple[np.ndarray, ...],
                 pushes: list[tuple[float, int, np.ndarray]]) -> np.ndarray:
    """Each push's largest joint torques (J^T f) over its 150 ms."""
    d, z = Data(m), np.zeros(m.nv)
    size = np.zeros((len(pushes), m.nv))
    for i, (start, body, w) in enumerate(pushes):
        f = np.zeros((m.nb, 6))
        f[body] = w
        k = np.flatnonzero((exact[0] >= start) & (exact[0] < start + PUSH_S))
        size[i] = np.abs([rnea(m, d, exact[1][j], z, z) - rnea(m, d, exact[1][j], z, z, f)
                          for j in k]).max(axis=0)
    return size


def scored(model: Model, t: np.ndarray, flags: np.ndarray, loaded: np.ndarray,
           pushes: list[tuple[float, int, np.ndarray]], big: np.ndarray) -> str:
    """The table's row from a run's flags: pushes flagged (all, and the ``big`` ones), delays,
    false alarms, links named (from ``loaded``)."""
    anyf = np.asarray(flags.any(axis=1))
    rises = np.flatnonzero(anyf[1:] & ~anyf[:-1]) + 1
    delays: np.ndarray = np.full(len(pushes), np.nan)
    right = near = 0
    for i, (start, body, _) in enumerate(pushes):
        k = rises[(t[rises] >= start) & (t[rises] < start + PUSH_S + AFTER_S)]
        if not k.size:
            continue
        delays[i] = (t[k[0]] - start) * 1e3
        window = (t >= t[k[0]]) & (t < t[k[0]] + ISOLATE_S)
        named = [model.body_names.index(n)
                 for n in likely_links(model, np.asarray(loaded[window].any(axis=0)))]
        right += int(body in named)
        near += int(any(n == body or model.mi[n, 0] == body or model.mi[body, 0] == n
                        for n in named))
    false = sum(1 for k in rises
                if not any(s <= t[k] < s + PUSH_S + AFTER_S for s, _, _ in pushes))
    got = np.isfinite(delays)
    p50, p90 = (float(x) for x in (np.percentile(delays[got], (50, 90)) if got.any()
                                    else (np.nan, np.nan)))
    worst = float(np.nanmax(delays[big])) if (big & got).any() else np.nan
    return (f"{got.sum():>4}/{len(pushes):<3} {(got & big).sum():>4}/{big.sum():<3} "
            f"{p50:7.1f} {p90:5.0f} {worst:9.0f} {false:6d} {right:5d} {near:5d}")


def real_ur10e(folder: Path, urdf: Path) -> None:
    """The recordings of a person pushing the UR10e, with thresholds from its 14-harmonic free
    run, its URDF and the one identify makes of that run (and ``friction: true``)."""
    from rbd_ros.bag.analyze import AnalyzeOptions
    from rbd_ros.identify.run import IdentifyOptions, identify

    gains = ur10e_gains(folder / "identification_data")
    scale = {j: float(k) for j, k in zip(UR10E_JOINTS, gains, strict=True)}
    with tempfile.TemporaryDirectory() as tmp:
        def bag(path: Path, name: str) -> Path:
            d = ur10e_csv(path.parent, path.name)
            written: Path = write_bag(Path(tmp) / name, UR10E_JOINTS, d[:, 0] - d[0, 0],
                                      d[:, 1:7], d[:, 7:13], d[:, 13:19])
            return written

        ident = folder / "identification_data"
        runs = [bag(ident / f"ur-20_02_19_{h}harm50sec.csv", f"free{h}") for h in (14, 15)]
        pushed = [bag(folder / "collision" / f"ur-20_01_22-push_pose_{k}.csv", f"push{k}")
                  for k in (1, 2)]
        identify([runs[0]], Path(tmp) / "id", IdentifyOptions(urdf=urdf, effort_scale=scale))
        for which, model, friction in (
                ("its URDF", urdf, False),
                ("identified on the 14-harmonic run, friction: true",
                 Path(tmp) / "id" / "identified.urdf", True)):
            print(f"\n## Universal Robots UR10e (real, 100 Hz, motor currents), {which}: "
                  f"thresholds from 50 s of free motion; {len(pushed)} recordings of a person "
                  "pushing it")
            _pushed_by_hand(AnalyzeOptions(urdf=model, effort_scale=scale, progress=False,
                                           friction=friction), runs, pushed, Path(tmp) / which)


def _pushed_by_hand(base: AnalyzeOptions, runs: list[Path], pushed: list[Path], tmp: Path
                    ) -> None:
    """Thresholds from ``runs[0]`` (both rules), checked on ``runs[1]`` (states flagged) and
    on the ``pushed`` recordings (pushes flagged, delays from 15 sd, links named)."""
    from rbd_ros.bag.analyze import AnalyzeOptions, analyze

    summary = analyze([runs[0]], tmp / "calib", AnalyzeOptions(**{**vars(base), "outputs": ()}))
    obs = summary.observer
    assert obs is not None and base.urdf is not None
    model = load_urdf(base.urdf)
    print(f"{'thresholds':<14} {'at rest N m (joint 1..6)':<38} {'free run: states':>17} "
          f"{'pushes':>7} {'delay ms from 15 sd (each)':<34} {'links named'}")
    for name, thr in rules(obs.peak, obs.binned).items():
        opts = {**vars(base), "outputs": ("parquet",),
                **{p: tuple(x) for p, x in zip(THRESHOLD_PARAMETERS, thr, strict=True)}}
        analyze([runs[1]], tmp / f"f{name}", AnalyzeOptions(**opts))
        flagged_free = analysis_flags(tmp / f"f{name}", UR10E_JOINTS)[1].any(axis=1).sum()
        delays, links, total = [], [], 0
        for k, b in enumerate(pushed):
            out = tmp / f"p{k}{name}"
            analyze([b], out, AnalyzeOptions(**opts))
            r, flags, t = analysis_flags(out, UR10E_JOINTS)
            for start, end in _pushes(r, t):
                total += 1
                hit = np.flatnonzero(flags[start:end].any(axis=1))
                if hit.size:
                    delays.append((t[start + hit[0]] - t[start]) * 1e3)
                    links.append(",".join(likely_links(
                        model, np.asarray(flags[start:end].any(axis=0)))))
        print(f"{name:<14} {' '.join(f'{x:5.1f}' for x in thr[0]):<38} "
              f"{flagged_free:>17d} {len(delays):>3}/{total:<3} "
              f"{' '.join(f'{x:.0f}' for x in delays):<34} {' '.join(sorted(set(links)))}")


def free_motion(label: str, urdf: Path, runs: list[Path], joints: list[str],
                scale: dict[str, float] | None = None, friction: bool = False) -> None:
    """Thresholds from each recording of free motion, checked on the others: at rest, and the
    states the others flag (none is right)."""
    from rbd_ros.bag.analyze import AnalyzeOptions, analyze

    print(f"\n## {label}: thresholds from one recording of free motion, checked on another")
    print(f"{'from':<5} {'thresholds':<14} {'at rest (joint 1..)':<50} "
          f"{'fastest (at its top speed)':<50} {'states flagged'}")
    with tempfile.TemporaryDirectory() as tmp:
        for k, run in enumerate(runs):
            base = AnalyzeOptions(urdf=urdf, effort_scale=scale or {}, progress=False,
                                  friction=friction)
            summary = analyze([run], Path(tmp) / f"a{k}", replace(base, outputs=()))
            obs = summary.observer
            assert obs is not None
            top = np.array([SPEED_EDGES[np.flatnonzero(b > 0).max()] for b in obs.binned])
            for name, thr in rules(obs.peak, obs.binned).items():
                flagged = 0
                for i, other in enumerate(runs):
                    if i == k:
                        continue
                    out = Path(tmp) / f"f{k}{i}{name}"
                    analyze([other], out, replace(
                        base, outputs=("parquet",), collision_thresholds=tuple(thr[0]),
                        collision_thresholds_moving=tuple(thr[1]),
                        collision_thresholds_per_speed=tuple(thr[2])))
                    flagged += int(analysis_flags(out, joints)[1].any(axis=1).sum())
                fast = collision_level(thr[0], thr[1], thr[2], top)
                print(f"{k + 1:<5} {name:<14} {' '.join(f'{x:5.2f}' for x in thr[0]):<50} "
                      f"{' '.join(f'{x:5.2f}' for x in fast):<50} {flagged}")


def real_panda(folder: Path, urdf: Path | None) -> None:
    """The Panda's free motion with its stock URDF, then with the one identify makes of the
    first part (the thresholds a user gets after identifying)."""
    from pinref import robot_path

    from rbd_ros.identify.run import IdentifyOptions, identify

    with tempfile.TemporaryDirectory() as tmp:
        stock = recorded_only(urdf or Path(robot_path("panda")), PANDA_JOINTS, Path(tmp))
        first, second, _ = panda(folder, Path(tmp))
        identify(first, Path(tmp) / "id", IdentifyOptions(urdf=stock, cutoff=10.0))
        label = "Franka Emika Panda (real, stamps 0.7-8.8 ms apart, joint torque sensors; " \
                "0-10 s and 10-13.3 s of one trajectory)"
        calib, check = panda_parts(folder)
        for which, model, friction in (
                ("stock URDF", stock, False),
                ("identified on 0-10 s, friction: true", Path(tmp) / "id" / "identified.urdf",
                 True)):
            free_motion(f"{label}, {which}", model, [*first, *(second or [])], PANDA_JOINTS,
                        friction=friction)
            injected(f"Franka Emika Panda, {which}", load_urdf(model), calib, check,
                     friction=friction)


def ur10e_injected(folder: Path, urdf: Path) -> None:
    """Pushes added to the UR10e's 15-harmonic run, thresholds from the 14-harmonic one (its
    efforts the currents times the controller's ratios), with its URDF and with the one
    identify makes of the 14-harmonic run."""
    from rbd_ros.identify.run import IdentifyOptions, identify

    gains = ur10e_gains(folder)
    runs = [ur10e_csv(folder, f"ur-20_02_19_{h}harm50sec.csv") for h in (14, 15)]
    calib, check = ((d[:, 0] - d[0, 0], d[:, 1:7], d[:, 7:13], d[:, 13:19] * gains)
                    for d in runs)
    with tempfile.TemporaryDirectory() as tmp:
        identify([write_bag(Path(tmp) / "b", UR10E_JOINTS, *calib)], Path(tmp) / "id",
                 IdentifyOptions(urdf=urdf, cutoff=10.0))
        for which, model, friction in (
                ("its URDF", urdf, False),
                ("identified on the 14-harmonic run, friction: true",
                 Path(tmp) / "id" / "identified.urdf", True)):
            injected(f"Universal Robots UR10e (real, 100 Hz, motor currents), {which}",
                     load_urdf(model), calib, check, passes=1, friction=friction)


def injected(label: str, model: Model, calib: tuple[np.ndarray, ...],
             check: tuple[np.ndarray, ...], passes: int = 8, friction: bool = False) -> None:
    """Pushes added to a real recording of free motion: thresholds from ``calib``, then
    ``passes`` copies of ``check``, each with its own pushes (``PUSH`` N on a random link at
    ``REACH``, 150 ms, one every 0.45-0.6 s) taken off its efforts, as the motors of a stiff
    position controller take a push (``J^T f``; the motion as recorded). The noise, the jitter
    and the model's error are the robot's own; the pushed link is known."""
    rng = np.random.default_rng(5)
    runs: list[tuple[np.ndarray, ...]] = []
    pushes, size, offset = [], [], 0.0
    d, z = Data(model), np.zeros(model.nv)
    for _ in range(passes):
        t, q, v, e = check
        t = t - t[0] + offset
        e = e.copy()
        when = t[0] + 0.2
        while when < t[-1] - PUSH_S - AFTER_S:
            wrench = push_wrench(rng)
            body = int(rng.integers(1, model.nb))
            f = np.zeros((model.nb, 6))
            f[body] = wrench
            on = np.flatnonzero((t >= when) & (t < when + PUSH_S))
            jtf = np.array([rnea(model, d, q[k], z, z) - rnea(model, d, q[k], z, z, f)
                            for k in on])  # J^T f
            e[on] -= jtf
            pushes.append((when, body, wrench))
            size.append(np.abs(jtf).max(axis=0))  # as push_torques gives it
            when += PUSH_S + rng.uniform(0.3, 0.45)
        runs.append((t, q, v, e))
        offset = t[-1] + 1.0
    t_all = np.concatenate([r[0] for r in runs])
    print(f"\n## {label}: {len(pushes)} pushes of {PUSH:g} N added to {passes} copies of the "
          "other recording (the motion as recorded; thresholds from the first)")
    print(f"{'velocities':<11} {'thresholds':<14} {'at rest N m (joint 1..)':<44} "
          f"{'flagged':>8} {'>=15 sd':>8} {'ms p50':>7} {'p90':>5} {'15sd max':>9} "
          f"{'false':>6} {'link':>5} {'+-1':>5}")
    for differenced in (False, True):
        peaks, free_out = observed(model, [calib], differenced, friction)
        sd = np.nanstd(free_out[:, 0], axis=0)
        big: np.ndarray = (np.array(size) / sd).max(axis=1) >= SIGMAS
        _, out = observed(model, runs, differenced, friction)
        for name, thresholds in rules(peaks.peak, peaks.binned).items():
            row = scored(model, t_all, *flags_over(out, thresholds), pushes, big)
            print(f"{'positions' if differenced else 'measured':<11} {name:<14} "
                  f"{' '.join(f'{x:5.2f}' for x in thresholds[0]):<44} {row}")


def analysis_flags(out: Path, joints: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An analysis' residual, flags and stamps (s)."""
    import pyarrow.parquet as pq

    table = pq.read_table(out / "analysis.parquet")
    r = np.column_stack([table[f"tau_observer_{j}"].to_numpy() for j in joints])
    flags = np.column_stack([table[f"collision_{j}"].to_numpy() for j in joints]) > 0
    return r, flags, table["t"].to_numpy()


def _pushes(r: np.ndarray, t: np.ndarray) -> list[tuple[int, int]]:
    """(onset, end) rows of each push (the docstring): a stretch where some joint's residual
    is over 20 N m from its level before (the median of the half second before it starts;
    stretches less than 0.3 s apart are one), at least 30 N m at its peak; its onset where the
    joint that rose most was last within 15 sigma (at rest, the first second) of that level."""
    rest = np.nanstd(r[(t - t[0] > 0.1) & (t - t[0] < 1.0)], axis=0)
    level = np.nan_to_num(r)
    out: list[tuple[int, int]] = []
    k = 50
    while k < len(t):
        pre = np.median(level[k - 50:k], axis=0)
        if not np.any(np.abs(level[k] - pre) > 20.0):
            k += 1
            continue
        end = k
        while end < len(t) and np.any(np.abs(level[end:end + 30] - pre) > 20.0):
            end += 1
        rise = np.abs(level[k:end] - pre).max(axis=0)
        j = int(rise.argmax())
        if rise[j] >= 30.0:
            onset = k
            while onset > 0 and abs(level[onset - 1, j] - pre[j]) > SIGMAS * rest[j]:
                onset -= 1
            out.append((onset, end))
        k = end + 50
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urdf", type=Path, default=ARM)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--ur10e", type=Path, help="dataset_ur10e of shamilmamedov/"
                                                   "dynamic_calibration")
    parser.add_argument("--ur10e-urdf", type=Path)
    parser.add_argument("--gen3", type=Path, help="as bench/identify_real.py takes it")
    parser.add_argument("--gen3-urdf", type=Path)
    parser.add_argument("--panda", type=Path, help="as bench/identify_real.py takes it")
    parser.add_argument("--panda-urdf", type=Path, help="default: example-robot-data's")
    parser.add_argument("--doosan", type=Path, help="Real_robot/TestingDivide of kdh0429/"
                                                    "learning_collision_detection_real")
    parser.add_argument("--doosan-model", type=Path, help="its DoosanMSeries_RoboticsToolBox_"
                                                          "Simulator.m (bench/doosan.py)")
    parser.add_argument("--doosan-rotors", action="store_true",
                        help="the motors' rotor inertias in its URDF")
    args = parser.parse_args()
    logging.getLogger("rbd_ros.dynamics").setLevel(logging.ERROR)  # Gen3's CAD inertias
    simulated(args.urdf, args.seconds)
    if args.ur10e:
        real_ur10e(args.ur10e, args.ur10e_urdf)
        ur10e_injected(args.ur10e / "identification_data", args.ur10e_urdf)
    if args.gen3:
        with tempfile.TemporaryDirectory() as tmp:
            first, second, _ = gen3(args.gen3, Path(tmp))
            free_motion("Kinova Gen3 (real, 1 kHz, joint torque sensors, two fast trajectories "
                        "of 4.7 and 2.3 s)", args.gen3_urdf, [*first, *(second or [])],
                        GEN3_JOINTS)
    if args.panda:
        real_panda(args.panda, args.panda_urdf)
    if args.doosan:
        from doosan import real_doosan

        real_doosan(args.doosan, args.doosan_model, args.doosan_rotors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
