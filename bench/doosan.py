"""A real DOOSAN M0609 hit while it moves: collision flags against the recording's labels.

    .venv/bin/python bench/collisions.py --doosan DIR --doosan-model FILE

The data (``--doosan``): ``Real_robot/TestingDivide`` of
github.com/kdh0429/learning_collision_detection_real at commit 974a4a1 (DYROS, Seoul National
University, 2019; deleted from the repository later: ``git checkout 974a4a1``), 1510 files
``Testing_raw_data_<k>.csv``. 25 minutes at 100 Hz of random motions with 320 collisions, each
sample labelled "in a collision" or not; per joint the motor current (the controller's
command, in its own unit), the measured position (deg) and velocity (deg/s), the desired ones
and the controller's model torque. Each file holds 101 rows of the 5 newest samples;
consecutive files share one row. No stamps: the samples are 10 ms apart, but the logger lost
a few samples at a time while the arm moved, wrote about 2,800 extra ones 6 ms after the last
(4 ms before the next), and the run is several logs end to end (the stamps are rebuilt once,
from positions and velocities, and both runs below use them: :func:`stamps`). No label says
which link was hit.

The model (``--doosan-model``): the same group's Robotics Toolbox parameters (modified
Denavit-Hartenberg, masses, centres of mass, inertias, motor inertias and gear ratios),
``data/DoosanMSeries_RoboticsToolBox_Simulator.m`` of
github.com/kdh0429/learning_collision_detection_advanced (commit 2719709), read here into a
URDF; the table first gives how far its inverse dynamics is from the controller's model
torque. The motors' rotor inertias (G^2 Jm: 0.6-2.6 kg m^2 at the joint) are left out, as
the controller's model torque leaves them out; ``--doosan-rotors`` puts them in (Drake's
``rotor_inertia`` and ``gear_ratio`` tags).

What a user without the controller's torque constants does: each joint's current scale,
offset, and Coulomb and viscous friction fitted by least squares against the model's torques
on the first half's free motion (joint 6, whose model torque is nearly zero, takes joint 5's
scale and is not watched); thresholds from that free motion by ``rbd-ros analyze`` (both
rules of bench/collisions.py), with the measured velocities and from positions only; then the
second half analysed with them. Free motion is every sample over a second from a labelled
collision and not in a stop (every current exactly zero). A collision counts as flagged if a
flag rises from 50 ms before its label starts to 200 ms after it ends; a flag raised
elsewhere (over a second after every label, not in a stop) is a false alarm. The labels start
before the residual moves (the lead is printed), so the delay is counted from where the
residual of some joint first stands 15 standard deviations of free motion over zero (a
negative delay: flagged before that).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

DT = 0.01  # s between samples
JOINTS = [f"joint{k}" for k in range(1, 7)]
WATCHED = JOINTS[:5]
SIGMAS = 15.0
FREE_AFTER_S = 1.0  # free motion: this far from every labelled sample


def _number(text: str, names: dict[str, float]) -> float:
    """A number of the .m file: a sum of terms, each a literal, a length's name or pi, with a
    sign and a divisor (``-pi/2``, ``l1+l2``)."""
    total = 0.0
    for term in text.replace(" ", "").split("+"):
        sign = -1.0 if term.startswith("-") else 1.0
        head, _, divisor = term.lstrip("-").partition("/")
        value = np.pi if head == "pi" else names[head] if head in names else float(head)
        total += sign * value / (float(divisor) if divisor else 1.0)
    return total


def model_urdf(path: Path, viscous: np.ndarray | None = None, coulomb: np.ndarray | None = None,
               rotors: bool = False) -> tuple[str, np.ndarray]:
    """The M0609 as a URDF (each modified-DH link a joint ``joint1..6`` whose frame is the DH
    frame; with each joint's ``viscous`` and ``coulomb`` friction, if given; with ``rotors``,
    each motor's rotor inertia ``Jm`` and gear ratio ``G`` in a transmission), and each joint's
    offset (rad: the URDF's angle is the data's plus it)."""
    src = path.read_text()
    names = {m[1]: float(m[2]) for m in re.finditer(r"^(\w+)\s*=\s*([-0-9.e]+);", src, re.M)}
    dh, inertias = [], []
    for m in re.finditer(r"Link\('revolute',\s*'modified',(.*?)\);", src):
        args = [x.strip().strip("'") for x in re.split(r",(?![^\[]*\])", m[1])]
        kv = dict(zip(args[::2], args[1::2], strict=True))
        dh.append([_number(kv[k], names) for k in ("d", "a", "alpha", "offset", "m", "Jm", "G")])
        inertias.append(kv["I"].strip("[]").split(","))
    com = np.zeros((3, len(dh)))
    for m in re.finditer(r"CoM\(:,(\d)\)\s*=\s*\[(.*?)\]'", src):
        com[:, int(m[1]) - 1] = [float(x) for x in m[2].split(",")]
    rows = re.search(r"PosO\s*=\s*\[(.*?)\]'", src, re.S)
    assert rows, "no PosO in the model file"
    rel = com - np.array([[_number(x, names) for x in row.split(",")]
                          for row in rows[1].split(";") if row.strip()]).T
    out = ['<robot name="m0609">', '<link name="base"/>']
    for k, ((d, a, alpha, _, mass, _, _), inertia) in enumerate(zip(dh, inertias, strict=True),
                                                                1):
        # each component of r is +-COM0(axis, k): the base frame's axis it lies along
        found = re.search(rf"L{k}\.r\s*=\s*\[(.*?)\]", src)
        assert found, f"no L{k}.r in the model file"
        r = [(-1.0 if c[0] == "-" else 1.0) * rel[int(c[1]) - 1, k - 1]
             for c in re.findall(r"(-?)COM0\((\d),\d\)", found[1])]
        xx, yy, zz, xy, yz, xz = (float(x) for x in inertia)
        parent = "base" if k == 1 else f"link{k - 1}"
        friction = "" if viscous is None or coulomb is None else \
            f'<dynamics damping="{viscous[k - 1]:.6g}" friction="{coulomb[k - 1]:.6g}"/>'
        # modified DH: RotX(alpha) TransX(a) RotZ(theta) TransZ(d) = an origin, then the joint
        out.append(
            f'<joint name="joint{k}" type="revolute"><parent link="{parent}"/>'
            f'<child link="link{k}"/><origin xyz="{a:.9g} {-d * np.sin(alpha):.9g} '
            f'{d * np.cos(alpha):.9g}" rpy="{alpha:.12g} 0 0"/><axis xyz="0 0 1"/>'
            f'<limit lower="-6.3" upper="6.3" effort="1000" velocity="10"/>{friction}</joint>')
        out.append(f'<link name="link{k}"><inertial><origin xyz="{r[0]:.9g} {r[1]:.9g} '
                   f'{r[2]:.9g}"/><mass value="{mass}"/><inertia ixx="{xx}" iyy="{yy}" '
                   f'izz="{zz}" ixy="{xy}" iyz="{yz}" ixz="{xz}"/></inertial></link>')
    out.append("</robot>")
    urdf = "\n".join(out)
    if rotors:
        from urdfs import with_rotors  # testkit's, on the path bench/collisions.py set

        urdf = with_rotors(urdf, {f"joint{k}": (row[5], row[6]) for k, row in enumerate(dh, 1)})
    return urdf, np.array([row[3] for row in dh])


def recording(folder: Path) -> tuple[np.ndarray, ...]:
    """(stamps in s, currents, positions in deg, velocities in deg/s, the controller's model
    torques, labels) of the whole run, the files joined: each row's newest sample (a row: each
    joint's five samples of six values, oldest first, then the label and its complement)."""
    files = sorted(folder.glob("Testing_raw_data_*.csv"),
                   key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    if not files:
        raise SystemExit(f"--doosan {folder}: no Testing_raw_data_*.csv here")
    rows = [np.loadtxt(f, delimiter=",", ndmin=2)[(k > 0):] for k, f in enumerate(files)]
    raw = np.vstack(rows)
    newest = raw[:, :180].reshape(-1, 6, 5, 6)[:, :, 4, :]  # (sample, joint, feature)
    q, v = newest[:, :, 1], newest[:, :, 2]
    return stamps(q, v), newest[:, :, 0], q, v, newest[:, :, 5], raw[:, 180] > 0.5


def stamps(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each sample's time (s): 10 ms apart, but where the position moved another fraction of
    what the velocity gives in 10 ms (the median over the joints that move), that fraction of
    10 ms, on a 2 ms grid: where the logger lost samples, two to six periods; where it wrote an
    extra one, 6 ms then 4 (no other steps are found). A second where one log ends and the next
    begins. (Left 10 ms apart, an extra sample's two differences are 0.6 and 0.4 times the
    velocity: the thresholds from positions only came out 4-10 times higher.)"""
    step = np.diff(q, axis=0)
    expected = (v[1:] + v[:-1]) / 2 * DT
    moving = np.abs(expected) > 0.05  # deg in a period
    ratio = np.where(moving, step / np.where(moving, expected, 1.0), np.nan)
    periods = np.ones(len(step))
    known = moving.any(axis=1)
    r = np.nanmedian(ratio[known], axis=1)
    # within 15 % of a period, the period (the ratio's noise at low speed)
    periods[known] = np.where(np.abs(r - 1.0) < 0.15, 1.0, np.maximum(np.round(r * 5) / 5, 0.2))
    # the run is several logs end to end: where a joint moved over a degree more than six
    # periods at its velocity allow, a log ended; a second between them
    jump = (np.abs(step) - 6 * np.abs(expected) > 1.0).any(axis=1)
    periods[jump] = 1.0 / DT
    return np.concatenate(([0.0], np.cumsum(periods))) * DT


def real_doosan(folder: Path, model_file: Path, rotors: bool = False) -> None:
    from collisions import analysis_flags, rules
    from identify_real import write_bag

    from rbd_ros.bag.analyze import AnalyzeOptions, analyze
    from rbd_ros.dynamics import load_urdf_string, rnea_batch

    urdf, offset = model_urdf(model_file, rotors=rotors)
    t, cur, q_deg, v_deg, controller, hit = recording(folder)
    n = len(hit)
    q, v = np.radians(q_deg) + offset, np.radians(v_deg)
    a = np.gradient(v, t, axis=0)
    model = load_urdf_string(urdf)
    tau = rnea_batch(model, q, v, a)
    near = np.convolve(hit, np.ones(2 * int(FREE_AFTER_S / DT) + 1), "same") > 0
    stopped = (cur == 0.0).all(axis=1)
    first = np.arange(n) < n // 2
    free = ~near & ~stopped
    fit = free & first
    scale, off, coulomb, viscous = (np.zeros(6) for _ in range(4))
    for j in range(6):
        x = np.column_stack([tau[:, j], np.tanh(v[:, j] / 0.02), v[:, j], np.ones(n)])
        c = np.linalg.lstsq(x[fit], cur[fit, j], rcond=None)[0]
        scale[j], off[j] = 1.0 / c[0], c[3]
        coulomb[j], viscous[j] = max(c[1] / c[0], 0.0), max(c[2] / c[0], 0.0)
    scale[5], off[5], coulomb[5], viscous[5] = scale[4], 0.0, 0.0, 0.0
    urdf = model_urdf(model_file, viscous, coulomb, rotors)[0]
    e = cur - off
    labels = np.flatnonzero(hit[1:] & ~hit[:-1]) + 1
    test = labels[labels >= n // 2]
    print(f"\n## DOOSAN M0609 (real, 100 Hz, motor currents, 320 labelled collisions in 25 min): "
          f"thresholds from the first half's free motion, the second half's {len(test)} "
          "collisions")
    free_rms = np.sqrt(((tau - controller)[free] ** 2).mean(axis=0))
    print("  the URDF's inverse dynamics against the controller's model torque, free motion, rms "
          "(N m), joints 1..6: " + " ".join(f"{x:.2f}" for x in free_rms) + " (the torques' "
          "rms: " + " ".join(f"{x:.1f}" for x in np.sqrt((controller[free] ** 2).mean(axis=0)))
          + ")")
    print("  current scale (N m a unit), joints 1..6: "
          + " ".join(f"{x:.2f}" for x in scale) + "; Coulomb friction (N m): "
          + " ".join(f"{x:.1f}" for x in coulomb) + "; viscous (N m s/rad): "
          + " ".join(f"{x:.1f}" for x in viscous))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m0609.urdf"
        path.write_text(urdf)
        rows: list[str] = []
        base = AnalyzeOptions(urdf=path, effort_scale=dict(zip(JOINTS, scale.tolist(),
                                                                strict=True)),
                              friction=True, collision_joints=tuple(WATCHED), progress=False)
        later = ~first
        for label, vel in (("velocities", v), ("positions only", None)):
            free_bag = write_bag(Path(tmp) / f"free{label}", JOINTS, t[fit], q[fit],
                                 None if vel is None else vel[fit], e[fit])
            test_bag = write_bag(Path(tmp) / f"test{label}", JOINTS, t[later], q[later],
                                 None if vel is None else vel[later], e[later])
            free_out = Path(tmp) / f"free_out{label}"
            obs = analyze([free_bag], free_out, replace(base, outputs=("parquet",))).observer
            assert obs is not None
            sd = np.nanstd(analysis_flags(free_out, WATCHED)[0], axis=0)
            print(f"  {label}: free motion's residual, standard deviation (N m), joints 1..5: "
                  + " ".join(f"{x:.2f}" for x in sd))
            for name, thr in rules(obs.peak[:5], obs.binned[:5]).items():
                out = Path(tmp) / f"test_{label}{name}"
                analyze([test_bag], out, replace(
                    base, outputs=("parquet",), collision_thresholds=tuple(thr[0]),
                    collision_thresholds_moving=tuple(thr[1]),
                    collision_thresholds_per_speed=tuple(thr[2])))
                r, flags, _ = analysis_flags(out, WATCHED)
                assert len(r) == later.sum(), "the analysis has a row per joint state"
                rows.append(f"{label:<15} {name:<14} {' '.join(f'{x:5.1f}' for x in thr[0]):<32} "
                            + _scored(t[later], np.nan_to_num(r), flags.any(axis=1),
                                      hit[later], stopped[later], sd))
    print(f"{'':<15} {'thresholds':<14} {'at rest N m (joint 1..5)':<32} {'flagged':>8} "
          f"{'over 15 sd':>11} {'of those flagged':>17} {'within 20 ms':>13} "
          f"{'delay p50/p90 ms':>17} {'false alarms':>13} {'label lead p10/50/90 ms':>18}")
    print("\n".join(rows))


def _scored(t: np.ndarray, r: np.ndarray, flagged: np.ndarray, hit: np.ndarray,
            stopped: np.ndarray, sd: np.ndarray) -> str:
    """The table's columns for one half's stamps (s), residual and flags against its labels
    (a flag while the arm is stopped is not counted)."""
    starts = np.flatnonzero(hit[1:] & ~hit[:-1]) + 1
    ends = np.flatnonzero(~hit[1:] & hit[:-1]) + 1
    rises = np.flatnonzero(flagged[1:] & ~flagged[:-1]) + 1
    over = (np.abs(r) > SIGMAS * sd).any(axis=1)
    window = stopped.copy()
    got, strong, delays, leads = 0, 0, [], []
    for s in starts:
        e = ends[ends > s][0] if (ends > s).any() else len(hit)
        w = slice(max(0, s - 5), min(len(hit), e + 20))
        window[max(0, s - 5):min(len(hit), e + int(FREE_AFTER_S / DT))] = True
        first = np.flatnonzero(flagged[w])
        got += int(first.size > 0)
        big = np.flatnonzero(over[w])
        if big.size:
            strong += 1
            rise = t[w.start + big[0]]
            delays.append((t[w.start + first[0]] - rise) * 1e3 if first.size else np.inf)
            leads.append((rise - t[s]) * 1e3)
    d = np.array(delays)
    done = d[np.isfinite(d)]
    false = int((~window[rises]).sum())
    lead = np.percentile(leads, (10, 50, 90))
    return (f"{got:>4}/{len(starts):<3} {strong:>11} {done.size:>17} {(d <= 20).sum():>13} "
            f"{np.median(done):>8.0f}/{np.percentile(done, 90):<8.0f} {false:>13} "
            f"{'/'.join(f'{x:.0f}' for x in lead):>18}")
