"""``rbd-ros check``: a trajectory file or recording against the URDF's limits. A held pose
needs Pinocchio's gravity torques; a motion faster than a joint's velocity limit is named at
its first sample, with exit status 1; YAML, JSON and a recording of the same trajectory say
the same; what it cannot use is an error that says why (exit status 2)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from pinref import PinRef

from rbd_ros.dynamics import load_urdf
from rbd_ros.robots import ARM

NAMES = [f"joint{k}" for k in range(1, 8)]
POSE = [0.3, 0.8, -0.2, -1.1, 0.4, 0.9, 0.1]


def rbd_ros(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rbd_ros.app.cli", *args], capture_output=True,
                          text=True, timeout=300)


def trajectory(points: list[dict[str, object]], names: list[str] = NAMES) -> dict[str, object]:
    return {"joint_names": names, "points": points}


def point(positions: list[float], seconds: float) -> dict[str, object]:
    return {"positions": positions,
            "time_from_start": {"sec": int(seconds), "nanosec": round(seconds % 1 * 1e9)}}


def yaml_of(traj: dict[str, object]) -> str:
    """The message's fields as ``ros2 topic echo`` would print them (block style)."""
    lines = [f"joint_names: [{', '.join(traj['joint_names'])}]", "points:"]  # type: ignore[arg-type]
    for p in traj["points"]:  # type: ignore[attr-defined]
        t = p["time_from_start"]
        lines += [f"- positions: {p['positions']}",
                  f"  time_from_start: {{sec: {t['sec']}, nanosec: {t['nanosec']}}}"]
    return "\n".join(lines) + "\n"


def test_a_held_pose_needs_pinocchios_gravity(tmp_path: Path) -> None:
    """One point at a bent pose, the arm already there: every sample's effort is gravity's
    (no speed, so no friction), so each joint's peak is Pinocchio's gravity torque there."""
    f = tmp_path / "hold.yaml"
    f.write_text(yaml_of(trajectory([point(POSE, 1.0)])))
    r = rbd_ros("check", str(f), "--urdf", "arm")
    assert r.returncode == 0, r.stderr
    assert "within every effort and velocity limit" in r.stdout
    model = load_urdf(ARM)
    g = PinRef(model, ARM.read_text(), False).gravity(np.array(POSE))
    rows = {m.group(1): float(m.group(2)) for m in
            re.finditer(r"^(joint\d)\s+(\S+)\s+\S+\s+\d+%", r.stdout, re.M)}
    assert list(rows) == NAMES, r.stdout
    np.testing.assert_allclose([rows[n] for n in NAMES], np.abs(g), rtol=1e-3, atol=1e-3)


def test_a_joint_too_fast_is_named_and_exits_1(tmp_path: Path) -> None:
    """joint4 moves 2.5 rad in one second along a line (positions only: joint_trajectory_
    controller's linear segment), its URDF limit 2.2 rad/s: over from the first sample. The
    same trajectory as JSON and in a recording says the same; --plot draws the picture."""
    start = [0.0] * 7
    end = [0.0, 0.0, 0.0, 2.5, 0.0, 0.0, 0.0]
    traj = trajectory([point(end, 1.0)])
    files = {"yaml": tmp_path / "fast.yaml", "json": tmp_path / "fast.json"}
    files["yaml"].write_text(yaml_of(traj))
    files["json"].write_text(json.dumps(traj))
    bag = tmp_path / "fast_bag"
    _write_bag(bag, end, 1.0)
    said = []
    for f in (*files.values(), bag):
        r = rbd_ros("check", str(f), "--urdf", "arm", "--start",
                    *(f"{n}={x}" for n, x in zip(NAMES, start, strict=True)),
                    "--plot", str(tmp_path / f"{f.stem}.png"))
        assert r.returncode == 1, (r.stdout, r.stderr)
        over = [x for x in r.stdout.splitlines() if x.startswith("over: ")]
        assert over == ["over: joint4 at 0.000 s: velocity 2.5 rad/s over its URDF limit "
                        "2.2 rad/s (113.6%)"], r.stdout
        assert (tmp_path / f"{f.stem}.png").stat().st_size > 10_000
        said.append(r.stdout.split("\n", 1)[1].split("drawn:")[0])  # all but the source line
    assert said[0] == said[1] == said[2]


def _write_bag(path: Path, positions: list[float], seconds: float) -> None:
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_HUMBLE)
    T = ts.types
    kind = "trajectory_msgs/msg/JointTrajectory"
    pt = T["trajectory_msgs/msg/JointTrajectoryPoint"](
        positions=np.array(positions), velocities=np.zeros(0), accelerations=np.zeros(0),
        effort=np.zeros(0), time_from_start=T["builtin_interfaces/msg/Duration"](
            sec=int(seconds), nanosec=round(seconds % 1 * 1e9)))
    msg = T[kind](header=T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](sec=0, nanosec=0), frame_id=""),
        joint_names=NAMES, points=[pt])
    with Writer(path, version=8) as w:
        c = w.add_connection("/arm_controller/joint_trajectory", kind, typestore=ts)
        w.write(c, 1, ts.serialize_cdr(msg, kind))


def test_what_it_cannot_use_is_an_error_that_says_why(tmp_path: Path) -> None:
    cases = [
        (trajectory([point([*POSE[:6], 0.0], 1.0)], [*NAMES[:6], "gripper"]),
         "joints ['gripper'] are not in the URDF"),
        (trajectory([point(POSE, 1.0), point(POSE, 1.0)]),
         "time_from_start must be >= 0 and strictly increasing"),
        (trajectory([point(POSE[:5], 1.0)]), "point 0 has 5 positions for 7 joints"),
        (trajectory([]), "the trajectory has 7 joint names and 0 points"),
    ]
    for k, (traj, why) in enumerate(cases):
        f = tmp_path / f"bad{k}.json"
        f.write_text(json.dumps(traj))
        r = rbd_ros("check", str(f), "--urdf", "arm")
        assert r.returncode == 2 and why in r.stderr, (why, r.stderr)
        assert "Traceback" not in r.stderr
    f = tmp_path / "bad.yaml"
    f.write_text("joint_names: [joint1\npoints: {")
    r = rbd_ros("check", str(f), "--urdf", "arm")
    assert r.returncode == 2 and r.stderr.startswith(f"error: {f}: not YAML"), r.stderr
    f.write_text(yaml_of(trajectory([point(POSE, 1.0)])))
    r = rbd_ros("check", str(f), "--urdf", "arm", "--start", "elbow=0.1")
    assert r.returncode == 2 and "--start ['elbow']: the URDF has no such joints" in r.stderr
