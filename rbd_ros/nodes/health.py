"""What a node counts for ``/diagnostics``: its inputs' rate and delay, its own time per
state, and its warnings (a refused message, a dropped input), over the last second."""

from __future__ import annotations

import time

DIAGNOSTICS_S = 1.0  # how often /diagnostics is published


class Health:
    """Counters of one window (``DIAGNOSTICS_S``), read and reset by ``window``."""

    def __init__(self) -> None:
        self.states = 0  # joint states received
        self.answered = 0  # states answered with outputs
        self.busy_ns = 0  # time spent answering them
        self.busy_max_ns = 0
        self.delay_ns: int | None = None  # the last state's arrival (wall clock) minus its stamp
        self.warnings = 0
        self.last_warning = ""
        self.warnings_total = 0

    def received(self, stamp_ns: int) -> None:
        self.states += 1
        self.delay_ns = time.time_ns() - stamp_ns

    def answer(self, took_ns: int) -> None:
        self.answered += 1
        self.busy_ns += took_ns
        self.busy_max_ns = max(self.busy_max_ns, took_ns)

    def warned(self, text: str) -> None:
        self.warnings += 1
        self.warnings_total += 1
        self.last_warning = text

    def window(self) -> dict[str, str]:
        """The window's figures as diagnostic values; a new window starts."""
        mean = self.busy_ns / self.answered * 1e-6 if self.answered else 0.0
        delay = "n/a" if self.delay_ns is None else f"{self.delay_ns * 1e-6:.3f}"
        out = {"joint_states rate (Hz)": f"{self.states / DIAGNOSTICS_S:.1f}",
               "answered rate (Hz)": f"{self.answered / DIAGNOSTICS_S:.1f}",
               "answer time mean / max (ms)": f"{mean:.3f} / {self.busy_max_ns * 1e-6:.3f}",
               "last joint_states delay, arrival - stamp (ms)": delay,
               "warnings": str(self.warnings), "warnings since start": str(self.warnings_total),
               "last warning": self.last_warning}
        self.states = self.answered = self.busy_ns = self.busy_max_ns = self.warnings = 0
        return out
