"""Offline dynamics of recorded joint states (rosbag2, sqlite3 or MCAP), without ROS.

For every joint state: gravity torques, the inverse-dynamics torque of the measured motion,
the external torques ``model torque - measured effort`` (the torque the environment applies
at each joint, the sign of every external torque in rbd_ros), and, when commanded efforts are
recorded, the accelerations they should have produced (ABA).

Accelerations (and velocities, when the recording has none) are estimated from the stamps by
differences: ``central`` (zero-phase: each sample uses its two neighbours; the default) or
``backward`` (causal: each sample uses the one before, as a live node would). Joints are
matched by name; partial messages are merged by carrying each joint's last value forward.

The recording is read in chunks, so memory stays bounded however long it is; the outputs are
written as the chunks go: a new MCAP bag with the computed topics stamped with the source
stamps, a CSV and a Parquet table, one PNG per joint, and a short text summary.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..dynamics import Model, aba_batch, load_urdf, load_urdf_string, rnea_batch
from ..dynamics.model import F64
from ..joint_names import NameMap
from .decode import decode, decode_arrays
from .errors import BagError, OutputError
from .readers import Batch, batches, span
from .writers import WriterProcess, Writers, preload_pyplot

JOINT_STATE = "sensor_msgs/msg/JointState"
COMMAND_ARRAY = "std_msgs/msg/Float64MultiArray"
STRING = "std_msgs/msg/String"
PLOT_BUCKETS = 2_000  # the plots show each series' min and max in this many spans of time
#: what a part of a recording computes, per block (the external torques are the reduction's)
PART_COLUMNS = ("ns", "q", "v", "a", "tau_measured", "tau_model", "gravity", "qdd_predicted")


@dataclass
class Options:
    urdf: Path | None = None  # None: the recording's /robot_description
    joint_states_topic: str = "/joint_states"
    command_topic: str | None = None  # Float64MultiArray (order: command_joints) or JointState
    command_joints: list[str] | None = None  # None: the model's joint order
    filter: str = "central"  # or "backward"
    friction: bool = False
    chunk: int = 10_000  # joint states read, computed and written at a time
    outputs: tuple[str, ...] = ("mcap", "parquet", "png")  # and "csv"
    progress: bool = True
    rename: tuple[str, ...] = ()  # recorded joint names -> the model's: OLD=NEW, OLD_*=NEW_*
    hold: dict[str, float] = field(default_factory=dict)  # joints not recorded: held here

    @property
    def names(self) -> NameMap:
        try:
            return NameMap(self.rename, self.hold)
        except ValueError as e:
            raise BagError(str(e)) from None


@dataclass
class Summary:
    messages: int = 0
    joints: list[str] = field(default_factory=list)
    sum_sq: F64 = field(default_factory=lambda: np.zeros(0))
    count: F64 = field(default_factory=lambda: np.zeros(0))
    worst: list[tuple[float, float]] = field(default_factory=list)  # per joint (|r|, t)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    skipped: list[tuple[int, int]] = field(default_factory=list)  # unreadable: (#, recorded ns)
    bad_commands: int = 0  # unreadable command messages
    start_ns: int | None = None  # the first joint state's stamp

    def rms(self) -> F64:
        return np.sqrt(self.sum_sq / np.maximum(self.count, 1))

    def text(self) -> str:
        lines = [f"{self.messages} joint states analysed in {self.seconds:.1f} s",
                 f"{'joint':<24} {'rms residual':>13} {'worst':>10} {'at (s from start)':>18} "
                 f"{'(stamp, s)':>20}"]
        start = 1e-9 * (self.start_ns or 0)
        for name, rms, (w, t) in zip(self.joints, self.rms(), self.worst, strict=True):
            lines.append(f"{name:<24} {rms:13.4f} {w:10.4f} {t - start:18.4f} {t:20.4f}")
        if self.skipped:
            where = ", ".join(f"#{k} (recorded at {ns * 1e-9:.3f} s)"
                              for k, ns in self.skipped[:10])
            more = f" and {len(self.skipped) - 10} more" if len(self.skipped) > 10 else ""
            lines.append(f"warning: {len(self.skipped)} unreadable joint_states message"
                         f"{'s' if len(self.skipped) > 1 else ''} skipped: {where}{more}")
        if self.bad_commands:
            lines.append("warning: unreadable command messages skipped (no command in force "
                         f"from them): {self.bad_commands}")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


@dataclass(frozen=True)
class Blocks:
    """The recording cut into spans of recorded time, each computed and written at once: what
    a span holds and how it is written depends on the recording alone, so that a process
    given some of the spans (a part of the recording, on a Dask worker) computes and writes
    exactly what one process given them all does for them."""

    t0: int  # ns: the recording's first message
    width: int  # ns, about ``Options.chunk`` joint states
    count: int

    @classmethod
    def of(cls, first: int, last: int, states: int, chunk: int) -> Blocks:
        width = max(1, -(-chunk * (last - first + 1) // max(states, 1)))
        return cls(first, width, (last - first) // width + 1)

    def index(self, stamps: NDArray[np.int64]) -> NDArray[np.int64]:
        return (stamps - self.t0) // self.width

    def start(self, j: int) -> int:
        return self.t0 + j * self.width


class UndeterminedError(Exception):
    """A part's look-back did not settle what its first joint state carries from before."""


def _progress(done: int, total: int, start: float) -> None:
    frac = done / max(total, 1)
    rate = done / max(time.monotonic() - start, 1e-9)
    bar = "#" * int(30 * frac)
    print(f"\r[{bar:<30}] {100 * frac:5.1f}% {done}/{total} joint states, {rate:,.0f}/s",
          end="", file=sys.stderr, flush=True)


def differentiate(ns: NDArray[np.int64], x: F64, mode: str) -> F64:
    """d x / d t along axis 0 (stamps in integer ns, so that small steps at large times keep
    their precision): central differences inside (zero-phase) or backward ones (causal);
    one-sided at the ends. Rows with a non-increasing stamp get NaN."""
    d = np.full_like(x, np.nan)
    if len(ns) < 2:
        return np.zeros_like(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        back = (x[1:] - x[:-1]) / (1e-9 * (ns[1:] - ns[:-1]))[:, None]
        if mode == "backward":
            d[1:] = back
            d[0] = back[0]
        else:
            d[1:-1] = (x[2:] - x[:-2]) / (1e-9 * (ns[2:] - ns[:-2]))[:, None]
            d[0], d[-1] = back[0], back[-1]
    d[~np.isfinite(d)] = np.nan
    return d


def ffill(x: F64) -> F64:
    """Each NaN replaced by the last non-NaN value above it in its column (rows are time)."""
    idx = np.where(np.isnan(x), 0, np.arange(len(x))[:, None])
    np.maximum.accumulate(idx, axis=0, out=idx)
    return x[idx, np.arange(x.shape[1])[None, :]]


def joint_values(groups: list[Any], n: int, rename: NameMap, col: dict[str, int], last: F64
                 ) -> tuple[NDArray[np.int64], F64]:
    """The stamps and the (position, velocity, effort) x (n, joints) values of ``n`` decoded
    JointState messages, in the joint order of ``col`` (recorded names renamed). Each joint's
    last value (``last``, updated) is carried into the messages that do not name it."""
    ns = np.empty(n, dtype=np.int64)
    vals = np.full((3, n, len(col)), np.nan)
    for g in groups:
        ns[g.index] = g.stamps
        keep, target = _columns(rename.names(g.names), col)
        at = slice(None) if g.index.size == n else g.index[:, None]
        for f, arr in enumerate((g.position, g.velocity, g.effort)):
            if arr.shape[1]:
                vals[f][at, target] = arr[:, keep]
    for f in range(3):
        if np.isnan(vals[f]).any():
            vals[f] = ffill(np.vstack([last[f][None], vals[f]]))[1:]
        last[f] = vals[f][-1]
    return ns, vals


def _columns(names: tuple[str, ...], col: dict[str, int]) -> tuple[list[int], list[int]]:
    """Which of a message's ``names`` the model has (their places in the message), and their
    columns in the model's joint order."""
    keep = [k for k, n in enumerate(names) if n in col]
    return keep, [col[names[k]] for k in keep]


def _rows(f: Any, model: Model, out: F64, rows: NDArray[np.bool_], q: F64, x: F64, y: F64,
          friction: bool) -> None:
    """``out[rows] = f(model, q, x, y)`` on those rows (all of them: straight into ``out``)."""
    if rows.all():
        f(model, q, x, y, friction=friction, out=out)
    elif rows.any():
        out[rows] = f(model, q[rows], x[rows], y[rows], friction=friction)


class Analysis:
    """Streams chunks of joint states through the model, a block of recorded time at a time
    (:class:`Blocks`), and into the writers; or, for a part of the recording (``region``: its
    first and end block), into a part file for :func:`reduce_parts`."""

    def __init__(self, model: Model, out_dir: Path, opts: Options, total: int, blocks: Blocks,
                 region: tuple[int, int] | None = None,
                 process: WriterProcess | None = None) -> None:
        self.model, self.opts, self.total, self.blocks = model, opts, total, blocks
        self.names = model.state_joint_names
        self.col = {n: i for i, n in enumerate(self.names)}
        self.summary = Summary(joints=self.names, sum_sq=np.zeros(len(self.names)),
                               count=np.zeros(len(self.names)),
                               worst=[(0.0, math.nan)] * len(self.names))
        self.carry: dict[str, Any] | None = None
        self.kept = 0  # rows at the start of ``carry`` that were computed with the last block
        self.emitted = (-1, 0)  # the last block computed, and how many of its rows so far
        self.seen = 0  # joint_states messages of the region read, readable or not
        self.last = np.full((3, len(self.names)), np.nan)  # last position, velocity, effort
        self.rename = opts.names
        for name, position in opts.hold.items():  # carried into every message, never named
            self.last[:2, self.col[name]] = position, 0.0
        self.stride = max(1, total // PLOT_BUCKETS)
        self.plot: list[F64] = []
        self.region = region or (0, blocks.count)
        self.done = False  # a part: its last block is out
        self.part: Any = None
        self.writers: Writers | None = None
        if region is not None:
            self.part = (out_dir / "blocks.npy").open("wb")
            self.check = region[0] > 0  # whether the look-back still has to prove enough
        else:
            self.check = False
            # no outputs (a summary only): no writer process either
            self.writers = Writers(out_dir, self.names, opts.outputs, opts.chunk, process) \
                if opts.outputs else None
            if "png" in opts.outputs:
                preload_pyplot()
        self.start = time.monotonic()

    def add(self, js: Batch, commands: F64) -> None:
        """One chunk: JointState messages and the command in force at each (NaN: none)."""
        blk = self.blocks.index(js.stamp)
        lo, hi = self.region
        mine = (blk >= lo) & (blk < hi)
        bad: list[int] = []
        groups = decode(js.data, js.offsets, bad)
        if bad:  # a message cut short or garbled: skipped, counted, the rest analysed
            where = self.seen + np.cumsum(mine) - 1  # its number in the region
            self.summary.skipped += [(int(where[k]), int(js.stamp[k])) for k in bad if mine[k]]
            good = np.setdiff1d(np.arange(len(js)), bad)
            js, commands, blk = js.take(good), commands[good], blk[good]
            groups = decode(js.data, js.offsets)
        self.seen += int(mine.sum())
        if not len(js):
            return
        before = self.last.copy()
        ns, vals = joint_values(groups, len(js), self.rename, self.col, self.last)
        if self.summary.start_ns is None:
            self.summary.start_ns = int(ns[0])
        if self.check and (blk >= lo).any():
            self._settled(int(np.argmax(blk >= lo)), vals, before, commands)
        rows = {"ns": ns, "blk": blk, "q": vals[0], "v": vals[1], "e": vals[2], "u": commands}
        if self.carry is not None:
            rows = {k: np.concatenate([self.carry[k], rows[k]]) for k in rows}
        self._process(rows, final=False)

    def _settled(self, p: int, vals: F64, before: F64, commands: F64) -> None:
        """A part's first own joint state is row ``p`` of this chunk: the look-back before it
        must hold two joint states (for the differences) and have given every value it
        carries forward (position, velocity and effort of every joint, the command), or it
        could differ from what the whole recording carries there. UndeterminedError if not."""
        self.check = False
        carried = vals[:, p - 1] if p else before
        need = np.ones_like(carried, dtype=bool)
        need[2, [self.col[n] for n in self.opts.hold]] = False  # held: never an effort
        rows = p + (0 if self.carry is None else len(self.carry["ns"]))
        command_cols = [self.col[n] for n in (self.opts.command_joints or self.names)]
        if rows < 2 or not np.isfinite(carried[need]).all() or (
                self.opts.command_topic and not np.isfinite(commands[p, command_cols]).all()):
            raise UndeterminedError

    def _process(self, rows: dict[str, Any], final: bool) -> None:
        """Compute every block of ``rows`` whose last joint state has the two after it that
        its differences need (``final``: all of them); keep the rest, and the two before."""
        while self.kept < len(rows["ns"]) and not self.done:
            blk = rows["blk"]
            b = int(blk[self.kept])
            # a block is computed ``chunk`` joint states at a time (a burst of messages, or a
            # recording whose times are far apart, may crowd one block)
            before = self.emitted[1] if self.emitted[0] == b else 0
            end = min(int(np.searchsorted(blk, b, side="right")),
                      self.kept + self.opts.chunk - before % self.opts.chunk)
            if end + 2 > len(blk) and not final:
                break
            upto = min(end + 2, len(blk))  # the block and the two joint states after it
            ns, q, v = rows["ns"][:upto], rows["q"][:upto], rows["v"][:upto]
            missing_v = ~np.isfinite(v)
            if missing_v.any():
                v = np.where(missing_v, differentiate(ns, q, self.opts.filter), v)
            a = differentiate(ns, v, self.opts.filter)
            sl = slice(self.kept, end)
            self._compute(b, ns[sl], q[sl], v[sl], a[sl], rows["e"][sl], rows["u"][sl])
            self.emitted = (b, before + end - self.kept)
            first = max(end - 2, 0)
            rows = {k: x[first:] for k, x in rows.items()}
            self.kept = end - first
        self.carry = rows

    def _compute(self, block: int, ns: NDArray[np.int64], q: F64, v: F64, a: F64, e: F64,
                 u: F64) -> None:
        if block < self.region[0]:
            return  # a part's look-back
        if block >= self.region[1]:
            self.done = True  # a part's look-ahead: its own blocks are out
            return
        m, fric = self.model, self.opts.friction
        n = len(ns)
        g = np.full((n, m.nv), np.nan)
        tau = np.full((n, m.nv), np.nan)
        qdd = np.full((n, m.nv), np.nan)
        # each quantity where its inputs are known: g(q), tau(q, v, a), qdd(q, v, u)
        has_q = np.asarray(np.isfinite(q).all(axis=1))
        has_qv = has_q & np.isfinite(v).all(axis=1)
        has_qva = has_qv & np.isfinite(a).all(axis=1)
        if has_qva.all():  # the usual case: both from one pass over the joint transforms
            rnea_batch(m, q, v, a, friction=fric, out=tau, gravity_out=g)
        else:
            rest = np.zeros_like(v)
            _rows(rnea_batch, m, g, has_q, q, rest, rest, False)
            _rows(rnea_batch, m, tau, has_qva, q, v, a, fric)
        _rows(aba_batch, m, qdd, has_qv & np.isfinite(u).all(axis=1), q, v, u, fric)
        cols = {"ns": ns, "q": q, "v": v, "a": a, "tau_measured": e, "tau_model": tau,
                "gravity": g, "tau_external": np.empty_like(tau), "qdd_predicted": qdd}
        if self.part is not None:
            np.save(self.part, np.array([n, block]))
            for c in PART_COLUMNS:
                np.save(self.part, cols[c])
        else:
            self.emit(cols)

    def emit(self, cols: dict[str, Any]) -> None:
        """A computed block into the summary, the plots and the writers (``tau_external`` is
        filled here)."""
        t = 1e-9 * cols["ns"]
        n = len(t)
        spans = -(-n // self.stride)
        envelope = np.empty((spans, 1 + 6 * len(self.names)))
        envelope[:, 0] = t[:: self.stride]
        worst = np.array([w for w, _ in self.summary.worst])
        at = _residuals(cols["tau_measured"], cols["tau_model"], self.stride,
                        cols["tau_external"], self.summary.sum_sq, self.summary.count, worst,
                        envelope[:, 1:])
        for j in np.flatnonzero(at >= 0):
            self.summary.worst[j] = (float(worst[j]), float(t[at[j]]))
        self.summary.messages += n
        if self.writers is not None:
            self.writers.write(cols)
        self.plot.append(envelope)
        if self.opts.progress:
            _progress(self.summary.messages, self.total, self.start)

    def finish(self, out_dir: Path) -> Summary:
        if self.carry is not None:
            self._process(self.carry, final=True)
        if self.part is not None:
            self.part.close()
            self.summary.seconds = time.monotonic() - self.start
            return self.summary
        if self.opts.progress:
            print(file=sys.stderr)
        png = "png" in self.opts.outputs and self.plot
        if self.writers is not None:
            self.writers.close(np.vstack(self.plot) if png else None)
        self.summary.seconds = time.monotonic() - self.start
        (out_dir / "summary.txt").write_text(self.summary.text() + "\n")
        return self.summary


@njit(cache=True, nogil=True)
def _residuals(e, tau, stride, external, sum_sq, count, worst, envelope):
    """``external = tau - e`` (the model's torque less the measured effort), with its sum of
    squares, count and largest magnitude per joint (where finite) added to the summary's;
    returns the row of each joint's new worst (-1: none above ``worst``). ``envelope[s]``: the
    minima of the measured, model and external columns over rows ``s * stride ...`` (NaN
    ignored, as ``np.fmin``), then their maxima."""
    n, nj = e.shape
    at = np.full(nj, -1)
    envelope[:] = np.nan
    for r in range(n):
        span = envelope[r // stride]
        for j in range(nj):
            x = tau[r, j] - e[r, j]
            external[r, j] = x
            if np.isfinite(x):
                sum_sq[j] += x * x
                count[j] += 1.0
                if abs(x) > worst[j]:
                    worst[j] = abs(x)
                    at[j] = r
            for k, y in enumerate((e[r, j], tau[r, j], x)):
                c = k * nj + j
                if y < span[c] or np.isnan(span[c]):
                    span[c] = y
                if y > span[3 * nj + c] or np.isnan(span[3 * nj + c]):
                    span[3 * nj + c] = y
    return at


def _chunks(reader: Any, js_conns: list[Any], cmd_conns: list[Any], model: Model,
            opts: Options, summary: Summary, start: int | None = None,
            region: tuple[int, int] = (-(2**63), 2**63 - 1)
            ) -> Generator[tuple[Batch, F64], None, None]:
    """Time-ordered chunks of raw joint states from recorded time ``start`` on, each with the
    command in force at each; unreadable commands recorded within ``region`` (ns) counted."""
    nj = len(model.state_joint_names)
    is_js_conn = np.zeros(1 + max(c.id for c in [*js_conns, *cmd_conns]), dtype=bool)
    is_js_conn[[c.id for c in js_conns]] = True
    command = np.full(nj, np.nan)  # the last command before the chunk
    for batch in _ahead(batches(reader, [*js_conns, *cmd_conns], opts.chunk, start=start)):
        if not cmd_conns:
            yield batch, np.full((len(batch), nj), np.nan)
            continue
        is_js = is_js_conn[batch.conn]
        js = batch.take(np.flatnonzero(is_js))
        cmd_rows = np.flatnonzero(~is_js)
        table = ffill(np.vstack([command[None], _commands(
            reader, batch.take(cmd_rows), cmd_conns, model, opts, summary, region)]))
        command = table[-1]
        # row k of the table is the command after the batch's first k commands
        yield js, table[np.searchsorted(cmd_rows, np.flatnonzero(is_js))]


def _ahead(items: Iterator[Batch]) -> Iterator[Batch]:
    """``items``, read one ahead by a thread: SQLite and the compiled dynamics both release
    the GIL, so the next chunk is read while this one is computed."""
    import queue
    import threading

    box: queue.Queue[tuple[Batch | None, BaseException | None]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(entry: tuple[Batch | None, BaseException | None]) -> None:
        while not stop.is_set():
            try:
                box.put(entry, timeout=0.1)
                return
            except queue.Full:
                continue

    def read() -> None:
        try:
            for item in items:
                put((item, None))
                if stop.is_set():
                    return
            put((None, None))
        except BaseException as e:  # handed over: a damaged file is the analysis' to report
            put((None, e))

    threading.Thread(target=read, name="rbd-reader", daemon=True).start()
    try:
        while True:
            item, error = box.get()
            if error is not None:
                raise error
            if item is None:
                return
            yield item
    finally:
        stop.set()


def _commands(reader: Any, batch: Batch, conns: list[Any], model: Model, opts: Options,
              summary: Summary, region: tuple[int, int]) -> F64:
    """Commanded efforts, a row per message in the model's joint order (NaN: not given)."""
    warnings = summary.warnings
    names = model.state_joint_names
    col = {n: i for i, n in enumerate(names)}
    order = np.array([col[n] for n in (opts.command_joints or names)])
    rename = opts.names
    out = np.full((len(batch), len(names)), np.nan)
    bad: list[int] = []  # unreadable commands: none in force from them
    arrays = np.isin(batch.conn, [c.id for c in conns if c.msgtype == COMMAND_ARRAY])
    for kind in (True, False):
        idx = np.flatnonzero(arrays == kind)
        if not idx.size:
            continue
        part = batch.take(idx)
        if kind:
            def count(raw: bytes) -> int:
                return len(reader.deserialize(raw, COMMAND_ARRAY).data)

            for members, values in decode_arrays(part.data, part.offsets, count, bad):
                if values.shape[1] == len(order):
                    out[idx[members, None], order] = values
                elif (w := f"commands with {values.shape[1]} values ignored: {len(order)} "
                      f"expected (--command-joints)") not in warnings:
                    warnings.append(w)
        else:
            for g in decode(part.data, part.offsets, bad):
                if g.effort.shape[1] != len(g.names):
                    continue  # a JointState without efforts commands nothing
                keep, target = _columns(rename.names(g.names), col)
                out[idx[g.index, None], target] = g.effort[:, keep]
    if bad:
        stamps = batch.stamp[bad]
        summary.bad_commands += int(((stamps >= region[0]) & (stamps < region[1])).sum())
    return out


def analyze(paths: list[Path], out_dir: Path, opts: Options) -> Summary:
    """Analyse one recording (several bag paths are read as one, merged by time).

    Three things run at once: reading (a thread), computing (here) and writing (a process of
    its own); the compiled dynamics run on one thread meanwhile, as the cores are taken."""
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    out_dir.mkdir(parents=True, exist_ok=True)
    # outputs are written aside and moved into place once all are complete: an interrupted or
    # failed run leaves the previous run's complete set, never a mix
    partial = Path(tempfile.mkdtemp(prefix=".rbd-partial-", dir=out_dir))
    try:
        summary = _analyze(paths, partial, opts)
        _move_into_place(partial, out_dir)
        return summary
    finally:
        numba.set_num_threads(threads)
        shutil.rmtree(partial, ignore_errors=True)


MANIFEST = ".rbd-outputs"  # the files of the last complete run in an output folder


def _move_into_place(partial: Path, out_dir: Path) -> None:
    new = sorted(p.name for p in partial.iterdir())
    manifest = out_dir / MANIFEST
    old = manifest.read_text().split("\n") if manifest.exists() else []
    manifest.unlink(missing_ok=True)  # from here until the new one: no complete set claimed
    for name in set(old) - set(new) - {""}:
        (out_dir / name).unlink(missing_ok=True)
    for name in new:
        try:
            os.replace(partial / name, out_dir / name)
        except OSError as e:
            raise OutputError(f"writing the outputs failed: moving {name} into {out_dir}: "
                              f"{e.strerror}") from None
    tmp = out_dir / f"{MANIFEST}.tmp"
    tmp.write_text("\n".join(new))
    os.replace(tmp, manifest)


def _setup(reader: Any, opts: Options, warnings: list[str]
           ) -> tuple[list[Any], list[Any], Model, int, Blocks]:
    """The joint-state and command topics, the model, the joint states' count and the blocks."""
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
    model = _model(reader, opts)
    _check_names(reader, js, model, opts, warnings)
    total = sum(c.msgcount for c in js)
    return js, cmd, model, total, Blocks.of(*span(reader, js), total, opts.chunk)


def _analyze(paths: list[Path], out_dir: Path, opts: Options) -> Summary:
    # the writer process starts first: it imports what it writes with meanwhile
    process = WriterProcess(opts.outputs) if opts.outputs else None
    reader = None
    analysis = None
    try:
        reader, warnings = _open(paths)
        js, cmd, model, total, blocks = _setup(reader, opts, warnings)
        out_dir.mkdir(parents=True, exist_ok=True)
        analysis = Analysis(model, out_dir, opts, total, blocks, process=process)
        analysis.summary.warnings += warnings
        damage = None
        try:
            for batch, commands in _chunks(reader, js, cmd, model, opts, analysis.summary):
                analysis.add(batch, commands)
        except OutputError:
            raise
        except Exception as e:  # a truncated or damaged file: keep what was read
            damage = f"{type(e).__name__}: {e}"
        damage = damage or getattr(reader, "damage", None)
        summary = analysis.finish(out_dir)
        if damage:
            summary.warnings.append(f"the recording is damaged after {summary.messages} joint "
                                    f"states ({damage}); the analysis stops there")
            (out_dir / "summary.txt").write_text(summary.text() + "\n")
        return summary
    finally:
        # on any error (Ctrl-C too), leave no writer process behind
        if analysis is not None and analysis.writers is not None:
            analysis.writers.abort()
        elif process is not None:
            process.stop()
        if reader is not None:
            reader.close()


# -- one long recording in parts (on Dask workers), reduced into the outputs of one run --

SPLIT_FROM = 600_000  # joint states: shorter recordings are analysed whole


@dataclass
class Part:
    """What a part of a recording computed: its blocks, in ``folder / "blocks.npy"``."""

    folder: Path
    summary: Summary  # its unreadable messages numbered from its first, its warnings
    states: int  # joint_states messages recorded in its time range, readable or not


def parts_for(paths: list[Path], opts: Options, workers: int) -> int:
    """Into how many parts to cut a recording for ``workers`` workers: 1 (whole) unless it is
    long (``SPLIT_FROM`` joint states), read through an index (sqlite3, or an MCAP with its
    summary), and its first 50 joint states give every joint's position, velocity and effort
    (a part then learns from a short look-back what they carry forward; otherwise each part
    would read from the start)."""
    if workers < 2:
        return 1
    try:
        reader, warnings = _open(paths)
    except BagError:
        return 1
    try:
        if warnings:  # read front to back: no index to start a part from
            return 1
        js, _, model, total, blocks = _setup(reader, opts, [])
        if total < SPLIT_FROM:
            return 1
        batch = next(batches(reader, js, 50, ordered=False), None)
        rename, given = opts.names, set()
        for g in decode(batch.data, batch.offsets, []) if batch else []:  # readable ones
            if min(g.position.shape[1], g.velocity.shape[1], g.effort.shape[1]):
                given |= {rename(n) for n in g.names}
        if not set(model.state_joint_names) - set(opts.hold) <= given:
            return 1
        return max(1, min(workers, blocks.count // 4))
    except Exception:  # a damaged or odd recording: analysed whole, where the error is said
        return 1
    finally:
        reader.close()


def analyze_part(paths: list[Path], folder: Path, opts: Options, k: int, parts: int) -> Part:
    """Part ``k`` of ``parts`` of a recording, by recorded time: its blocks computed into
    ``folder``. It reads from a block before its own (the differences need the two joint
    states before; the values carried forward must all be given there), or, where that block
    does not settle them, from the start."""
    import contextlib

    reader, warnings = _open(paths)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        js, cmd, model, total, blocks = _setup(reader, opts, warnings)
        lo, hi = k * blocks.count // parts, (k + 1) * blocks.count // parts
        region = (blocks.start(lo) if k else -(2**63), blocks.start(hi) if k < parts - 1
                  else 2**63 - 1)
        for start in ([blocks.start(lo - 1)] if lo else []) + [None]:
            analysis = Analysis(model, folder, opts, total, blocks, (lo, hi))
            analysis.check = start is not None and analysis.check
            analysis.summary.warnings += warnings
            try:
                with contextlib.closing(_chunks(reader, js, cmd, model, opts, analysis.summary,
                                                start, region)) as chunks:
                    for batch, commands in chunks:
                        analysis.add(batch, commands)
                        if analysis.done:
                            break
                analysis.finish(folder)
                return Part(folder, analysis.summary, analysis.seen)
            except UndeterminedError:
                analysis.part.close()
        raise AssertionError("unreachable: the pass from the start settles everything")
    finally:
        reader.close()


def reduce_parts(paths: list[Path], out_dir: Path, opts: Options, parts: list[Part]
                 ) -> Summary:
    """The outputs of a recording analysed in ``parts`` (in order): exactly those of
    :func:`analyze` on the whole, the blocks being what it computes and writes at a time."""
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=".rbd-partial-", dir=out_dir))
    reader, warnings = _open(paths)
    analysis = None
    try:
        _, _, model, total, blocks = _setup(reader, opts, warnings)
        analysis = Analysis(model, partial, opts, total, blocks)
        analysis.start -= max(p.summary.seconds for p in parts)  # the time said: the parts' too
        summary = analysis.summary
        summary.start_ns = parts[0].summary.start_ns
        first = 0
        for part in parts:
            summary.warnings += [w for w in part.summary.warnings if w not in summary.warnings]
            summary.skipped += [(first + k, ns) for k, ns in part.summary.skipped]
            summary.bad_commands += part.summary.bad_commands
            first += part.states
            path = part.folder / "blocks.npy"
            size = path.stat().st_size
            with path.open("rb") as f:
                while f.tell() < size:
                    n, _ = np.load(f)
                    cols = {c: np.load(f) for c in PART_COLUMNS}
                    cols["tau_external"] = np.empty_like(cols["tau_model"])
                    assert len(cols["ns"]) == n
                    analysis.emit(cols)
        analysis.finish(partial)
        _move_into_place(partial, out_dir)
        return summary
    finally:
        if analysis is not None and analysis.writers is not None:
            analysis.writers.abort()
        reader.close()
        numba.set_num_threads(threads)
        shutil.rmtree(partial, ignore_errors=True)
        for part in parts:
            shutil.rmtree(part.folder, ignore_errors=True)


def _open(paths: list[Path]) -> tuple[Any, list[str]]:
    """A reader for the recording: sqlite3 paged by our own reader (bounded memory), MCAP and
    the rest by rosbags, and an MCAP without a valid end (cut short) front to back."""
    from rosbags.highlevel import AnyReader

    from .readers import McapStream, SqliteStream, sqlite_files

    db3 = sqlite_files(Path(paths[0])) if len(paths) == 1 else []
    try:
        if db3:
            return SqliteStream(db3), []
        reader = AnyReader([Path(p) for p in paths])
        reader.open()
        return reader, []
    except Exception as e:  # rosbags and sqlite raise their own error types
        mcaps = [m for p in paths for m in
                 ([Path(p)] if Path(p).suffix == ".mcap" else sorted(Path(p).glob("*.mcap")))]
        if len(paths) != 1 or len(mcaps) != 1:
            raise BagError(f"cannot read {', '.join(map(str, paths))}: {e}") from None
        return McapStream(mcaps[0]), [f"{mcaps[0]} has no valid end ({e}); read front to back"]


def _model(reader, opts: Options) -> Model:
    if opts.urdf is not None:
        return load_urdf(opts.urdf)
    return load_urdf_string(recorded_description(reader))


def recorded_description(reader: Any) -> str:
    """The recording's own robot_description (its first message)."""
    conns = [c for c in reader.connections
             if c.topic.endswith("robot_description") and c.msgtype == STRING]
    for batch in batches(reader, conns, 1000, ordered=False):  # wide pages: may be late
        return str(reader.deserialize(batch.raw(0), STRING).data)
    raise BagError("no URDF: give one with --urdf, or record the /robot_description topic")


def _check_names(reader, conns, model: Model, opts: Options, warnings: list[str]) -> None:
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
