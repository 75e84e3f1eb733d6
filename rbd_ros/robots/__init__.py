"""The bundled robots, written for rbd_ros: a 7-joint arm and a 12-joint quadruped."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
ARM = HERE / "arm7.urdf"
QUADRUPED = HERE / "quadruped.urdf"

