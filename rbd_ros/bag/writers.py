"""Where the analysis goes: an MCAP bag, CSV, Parquet, and PNG plots; written chunk by chunk."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ..dynamics.model import F64
from .cdr import layout

#: per-joint columns of the tables, in order
COLUMNS = ("q", "v", "a", "tau_measured", "tau_model", "gravity", "residual", "qdd_predicted")
#: sensor_msgs/msg/JointState as ros2 bag stores a schema (ros2msg, dependencies appended)
JOINT_STATE_DEF = "\n".join([
    "std_msgs/Header header", "string[] name", "float64[] position", "float64[] velocity",
    "float64[] effort", "=" * 80, "MSG: std_msgs/Header", "builtin_interfaces/Time stamp",
    "string frame_id", "=" * 80, "MSG: builtin_interfaces/Time", "int32 sec", "uint32 nanosec"])
#: computed topics of the output bag: (topic, column, message type)
TOPICS = (
    ("/rbd/gravity_torques", "gravity", "sensor_msgs/msg/JointState"),
    ("/rbd/model_torques", "tau_model", "sensor_msgs/msg/JointState"),
    ("/rbd/external_torques", "residual", "sensor_msgs/msg/JointState"),
    ("/rbd/predicted_accelerations", "qdd_predicted", "sensor_msgs/msg/JointState"),
)


class Writers:
    def __init__(self, out_dir: Path, names: list[str], outputs: tuple[str, ...]) -> None:
        self.names = names
        self.header = ["t"] + [f"{c}_{n}" for c in COLUMNS for n in names]
        self.csv = None
        self.parquet: Any = None
        self.bag: Any = None
        self.error: Exception | None = None
        self.queue: queue.Queue[dict[str, F64] | None] = queue.Queue(maxsize=2)
        self.thread = threading.Thread(target=self._run, name="rbd-writers", daemon=True)
        self.thread.start()
        import pyarrow as pa

        self.schema = pa.schema([(h, pa.float64()) for h in self.header])
        if "csv" in outputs:
            import pyarrow.csv as pcsv

            self.csv = pcsv.CSVWriter(out_dir / "analysis.csv", self.schema)
        if "parquet" in outputs:
            import pyarrow.parquet as pq

            # no dictionary encoding: it never pays on float signals and costs 7x the time
            self.parquet = pq.ParquetWriter(out_dir / "analysis.parquet", self.schema,
                                            use_dictionary=False, compression="zstd")
        if "mcap" in outputs:
            from rosbags.typesys import Stores, get_typestore

            from .mcap_writer import McapWriter

            ts = get_typestore(Stores.ROS2_HUMBLE)
            msg = ts.types["sensor_msgs/msg/JointState"](
                header=ts.types["std_msgs/msg/Header"](
                    stamp=ts.types["builtin_interfaces/msg/Time"](sec=0, nanosec=0),
                    frame_id=""),
                name=names, position=np.empty(0), velocity=np.empty(0),
                effort=np.zeros(len(names)))
            raw = bytes(ts.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
            self.template = np.frombuffer(raw, dtype=np.uint8)
            lay = layout(raw)
            assert lay is not None
            self.offset = lay.fields[2][0]
            self.bag = McapWriter(out_dir / "analysis.mcap")
            self.bag.add_schema(1, "sensor_msgs/msg/JointState", JOINT_STATE_DEF)
            for k, (topic, _, _) in enumerate(TOPICS, start=1):
                self.bag.add_channel(k, 1, topic)

    def write(self, cols: dict[str, F64]) -> None:
        """Queue a chunk for the writer thread (pyarrow and zstd release the GIL, so writing
        overlaps with reading and computing the next chunk)."""
        if self.error is not None:
            raise self.error
        self.queue.put(cols)

    def _run(self) -> None:
        while (cols := self.queue.get()) is not None:
            try:
                self._write(cols)
            except Exception as e:  # handed to the main thread at its next write or close
                self.error = e

    def _write(self, cols: dict[str, F64]) -> None:
        if self.csv is not None or self.parquet is not None:
            import pyarrow as pa

            arrays = [cols["t"]] + [cols[c][:, j] for c in COLUMNS for j in range(len(self.names))]
            table = pa.Table.from_arrays([pa.array(a) for a in arrays], schema=self.schema)
            for writer in (self.csv, self.parquet):
                if writer is not None:
                    writer.write_table(table)
        if self.bag is not None:
            self._bag(cols)

    def _bag(self, cols: dict[str, F64]) -> None:
        """Every message of a chunk serialised at once: they share one layout (the names are
        fixed), so a template row is tiled and the stamps and efforts written into it."""
        t = cols["t"]
        sec = np.floor(t).astype(np.int64)
        nsec = np.rint((t - sec) * 1e9).astype(np.int64)
        sec, nsec = sec + nsec // 1_000_000_000, nsec % 1_000_000_000
        log_ns = sec * 1_000_000_000 + nsec
        n = len(self.names)
        for channel, (_, column, _) in enumerate(TOPICS, start=1):
            values = cols[column]
            ok = np.isfinite(values).all(axis=1)
            if not ok.any():
                continue
            rows = np.tile(self.template, (int(ok.sum()), 1))
            rows[:, 4:8] = sec[ok].astype("<i4")[:, None].view(np.uint8)
            rows[:, 8:12] = nsec[ok].astype("<u4")[:, None].view(np.uint8)
            rows[:, self.offset : self.offset + 8 * n] = \
                np.ascontiguousarray(values[ok], dtype="<f8").view(np.uint8)
            self.bag.write_batch(channel, log_ns[ok], rows)

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()
        if self.csv is not None:
            self.csv.close()
        if self.parquet is not None:
            self.parquet.close()
        if self.bag is not None:
            self.bag.close()
        if self.error is not None:
            raise self.error


def plots(out_dir: Path, names: list[str], data: F64) -> None:
    """One PNG per joint: measured vs model torque, and the residual."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(names)
    t = data[:, 0]
    for j, name in enumerate(names):
        measured, model, residual = data[:, 1 + j], data[:, 1 + n + j], data[:, 1 + 2 * n + j]
        fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(9, 5))
        top.plot(t, measured, label="measured effort", lw=0.8)
        top.plot(t, model, label="model torque (RNEA)", lw=0.8)
        top.set_ylabel("N m")
        top.legend(loc="upper right")
        top.set_title(name)
        bottom.plot(t, residual, color="tab:red", lw=0.8)
        bottom.set_ylabel("residual, N m")
        bottom.set_xlabel("time (s)")
        fig.tight_layout()
        fig.savefig(out_dir / f"{name}.png", dpi=90)
        plt.close(fig)
