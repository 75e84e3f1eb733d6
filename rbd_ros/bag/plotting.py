"""matplotlib for the pictures every tool draws (analyze's and identify's PNGs, the demo's):
loaded lazily, drawing without a display."""

from __future__ import annotations

from typing import Any


def pyplot() -> Any:
    """matplotlib's pyplot, drawing without a display (Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def preload_pyplot() -> None:
    """Import pyplot on a thread meanwhile (~0.3 s, mostly while the other work holds no
    GIL), for the PNGs at the end."""
    import threading

    threading.Thread(target=pyplot, name="rbd-pyplot", daemon=True).start()
