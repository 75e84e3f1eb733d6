"""Many recordings: found in nested folders, analysed in parallel processes or on a real Dask
cluster; a bad recording or a worker that dies is named and the others kept; Ctrl-C stops all."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from armrec import Rec, write_mcap, write_rosbags
from rosbags.rosbag2 import StoragePlugin

from rbd_ros.bag.analyze import AnalyzeOptions, analyze
from rbd_ros.bag.errors import BagError
from rbd_ros.bag.fleet import analyze_fleet, find_recordings
from rbd_ros.bag.stream import Summary
from rbd_ros.robots import ARM

PATIENCE_S = 300.0  # s: what only a broken command takes (testkit/rosutil.py's)


def _interruptible() -> None:
    """Ctrl-C reaches the command even when the suite runs in a background job (whose SIGINT
    the shell set to ignored, and Python keeps it so)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(*args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "rbd_ros.app.cli", "analyze", *args, "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            preexec_fn=_interruptible)


def _gravity(folder: Path) -> np.ndarray:
    table = pq.read_table(folder / "analysis.parquet").to_pydict()
    return np.column_stack([table[f"gravity_joint{k}"] for k in range(1, 8)])


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, recording: Rec) -> Path:
    """fleet/robot_a/day1/rec (rosbag2 folder), fleet/robot_a/day2/rec (the same name one
    level down), fleet/robot_b/run.mcap, fleet/bare/old.db3 (a bare .db3), and
    fleet/broken/garbage.db3 (not a database)."""
    root = tmp_path_factory.mktemp("fleet")
    short = {k: v[:600] for k, v in recording.items()}
    for day in ("day1", "day2"):
        write_rosbags(root / "robot_a" / day / "rec", short, StoragePlugin.SQLITE3)
    (root / "robot_b").mkdir()
    write_mcap(root / "robot_b" / "run.mcap", short)
    (root / "bare").mkdir()
    db3 = next((root / "robot_a" / "day1" / "rec").glob("*.db3"))
    shutil.copy(db3, root / "bare" / "old.db3")
    (root / "broken").mkdir()
    (root / "broken" / "garbage.db3").write_bytes(b"not a database at all" * 100)
    return root


def test_recordings_are_found_recursively_and_outputs_are_kept_per_recording(
        fleet: Path, tmp_path: Path) -> None:
    found = find_recordings([fleet])
    assert [name for _, name in found] == ["bare/old", "broken/garbage", "robot_a/day1/rec",
                                           "robot_a/day2/rec", "robot_b/run"]
    out = tmp_path / "out"
    r = _cli(str(fleet), "--urdf", str(ARM), "--out", str(out), "--jobs", "2")
    stdout, stderr = r.communicate(timeout=300)
    assert r.returncode == 1, stderr  # one recording failed
    assert "found 5 recordings" in stderr
    table = stdout[stdout.index("recording"):]
    for name in ("bare/old", "robot_a/day1/rec", "robot_a/day2/rec", "robot_b/run"):
        assert any(line.startswith(name) and " ok " in line for line in table.splitlines())
    bad = next(line for line in table.splitlines() if line.startswith("broken/garbage"))
    assert "failed" in bad and "cannot read" in bad, bad
    assert "1 of 5 recordings failed: broken/garbage" in stderr
    single = tmp_path / "single"
    analyze([fleet / "robot_a" / "day1" / "rec"], single, AnalyzeOptions(urdf=ARM, progress=False))
    for name in ("bare/old", "robot_a/day1/rec", "robot_a/day2/rec", "robot_b/run"):
        np.testing.assert_array_equal(_gravity(out / name), _gravity(single))
    # an output folder inside the tree is not taken for recordings on the next run
    shutil.copytree(out / "robot_b", fleet / "robot_b" / "analysis")
    assert len(find_recordings([fleet])) == 5


def test_no_recording_found_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty" / "deeper").mkdir(parents=True)
    (tmp_path / "empty" / "notes.txt").write_text("no bags here")
    r = _cli(str(tmp_path / "empty"), "--out", str(tmp_path / "o"))
    _, stderr = r.communicate(timeout=PATIENCE_S)
    assert r.returncode == 2 and stderr.startswith("error: no recording found under"), stderr


def _workers(pid: int) -> list[int]:
    """The analysing processes of command ``pid`` (not multiprocessing's resource tracker)."""
    def analysing(child: int) -> bool:
        try:
            return b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:  # ended meanwhile
            return False

    try:
        children = [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    return [c for c in children if analysing(c)]


def _has_open(pid: int, path: Path) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(path))
                   for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


def test_a_worker_killed_fails_its_recording_alone(fleet: Path, recording: Rec,
                                                   tmp_path: Path) -> None:
    """The kernel's OOM killer, played by SIGKILL: every worker that opens robot_a/day1 dies.
    That recording is tried once more, then failed with the reason; the others finish.
    day1 is the recording forty times over, long enough to be seen open by this test's looks
    every 5 ms however late a loaded machine wakes it (600 states were read between two looks,
    now and then)."""
    for robot in ("robot_a", "robot_b"):
        shutil.copytree(fleet / robot, tmp_path / robot)
    target = tmp_path / "robot_a" / "day1" / "rec"
    shutil.rmtree(target)
    long = {k: np.concatenate([v] * 40) for k, v in recording.items()}
    long["t"] = recording["t"][0] + np.arange(len(long["t"])) * 1e-3
    write_rosbags(target, long, StoragePlugin.SQLITE3)
    out = tmp_path / "out"
    r = _cli(str(tmp_path / "robot_a"), str(tmp_path / "robot_b"), "--urdf", str(ARM), "--out",
             str(out), "--jobs", "2")
    killed: set[int] = set()
    while r.poll() is None:
        for w in _workers(r.pid):
            if w not in killed and _has_open(w, target):
                os.kill(w, signal.SIGKILL)
                killed.add(w)
        time.sleep(0.005)
    stdout, stderr = r.communicate(timeout=300)
    assert len(killed) == 2, (killed, stderr)
    assert r.returncode == 1
    assert "killed by SIGKILL (the out-of-memory killer?); trying it once more" in stderr
    line = next(x for x in stdout.splitlines() if x.startswith("day1/rec"))
    assert "failed" in line and "SIGKILL" in line and "twice" in line, line
    assert (out / "day2" / "rec" / "analysis.parquet").exists()
    assert (out / "run" / "analysis.parquet").exists()


def test_ctrl_c_stops_every_worker_at_once(recording: Rec, tmp_path: Path) -> None:
    """Twenty long recordings (each the arm's ten times over) on two workers, Ctrl-C once both
    work: the command ends interrupted with most of them not analysed, and its workers are
    gone."""
    long = {k: np.concatenate([v] * 10) for k, v in recording.items()}
    long["t"] = recording["t"][0] + np.arange(len(long["t"])) * 1e-3
    write_rosbags(tmp_path / "fleet" / "r00", long, StoragePlugin.SQLITE3)
    for k in range(1, 20):
        shutil.copytree(tmp_path / "fleet" / "r00", tmp_path / "fleet" / f"r{k:02d}")
    out = tmp_path / "out"
    r = _cli(str(tmp_path / "fleet"), "--urdf", str(ARM), "--out", str(out), "--jobs", "2")
    deadline = time.monotonic() + PATIENCE_S
    while len(_workers(r.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    workers = _workers(r.pid)
    assert len(workers) == 2
    r.send_signal(signal.SIGINT)  # to the command alone: its workers must still stop
    _, stderr = r.communicate(timeout=PATIENCE_S)
    assert r.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr
    done = list(out.rglob("analysis.parquet"))
    assert len(done) < 10, f"{len(done)} of 20 analysed after the interrupt"

    def running() -> list[int]:
        return [w for w in workers if Path(f"/proc/{w}").exists()
                and "zombie" not in Path(f"/proc/{w}/status").read_text()]

    while running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running()


def test_on_a_dask_cluster_with_relative_paths_and_its_errors(
        fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from distributed import LocalCluster

    work = find_recordings([fleet / "robot_a", fleet / "robot_b"])
    opts = AnalyzeOptions(urdf=ARM, progress=False, outputs=("parquet",))
    serial = analyze([fleet / "robot_a" / "day1" / "rec"], tmp_path / "serial", opts)
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",  # type: ignore[no-untyped-call]
                      dashboard_address="127.0.0.1:0", processes=True) as cluster:
        # the workers started in this folder; the paths given are relative to another
        monkeypatch.chdir(fleet.parent)
        rel = [(b.relative_to(fleet.parent), n) for b, n in work]
        said: list[str] = []
        results = analyze_fleet(rel, Path(os.path.relpath(tmp_path / "dask")), opts,
                                scheduler=cluster.scheduler_address, log=said.append)
    assert [r.summary.messages for r in results if r.summary] == [serial.messages] * 3
    third = results[2].summary
    assert isinstance(third, Summary)
    np.testing.assert_allclose(third.rms(), serial.rms())
    assert (tmp_path / "dask" / "day2" / "rec" / "analysis.parquet").exists()
    assert sum("ok, 600 joint states" in x for x in said) == 3, said
    # a scheduler that is not there, a malformed address, a cluster with no worker: one line
    for address, why in (("tcp://127.0.0.1:9", "cannot connect to the Dask scheduler"),
                         ("not an address", "cannot connect to the Dask scheduler")):
        with pytest.raises(BagError, match=why) as e:
            analyze_fleet(work, tmp_path / "x", opts, scheduler=address, timeout=2)
        assert "\n" not in str(e.value)
    empty = LocalCluster(n_workers=0, host="127.0.0.1",  # type: ignore[no-untyped-call]
                         dashboard_address="127.0.0.1:0")
    with empty, pytest.raises(BagError, match="has no worker"):
        analyze_fleet(work, tmp_path / "x", opts, scheduler=empty.scheduler_address, timeout=2)
