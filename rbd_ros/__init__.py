"""rbd_ros: live rigid-body dynamics for ROS 2.

Importing it points numba at a writable cache when the package folder is read-only (see
:mod:`rbd_ros.runtime.cache_dir`)."""

from __future__ import annotations

from .runtime.cache_dir import use_writable_cache

__version__ = "0.1.0"

use_writable_cache()  # before any kernel is looked up
