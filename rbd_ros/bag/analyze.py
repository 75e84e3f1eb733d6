"""Offline dynamics of recorded joint states (rosbag2, sqlite3 or MCAP), without ROS.

For every joint state: gravity torques, the inverse-dynamics torque of the measured motion,
the external torques ``model torque - measured effort`` (the torque the environment applies
at each joint, the sign of every external torque in rbd_ros), and, when commanded efforts are
recorded, the accelerations they should have produced (ABA). The dynamics node's momentum
observer runs over the recording too, as the node would (at its gain, from the recorded
velocities or, without them, a cubic's slope fitted to the positions): its residual per state
(the node's ``~/external_torques``), each joint's largest, and ``collision_thresholds`` for the
node from it, when the recording is of free motion; with ``collision_thresholds`` given, the
node's collision flags per state too.

Accelerations (and velocities, when the recording has none) are estimated from the stamps by
differences: ``central`` (zero-phase: each sample uses its two neighbours; the default) or
``backward`` (causal: each sample uses the one before, as a live node would). Joints are
matched by name; partial messages are merged by carrying each joint's last value forward.

The recording is read in chunks, so memory stays bounded however long it is
(:mod:`.stream`); the outputs are written as the chunks go: a new MCAP bag with the computed
topics stamped with the source stamps, a CSV and a Parquet table, one PNG per joint, and a
short text summary. A long recording can be analysed in parts on Dask workers (:mod:`.parts`).
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from ..dynamics.estimation.observer import (
    COLLISION_RELEASE,
    DEFAULT_GAIN,
    THRESHOLD_PARAMETERS,
    ResidualPeaks,
    flag_states,
    thresholds_problem,
)
from ..dynamics.multibody.model import F64, Model
from .errors import BagError, OutputError
from .outputs import one_numba_thread, output_set
from .plotting import preload_pyplot
from .recording import ODOMETRY, Reading, Recording, open_recording
from .stream import Observed, Stream, Summary, chunks
from .writers import WriterProcess, Writers

PLOT_BUCKETS = 2_000  # the plots show each series' min and max in this many spans of time


@dataclass
class AnalyzeOptions(Reading):
    filter: str = "central"  # or "backward"
    friction: bool = False
    observer_gain: float = DEFAULT_GAIN  # 1/s, as the dynamics node's observer_gain
    #: the dynamics node's collision_thresholds, collision_thresholds_moving and
    #: collision_thresholds_per_speed (each in collision_joints' order, else command_joints',
    #: else the model's; one
    #: value: for all joints)
    collision_joints: tuple[str, ...] = ()
    collision_thresholds: tuple[float, ...] = ()
    collision_thresholds_moving: tuple[float, ...] = ()
    collision_thresholds_per_speed: tuple[float, ...] = ()
    collision_release: float = COLLISION_RELEASE
    outputs: tuple[str, ...] = ("mcap", "parquet", "png")  # and "csv"
    progress: bool = True


#: what ``analyze --params`` takes from the dynamics node's parameters file
NODE_PARAMETERS = ("observer_gain", "friction", "joints", "collision_joints",
                   "collision_release", *THRESHOLD_PARAMETERS)


def parameters_by_node(path: Path) -> dict[str, dict[str, Any]]:
    """The ``ros__parameters`` of each node a ROS 2 parameters file (``--params-file``) sets, by
    the node's name (its namespace left out)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        tree = YAML(typ="safe").load(path.read_text())
    except (OSError, YAMLError) as e:
        raise BagError(f"--params {path}: {e}") from None
    nodes: dict[str, dict[str, Any]] = {}
    stack = [("", tree)]
    while stack:
        key, x = stack.pop()
        if isinstance(x, dict):
            if isinstance(x.get("ros__parameters"), dict):
                nodes.setdefault(key.rsplit("/", 1)[-1], x["ros__parameters"])
            stack += [(str(k), y) for k, y in x.items() if k != "ros__parameters"]
    return nodes


def node_parameters(path: Path) -> dict[str, Any]:
    """The dynamics node's parameters in a ROS 2 parameters file (the ``ros__parameters`` of
    ``rbd_dynamics`` in any namespace, or of the file's only node), those of
    ``NODE_PARAMETERS`` it sets."""
    nodes = parameters_by_node(path)
    if not ("rbd_dynamics" in nodes or len(nodes) == 1):
        raise BagError(f"--params {path}: no ros__parameters of rbd_dynamics in it (nodes: "
                       f"{', '.join(nodes) or 'none'})")
    params = nodes.get("rbd_dynamics") or next(iter(nodes.values()))
    return {k: params[k] for k in NODE_PARAMETERS if k in params}


def _progress(done: int, total: int, start: float) -> None:
    frac = done / max(total, 1)
    rate = done / max(time.monotonic() - start, 1e-9)
    bar = "#" * int(30 * frac)
    print(f"\r[{bar:<30}] {100 * frac:5.1f}% {done}/{total} joint states, {rate:,.0f}/s",
          end="", file=sys.stderr, flush=True)


class Emit:
    """Where computed blocks go in an analysis: the summary's statistics, the plots' envelope,
    the external torques, the observer's peaks, and the writers (a process of their own)."""

    def __init__(self, model: Model, summary: Summary, total: int, out_dir: Path,
                 opts: AnalyzeOptions, process: WriterProcess | None = None) -> None:
        names = model.state_joint_names
        self.names, self.summary, self.total, self.opts = names, summary, total, opts
        self.peaks = ResidualPeaks(model, opts.observer_gain, opts.friction)
        # the observer goes through the blocks in order on a thread of its own (it releases
        # the GIL), a block behind the rest
        self.observing = ThreadPoolExecutor(1, thread_name_prefix="rbd-observer")
        self.observed: Future[F64] | None = None
        self.pending: dict[str, Any] | None = None  # the block whose residual is coming
        self.flags = Flags(names, opts)
        self.held = np.array([names.index(n) for n in opts.hold], dtype=np.int64)
        self.stride = max(1, total // PLOT_BUCKETS)
        self.plot: list[F64] = []
        # no outputs (a summary only): no writer process either
        self.writers = Writers(out_dir, names, opts.outputs, opts.chunk, process) \
            if opts.outputs else None
        if "png" in opts.outputs:
            preload_pyplot()
        self.start = time.monotonic()

    def __call__(self, block: int, cols: dict[str, Any]) -> None:
        """A computed block into the summary, the plots and the writers (``tau_external`` is
        computed here)."""
        t = 1e-9 * cols["ns"]
        n = len(t)
        spans = -(-n // self.stride)
        envelope = np.empty((spans, 1 + 6 * len(self.names)))
        envelope[:, 0] = t[:: self.stride]
        worst = np.array([w for w, _ in self.summary.worst])
        cols["tau_external"] = np.empty_like(cols["tau_model"])
        at = _residuals(cols["tau_measured"], cols["tau_model"], self.stride,
                        cols["tau_external"], self.summary.sum_sq, self.summary.count, worst,
                        envelope[:, 1:])
        for j in np.flatnonzero(at >= 0):
            self.summary.worst[j] = (float(worst[j]), float(t[at[j]]))
        effort = cols["tau_measured"]
        if self.held.size:  # as the node: a held joint has no motor, no effort
            effort = effort.copy()
            effort[:, self.held] = 0.0
        self._write_pending()
        self.observed = self.observing.submit(self.peaks.add, cols["ns"], cols["q"], cols["v"],
                                              cols["differenced"], effort)
        self.pending = cols
        self.summary.messages += n
        self.plot.append(envelope)
        if self.opts.progress:
            _progress(self.summary.messages, self.total, self.start)

    def _write_pending(self) -> None:
        """The last block, once the observer has given its residual (its error raised here),
        with its collision flags, to the writers."""
        if self.observed is None or self.pending is None:
            return
        cols, self.pending = self.pending, None
        observed = self.observed.result()
        self.observed = None
        cols["tau_observer"] = observed[:, 0]
        cols["collision"] = self.flags(observed)
        if self.writers is not None:
            self.writers.write(cols)

    def finish(self, out_dir: Path) -> Summary:
        """The files closed, the plots drawn, and the summary written."""
        if self.opts.progress:
            print(file=sys.stderr)
        png = "png" in self.opts.outputs and self.plot
        self._write_pending()
        if self.writers is not None:
            self.writers.close(np.vstack(self.plot) if png else None)
        self.summary.seconds = time.monotonic() - self.start
        if self.peaks.states:
            self.summary.observer = Observed(self.opts.observer_gain, self.peaks.states,
                                             self.peaks.peak, self.peaks.peak_ns,
                                             self.peaks.binned,
                                             thresholds_order(self.opts, self.names),
                                             list(self.opts.hold),
                                             list(self.opts.command_joints or []))
        self.summary.write(out_dir)
        return self.summary

    def abort(self) -> None:
        self.observing.shutdown(cancel_futures=True)
        if self.writers is not None:
            self.writers.abort()


def thresholds_order(opts: AnalyzeOptions, names: list[str]) -> list[str]:
    """The joints the collision thresholds are for, in their order, as the dynamics node
    takes them: ``collision_joints``, else ``joints`` (``command_joints``), else the model's."""
    return list(opts.collision_joints or opts.command_joints or names)


class Flags:
    """The dynamics node's collision flags (``CollisionDetector``: thresholds that grow
    with speed, hysteresis) over residuals given block after block."""

    def __init__(self, names: list[str], opts: AnalyzeOptions) -> None:
        order = thresholds_order(opts, names)
        unknown = sorted(set(order) - set(names))
        if unknown or len(set(order)) < len(order):
            raise BagError(f"collision_joints {', '.join(order)}: "
                           + (f"the model has no {', '.join(unknown)}" if unknown else
                              "a joint named twice"))
        given = opts.collision_thresholds
        self.on = bool(given)
        parts = []
        for k, param in enumerate(THRESHOLD_PARAMETERS):
            values = getattr(opts, param)
            label = "--collision-thresholds" if k == 0 else param
            if len(values) > 1 and len(values) != len(order):
                raise BagError(f"{label} has {len(values)} values for {len(order)} joints "
                               f"({', '.join(order)})")
            problem = thresholds_problem(param, values)
            if problem:
                raise BagError(problem)
            if values and not given:
                raise BagError(f"{param} needs collision_thresholds (the thresholds at rest)")
            part = np.full(len(names), np.inf if k == 0 else 0.0)
            for name, x in zip(order, np.resize(values, len(order)) if values else [],
                               strict=False):
                if name in names:
                    part[names.index(name)] = x
            parts.append(part)
        self.parts = parts  # no threshold at rest (inf): never flagged
        if not 0.0 < opts.collision_release <= 1.0:
            raise BagError(f"collision_release must be in (0, 1], got {opts.collision_release}")
        self.release = opts.collision_release
        self.state = np.zeros(len(names), dtype=np.bool_)

    def __call__(self, observed: F64) -> F64:
        """Per state and joint, 1.0 flagged, 0.0 not, NaN no decision (no residual, or the
        observer not settled: :meth:`ResidualPeaks.add`'s planes)."""
        out = np.full((observed.shape[0], observed.shape[2]), np.nan)
        if self.on:
            rest, moving, per_speed = self.parts
            flag_states(observed, np.arange(out.shape[1]), rest, moving, per_speed,
                        self.release, self.state, np.empty(out.shape), out)
        return out


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


def _legged_hint(rec: Recording) -> list[str]:
    """A fixed-base analysis of a recording with odometry: say how to analyse it as a legged
    robot's."""
    odometry = sorted({c.topic for c in rec.reader.connections if c.msgtype == ODOMETRY})
    if not odometry:  # (a model with a free flyer was refused when the recording opened)
        return []
    return [f"the recording has {ODOMETRY} on {', '.join(odometry)}: a legged robot's is "
            "analysed with the floating-base node's parameters file (--params, as "
            "config/floating_base.yaml), its base from the odometry"]


def analyze(paths: list[Path], out_dir: Path, opts: AnalyzeOptions) -> Summary:
    """Analyse one recording (several bag paths are read as one, merged by time).

    Three things run at once: reading (a thread), computing (here) and writing (a process of
    its own); the compiled dynamics run on one thread meanwhile, as the cores are taken."""
    with one_numba_thread(), output_set(out_dir) as partial:
        return _analyze(paths, partial, opts)


def _analyze(paths: list[Path], out_dir: Path, opts: AnalyzeOptions) -> Summary:
    # the writer process starts first: it imports what it writes with meanwhile
    process = WriterProcess(opts.outputs) if opts.outputs else None
    rec = None
    emit = None
    try:
        rec = open_recording(paths, opts)
        names = rec.model.state_joint_names
        summary = Summary.of(names, rec.warnings + _legged_hint(rec))
        emit = Emit(rec.model, summary, rec.states, out_dir, opts, process)
        stream = Stream(rec.model, opts, rec.blocks, summary, emit)
        damage = None
        try:
            for batch, commands in chunks(rec, opts, summary):
                stream.add(batch, commands)
        except OutputError:
            raise
        except Exception as e:  # a truncated or damaged file: keep what was read
            damage = f"{type(e).__name__}: {e}"
        damage = damage or getattr(rec.reader, "damage", None)
        stream.finish()
        summary = emit.finish(out_dir)
        if damage:
            summary.warnings.append(f"the recording is damaged after {summary.messages} joint "
                                    f"states ({damage}); the analysis stops there")
            summary.write(out_dir)
        return summary
    finally:
        # on any error (Ctrl-C too), leave no writer process behind
        if emit is not None:
            emit.abort()
        elif process is not None:
            process.stop()
        if rec is not None:
            rec.close()
