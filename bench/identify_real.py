"""``rbd-ros identify`` on real recordings of real arms with measured efforts: held-out torque
RMS of the URDF's (CAD) parameters beside the identified ones, per joint, and whether the
identified URDF loads (strictly) in the core and in Pinocchio and agrees with it.

The recordings are public but not ours, so they are not in the repository; give their folders:

* ``--tiago DIR --tiago-urdf FILE``: PAL TIAGo's torso and arm on an exciting trajectory, 80 s
  at 100 Hz, motor currents of arm joints 1-4 (joints 5-7 read zero, the torso's unit is not
  said). DIR: ``examples/tiago/data/identification/dynamic`` of github.com/thanhndv212/
  figaroh-plus (Apache-2.0, commit c3b5172). The currents become torques with the motor
  constants of that repository's TIAGo example (gear ratio 100 times 0.136 / -0.087 N m/A);
  the other joints' efforts are left out (``--ignore-efforts``). FILE: a URDF of the robot
  with joints torso_lift_joint, arm_1_joint ... arm_7_joint, e.g. that repository's
  ``examples/tiago/urdf/tiago_no_hand.urdf``; its other joints (wheels, head) are made fixed.
* ``--gen3 DIR --gen3-urdf FILE``: a Kinova Gen3 with joint torque sensors, 1 kHz, two
  optimised trajectories (4.7 s, identified on; 2.3 s, validated on): ``opti_traj_testing1.csv``
  and ``opti_traj_testing2.csv`` of github.com/wissem01chiha/dynamic-identification at commit
  00dc27c (MIT there), ``pyDynaMapp/data/kinova/validation_data``; columns Position1-7,
  Velocity1-7 and TorqueSm1-7 (the sensors; Torque1-7 is a model). FILE: its gen3.urdf
  (joints joint_1 ... joint_7). Run twice: stamped as logged, and stamped as a ROS driver
  stamps its states (jitter and pauses added: what identify's time base is for).

* ``--panda DIR [--panda-urdf FILE]``: a Franka Emika Panda with joint torque sensors, about
  1 kHz with the stamps as logged (0.7-8.8 ms apart), 21 s of the exciting trajectory of Gaz et
  al. (RA-L 2019): DIR is ``matlab/data/Exciting_Traj/Trajectory_1/rbt_log`` of
  github.com/marcocognetti/FrankaEmikaPandaDynModel at commit 24d85ce (GPL-3.0 there), the
  files ``exciting_traj_{time,positions,velocity,torques}.txt``. FILE: example-robot-data's
  ``panda.urdf`` unless given (its fingers are made fixed). Identified on 0-10 s, validated
  on 10-13.3 s (the trajectory repeats every 13.3 s).

* ``--ur10e DIR --ur10e-urdf FILE``: a Universal Robots UR10e at about 100 Hz (stamps 9-12 ms
  apart), the same 50 s trajectories run without a load and holding 2.805 kg (the authors'
  mass): ``dataset_ur10e/identification_data/ur-20_02_19_{14,15}harm50sec{,Load}.csv`` of
  github.com/shamilmamedov/dynamic_calibration at commit 11af40e; columns t, q, qd, i, i_des,
  tau_des (six each). Its efforts are motor currents, as UR's ROS driver publishes them:
  the bags carry the currents, and ``--effort-scale`` makes them torques with the
  controller's own ratio of desired torque to desired current while the arm holds still
  (joints 2-5; joints 1 and 6 hardly carry a torque when still: the authors' gains). FILE:
  that repository's ``URe/urdf/ur10e.urdf``. Identified on the 14-harmonic run, validated on
  the 15-harmonic one; the payload on ``tool0`` from each loaded run, against the URDF and
  against the same run without the load (``--baseline``), with the controller's gains and
  with the authors'.

Each recording is written into a rosbag2 (sqlite3) as sensor_msgs/JointState and identified
as a user would: ``.venv/bin/python bench/identify_real.py --tiago ... --gen3 ...``. With
``--rotors``, the Gen3 and the UR10e once more with a motor's rotor at each joint in the URDF
(Drake's tags, 1e-6 kg m^2 through a gear of 100: 0.01 kg m^2), so that each joint's armature
is fitted too.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testkit"))

from urdfs import with_rotors as _with_rotors

from rbd_ros.dynamics import load_urdf
from rbd_ros.identify.run import IdentifyOptions, identify

TIAGO_JOINTS = ["torso_lift_joint"] + [f"arm_{k}_joint" for k in range(1, 8)]
# N m per A at the joint: gear ratio times motor constant (arm 1-4; 5-7 are not measured)
TIAGO_NM_PER_A = {"arm_1_joint": 100 * 0.136, "arm_2_joint": 100 * 0.136,
                  "arm_3_joint": 100 * -0.087, "arm_4_joint": 100 * -0.087}
GEN3_JOINTS = [f"joint_{k}" for k in range(1, 8)]


def columns(path: Path) -> dict[str, np.ndarray]:
    with path.open() as f:
        rows = list(csv.reader(f))
    head = [h.strip().lstrip("- ").strip() for h in rows[0]]
    data = np.array(rows[1:], dtype=np.float64)
    return {h: data[:, k] for k, h in enumerate(head)}


def write_bag(path: Path, names: list[str], t: np.ndarray, q: np.ndarray, v: np.ndarray | None,
              e: np.ndarray) -> Path:
    """A rosbag2 of /joint_states (``v`` None: recorded without velocities)."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_HUMBLE)
    JS, Header = ts.types["sensor_msgs/msg/JointState"], ts.types["std_msgs/msg/Header"]
    Time = ts.types["builtin_interfaces/msg/Time"]
    with Writer(path, version=8) as w:
        js = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=ts)
        for k, tk in enumerate(t):
            ns = 1_700_000_000_000_000_000 + round(tk * 1e9)
            msg = JS(header=Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
                     name=names, position=q[k].copy(),
                     velocity=np.empty(0) if v is None else v[k].copy(), effort=e[k].copy())
            w.write(js, ns, ts.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
    return path


def recorded_only(urdf: Path, joints: list[str], tmp: Path) -> Path:
    """``urdf`` with every joint but ``joints`` fixed (wheels, head, fingers): identify's
    model has exactly the recorded joints."""
    import xml.etree.ElementTree as ET

    root = ET.parse(urdf).getroot()
    for joint in root.iter("joint"):
        if joint.get("name") not in joints and joint.get("type") != "fixed":
            joint.set("type", "fixed")
            for child in [c for c in joint if c.tag in ("limit", "axis", "dynamics", "mimic",
                                                         "safety_controller")]:
                joint.remove(child)
    for element in [e for e in root if e.tag in ("transmission", "gazebo")]:
        root.remove(element)
    out = tmp / f"recorded_{urdf.name}"
    ET.ElementTree(root).write(out)
    return out


def tiago(folder: Path, tmp: Path) -> tuple[list[Path], list[Path] | None, tuple[str, ...]]:
    pos, vel, eff = (columns(folder / f"tiago_{k}.csv") for k in ("position", "velocity",
                                                                  "effort"))
    q = np.column_stack([pos[f"{n}_position"] for n in TIAGO_JOINTS])
    v = np.column_stack([vel[f"{n}_velocity"] for n in TIAGO_JOINTS])
    e = np.column_stack([eff[f"{n}_effort"] * TIAGO_NM_PER_A.get(n, 1.0) for n in TIAGO_JOINTS])
    bag = write_bag(tmp / "tiago", TIAGO_JOINTS, pos["t"], q, v, e)
    return [bag], None, tuple(n for n in TIAGO_JOINTS if n not in TIAGO_NM_PER_A)


def gen3(folder: Path, tmp: Path, jitter: bool = False
         ) -> tuple[list[Path], list[Path] | None, tuple[str, ...]]:
    """The two trajectories, stamped as logged (every 1 ms) or, with ``jitter``, as a ROS
    driver stamps them: each state 0-0.6 ms after its sample (0.4-1.6 ms apart), and three
    pauses of 8 ms in each recording."""
    rng = np.random.default_rng(0)
    bags = []
    for k in (1, 2):
        c = columns(folder / f"opti_traj_testing{k}.csv")
        q, v, e = (np.column_stack([c[f"{f}{j}"] for j in range(1, 8)])
                   for f in ("Position", "Velocity", "TorqueSm"))
        t, kept = c["Time"] * 1e-3, np.ones(len(c["Time"]), dtype=bool)
        if jitter:
            t = t + rng.uniform(0.0, 6e-4, t.size)
            for start in (np.array([0.2, 0.5, 0.8]) * t.size).astype(int):
                kept[start : start + 7] = False
        bags.append(write_bag(tmp / f"gen3_{k}_{jitter}", GEN3_JOINTS, t[kept], q[kept],
                              v[kept], e[kept]))
    return bags[:1], bags[1:], ()


PANDA_JOINTS = [f"panda_joint{k}" for k in range(1, 8)]


def panda(folder: Path, tmp: Path) -> tuple[list[Path], list[Path] | None, tuple[str, ...]]:
    """The exciting trajectory's log (``exciting_traj_{time,positions,velocity,torques}.txt``:
    a state's seven values on seven lines), stamped as logged. The trajectory is periodic
    (13.3 s: 0.15 pi rad/s, ``AutomaticExcTrjGen.m``), so its 21 s repeat its first 7.7 s:
    identified on 0-10 s, validated on 10-13.3 s, motion the fit has not seen."""
    bags = [write_bag(tmp / f"panda_{k}", PANDA_JOINTS, *part)
            for k, part in enumerate(panda_parts(folder))]
    return bags[:1], bags[1:], ()


def panda_parts(folder: Path) -> list[tuple[np.ndarray, ...]]:
    """(t, q, v, effort) of the Panda's 0-10 s and 10-13.3 s (:func:`panda`)."""
    t = np.loadtxt(folder / "exciting_traj_time.txt")
    q, v, e = (np.loadtxt(folder / f"exciting_traj_{f}.txt").reshape(t.size, 7)
               for f in ("positions", "velocity", "torques"))
    period = 2.0 / 0.15
    return [(t[k], q[k], v[k], e[k]) for k in (t < 10.0, (t >= 10.0) & (t < period))]


UR10E_JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                "wrist_2_joint", "wrist_3_joint"]
UR10E_AUTHORS_GAINS = np.array([14.87, 13.26, 11.13, 10.62, 11.03, 11.47])  # N m per A (main.m)
UR10E_LOAD = 2.805  # kg


def ur10e_csv(folder: Path, name: str) -> np.ndarray:
    """Rows with every column of the 31 and numbers of a sane size (one of the files ends with
    a partial row, then one of garbage)."""
    rows = np.array([r for r in csv.reader((folder / name).open()) if len(r) == 31],
                    dtype=np.float64)
    sane: np.ndarray = rows[(np.abs(rows) < 1e6).all(axis=1)]
    return sane


def ur10e_gains(folder: Path) -> np.ndarray:
    """Each joint's desired torque over desired current while the arm holds still (no joint
    faster than 1 mrad/s), over the four recordings, least squares; the authors' for 1 and 6."""
    num, den = np.zeros(6), np.zeros(6)
    for path in sorted(folder.glob("ur-20_02_19_1*harm50sec*.csv")):
        d = ur10e_csv(folder, path.name)
        still = np.abs(d[:, 7:13]).max(axis=1) < 1e-3
        num += (d[still, 25:31] * d[still, 19:25]).sum(axis=0)
        den += (d[still, 19:25] ** 2).sum(axis=0)
    gains: np.ndarray = UR10E_AUTHORS_GAINS.copy()
    gains[1:5] = num[1:5] / den[1:5]
    return gains


def ur10e(folder: Path, tmp: Path) -> dict[str, Path]:
    """The four runs as bags of joint states whose efforts are the motor currents."""
    bags = {}
    for harm in (14, 15):
        for load in ("", "Load"):
            d = ur10e_csv(folder, f"ur-20_02_19_{harm}harm50sec{load}.csv")
            bags[f"{harm}{load}"] = write_bag(tmp / f"ur10e_{harm}{load}", UR10E_JOINTS,
                                              d[:, 0] - d[0, 0], d[:, 1:7], d[:, 7:13],
                                              d[:, 13:19])
    return bags


def ur10e_payloads(bags: dict[str, Path], urdf: Path, gains: np.ndarray) -> None:
    from rbd_ros.identify.payload import identify_payload

    print(f"\n## Universal Robots UR10e: identify --payload tool0, {UR10E_LOAD} kg held "
          "(efforts: motor currents x --effort-scale)")
    print(f"{'gains':<13} {'run':>4} {'against':>9} {'mass kg':>8} {'error %':>8} "
          f"{'+- %':>6} {'CoM in tool0 (m)':>24} {'physical':>9}")
    for label, k in (("controller's", gains), ("authors'", UR10E_AUTHORS_GAINS)):
        scale = dict(zip(UR10E_JOINTS, k, strict=True))
        for harm in (14, 15):
            for baseline in (None, [bags[f"{harm}"]]):
                with tempfile.TemporaryDirectory() as out:
                    payload, _ = identify_payload(
                        [bags[f"{harm}Load"]], Path(out),
                        IdentifyOptions(urdf=urdf, effort_scale=scale), "tool0",
                        baseline=baseline)
                print(f"{label:<13} {harm:>4} {'baseline' if baseline else 'URDF':>9} "
                      f"{payload.mass:8.3f} {100 * (payload.mass / UR10E_LOAD - 1):+8.1f} "
                      f"{100 * payload.mass_sigma / UR10E_LOAD:6.1f} "
                      f"{' '.join(f'{x:+.3f}' for x in payload.com):>24} "
                      f"{'yes' if payload.not_physical() is None else 'no':>9}")


def loads_and_agrees(urdf: Path) -> float:
    """The identified URDF loaded strictly by the core and by Pinocchio: the largest
    difference of their inverse dynamics at random states (N m)."""
    import pinocchio as pin

    from rbd_ros.dynamics import Data, rnea

    m = load_urdf(urdf, strict=True)
    d = Data(m)
    pm = pin.buildModelFromUrdf(str(urdf))
    ids = [pm.getJointId(n) for n in m.joint_names]
    for k, j in enumerate(ids):  # Pinocchio reads no rotor inertia from a URDF
        pm.armature[pm.joints[j].idx_v] = m.joint(m.joint_names[k]).armature
    pd = pm.createData()
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(20):
        q, v, a = (rng.uniform(-1, 1, m.nv) for _ in range(3))
        qp, vp, ap = (np.zeros(pm.nv) for _ in range(3))
        for k, j in enumerate(ids):
            idx = pm.joints[j].idx_q
            qp[idx], vp[idx], ap[idx] = q[k], v[k], a[k]
        ref = pin.rnea(pm, pd, qp, vp, ap)[[pm.joints[j].idx_v for j in ids]]
        worst = max(worst, float(np.abs(rnea(m, d, q, v, a) - ref).max()))
    return worst


def with_rotors(urdf: Path, joints: list[str], tmp: Path) -> Path:
    """A copy of ``urdf`` with a transmission per joint of ``joints`` holding a motor's rotor
    (1e-6 kg m^2 through a gear of 100)."""
    out = tmp / f"rotors_{urdf.name}"
    out.write_text(_with_rotors(urdf.read_text(), {j: (1e-6, 100.0) for j in joints}))
    return out


def run(label: str, urdf: Path, recording: tuple[list[Path], list[Path] | None,
                                                  tuple[str, ...]], cutoff: float,
        scale: dict[str, float] | None = None) -> None:
    """Identified plainly and with ``--drive`` (each joint's effort scale and offset: motor
    constants and sensor biases are never exact)."""
    train, validate, ignore = recording
    reports, seconds, agree = [], [], 0.0
    with tempfile.TemporaryDirectory() as out:
        for drive in (False, True):
            t = time.perf_counter()
            reports.append(identify(train, Path(out), IdentifyOptions(
                urdf=urdf, cutoff=cutoff, drive=drive, ignore_efforts=ignore,
                effort_scale=scale or {}), validate))
            seconds.append(time.perf_counter() - t)
            agree = max(agree, loads_and_agrees(Path(out) / "identified.urdf"))
    names = load_urdf(urdf).state_joint_names
    where = "a second recording" if validate else "the last quarter of the recording"
    print(f"\n## {label}\nheld-out torque RMS (N m) on {where}, filtered at {cutoff:g} Hz "
          f"(identify took {seconds[0]:.1f} s, with --drive {seconds[1]:.1f} s)")
    print(f"{'':<20} {'':>11} {'plain':>30} {'with --drive':>30}")
    print(f"{'joint':<20} {'URDF (CAD)':>11} " + 2 * f"{'least sq.':>11} {'identified':>11} "
          f"{'ratio':>7} ")
    for j, (n, u) in enumerate(zip(names, reports[0].rms["urdf"], strict=True)):
        if np.isfinite(u):
            print(f"{n:<20} {u:11.3f} " + " ".join(
                f"{r.rms['least squares'][j]:11.3f} {r.rms['identified'][j]:11.3f} "
                f"{r.rms['identified'][j] / u:6.2f}x" for r in reports))
        else:
            print(f"{n:<20} {'(efforts not used)':>23}")
    pulls = [re.search(r"strength (\S+) .* left-out torques (\S+) %", r.text) for r in reports]
    print("pulled towards the URDF (plain, with --drive): strength " + ", ".join(
        f"{m[1]} ({m[2]} % closer than least squares on left-out folds)" for m in pulls if m))
    print(f"identified.urdf (both fits) loads strictly in rbd_ros and in Pinocchio; their "
          f"inverse dynamics differ by at most {agree:.1e} N m")


def observer_levels(folder: Path, urdf: Path) -> None:
    """The momentum observer over the Gen3's two recordings (free motion) with its URDF: each
    joint's peak residual past the first 0.2 s (the collision threshold it would need), at the
    default (two lags) beside the single lag it had at 50/s and a single lag at 100/s."""
    from rbd_ros.dynamics.estimation.observer import DEFAULT_GAIN, MomentumObserver

    m = load_urdf(urdf)
    variants = (("one lag 50/s", 50.0, True), ("one lag 100/s", 100.0, True),
                (f"two lags {DEFAULT_GAIN:g}/s", DEFAULT_GAIN, False))
    print("\n## Kinova Gen3: observer peaks (N m, joints 1-7) over free motion, CAD URDF")
    for k in (1, 2):
        c = columns(folder / f"opti_traj_testing{k}.csv")
        t = (c["Time"] - c["Time"][0]) * 1e-3
        q, v, e = (np.column_stack([c[f"{f}{j}"] for j in range(1, 8)])
                   for f in ("Position", "Velocity", "TorqueSm"))
        for differenced in (False, True):
            for label, gain, single in variants:
                observer, peak = MomentumObserver(m, gain), np.zeros(7)
                for i in range(len(t)):
                    r = observer.update(t[i], q[i], v[i], e[i], differenced)
                    if t[i] >= 0.2:
                        peak = np.maximum(peak, np.abs(observer.single_lag if single else r))
                print(f"trajectory {k}, {'positions only' if differenced else 'velocities':<14} "
                      f"{label:<16} {' '.join(f'{x:6.2f}' for x in peak)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiago", type=Path)
    parser.add_argument("--tiago-urdf", type=Path)
    parser.add_argument("--gen3", type=Path)
    parser.add_argument("--gen3-urdf", type=Path)
    parser.add_argument("--panda", type=Path)
    parser.add_argument("--panda-urdf", type=Path, help="default: example-robot-data's")
    parser.add_argument("--ur10e", type=Path)
    parser.add_argument("--ur10e-urdf", type=Path)
    parser.add_argument("--rotors", action="store_true",
                        help="the Gen3 and the UR10e again with their joints' armatures fitted")
    args = parser.parse_args()
    if not (args.tiago or args.gen3 or args.ur10e or args.panda):
        parser.error("give --tiago DIR --tiago-urdf FILE, --gen3 DIR --gen3-urdf FILE and/or "
                     "--ur10e DIR --ur10e-urdf FILE")
    with tempfile.TemporaryDirectory() as tmp:
        if args.tiago:
            run("PAL TIAGo, torso + arm (arm 1-4 measured, motor currents)",
                recorded_only(args.tiago_urdf, TIAGO_JOINTS, Path(tmp)),
                tiago(args.tiago, Path(tmp)), cutoff=5.0)
        if args.gen3:
            logged = gen3(args.gen3, Path(tmp))
            run("Kinova Gen3 (joint torque sensors)", args.gen3_urdf, logged, cutoff=10.0)
            if args.rotors:
                run("Kinova Gen3 (joint torque sensors), a rotor at each joint",
                    with_rotors(args.gen3_urdf, GEN3_JOINTS, Path(tmp)), logged, cutoff=10.0)
            run("Kinova Gen3, stamped as a ROS driver does (0.4-1.6 ms apart, 8 ms pauses)",
                args.gen3_urdf, gen3(args.gen3, Path(tmp), jitter=True), cutoff=10.0)
            observer_levels(args.gen3, args.gen3_urdf)
        if args.panda:
            from pinref import robot_path

            urdf = recorded_only(args.panda_urdf or Path(robot_path("panda")), PANDA_JOINTS,
                                 Path(tmp))
            run("Franka Emika Panda (joint torque sensors), stamped as logged (0.7-8.8 ms "
                "apart)", urdf, panda(args.panda, Path(tmp)), cutoff=10.0)
        if args.ur10e:
            gains = ur10e_gains(args.ur10e)
            print("\nUR10e gains (N m per A): controller's desired torque / desired current "
                  f"while still {' '.join(f'{k:.3f}' for k in gains[1:5])} (joints 2-5); "
                  f"the authors' {' '.join(f'{k:g}' for k in UR10E_AUTHORS_GAINS)}")
            bags = ur10e(args.ur10e, Path(tmp))
            run("Universal Robots UR10e (motor currents x --effort-scale, controller's gains)",
                args.ur10e_urdf, ([bags["14"]], [bags["15"]], ()), cutoff=10.0,
                scale=dict(zip(UR10E_JOINTS, gains, strict=True)))
            if args.rotors:
                run("Universal Robots UR10e, a rotor at each joint",
                    with_rotors(args.ur10e_urdf, UR10E_JOINTS, Path(tmp)),
                    ([bags["14"]], [bags["15"]], ()), cutoff=10.0,
                    scale=dict(zip(UR10E_JOINTS, gains, strict=True)))
            ur10e_payloads(bags, args.ur10e_urdf, gains)
    return 0


if __name__ == "__main__":
    sys.exit(main())
