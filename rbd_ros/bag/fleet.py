"""Many recordings at once: found in a folder tree, analysed in parallel (processes on this
machine, or a Dask cluster), each failure named with its recording and the others kept."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from .analyze import AnalyzeOptions, analyze
from .errors import BagError
from .legged import LeggedOptions, LeggedSummary, analyze_legged
from .outputs import MANIFEST
from .parts import Part, analyze_part, parts_for, reduce_parts
from .stream import Summary

SUFFIXES = (".mcap", ".db3")


@dataclass
class Result:
    """What became of one recording: its summary, or why there is none."""

    bag: Path
    name: str  # its outputs' folder, relative to the output folder
    summary: Summary | LeggedSummary | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.summary is not None and self.summary.messages > 0


def find_recordings(paths: list[Path]) -> list[tuple[Path, str]]:
    """The recordings under ``paths``, recursively: rosbag2 folders (with a metadata.yaml),
    and .mcap and .db3 files outside them (a bare .db3 is a recording of its own). Hidden
    folders and rbd_ros's own output folders are skipped. Each with the name of its outputs'
    folder: its path below the folder given, without the file suffix."""
    found: list[tuple[Path, str]] = []

    def name(p: Path, root: Path) -> str:
        rel = p.relative_to(root) if p != root else Path(p.name)
        return str(rel.with_suffix("") if rel.suffix in SUFFIXES else rel)

    def walk(folder: Path, root: Path) -> None:
        if (folder / "metadata.yaml").exists():
            found.append((folder, name(folder, root)))
            return
        if (folder / MANIFEST).exists():  # the outputs of an earlier analysis
            return
        for p in sorted(folder.iterdir()):
            if p.name.startswith("."):
                continue
            if p.is_dir():
                walk(p, root)
            elif p.suffix in SUFFIXES:
                found.append((p, name(p, root)))

    for path in paths:
        if not path.exists():
            raise BagError(f"cannot read {path}: it does not exist")
        if path.is_dir():
            walk(path, path)
        else:
            found.append((path, path.stem))
    if not found:
        raise BagError(f"no recording found under {', '.join(map(str, paths))} (looked for "
                       "rosbag2 folders with a metadata.yaml, and .mcap and .db3 files)")
    names = [n for _, n in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise BagError(f"recordings with the same name would share an output folder: {twice} "
                       "(give their parent folder instead)")
    return found


def _analyse(bag: Path, name: str, out: Path, opts: AnalyzeOptions | LeggedOptions,
             *parts: Part) -> Result:
    """One recording into ``out`` (an arm's reduced from its ``parts`` if it was cut), its
    failure kept as its result (run in a worker)."""
    _started(name, -1)
    try:
        with _big_arrays():
            if isinstance(opts, LeggedOptions):
                return Result(bag, name, analyze_legged([bag], out, opts))
            return Result(bag, name, reduce_parts([bag], out, opts, list(parts)) if parts
                          else analyze([bag], out, opts))
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:  # any failure is this recording's, said with its name
        return Result(bag, name, error=_one_line(e))


def _one_line(e: BaseException) -> str:
    text = str(e) if isinstance(e, (ValueError, RuntimeError, OSError)) else \
        f"{type(e).__name__}: {e}"
    return text.splitlines()[0] if text else type(e).__name__


def _part(bag: Path, name: str, folder: Path, opts: AnalyzeOptions, k: int, parts: int) -> Part:
    """Part ``k`` of a recording cut in ``parts`` (a Dask task)."""
    _started(name, k)
    with _big_arrays():
        return analyze_part([bag], folder, opts, k, parts)


@contextlib.contextmanager
def _big_arrays() -> Iterator[None]:
    """A Dask nanny starts its worker with ``MALLOC_TRIM_THRESHOLD_=65536``, which also fixes
    glibc's mmap threshold at 128 KB: every chunk-sized array is then mapped fresh and
    page-faulted in, about 20 % of the analysis' time (measured against ``--no-nanny``). For
    the task's length, glibc's own limits for large blocks (32 MB), then the nanny's again."""
    trim = os.environ.get("MALLOC_TRIM_THRESHOLD_")
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        libc = None
    if trim is None or libc is None:
        yield
        return
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
    libc.mallopt(M_TRIM_THRESHOLD, 64 << 20)
    try:
        yield
    finally:
        libc.mallopt(M_MMAP_THRESHOLD, 128 << 10)
        libc.mallopt(M_TRIM_THRESHOLD, int(trim))


EVENT = "rbd-task"  # Dask event: a task of ours started, where


def _started(name: str, part: int) -> None:
    """Tell the client that this task starts on this worker: a second start of the same task
    is a rerun, after the worker that had it was lost."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):  # not on a Dask worker
        return
    worker.log_event(EVENT, {"name": name, "part": part, "worker": worker.address})


def _child(conn: Connection, bag: Path, name: str, out: Path,
           opts: AnalyzeOptions | LeggedOptions) -> None:
    # SIGTERM (the parent stopping everything) unwinds like Ctrl-C: the half-written outputs
    # are removed on the way out
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        conn.send(_analyse(bag, name, out, opts))
    except KeyboardInterrupt:
        pass
    finally:
        conn.close()


@contextlib.contextmanager
def _ctrl_c_after() -> Iterator[None]:
    """A Ctrl-C during the block is raised at its end: one in the middle of starting a process
    would leave it half-fed, to die with a traceback of its own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    old = signal.signal(signal.SIGINT, lambda sig, frame: caught.append(sig))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if caught:
        raise KeyboardInterrupt


def _died(code: int | None) -> str:
    if code is not None and code < 0:
        how = signal.Signals(-code).name
        hint = " (the out-of-memory killer?)" if -code == signal.SIGKILL else ""
        return f"its worker process was killed by {how}{hint}"
    return f"its worker process ended with status {code} without an answer"


def run_local(work: list[tuple[Path, str]], out_dir: Path, opts: AnalyzeOptions | LeggedOptions,
              jobs: int, report: Callable[[Result], None]) -> list[Result]:
    """Each recording in a process of its own, ``jobs`` at a time. A process that dies (the
    out-of-memory killer) fails its recording, which is tried once more on its own; the
    others go on. Ctrl-C stops every process at once."""
    ctx = multiprocessing.get_context("spawn")
    todo = deque((k, 0) for k in range(len(work)))
    results: dict[int, Result] = {}
    running: dict[Any, tuple[int, int, Connection]] = {}  # process -> (index, tries, pipe)
    retry: deque[tuple[int, int]] = deque()  # run alone, after the others
    try:
        while todo or retry or running:
            while (todo and len(running) < jobs) or (retry and not running and not todo):
                k, tries = todo.popleft() if todo else retry.popleft()
                bag, name = work[k]
                here, there = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(there, bag, name, out_dir / name, opts),
                                   daemon=True)
                with _ctrl_c_after():
                    proc.start()
                    running[proc] = (k, tries, here)
                there.close()
            ready = wait([p.sentinel for p in running] + [c for _, _, c in running.values()])
            for proc, (k, tries, conn) in list(running.items()):
                if conn not in ready and proc.sentinel not in ready:
                    continue
                answer = None
                try:
                    if conn.poll():
                        answer = conn.recv()
                except (EOFError, OSError):
                    pass
                if answer is None and proc.is_alive():
                    continue  # the pipe closed first: its exit status comes next
                proc.join()
                conn.close()
                del running[proc]
                if answer is not None:
                    results[k] = answer
                elif tries == 0:
                    print(f"warning: {work[k][0]}: {_died(proc.exitcode)}; trying it once more, "
                          "alone", file=sys.stderr)
                    retry.append((k, 1))
                    continue
                else:
                    results[k] = Result(work[k][0], work[k][1],
                                        error=f"{_died(proc.exitcode)}, twice")
                report(results[k])
    finally:
        for proc in running:
            proc.terminate()
        deadline = time.monotonic() + 1.5
        for proc in running:
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
    return [results[k] for k in range(len(work))]


def run_dask(work: list[tuple[Path, str]], out_dir: Path, opts: AnalyzeOptions, scheduler: str,
             timeout: float, report: Callable[[Result], None],
             log: Callable[[str], None] = print) -> list[Result]:
    """Each recording a task on the Dask cluster at ``scheduler`` (its workers must see the
    same paths: they are sent resolved); a long one cut by recorded time into a task per
    worker and reduced by one more (:func:`parts_for`), its outputs those of one process.
    ``timeout``: how long to wait for the scheduler, for a first worker, and for a worker to
    come back when none is left. Parts done and tasks rerun (their worker lost) are logged."""
    import shutil

    client = _connected(scheduler, timeout)
    with client:
        futures, pending, scratch = _submitted(client, work, out_dir, opts, log)
        try:
            results = _collected(client, work, futures, pending, timeout, report, log)
        finally:
            for f in futures:
                f.cancel()
            for folder in scratch:  # a failed part's leftovers
                shutil.rmtree(folder, ignore_errors=True)
    return [results[k] for k in range(len(work))]


def _connected(scheduler: str, timeout: float) -> Any:
    """A client of the Dask scheduler at ``scheduler`` that has a worker (BagError if none
    within ``timeout`` s)."""
    from distributed import Client

    try:
        client = Client(scheduler, timeout=timeout)  # type: ignore[no-untyped-call]
    except Exception as e:  # distributed raises OSError, TimeoutError, ValueError, ...
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise BagError(f"cannot connect to the Dask scheduler at '{scheduler}' within "
                       f"{timeout:g} s: {why} (an address looks like tcp://host:8786)") from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except Exception:
        client.close()  # type: ignore[no-untyped-call]
        raise BagError(f"the Dask scheduler at '{scheduler}' has no worker (waited "
                       f"{timeout:g} s): start one with `dask worker {scheduler}`") from None
    return client


def _submitted(client: Any, work: list[tuple[Path, str]], out_dir: Path, opts: AnalyzeOptions,
               log: Callable[[str], None]
               ) -> tuple[list[Any], list[tuple[str, Any]], list[Path]]:
    """Each recording's task (a long one's parts first): the recordings' futures, the parts'
    with what to say when each is done, and the parts' scratch folders."""
    import uuid

    workers = len(client.scheduler_info().get("workers", {}))
    futures: list[Any] = []
    pending: list[tuple[str, Any]] = []
    scratch: list[Path] = []
    for bag, name in work:
        bag, out = bag.resolve(), (out_dir / name).resolve()
        parts = parts_for([bag], opts, workers)
        cut: list[Any] = []
        if parts > 1:
            scratch.append(out / f".rbd-parts-{uuid.uuid4().hex[:8]}")
            cut = [client.submit(_part, bag, name, scratch[-1] / str(k), opts, k, parts,
                                 pure=False) for k in range(parts)]
            pending += [(f"{name}: part {k + 1} of {parts} done", f) for k, f in enumerate(cut)]
            log(f"{name}: cut into {parts} parts by recorded time, one task each")
        futures.append(client.submit(_analyse, bag, name, out, opts, *cut, pure=False))
    return futures, pending, scratch


def _collected(client: Any, work: list[tuple[Path, str]], futures: list[Any],
               pending: list[tuple[str, Any]], timeout: float,
               report: Callable[[Result], None], log: Callable[[str], None]) -> dict[int, Result]:
    """Each recording's result as its task ends (reported), the parts done and the tasks
    rerun logged; the recordings left failed once no worker has been there for ``timeout``."""
    starts: dict[tuple[str, int], list[str]] = {}
    events = 0
    results: dict[int, Result] = {}
    alone_since: float | None = None
    while len(results) < len(work):
        for said, part in [p for p in pending if p[1].done()]:
            pending.remove((said, part))
            if part.status == "finished":
                log(said)
        new = client.get_events(EVENT)[events:]
        events += len(new)
        for _, ev in new:
            where = starts.setdefault((ev["name"], ev["part"]), [])
            where.append(ev["worker"])
            if len(where) > 1:
                task = ev["name"] + (f" part {ev['part'] + 1}" if ev["part"] >= 0 else "")
                log(f"warning: {task}: its worker {where[-2]} was lost; the task runs "
                    f"again on {where[-1]}")
        for k, f in enumerate(futures):
            if k not in results and f.done():
                try:
                    results[k] = f.result()
                except Exception as e:  # the task itself failed (a worker lost too often)
                    results[k] = Result(work[k][0], work[k][1],
                                        error=f"the Dask task failed: {e}".splitlines()[0])
                report(results[k])
        alone_since = None if client.scheduler_info().get("workers", {}) else \
            (alone_since or time.monotonic())
        if len(results) < len(work) and alone_since is not None and \
                time.monotonic() - alone_since > timeout:
            for k in range(len(work)):
                if k not in results:
                    results[k] = Result(work[k][0], work[k][1], error=(
                        f"no Dask worker left for {timeout:g} s: not analysed"))
                    report(results[k])
        if len(results) < len(work):
            time.sleep(0.2)
    return results


def status_table(results: list[Result]) -> str:
    """One line per recording: ok with its joint states and its headline (an arm's worst rms
    residual, a legged robot's answered states), or failed."""
    width = max(12, *(len(r.name) for r in results))
    lines = [f"{'recording':<{width}}  {'status':<7} {'joint states':>12}  result"]
    for r in results:
        s = r.summary
        if s is not None and s.messages:
            lines.append(f"{r.name:<{width}}  {'ok':<7} {s.messages:12,d}  {s.headline()}")
        else:
            why = r.error or "no joint state could be analysed"
            lines.append(f"{r.name:<{width}}  {'failed':<7} {'':>12}  {why}")
    return "\n".join(lines)


def analyze_fleet(work: list[tuple[Path, str]], out_dir: Path,
                  opts: AnalyzeOptions | LeggedOptions, jobs: int | None = None,
                  scheduler: str | None = None, timeout: float = 10.0,
                  log: Callable[[str], None] = lambda s: print(s, file=sys.stderr)
                  ) -> list[Result]:
    """Recordings (``find_recordings``) each into ``out_dir / <its name>``, on this machine's
    cores (``jobs`` processes, default all) or on a Dask cluster; progress through ``log``."""
    log(f"found {len(work)} recording{'s' * (len(work) > 1)}: "
        + ", ".join(str(b) for b, _ in work))
    start, done = time.monotonic(), [0]

    def report(r: Result) -> None:
        done[0] += 1
        what = f"ok, {r.summary.messages:,} joint states" if r.ok and r.summary else \
            f"failed: {r.error or 'no joint state could be analysed'}"
        log(f"[{done[0]}/{len(work)}, {time.monotonic() - start:.0f} s] {r.name}: {what}")

    if isinstance(opts, AnalyzeOptions):
        opts = replace(opts, progress=False)
        if scheduler:
            return run_dask(work, out_dir, opts, scheduler, timeout, report, log)
    elif scheduler:
        raise BagError("--scheduler: for fixed-base robots' recordings; legged ones run on "
                       "this machine's cores (--jobs)")
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(work)))
    return run_local(work, out_dir, opts, jobs, report)
