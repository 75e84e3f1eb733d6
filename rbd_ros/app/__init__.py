"""The commands: ``rbd-ros`` (:mod:`.cli`), its live demo, and the kernels compiled ahead
(``python -m rbd_ros.app.numba_cache``)."""
