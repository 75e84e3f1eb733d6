"""Sphinx configuration of rbd_ros's documentation (``rosdoc2 build --package-path .`` builds it
as the ROS documentation index does; ``sphinx-build -W doc <out>`` builds it alone)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))  # rbd_ros from this tree, for autodoc

project = "rbd_ros"
author = "rbd_ros developers"
copyright = "2026, rbd_ros developers"
release = "0.1.0"

extensions = ["myst_parser", "sphinx.ext.autodoc", "generated_reference"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "reference/_generated/*.md"]
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "description"
nitpicky = False
