"""Outputs that appear together, complete, or not at all: a run writes them aside, in a folder
of its own inside the output folder, and moves them into place once all are written. A
manifest names the files of the last complete run, so that the next one removes those it does
not write again: an interrupted or failed run leaves the previous complete set, never a mix."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import OutputError

MANIFEST = ".rbd-outputs"  # the files of the last complete analysis in an output folder


@contextmanager
def output_set(out_dir: Path, manifest: str = MANIFEST) -> Iterator[Path]:
    """The folder to write a run's outputs into; they replace the last complete set in
    ``out_dir`` (the files its ``manifest`` names) when the block ends without an error."""
    out_dir.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=".rbd-partial-", dir=out_dir))
    try:
        yield partial
        _move_into_place(partial, out_dir, manifest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _move_into_place(partial: Path, out_dir: Path, manifest_name: str) -> None:
    new = sorted(p.name for p in partial.iterdir())
    manifest = out_dir / manifest_name
    old = manifest.read_text().split("\n") if manifest.exists() else []
    manifest.unlink(missing_ok=True)  # from here until the new one: no complete set claimed
    for name in set(old) - set(new) - {""}:
        (out_dir / name).unlink(missing_ok=True)
    for name in new:
        try:
            os.replace(partial / name, out_dir / name)
        except OSError as e:
            raise OutputError(f"writing the outputs failed: moving {name} into {out_dir}: "
                              f"{e.strerror}") from None
    tmp = out_dir / f"{manifest_name}.tmp"
    tmp.write_text("\n".join(new))
    os.replace(tmp, manifest)


@contextmanager
def one_numba_thread() -> Iterator[None]:
    """numba's parallel kernels on one thread within: a pass reads, computes and writes at
    once, so the cores are taken."""
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(threads)
