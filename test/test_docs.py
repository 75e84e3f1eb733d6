"""The documentation builds without a warning (broken references, missing API entries fail it),
and its reference is the code's: every parameter a node declares and every option of the
command line appear in the built pages."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_docs_build_without_warnings_and_list_every_parameter_and_option(
        tmp_path: Path) -> None:
    for module in ("sphinx", "myst_parser"):  # a workspace without the test requirements
        pytest.importorskip(module, reason="pip install -r requirements-test.txt")
    out = tmp_path / "html"
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                        str(ROOT / "doc"), str(out)], capture_output=True, text=True,
                       timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    nodes = (out / "nodes.html").read_text()
    for name in ("robot_description", "observer_gain", "collision_release", "joint_states_qos",
                 "contact_links", "friction_coefficient", "input_timeout", "held_joints"):
        assert f"<code class=\"docutils literal notranslate\"><span class=\"pre\">{name}</span>" \
            in nodes, name
    assert "[0.01, 10000]" in nodes  # observer_gain's range, from its descriptor
    cli = (out / "reference" / "cli.html").read_text()
    for option in ("--wait-for", "--scheduler-timeout", "--ignore-efforts", "--floating-base"):
        assert option in cli, option
    api = (out / "api.html").read_text()
    for name in ("load_urdf", "rnea", "aba", "crba", "rnea_batch", "Model", "Data",
                 "algorithm.floating.base_reaction", "algorithm.floating.forward_dynamics",
                 "contact.contacts.Contact", "contact.contacts.Reaction",
                 "contact.contacts.solve", "contact.contacts.check_contacts",
                 "algorithm.kinematics.placements", "estimation.observer.MomentumObserver",
                 "estimation.observer.MomentumObserver.update",
                 "estimation.observer.CollisionDetector",
                 "estimation.contact_estimation.ContactEstimator",
                 "estimation.contact_estimation.ContactEstimator.update"):
        assert f'<span class="pre">rbd_ros.dynamics.{name}</span>' in api, name
    for tutorial in ("feedforward", "services", "collisions", "floating_base", "recordings"):
        page = (out / "tutorials" / f"{tutorial}.html").read_text()
        assert "highlight-python" in page or "<img" in page, tutorial  # a program or a picture
    # the sidebar's sections come from index.md's link list (doc/conf.py), not from directives,
    # which the repository's web page would show as code blocks
    index = (out / "index.html").read_text()
    for caption in ("Start", "Tutorials", "Reference"):
        assert f'<span class="caption-text">{caption}</span>' in index, caption
    for md in [ROOT / "README.md", *ROOT.joinpath("doc").rglob("*.md")]:
        text = md.read_text()
        assert "```{" not in text, f"{md.name}: a MyST directive shows as code"
        assert "[](" not in text, f"{md.name}: a link with no text shows as nothing"




def test_rosdoc2_builds_the_docs_as_the_ros_index_does(tmp_path: Path) -> None:
    """``rosdoc2 build --package-path .``, as docs.ros.org runs it (rosdoc2.yaml: doc/ is the
    Sphinx project), from a clean copy of the tree (no compiled extension, no cache: a fresh
    checkout) with the venv on PATH as the README's ``source .venv/bin/activate`` puts it: no
    warning, every page, the API (rosdoc2 keeps its build and cross-reference folders where it
    runs: here a folder of its own)."""
    import os
    import shutil

    bin_dir = str(Path(sys.executable).parent)  # rosdoc2 runs sphinx-build from the PATH
    if not (Path(bin_dir) / "rosdoc2").exists():  # a workspace without the test requirements
        pytest.skip("rosdoc2 is not installed: pip install -r requirements-test.txt")
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    tree = tmp_path / "checkout"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "build", "install", "log", "_build", "__pycache__", "*.so",
        "*.egg-info", ".mypy_cache", ".ruff_cache"))
    r = subprocess.run(["rosdoc2", "build", "--package-path", str(tree)],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    problems = [line for line in log.splitlines() if re.search(r"\b(WARNING|ERROR)\b", line)]
    assert not problems, "\n".join(problems)
    out = tmp_path / "docs_output" / "rbd_ros"
    pages = {str(p.relative_to(out)) for p in out.rglob("*.html")}
    for page in ROOT.joinpath("doc").rglob("*.md"):
        name = str(page.relative_to(ROOT / "doc").with_suffix(".html"))
        assert name in pages, f"rosdoc2 built no {name}: {sorted(pages)}"
    assert '<span class="pre">rbd_ros.dynamics.contact.contacts.solve</span>' in \
        (out / "api.html").read_text()


def test_the_generated_parts_of_the_pages_are_the_codes() -> None:
    """The parameter tables, the command line's reference and the tutorials' programs sit in
    the Markdown pages (whole where they are read: the repository's web view), each as the
    code makes it now (doc/_ext/generated_reference.py --check)."""
    pytest.importorskip("rclpy", reason="the parameter tables are read from the nodes")
    r = subprocess.run([sys.executable, str(ROOT / "doc" / "_ext" / "generated_reference.py"),
                        "--check"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, (r.stdout + r.stderr + "\nrun: .venv/bin/python "
                               "doc/_ext/generated_reference.py")
