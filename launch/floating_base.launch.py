"""Start the rbd_ros floating-base node next to a legged robot's driver and state estimator.

    ros2 launch rbd_ros floating_base.launch.py description_file:=/path/robot.urdf \
        params_file:=/path/floating_base.yaml odom_topic:=/state_estimator/odom

With description_file empty (the default) the node takes the URDF from the robot_description
topic."""

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
        executable="floating_base_node",
        name="rbd_floating_base",
        output="screen",
        parameters=params,
        remappings=[
            ("joint_states", LaunchConfiguration("joint_states_topic")),
            ("odom", LaunchConfiguration("odom_topic")),
            ("imu", LaunchConfiguration("imu_topic")),
            ("robot_description", LaunchConfiguration("robot_description_topic")),
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
                                                                  "floating_base.yaml"]),
                              description="contact links, soles, friction"),
        DeclareLaunchArgument("use_sim_time", default_value="false"),
        DeclareLaunchArgument("joint_states_topic", default_value="/joint_states"),
        DeclareLaunchArgument("odom_topic", default_value="/odom"),
        DeclareLaunchArgument("imu_topic", default_value="/imu/data"),
        DeclareLaunchArgument("robot_description_topic", default_value="/robot_description"),
        OpaqueFunction(function=_nodes),
    ])
