"""One pass over a recording's joint states, a chunk at a time, through the model.

Reading runs on a thread ahead of the computing (:func:`chunks`); each chunk is decoded once,
its joints put in the model's order (a joint a message leaves out keeps its last value), and
every block of recorded time (:class:`~.recording.Blocks`) is computed once the differences
of its last joint states are known: gravity, the inverse dynamics of the measured motion and,
where commands are recorded, the accelerations they produce. Each computed block goes to a
consumer: the outputs of an analysis, or a part's file (:mod:`.parts`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..dynamics import Model, aba_batch, rnea_batch
from ..dynamics.estimation.observer import MOVING_SPEED, THRESHOLD_MARGIN, THRESHOLD_PARAMETERS
from ..dynamics.multibody.model import F64
from .decode import decode, decode_arrays, without
from .readers import Batch, batches
from .recording import (
    COMMAND_ARRAY,
    Blocks,
    Reading,
    Recording,
    columns,
    ffill,
    joint_values,
    one_per_stamp,
)
from .thresholds import envelope

#: a computed block: ``ns`` and, per joint state and joint, ``q``, ``v``, ``a``,
#: ``tau_measured``, ``tau_model``, ``gravity``, ``qdd_predicted``; ``differenced`` per joint
#: state: its velocities were not recorded (``v`` holds the positions' differences)
Consumer = Callable[[int, dict[str, Any]], None]


def _up(x: float) -> float:
    """``x`` rounded up to 3 significant digits."""
    if x <= 0:
        return 0.0
    step = 10.0 ** (math.floor(math.log10(x)) - 2)
    return float(f"{math.ceil(x / step - 1e-9) * step:.3g}")


#: the file an analysis writes them to, as the dynamics node's parameters
THRESHOLDS_FILE = "collision_thresholds.yaml"


@dataclass
class Observed:
    """The dynamics node's momentum observer over a recording: each joint's largest residual
    (``~/external_torques``) and when, its largest at each speed, and the collision thresholds
    they give."""

    gain: float  # 1/s
    states: int  # joint states it took
    peak: F64  # N m (N), per joint in the model's order
    at_ns: NDArray[np.int64]  # the stamp of each peak
    binned: F64  # the largest at each speed (ResidualPeaks.binned)
    order: list[str]  # the thresholds' joint order: the node's ``collision_joints``
    held: list[str]  # joints without effort: no residual
    #: the node's ``joints`` as the user gave them (--command-joints); empty: not written,
    #: never the order of the node's command topics by a guess
    command: list[str] = field(default_factory=list)

    @cached_property
    def fitted(self) -> F64:
        """:func:`.thresholds.envelope` of ``binned`` (a linear program per joint: solved once
        for the summary and the parameters file)."""
        return envelope(self.binned)

    def thresholds(self, names: list[str]) -> dict[str, list[float]]:
        """The node's collision parameters (``THRESHOLD_PARAMETERS``) in ``order``: the envelope
        of each joint's peaks over its speeds times the margin
        (:func:`.thresholds.envelope`), rounded up to 3 significant digits; a held joint (its
        residual is NaN, never flagged) the largest of the others'."""
        fitted = self.fitted
        out = {}
        for k, param in enumerate(THRESHOLD_PARAMETERS):
            mine = {n: _up(x) for n, x in zip(names, fitted[:, k], strict=True)}
            if k == 0:  # a threshold at rest must be positive
                mine = {n: x or 1e-3 for n, x in mine.items()}
            top = max([mine[n] for n in names if n not in self.held], default=1.0)
            out[param] = [top if n in self.held else mine[n] for n in self.order]
        return out

    def parameters(self, names: list[str]) -> str:
        """The thresholds as the dynamics node's parameters file (``THRESHOLDS_FILE``), which
        ``analyze --params`` reads too."""
        rows = [f"# rbd-ros analyze: collision thresholds from the observer's residual over "
                f"{self.states} joint states,",
                "# for the dynamics node if the recording was of free motion, without contacts"]
        rows += ["/**/rbd_dynamics:", "  ros__parameters:",
                 f"    observer_gain: {float(self.gain)!r}"]
        if self.command:
            rows.append(f"    joints: [{', '.join(self.command)}]")
        rows.append(f"    collision_joints: [{', '.join(self.order)}]")
        rows += [f"    {param}: [{', '.join(repr(float(x)) for x in values)}]"
                 for param, values in self.thresholds(names).items()]
        return "\n".join(rows) + "\n"

    def lines(self, names: list[str], start: float) -> list[str]:
        held = f"; held joints {', '.join(self.held)} have no effort: the largest of the " \
            "others for them" if self.held else ""
        rows = [f"observer residual at observer_gain {self.gain:g}/s (the dynamics node's "
                f"collision flags') over {self.states} joint states:",
                f"{'joint':<24} {'peak':>13} {'at (s from start)':>18}"]
        rows += [f"{n:<24} {p:13.4f} {1e-9 * t - start:18.4f}"
                 for n, p, t in zip(names, self.peak, self.at_ns, strict=True)
                 if n not in self.held]
        for param, values in self.thresholds(names).items():
            rows.append(f"{param}: [{', '.join(f'{x:g}' for x in values)}]")
        rows.append(f"  (each joint's threshold at speed s: collision_thresholds + moving "
                    f"tanh(s / {MOVING_SPEED:g}) + per_speed s, {THRESHOLD_MARGIN:g} x the "
                    f"envelope of its residual's peaks; in the order {', '.join(self.order)}"
                    f"{held}; in "
                    f"{THRESHOLDS_FILE} as the node's parameters: for the dynamics node at "
                    f"observer_gain {self.gain:g}, if this recording is of free motion, "
                    f"without contacts)")
        return rows


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
    observer: Observed | None = None  # None: no joint state gave the observer a residual

    @classmethod
    def of(cls, joints: list[str], warnings: list[str]) -> Summary:
        return cls(joints=joints, sum_sq=np.zeros(len(joints)), count=np.zeros(len(joints)),
                   worst=[(0.0, math.nan)] * len(joints), warnings=list(warnings))

    def write(self, out_dir: Path) -> None:
        """``summary.txt``, and the thresholds' parameters file when the observer ran."""
        (out_dir / "summary.txt").write_text(self.text() + "\n")
        if self.observer is not None:
            (out_dir / THRESHOLDS_FILE).write_text(self.observer.parameters(self.joints))

    def rms(self) -> F64:
        return np.sqrt(self.sum_sq / np.maximum(self.count, 1))

    def headline(self) -> str:
        """The fleet's status table's word on it: the worst joint's rms residual."""
        rms = self.rms()
        if not rms.size:
            return ""
        k = int(rms.argmax())
        return f"worst rms residual {rms[k]:.4f} ({self.joints[k]})"

    def text(self) -> str:
        lines = [f"{self.messages} joint states analysed in {self.seconds:.1f} s",
                 f"{'joint':<24} {'rms residual':>13} {'worst':>10} {'at (s from start)':>18} "
                 f"{'(stamp, s)':>20}"]
        start = 1e-9 * (self.start_ns or 0)
        for name, rms, (w, t) in zip(self.joints, self.rms(), self.worst, strict=True):
            lines.append(f"{name:<24} {rms:13.4f} {w:10.4f} {t - start:18.4f} {t:20.4f}")
        if self.observer is not None:
            lines += self.observer.lines(self.joints, start)
        else:
            lines.append("no collision_thresholds: no joint state had every joint's position "
                         "and effort (the observer needs both)")
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


def _rows(f: Any, model: Model, out: F64, rows: NDArray[np.bool_], q: F64, x: F64, y: F64,
          friction: bool) -> None:
    """``out[rows] = f(model, q, x, y)`` on those rows (all of them: straight into ``out``)."""
    if rows.all():
        f(model, q, x, y, friction=friction, out=out)
    elif rows.any():
        out[rows] = f(model, q[rows], x[rows], y[rows], friction=friction)


class Stream:
    """Chunks of joint states through the model, a block of recorded time at a time, into
    ``consumer``; only the blocks of ``region`` (first, end) are computed: the rest is a part's
    look-back (before) or look-ahead (after it; ``done`` is then set)."""

    def __init__(self, model: Model, opts: Any, blocks: Blocks, summary: Summary,
                 consumer: Consumer,
                 region: tuple[int, int] | None = None) -> None:
        self.model, self.opts, self.blocks, self.summary, self.consumer = \
            model, opts, blocks, summary, consumer
        self.names = model.state_joint_names
        self.col = {n: i for i, n in enumerate(self.names)}
        self.carry: dict[str, Any] | None = None
        self.kept = 0  # rows at the start of ``carry`` that were computed with the last block
        self.emitted = (-1, 0)  # the last block computed, and how many of its rows so far
        self.seen = 0  # joint_states messages of the region read, readable or not
        self.last = opts.carried(self.col)  # last position, velocity, effort
        self.rename = opts.names
        self.region = region or (0, blocks.count)
        self.done = False  # the region's last block is out

    def add(self, js: Batch, commands: F64) -> None:
        """One chunk: JointState messages and the command in force at each (NaN: none)."""
        rows = self.rows(js, commands)
        if rows is not None:
            self.process(rows, final=False)

    def rows(self, js: Batch, commands: F64) -> dict[str, Any] | None:
        """A chunk decoded into rows (stamps, block, positions, velocities, efforts, commands),
        after the rows carried from the chunk before; None if nothing of it is readable."""
        blk = self.blocks.index(js.stamp)
        lo, hi = self.region
        mine = (blk >= lo) & (blk < hi)
        bad: list[int] = []
        groups = without(decode(js.data, js.offsets, bad), bad, len(js))
        if bad:  # a message cut short or garbled: skipped, counted, the rest analysed
            where = self.seen + np.cumsum(mine) - 1  # its number in the region
            self.summary.skipped += [(int(where[k]), int(js.stamp[k])) for k in bad if mine[k]]
            good = np.setdiff1d(np.arange(len(js)), bad)
            js, commands, blk = js.take(good), commands[good], blk[good]
        self.seen += int(mine.sum())
        if not len(js):
            return None
        ns, vals = joint_values(groups, len(js), self.rename, self.col, self.last)
        if self.summary.start_ns is None:
            self.summary.start_ns = int(ns[0])
        rows = {"ns": ns, "blk": blk, "q": vals[0], "v": vals[1], "e": vals[2], "u": commands}
        if self.carry is not None:
            rows = {k: np.concatenate([self.carry[k], rows[k]]) for k in rows}
        # messages of one stamp are one joint state: as rows of their own they would be
        # differenced over no time at all. (A row already computed had the rows after it, so
        # only rows not yet computed go.)
        keep = one_per_stamp(rows["ns"])
        keep[: self.kept] = True
        if not keep.all():
            rows = {k: x[keep] for k, x in rows.items()}
        return rows

    def process(self, rows: dict[str, Any], final: bool) -> None:
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
            self.compute(b, ns[sl], q[sl], v[sl], a[sl], rows["e"][sl], rows["u"][sl],
                         missing_v[sl].any(axis=1))
            self.emitted = (b, before + end - self.kept)
            first = max(end - 2, 0)
            rows = {k: x[first:] for k, x in rows.items()}
            self.kept = end - first
        self.carry = rows

    def compute(self, block: int, ns: NDArray[np.int64], q: F64, v: F64, a: F64, e: F64,
                u: F64, differenced: NDArray[np.bool_]) -> None:
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
        self.consumer(block, {"ns": ns, "q": q, "v": v, "a": a, "tau_measured": e,
                          "tau_model": tau, "gravity": g, "qdd_predicted": qdd,
                          "differenced": differenced})

    def finish(self) -> None:
        """The joint states still carried: computed to the end."""
        if self.carry is not None:
            self.process(self.carry, final=True)


def chunks(rec: Recording, opts: Reading, summary: Summary, start: int | None = None,
           region: tuple[int, int] = (-(2**63), 2**63 - 1)
           ) -> Generator[tuple[Batch, F64], None, None]:
    """Time-ordered chunks of raw joint states from recorded time ``start`` on, each with the
    command in force at each; unreadable commands recorded within ``region`` (ns) counted."""
    reader, js_conns, cmd_conns, model = rec.reader, rec.joint_states, rec.commands, rec.model
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
        finally:  # here: a reader's file (an SQLite connection) is this thread's to close
            close = getattr(items, "close", None)
            if close is not None:
                close()

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


def _commands(reader: Any, batch: Batch, conns: list[Any], model: Model, opts: Reading,
              summary: Summary, region: tuple[int, int]) -> F64:
    """Commanded efforts, a row per message in the model's joint order (NaN: not given)."""
    warnings = summary.warnings
    names = model.state_joint_names
    col = {n: i for i, n in enumerate(names)}
    # a Float64MultiArray's order (open_recording refuses one without command_joints)
    order = np.array([col[n] for n in opts.command_joints or []], dtype=int)
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
                keep, target = columns(rename.names(g.names), col)
                out[idx[g.index, None], target] = g.effort[:, keep]
    if bad:
        stamps = batch.stamp[bad]
        summary.bad_commands += int(((stamps >= region[0]) & (stamps < region[1])).sum())
    return out
