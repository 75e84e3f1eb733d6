"""The output file that bypasses the page cache: every byte arrives, whatever the sizes of the
writes and whatever the file system (tmpfs takes no direct I/O: the same class writes normally)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rbd_ros.bag.sink import Sink

BLOCK = Sink.BLOCK
SIZES = [[], [1], [4096], [BLOCK], [BLOCK + 1], [3, 5000, BLOCK + 4093, 17, 2 * BLOCK, 1]]


@pytest.mark.parametrize("sizes", SIZES, ids=lambda s: "+".join(map(str, s)) or "empty")
@pytest.mark.parametrize("where", ["tmp_path", "/dev/shm"])
def test_every_byte_arrives(sizes: list[int], where: str, tmp_path: Path) -> None:
    folder = tmp_path if where == "tmp_path" else Path(where)
    if not folder.is_dir():
        pytest.skip(f"{where} is not here")
    rng = np.random.default_rng(len(sizes))
    parts = [rng.integers(0, 256, n, dtype=np.uint8) for n in sizes]
    path = folder / f"sink-test-{tmp_path.name}.bin"
    try:
        with Sink(path) as f:
            for p in parts:
                assert f.write(p if len(p) % 2 else p.tobytes()) == len(p)  # arrays or bytes
            assert f.tell() == sum(sizes)
        assert path.read_bytes() == b"".join(p.tobytes() for p in parts)
    finally:
        path.unlink(missing_ok=True)


def test_a_failed_write_is_raised(tmp_path: Path) -> None:
    """A write that fails (here: the file's descriptor closed under it) is not lost in the
    I/O thread: the next write or the close raises it."""
    f = Sink(tmp_path / "x.bin")
    import os

    os.close(f.fd)
    f.fd = os.open(tmp_path / "x.bin", os.O_RDONLY)  # writes now fail with EBADF
    with pytest.raises(OSError):
        try:
            f.write(bytes(3 * BLOCK))
        finally:
            f.close()
    assert f.closed
