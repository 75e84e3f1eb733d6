"""control_msgs as the trajectory controller uses it is Jazzy's, type hash for type hash: the
package a ROS install has, or the part of it the pip set-up builds (pip/control_msgs), so that
MoveIt's and the ros2 CLI's clients match the controller's action unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from rosutil import Probe

#: RIHS01 type hashes of Jazzy's control_msgs 5.x (with the component tolerances), as its
#: rosidl_generator_c writes them in a colcon build of the real package (for instance
#: github.com/saahu27/aprs at 4013b140, aprs_ws/build/control_msgs/rosidl_generator_c/
#: control_msgs/action/detail/follow_joint_trajectory__description.c)
PUBLISHED = {
    "action/FollowJointTrajectory":
        "738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6",
    "action/FollowJointTrajectory_Goal":
        "8a9060704b269608f5a340934cc26e66869dd14bdac29e2e7fd9ec8b9882d205",
    "action/FollowJointTrajectory_Result":
        "8002e99ed2c14c6faa522f2a93c26d744c5982f254f9e98ff9c6f19789bdb220",
    "action/FollowJointTrajectory_Feedback":
        "3fd0aaecf71725121ae1ff7f01098a5e0da581e672be18a6b2c286cb43d96b49",
    "action/FollowJointTrajectory_SendGoal":
        "b13789dddc325a7a962825c45e28c77d37237ec129dd0c34dc5994562938c57f",
    "action/FollowJointTrajectory_SendGoal_Request":
        "179c93691f1f6d1d115881ff88c3917b7cc6eac2ba4bf56766cc7c4389e19ef1",
    "action/FollowJointTrajectory_SendGoal_Response":
        "e6a48ba740ae254500129a877f0b071be8663a115da1a539b74599cc97921fbf",
    "action/FollowJointTrajectory_SendGoal_Event":
        "906dd566308db02673c73c654f69bdd84738589629c1bc2841ddb49059ed1c6f",
    "action/FollowJointTrajectory_GetResult":
        "e3ceb38e3e1867c8dc0f46014df26e90eb93422f27e9e97f936e07f94be4bc8b",
    "action/FollowJointTrajectory_GetResult_Request":
        "ecf7ea8463d3beec7084bca75216d0b01b87b6e1e4e09679bb26093041efcbe9",
    "action/FollowJointTrajectory_GetResult_Response":
        "08eefbaa146ce02ba45898d5e99160afd6c4c54a30d159aee0f2ca6035b1580f",
    "action/FollowJointTrajectory_GetResult_Event":
        "43161a489e52daaa5bbc2fa74f73f1804d099574fcf8f819170807d75472662a",
    "action/FollowJointTrajectory_FeedbackMessage":
        "80398fcb9674a79081a9906e2ccf0c804dd7cb15e22e362e606ee87186beab71",
    "msg/JointTolerance": "c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648",
    "msg/JointComponentTolerance":
        "739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4",
}


def test_the_installed_types_hash_as_jazzys() -> None:
    import control_msgs

    # <prefix>/lib/pythonX.Y/site-packages/control_msgs -> <prefix>/share/control_msgs, in a
    # venv on the wheels as in /opt/ros/jazzy
    share = Path(control_msgs.__file__).parents[4] / "share" / "control_msgs"
    hashes = {}
    for path in ("action/FollowJointTrajectory", "msg/JointTolerance",
                 "msg/JointComponentTolerance"):
        for h in json.loads((share / f"{path}.json").read_text())["type_hashes"]:
            hashes[h["type_name"]] = h["hash_string"]
    assert {name: hashes[f"control_msgs/{name}"] for name in PUBLISHED} == \
        {name: f"RIHS01_{h}" for name, h in PUBLISHED.items()}


def test_what_the_graph_carries_hashes_as_jazzys(probe: Probe) -> None:
    """The action's feedback topic as a server offers it on the graph (what `ros2 topic info
    -v` shows and DDS matches on)."""
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionServer

    node = probe.node
    server = ActionServer(node, FollowJointTrajectory, "/hash_check/follow_joint_trajectory",
                          lambda goal: FollowJointTrajectory.Result())
    try:
        topic = "/hash_check/follow_joint_trajectory/_action/feedback"
        infos = node.get_publishers_info_by_topic(topic)
        assert len(infos) == 1, infos
        assert str(infos[0].topic_type_hash) == \
            "RIHS01_" + PUBLISHED["action/FollowJointTrajectory_FeedbackMessage"]
    finally:
        server.destroy()
