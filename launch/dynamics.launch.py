"""Start the rbd_ros dynamics node next to a robot driver.

    ros2 launch rbd_ros dynamics.launch.py description_file:=/path/robot.urdf.xacro \
        xacro_args:='arm_id:=fr3 hand:=true' \
        joint_states_topic:=/joint_states effort_commands_topic:=/effort_controller/commands

With description_file empty (the default) the node takes the URDF from the robot_description
topic that robot_state_publisher publishes."""

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
        executable="dynamics_node",
        name="rbd_dynamics",
        output="screen",
        parameters=params,
        remappings=[
            ("joint_states", LaunchConfiguration("joint_states_topic")),
            ("robot_description", LaunchConfiguration("robot_description_topic")),
            ("effort_commands", LaunchConfiguration("effort_commands_topic")),
            ("desired_trajectory", LaunchConfiguration("desired_trajectory_topic")),
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
                                                                  "dynamics.yaml"]),
                              description="parameters of the dynamics node"),
        DeclareLaunchArgument("use_sim_time", default_value="false",
                              description="use /clock (for bag replay and simulators)"),
        DeclareLaunchArgument("joint_states_topic", default_value="/joint_states"),
        DeclareLaunchArgument("robot_description_topic", default_value="/robot_description"),
        DeclareLaunchArgument("effort_commands_topic",
                              default_value="/effort_controller/commands",
                              description="the effort controller's command topic"),
        DeclareLaunchArgument("desired_trajectory_topic", default_value="desired_trajectory"),
        OpaqueFunction(function=_nodes),
    ])
