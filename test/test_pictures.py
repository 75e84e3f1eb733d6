"""The documentation's pictures (scripts/pictures.py) are what the code draws now: the pushed
arm's analysis and observer, the contact forces (the demo's picture: test_cli). Each picture
also asserts what it shows, so a drawing of a wrong answer cannot be committed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from pages import assert_drawn_as_committed, assert_shown

pytest.importorskip("pinref")  # Talos, from example-robot-data

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def pictures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pictures", ROOT / "scripts" / "pictures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pictures"] = module
    spec.loader.exec_module(module)
    return module


def test_the_pushed_arms_pictures_are_the_codes(pictures: ModuleType, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    run = pictures.pushed_arm()
    t, _, _, _, ext = run
    pushed = (t >= pictures.PUSH[0]) & (t < pictures.PUSH[1])
    assert np.abs(ext[pushed]).max() > 2 * pictures.THRESHOLD  # the push is there to catch
    assert np.abs(ext[~pushed]).max() < 1e-9
    assert pictures.analysis(tmp_path, run) == 0
    assert_shown("doc/tutorials/recordings.md", "2000 joint states", capsys.readouterr().out)
    pictures.observer(tmp_path, run)
    for name in ("analysis_joint2.png", "observer_push.png"):
        assert_drawn_as_committed(tmp_path / name)


def test_the_contact_picture_is_the_codes(pictures: ModuleType, tmp_path: Path) -> None:
    pictures.contacts(tmp_path)  # each state it draws is asserted feasible
    assert_drawn_as_committed(tmp_path / "contacts.png")
