"""Offline dynamics of recorded joint states (rosbag2, sqlite3 or MCAP), without ROS.

For every joint state: gravity torques, the inverse-dynamics torque of the measured motion,
the residual ``measured effort - model torque`` (an external-torque estimate), and, when
commanded efforts are recorded, the accelerations they should have produced (ABA).

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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ..dynamics import Model, aba_batch, load_urdf, load_urdf_string, rnea_batch
from ..dynamics.model import F64
from ..joint_names import NameMap
from .cdr import decode, decode_arrays
from .errors import BagError, OutputError
from .readers import Batch, batches
from .writers import Writers, preload_pyplot

JOINT_STATE = "sensor_msgs/msg/JointState"
COMMAND_ARRAY = "std_msgs/msg/Float64MultiArray"
STRING = "std_msgs/msg/String"
PLOT_BUCKETS = 2_000  # the plots show each series' min and max in this many spans of time


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
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


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
    """Streams chunks of joint states through the model and into the writers."""

    def __init__(self, model: Model, out_dir: Path, opts: Options, total: int) -> None:
        self.model, self.opts, self.total = model, opts, total
        self.names = model.state_joint_names
        self.col = {n: i for i, n in enumerate(self.names)}
        self.summary = Summary(joints=self.names, sum_sq=np.zeros(len(self.names)),
                               count=np.zeros(len(self.names)),
                               worst=[(0.0, math.nan)] * len(self.names))
        self.carry: dict[str, Any] | None = None
        self.seen = 0  # joint_states messages read, readable or not
        self.first = True
        self.last = np.full((3, len(self.names)), np.nan)  # last position, velocity, effort
        self.rename = opts.names
        for name, position in opts.hold.items():  # carried into every message, never named
            self.last[:2, self.col[name]] = position, 0.0
        self.stride = max(1, total // PLOT_BUCKETS)
        self.plot: list[F64] = []
        # no outputs (a summary only): no writer process either
        self.writers = Writers(out_dir, self.names, opts.outputs, opts.chunk) \
            if opts.outputs else None
        if "png" in opts.outputs:
            preload_pyplot()
        self.start = time.monotonic()

    def add(self, js: Batch, commands: F64) -> None:
        """One chunk: JointState messages and the command in force at each (NaN: none)."""
        bad: list[int] = []
        groups = decode(js.data, js.offsets, bad)
        if bad:  # a message cut short or garbled: skipped, counted, the rest analysed
            self.summary.skipped += [(self.seen + k, int(js.stamp[k])) for k in bad]
            good = np.setdiff1d(np.arange(len(js)), bad)
            self.seen += len(js)
            js, commands = js.take(good), commands[good]
            groups = decode(js.data, js.offsets)
        else:
            self.seen += len(js)
        n, nj = len(js), len(self.names)
        if not n:
            return
        ns = np.empty(n, dtype=np.int64)
        vals = np.full((3, n, nj), np.nan)
        for g in groups:
            ns[g.index] = g.stamps
        if self.summary.start_ns is None:
            self.summary.start_ns = int(ns[0])
        for g in groups:
            keep, target = _columns(self.rename.names(g.names), self.col)
            at = slice(None) if g.index.size == n else g.index[:, None]
            for f, arr in enumerate((g.position, g.velocity, g.effort)):
                if arr.shape[1]:
                    vals[f][at, target] = arr[:, keep]
        for f in range(3):  # carry each joint's last value into messages that do not name it
            if np.isnan(vals[f]).any():
                vals[f] = ffill(np.vstack([self.last[f][None], vals[f]]))[1:]
            self.last[f] = vals[f][-1]
        rows = {"ns": ns, "q": vals[0], "v": vals[1], "e": vals[2], "u": commands}
        if self.carry is not None:
            rows = {k: np.concatenate([self.carry[k], rows[k]]) for k in rows}
        self._process(rows, final=False)

    def _process(self, rows: dict[str, Any], final: bool) -> None:
        L = len(rows["ns"])
        if L < 5 and not final:
            self.carry = rows
            return
        ns, q = rows["ns"], rows["q"]
        v = rows["v"]
        missing_v = ~np.isfinite(v)
        if missing_v.any():
            v = np.where(missing_v, differentiate(ns, q, self.opts.filter), v)
        a = differentiate(ns, v, self.opts.filter)
        lo = 0 if self.first else 2
        hi = L if final else L - 2
        self.first = False
        self.carry = None if final else {k: x[L - 4 :] for k, x in rows.items()}
        sl = slice(lo, hi)
        self._compute(ns[sl], q[sl], v[sl], a[sl], rows["e"][sl], rows["u"][sl])

    def _compute(self, ns: NDArray[np.int64], q: F64, v: F64, a: F64, e: F64, u: F64) -> None:
        if not len(ns):
            return
        t = 1e-9 * ns
        m, fric = self.model, self.opts.friction
        n = len(t)
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
        residual = np.empty_like(tau)
        spans = -(-n // self.stride)
        envelope = np.empty((spans, 1 + 6 * e.shape[1]))
        envelope[:, 0] = t[:: self.stride]
        worst = np.array([w for w, _ in self.summary.worst])
        at = _residuals(e, tau, self.stride, residual, self.summary.sum_sq, self.summary.count,
                        worst, envelope[:, 1:])
        for j in np.flatnonzero(at >= 0):
            self.summary.worst[j] = (float(worst[j]), float(t[at[j]]))
        self.summary.messages += n
        cols = {"ns": ns, "q": q, "v": v, "a": a, "tau_measured": e, "tau_model": tau,
                "gravity": g, "residual": residual, "qdd_predicted": qdd}
        if self.writers is not None:
            self.writers.write(cols)
        self.plot.append(envelope)
        if self.opts.progress:
            _progress(self.summary.messages, self.total, self.start)

    def finish(self, out_dir: Path) -> Summary:
        if self.carry is not None:
            self._process(self.carry, final=True)
        if self.opts.progress:
            print(file=sys.stderr)
        png = "png" in self.opts.outputs and self.plot
        if self.writers is not None:
            self.writers.close(np.vstack(self.plot) if png else None)
        self.summary.seconds = time.monotonic() - self.start
        (out_dir / "summary.txt").write_text(self.summary.text() + "\n")
        return self.summary


@njit(cache=True, nogil=True)
def _residuals(e, tau, stride, residual, sum_sq, count, worst, envelope):
    """``residual = e - tau``, with its sum of squares, count and largest magnitude per joint
    (where finite) added to the summary's; returns the row of each joint's new worst (-1: none
    above ``worst``). ``envelope[s]``: the minima of the measured, model and residual columns
    over rows ``s * stride ...`` (NaN ignored, as ``np.fmin``), then their maxima."""
    n, nj = e.shape
    at = np.full(nj, -1)
    envelope[:] = np.nan
    for r in range(n):
        span = envelope[r // stride]
        for j in range(nj):
            x = e[r, j] - tau[r, j]
            residual[r, j] = x
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
            opts: Options, warnings: list[str]) -> Iterator[tuple[Batch, F64]]:
    """Time-ordered chunks of raw joint states, each with the command in force at each."""
    nj = len(model.state_joint_names)
    is_js_conn = np.zeros(1 + max(c.id for c in [*js_conns, *cmd_conns]), dtype=bool)
    is_js_conn[[c.id for c in js_conns]] = True
    command = np.full(nj, np.nan)  # the last command before the chunk
    for batch in _ahead(batches(reader, [*js_conns, *cmd_conns], opts.chunk)):
        if not cmd_conns:
            yield batch, np.full((len(batch), nj), np.nan)
            continue
        is_js = is_js_conn[batch.conn]
        js = batch.take(np.flatnonzero(is_js))
        cmd_rows = np.flatnonzero(~is_js)
        table = ffill(np.vstack([command[None], _commands(
            reader, batch.take(cmd_rows), cmd_conns, model, opts, warnings)]))
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
              warnings: list[str]) -> F64:
    """Commanded efforts, a row per message in the model's joint order (NaN: not given)."""
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
    if bad:  # one line for the whole recording
        text = "unreadable command messages skipped (no command in force from them): "
        before = next((w for w in warnings if w.startswith(text)), None)
        if before is not None:
            warnings.remove(before)
        warnings.append(f"{text}{len(bad) + (int(before[len(text):]) if before else 0)}")
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


def _analyze(paths: list[Path], out_dir: Path, opts: Options) -> Summary:
    reader, warnings = _open(paths)
    analysis = None
    try:
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
        out_dir.mkdir(parents=True, exist_ok=True)
        total = sum(c.msgcount for c in js)
        analysis = Analysis(model, out_dir, opts, total)
        analysis.summary.warnings += warnings
        damage = None
        try:
            for batch, commands in _chunks(reader, js, cmd, model, opts,
                                           analysis.summary.warnings):
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
        reader.close()


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
    conns = [c for c in reader.connections
             if c.topic.endswith("robot_description") and c.msgtype == STRING]
    for batch in batches(reader, conns, 1000, ordered=False):  # wide pages: may be late
        return load_urdf_string(reader.deserialize(batch.raw(0), STRING).data)
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
