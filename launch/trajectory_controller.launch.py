"""Start the rbd_ros trajectory controller next to a robot driver: FollowJointTrajectory goals
(MoveIt, ros2 action send_goal) followed by computed torque through an effort controller.

    ros2 launch rbd_ros trajectory_controller.launch.py \
        description_file:=/path/robot.urdf.xacro \
        commands_topic:=/effort_controller/commands

The node then serves /rbd_trajectory_controller/follow_joint_trajectory (name: the MoveIt
controller's name) and reads the effort controller's joint order from its `joints`
parameter. With description_file empty (the default) it takes the URDF from the
robot_description topic that robot_state_publisher publishes."""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from rbd_ros.runtime.launch_support import robot_description


def _nodes(context):
    description_file = LaunchConfiguration("description_file").perform(context)
    params = [LaunchConfiguration("params_file"),
              {"use_sim_time": LaunchConfiguration("use_sim_time")}]
    params += robot_description(description_file,
                                LaunchConfiguration("xacro_args").perform(context))
    return [Node(
        package="rbd_ros",
        executable="trajectory_controller_node",
        name=LaunchConfiguration("name"),
        output="screen",
        parameters=params,
        remappings=[
            ("joint_states", LaunchConfiguration("joint_states_topic")),
            ("robot_description", LaunchConfiguration("robot_description_topic")),
            ("commands", LaunchConfiguration("commands_topic")),
        ],
    )]


def generate_launch_description():
    share = FindPackageShare("rbd_ros")
    return LaunchDescription([
        DeclareLaunchArgument("description_file", default_value="",
                              description="URDF or xacro file; empty: robot_description topic"),
        DeclareLaunchArgument("xacro_args", default_value="",
                              description="the xacro file's arguments, NAME:=VALUE ..."),
        DeclareLaunchArgument("params_file",
                              default_value=PathJoinSubstitution([share, "config",
                                                                  "trajectory_controller.yaml"]),
                              description="parameters of the trajectory controller"),
        DeclareLaunchArgument("name", default_value="rbd_trajectory_controller",
                              description="the node's name: MoveIt's controller name"),
        DeclareLaunchArgument("use_sim_time", default_value="false",
                              description="use /clock (for simulators)"),
        DeclareLaunchArgument("joint_states_topic", default_value="/joint_states"),
        DeclareLaunchArgument("robot_description_topic", default_value="/robot_description"),
        DeclareLaunchArgument("commands_topic", default_value="/effort_controller/commands",
                              description="the effort controller's command topic"),
        OpaqueFunction(function=_nodes),
    ])
