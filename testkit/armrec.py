"""The bundled arm's recording the offline tools' tests and benches read: a known trajectory
whose torques Pinocchio computes, with a push on joint2, written by rosbags (sqlite3, MCAP) or
by mcap-ros2-support."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
from recordings import NAMES, write_joint_states
from rosbags.rosbag2 import StoragePlugin

from rbd_ros.robots import ARM

RATE = 1000.0
T_END = 1.5
BUMP = (0.6, 0.8, 1, 5.0)  # a 5 N m external torque on joint2 between 0.6 s and 0.8 s
Rec = dict[str, np.ndarray]  # the recording fixture's arrays, by name


def trajectory() -> tuple[np.ndarray, ...]:
    t = 10.0 + np.arange(int(T_END * RATE)) / RATE
    w = 2 * np.pi * np.linspace(0.3, 0.9, 7)
    amp = np.linspace(0.5, 0.2, 7)
    s = t[:, None] - 10.0
    q = amp * np.sin(w * s)
    v = amp * w * np.cos(w * s)
    a = -amp * w * w * np.sin(w * s)
    return t, q, v, a


def pinocchio_torques(q: np.ndarray, v: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, ...]:
    """Independent reference: Pinocchio's RNEA and gravity on the same URDF, by joint name."""
    pm = pin.buildModelFromUrdf(str(ARM))
    pd = pm.createData()
    order = [pm.getJointId(n) - 1 for n in NAMES]  # revolute joints: one coordinate each
    tau = np.array([pin.rnea(pm, pd, qi, vi, ai) for qi, vi, ai in zip(q, v, a, strict=True)])
    g = np.array([pin.computeGeneralizedGravity(pm, pd, qi) for qi in q])
    return tau[:, order], g[:, order]


def arm_recording() -> Rec:
    """The bundled arm along ``trajectory``, its torques Pinocchio's, pushed on joint2 (``BUMP``):
    time ``t``, ``q``, ``v``, ``a``, ``tau`` (RNEA), ``g`` (gravity), ``effort`` (measured),
    ``bump`` (whether the push acts)."""
    t, q, v, a = trajectory()
    tau, g = pinocchio_torques(q, v, a)
    bump = (t - 10.0 >= BUMP[0]) & (t - 10.0 < BUMP[1])
    effort = tau.copy()
    # the environment pushes joint2 forward: the same motion takes that much less of its motor
    effort[bump, BUMP[2]] -= BUMP[3]
    return {"t": t, "q": q, "v": v, "a": a, "tau": tau, "g": g, "effort": effort,
            "bump": bump}


def write_rosbags(path: Path, rec: dict[str, np.ndarray], plugin: StoragePlugin,
                  velocities: bool = True, cut: frozenset[int] = frozenset()) -> Path:
    """The recording with its efforts also as commands; ``cut``: joint states (and their
    commands) written cut short, as damaged messages."""
    return write_joint_states(path, [round(t * 1e9) for t in rec["t"]], rec["q"],
                              rec["v"] if velocities else None, rec["effort"],
                              commands=rec["effort"], plugin=plugin, cut=cut)


def write_mcap(path: Path, rec: dict[str, np.ndarray], chunk_size: int = 1024 * 1024) -> Path:
    """An MCAP written by mcap-ros2-support, a different writer from rosbags."""
    from mcap_ros2.writer import Writer as McapWriter

    schema = "\n".join([  # the ROS 2 definition, as `ros2 bag record` stores it
        "std_msgs/Header header", "string[] name", "float64[] position", "float64[] velocity",
        "float64[] effort", "=" * 80, "MSG: std_msgs/Header", "builtin_interfaces/Time stamp",
        "string frame_id", "=" * 80, "MSG: builtin_interfaces/Time", "int32 sec",
        "uint32 nanosec"])
    with path.open("wb") as f:
        w = McapWriter(f, chunk_size=chunk_size)
        sch = w.register_msgdef("sensor_msgs/msg/JointState", schema)
        for k, t in enumerate(rec["t"]):
            ns = round(t * 1e9)
            w.write_message("/joint_states", sch, {
                "header": {"stamp": {"sec": ns // 10**9, "nanosec": ns % 10**9},
                           "frame_id": ""},
                "name": NAMES, "position": rec["q"][k].tolist(),
                "velocity": rec["v"][k].tolist(), "effort": rec["effort"][k].tolist()},
                log_time=ns, publish_time=ns)
        w.finish()  # type: ignore[no-untyped-call]
    return path
