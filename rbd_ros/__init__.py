"""rbd_ros: live rigid-body dynamics for ROS 2.

Importing it points numba at a writable cache when the package folder is read-only (see
:mod:`rbd_ros.numba_cache`)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

__version__ = "0.1.0"

PACKAGE = Path(__file__).resolve().parent


def _writable(folder: Path) -> bool:
    """Whether numba can keep a cache in ``folder`` (it tries the same way: create the folder,
    then a file in it)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


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


def use_writable_cache() -> None:
    """Point numba at a writable cache if the package folder is not one (see
    :mod:`rbd_ros.numba_cache`)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    folder = cache_folder()
    if folder is None:
        return
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    config = sys.modules.get("numba.core.config")
    if config is not None:  # numba already imported: it reads the setting at each lookup
        config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]


use_writable_cache()  # before any kernel is looked up
