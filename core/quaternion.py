"""Vectorised unit-quaternion maths on arrays of shape (..., 4), components **w, x, y, z**.

Every function broadcasts over leading axes (frames, joints, ...). Rotations act on column
vectors: ``rotate(q, v)`` is ``q v q⁻¹``, and ``multiply(a, b)`` applies ``b`` first, then
``a`` (the same convention as Blender's ``mathutils`` and scipy's ``Rotation``).
"""

from __future__ import annotations

import numpy as np

AXES = "XYZ"
EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")  # the six Tait–Bryan orders (Blender's modes)


def identity(shape: tuple[int, ...] = ()) -> np.ndarray:
    """Identity quaternions of the given leading shape, (*shape, 4)."""
    q = np.zeros((*shape, 4))
    q[..., 0] = 1.0
    return q


def normalize(q: np.ndarray) -> np.ndarray:
    """Scale quaternions to unit length; a zero quaternion becomes the identity."""
    q = np.asarray(q, dtype=float)
    n = length(q)[..., None]
    out = np.divide(q, n, out=np.zeros_like(q), where=n > 0)
    out[..., 0] = np.where(n[..., 0] > 0, out[..., 0], 1.0)
    return out


def multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a·b (apply b, then a); broadcasts (..., 4) × (..., 4). Each component is written
    into the result in place (no stack of four temporaries: up to 2× faster on the (T, J, 4) arrays)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    aw, ax, ay, az = (a[..., i] for i in range(4))
    bw, bx, by, bz = (b[..., i] for i in range(4))
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = aw * bw - ax * bx - ay * by - az * bz
    out[..., 1] = aw * bx + ax * bw + ay * bz - az * by
    out[..., 2] = aw * by - ax * bz + ay * bw + az * bx
    out[..., 3] = aw * bz + ax * by - ay * bx + az * bw
    return out


def conjugate(q: np.ndarray) -> np.ndarray:
    """Conjugate (w, -x, -y, -z): the inverse of a unit quaternion."""
    q = np.array(q, dtype=float)
    q[..., 1:] *= -1.0
    return q


inverse = conjugate


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors v (..., 3) by unit quaternions q (..., 4): q v q⁻¹."""
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    w, x, y, z = (q[..., i] for i in range(4))
    vx, vy, vz = (v[..., i] for i in range(3))
    tx, ty, tz = 2.0 * (y * vz - z * vy), 2.0 * (z * vx - x * vz), 2.0 * (x * vy - y * vx)
    return np.stack(
        (vx + w * tx + y * tz - z * ty, vy + w * ty + z * tx - x * tz, vz + w * tz + x * ty - y * tx), axis=-1
    )


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Four-dimensional dot product, shape (...)."""
    return np.einsum("...i,...i->...", np.asarray(a, dtype=float), np.asarray(b, dtype=float))


def distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shen/Sun/Pan rotation distance arccos(|w|) of b·a⁻¹, in radians, shape (...).

    Equals |⟨a, b⟩| inside the arccos, so q and −q count as the same rotation. It is half
    the angle of the rotation taking a to b (range 0..π/2).
    """
    return np.arccos(np.clip(np.abs(dot(a, b)), 0.0, 1.0))


def angle(q: np.ndarray) -> np.ndarray:
    """Rotation angle of unit quaternions in radians, 0..π, shape (...)."""
    return 2.0 * np.arccos(np.clip(np.abs(np.asarray(q)[..., 0]), 0.0, 1.0))


def make_continuous(q: np.ndarray, axis: int = 0) -> np.ndarray:
    """Flip signs along ``axis`` so consecutive quaternions have a non-negative dot product.

    q and −q are the same rotation, but Blender interpolates each component separately, so
    a sign flip between two keys swings the pose through a wrong rotation.
    """
    q = np.moveaxis(np.asarray(q, dtype=float), axis, 0)
    if q.shape[0] < 2:
        return np.moveaxis(q.copy(), 0, axis)
    flips = inner(q[1:], q[:-1]) < 0.0
    sign = np.ones(q.shape[:-1])
    sign[1:] = np.where(np.cumsum(flips, axis=0) % 2 == 1, -1.0, 1.0)
    return np.moveaxis(q * sign[..., None], 0, axis)


def slerp(a: np.ndarray, b: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """Spherical linear interpolation from a (t=0) to b (t=1) along the shorter arc.

    a, b: (..., 4) unit quaternions; t broadcasts against their leading shape (...).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    t = np.asarray(t, dtype=float)
    d = dot(a, b)
    sign = np.where(d < 0.0, -1.0, 1.0)
    theta = np.arccos(np.minimum(np.abs(d), 1.0))
    sin_theta = np.sin(theta)
    near = sin_theta < 1e-6
    safe = np.where(near, 1.0, sin_theta)
    wa = np.where(near, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    wb = np.where(near, t, np.sin(t * theta) / safe) * sign
    # Where sin θ < 1e-6 the linear fallback stays unit to within θ²/8 < 1e-12.
    return wa[..., None] * a + wb[..., None] * b


def log(q: np.ndarray) -> np.ndarray:
    """Quaternion logarithm of unit quaternions: vectors v (..., 3) with q = exp(v).

    |v| is half the rotation angle; the result takes the w ≥ 0 representative.
    """
    q = np.asarray(q, dtype=float)
    q = np.where(q[..., :1] < 0.0, -q, q)
    u = q[..., 1:]
    s = length(u)[..., None]
    half = np.arctan2(s, q[..., :1])
    scale = np.where(s > 1e-12, half / np.where(s > 1e-12, s, 1.0), 1.0)
    return u * scale


def exp(v: np.ndarray) -> np.ndarray:
    """Quaternion exponential of vectors v (..., 3): (cos|v|, sin|v| v/|v|)."""
    v = np.asarray(v, dtype=float)
    n = length(v)[..., None]
    sinc = np.where(n > 1e-12, np.sin(n) / np.where(n > 1e-12, n, 1.0), 1.0)
    return np.concatenate((np.cos(n), v * sinc), axis=-1)


def from_axis_angle(axis: np.ndarray, angle_rad: np.ndarray) -> np.ndarray:
    """Quaternions from rotation axes (..., 3) (normalised here) and angles (...) in radians."""
    axis = np.asarray(axis, dtype=float)
    n = length(axis)[..., None]
    unit = np.divide(axis, n, out=np.zeros_like(axis), where=n > 0)
    half = 0.5 * np.asarray(angle_rad, dtype=float)[..., None]
    return np.concatenate((np.cos(half), np.sin(half) * unit), axis=-1)


def between(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Shortest-arc unit quaternions (..., 4) rotating directions u onto v (..., 3); lengths are ignored.

    Antiparallel pairs turn by π about an axis perpendicular to u; a zero vector gives the identity.
    """
    u = np.asarray(u, dtype=float)
    v = np.asarray(v, dtype=float)
    nu = length(u)[..., None]
    nv = length(v)[..., None]
    u = np.divide(u, nu, out=np.zeros(np.broadcast_shapes(u.shape, v.shape)), where=nu > 0)
    v = np.divide(v, nv, out=np.zeros(u.shape), where=nv > 0)
    c = inner(u, v)[..., None]
    # Any axis perpendicular to u for the antiparallel case: cross with the least aligned basis axis.
    basis = np.eye(3)[np.argmin(np.abs(u), axis=-1)]
    perp = cross(u, basis)
    anti = (c < -1.0 + 1e-9) & (nu > 0) & (nv > 0)
    half_turn = np.concatenate((np.zeros_like(c), perp), axis=-1)
    q = np.where(anti, half_turn, np.concatenate((1.0 + c, cross(u, v)), axis=-1))
    return normalize(q)


def to_axis_angle(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Axes (..., 3) and angles (...) in radians (0..π); identity gives axis (0, 1, 0)."""
    v = log(q)
    n = length(v)
    axis = np.where(n[..., None] > 1e-12, v / np.where(n > 1e-12, n, 1.0)[..., None], [0.0, 1.0, 0.0])
    return axis, 2.0 * n


def _axis_quaternion(axis: str, angle_rad: np.ndarray) -> np.ndarray:
    q = np.zeros((*np.shape(angle_rad), 4))
    q[..., 0] = np.cos(0.5 * angle_rad)
    q[..., 1 + AXES.index(axis)] = np.sin(0.5 * angle_rad)
    return q


def _check_order(order: str) -> str:
    order = order.upper()
    if order not in EULER_ORDERS:
        raise ValueError(f"Euler order must be a permutation of 'XYZ', got {order!r}")
    return order


def from_euler(angles: np.ndarray, order: str, extrinsic: bool = True) -> np.ndarray:
    """Quaternions from Euler angles (..., 3) in radians; ``angles[..., i]`` is about ``order[i]``.

    extrinsic=True (Blender's convention): rotate about the fixed axes in sequence,
    ``order[0]`` first, so q = q₂·q₁·q₀. Blender's mode ``'XYZ'`` with ``rotation_euler``
    (x, y, z) is ``from_euler(xyz, "XYZ")``; for mode 'ZXY' pass ``xyz[..., [2, 0, 1]]``.

    extrinsic=False (BVH's convention): channel order read left to right, each rotation
    about the axes already rotated by the previous ones, so q = q₀·q₁·q₂. A BVH joint with
    ``Zrotation Xrotation Yrotation`` and values (z, x, y) is ``from_euler(zxy, "ZXY", False)``.

    Each component of the product is a signed sum of two products of the half angles' cosines and
    sines (:func:`_euler_terms`), computed directly (3–4× faster than two general products).
    """
    order = _check_order(order)
    angles = np.asarray(angles, dtype=float)
    half = [0.5 * angles[..., i] for i in range(3)]
    trig = [(np.cos(h), np.sin(h)) for h in half]  # (cos, sin) of each half angle
    pairs = {(f0, f1): trig[0][f0] * trig[1][f1] for f0 in (0, 1) for f1 in (0, 1)}
    out = np.empty((*angles.shape[:-1], 4))
    for component, ((sign_a, a), (sign_b, b)) in enumerate(_euler_terms(order, extrinsic)):
        first = pairs[a[:2]] * trig[2][a[2]]
        second = pairs[b[:2]] * trig[2][b[2]]
        out[..., component] = first + second if sign_a == sign_b else first - second
        if sign_a < 0:
            out[..., component] *= -1.0
    return out


_EULER_TERMS: dict[tuple[str, bool], tuple] = {}


def _euler_terms(order: str, extrinsic: bool) -> tuple:
    """For each component (w, x, y, z) of the product of the three axis rotations of ``order``, its two
    terms (sign, (f₀, f₁, f₂)): ± the product of each angle's half-angle cosine (f = 0) or sine (f = 1).
    Worked out once an order by multiplying the axis quaternions symbolically."""
    key = (order, extrinsic)
    if key not in _EULER_TERMS:

        def axis(i: int) -> list[dict]:  # c_i + s_i·e_axis as components of polynomials {factors: coefficient}
            q = [{} for _ in range(4)]
            q[0][((i, 0),)] = 1.0
            q[1 + AXES.index(order[i])][((i, 1),)] = 1.0
            return q

        def times(p: dict, r: dict) -> dict:
            out: dict = {}
            for fp, cp in p.items():
                for fr, cr in r.items():
                    f = tuple(sorted(fp + fr))
                    out[f] = out.get(f, 0.0) + cp * cr
            return out

        def product(a: list[dict], b: list[dict]) -> list[dict]:
            signs = (  # Hamilton product: component → (sign, a's, b's)
                ((1, 0, 0), (-1, 1, 1), (-1, 2, 2), (-1, 3, 3)),
                ((1, 0, 1), (1, 1, 0), (1, 2, 3), (-1, 3, 2)),
                ((1, 0, 2), (-1, 1, 3), (1, 2, 0), (1, 3, 1)),
                ((1, 0, 3), (1, 1, 2), (-1, 2, 1), (1, 3, 0)),
            )
            out = []
            for terms in signs:
                total: dict = {}
                for sign, i, j in terms:
                    for f, c in times(a[i], b[j]).items():
                        total[f] = total.get(f, 0.0) + sign * c
                out.append({f: c for f, c in total.items() if c != 0.0})
            return out

        q0, q1, q2 = axis(0), axis(1), axis(2)
        q = product(q2, product(q1, q0)) if extrinsic else product(q0, product(q1, q2))
        terms = []
        for component in q:
            pair = []
            for factors, c in sorted(component.items()):
                flags = dict(factors)
                pair.append((1 if c > 0 else -1, (flags[0], flags[1], flags[2])))
            terms.append(tuple(pair))
        _EULER_TERMS[key] = tuple(terms)
    return _EULER_TERMS[key]


def to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) from unit quaternions (..., 4)."""
    w, x, y, z = np.moveaxis(normalize(q), -1, 0)
    return np.stack(
        (
            np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)), -1),
            np.stack((2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)), -1),
            np.stack((2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)), -1),
        ),
        axis=-2,
    )


def from_matrix(m: np.ndarray) -> np.ndarray:
    """Unit quaternions (..., 4) with w ≥ 0 from rotation matrices (..., 3, 3).

    Shepperd's method: build the candidate from the largest of w², x², y², z² so the
    division never goes through a small number.
    """
    m = np.asarray(m, dtype=float)
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    trace = m00 + m11 + m22
    cands = np.stack(
        (
            np.stack(
                (1 + trace, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]), -1
            ),
            np.stack(
                (
                    m[..., 2, 1] - m[..., 1, 2],
                    1 + m00 - m11 - m22,
                    m[..., 0, 1] + m[..., 1, 0],
                    m[..., 0, 2] + m[..., 2, 0],
                ),
                -1,
            ),
            np.stack(
                (
                    m[..., 0, 2] - m[..., 2, 0],
                    m[..., 0, 1] + m[..., 1, 0],
                    1 - m00 + m11 - m22,
                    m[..., 1, 2] + m[..., 2, 1],
                ),
                -1,
            ),
            np.stack(
                (
                    m[..., 1, 0] - m[..., 0, 1],
                    m[..., 0, 2] + m[..., 2, 0],
                    m[..., 1, 2] + m[..., 2, 1],
                    1 - m00 - m11 + m22,
                ),
                -1,
            ),
        ),
        axis=-2,
    )
    pick = np.argmax(np.stack((trace, m00, m11, m22), -1), axis=-1)
    q = np.take_along_axis(cands, pick[..., None, None], axis=-2)[..., 0, :]
    q = normalize(q)
    return np.where(q[..., :1] < 0, -q, q)


def to_euler(q: np.ndarray, order: str, extrinsic: bool = True) -> np.ndarray:
    """Euler angles (..., 3) in radians, the inverse of :func:`from_euler` with the same arguments.

    The middle angle lies in [-π/2, π/2]; at gimbal lock the last angle is set to zero.
    """
    order = _check_order(order)
    if not extrinsic:
        return to_euler(q, order[::-1], extrinsic=True)[..., ::-1]
    a, b, c = euler_parts(q, order)
    out = np.empty((*b.shape, 3))
    out[..., 0], out[..., 1], out[..., 2] = a, b, c
    return out


def euler_parts(q: np.ndarray, order: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`to_euler` (extrinsic) as its three angles (...) apart: each a contiguous array, for callers
    that work an angle at a time."""
    i, j, k = (AXES.index(a) for a in _check_order(order))
    # Extrinsic i→j→k is R = Rk·Rj·Ri; the sign of the permutation decides the formulas.
    sign = 1.0 if (j - i) % 3 == 1 else -1.0
    r = _matrix_entries(q, ((k, i), (k, j), (k, k), (j, i), (i, i), (j, k), (j, j)))
    sin_b = np.clip(-sign * r[k, i], -1.0, 1.0)
    b = np.arcsin(sin_b)
    # locked where cos b (the norm of the first angle's entries) is under 1e-8: the plain formulas' angles then lose
    # about 1e-16 / cos b and putting a ± c into a misses by about cos b, both under 3e-8 rad. (At |sin b| > 1 − 1e-9,
    # the test before, cos b reached 4.5e-5: an ASF bone's rest direction came back 5e-4 units off.)
    locked = np.hypot(r[k, j], r[k, k]) < 1e-8
    a = np.arctan2(sign * r[k, j], r[k, k])
    c = np.arctan2(sign * r[j, i], r[i, i])
    # At gimbal lock only a ± c is defined: put all of it into a.
    if locked.any():
        a = np.where(locked, np.arctan2(-sign * r[j, k], r[j, j]), a)
        c = np.where(locked, 0.0, c)
    return a, b, c


def _matrix_entries(q: np.ndarray, entries: tuple) -> dict:
    """Entries (row, column) → values (...) of the rotation matrices of quaternions q (..., 4), as
    :func:`to_matrix` gives them (of the normalised q), computing only those asked for."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = (q[..., c] for c in range(4))
    scale = 2.0 / (w * w + x * x + y * y + z * z)  # normalising q scales each product by 1/|q|²
    squares = {0: x * x, 1: y * y, 2: z * z}
    out = {}
    for row, col in entries:
        if row == col:
            others = [squares[a] for a in range(3) if a != row]
            out[row, col] = 1.0 - scale * (others[0] + others[1])
            continue
        a, b = (x, y, z)[row], (x, y, z)[col]
        third = w * (x, y, z)[3 - row - col]
        # m[a][b] = 2(q_a q_b ∓ w q_c): + when (a, b) is an odd permutation step (b = a − 1 mod 3)
        out[row, col] = scale * (a * b + third if (col - row) % 3 == 2 else a * b - third)
    return out


def to_euler_axes(q: np.ndarray, axes: str, extrinsic: bool = True) -> np.ndarray:
    """Angles (..., k) in radians about the k ≤ 3 distinct ``axes`` (e.g. "ZX"), the inverse
    of composing them like :func:`from_euler` does.

    For three axes this is :func:`to_euler`. With one or two axes the rotation is assumed to
    be made of those axes only (a joint with fewer channels) and every angle is recovered
    over the full ±π range: completing the order to three axes and dropping one would fold
    a middle angle beyond ±π/2 into the dropped axis (±π there).
    """
    axes = axes.upper()
    q = np.asarray(q, dtype=float)
    if len(axes) == 3:
        return to_euler(q, axes, extrinsic)
    if not extrinsic:
        return to_euler_axes(q, axes[::-1], extrinsic=True)[..., ::-1]
    if not axes:
        return np.zeros((*q.shape[:-1], 0))
    first = np.eye(3)[AXES.index(axes[0])]
    if len(axes) == 2:
        # M = R_b(β)·R_a(α) takes axis a to R_b(β)·a, which gives β; R_b(-β)·M is R_a(α).
        second = np.eye(3)[AXES.index(axes[1])]
        moved = rotate(q, first)
        beta = np.arctan2(np.cross(first, moved) @ second, moved @ first)
        rest = multiply(from_axis_angle(second, -beta), q)
        return np.stack((_angle_about(rest, axes[0]), beta), axis=-1)
    return _angle_about(q, axes[0])[..., None]


def _angle_about(q: np.ndarray, axis: str) -> np.ndarray:
    """Angle in (-π, π] of rotations about one coordinate axis."""
    angle = 2.0 * np.arctan2(q[..., 1 + AXES.index(axis)], q[..., 0])
    return np.mod(angle + np.pi, 2.0 * np.pi) - np.pi


def multiply_parts(a: tuple, b: tuple) -> tuple:
    """Hamilton product a·b of quaternions split into their components (w, x, y, z).

    The split form lets hot loops (forward kinematics, segment tables) work on contiguous
    per-component arrays instead of strided (..., 4) ones.
    """
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def rotate_parts(q: tuple, v: tuple) -> tuple:
    """Vector components (x, y, z) rotated by unit-quaternion components (w, x, y, z)."""
    w, qx, qy, qz = q
    vx, vy, vz = v
    tx, ty, tz = 2 * (qy * vz - qz * vy), 2 * (qz * vx - qx * vz), 2 * (qx * vy - qy * vx)
    return (
        vx + w * tx + qy * tz - qz * ty,
        vy + w * ty + qz * tx - qx * tz,
        vz + w * tz + qx * ty - qy * tx,
    )


def inner(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Dot products (...,) of vectors a, b (..., C) (broadcast), the products summed component by component in
    order: the same values as ``np.sum(a * b, axis=-1)``, several times faster on the (..., 2) and (..., 3) arrays
    of the hot loops (no reduction over a short axis). Vectors of no components, or a component axis broadcast
    (C = 1 against C > 1), take numpy's sum itself."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape[-1] != b.shape[-1] or a.shape[-1] == 0:
        return np.sum(a * b, axis=-1)
    total = a[..., 0] * b[..., 0]
    for c in range(1, a.shape[-1]):
        total += a[..., c] * b[..., c]
    return total


def length(v: np.ndarray) -> np.ndarray:
    """Euclidean lengths (...,) of vectors v (..., C): the same values as ``np.linalg.norm(v, axis=-1)``
    (:func:`inner`'s order), 1.5–3× faster on (..., 2) and (..., 3) arrays of 500 to 75,000 values (CPU time; on a
    single vector numpy's is faster)."""
    return np.sqrt(inner(v, v))


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Vector product (..., 3) of 3-vectors a, b (broadcast): numpy's formula component by component, the same
    values as ``np.cross`` several times faster on the (T, J, 3) arrays of the hot loops (no axis moves)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    np.subtract(a1 * b2, a2 * b1, out=out[..., 0])
    np.subtract(a2 * b0, a0 * b2, out=out[..., 1])
    np.subtract(a0 * b1, a1 * b0, out=out[..., 2])
    return out
