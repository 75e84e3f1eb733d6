"""Helpers for the launch files (no launch imports here, so it is testable anywhere)."""

from __future__ import annotations


def robot_description(description_file: str) -> list[dict[str, str]]:
    """Parameters that carry the URDF of ``description_file`` (plain URDF, or xacro when the
    name ends in .xacro); none for an empty name, so the node reads the topic instead."""
    if description_file.endswith(".xacro"):
        import xacro  # only needed for a xacro file

        return [{"robot_description": xacro.process_file(description_file).toxml()}]
    if description_file:
        with open(description_file) as f:
            return [{"robot_description": f.read()}]
    return []
