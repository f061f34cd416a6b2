"""What Blender's own BVH importer (``io_anim_bvh``, Blender 4.2–5.0) makes of a BVH file, without Blender.

The importer builds one bone per joint (head at the joint, tail at its End Site, its only
child or the mean of its children, roll 0), keys ``location`` on joints with position
channels and ``rotation_euler`` / ``rotation_quaternion`` on joints with rotation channels
(one LINEAR key per file frame from frame 1), then turns the Y-up file into Blender's Z-up
world by baking a quarter turn about X into the bones (``transform_apply``), which leaves the
pose channels as they are. Here the same armature is described as a core
:class:`~core.skeleton.Skeleton` (what ``addon.common.armature.skeleton_from_armature`` reads)
and the same keys as arrays, so the add-on and plain Python agree on an imported file.

Reproduced details of Blender's code:

- bone geometry in float32, operation by operation as the importer's mathutils Vectors
  (:func:`bone_geometry`), so short bones far from the origin get Blender's directions;
- bone rest frames as Blender builds them (:func:`armature_rest`): ``vec_roll_to_mat3_normalized``
  (``armature.cc``, roll 0) with its thresholds and series near −Y, each bone rebuilt in its
  parent's frame with the roll that matches its edit-mode frame, the roots re-rolled by
  ``transform_apply``; the slightly non-orthonormal matrices this gives near −Y are kept, as
  Blender converts the keys with them;
- zero-length bones: a tail within 0.001·scale of the head moves up by scale/10; a bone still
  shorter than 0.001 gets its parent's vector (a root: the mean bone length) added to its tail;
- channel values: location = rest⁻¹·(bvh_location − rest_offset), rotation = rest⁻¹·M·rest
  (columns normalised) with rest the bone's armature-space matrix *before* the axis
  conversion and M the joint's BVH rotation;
- Euler keys: ``Matrix.to_euler(mode, previous)``, i.e. ``mat3_normalized_to_compatible_eulO``
  (two Euler solutions, each moved by whole turns next to the previous key by
  ``compatible_eul``, the nearer one kept), in float32 with Blender's thresholds; the
  frame-to-frame dependency is resolved without a loop over frames (:func:`compatible_scan`);
- ``'NATIVE'`` gives each bone the rotation mode named by its channel order as listed
  (``Zrotation Xrotation Yrotation`` → ``'ZXY'``, which is not the order BVH applies them in:
  the keys still describe the same rotation); joints without rotation channels get ``'XYZ'``;
- quaternions keep w ≥ 0 (Blender's ``mat3_to_quat``), so consecutive keys may flip hemisphere;
- joint names: spaces become ``_`` and names are cut to Blender's 63 bytes.

Measured against Blender 5.0.1 on CMU, Bandai Namco, Mixamo and Character Creator captures
(tests/blender/test_blender_bvh_model.py): rest rotations within 2e-6 rad, rest offsets and
locations within 1e-7 of the body size, quaternion keys within 3e-6, Euler keys within 1.4e-5
where the middle angle is more than 1° from ±90°. Nearer gimbal lock the first and last angle
rest on matrix elements of size cos(middle angle), so Blender's own float32 arithmetic leaves
them uncertain by ~1e-7 / cos (measured: |difference|·cos ≤ 2e-6, e.g. 3e-4 rad 0.06° from
lock), and a ±180° angle exactly at lock may land a whole turn away (the Character Creator
eyes), which later keys follow; there the keys still agree as rotations.

Not modelled: ``use_fps_scale`` (key times only, values are the same), a joint with one or two
rotation channels (Blender's importer fails on those; here ValueError), ``axis_forward`` /
``axis_up`` other than the defaults (-Z, Y), and connected bones (``use_connect`` is set on
children whose head already sits on the parent's tail and that have no location keys, so it
changes neither the rest pose nor the keys).
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..motion import Motion
from ..quaternion import EULER_ORDERS
from ..skeleton import POSITION_CHANNELS, ROTATION_CHANNELS, Skeleton
from .bvh import to_bvh_layout

#: The importer's default axis conversion (forward -Z, up Y → forward Y, up Z): +90° about X.
Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])

# The importer's tail of a joint with several children includes the joint's own offset from this
# version on (checked: 4.2 without, 4.5 and 5.0 with; 4.3 and 4.4 not checked).
HEAD_OFFSET_FIX = (4, 5)
MAX_NAME_BYTES = 63  # Blender's MAXBONENAME (64) less the terminating zero

_F32 = np.float32
_PI_F = _F32(np.pi)  # float(M_PI) in compatible_eul
_TWO_PI_F = _F32(2.0) * _PI_F
_HALF_F = _F32(0.5)
_HALF_PI_F = _F32(np.pi / 2)
_NEXT, _AFTER_NEXT = [1, 2, 0], [2, 0, 1]  # compatible_eul's (i, j, k) = (0, 1, 2), (1, 2, 0), (2, 0, 1)
_EULER_HYPOT_EPSILON = 0.0000375  # math_rotation.cc: below this hypot the last Euler angle is zeroed
_SAFE_THRESHOLD = _F32(6.1e-3)  # vec_roll_to_mat3_normalized: 1 + y above this is precise enough
_THRESHOLD_SQUARED = _F32(2.5e-4) * _F32(2.5e-4)  # squared XZ distance below which -Y is singular


def vec_roll_to_mat3_normalized(nor: np.ndarray, roll: np.ndarray | float = 0.0) -> np.ndarray:
    """Blender's rest orientation of bones pointing along unit vectors ``nor`` (..., 3) with ``roll``
    (radians, broadcast over ...): rotation matrices (..., 3, 3) acting on column vectors, whose
    Y column is ``nor``.

    Without roll it is the shortest turn taking +Y to ``nor``, except within 2.5e-4 (XZ distance)
    of −Y where it is the half turn about Z, diag(−1, −1, 1); between that and 1 + y = 6.1e-3 the
    1/(1 + y) factor is replaced by its series in x² + z², as Blender does (so the result is a
    rotation only to ~1e-5 there). Computed in the dtype of ``nor``: pass float32 to take the
    branches where Blender, which works in float32, takes them.
    """
    nor = np.asarray(nor)
    if not np.issubdtype(nor.dtype, np.floating):
        nor = nor.astype(float)
    dtype = nor.dtype.type
    x, y, z = nor[..., 0], nor[..., 1], nor[..., 2]
    theta = dtype(1.0) + y
    theta_alt = x * x + z * z
    regular = (theta > _SAFE_THRESHOLD) | (theta_alt > _THRESHOLD_SQUARED)
    theta = np.where(theta <= _SAFE_THRESHOLD, theta_alt * dtype(0.5) + theta_alt * theta_alt * dtype(0.125), theta)
    theta = np.where(regular, theta, dtype(1.0))  # unused where not regular; keeps the division finite
    m = np.empty((*nor.shape[:-1], 3, 3), dtype=nor.dtype)
    m[..., 0, 0] = dtype(1.0) - x * x / theta
    m[..., 0, 1] = x
    m[..., 0, 2] = -x * z / theta
    m[..., 1, 0] = -x
    m[..., 1, 1] = y
    m[..., 1, 2] = -z
    m[..., 2, 0] = m[..., 0, 2]
    m[..., 2, 1] = z
    m[..., 2, 2] = dtype(1.0) - z * z / theta
    m = np.where(regular[..., None, None], m, np.diag([-1.0, -1.0, 1.0]).astype(nor.dtype))
    roll = np.asarray(roll, dtype=float)
    if np.any(roll != 0.0):
        r = quat.to_matrix(quat.from_axis_angle(nor.astype(float), roll)).astype(nor.dtype)
        m = r @ m
    return m


def blender_bone_names(names: tuple[str, ...] | list[str]) -> list[str]:
    """Bone names Blender's importer gives joints: words joined by ``_``, cut to 63 bytes, made unique."""
    out: list[str] = []
    for name in names:
        bone = "_".join(name.split())
        bone = _cut(bone, MAX_NAME_BYTES)
        if bone in out:
            number = 1
            while (candidate := f"{_cut(bone, MAX_NAME_BYTES - 4)}.{number:03d}") in out:
                number += 1
            bone = candidate
        out.append(bone)
    return out


def _cut(text: str, n_bytes: int) -> str:
    """``text`` shortened to at most ``n_bytes`` of UTF-8 without splitting a character."""
    return text.encode("utf-8")[:n_bytes].decode("utf-8", errors="ignore")


def depth_first_order(parents: np.ndarray) -> np.ndarray:
    """(J,) joint indices in Blender's bone order: roots, each followed by its subtree, children in index order."""
    parents = np.asarray(parents, dtype=int)
    children: list[list[int]] = [[] for _ in parents]
    for j, p in enumerate(parents):
        if p >= 0:
            children[p].append(j)
    order: list[int] = []
    stack = [int(r) for r in np.flatnonzero(parents < 0)][::-1]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(children[j][::-1])
    return np.array(order, dtype=int)


def bone_geometry(
    skeleton: Skeleton, global_scale: float = 1.0, head_offset_fix: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(J, 3) float32 heads and tails of the edit bones the importer creates, file (Y-up) axes, scene units.

    Tail: the joint's last End Site, else its only child's head, else the mean of its
    children's heads; a joint with neither starts with its head. Then the importer's two
    zero-length repairs: a tail within 0.001·scale of the head moves up (Y) by scale/10; a
    bone still shorter than 0.001 gets its parent's vector (a root: the mean bone length)
    added to its tail. Computed in float32 operation by operation like the importer's
    mathutils Vectors, so that short bones far from the origin (a jaw at 1.7 m, in cm) get
    Blender's directions, not more exact ones. head_offset_fix: the importer of Blender 4.5 and
    later; before it, a joint with several children had its local tail at the mean of their
    offsets without its own head offset, which changes which bones count as zero-length.
    """
    sk = skeleton
    f32 = np.float32
    s = float(global_scale)
    n = sk.n_joints
    local = f32(s) * sk.rest_translations.astype(f32)
    head = np.zeros((n, 3), dtype=f32)
    children: list[list[int]] = [[] for _ in range(n)]
    for j, p in enumerate(sk.parents):
        head[j] = local[j] if p < 0 else head[p] + local[j]
        if p >= 0:
            children[p].append(j)
    tail = np.zeros((n, 3), dtype=f32)
    tail_local = np.zeros((n, 3), dtype=f32)
    has_end = np.zeros(n, dtype=bool)
    for p, offset in zip(sk.end_site_parents, sk.end_site_offsets):  # the last End Site wins
        end = f32(s) * offset.astype(f32)
        tail[p], tail_local[p], has_end[p] = head[p] + end, local[p] + end, True
    for j in range(n):
        kids = children[j]
        if has_end[j]:
            pass
        elif not kids:
            tail[j], tail_local[j] = head[j], local[j]
        elif len(kids) == 1:
            tail[j], tail_local[j] = head[kids[0]], local[j] + local[kids[0]]
        else:
            world_sum = np.zeros(3, dtype=f32)
            local_sum = np.zeros(3, dtype=f32)
            for c in kids:
                world_sum += head[c]
                local_sum += local[c]
            tail[j] = world_sum * f32(1.0 / len(kids))
            tail_local[j] = local_sum * f32(1.0 / len(kids))
            if head_offset_fix:
                tail_local[j] = local[j] + tail_local[j]
        if np.linalg.norm((tail_local[j] - local[j]).astype(float)) <= 0.001 * s:
            tail_local[j, 1] = f32(float(tail_local[j, 1]) + s / 10)
            tail[j, 1] = f32(float(tail[j, 1]) + s / 10)
    lengths = np.linalg.norm((local - tail_local).astype(float), axis=1)
    average = float(lengths[lengths != 0].mean()) if np.any(lengths != 0) else 0.1
    # Second repair, on the edit bones (absolute threshold).
    repaired = tail.copy()
    for j in np.flatnonzero(np.linalg.norm((head - tail).astype(float), axis=1) < 0.001):
        p = sk.parents[j]
        parent_vector = local[p] - tail_local[p] if p >= 0 else np.zeros(3, dtype=f32)
        if p >= 0 and np.any(parent_vector != 0):
            repaired[j] = tail[j] - parent_vector
        else:
            repaired[j, 1] = f32(float(tail[j, 1]) + average)
    return head, repaired


def armature_rest(tails: np.ndarray, parents: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rest matrices of the importer's bones, computed the way Blender computes them.

    tails: (J, 3) tail − head of each bone (:func:`bone_geometry`), file axes. parents: (J,).
    Leaving edit mode, Blender expresses each bone in its parent's final rest frame, builds it
    with roll 0, measures the twist against the edit bone's own frame (``vec_roll_to_mat3`` of
    its armature-space direction) and rebuilds it with that roll (``armature_finalize_restpose``);
    ``transform_apply`` then turns the roots and re-derives their roll the same way. Near −Y
    (in armature or parent space) Blender's series approximation makes these matrices
    deviate from rotations by up to ~1e-5, and the keys are converted with them, so they are
    kept raw here.

    Returns (J, 3, 3) each: the armature-space rest matrix before the axis conversion (the
    importer converts keys with it), each bone's matrix in its parent's frame, and each
    root's armature-space matrix after the axis conversion (rows of non-roots unused).
    """
    parents = np.asarray(parents, dtype=int)
    n = len(parents)
    direction = tails / np.linalg.norm(tails, axis=1, keepdims=True)
    premat = vec_roll_to_mat3_normalized(direction)
    rest = np.empty((n, 3, 3))
    bone_mats = np.empty((n, 3, 3))
    depth = np.zeros(n, dtype=int)
    for j, p in enumerate(parents):
        depth[j] = 0 if p < 0 else depth[p] + 1
    for level in range(depth.max() + 1 if n else 0):
        js = np.flatnonzero(depth == level)
        parent_rest = rest[parents[js]] if level else np.broadcast_to(np.eye(3), (len(js), 3, 3))
        local = np.linalg.solve(parent_rest, direction[js][..., None])[..., 0]
        local /= np.linalg.norm(local, axis=1, keepdims=True)
        first = parent_rest @ vec_roll_to_mat3_normalized(local)
        diff = np.linalg.solve(premat[js], first)
        roll = -np.arctan2(diff[:, 0, 2], diff[:, 2, 2])
        bone_mats[js] = vec_roll_to_mat3_normalized(local, roll)
        rest[js] = parent_rest @ bone_mats[js]
    # transform_apply: a root's frame becomes G·rest, rebuilt from its new direction and a recomputed roll.
    turned = Y_UP_TO_Z_UP @ rest
    new_direction = direction @ Y_UP_TO_Z_UP.T
    diff = np.linalg.solve(vec_roll_to_mat3_normalized(new_direction), turned)
    roots_after = vec_roll_to_mat3_normalized(new_direction, np.arctan2(diff[:, 0, 2], diff[:, 2, 2]))
    return rest, bone_mats, roots_after


def blender_bvh_import(
    motion: Motion, rotate_mode: str = "NATIVE", global_scale: float = 1.0, blender: tuple[int, int] = (5, 0)
) -> tuple[Skeleton, dict[str, str], dict[tuple[str, str, int], np.ndarray]]:
    """The armature and action Blender's BVH importer makes of a motion read by :func:`core.io.bvh.read_bvh`.

    motion: the file as read (a motion with rest rotations is first put in BVH layout, as
    :func:`core.io.bvh.write_bvh` would write it). rotate_mode: ``'NATIVE'``, ``'QUATERNION'``
    or an Euler order such as ``'XYZ'`` (the importer's option). global_scale: the importer's
    ``global_scale``. blender: the Blender version whose importer is modelled (major, minor); the
    importers before :data:`HEAD_OFFSET_FIX` differ in the tails of joints with several children
    (:func:`bone_geometry`).

    Returns
    - the Skeleton ``addon.common.armature.skeleton_from_armature(obj, moving)`` reads from the
      imported armature: bones in depth-first order, rest translations (scene units) and rest
      rotations (w, x, y, z) in armature space after the Y-up → Z-up conversion, position
      channels on bones with location keys, End Sites (0, length, 0) at leaf bones' tails;
    - each bone's rotation mode (``'QUATERNION'`` or an Euler order as Blender names it);
    - the keyed values: (bone, property, index) → (T,) float32, property ``"location"``
      (scene units, in the bone's rest frame), ``"rotation_quaternion"`` (w, x, y, z) or
      ``"rotation_euler"`` (x, y, z radians), one value per file frame (key frame t + 1).
    """
    motion = to_bvh_layout(motion)
    sk = motion.skeleton
    mode = rotate_mode.upper()
    if mode not in ("NATIVE", "QUATERNION", *EULER_ORDERS):
        raise ValueError(f"rotate_mode must be 'NATIVE', 'QUATERNION' or an Euler order, got {rotate_mode!r}")
    rot_orders = []
    for name, channels in zip(sk.names, sk.channels):
        axes = "".join(c[0] for c in channels if c in ROTATION_CHANNELS)
        if len(axes) not in (0, 3):
            raise ValueError(f"joint {name!r} has {len(axes)} rotation channels; Blender's importer needs 0 or 3")
        rot_orders.append(axes or "XYZ")
    has_loc = np.array([any(c in POSITION_CHANNELS for c in ch) for ch in sk.channels])
    has_rot = np.array([any(c in ROTATION_CHANNELS for c in ch) for ch in sk.channels])
    s = float(global_scale)

    # Rest pose as the importer builds it (file axes, before the axis conversion).
    head32, tail32 = bone_geometry(sk, s, head_offset_fix=tuple(blender) >= HEAD_OFFSET_FIX)
    heads = head32.astype(float)
    tails = (tail32 - head32).astype(float)
    rest, bone_mats, roots_after = armature_rest(tails, sk.parents)
    rest_inv = np.linalg.inv(rest)

    # The skeleton skeleton_from_armature reads: same bones after the axis conversion.
    order = depth_first_order(sk.parents)
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    names = blender_bone_names([sk.names[j] for j in order])
    parents = np.array([position[sk.parents[j]] if sk.parents[j] >= 0 else -1 for j in order], dtype=int)
    is_root = parents < 0
    local_rot = np.where(is_root[:, None, None], roots_after[order], bone_mats[order])
    parent_rest = rest[sk.parents[order]]
    offsets = np.linalg.solve(parent_rest, (heads[order] - heads[sk.parents[order]])[..., None])[..., 0]
    local_pos = np.where(is_root[:, None], heads[order] @ Y_UP_TO_Z_UP.T, offsets)
    moving = has_loc[order]
    leaves = np.flatnonzero(np.bincount(parents[parents >= 0], minlength=len(order)) == 0)
    lengths = np.linalg.norm(tails[order], axis=1)
    skeleton = Skeleton(
        names,
        parents,
        local_pos,
        quat.from_matrix(local_rot),
        [
            (*POSITION_CHANNELS, "Zrotation", "Xrotation", "Yrotation")
            if m
            else ("Zrotation", "Xrotation", "Yrotation")
            for m in moving
        ],
        end_site_parents=leaves,
        end_site_offsets=np.stack([np.zeros(len(leaves)), lengths[leaves], np.zeros(len(leaves))], axis=1),
    )

    # Rotation modes, as the importer sets them on the pose bones.
    if mode == "NATIVE":
        modes_by_joint = rot_orders
    else:
        modes_by_joint = [mode] * sk.n_joints
    bone_of = {j: names[position[j]] for j in range(sk.n_joints)}
    modes = {names[i]: modes_by_joint[j] for i, j in enumerate(order)}

    values: dict[tuple[str, str, int], np.ndarray] = {}
    # Locations: rest⁻¹·(bvh location − rest offset); missing position channels read as 0.
    for j in np.flatnonzero(has_loc):
        present = np.array([c in sk.channels[j] for c in POSITION_CHANNELS])
        bvh_loc = np.where(present, s * motion.translations[:, j], 0.0)
        loc = (bvh_loc - s * sk.rest_translations[j]) @ rest_inv[j].T
        for i in range(3):
            values[(bone_of[j], "location", i)] = loc[:, i].astype(_F32)
    # Rotations: rest⁻¹·q·rest, in the bone's mode.
    rot_joints = np.flatnonzero(has_rot)
    if rot_joints.size:
        m = rest_inv[rot_joints] @ quat.to_matrix(motion.rotations[:, rot_joints]) @ rest[rot_joints]  # rest⁻¹·M·rest
        m = m / np.linalg.norm(m, axis=-2, keepdims=True)  # Blender normalises the columns first
        if mode == "QUATERNION":
            q_bone = quat.from_matrix(m)  # w ≥ 0, as Blender's mat3_to_quat
            for c, j in enumerate(rot_joints):
                for i in range(4):
                    values[(bone_of[j], "rotation_quaternion", i)] = q_bone[:, c, i].astype(_F32)
        else:
            joint_modes = np.array([modes_by_joint[j] for j in rot_joints])
            candidates = np.empty((2, motion.n_frames, len(rot_joints), 3), dtype=_F32)
            for euler_order in np.unique(joint_modes):
                cols = np.flatnonzero(joint_modes == euler_order)
                candidates[:, :, cols] = euler_candidates(m[:, cols], str(euler_order))
            euler = compatible_scan(candidates)  # the same scan for every order: it works on x, y, z slots
            for c, j in enumerate(rot_joints):
                for i in range(3):
                    values[(bone_of[j], "rotation_euler", i)] = euler[:, c, i]
    return skeleton, modes, values


_ORDER_INFO = {  # Blender's rotOrders: axis indices i, j, k and parity
    "XYZ": ((0, 1, 2), False),
    "XZY": ((0, 2, 1), True),
    "YXZ": ((1, 0, 2), True),
    "YZX": ((1, 2, 0), False),
    "ZXY": ((2, 0, 1), False),
    "ZYX": ((2, 1, 0), True),
}


def euler_candidates(m: np.ndarray, order: str) -> np.ndarray:
    """Blender's two Euler solutions (``mat3_normalized_to_eulo2``) of rotation matrices m (..., 3, 3).

    Returns (2, ..., 3) angles in radians in x, y, z slots for Blender's Euler mode ``order``
    (extrinsic, ``order[0]`` applied first). Where cos of the middle angle is below 3.75e-5
    (gimbal lock) both solutions put the whole turn into the first axis and zero the last.
    """
    (i, j, k), parity = _ORDER_INFO[order.upper()]
    m = np.asarray(m, dtype=float)
    cy = np.hypot(m[..., i, i], m[..., j, i])
    locked = cy <= _EULER_HYPOT_EPSILON
    e = np.empty((2, *m.shape[:-2], 3))
    e[0, ..., i] = np.where(locked, np.arctan2(-m[..., j, k], m[..., j, j]), np.arctan2(m[..., k, j], m[..., k, k]))
    e[0, ..., j] = np.arctan2(-m[..., k, i], cy)
    e[0, ..., k] = np.where(locked, 0.0, np.arctan2(m[..., j, i], m[..., i, i]))
    e[1, ..., i] = np.arctan2(-m[..., k, j], -m[..., k, k])
    e[1, ..., j] = np.arctan2(-m[..., k, i], -cy)
    e[1, ..., k] = np.arctan2(-m[..., j, i], -m[..., i, i])
    e[1] = np.where(locked[..., None], e[0], e[1])
    return -e if parity else e


def compatible_euler(euler: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Blender's ``compatible_eul`` in float32: ``euler`` (..., 3) moved by whole turns next to ``previous``.

    A component more than π from the previous one is moved by the nearest whole number of
    turns; then a component still more than π away while both others are within π/2 is moved
    one more turn (Blender 3.6+ thresholds).
    """
    eul = np.asarray(euler, dtype=_F32)
    old = np.asarray(previous, dtype=_F32)
    d = eul - old
    size = np.abs(d)
    # eul -= floor(d / 2π + 0.5)·2π above π, eul += floor(-d / 2π + 0.5)·2π below -π: the same turns.
    turns = np.floor(size / _TWO_PI_F + _HALF_F) * (size > _PI_F)
    eul = eul - np.copysign(turns, d) * _TWO_PI_F
    d = eul - old
    size = np.abs(d)
    # C compares these floats with the doubles M_PI and M_PI_2: > M_PI is >= float(M_PI), < M_PI_2 is < float(M_PI_2).
    small = size < _HALF_PI_F
    flip = (size >= _PI_F) & small[..., _NEXT] & small[..., _AFTER_NEXT]
    return eul - np.copysign(flip, d).astype(_F32) * _TWO_PI_F


def compatible_euler_sequence(m: np.ndarray, order: str, previous: np.ndarray | None = None) -> np.ndarray:
    """Euler keys (T, ..., 3) float32 Blender writes for rotation matrices m (T, ..., 3, 3), frame after frame
    ``Matrix.to_euler(order, previous)`` starting from ``previous`` (default zeros), as its BVH importer does.

    Of the two solutions (:func:`euler_candidates`), each made compatible with the previous key
    (:func:`compatible_euler`), the one with the smaller sum of absolute differences is kept
    (the first on a tie). Vectorised over the trailing axes and over frames (:func:`compatible_scan`).
    """
    return compatible_scan(euler_candidates(m, order), previous)


def compatible_scan(candidates: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
    """The scan of :func:`compatible_euler_sequence` on precomputed solutions (2, T, ..., 3); (T, ..., 3) float32.

    Vectorised over frames too: ``compatible_eul`` only moves angles by whole turns, so which of
    the two solutions frame t keeps depends only on which one frame t − 1 kept (as angles mod
    2π). Each frame's choice for both possible predecessors is one array operation, the chain
    of choices is composed by doubling (log₂ T steps), and the whole turns then accumulate as
    a cumulative sum. Same float32 operations as Blender's per-frame loop
    (:func:`compatible_scan_loop`, kept as the reference).
    """
    c = np.asarray(candidates, dtype=_F32)
    n = c.shape[1]
    out = np.empty(c.shape[1:], dtype=_F32)
    if n == 0:
        return out
    prev = np.zeros(c.shape[2:], dtype=_F32) if previous is None else np.asarray(previous, dtype=_F32)
    first, state = _compatible_step(c[:, 0], prev)
    out[0] = first
    if n == 1:
        return out
    # choice[p, t - 1]: the solution kept at frame t when frame t - 1 kept solution p.
    _, choice = _compatible_step(c[None, :, 1:], c[:, None, :-1])
    maps = np.moveaxis(choice, 0, -1)  # (T - 1, ..., 2): maps[t - 1][p]
    step = 1
    while step < n - 1:  # maps[i] becomes choice[i] ∘ choice[i - 1] ∘ … ∘ choice[0]
        maps[step:] = np.take_along_axis(maps[step:], maps[:-step], axis=-1)
        step *= 2
    index = np.broadcast_to(state[None, ..., None], (*maps.shape[:-1], 1))
    states = np.concatenate((state[None], np.take_along_axis(maps, index, axis=-1)[..., 0]))
    kept = np.where(states[..., None] == 1, c[1], c[0])  # (T, ..., 3) principal angles kept
    # Whole turns: frame t moves its angles by compatible_eul's turns relative to frame t - 1.
    delta = kept[1:] - kept[:-1]
    size = np.abs(delta)
    first_pass = np.copysign(np.floor(size / _TWO_PI_F + _HALF_F) * (size > _PI_F), delta)
    after = delta - first_pass * _TWO_PI_F
    size = np.abs(after)
    small = size < _HALF_PI_F
    flips = np.copysign((size >= _PI_F) & small[..., _NEXT] & small[..., _AFTER_NEXT], after).astype(_F32)
    turns0 = np.round((first.astype(float) - kept[0]) / (2 * np.pi))  # frame 0's turns relative to `previous`
    total = turns0 - np.cumsum(first_pass + flips, axis=0)  # turns of frame t's key over its principal angles
    before = np.concatenate((turns0[None], total[:-1]))
    # Blender: eul = kept - n·2π with n = turns relative to the previous key, then the flip turn.
    shift = (first_pass - before).astype(_F32)
    out[1:] = (kept[1:] - (shift * _TWO_PI_F)) - flips * _TWO_PI_F
    return out


def _compatible_step(candidates: np.ndarray, previous: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One ``mat3_normalized_to_compatible_eulO`` choice: the key kept (..., 3) and which solution (...) int8."""
    both = compatible_euler(candidates, previous)
    dist = np.abs(both - previous)
    dist = dist[..., 0] + dist[..., 1] + dist[..., 2]
    second = dist[0] > dist[1]
    return np.where(second[..., None], both[1], both[0]), second.astype(np.int8)


def compatible_scan_loop(candidates: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
    """:func:`compatible_scan` frame after frame, as Blender's importer runs it (the reference)."""
    candidates = np.asarray(candidates, dtype=_F32)
    prev = np.zeros(candidates.shape[2:], dtype=_F32) if previous is None else np.asarray(previous, dtype=_F32)
    out = np.empty(candidates.shape[1:], dtype=_F32)
    for t in range(candidates.shape[1]):
        prev, _ = _compatible_step(candidates[:, t], prev)
        out[t] = prev
    return out
