"""Offline floating-base dynamics of a legged robot's recording (joint states, odometry and, if
recorded, an IMU and foot sensors' ActiveContacts), without ROS: per joint state, what the
floating-base node answers for it.

The recording's messages go, in the order they were recorded, through the node's own path
(:class:`rbd_ros.dynamics.estimation.legged.Legged`: each joint state paired with the odometry
and IMU of its stamp, the contacts estimated from the efforts or the last ActiveContacts', the
split over them, the balance), the wait for a late odometry measured on the recording's clock.
So a state gets the answer the node gives when the recording is replayed into it losslessly
(``rbd-ros replay --wait-for`` with reliable inputs). The contacts and their settings are the
node's parameters file's (``--params``, as ``config/floating_base.yaml``).

Written per joint state: the node's topics as it publishes them (``legged.mcap``: the status,
the base and contact wrenches, centres of pressure, joint torques, estimated forces, the
balance, flight's accelerations), a table (``legged.parquet``; the columns' meanings are
in its schema's field metadata), three pictures (``foot_loads.png``: each contact's normal force
over time; ``balance.png``: the ZMP's and the capture point's margins to the support polygon
over time; ``balance_path.png``: seen from above, the support polygons, the centre of mass's
ground track and the ZMP's and capture point's paths), and ``summary.txt``.
"""

from __future__ import annotations

import math
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..dynamics import RbdError, load_urdf_string
from ..dynamics.contact.balance import Balance
from ..dynamics.contact.contacts import Contact
from ..dynamics.estimation.contact_estimation import (
    DEFAULT_GAIN,
    DEFAULT_MAX_SPEED,
    DEFAULT_RELEASE,
    DEFAULT_THRESHOLD,
)
from ..dynamics.estimation.legged import (
    DEFAULT_FRICTION,
    DEFAULT_TIMEOUT,
    WORLD_FRAME,
    Answer,
    Legged,
    Pending,
)
from ..dynamics.multibody.model import F64, Model
from ..wire import cdr
from ..wire.errors import InputError
from ..wire.joint_states import JointStateMerger
from ..wire.stamped import JointStateReader, imu_sample, odometry_sample
from .errors import BagError
from .legged_bag import LeggedBag
from .outputs import output_set
from .recording import IMU, JOINT_STATE, ODOMETRY, Reading, open_reader, recorded_description

ACTIVE_CONTACTS = "rbd_ros_interfaces/msg/ActiveContacts"

AXES = ("x", "y", "z")
WRENCH = ("fx", "fy", "fz", "tx", "ty", "tz")
ROWS = 10_000  # states written to the table at a time


@dataclass
class LeggedOptions(Reading):
    """A legged recording's topics and the floating-base node's settings (its parameters)."""

    odom_topic: str = "/odom"
    imu_topic: str = "/imu"  # used when the recording has it
    active_contacts_topic: str = "/active_contacts"  # the same
    contact_links: tuple[str, ...] = ()
    contacts: dict[str, dict[str, Any]] = field(default_factory=dict)  # contacts.<link>.*
    friction_coefficient: float = DEFAULT_FRICTION
    gravity: tuple[float, ...] = (0.0, 0.0, -9.81)
    input_timeout: float = DEFAULT_TIMEOUT
    estimate_contacts: bool = False
    contact_threshold: float = DEFAULT_THRESHOLD
    contact_release: float = DEFAULT_RELEASE
    contact_max_speed: float = DEFAULT_MAX_SPEED
    contact_observer_gain: float = DEFAULT_GAIN
    world_frame: str = WORLD_FRAME
    outputs: tuple[str, ...] = ("mcap", "parquet", "png")

    @classmethod
    def from_parameters(cls, params: dict[str, Any], **reading: Any) -> LeggedOptions:
        """From the floating-base node's ``ros__parameters`` (those that matter offline)."""
        known = {f for f in cls.__dataclass_fields__ if f not in Reading.__dataclass_fields__}
        kw = {k: params[k] for k in known - {"odom_topic", "imu_topic",
                                             "active_contacts_topic", "outputs"}
              if k in params}
        for k in ("contact_links", "gravity"):
            if k in kw:
                kw[k] = tuple(kw[k])
        return cls(**reading, **kw)

    def contact_list(self) -> list[Contact]:
        if not self.contact_links:
            raise BagError("no contact_links: give the floating-base node's parameters file "
                           "with --params (as config/floating_base.yaml)")
        out = []
        for link in self.contact_links:
            kw = dict(self.contacts.get(link) or {})
            for key in ("offset", "rpy", "normal"):
                if key in kw:
                    kw[key] = tuple(float(x) for x in kw[key])
            try:
                out.append(Contact(link, **kw))
            except TypeError as e:
                raise BagError(f"contacts.{link}: {e}") from None
        return out

    def estimator(self) -> dict[str, float] | None:
        if not self.estimate_contacts:
            return None
        return {"gain": self.contact_observer_gain, "threshold": self.contact_threshold,
                "release": self.contact_release, "max_speed": self.contact_max_speed}


@dataclass
class LeggedSummary:
    messages: int = 0  # joint states read whole
    answered: int = 0  # with a reaction (in contact) or flight's accelerations
    statuses: Counter[str] = field(default_factory=Counter)  # what ~/status said, by kind
    refused: Counter[str] = field(default_factory=Counter)  # messages dropped, by reason
    outside: int = 0  # states whose capture point is outside the support polygon
    seconds: float = 0.0

    def text(self) -> str:
        lines = [f"{self.messages} joint states analysed ({self.answered} answered) in "
                 f"{self.seconds:.1f} s ({self.messages / max(self.seconds, 1e-9):,.0f} a second); "
                 "what the floating-base node's ~/status said:"]
        lines += [f"  {n:>8d}  {kind}" for kind, n in self.statuses.most_common()]
        if self.outside:
            lines.append(f"the capture point was outside the support polygon in {self.outside} "
                         "states (a step or a fall followed)")
        lines += [f"warning: {n} messages dropped: {why}" for why, n in self.refused.items()]
        return "\n".join(lines)

    def headline(self) -> str:
        """The fleet's status table's word on it: the states answered, the capture point's
        exits."""
        return (f"{self.answered:,} answered, capture point outside the support polygon in "
                f"{self.outside:,}")


def floating_base_parameters(path: Path) -> dict[str, Any] | None:
    """The floating-base node's ``ros__parameters`` in a parameters file (``rbd_floating_base``
    in any namespace), each contact's ``contacts.<link>.*`` gathered under ``contacts``; None
    if the file has none."""
    from .analyze import parameters_by_node

    params = parameters_by_node(path).get("rbd_floating_base")
    if params is None:
        return None
    out = {k: v for k, v in params.items() if not k.startswith("contacts")}
    contacts: dict[str, dict[str, Any]] = {}
    for link, keys in (params.get("contacts") or {}).items():
        contacts.setdefault(str(link), {}).update(keys or {})
    for k, v in params.items():  # contacts.<link>.<key> written flat
        parts = k.split(".")
        if len(parts) == 3 and parts[0] == "contacts":
            contacts.setdefault(parts[1], {})[parts[2]] = v
    out["contacts"] = contacts
    return out


def _kind(status: str) -> str:
    """A status's kind, for the summary's counts (its text without numbers)."""
    head = status.split(";")[0].split(":")[0]
    return head if len(head) < 60 else head[:57] + "..."


def analyze_legged(paths: list[Path], out_dir: Path, opts: LeggedOptions) -> LeggedSummary:
    """The floating-base node's answers for a legged robot's recording, into ``out_dir``."""
    with output_set(out_dir) as partial:
        return _analyze(paths, partial, opts)


def _open(paths: list[Path], opts: LeggedOptions) -> tuple[Any, Model, dict[str, Any]]:
    reader, _ = open_reader(paths, paged=False)
    try:
        conns = {}
        for what, topic, kind in (("joint_states", opts.joint_states_topic, JOINT_STATE),
                                  ("odom", opts.odom_topic, ODOMETRY),
                                  ("imu", opts.imu_topic, IMU),
                                  ("active", opts.active_contacts_topic, ACTIVE_CONTACTS)):
            found = [c for c in reader.connections if c.topic == topic and c.msgtype == kind]
            if not found and what in ("joint_states", "odom"):
                topics = sorted({(c.topic, c.msgtype) for c in reader.connections})
                raise BagError(f"no {kind} on topic {topic}; the recording has {topics}")
            for c in found:
                conns[c.id] = what
        text = opts.urdf.read_text() if opts.urdf else recorded_description(reader)
        try:
            model = load_urdf_string(text, floating_base=True).with_gravity(list(opts.gravity))
        except RbdError as e:
            raise BagError(f"the URDF: {e}") from None
        return reader, model, conns
    except BaseException:
        reader.close()
        raise


def _analyze(paths: list[Path], out_dir: Path, opts: LeggedOptions) -> LeggedSummary:
    start = time.monotonic()
    reader, model, conns = _open(paths, opts)
    try:
        try:
            legged = Legged(model, opts.contact_list(), opts.friction_coefficient,
                            opts.input_timeout, opts.estimator())
            merger = JointStateMerger(model, opts.names)
        except (RbdError, InputError) as e:
            raise BagError(str(e)) from None
        out = Outputs(out_dir, legged, opts)
        states, inputs = JointStateReader(), {"odom": legged.odom, "imu": legged.imu}
        wanted = [c for c in reader.connections if c.id in conns]
        for conn, log_ns, raw in reader.messages(connections=wanted):
            now, what = log_ns * 1e-9, conns[conn.id]
            try:
                if what == "active":
                    _, links = cdr.active_contacts(raw)
                    refused = legged.touching(links)
                    if refused is not None:
                        out.summary.refused[refused[1]] += 1
                    continue
                if what == "joint_states":
                    stamp = _merge(states, merger, raw)
                else:
                    stamp, x = (odometry_sample if what == "odom" else imu_sample)(raw)
                    inputs[what].add(stamp, x)
            except (InputError, cdr.CdrError) as e:
                out.summary.refused[f"{what}: {e}"] += 1
                continue
            if what == "joint_states" and merger.ready:
                out.summary.messages += 1
                if merger.stale(legged.max_age):
                    out.add(Answer(stamp, merger.stale_note(legged.max_age)
                                   + "; no answer until they are fresh"))
                    continue
                legged.pending.append(Pending(stamp, merger.q.copy(), merger.v.copy(),
                                              merger.effort.copy(), now))
            out.answer(legged, now)
        out.answer(legged, math.inf)  # the recording ends: no more waiting
        out.close()
    finally:
        reader.close()
    out.summary.seconds = time.monotonic() - start
    (out_dir / "summary.txt").write_text(out.summary.text() + "\n")
    return out.summary


class Outputs:
    """Where each answer goes: the table, the bag, the summary."""

    def __init__(self, out_dir: Path, legged: Legged, opts: LeggedOptions) -> None:
        self.summary = LeggedSummary()
        self.table = Table(legged, out_dir / "legged.parquet" if "parquet" in opts.outputs
                           else None, opts.world_frame)
        self.bag = LeggedBag(out_dir / "legged.mcap", legged, opts.world_frame) \
            if "mcap" in opts.outputs else None
        self.pictures = out_dir if "png" in opts.outputs else None

    def answer(self, legged: Legged, now: float) -> None:
        """The joint states ready at ``now``, answered."""
        for paired in legged.ready(now):
            self.add(paired if isinstance(paired, Answer) else legged.answer(*paired))

    def add(self, a: Answer) -> None:
        if self.table.add(a, self.summary) and self.bag is not None:
            self.bag.flush()
        if self.bag is not None:
            self.bag.add(a)

    def close(self) -> None:
        self.table.close(self.pictures)
        if self.bag is not None:
            self.bag.close()


def _merge(reader: JointStateReader, merger: JointStateMerger, raw: bytes) -> int:
    stamp, names, position, velocity, effort = reader.read(raw)
    merger.update(stamp, names, position, velocity, effort)
    return stamp


class Table:
    """legged.parquet, a row per joint state, written ROWS at a time (the numbers into one
    preallocated block, NaN where a state has none); and what the pictures need."""

    def __init__(self, legged: Legged, path: Path | None, world_frame: str) -> None:
        self.legged, self.links = legged, [c.link for c in legged.contacts]
        self.world_frame = world_frame
        self.joints = legged.names
        self.columns = self._columns(legged.estimator is not None)
        self.numbers = [c for c in self.columns if c not in ("status", "support_polygon")]
        self.col = {c: k for k, c in enumerate(self.numbers)}  # a group's first column
        self.block = np.full((ROWS, len(self.numbers)), np.nan)
        self.status: list[str] = []
        self.polygons: list[Any] = []
        self.writer: Any = None
        self.path = path
        # what the pictures draw, as flat arrays of doubles (8 bytes a number: an hour at 1 kHz
        # is 3.6 million states): per state answered, its time, each contact's normal force,
        # the ZMP's and capture point's margins; per state with a balance (the top view), its
        # time, x and y of the CoM, the ZMP and the capture point, the capture point's margin
        self.plot_t, self.plot_load, self.plot_margin = array("d"), array("d"), array("d")
        self.plot_path = array("d")
        self.plot_polygons: list[tuple[float, F64]] = []  # (t, vertices): a change, or 50 ms on
        self.drawn_links: tuple[str, ...] = ()

    def _put(self, row: F64, first: str, values: Any) -> None:
        k = self.col[first]
        row[k : k + len(values)] = values

    def _columns(self, estimated: bool) -> dict[str, str]:
        c = {"t": "the joint state's stamp (s)",
             "status": "what the floating-base node's ~/status says for this state"}
        c.update({f"base_wrench_{w}": "~/base_wrench: the wrench the base needs, base frame "
                                      "(N, N m)" for w in WRENCH})
        c.update({f"com_{a}": "~/center_of_mass, world (m)" for a in AXES})
        c.update({f"com_wrench_{w}": "~/com_wrench: the contacts' total wrench about the "
                                     "centre of mass, world axes" for w in WRENCH})
        for link in self.links:
            c[f"{link}_in_touch"] = "1 if the contact link is in touch, 0 if not (NaN: no answer)"
            c.update({f"{link}_wrench_{w}": f"~/contact/{link}/wrench: link frame, about its "
                                            "origin" for w in WRENCH})
            c.update({f"{link}_force_{a}": "the same force, world axes (N)" for a in AXES})
            c.update({f"{link}_cop_{a}": f"~/contact/{link}/center_of_pressure, world (m)"
                      for a in AXES})
            if estimated:
                c.update({f"{link}_estimated_force_{a}": f"~/contact/{link}/estimated_force, "
                                                         "world (N)" for a in AXES})
        c.update({f"tau_{n}": "~/joint_torques (N m or N)" for n in self.joints})
        c.update({f"flight_base_acceleration_{w}": "in flight: ~/flight/base_acceleration, "
                                                    "base frame" for w in WRENCH})
        c.update({f"flight_qdd_{n}": "in flight: ~/flight/joint_accelerations"
                  for n in self.joints})
        for part, doc in (("com_velocity", "the centre of mass's velocity (m/s)"),
                          ("linear_momentum", "kg m/s"),
                          ("angular_momentum", "about the centre of mass, kg m^2/s"),
                          ("linear_momentum_rate", "N"), ("angular_momentum_rate", "N m"),
                          ("zmp", "the zero-moment point on the ground plane (NaN: none)"),
                          ("capture_point", "xi = c + c_dot / omega on the ground plane (NaN: "
                                            "none)")):
            c.update({f"{part}_{a}": f"~/balance: {doc}" for a in AXES})
        c.update({"ground_height": "~/balance: the ground plane's height (m)",  # these four
                  "omega": "~/balance: sqrt(g / z) (1/s)",  # in this order (Table.add)
                  "zmp_margin": "~/balance: the ZMP's signed distance to the support "
                                "polygon's edge, positive inside (m)",
                  "capture_point_margin": "~/balance: the capture point's, the same way (m)",
                  "support_polygon": "~/balance: the support polygon's vertices, "
                                     "counter-clockwise seen from above (x y z each, m)"})
        return c

    def add(self, a: Answer, summary: LeggedSummary) -> bool:
        """The answer's row; True when the rows so far were written (a chunk's end)."""
        row, put = self.block[len(self.status)], self._put
        row[0] = a.t * 1e-9
        self.status.append(a.status)
        summary.statuses[_kind(a.status)] += 1
        if a.estimate is not None:
            for link, f in a.estimate.forces.items():
                put(row, f"{link}_estimated_force_x", f)
        r, b = a.reaction, a.balance
        if r is not None or a.flight is not None:
            summary.answered += 1
            for link in self.links:
                row[self.col[f"{link}_in_touch"]] = float(link in a.contacts)
        if a.flight is not None:
            put(row, "flight_base_acceleration_fx", a.flight[0])
            put(row, f"flight_qdd_{self.joints[0]}", a.flight[1][self.legged.v_index - 6])
        if r is not None:
            put(row, "base_wrench_fx", r.base_wrench)
            put(row, "com_x", r.com)
            put(row, "com_wrench_fx", r.com_wrench)
            for link, w in r.wrenches.items():
                put(row, f"{link}_wrench_fx", w)
                put(row, f"{link}_force_x", r.forces[link])
                put(row, f"{link}_cop_x", r.cop[link])
            put(row, f"tau_{self.joints[0]}", r.tau[self.legged.v_index - 6])
        self.polygons.append(None if b is None else b.support_polygon.tolist())
        if b is not None:
            put(row, "com_velocity_x", b.com_velocity)
            put(row, "linear_momentum_x", b.momentum)  # linear then angular, as the columns
            put(row, "linear_momentum_rate_x", b.momentum_rate[:3])
            put(row, "angular_momentum_rate_x", b.momentum_rate[3:])
            for part, x in (("zmp", b.zmp), ("capture_point", b.capture_point)):
                if x is not None:
                    put(row, f"{part}_x", x)
            put(row, "ground_height", (b.ground_height, b.omega, b.zmp_margin,
                                       b.capture_point_margin))
            if b.capture_point is not None and b.capture_point_margin < 0:
                summary.outside += 1
            self._keep_path(a, b)
        if r is not None or a.flight is not None:
            up = self.legged.support.up
            forces = r.forces if r is not None else {}
            self.plot_t.append(a.t * 1e-9)
            self.plot_load.extend([float(forces[x] @ up) if x in forces else 0.0
                                   for x in self.links])
            self.plot_margin.extend((row[self.col["zmp_margin"]],
                                     row[self.col["capture_point_margin"]]))
        if len(self.status) < ROWS:
            return False
        self._flush()
        return True

    def _keep_path(self, a: Answer, b: Balance) -> None:
        """What the top view draws of this state: the points, and its support polygon when the
        contacts in touch changed or 50 ms after the last one kept."""
        t = a.t * 1e-9
        points = [t, *b.com[:2]]
        for x in (b.zmp, b.capture_point):
            points += [math.nan, math.nan] if x is None else list(x[:2])
        self.plot_path.extend([*points, b.capture_point_margin])
        links = tuple(a.contacts)
        if (not self.plot_polygons or links != self.drawn_links
                or t - self.plot_polygons[-1][0] >= 0.05):
            self.plot_polygons.append((t, b.support_polygon))
            self.drawn_links = links

    def _flush(self) -> None:
        n = len(self.status)
        if self.path is not None and n:
            import pyarrow as pa
            import pyarrow.parquet as pq

            if self.writer is None:
                fields = [pa.field("t", pa.float64()), pa.field("status", pa.string())]
                fields += [pa.field(name, pa.float64()) for name in self.numbers[1:]]
                fields.append(pa.field("support_polygon",
                                       pa.list_(pa.list_(pa.float64(), 3))))
                self.schema = pa.schema([f.with_metadata({"description": self.columns[f.name]})
                                         for f in fields])
                self.writer = pq.ParquetWriter(str(self.path), self.schema,
                                               use_dictionary=False)
            block = self.block[:n]
            arrays = [pa.array(block[:, 0]), pa.array(self.status, pa.string())]
            arrays += [pa.array(block[:, k]) for k in range(1, len(self.numbers))]
            arrays.append(pa.array(self.polygons, self.schema.field("support_polygon").type))
            self.writer.write_table(pa.Table.from_arrays(arrays, schema=self.schema))
        self.block[:n] = np.nan
        self.status, self.polygons = [], []

    def close(self, pictures: Path | None) -> None:
        self._flush()
        if self.writer is not None:
            self.writer.close()
        if pictures is not None and self.plot_t:
            self._draw(pictures)

    def _draw(self, out_dir: Path) -> None:
        from .plotting import pyplot

        plt = pyplot()
        t = np.array(self.plot_t) - self.plot_t[0]
        load = np.array(self.plot_load).reshape(len(t), len(self.links))
        fig, ax = plt.subplots(figsize=(10, 4))
        for k, link in enumerate(self.links):
            ax.plot(t, load[:, k], lw=0.8, label=link)
        ax.set(xlabel="s since the first answer", ylabel="normal force (N)", title="foot loads")
        ax.legend(loc="upper right", fontsize="small")
        fig.tight_layout()
        fig.savefig(out_dir / "foot_loads.png", dpi=100)
        plt.close(fig)
        margin = np.array(self.plot_margin).reshape(-1, 2)
        fig, ax = plt.subplots(figsize=(10, 4))
        ax.plot(t, 100 * margin[:, 0], lw=0.8, label="ZMP")
        ax.plot(t, 100 * margin[:, 1], lw=0.8, label="capture point")
        ax.axhline(0.0, color="k", lw=0.6)
        ax.set(xlabel="s since the first answer", title="balance: inside above 0, outside below",
               ylabel="margin to the support polygon's edge (cm)")
        ax.legend(loc="upper right", fontsize="small")
        fig.tight_layout()
        fig.savefig(out_dir / "balance.png", dpi=100)
        plt.close(fig)
        if self.plot_path:
            self._draw_top_view(plt, out_dir)

    def _draw_top_view(self, plt: Any, out_dir: Path) -> None:
        """balance_path.png: the world's x-y plane seen from above (REP 103: z up), the support
        polygons (at most 60 of those kept, shaded from the first to the last), the centre of
        mass's ground track, the ZMP's and the capture point's paths, and where the capture
        point left the polygon."""
        path = np.array(self.plot_path).reshape(-1, 8)
        t0, t1 = path[0, 0], path[-1, 0]
        fig, ax = plt.subplots(figsize=(7, 7))
        shade = plt.get_cmap("viridis")
        kept = self.plot_polygons
        for t, poly in kept[::max(1, math.ceil(len(kept) / 60))]:
            if len(poly) > 0:
                closed = np.vstack((poly[:, :2], poly[:1, :2]))  # two feet: a line
                r, g, b, _ = shade((t - t0) / max(t1 - t0, 1e-9))
                ax.fill(closed[:, 0], closed[:, 1], fc=(r, g, b, 0.06), ec=(r, g, b, 0.5),
                        lw=0.6)
        ax.plot(path[:, 1], path[:, 2], color="k", lw=1.0, label="centre of mass (ground track)")
        ax.plot(path[:, 3], path[:, 4], lw=0.8, label="ZMP")
        ax.plot(path[:, 5], path[:, 6], lw=0.8, label="capture point")
        outside = path[:, 7] < 0
        if outside.any():
            ax.plot(path[outside, 5], path[outside, 6], "x", color="red", ms=3,
                    label="capture point outside the polygon")
        ax.plot(path[0, 1], path[0, 2], "o", color="k", ms=4)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set(xlabel=f"x in {self.world_frame} (m)",
               ylabel=f"y in {self.world_frame} (m)",
               title=f"seen from above, {t1 - t0:.3g} s (polygons shaded from first to last)")
        ax.legend(loc="best", fontsize="small")
        fig.tight_layout()
        fig.savefig(out_dir / "balance_path.png", dpi=100)
        plt.close(fig)
