"""Pieces every feature's sidebar uses: the Mocap tab and the last result's report box."""

from __future__ import annotations


class Sidebar:
    """Mixin of every Mocap Workbench panel: the sidebar (N) tab "Mocap"."""

    bl_region_type = "UI"
    bl_category = "Mocap"


def draw_report(layout, lines: list[str]) -> None:
    """The last result of an operator, one line a row, in a box."""
    if lines:
        box = layout.box()
        for line in lines:
            box.label(text=line)
