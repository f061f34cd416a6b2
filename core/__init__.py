"""Mocap Workbench core: numpy-only motion maths, shared by the Blender add-on and scripts.

Every import inside this package is relative, so it works both as ``core`` (repository
root on ``sys.path``) and as ``bl_ext.<repo>.mocap_workbench.core`` inside Blender.
"""
