"""Where the analysis goes: an MCAP bag, CSV, Parquet, and PNG plots; written chunk by chunk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..dynamics.model import F64

#: per-joint columns of the tables, in order
COLUMNS = ("q", "v", "a", "tau_measured", "tau_model", "gravity", "residual", "qdd_predicted")
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
        if "csv" in outputs:
            self.csv = (out_dir / "analysis.csv").open("w")
            self.csv.write(",".join(self.header) + "\n")
        if "parquet" in outputs:
            import pyarrow as pa
            import pyarrow.parquet as pq

            self.schema = pa.schema([(h, pa.float64()) for h in self.header])
            self.parquet = pq.ParquetWriter(out_dir / "analysis.parquet", self.schema)
        if "mcap" in outputs:
            from rosbags.rosbag2 import StoragePlugin, Writer
            from rosbags.typesys import Stores, get_typestore

            path = out_dir / "analysis_bag"
            if path.exists():
                import shutil

                shutil.rmtree(path)
            self.typestore = get_typestore(Stores.ROS2_HUMBLE)
            self.bag = Writer(path, version=8, storage_plugin=StoragePlugin.MCAP)
            self.bag.open()
            self.conns = {topic: self.bag.add_connection(topic, msgtype,
                                                         typestore=self.typestore)
                          for topic, _, msgtype in TOPICS}

    def write(self, cols: dict[str, F64]) -> None:
        table = np.column_stack([cols["t"]] + [cols[c] for c in COLUMNS])
        if self.csv is not None:
            np.savetxt(self.csv, table, delimiter=",", fmt="%.9g")
        if self.parquet is not None:
            import pyarrow as pa

            self.parquet.write_table(pa.Table.from_arrays(
                [pa.array(table[:, k]) for k in range(table.shape[1])], schema=self.schema))
        if self.bag is not None:
            self._bag(cols)

    def _bag(self, cols: dict[str, F64]) -> None:
        ts = self.typestore
        JointState = ts.types["sensor_msgs/msg/JointState"]
        Header = ts.types["std_msgs/msg/Header"]
        Time = ts.types["builtin_interfaces/msg/Time"]
        empty = np.empty(0)
        for k, t in enumerate(cols["t"]):
            sec = int(np.floor(t))
            stamp = Time(sec=sec, nanosec=round((t - sec) * 1e9) % 1_000_000_000)
            ns = round(t * 1e9)
            for topic, column, msgtype in TOPICS:
                values = cols[column][k]
                if not np.all(np.isfinite(values)):
                    continue
                msg = JointState(header=Header(stamp=stamp, frame_id=""), name=self.names,
                                 position=empty, velocity=empty,
                                 effort=np.ascontiguousarray(values))
                self.bag.write(self.conns[topic], ns, ts.serialize_cdr(msg, msgtype))

    def close(self) -> None:
        if self.csv is not None:
            self.csv.close()
        if self.parquet is not None:
            self.parquet.close()
        if self.bag is not None:
            self.bag.close()


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
