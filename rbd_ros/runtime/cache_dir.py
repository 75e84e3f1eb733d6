"""Where numba keeps rbd_ros's compiled kernels (:mod:`rbd_ros.app.numba_cache` fills the cache).

Where the package folder cannot be written when rbd_ros runs (an install owned by another user,
a read-only container image), the cache is put in ``$XDG_CACHE_HOME/rbd_ros/numba`` (by default
``~/.cache``), or failing that in the temporary folder: compiled there once, at the first start.
``NUMBA_CACHE_DIR``, when set, is left alone. (That choice is made when ``rbd_ros`` is imported,
before any kernel is looked up: :func:`use_writable_cache`; it creates no folder, numba does
when it first saves.)
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # rbd_ros/


def _writable(folder: Path) -> bool:
    """Whether numba could keep a cache in ``folder``: the nearest of it and its parents that
    exists is a folder this process may write in (nothing is created to find out)."""
    for path in (folder, *folder.parents):
        if path.exists():
            return path.is_dir() and os.access(path, os.W_OK | os.X_OK)
    return False


def cache_folder(package: Path = PACKAGE) -> Path | None:
    """None when numba can cache beside the modules of ``package``, else the writable folder
    to use instead."""
    if _writable(package / "dynamics" / "__pycache__"):
        return None
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for folder in (Path(home) / "rbd_ros" / "numba",
                   Path(tempfile.gettempdir()) / f"rbd_ros-numba-{os.getuid()}"):
        if _writable(folder):
            return folder
    return None


def drop_stale_kernels(package: Path = PACKAGE) -> bool:
    """Delete the kernels cached beside the modules of ``package`` when a source file of it is
    newer than any of them; True if it did.

    numba keys a kernel's cache by the time stamp of the file that defines it, but the machine
    code it keeps holds the helpers the kernel calls from other files (ABA's, RNEA's joint
    motion from ``rnea.py``): after an edit of ``rnea.py`` in a developer's tree, or a ``colcon
    build --symlink-install``'s, it would load the old joint motion into ABA. An
    install writes its sources before it fills the cache, so its cache stays. (~1 ms.)"""
    sources = [f.stat().st_mtime for f in package.rglob("*.py")]
    cached = list(package.rglob("__pycache__/*.nb[ic]"))
    try:
        stale = bool(sources and cached) and min(f.stat().st_mtime for f in cached) < max(sources)
    except OSError:  # another process dropping them too
        return False
    for f in cached if stale else []:
        with contextlib.suppress(OSError):
            f.unlink()
    return stale


def use_writable_cache() -> None:
    """Point numba at a writable cache if the package folder is not one (and drop stale
    kernels there if it is: :func:`drop_stale_kernels`)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    folder = cache_folder()
    if folder is None:
        drop_stale_kernels()
        return
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    config = sys.modules.get("numba.core.config")
    if config is not None:  # numba already imported: it reads the setting at each lookup
        config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]
