"""Where the project's own ROS processes talk (the demo, the benchmarks, the test suite): on this
machine only, in a domain of their own, never the one the user's shell is set up for (a robot's).

The domain is picked from a range by process id (so runs side by side do not hear each other),
within 0-101, the IDs whose ports no other program on Linux is handed; ``RBD_TEST_DOMAIN``
sets it instead.
"""

from __future__ import annotations

import os

#: (first, count) of each user's range
TESTS, DEMO, BENCH = (10, 70), (80, 10), (90, 10)


def isolate(first: int, count: int, run: int | None = None, slot: int = 0) -> int:
    """Set ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and ``ROS_DOMAIN_ID`` for this process
    and those it starts; returns the domain. ``run`` (this process's id by default) picks it;
    processes of one run side by side (pytest-xdist's workers) pass the run's id and each its
    own ``slot``, and get neighbouring domains."""
    shell = os.environ.get("ROS_DOMAIN_ID", "0").strip() or "0"
    chosen = os.environ.get("RBD_TEST_DOMAIN", "").strip()
    if chosen:
        domain = int(chosen) + slot
        if not 0 <= domain <= 232:
            raise ValueError(f"RBD_TEST_DOMAIN={chosen}: a ROS domain is 0-232 (0-101 advised)")
    else:
        domain = first + (os.getpid() if run is None else run + slot) % count
        if str(domain) == shell:  # half the range away: clear of the run's other slots
            domain = first + (domain - first + max(1, count // 2)) % count
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    return domain
