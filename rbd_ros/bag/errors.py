"""The offline tools' errors, and the extras they need: importable without any of them."""

from __future__ import annotations

#: Python packages the offline tools load when used (not the core, `info` or the nodes) ->
#: how to install them. Those with a rosdep key are in package.xml; the others have none.
EXTRAS = {
    "rosbags": "pip install rosbags",
    "ruamel": "pip install ruamel.yaml (rosdep key python3-ruamel.yaml)",
    "matplotlib": "pip install matplotlib (rosdep key python3-matplotlib)",
    "scipy": "pip install scipy (rosdep key python3-scipy)",
    "mcap": "pip install mcap",
    "zstandard": "pip install zstandard",
    "pyarrow": "pip install pyarrow",
    "dask": "pip install 'dask[distributed]'",
    "distributed": "pip install 'dask[distributed]'",
}


class BagError(ValueError):
    """A recording that cannot be analysed; the text says why and what to change."""


class OutputError(RuntimeError):
    """Writing the outputs failed (a full disk, a folder that cannot be written)."""


def missing_extra(e: ModuleNotFoundError) -> str | None:
    """What to tell the user when an offline tool's extra is not installed (None: not one)."""
    top = (e.name or "").split(".")[0]
    if top not in EXTRAS:
        return None
    return f"this needs the Python package '{top}', which is not installed: {EXTRAS[top]}"
