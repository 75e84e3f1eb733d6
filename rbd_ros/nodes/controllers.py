"""The joint order of a ros2_control controller, read from the controller itself.

A forward command controller (``effort_controllers/JointGroupEffortController`` and its kin)
takes a ``std_msgs/Float64MultiArray`` on ``/<controller>/commands``, one value per joint in
the order of its ``joints`` parameter, and that parameter lives on the node ``/<controller>``.
A topic remapped to ``.../<controller>/commands`` therefore names the node to ask; the answer
comes through the standard ``get_parameters`` service, asked again every ``RETRY_S`` until the
controller is up.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters

RETRY_S = 1.0
SUFFIX = "/commands"


def controller_of(topic: str) -> str | None:
    """The controller node whose ``~/commands`` ``topic`` is (a resolved name), or None."""
    if topic.endswith(SUFFIX) and len(topic) > len(SUFFIX) + 1:
        return topic[: -len(SUFFIX)]
    return None


class Controllers:
    """Asks each controller named by a topic for its ``joints``; ``on_answer()`` is called
    with each answer, kept in ``joints`` (None: the controller has no such parameter)."""

    def __init__(self, node: Any, on_answer: Callable[[], None]):
        self.node, self.on_answer = node, on_answer
        self.joints: dict[str, list[str] | None] = {}  # by controller, once answered
        self._clients: dict[str, Any] = {}
        self._asked: dict[str, float] = {}  # monotonic time of the pending question

    def ask(self, topics: Iterable[str]) -> list[str]:
        """The controllers of ``topics``, each asked for its joints unless answered or
        asked within RETRY_S."""
        names = sorted({c for c in map(controller_of, topics) if c})
        now = time.monotonic()
        for c in names:
            if c in self.joints or now - self._asked.get(c, -RETRY_S) < RETRY_S:
                continue
            client = self._clients.get(c)
            if client is None:
                client = self._clients[c] = self.node.create_client(
                    GetParameters, f"{c}/get_parameters")
            if not client.service_is_ready():
                continue
            self._asked[c] = now
            future = client.call_async(GetParameters.Request(names=["joints"]))
            future.add_done_callback(lambda f, c=c: self._answer(c, f))
        return names

    def order(self, known: Sequence[str], wanted: Sequence[str], topics: Iterable[str],
              rename: Callable[[Sequence[str]], Sequence[str]]) -> tuple[list[str] | None, str]:
        """The joint order of the Float64MultiArray ``topics`` (resolved names): ``wanted``
        (a node's ``joints`` parameter), else the ``joints`` of the controller those topics go
        to, its names through ``rename`` (a driver's to the model's); (None, why) when neither
        gives one whose joints are all ``known`` (the model's)."""
        if wanted:
            lacking = [j for j in wanted if j not in known]
            if not lacking:
                return list(wanted), ""
            return None, f"the joints parameter names {lacking}, which the model does not have"
        controllers = self.ask(topics)
        answers = {c: self.joints.get(c, "?") for c in controllers}
        orders = {c: None if j in ("?", None) else list(rename(j)) for c, j in answers.items()}
        if not controllers:
            return None, ("no joint order: the joints parameter is empty and no topic goes to "
                          "a controller's /<controller>/commands")
        if any(j == "?" for j in answers.values()):
            return None, (f"waiting for the joints parameter of {', '.join(controllers)} (the "
                          "controller they go to)")
        if any(j is None for j in answers.values()):
            return None, (f"{', '.join(c for c, j in answers.items() if j is None)} has no "
                          "string-array parameter joints")
        if len({tuple(o) for o in orders.values() if o is not None}) > 1:
            return None, f"the controllers' joints differ: {orders}"
        order = next(iter(orders.values()))
        assert order is not None
        lacking = [j for j in order if j not in known]
        if not lacking:
            return order, ""
        return None, (f"the joints of {controllers[0]} name {lacking}, which the model does "
                      "not have (joint_rename maps a driver's names to the model's)")

    def _answer(self, controller: str, future: Any) -> None:
        self._asked.pop(controller, None)
        if controller in self.joints or future.result() is None:
            return
        values = future.result().values
        ok = bool(values) and values[0].type == ParameterType.PARAMETER_STRING_ARRAY
        self.joints[controller] = list(values[0].string_array_value) if ok else None
        self.on_answer()
