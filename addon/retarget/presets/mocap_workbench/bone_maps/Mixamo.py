# Mocap Workbench bone map preset: read as data by Retarget › Bone Map, never run.
BONE_MAP = {"format": "mocap_workbench.bone_map", "version": 1, "convention": "mixamo", "map": {}}
