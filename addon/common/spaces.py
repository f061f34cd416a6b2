"""Blender matrices and object transforms as numpy: the one place a ``mathutils.Matrix`` becomes an array.

The core works in armature space; these give the rotations, scales and unit factors that take
it to and from the world (scene) space the user sees.
"""

from __future__ import annotations

from typing import Any

import bpy
import numpy as np

from ...core import quaternion as quat


def matrix_array(matrix: Any) -> np.ndarray:
    """A ``mathutils.Matrix`` (or any nested rows) as a float array, (rows, columns)."""
    return np.array([list(row) for row in matrix], dtype=float)


def rotation_of(obj: Any) -> np.ndarray:
    """World orientation (4,) of an object, scale removed."""
    m = matrix_array(obj.matrix_world)[:3, :3]
    return quat.from_matrix(m / np.linalg.norm(m, axis=0, keepdims=True))


def object_alignment(source: Any, target: Any) -> np.ndarray:
    """Rotation (4,) from the source armature's space to the target armature's space."""
    return quat.multiply(quat.inverse(rotation_of(target)), rotation_of(source))


def vertical(obj: Any) -> np.ndarray:
    """(3,) the world's up axis (+Z) in the armature's space."""
    return quat.rotate(quat.conjugate(rotation_of(obj)), np.array([0.0, 0.0, 1.0]))


def to_armature(obj: Any, point: Any) -> np.ndarray:
    """A world-space point (3,) in the armature's space."""
    return (np.linalg.inv(matrix_array(obj.matrix_world)) @ np.append(np.asarray(point, dtype=float), 1.0))[:3]


def to_world(obj: Any, points: np.ndarray) -> np.ndarray:
    """Armature-space points (..., 3) in world space."""
    m = matrix_array(obj.matrix_world)
    return np.asarray(points, dtype=float) @ m[:3, :3].T + m[:3, 3]


def world_scale(obj: Any) -> float:
    """Mean scale of an object's world matrix."""
    return float(np.cbrt(abs(np.linalg.det(matrix_array(obj.matrix_world)[:3, :3]))))


def metres_per_unit(obj: Any) -> float:
    """Metres per armature unit of ``obj``: the scene's Unit Scale times the object's scale."""
    return float(bpy.context.scene.unit_settings.scale_length) * world_scale(obj)
