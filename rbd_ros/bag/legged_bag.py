"""legged.mcap: what the floating-base node publishes for a legged robot's recording, topic by
topic, as the bytes it sends (:mod:`rbd_ros.wire.stamped`; flight's joint accelerations as
rclpy would write them), each stamped and recorded at its joint state's stamp, under the node's
default name: open it next to the recording in Foxglove or PlotJuggler."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from ..dynamics.estimation.legged import Answer, Legged
from ..wire.cdr import CDR_LE, trajectory_accelerations
from ..wire.stamped import BalanceBytes, JointStateBytes, StampedBytes
from .mcap_writer import MESSAGE_DATA, OP_MESSAGE, McapWriter
from .writers import JOINT_STATE_DEF

NODE = "/rbd_floating_base"
_RULE = "=" * 80
_TIME = ["MSG: builtin_interfaces/Time", "int32 sec", "uint32 nanosec"]
_HEADER = ["MSG: std_msgs/Header", "builtin_interfaces/Time stamp", "string frame_id"]
_VECTOR3 = ["MSG: geometry_msgs/Vector3", "float64 x", "float64 y", "float64 z"]
_POINT = ["MSG: geometry_msgs/Point", "float64 x", "float64 y", "float64 z"]


def _definition(fields: list[str], *deps: list[str]) -> str:
    """A ros2msg schema as ``ros2 bag`` stores it: the fields, then each dependency's."""
    lines = list(fields)
    for dep in deps:
        lines += [_RULE, *dep]
    return "\n".join(lines)


#: message type -> its schema (the fields of the .msg files, dependencies appended)
SCHEMAS = {
    "geometry_msgs/msg/WrenchStamped": _definition(
        ["std_msgs/Header header", "geometry_msgs/Wrench wrench"], _HEADER, _TIME,
        ["MSG: geometry_msgs/Wrench", "geometry_msgs/Vector3 force",
         "geometry_msgs/Vector3 torque"], _VECTOR3),
    "geometry_msgs/msg/PointStamped": _definition(
        ["std_msgs/Header header", "geometry_msgs/Point point"], _HEADER, _TIME, _POINT),
    "sensor_msgs/msg/JointState": JOINT_STATE_DEF,
    "std_msgs/msg/String": "string data",
    "geometry_msgs/msg/AccelStamped": _definition(
        ["std_msgs/Header header", "geometry_msgs/Accel accel"], _HEADER, _TIME,
        ["MSG: geometry_msgs/Accel", "geometry_msgs/Vector3 linear",
         "geometry_msgs/Vector3 angular"], _VECTOR3),
    "trajectory_msgs/msg/JointTrajectory": _definition(
        ["std_msgs/Header header", "string[] joint_names",
         "trajectory_msgs/JointTrajectoryPoint[] points"], _HEADER, _TIME,
        ["MSG: trajectory_msgs/JointTrajectoryPoint", "float64[] positions",
         "float64[] velocities", "float64[] accelerations", "float64[] effort",
         "builtin_interfaces/Duration time_from_start"],
        ["MSG: builtin_interfaces/Duration", "int32 sec", "uint32 nanosec"]),
    "rbd_ros_interfaces/msg/Balance": _definition(
        ["std_msgs/Header header", "geometry_msgs/Point center_of_mass",
         "geometry_msgs/Vector3 center_of_mass_velocity", "geometry_msgs/Vector3 linear_momentum",
         "geometry_msgs/Vector3 angular_momentum", "geometry_msgs/Vector3 linear_momentum_rate",
         "geometry_msgs/Vector3 angular_momentum_rate", "float64 ground_height",
         "bool zmp_defined", "geometry_msgs/Point zmp", "bool capture_point_defined",
         "geometry_msgs/Point capture_point", "float64 omega", "string[] contacts",
         "geometry_msgs/Point[] support_polygon", "float64 zmp_margin",
         "float64 capture_point_margin"], _HEADER, _TIME, _POINT, _VECTOR3),
}


class LeggedBag:
    """The node's outputs per answer, gathered and written a chunk per topic at a time."""

    def __init__(self, path: Path, legged: Legged, world: str) -> None:
        self.bag = McapWriter(path)
        self.legged, self.world = legged, world
        self.base = legged.model.body_names[0]
        self.schema = {kind: k for k, kind in enumerate(SCHEMAS, start=1)}
        for kind, k in self.schema.items():
            self.bag.add_schema(k, kind, SCHEMAS[kind])
        self.channel: dict[str, int] = {}
        self.pending: dict[int, tuple[list[int], list[bytes]]] = {}
        self.torques = JointStateBytes(legged.names)
        self.stamped = {(frame, n): StampedBytes(frame, n)
                        for frame in (world, self.base, *(c.link for c in legged.contacts))
                        for n in (3, 6)}
        self.balance = BalanceBytes(world)

    def _put(self, topic: str, kind: str, stamp: int, data: bytes) -> None:
        k = self.channel.get(topic)
        if k is None:
            k = self.channel[topic] = len(self.channel) + 1
            self.bag.add_channel(k, self.schema[kind], f"{NODE}/{topic}")
            self.pending[k] = ([], [])
        times, records = self.pending[k]
        times.append(stamp)
        records.append(struct.pack("<BQHIQQ", OP_MESSAGE, MESSAGE_DATA - 9 + len(data), k, 0,
                                   stamp, stamp) + data)

    def add(self, a: Answer) -> None:
        """What the node publishes for this joint state (its balance: as it does while someone
        listens to ~/balance)."""
        t, world, out = a.t, self.world, self.stamped
        status = "std_msgs/msg/String"
        text = a.status.encode() + b"\x00"
        self._put("status", status, t, CDR_LE + b"\x00\x00" + struct.pack("<I", len(text))
                  + text)
        if a.estimate is not None:
            for link, f in a.estimate.forces.items():
                self._put(f"contact/{link}/estimated_force", "geometry_msgs/msg/WrenchStamped",
                          t, out[(world, 6)].fill(t, np.r_[f, 0.0, 0.0, 0.0]))
        if a.flight is not None:
            self._put("flight/base_acceleration", "geometry_msgs/msg/AccelStamped", t,
                      out[(self.base, 6)].fill(t, a.flight[0]))
            self._put("flight/joint_accelerations", "trajectory_msgs/msg/JointTrajectory", t,
                      trajectory_accelerations(t, self.legged.names,
                                               a.flight[1][self.legged.v_index - 6].tolist()))
        r = a.reaction
        if r is None:
            return
        wrench, point = "geometry_msgs/msg/WrenchStamped", "geometry_msgs/msg/PointStamped"
        self._put("base_wrench", wrench, t, out[(self.base, 6)].fill(t, r.base_wrench))
        self._put("com_wrench", wrench, t, out[(world, 6)].fill(t, r.com_wrench))
        self._put("center_of_mass", point, t, out[(world, 3)].fill(t, r.com))
        for link, w in r.wrenches.items():
            self._put(f"contact/{link}/wrench", wrench, t, out[(link, 6)].fill(t, w))
            self._put(f"contact/{link}/center_of_pressure", point, t,
                      out[(world, 3)].fill(t, r.cop[link]))
        self._put("joint_torques", "sensor_msgs/msg/JointState", t,
                  self.torques.fill(t, r.tau[self.legged.v_index - 6]))
        if a.balance is not None:
            self._put("balance", "rbd_ros_interfaces/msg/Balance", t,
                      self.balance.fill(t, a.balance, a.contacts))

    def flush(self) -> None:
        for k, (times, records) in self.pending.items():
            if times:
                sizes = np.fromiter((len(x) for x in records), dtype=np.uint64, count=len(times))
                starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.uint64)
                self.bag.write_records(k, np.array(times, dtype=np.int64), b"".join(records),
                                       starts=starts)
                times.clear()
                records.clear()

    def close(self) -> None:
        self.flush()
        self.bag.close()
