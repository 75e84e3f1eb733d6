"""One long recording in parts (on Dask workers), reduced into the outputs of one run.

Each part computes the blocks of recorded time of its share (:class:`~.recording.Blocks`)
into a file; the reduction hands them, in order, to what an analysis of the whole recording
hands its computed blocks to, so the outputs are exactly those of :func:`.analyze.analyze`.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .analyze import AnalyzeOptions, Emit
from .decode import decode
from .errors import BagError
from .outputs import one_numba_thread, output_set
from .readers import Batch, batches
from .recording import open_recording
from .stream import Stream, Summary, chunks

SPLIT_FROM = 600_000  # joint states: shorter recordings are analysed whole
#: what a part computes per block, in this order in its file (the external torques are the
#: reduction's)
PART_COLUMNS = ("ns", "q", "v", "a", "tau_measured", "tau_model", "gravity", "qdd_predicted",
                "differenced")


@dataclass
class Part:
    """What a part of a recording computed: its blocks, in ``folder / "blocks.npy"``."""

    folder: Path
    summary: Summary  # its unreadable messages numbered from its first, its warnings
    states: int  # joint_states messages recorded in its time range, readable or not


class UndeterminedError(Exception):
    """A part's look-back did not settle what its first joint state carries from before."""


class PartStream(Stream):
    """The stream of a part (``region``: its first and end block) reading from a block before
    its own: the look-back must hold two joint states before the part's first (for the
    differences) and have given every value it carries forward (position, velocity and effort
    of every joint, the command), or it could differ from what the whole recording carries
    there (UndeterminedError)."""

    def __init__(self, *args: Any, look_back: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.check = look_back and self.region[0] > 0

    def rows(self, js: Batch, commands: np.ndarray) -> dict[str, Any] | None:
        rows = super().rows(js, commands)
        if rows is not None and self.check and (rows["blk"] >= self.region[0]).any():
            self._settled(rows)
        return rows

    def _settled(self, rows: dict[str, Any]) -> None:
        self.check = False
        p = int(np.argmax(rows["blk"] >= self.region[0]))  # the part's first joint state
        if p < 2:
            raise UndeterminedError
        carried = np.stack([rows["q"][p - 1], rows["v"][p - 1], rows["e"][p - 1]])
        need = np.ones_like(carried, dtype=bool)
        need[2, [self.col[n] for n in self.opts.hold]] = False  # held: never an effort
        command_cols = [self.col[n] for n in (self.opts.command_joints or self.names)]
        if not np.isfinite(carried[need]).all() or (
                self.opts.command_topic and not np.isfinite(rows["u"][p, command_cols]).all()):
            raise UndeterminedError


def parts_for(paths: list[Path], opts: AnalyzeOptions, workers: int) -> int:
    """Into how many parts to cut a recording for ``workers`` workers: 1 (whole) unless it is
    long (``SPLIT_FROM`` joint states), read through an index (sqlite3, or an MCAP with its
    summary), and its first 50 joint states give every joint's position, velocity and effort
    (a part then learns from a short look-back what they carry forward; otherwise each part
    would read from the start)."""
    if workers < 2:
        return 1
    try:
        rec = open_recording(paths, opts, check=False)
    except Exception:  # a damaged or odd recording: analysed whole, where the error is said
        return 1
    try:
        if rec.damaged or rec.states < SPLIT_FROM:  # damaged: read front to back, no index
            return 1
        batch = next(batches(rec.reader, rec.joint_states, 50, ordered=False), None)
        rename, given = opts.names, set()
        for g in decode(batch.data, batch.offsets, []) if batch else []:  # readable ones
            if min(g.position.shape[1], g.velocity.shape[1], g.effort.shape[1]):
                given |= {rename(n) for n in g.names}
        if not set(rec.model.state_joint_names) - set(opts.hold) <= given:
            return 1
        return max(1, min(workers, rec.blocks.count // 4))
    except Exception:  # a damaged or odd recording: analysed whole, where the error is said
        return 1
    finally:
        rec.close()


def analyze_part(paths: list[Path], folder: Path, opts: AnalyzeOptions, k: int, parts: int) -> Part:
    """Part ``k`` of ``parts`` of a recording, by recorded time: its blocks computed into
    ``folder``. It reads from a block before its own (the differences need the two joint
    states before; the values carried forward must all be given there), or, where that block
    does not settle them, from the start."""
    rec = open_recording(paths, opts)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        blocks = rec.blocks
        lo, hi = k * blocks.count // parts, (k + 1) * blocks.count // parts
        region = (blocks.start(lo) if k else -(2**63), blocks.start(hi) if k < parts - 1
                  else 2**63 - 1)
        for start in ([blocks.start(lo - 1)] if lo else []) + [None]:
            started = time.monotonic()
            summary = Summary.of(rec.model.state_joint_names, rec.warnings)
            with (folder / "blocks.npy").open("wb") as out:
                def save(block: int, cols: dict[str, Any], out: Any = out) -> None:
                    np.save(out, np.array([len(cols["ns"]), block]))
                    for c in PART_COLUMNS:
                        np.save(out, cols[c])

                stream = PartStream(rec.model, opts, blocks, summary, save, (lo, hi),
                                    look_back=start is not None)
                try:
                    with contextlib.closing(chunks(rec, opts, summary, start, region)) as read:
                        for batch, commands in read:
                            stream.add(batch, commands)
                            if stream.done:
                                break
                    stream.finish()
                except UndeterminedError:
                    continue
            summary.seconds = time.monotonic() - started
            return Part(folder, summary, stream.seen)
        raise AssertionError("unreachable: the pass from the start settles everything")
    finally:
        rec.close()


def reduce_parts(paths: list[Path], out_dir: Path, opts: AnalyzeOptions, parts: list[Part]
                 ) -> Summary:
    """The outputs of a recording analysed in ``parts`` (in order): exactly those of
    :func:`.analyze.analyze` on the whole, the blocks being what it computes and writes at a
    time."""
    try:
        with one_numba_thread(), output_set(out_dir) as partial:
            rec = open_recording(paths, opts)
            emit = None
            try:
                summary = Summary.of(rec.model.state_joint_names, rec.warnings)
                emit = Emit(rec.model, summary, rec.states, partial, opts)
                emit.start -= max(p.summary.seconds for p in parts)  # the time said: theirs too
                summary.start_ns = parts[0].summary.start_ns
                first = 0
                for part in parts:
                    summary.warnings += [w for w in part.summary.warnings
                                         if w not in summary.warnings]
                    summary.skipped += [(first + k, ns) for k, ns in part.summary.skipped]
                    summary.bad_commands += part.summary.bad_commands
                    first += part.states
                    path = part.folder / "blocks.npy"
                    size = path.stat().st_size
                    with path.open("rb") as f:
                        while f.tell() < size:
                            n, block = np.load(f)
                            cols = {c: np.load(f) for c in PART_COLUMNS}
                            if len(cols["ns"]) != n:
                                raise BagError(f"{path} is damaged")
                            emit(int(block), cols)
                return emit.finish(partial)
            finally:
                if emit is not None:
                    emit.abort()
                rec.close()
    finally:
        for part in parts:
            shutil.rmtree(part.folder, ignore_errors=True)
