"""Where the analysis goes: an MCAP bag, CSV, Parquet, and PNG plots; written chunk by chunk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..wire.cdr import STAMP, STAMP_END, joint_state, joint_state_layout
from .errors import OutputError
from .mcap_writer import (
    MESSAGE_CHANNEL,
    MESSAGE_DATA,
    MESSAGE_LOG_TIME,
    MESSAGE_PUBLISH_TIME,
    McapWriter,
)
from .plotting import preload_pyplot, pyplot
from .sink import Sink

F64 = NDArray[np.float64]

#: per-joint columns of the tables, in order, and what each holds (Parquet's field metadata)
COLUMNS = {
    "q": "joint position (rad, or m for a prismatic joint)",
    "v": "joint velocity (rad/s or m/s): recorded, or differenced from the positions",
    "a": "joint acceleration (rad/s^2 or m/s^2), differenced from the velocities",
    "tau_measured": "measured effort (N m or N)",
    "tau_model": "inverse dynamics M(q) a + h(q, v) of the measured motion (N m or N)",
    "gravity": "gravity torque g(q) (N m or N)",
    "tau_external": "external torque, the torque the environment applies at the joint: "
                    "tau_model - tau_measured (N m or N)",
    "qdd_predicted": "acceleration the commanded efforts produce (ABA; rad/s^2 or m/s^2)",
    "tau_observer": "the dynamics node's momentum observer's residual at the analysis's "
                    "observer gain, the one its collision flags are on (N m or N; NaN where it "
                    "gives none)",
    "collision": "the dynamics node's collision flag with the analysis's collision "
                 "thresholds: 1 flagged, 0 not (NaN: no thresholds, or no residual)",
}
#: sensor_msgs/msg/JointState as ros2 bag stores a schema (ros2msg, dependencies appended)
JOINT_STATE_DEF = "\n".join([
    "std_msgs/Header header", "string[] name", "float64[] position", "float64[] velocity",
    "float64[] effort", "=" * 80, "MSG: std_msgs/Header", "builtin_interfaces/Time stamp",
    "string frame_id", "=" * 80, "MSG: builtin_interfaces/Time", "int32 sec", "uint32 nanosec"])
#: computed topics of the output bag: (topic, column, message type)
TOPICS = (
    ("/rbd/gravity_torques", "gravity", "sensor_msgs/msg/JointState"),
    ("/rbd/model_torques", "tau_model", "sensor_msgs/msg/JointState"),
    ("/rbd/external_torques_from_acceleration", "tau_external", "sensor_msgs/msg/JointState"),
    ("/rbd/predicted_accelerations", "qdd_predicted", "sensor_msgs/msg/JointState"),
    ("/rbd/external_torques", "tau_observer", "sensor_msgs/msg/JointState"),
    ("/rbd/collision_flags", "collision", "sensor_msgs/msg/JointState"),
)


class WriterProcess:
    """The process that writes the outputs, started before the recording is opened so that it
    has imported what it writes with (pyarrow, zstandard, matplotlib for ``png``) by the time
    the first chunk is computed.

    It is ``python -m rbd_ros.bag.writers`` (not a multiprocessing child: those re-import the
    caller's main module and cannot start from daemonic workers such as Dask's)."""

    def __init__(self, outputs: tuple[str, ...]) -> None:
        import multiprocessing as mp
        import subprocess
        import sys

        self.pipe, child_end = mp.Pipe()
        fd = child_end.fileno()
        self.child = subprocess.Popen([sys.executable, "-m", __name__, str(fd), *outputs],
                                      pass_fds=[fd])
        child_end.close()

    def stop(self) -> None:
        self.pipe.close()
        try:
            self.child.wait(timeout=60)
        except Exception:
            self.child.kill()


class Writers:
    """The output formats, written chunk by chunk by a process of their own
    (:class:`WriterProcess`, started here unless given), so that writing runs on another
    core than reading and computing, with no lock between them.

    Chunks go through ``AHEAD`` slots of a file both processes map (in /dev/shm where there is
    one: memory); a socket pair carries which slot is ready and which is written."""

    AHEAD = 3

    def __init__(self, out_dir: Path, names: list[str], outputs: tuple[str, ...],
                 rows: int, process: WriterProcess | None = None) -> None:
        import os
        import tempfile

        self.rows, self.nj, self.names, self.out_dir = rows, len(names), names, out_dir
        self.process = process or WriterProcess(outputs)
        self.pipe, self.child = self.process.pipe, self.process.child
        shm = Path("/dev/shm")
        fd, name = tempfile.mkstemp(prefix="rbd-chunks-", dir=shm if shm.is_dir() else None)
        os.ftruncate(fd, self.AHEAD * _slot_bytes(rows, self.nj))
        os.close(fd)
        self.path = Path(name)
        self.slots = _slots(self.path, self.AHEAD, rows, self.nj)
        self.pipe.send((out_dir, names, outputs, self.path, self.AHEAD, rows))
        self.sent = self.done = 0

    def _reply(self) -> None:
        """One answer of the writer: a chunk written (None), or its error."""
        try:
            answer = self.pipe.recv()
        except (EOFError, OSError):
            raise OutputError(f"the output writer process ended (exit code "
                              f"{self.child.wait()})") from None
        if answer is not None:
            raise OutputError(f"writing the outputs failed: {answer}")
        self.done += 1

    def write(self, cols: dict[str, Any]) -> None:
        """Write a chunk: ``ns`` (int stamps) and the ``COLUMNS`` as (n, joints) arrays."""
        for lo in range(0, len(cols["ns"]), self.rows):
            hi = min(lo + self.rows, len(cols["ns"]))
            while self.sent - self.done >= self.AHEAD:  # the writer still has every slot
                self._reply()
            slot = self.sent % self.AHEAD
            ns, block = self.slots[slot]
            ns[: hi - lo] = cols["ns"][lo:hi]
            for k, c in enumerate(COLUMNS):
                block[k, : hi - lo] = cols[c][lo:hi]
            try:
                self.pipe.send((slot, hi - lo))
            except OSError:  # the writer is gone: its last word says why
                while True:
                    self._reply()
            self.sent += 1

    def close(self, plot: F64 | None = None) -> None:
        """Finish every file, and with ``plot`` (see :func:`plots`) the PNGs: half the joints
        drawn here while the writer process finishes the files and draws the other half."""
        try:
            if plot is None:
                self.pipe.send(("close", [], None))
            else:
                n = self.nj
                half = (n + 1) // 2
                self.pipe.send(("close", self.names[half:], _joints(plot, n, range(half, n))))
                plots(self.out_dir, self.names[:half], _joints(plot, n, range(half)))
            while self.done < self.sent + 1:  # the chunks, then the close
                self._reply()
        finally:
            self.abort()

    def abort(self) -> None:
        self.process.stop()
        self.slots.clear()
        self.path.unlink(missing_ok=True)


def _joints(data: F64, n: int, joints: range) -> F64:
    """The columns of :func:`plots`' ``data`` (of ``n`` joints) for some of the joints."""
    cols = [0] + [1 + k * n + j for k in range(6) for j in joints]
    return data[:, cols]


def _slot_bytes(rows: int, nj: int) -> int:
    return 8 * rows * (1 + len(COLUMNS) * nj)


def _slots(path: Path, count: int, rows: int, nj: int) -> list[tuple[NDArray[np.int64], F64]]:
    """Views of each slot of the shared file: the stamps (ns), and the columns (k, row, joint)."""
    mem = np.memmap(path, dtype=np.uint8, mode="r+", shape=(count * _slot_bytes(rows, nj),))
    out = []
    for k in range(count):
        base = k * _slot_bytes(rows, nj)
        out.append((mem[base : base + 8 * rows].view(np.int64),
                    mem[base + 8 * rows : base + _slot_bytes(rows, nj)].view(np.float64)
                    .reshape(len(COLUMNS), rows, nj)))
    return out


def _serve(pipe: Any) -> None:
    """The writer process: ``(slot, rows)`` in, ``None`` back once written; ``("close",
    names, plot)`` closes the files and draws those joints' PNGs; an error goes back as its
    text and ends it."""
    try:
        out_dir, names, outputs, path, count, rows = pipe.recv()
        slots = _slots(path, count, rows, len(names))
        formats = _Formats(out_dir, names, outputs)
        while (msg := pipe.recv())[0] != "close":
            slot, n = msg
            ns, block = slots[slot]
            cols: dict[str, Any] = {"ns": ns[:n]}
            cols.update({c: block[k, :n] for k, c in enumerate(COLUMNS)})
            formats.write(cols)
            pipe.send(None)
        formats.close()
        _, plot_names, plot = msg
        if plot_names:
            plots(out_dir, plot_names, plot)
        pipe.send(None)
    except (EOFError, ConnectionError):  # the analysis is gone: nothing to report to
        pass
    except Exception as e:  # reported to the analysis, which stops with it
        pipe.send(f"{type(e).__name__}: {e}")
        try:  # read on until the analysis hangs up: closing with unread data would lose the
            while True:  # report (the socket resets)
                pipe.recv_bytes()
        except (EOFError, ConnectionError):
            pass


class _Formats:
    """The files themselves: CSV, Parquet and MCAP."""

    def __init__(self, out_dir: Path, names: list[str], outputs: tuple[str, ...]) -> None:
        self.sinks: list[Any] = []
        if "csv" in outputs or "parquet" in outputs:
            self.sinks += [_Table(out_dir, names, kind) for kind in ("csv", "parquet")
                           if kind in outputs]
        if "mcap" in outputs:
            self.sinks.append(_Bag(out_dir / "analysis.mcap", names))

    def write(self, cols: dict[str, Any]) -> None:
        for sink in self.sinks:
            sink.write(cols)

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()


class _Table:
    """CSV or Parquet: a row per joint state, a column per quantity and joint. Written a
    ``ROW_GROUP`` rows at a time: a Parquet writer keeps every row group's metadata (about
    30 KB for these 57 columns) until the file ends, so small groups would grow its memory
    with the recording's length."""

    ROW_GROUP = 50_000

    def __init__(self, out_dir: Path, names: list[str], kind: str) -> None:
        import pyarrow as pa

        self.schema = pa.schema(
            [pa.field("t", pa.float64(), metadata={"description": "the joint state's stamp (s)"})]
            + [pa.field(f"{c}_{n}", pa.float64(), metadata={"description": doc})
               for c, doc in COLUMNS.items() for n in names])
        self.pending: list[Any] = []
        self.file = Sink(out_dir / f"analysis.{kind}")  # pyarrow leaves it open
        if kind == "csv":
            import pyarrow.csv as pcsv

            self.writer: Any = pcsv.CSVWriter(self.file, self.schema)
        else:
            import pyarrow.parquet as pq

            # no dictionary encoding: it never pays on float signals and costs 7x the time;
            # snappy: zstd saves 5 % of the size of float columns and takes twice the time
            self.writer = pq.ParquetWriter(self.file, self.schema,
                                           use_dictionary=False, compression="snappy")

    def write(self, cols: dict[str, F64]) -> None:
        import pyarrow as pa

        columns = [1e-9 * cols["ns"]] + [cols[c][:, j] for c in COLUMNS
                                         for j in range(cols[c].shape[1])]
        self.pending.append(pa.Table.from_arrays([pa.array(c) for c in columns],  # one copy
                                                 schema=self.schema))
        if sum(len(t) for t in self.pending) >= self.ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self.pending:
            table = pa.concat_tables(self.pending)
            self.writer.write_table(table)  # one row group (up to 1 Mi rows)
            self.pending = []

    def close(self) -> None:
        self._flush()
        self.writer.close()
        self.file.close()


class _Bag:
    """The computed topics as sensor_msgs/JointState (names and efforts) in an MCAP."""

    def __init__(self, path: Path, names: list[str]) -> None:
        raw = joint_state(names, (0, 0, len(names)))
        self.effort_at = joint_state_layout(raw).fields[2][0]
        self.bag = McapWriter(path)
        self.bag.add_schema(1, "sensor_msgs/msg/JointState", JOINT_STATE_DEF)
        for k, (topic, _, _) in enumerate(TOPICS, start=1):
            self.bag.add_channel(k, 1, topic)
        # a message record (channel 0 for now) repeated in a buffer that is reused (fresh
        # memory costs page faults), so that only what changes is written for each message
        self.record = McapWriter.message_record(0, raw)
        self.buffer = np.empty(0, dtype=np.uint8)

    def write(self, cols: dict[str, Any]) -> None:
        """Every message of a chunk serialised at once: they share one layout (the names are
        fixed), so a template is repeated with the stamps and efforts written into it."""
        ns = cols["ns"]
        n = len(ns)
        sec, nsec = np.divmod(ns, 1_000_000_000)
        stamp = np.empty((n, 16), dtype=np.uint8)  # the ns, then the (sec, nanosec) pair
        stamp[:, :8] = ns.astype("<i8").view(np.uint8).reshape(n, 8)
        stamp[:, 8:12] = sec.astype("<i4").view(np.uint8).reshape(n, 4)
        stamp[:, 12:] = nsec.astype("<u4").view(np.uint8).reshape(n, 4)
        width = len(self.record)
        e = MESSAGE_DATA + self.effort_at  # the efforts' place in a record
        for channel, (_, column, _) in enumerate(TOPICS, start=1):
            values = np.ascontiguousarray(cols[column], dtype="<f8")
            rows = np.flatnonzero(np.isfinite(values).all(axis=1))
            if not rows.size:
                continue
            if len(self.buffer) < rows.size * width:
                self.buffer = np.tile(self.record, rows.size)
            records = self.buffer[: rows.size * width]
            channel_id = np.array([channel], "<u2").view(np.uint8)
            # only what changes from one message to the next: the channel, the log and
            # publish times (the ns), the message's stamp (sec, nanosec) and its efforts
            each = records.reshape(rows.size, width)
            at = slice(None) if rows.size == n else rows
            each[:, MESSAGE_CHANNEL : MESSAGE_CHANNEL + 2] = channel_id
            each[:, MESSAGE_LOG_TIME : MESSAGE_LOG_TIME + 8] = stamp[at, :8]
            each[:, MESSAGE_PUBLISH_TIME : MESSAGE_PUBLISH_TIME + 8] = stamp[at, :8]
            each[:, MESSAGE_DATA + STAMP : MESSAGE_DATA + STAMP_END] = stamp[at, 8:]
            each[:, e : e + values.shape[1] * 8] = values.view(np.uint8)[at]
            self.bag.write_records(channel, ns[rows], records, width)

    def close(self) -> None:
        self.bag.close()


def plots(out_dir: Path, names: list[str], data: F64) -> None:
    """One PNG per joint: measured vs model torque, and the external torque. ``data``: a row per
    span of time: its start, then the minima of the measured, model and external columns of every
    joint, then their maxima. Each series is drawn as the band between its minimum and its
    maximum (a line where they are equal): a long recording's spans hold many samples, and a
    band costs a tenth of the time of a line zigzagging between them."""
    plt = pyplot()
    n = len(names)
    t = data[:, 0] - data[0, 0]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(9, 5))
    # fixed margins (room for six-character tick labels): a tight layout per joint would
    # cost as much as drawing it
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.1, top=0.93, hspace=0.1)
    top.set_ylabel("N m")
    bottom.set_ylabel("external torque, N m")
    bottom.set_xlabel(f"time (s) since the first joint state, stamped {data[0, 0]:.3f} s")
    series = ((top, 0, "measured effort", "tab:blue"), (top, n, "model torque (RNEA)",
              "tab:orange"), (bottom, 2 * n, None, "tab:red"))
    for j, name in enumerate(names):
        bands = []
        for ax, k, label, color in series:
            low, high = data[:, 1 + k + j], data[:, 1 + 3 * n + k + j]
            bands.append(ax.fill_between(t, low, high, label=label, color=color, alpha=0.7,
                                         lw=0.8))
        for ax, cols in ((top, [j, n + j]), (bottom, [2 * n + j])):  # relim skips bands
            span = data[:, [1 + c for c in cols] + [1 + 3 * n + c for c in cols]]
            lo, hi = (np.nanmin(span), np.nanmax(span)) if np.isfinite(span).any() else (-1, 1)
            pad = 0.05 * (hi - lo) or 1.0
            ax.set_ylim(lo - pad, hi + pad)
        top.set_xlim(t[0], t[-1] if t[-1] > t[0] else t[0] + 1.0)
        top.legend(loc="upper right")
        top.set_title(name, y=1.0)  # placed, not searched for above the ticks
        # zlib's fastest level: a third of the PNG's time, a few KB more
        fig.savefig(out_dir / f"{name}.png", dpi=90, pil_kwargs={"compress_level": 1})
        for band in bands:
            band.remove()
    plt.close(fig)


if __name__ == "__main__":
    import sys
    from multiprocessing.connection import Connection

    outputs = sys.argv[2:]
    if "png" in outputs:
        preload_pyplot()
    if {"csv", "parquet"} & set(outputs):  # imported now, while the analysis starts
        import pyarrow.csv
        import pyarrow.parquet  # noqa: F401
    if "mcap" in outputs:
        import zstandard  # noqa: F401
    _serve(Connection(int(sys.argv[1])))
