"""Sphinx configuration of rbd_ros's documentation (``rosdoc2 build --package-path .`` builds it
as the ROS documentation index does; ``sphinx-build -W doc <out>`` builds it alone)."""

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # the package (sphinx-build runs this file where it is)
if not (ROOT / "package.xml").is_file():
    # rosdoc2 builds a copy of doc/ in its build directory: __file__ is then its conf.py, which
    # exec()s this file by its path in the package
    found = re.search(r'exec\(open\("([^"]+)"\)', Path(__file__).read_text())
    if found and (Path(found[1]).resolve().parents[1] / "package.xml").is_file():
        ROOT = Path(found[1]).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # rbd_ros from this tree, for autodoc

project = "rbd_ros"
author = "rbd_ros developers"
copyright = "2026, rbd_ros developers"
release = "0.1.0"

# the parameter tables, the command line's reference and the tutorials' programs are in the
# pages themselves, made by doc/_ext/generated_reference.py (test_docs checks them fresh)
extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# only these pages: rosdoc2 puts its own index.rst, sphinx-apidoc's pages, a copy of doc/
# (0.2.1) and the package's README, CHANGELOG and LICENSE pages next to them
include_patterns = ["*.md", "reference/*.md", "tutorials/*.md"]
exclude_patterns = ["_build", "README.md"]
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "description"
nitpicky = False


def _contents(app, docname, source):
    """index.md's link list, as the hidden toctrees Sphinx needs for its sidebar and its order of
    pages: one per bullet, captioned by the bullet's first word. Written here, not in the page,
    because on the repository's web page a toctree shows as a code block of file names."""
    if docname != "index":
        return
    for caption, links in re.findall(r"^\* (\w+):(.*?)(?=^\* |\Z)", source[0], re.M | re.S):
        pages = dict.fromkeys(re.findall(r"\]\(([^)#]+)\.md\)", links))
        source[0] += ("\n```{toctree}\n:hidden:\n:maxdepth: 1\n:caption: " + caption + "\n\n"
                      + "\n".join(pages) + "\n```\n")


def setup(app):
    app.connect("source-read", _contents)
