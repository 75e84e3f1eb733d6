"""``rbd-ros analyze`` of a real humanoid's recordings: how the floating-base node's contact split
and balance, fed a real robot's joint states, base pose and IMU, compare with the force
sensors under its feet, which it never sees.

The recordings are public but not ours, so they are not in the repository; give their folder:

* ``--icub DIR``: iCub v2.5 (iCubGenova04, 33 kg, 26 joints recorded) walking about a metre
  (``walking.mat``, 12 s) and moving its centre of mass along a sinusoid on both feet
  (``com-sinusoid.mat``, 20 s), at about 100 Hz with stamps 8-13 ms apart: joint positions
  and velocities, the base's pose from Vicon, the IMU on the base (``imuAcc``, in the URDF's
  ``root_link_imu_frame``) and each foot's normal force from its force-torque sensor
  (``lfForceZ``, ``rfForceZ``). DIR: ``src/resources/iCubGenova04`` of github.com/ami-iit/
  paper_ramadoss-2022-iros-humanoid-base-estimation at commit 6c08d4c (its ``model.urdf`` is the
  robot's). The .mat files are MATLAB 7.3 (HDF5): ``pip install h5py`` to read them.

Each recording becomes a rosbag2 as a driver and a state estimator would record it: joint
states (efforts zero: none were recorded, and none is used with the contacts given),
odometry (the Vicon pose; its twist by central differences), the IMU's specific force turned
into the base frame, and ``ActiveContacts`` from the force sensors (a sole touches above 40 N,
lets go below 20 N: a Schmitt trigger, as the dataset's own estimators use). The wrists, not
recorded, are held at zero. The soles are the sole frames of the URDF, 0.19 x 0.09 m, centred
3 cm ahead of the frame (the extent of the sole's skin patches in the URDF, plus 1 cm).

    .venv/bin/python bench/legged_real.py --icub DIR
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testkit"))  # the recording writer the tests use

from recordings import write_legged  # noqa: E402

from rbd_ros.bag.legged import LeggedOptions, analyze_legged  # noqa: E402
from rbd_ros.dynamics import load_urdf  # noqa: E402

#: the recordings' joint order (the dataset's example script)
JOINTS = ["neck_pitch", "neck_roll", "neck_yaw", "torso_pitch", "torso_roll", "torso_yaw",
          "l_shoulder_pitch", "l_shoulder_roll", "l_shoulder_yaw", "l_elbow",
          "r_shoulder_pitch", "r_shoulder_roll", "r_shoulder_yaw", "r_elbow",
          "l_hip_pitch", "l_hip_roll", "l_hip_yaw", "l_knee", "l_ankle_pitch", "l_ankle_roll",
          "r_hip_pitch", "r_hip_roll", "r_hip_yaw", "r_knee", "r_ankle_pitch", "r_ankle_roll"]
WRISTS = [f"{s}_wrist_{j}" for s in "lr" for j in ("prosup", "pitch", "yaw")]
SOLES = ("l_sole", "r_sole")
ON, OFF = 40.0, 20.0  # N: the Schmitt trigger's thresholds on a foot's normal force
IMU_RPY = (-2.09439521059, 0.0, -1.57079632679)  # root_link -> root_link_imu_frame (URDF)


def rpy_matrix(r: float, p: float, y: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def quaternion(R: np.ndarray) -> np.ndarray:
    """x, y, z, w of a rotation matrix (Shepperd's method)."""
    w = np.sqrt(max(0.0, 1.0 + R[0, 0] + R[1, 1] + R[2, 2])) / 2
    x = np.copysign(np.sqrt(max(0.0, 1.0 + R[0, 0] - R[1, 1] - R[2, 2])) / 2, R[2, 1] - R[1, 2])
    y = np.copysign(np.sqrt(max(0.0, 1.0 - R[0, 0] + R[1, 1] - R[2, 2])) / 2, R[0, 2] - R[2, 0])
    z = np.copysign(np.sqrt(max(0.0, 1.0 - R[0, 0] - R[1, 1] + R[2, 2])) / 2, R[1, 0] - R[0, 1])
    q = np.array([x, y, z, w])
    return np.asarray(q / np.linalg.norm(q), dtype=np.float64)


def read_mat(path: Path) -> dict[str, np.ndarray]:
    try:
        import h5py
    except ImportError:
        sys.exit("error: the iCub recordings are MATLAB 7.3 (HDF5) files: pip install h5py")
    with h5py.File(path, "r") as f:
        return {k: np.array(f[k]).T for k in ("estimatorJointsTime", "estimatorJointsPos",
                                              "estimatorJointsVel", "imuAcc", "imuOmega",
                                              "linkBasePos", "linkBaseRot", "lfForceZ",
                                              "rfForceZ")}


def in_touch(force: np.ndarray) -> np.ndarray:
    """The Schmitt trigger: per state, whether the foot touches."""
    out = np.zeros(len(force), dtype=bool)
    touching = force[0] > ON
    for k, f in enumerate(force):
        touching = f > OFF if touching else f > ON
        out[k] = touching
    return out


def recording(mat: dict[str, np.ndarray], urdf: str, folder: Path) -> tuple[Path, np.ndarray]:
    """The rosbag2 of one .mat, and the measured normal forces (states x soles)."""
    t_abs = mat["estimatorJointsTime"][:, 0]
    t = t_abs - t_abs[0]
    n = len(t)
    R = [rpy_matrix(*rpy) for rpy in mat["linkBaseRot"]]
    p = mat["linkBasePos"]
    q = np.zeros((n, 7 + len(JOINTS)))
    v = np.zeros((n, 6 + len(JOINTS)))
    q[:, :3], q[:, 7:], v[:, 6:] = p, mat["estimatorJointsPos"], mat["estimatorJointsVel"]
    for k in range(n):
        a, b = max(k - 1, 0), min(k + 1, n - 1)
        dt = t[b] - t[a]
        q[k, 3:7] = quaternion(R[k])
        v[k, :3] = R[k].T @ (p[b] - p[a]) / dt  # base frame
    imu_axes = rpy_matrix(*IMU_RPY)
    v[:, 3:6] = mat["imuOmega"] @ imu_axes.T  # the gyro's, base frame, as an estimator's
    imu = mat["imuAcc"] @ imu_axes.T  # specific force, base frame
    force = np.c_[mat["lfForceZ"][:, 0], mat["rfForceZ"][:, 0]]
    touch = np.c_[in_touch(force[:, 0]), in_touch(force[:, 1])]
    active: dict[int, list[str]] = {}
    for k in range(n):
        if k == 0 or (touch[k] != touch[k - 1]).any():
            active[k] = [s for s, on in zip(SOLES, touch[k], strict=True) if on]
    bag = write_legged(folder, urdf, t, q, v, np.zeros((n, len(JOINTS))), JOINTS,
                       round(t_abs[0] * 1e9), active=active, imu=(1, imu))
    return bag, force


def options(imu: bool) -> LeggedOptions:
    sole = {"offset": (0.03, 0.0, 0.0), "half_length": 0.095, "half_width": 0.045}
    return LeggedOptions(contact_links=SOLES, contacts={s: dict(sole) for s in SOLES},
                         hold=dict.fromkeys(WRISTS, 0.0), outputs=("parquet",),
                         imu_topic="/imu" if imu else "/no_imu")  # a topic not recorded


def compare(out: Path, force: np.ndarray) -> dict[str, Any]:
    import pyarrow.parquet as pq

    rows = pq.read_table(out / "legged.parquet").to_pydict()
    split = np.c_[[rows[f"{s}_force_z"] for s in SOLES]].T
    touch = np.c_[[rows[f"{s}_in_touch"] for s in SOLES]].T == 1.0
    ok = np.isfinite(split).all(axis=1) | (np.isfinite(split).any(axis=1) & (touch.sum(1) == 1))
    split = np.nan_to_num(split)
    total_split, total_meas = split.sum(1)[ok], force.sum(1)[ok]
    single = ok & (touch.sum(1) == 1)
    stance = touch[single].argmax(axis=1)
    s_split = split[single][np.arange(single.sum()), stance]
    s_meas = force[single][np.arange(single.sum()), stance]
    double = ok & (touch.sum(1) == 2)

    def share(f: np.ndarray) -> np.ndarray:
        return np.asarray(f[:, 0] / np.maximum(f.sum(1), 1e-9))

    def rms(x: np.ndarray) -> str:
        return f"{np.sqrt(np.mean(np.square(x))):.3g}" if len(x) else "-"

    return {"states (answered)": f"{len(rows['t'])} ({ok.sum()})",
            "total normal force, mean (N)": f"split {total_split.mean():.1f}, sensors "
                                            f"{total_meas.mean():.1f}",
            "total: rms difference (N)": rms(total_split - total_meas),
            "single support: states": int(single.sum()),
            "  stance sole's force: rms difference (N)": rms(s_split - s_meas),
            "double support: states": int(double.sum()),
            "  left sole's share: rms difference": rms(share(split[double])
                                                       - share(force[double])),
            **{f"status: {k}": n for k, n in _statuses(rows["status"]).items()}}


def _statuses(status: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in status:
        key = s.split(";")[0][:90]
        out[key] = out.get(key, 0) + 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--icub", type=Path, required=True,
                    help="src/resources/iCubGenova04 of ami-iit/paper_ramadoss-2022-iros-...")
    args = ap.parse_args()
    urdf = (args.icub / "model.urdf").read_text()
    mass = load_urdf(args.icub / "model.urdf", floating_base=True).total_mass
    print(f"iCub v2.5, URDF mass {mass:.2f} kg (m g = {mass * 9.81:.1f} N)")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("walking", "com-sinusoid"):
            bag, force = recording(read_mat(args.icub / f"{name}.mat"), urdf, Path(tmp) / name)
            for imu in (True, False):
                out = Path(tmp) / f"{name}_{imu}"
                analyze_legged([bag], out, options(imu))
                print(f"\n## {name}, {'with the IMU' if imu else 'no IMU (base at rest)'}")
                for k, x in compare(out, force).items():
                    print(f"  {k:<42} {x}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
