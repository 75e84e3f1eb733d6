"""The domain the project's own ROS processes use: in their range, never the shell's, or the one
RBD_TEST_DOMAIN names."""

from __future__ import annotations

import os

import pytest

from rbd_ros.runtime.local_ros import DEMO, TESTS, isolate


def test_in_range_and_never_the_shells(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RBD_TEST_DOMAIN", raising=False)
    for pid in range(200):
        monkeypatch.setattr(os, "getpid", lambda pid=pid: pid)
        monkeypatch.setenv("ROS_DOMAIN_ID", str(TESTS[0] + pid % TESTS[1]))  # a robot's shell
        domain = isolate(*TESTS)
        assert TESTS[0] <= domain < sum(TESTS)
        assert domain != TESTS[0] + pid % TESTS[1]
        assert os.environ["ROS_DOMAIN_ID"] == str(domain)
        assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    monkeypatch.delenv("ROS_DOMAIN_ID")  # unset: the shell is on domain 0
    assert isolate(0, 2) == 1  # (the last pid, 199, would pick 1 anyway)
    monkeypatch.setattr(os, "getpid", lambda: 200)
    monkeypatch.delenv("ROS_DOMAIN_ID")
    assert isolate(0, 2) == 1
    assert max(sum(r) for r in (TESTS, DEMO)) <= 102  # the IDs ROS advises on Linux


def test_the_workers_of_one_run_each_have_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist's workers (the run's id, a slot each): as many domains as workers, none
    the shell's."""
    monkeypatch.delenv("RBD_TEST_DOMAIN", raising=False)
    for run in range(200):
        shell = TESTS[0] + (run + 1) % TESTS[1]  # the shell on the second worker's
        domains = set()
        for k in range(4):  # each worker's process starts from the shell's environment
            monkeypatch.setenv("ROS_DOMAIN_ID", str(shell))
            domains.add(isolate(*TESTS, run=run, slot=k))
        assert len(domains) == 4 and shell not in domains
        assert all(TESTS[0] <= d < sum(TESTS) for d in domains)
    monkeypatch.setenv("RBD_TEST_DOMAIN", "42")
    assert [isolate(*TESTS, run=7, slot=k) for k in range(2)] == [42, 43]


def test_rbd_test_domain_sets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROS_DOMAIN_ID", os.environ["ROS_DOMAIN_ID"])  # restored afterwards
    monkeypatch.setenv("RBD_TEST_DOMAIN", "42")
    assert isolate(*TESTS) == 42 and os.environ["ROS_DOMAIN_ID"] == "42"
    monkeypatch.setenv("RBD_TEST_DOMAIN", "300")
    with pytest.raises(ValueError, match="RBD_TEST_DOMAIN=300: a ROS domain is 0-232"):
        isolate(*TESTS)


def test_this_run_is_isolated() -> None:
    """conftest isolated the suite (and every node it starts inherits it)."""
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    domain = int(os.environ["ROS_DOMAIN_ID"])
    chosen = os.environ.get("RBD_TEST_DOMAIN")
    assert domain == int(chosen) if chosen else TESTS[0] <= domain < sum(TESTS)
