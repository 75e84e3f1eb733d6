"""Shared test set-up: ``pinref`` (the Pinocchio reference) importable from every test."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
