"""A recording opened for the offline tools (analyze, identify, replay): the reader, its
joint-state and command topics, the model (the recording's own robot_description or a URDF
given), the recorded names checked against it, the blocks of recorded time a pass hands out,
and decoded joint states as values in the model's joint order."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..dynamics import Model, load_urdf, load_urdf_string
from ..dynamics.multibody.model import F64
from ..wire.joint_names import NameMap
from .decode import Group, decode
from .errors import BagError
from .readers import batches, span

JOINT_STATE = "sensor_msgs/msg/JointState"
JOINT_TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"
ODOMETRY = "nav_msgs/msg/Odometry"
IMU = "sensor_msgs/msg/Imu"
COMMAND_ARRAY = "std_msgs/msg/Float64MultiArray"
STRING = "std_msgs/msg/String"


@dataclass
class Reading:
    """How to read a recording: its topics, the model, and how its joint names map to it."""

    urdf: Path | None = None  # None: the recording's /robot_description
    joint_states_topic: str = "/joint_states"
    command_topic: str | None = None  # Float64MultiArray (order: command_joints) or JointState
    command_joints: list[str] | None = None  # a Float64MultiArray's order; None: JointState
    chunk: int = 10_000  # joint states read, computed and written at a time
    rename: tuple[str, ...] = ()  # recorded joint names -> the model's: OLD=NEW, OLD_*=NEW_*
    hold: dict[str, float] = field(default_factory=dict)  # joints not recorded: held here
    effort_scale: dict[str, float] = field(default_factory=dict)  # recorded effort x k: torque

    @property
    def names(self) -> NameMap:
        try:
            return NameMap(self.rename, self.hold, self.effort_scale)
        except ValueError as e:
            raise BagError(str(e)) from None

    def carried(self, col: dict[str, int]) -> F64:
        """The (position, velocity, effort) x joints (columns ``col``) carried into the first
        joint states, before any message names a joint: unknown (NaN), but for the held
        joints, still at their positions."""
        last = np.full((3, len(col)), np.nan)
        for name, position in self.hold.items():
            last[:2, col[name]] = position, 0.0
        return last


def one_per_stamp(ns: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Of time-ordered joint states stamped ``ns``, the last of each run of equal stamps: a
    driver that publishes its joints in groups (an arm and its gripper) sends one joint state
    a stamp in several messages, and the last carries the others' values."""
    out: NDArray[np.bool_] = np.r_[ns[1:] != ns[:-1], True]
    return out


def open_reader(paths: list[Path], paged: bool = True) -> tuple[Any, str | None]:
    """A reader for the recording (several bag paths read as one, merged by time), and what is
    damaged (None: nothing). ``paged``: a sqlite3 recording read by our own pager, in bounded
    memory (else by rosbags, which seeks in time); MCAP and the rest by rosbags; an MCAP without
    a valid end (cut short by a crash) front to back, by our own reader."""
    from rosbags.highlevel import AnyReader

    from .readers import McapSource, SqliteSource, sqlite_files

    db3 = sqlite_files(Path(paths[0])) if paged and len(paths) == 1 else []
    try:
        if db3:
            return SqliteSource(db3), None
        reader = AnyReader([Path(p) for p in paths])
        reader.open()
        return reader, None
    except Exception as e:  # rosbags and sqlite raise their own error types
        mcaps = [m for p in paths for m in
                 ([Path(p)] if Path(p).suffix == ".mcap" else sorted(Path(p).glob("*.mcap")))]
        if len(paths) != 1 or len(mcaps) != 1:
            raise BagError(f"cannot read {', '.join(map(str, paths))}: {e}") from None
        return McapSource(mcaps[0]), f"{mcaps[0]} has no valid end ({e})"


@dataclass(frozen=True)
class Blocks:
    """The recording cut into spans of recorded time, each computed and written at once: what
    a span holds and how it is written depends on the recording alone, so that a process
    given some of the spans (a part of the recording, on a Dask worker) computes and writes
    exactly what one process given them all does for them."""

    t0: int  # ns: the recording's first message
    width: int  # ns, about ``Reading.chunk`` joint states
    count: int

    @classmethod
    def of(cls, first: int, last: int, states: int, chunk: int) -> Blocks:
        width = max(1, -(-chunk * (last - first + 1) // max(states, 1)))
        return cls(first, width, (last - first) // width + 1)

    def index(self, stamps: NDArray[np.int64]) -> NDArray[np.int64]:
        return (stamps - self.t0) // self.width

    def start(self, j: int) -> int:
        return self.t0 + j * self.width


@dataclass
class Recording:
    """An open recording with what every pass over it needs."""

    reader: Any
    damaged: str | None  # what is damaged (read front to back), or None
    warnings: list[str]  # what the reader and the name check found, for the summary
    joint_states: list[Any]  # the connections of the joint-state topic
    commands: list[Any]  # those of the command topic
    model: Model
    states: int  # joint-state messages
    blocks: Blocks

    def close(self) -> None:
        self.reader.close()


def open_recording(paths: list[Path], opts: Reading, check: bool = True) -> Recording:
    """The recording, its topics and model; ``check``: the recorded joint names checked
    against the model (BagError saying how to map them)."""
    reader, damaged = open_reader(paths)
    try:
        warnings = [f"{damaged}; read front to back"] if damaged else []
        topics = {c.topic: c.msgtype for c in reader.connections}
        js = [c for c in reader.connections
              if c.topic == opts.joint_states_topic and c.msgtype == JOINT_STATE]
        if not js:
            raise BagError(f"no {JOINT_STATE} on topic {opts.joint_states_topic}; the "
                           f"recording has {sorted(topics.items())}")
        cmd = []
        if opts.command_topic:
            cmd = [c for c in reader.connections if c.topic == opts.command_topic]
            if not cmd:
                raise BagError(f"no topic {opts.command_topic} in the recording; topics: "
                               f"{sorted(topics)}")
            if not opts.command_joints and any(c.msgtype == COMMAND_ARRAY for c in cmd):
                raise BagError(f"{opts.command_topic} carries {COMMAND_ARRAY}, values without "
                               "joint names: give their order with --command-joints (your "
                               "controller's `joints` parameter), or the node's parameters "
                               "file with `joints` (--params)")
        model = recorded_model(reader, opts.urdf)
        if model.has_free_flyer:
            raise BagError("the URDF's root is a floating joint (a free-flying base): this "
                           "reads a fixed-base robot's recording; a legged robot's is analysed "
                           "with the floating-base node's parameters file (rbd-ros analyze "
                           "--params, as config/floating_base.yaml)")
        if check:
            check_names(reader, js, model, opts, warnings)
        total = sum(c.msgcount for c in js)
        return Recording(reader, damaged, warnings, js, cmd, model, total,
                         Blocks.of(*span(reader, js), total, opts.chunk))
    except BaseException:
        reader.close()
        raise


def recorded_model(reader: Any, urdf: Path | None) -> Model:
    """The model of ``urdf``, or else of the recording's own robot_description."""
    if urdf is not None:
        return load_urdf(urdf)
    return load_urdf_string(recorded_description(reader))


def recorded_description(reader: Any) -> str:
    """The recording's own robot_description (its first message)."""
    conns = [c for c in reader.connections
             if c.topic.endswith("robot_description") and c.msgtype == STRING]
    for batch in batches(reader, conns, 1000, ordered=False):  # wide pages: may be late
        return str(reader.deserialize(batch.raw(0), STRING).data)
    raise BagError("no URDF: give one with --urdf, or record the /robot_description topic")


def check_names(reader: Any, conns: list[Any], model: Model, opts: Reading,
                warnings: list[str]) -> None:
    """The model's joints must all appear in the recording (renamed), or be held: say which
    names differ and how to map them."""
    batch = next(batches(reader, conns, 200, ordered=False), None)  # every publisher's
    rename = opts.names
    bad: list[int] = []
    groups = decode(batch.data, batch.offsets, bad) if batch else []
    if batch and len(bad) == len(batch):
        raise BagError(f"none of the first {len(batch)} joint_states messages can be read: "
                       "they are not little-endian sensor_msgs/JointState (damaged, or "
                       "another type under that name)")
    recorded = {rename(n) for g in groups for n in g.names}
    wanted = set(model.state_joint_names)
    unknown_held = sorted(set(opts.hold) - wanted)
    if unknown_held:
        raise BagError(f"held joints {unknown_held} are not joints of the model "
                       f"{sorted(wanted)}")
    try:
        rename.scales({n: i for i, n in enumerate(model.state_joint_names)})
    except ValueError as e:
        raise BagError(f"--effort-scale: {e}") from None
    missing = sorted(wanted - recorded - set(opts.hold))
    if missing:
        extra = sorted(recorded - wanted - {j.name for j in model.joints})
        raise BagError(f"the URDF does not match the recorded joint names: the model's {missing} "
                       f"are not recorded; recorded names the model lacks: {extra}. Map "
                       f"recorded names to the model's with --rename OLD=NEW (a trailing * maps "
                       f"a prefix: --rename 'fer_*=panda_*'), and hold joints the recording "
                       f"lacks with --hold NAME=POSITION")
    held = sorted(set(opts.hold) - recorded)
    if held:
        warnings.append("joints not recorded, held at a fixed position at rest: "
                        + ", ".join(f"{n} = {opts.hold[n]:g}" for n in held))


def ffill(x: F64) -> F64:
    """Each NaN replaced by the last non-NaN value above it in its column (rows are time)."""
    idx = np.where(np.isnan(x), 0, np.arange(len(x))[:, None])
    np.maximum.accumulate(idx, axis=0, out=idx)
    return x[idx, np.arange(x.shape[1])[None, :]]


def joint_values(groups: list[Group], n: int, rename: NameMap, col: dict[str, int], last: F64
                 ) -> tuple[NDArray[np.int64], F64]:
    """The stamps and the (position, velocity, effort) x (n, joints) values of ``n`` decoded
    JointState messages, in the joint order of ``col`` (recorded names renamed). Each joint's
    last value (``last``, updated) is carried into the messages that do not name it."""
    ns = np.empty(n, dtype=np.int64)
    vals = np.full((3, n, len(col)), np.nan)
    for g in groups:
        ns[g.index] = g.stamps
        keep, target = columns(rename.names(g.names), col)
        at = slice(None) if g.index.size == n else g.index[:, None]
        for f, arr in enumerate((g.position, g.velocity, g.effort)):
            if arr.shape[1]:
                vals[f][at, target] = arr[:, keep]
    scale = rename.scales(col)
    if scale is not None:  # efforts in another unit (motor currents): torques
        vals[2] *= np.array(scale)
    for f in range(3):
        if np.isnan(vals[f]).any():
            vals[f] = ffill(np.vstack([last[f][None], vals[f]]))[1:]
        last[f] = vals[f][-1]
    return ns, vals


def columns(names: tuple[str, ...], col: dict[str, int]) -> tuple[list[int], list[int]]:
    """Which of a message's ``names`` the model has (their places in the message), and their
    columns in the model's joint order."""
    keep = [k for k, n in enumerate(names) if n in col]
    return keep, [col[names[k]] for k in keep]
