"""The documentation's pictures, drawn from real runs (CI runs this, so they match the code):

    .venv/bin/python scripts/pictures.py [OUT_DIR]     (default: doc/images)

* ``demo_tracking.png``: the live demo's tracking errors, PD alone and with the dynamics node's
  feed-forward (``rbd-ros demo --plot``)."""

from __future__ import annotations

import sys
from pathlib import Path

from rbd_ros.cli import main

ROOT = Path(__file__).resolve().parents[1]


def draw(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    return main(["demo", "--plot", str(out / "demo_tracking.png")])


if __name__ == "__main__":
    sys.exit(draw(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "doc" / "images"))
