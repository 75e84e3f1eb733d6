"""Collision thresholds from a recording of free motion: ``analyze`` runs the dynamics node's
momentum observer over the recorded joint states. Its peaks are those of the observer taken
state by state as the node takes it (:class:`MomentumObserver`: the recorded velocities, or the
positions' fit, restarted after a gap in the stamps); and the
thresholds printed from one run of the simulated arm flag nothing on another run of free
motion with other noise, and flag a push on a run with one."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from armsim import DT, HOLD, State, fifth_link_wrench, simulate
from recordings import write_joint_states
from rosbags.highlevel import AnyReader
from wrongmodel import scaled_inertials

from rbd_ros.bag.analyze import AnalyzeOptions, Flags, analyze, node_parameters
from rbd_ros.bag.errors import BagError
from rbd_ros.bag.stream import THRESHOLDS_FILE
from rbd_ros.dynamics import Data, Model, load_urdf, load_urdf_string, rnea
from rbd_ros.dynamics.estimation.observer import (
    DEFAULT_GAIN,
    GAP_S,
    SPEED_EDGES,
    THRESHOLD_MARGIN,
    THRESHOLD_PARAMETERS,
    WINDOW_S,
    CollisionDetector,
    MomentumObserver,
    collision_level,
    likely_links,
)
from rbd_ros.robots import ARM

NOISE = (1e-5, 2e-3, 0.05)  # rad, rad/s, N m: an encoder, a driver's velocity, a current sensor
START_NS = 10**18 // 1000 * 1000  # stamps as a robot's clock gives them: far from zero


def run(seed: int, push: bool = False, seconds: float = 3.0
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(stamps ns, q, v, effort) of the simulated arm as a driver would publish them, with the
    fifth link pushed from 1.5 s to 1.8 s if ``push``."""
    states = list(simulate(fifth_link_wrench(), seconds, on=(1.5, 1.8) if push else (0.0, 0.0)))
    rng = np.random.default_rng(seed)
    q, v, e = (np.array([s[k] for s in states]) for k in (1, 2, 3))
    ns = START_NS + np.round(np.array([s[0] for s in states]) / DT).astype(np.int64) * 10**6
    return (ns, q + NOISE[0] * rng.standard_normal(q.shape),
            v + NOISE[1] * rng.standard_normal(v.shape), e + NOISE[2] * rng.standard_normal(e.shape))


def node_residuals(ns: np.ndarray, q: np.ndarray, v: np.ndarray | None, e: np.ndarray,
                   gain: float, motion: list[tuple[np.ndarray, ...]] | None = None
                   ) -> np.ndarray:
    """The residual at each state as the dynamics node computes it: restarted when the stamps
    jump by more than GAP_S; without velocities, given the backward difference of the
    positions, as the node's joint states have it (the observer fits its own). ``motion``:
    each state's joint speeds as the node's collision thresholds take them, and whether each
    joint's observer has settled, appended."""
    observer = MomentumObserver(load_urdf(ARM), gain)
    out, t0 = [], ns[0]
    for k in range(len(ns)):
        if k and (ns[k] - ns[k - 1]) * 1e-9 > GAP_S:
            observer.reset()
            t0 = ns[k]
        if v is None:
            vk = (q[k] - q[k - 1]) / ((ns[k] - ns[k - 1]) * 1e-9) if k else np.zeros(7)
            out.append(observer.update((ns[k] - t0) * 1e-9, q[k], vk, e[k], differenced=True))
        else:
            out.append(observer.update((ns[k] - t0) * 1e-9, q[k], v[k], e[k]))
        if motion is not None:
            motion.append((observer.speed, observer.settled))
    return np.abs(np.array(out))


def thresholds_printed(text: str, name: str = "collision_thresholds") -> np.ndarray:
    line = re.search(rf"^{name}: \[(.*)\]$", text, re.M)
    assert line is not None, text
    return np.array([float(x) for x in line.group(1).split(",")])


@pytest.mark.parametrize("velocities", [True, False])
def test_the_peaks_are_the_node_observers(tmp_path: Path, velocities: bool) -> None:
    ns, q, v, e = run(1)
    ns[1500:] += 10**9  # a second's gap: the node's observer starts again after it
    bag = write_joint_states(tmp_path / "rec", ns.tolist(), q, v if velocities else None, e)
    summary = analyze([bag], tmp_path / "out", AnalyzeOptions(progress=False, outputs=()))
    observed = summary.observer
    assert observed is not None and observed.gain == DEFAULT_GAIN
    motion: list[tuple[np.ndarray, ...]] = []
    want = node_residuals(ns, q, v if velocities else None, e, DEFAULT_GAIN, motion)
    speed, settled = (np.array(x) for x in zip(*motion, strict=True))
    # the peaks (the thresholds' ground) are those of settled states: SETTLE / K after each
    # start, as the flags
    assert not settled[0].any() and settled[-1].all() and not settled[1500].any()
    want = np.where(settled, want, 0.0)
    np.testing.assert_allclose(observed.peak, want.max(axis=0), rtol=1e-9)
    np.testing.assert_array_equal(observed.at_ns, ns[want.argmax(axis=0)])
    # every state gives a residual; without velocities, but those that fill the positions'
    # window after each of the two starts (its span, at 1 kHz)
    fill = 0 if velocities else int(WINDOW_S / DT) + 1
    assert observed.states == len(ns) - 2 * fill
    # the thresholds at each state's speeds clear its residual by the margin, and one of each
    # joint's states nearly touches them: an envelope, not a bound far above
    text = (tmp_path / "out" / "summary.txt").read_text()
    printed = [thresholds_printed(text, param) for param in THRESHOLD_PARAMETERS]
    level = collision_level(printed[0], printed[1], printed[2], speed)
    reach = (THRESHOLD_MARGIN * want / level).max(axis=0)
    assert np.all(reach <= 1.0) and np.all(reach > 0.6), reach
    # the file analyze writes holds the same, as the node's parameters
    # (without --command-joints no `joints`: the node's command topics never take a guessed
    # order from it; the thresholds' own order is named, collision_joints)
    file = node_parameters(tmp_path / "out" / THRESHOLDS_FILE)
    assert "joints" not in file
    assert file["collision_joints"] == [f"joint{k}" for k in range(1, 8)]
    assert file["observer_gain"] == DEFAULT_GAIN
    for param, values in zip(THRESHOLD_PARAMETERS, printed, strict=True):
        np.testing.assert_array_equal(file[param], values)
    # in the order given (the controller's), with `joints` to say it
    names = [f"joint{k}" for k in range(7, 0, -1)]
    analyze([bag], tmp_path / "ordered", AnalyzeOptions(progress=False, outputs=(),
                                                 command_joints=names))
    file = node_parameters(tmp_path / "ordered" / THRESHOLDS_FILE)
    assert file["joints"] == file["collision_joints"] == names
    for param, values in zip(THRESHOLD_PARAMETERS, printed, strict=True):
        np.testing.assert_array_equal(file[param], values[::-1])


def test_thresholds_flag_a_push_and_not_free_motion(tmp_path: Path) -> None:
    """From the parameters file analyze writes, at a gain other than the default, after 10 s of
    free motion: another run of free motion (its own noise) raises no flag; a 0.3 s push on
    the fifth link raises one within 20 ms. analyze given that file (--params, as the node's
    --params-file) writes the node's residual and flags per state."""
    gain = 80.0
    ns, q, v, e = run(1, seconds=10.0)  # longer than the runs: its peaks are the noise's tail
    bag = write_joint_states(tmp_path / "calibration", ns.tolist(), q, v, e)
    out = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(bag), "--out",
                          str(tmp_path / "out"), "--observer-gain", "80", "--quiet"],
                         capture_output=True, text=True, check=True).stdout
    assert "at observer_gain 80" in out
    params = tmp_path / "out" / THRESHOLDS_FILE
    file = node_parameters(params)
    assert file["observer_gain"] == gain
    rest, *parts = (np.array(file[p]) for p in THRESHOLD_PARAMETERS)
    np.testing.assert_array_equal(rest, thresholds_printed(out))
    for seed, push in ((2, False), (3, True)):
        ns, q, v, e = run(seed, push)
        detector = CollisionDetector(rest, 0.5, *parts)
        motion: list[tuple[np.ndarray, ...]] = []
        residuals = node_residuals(ns, q, v, e, gain, motion)
        flags = np.zeros(residuals.shape, dtype=bool)
        for k, r in enumerate(residuals):
            detector.update(r, *motion[k])
            flags[k] = detector.flags
        settled = np.array([m[1] for m in motion])
        flagged = np.any(flags, axis=1)
        t = (ns - ns[0]) * 1e-9
        if not push:
            assert not flagged.any()
        else:
            assert not flagged[t < 1.5].any()
            assert flagged[(t >= 1.5 + 0.02) & (t < 1.8)].all()
        bag = write_joint_states(tmp_path / f"run{seed}", ns.tolist(), q, v, e)
        subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(bag), "--out",
                        str(tmp_path / f"out{seed}"), "--quiet", "--params", str(params)],
                       capture_output=True, text=True, check=True)
        table = pq.read_table(tmp_path / f"out{seed}" / "analysis.parquet")
        names = [f"joint{k}" for k in range(1, 8)]
        written = np.column_stack([table[f"tau_observer_{n}"].to_numpy() for n in names])
        np.testing.assert_allclose(np.abs(written), residuals, rtol=1e-9, atol=1e-12)
        wrote = np.column_stack([table[f"collision_{n}"].to_numpy() for n in names])
        np.testing.assert_array_equal(wrote, np.where(settled, flags, np.nan))
        with AnyReader([tmp_path / f"out{seed}" / "analysis.mcap"]) as reader:
            topics = {c.topic: c.msgcount for c in reader.connections}
        assert topics["/rbd/external_torques"] == len(ns)  # no flag before it settles
        assert topics["/rbd/collision_flags"] == settled.all(axis=1).sum() == len(ns) - 75
    for extra, says in ((["--collision-thresholds", "1", "2"],
                         "--collision-thresholds has 2 values for 7 joints (joint1,"),
                        (["--params", str(params), "--observer-gain", "80"],
                         "sets observer_gain: give it there or as options, not both"),
                        (["--params", str(bag / "metadata.yaml")],  # not a parameters file
                         "no ros__parameters of rbd_dynamics")):
        wrong = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", str(bag),
                                "--out", str(tmp_path / "wrong"), "--quiet", *extra],
                               capture_output=True, text=True)
        assert wrong.returncode == 2, wrong.stderr
        assert says in wrong.stderr


def wrong_arm(tmp_path: Path) -> tuple[Path, Model]:
    """(a URDF of the arm with its links' masses and inertias 20 % off, one heavier, the next
    lighter; the arm as it is, with ten times its URDF's joint friction, which that URDF
    lacks)."""
    text = ARM.read_text()
    wrong = tmp_path / "wrong.urdf"
    wrong.write_text(scaled_inertials(text, itertools.cycle([1.2, 0.8])))
    rough = re.sub(r'(damping|friction)="([0-9.]+)"',
                   lambda m: f'{m.group(1)}="{10 * float(m.group(2))!r}"', text)
    return wrong, load_urdf_string(rough)


def recording(path: Path, parts: list[list[State]], seed: int) -> Path:
    """The parts one after the other, a second apart (the observer starts again after each),
    with NOISE."""
    rng = np.random.default_rng(seed)
    states = [s for part in parts for s in part]
    ns = [START_NS + k * 10**10 + round(s[0] / DT) * 10**6
          for k, part in enumerate(parts) for s in part]
    q, v, e = (np.array([s[i] for s in states]) for i in (1, 2, 3))
    q, v, e = (x + n * rng.standard_normal(x.shape)
               for x, n in zip((q, v, e), NOISE, strict=True))
    return write_joint_states(path, ns, q, v, e)


def test_thresholds_from_normal_work_on_a_wrong_model(tmp_path: Path) -> None:
    """The arm with friction its URDF lacks (ten times the URDF's) and masses 20 % off in its
    model: analyze of a recording of its normal work (6 s swinging, 2 s held still) proposes
    thresholds lower at rest than at speed where friction is (the model's error grows with
    speed), and never above one per joint (1.5 x its peak). With them another recording of
    normal work raises no flag, and a push on the fifth link while the arm holds still (three
    times the threshold at rest on the joint it loads most against it) is flagged within
    20 ms, on the fifth link's chain."""
    wrong, rough = wrong_arm(tmp_path)
    free = np.zeros((load_urdf(ARM).nb, 6))

    def work(seed: int, push: np.ndarray = free) -> Path:
        swinging = list(simulate(free, 6.0, friction=rough, swing=0.3))
        held = list(simulate(push, 3.0, friction=rough, on=(2.0, 2.3)))
        return recording(tmp_path / f"work{seed}", [swinging, held], seed)

    run = [sys.executable, "-m", "rbd_ros.app.cli", "analyze", "--urdf", str(wrong), "--quiet"]
    calibration = work(1)
    subprocess.run([*run, str(calibration), "--out", str(tmp_path / "cal")],
                   capture_output=True, text=True, check=True)
    params = tmp_path / "cal" / THRESHOLDS_FILE
    rest, moving, per_speed = (np.array(node_parameters(params)[p])
                               for p in THRESHOLD_PARAMETERS)
    # over every speed the residual's peaks were seen at (at their bins' lowest), the
    # thresholds the file gives are at least 1.5x the peak there, and at most 1.5x the largest
    observed = analyze([calibration], tmp_path / "again",
                       AnalyzeOptions(urdf=wrong, progress=False, outputs=())).observer
    assert observed is not None
    for j, peaks in enumerate(observed.binned):
        seen = peaks > 0
        level = collision_level(rest[j], moving[j], per_speed[j], SPEED_EDGES[seen])
        assert np.all(level >= 1.5 * peaks[seen])
        assert np.all(level <= 1.5 * peaks.max() * 1.01)  # (rounded up to 3 digits)
    assert np.all(rest[:4] < 0.8 * 1.5 * observed.peak[:4]), (rest, 1.5 * observed.peak)
    # the push: three times the rest threshold on the joint it loads most against it
    m = load_urdf(ARM)
    z = np.zeros(7)
    torque = rnea(m, Data(m), HOLD, z, z) - rnea(m, Data(m), HOLD, z, z, fifth_link_wrench())
    scale = 3.0 / np.max(np.abs(torque) / rest)
    for seed, push in ((2, free), (3, scale * fifth_link_wrench())):
        folder = tmp_path / f"out{seed}"
        subprocess.run([*run, str(work(seed, push)), "--out", str(folder), "--params",
                        str(params)], capture_output=True, text=True, check=True)
        table = pq.read_table(folder / "analysis.parquet")
        t = table["t"].to_numpy() - START_NS * 1e-9 - 10.0  # s into the held part
        flags = np.column_stack([table[f"collision_joint{k}"].to_numpy()
                                 for k in range(1, 8)]) == 1.0
        if not push.any():
            assert not flags.any(), t[flags.any(axis=1)]
            continue
        assert not flags[t < 2.0].any()
        first = t[flags.any(axis=1)][0]
        assert 2.0 <= first < 2.02, first
        # from the flagged joints alone (the node also looks below the thresholds): the
        # pushed link or one it hangs from, never one beyond
        named = likely_links(m, flags[(t >= first) & (t < first + 0.02)].any(axis=0))
        assert len(named) == 1 and named[0] in m.body_names[:5], named


def test_a_gain_that_is_not_positive_is_refused() -> None:
    for bad in ("0", "-5", "nan", "fast"):
        p = subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", "analyze", "x.mcap",
                            "--observer-gain", bad], capture_output=True, text=True)
        assert p.returncode == 2 and "a positive number is needed" in p.stderr


def test_thresholds_apply_to_the_joints_collision_joints_names() -> None:
    """analyze's flags take the thresholds for the joints collision_joints names, in its order,
    as the node does: the model's order reversed gives the same thresholds per joint, a subset
    leaves the other joints unflagged (no threshold), and a joint the model lacks is refused
    with its name."""
    names = [f"joint{k}" for k in range(1, 8)]
    rest, moving = tuple(float(k) for k in range(1, 8)), tuple(0.1 * k for k in range(1, 8))
    plain = Flags(names, AnalyzeOptions(collision_thresholds=rest, collision_thresholds_moving=moving))
    reverse = Flags(names, AnalyzeOptions(collision_joints=tuple(names[::-1]),
                                   collision_thresholds=rest[::-1],
                                   collision_thresholds_moving=moving[::-1]))
    for a, b in zip(plain.parts, reverse.parts, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(plain.parts[0], rest)
    some = Flags(names, AnalyzeOptions(collision_joints=("joint5", "joint2"),
                                collision_thresholds=(5.0, 2.0)))
    np.testing.assert_array_equal(some.parts[0], [np.inf, 2.0, np.inf, np.inf, 5.0, np.inf,
                                                  np.inf])
    with pytest.raises(BagError, match="the model has no wrist"):
        Flags(names, AnalyzeOptions(collision_joints=("joint1", "wrist"), collision_thresholds=(1.0,)))
