"""``rbd-ros identify`` on 10- and 60-minute recordings of the bundled arm at 1 kHz (made up:
sinusoidal joints and efforts, so only the times mean anything), with the time of each stage.
Issue 13's bar: an hour of 1 kHz recording identified in under a minute on two cores."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from rbd_ros.bag.synthetic import generate
from rbd_ros.identify.run import IdentifyOptions, identify


def main() -> int:
    minutes = [int(m) for m in sys.argv[1:]] or [10, 60]
    print(f"cores: {os.cpu_count()}")
    print(f"{'recording':<12} {'states':>10} {'total s':>8}   stages (s)")
    with tempfile.TemporaryDirectory() as tmp:
        for m in minutes:
            bag = Path(tmp) / f"rec{m}"
            generate(bag, m * 60_000)
            t = time.perf_counter()
            report = identify([bag], Path(tmp) / f"out{m}", IdentifyOptions())
            total = time.perf_counter() - t
            stages = ", ".join(f"{k} {v:.1f}" for k, v in report.seconds.items())
            print(f"{m:>4} min     {m * 60_000:>10} {total:8.1f}   {stages}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
