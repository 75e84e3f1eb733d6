"""``rbd-ros analyze`` on a real Dask cluster (``dask scheduler`` and ``dask worker`` processes
on this machine, loopback only): one long recording on 1 and on 2 workers (cut into parts by
recorded time on 2) beside one process, and a fleet of four recordings on Dask beside the local
process pool. Outputs are checked byte for byte against the one-process run."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rbd_ros.bag.analyze import AnalyzeOptions, analyze
from rbd_ros.bag.fleet import analyze_fleet
from rbd_ros.bag.synthetic import generate

ROOT = Path(__file__).resolve().parents[1]
DASK = str(Path(sys.executable).with_name("dask"))
PORT = 28786


@contextmanager
def cluster(workers: int) -> Iterator[str]:
    """A scheduler and ``workers`` single-threaded worker processes, as a user starts them."""
    address = f"tcp://127.0.0.1:{PORT}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(PORT),
                               "--no-dashboard"], **quiet)]  # type: ignore[call-overload]
    try:
        time.sleep(2.0)
        procs += [subprocess.Popen([DASK, "worker", address, "--nthreads", "1", "--host",
                                    "127.0.0.1", "--no-dashboard"], **quiet)  # type: ignore[call-overload]
                  for _ in range(workers)]
        from distributed import Client

        with Client(address, timeout=30) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(workers, timeout=60)
            # the kernels loaded in each worker, as a worker that has run before has them
            client.run(lambda: importlib.import_module("rbd_ros.runtime.kernels")
                       .load_node_kernels(False))
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def same(a: Path, b: Path) -> bool:
    return all((a / f).read_bytes() == (b / f).read_bytes()
               for f in ("analysis.parquet", "analysis.mcap"))


def dask_scaling() -> None:
    opts = AnalyzeOptions(progress=False)
    quiet: list[str] = []
    subprocess.run([sys.executable, "-m", "rbd_ros.app.numba_cache"], check=True, cwd=ROOT,
                   capture_output=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        print("\n## one long recording (7-joint arm, 1 kHz; default outputs) on a Dask cluster "
              "of `dask worker` processes on this 2-core machine")
        print(f"{'recording':>10} {'one process (s)':>16} {'Dask, 1 worker':>15} "
              f"{'Dask, 2 workers':>16} {'2 vs 1 worker':>14} {'outputs identical':>18}")
        for minutes in (30, 60):
            bag = tmp / f"rec{minutes}"
            generate(bag, minutes * 60_000)
            os.sync()
            t = time.perf_counter()
            analyze([bag], tmp / "one", opts)
            one = time.perf_counter() - t
            times, identical = [], True
            for workers in (1, 2):
                with cluster(workers) as address:
                    out = tmp / f"dask{workers}"
                    t = time.perf_counter()
                    [r] = analyze_fleet([(bag, "rec")], out, opts, scheduler=address,
                                        log=quiet.append)
                    times.append(time.perf_counter() - t)
                    assert r.ok, r.error
                    identical &= same(tmp / "one", out / "rec")
                    shutil.rmtree(out)
            shutil.rmtree(tmp / "one")
            print(f"{minutes:>7} min {one:16.1f} {times[0]:15.1f} {times[1]:16.1f} "
                  f"{times[0] / times[1]:13.2f}x {'yes' if identical else 'NO':>18}")
            shutil.rmtree(bag)

        print("\n## a fleet of four 5-minute recordings: Dask (2 workers) vs the local process "
              "pool (--jobs 2)")
        fleet = [(tmp / "fleet" / f"robot{k}", f"robot{k}") for k in range(4)]
        for bag, _ in fleet:
            generate(bag, 300_000)
        os.sync()
        t = time.perf_counter()
        analyze_fleet(fleet, tmp / "local", opts, jobs=2, log=quiet.append)
        local = time.perf_counter() - t
        with cluster(2) as address:
            t = time.perf_counter()
            results = analyze_fleet(fleet, tmp / "dask", opts, scheduler=address,
                                    log=quiet.append)
            on_dask = time.perf_counter() - t
        assert all(r.ok for r in results)
        identical = all(same(tmp / "local" / n, tmp / "dask" / n) for _, n in fleet)
        print(f"{'local pool (s)':>15} {'Dask (s)':>9} {'Dask / local':>13} "
              f"{'outputs identical':>18}")
        print(f"{local:15.1f} {on_dask:9.1f} {on_dask / local:12.2f}x "
              f"{'yes' if identical else 'NO':>18}")


if __name__ == "__main__":
    dask_scaling()
