"""Joint trajectories to check before they run: a trajectory_msgs/JointTrajectory as a YAML
or JSON file of the message's fields (what ``rbd-ros excite`` writes, what ``ros2 topic echo``
prints), or every JointTrajectory message in a recording (``rbd-ros excite``'s bag, a
controller's recorded ``~/joint_trajectory`` topic)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..wire.errors import InputError
from ..wire.trajectory import trajectory_points
from .errors import BagError
from .recording import JOINT_TRAJECTORY, open_reader


@dataclass(frozen=True)
class Trajectory:
    """One trajectory: where it came from, its joints, and its points as
    :func:`~..wire.trajectory.trajectory_points` reads them."""

    source: str
    names: list[str]
    times_ns: list[int]
    positions: np.ndarray
    velocities: np.ndarray | None
    accelerations: np.ndarray | None


def _fields(x: Any) -> Any:
    """A YAML or JSON mapping as objects with its keys as attributes (a message's fields)."""
    if isinstance(x, dict):
        return SimpleNamespace(**{str(k): _fields(v) for k, v in x.items()})
    if isinstance(x, list):
        return [_fields(v) for v in x]
    return x


def _trajectory(source: str, msg: Any) -> Trajectory:
    """``msg`` (a JointTrajectory's fields) read, or BagError naming ``source`` and why."""
    try:
        names = [str(n) for n in msg.joint_names]
        points = [SimpleNamespace(
            positions=getattr(p, "positions", []), velocities=getattr(p, "velocities", []),
            accelerations=getattr(p, "accelerations", []),
            time_from_start=SimpleNamespace(sec=getattr(p.time_from_start, "sec", 0),
                                            nanosec=getattr(p.time_from_start, "nanosec", 0)))
            for p in msg.points]
    except (AttributeError, TypeError) as e:
        raise BagError(f"{source}: not a trajectory_msgs/JointTrajectory: {e} (give joint_names "
                       "and points, each with positions and time_from_start {sec, nanosec})"
                       ) from None
    if not names or not points:
        raise BagError(f"{source}: the trajectory has {len(names)} joint names and "
                       f"{len(points)} points: give both")
    try:
        times, q, v, a = trajectory_points(points, len(names))
    except InputError as e:
        raise BagError(f"{source}: {e}") from None
    return Trajectory(source, names, times, q, v, a)


def read_trajectories(path: Path, topic: str | None = None) -> list[Trajectory]:
    """The trajectories in ``path``: a .yaml/.yml/.json file's one, or every JointTrajectory
    message in a recording (on ``topic``, or on any topic)."""
    path = Path(path)
    if path.suffix in (".yaml", ".yml", ".json"):
        try:
            text = path.read_text()
        except OSError as e:
            raise BagError(f"cannot read {path}: {e.strerror}") from None
        if path.suffix == ".json":
            try:
                data = json.loads(text)
            except json.JSONDecodeError as e:
                raise BagError(f"{path}: not JSON: {e}") from None
        else:
            from ruamel.yaml import YAML
            from ruamel.yaml.error import YAMLError

            try:
                data = YAML(typ="safe").load(text)
            except YAMLError as e:
                raise BagError(f"{path}: not YAML: {e}") from None
        return [_trajectory(str(path), _fields(data))]
    reader, damaged = open_reader([path], paged=False)
    if damaged:
        print(f"warning: {damaged}; reading it up to where it is damaged", file=sys.stderr)
    try:
        conns = [c for c in reader.connections if c.msgtype == JOINT_TRAJECTORY
                 and (topic is None or c.topic == topic)]
        if not conns:
            raise BagError(f"{path}: no trajectory_msgs/JointTrajectory "
                           f"{f'on {topic} ' if topic else ''}in the recording; topics: "
                           f"{sorted((c.topic, c.msgtype) for c in reader.connections)}")
        out = []
        for k, (conn, _, raw) in enumerate(reader.messages(connections=conns)):
            msg = reader.deserialize(raw, conn.msgtype)
            out.append(_trajectory(f"{path} {conn.topic} message {k}", msg))
        return out
    finally:
        reader.close()
