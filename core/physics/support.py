"""Support polygons on flat ground: foot boxes, convex hulls, point-in-polygon, distances.

Everything works in 2-D ground coordinates (e1, e2) with e1 × e2 = up (:func:`ground_basis`).
A foot in contact is a box around its ankle and toe tip projected on the ground (see
:func:`core.physics.dynamics.support_from`); the support polygon of a frame is the convex hull
of the boxes in contact.

The per-frame hulls are vectorised over frames with a fixed number of candidate points P
(4 per foot): the directed pair (i, j) is a counter-clockwise hull edge when every other
active point lies on its left (cross product ≥ −ε). Inside tests, distances and projections
use those edge masks directly — no per-frame Python loop. :func:`convex_hull` (Andrew's
monotone chain) returns the ordered hull of one point set, for drawing.
The edge mask costs O(P³) per frame once; queries then use one edge per hull point.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import quaternion as quat

EPS = 1e-7  # of the squared size of a frame's support (its points' spread, its longest edge): cross products within count as on a line


def ground_basis(up: np.ndarray) -> np.ndarray:
    """(2, 3) orthonormal rows e1, e2 spanning the ground plane, with e1 × e2 = up."""
    up = np.asarray(up, dtype=float) / np.linalg.norm(up)
    helper = np.eye(3)[int(np.argmin(np.abs(up)))]
    e1 = np.cross(helper, up)
    e1 /= np.linalg.norm(e1)
    return np.stack((e1, np.cross(up, e1)))


def to_ground(points: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Ground coordinates (..., 2) of 3-D points (..., 3)."""
    return np.asarray(points, dtype=float) @ basis.T


def from_ground(points2: np.ndarray, basis: np.ndarray, up: np.ndarray, height: float) -> np.ndarray:
    """3-D points (..., 3) at ``height`` along ``up`` from ground coordinates (..., 2)."""
    return np.asarray(points2) @ basis + height * np.asarray(up)


def foot_boxes(
    start2: np.ndarray, tip2: np.ndarray, back: np.ndarray, half_width: np.ndarray, axis: np.ndarray | None = None
) -> np.ndarray:
    """(..., 4, 2) counter-clockwise corners of boxes from ``back`` behind ``start`` to ``tip``, ±``half_width``.

    start2, tip2: (..., 2) ground points; back, half_width: (...,) lengths in the same units; axis:
    (..., 2) the box's forward direction where start and tip coincide on the ground (a toe whose tip
    is the toe joint itself: a zero End Site offset), any length (without it such a box is a point).
    """
    d = tip2 - start2
    length = quat.length(d)[..., None]
    if axis is not None:
        d = np.where(length > 1e-12, d, axis)
        length = quat.length(d)[..., None]
    d = np.divide(d, length, out=np.zeros_like(d), where=length > 1e-12)
    n = np.stack((-d[..., 1], d[..., 0]), axis=-1)  # d turned +90°: the left of the foot
    rear = start2 - np.asarray(back)[..., None] * d
    half = np.asarray(half_width)[..., None] * n
    return np.stack((rear - half, tip2 - half, tip2 + half, rear + half), axis=-2)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


HULL_CHUNK = 64  # frames per block of :func:`hull_edges` (its (block, P, P) arrays stay in cache)


def hull_edges(points: np.ndarray, active: np.ndarray) -> np.ndarray:
    """(..., P, P) bool: (i, j) is a counter-clockwise edge of the hull of the active points.

    points: (..., P, 2); active: (..., P) bool. Collinear and duplicate points may add
    redundant edges along the same boundary line, which no test here minds. Computed in blocks
    of ``HULL_CHUNK`` frames (800 frames of 16 points, all active: 14–16 ms of CPU against 32–33 ms at once; with
    5 % of the points inactive about the same, 14–15 ms against 13–14).
    """
    p = points.shape[-2]
    flat, flags = points.reshape(-1, p, 2), active.reshape(-1, p)
    # about each frame's own first point, the tolerance scaled by the points' spread: scaled by their distance
    # from the origin, CMU 02_01 moved 56 m along the floor got near-collinear points as hull edges and its
    # input read 6 frames over a torque limit (worst 1.56) instead of 3 (1.05)
    flat = flat - flat[:, :1]
    out = np.zeros((len(flat), p, p), dtype=bool)
    scale = np.maximum(np.abs(flat).max(axis=(-1, -2), initial=0.0), 1.0)
    # Frames grouped by how many points are active, the hull computed on those alone (an inactive point
    # has no edge and bounds none: the same edges, at a fraction of the O(P³) work when few are active).
    count = flags.sum(axis=1)
    for k in np.unique(count[count > 1]):
        rows = np.flatnonzero(count == k)
        cols = np.nonzero(flags[rows])[1].reshape(len(rows), k)  # the active points, in order
        sub = np.take_along_axis(flat[rows], cols[..., None], axis=1)
        for s in range(0, len(rows), HULL_CHUNK):
            r, c = rows[s : s + HULL_CHUNK], cols[s : s + HULL_CHUNK]
            edges = _hull_edges(sub[s : s + HULL_CHUNK], np.ones(c.shape, dtype=bool), scale[r])
            out[r[:, None, None], c[:, :, None], c[:, None, :]] = edges
    return out.reshape(*points.shape[:-2], p, p)


def _hull_edges(points: np.ndarray, active: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    # (P_j − P_i) × (P_k − P_i) = C[i, j] + C[j, k] + C[k, i] with C[a, b] = P_a × P_b: two sums per triple instead
    # of two products and a difference (exactly 0 where two of i, j, k coincide; else within a few ulps of |P|²,
    # far under the tolerance EPS·scale² below); one third point k at a time (the (..., i, j) arrays stay small:
    # a block of 64 frames of 16 points 0.9–1.1 ms of CPU against 3.9–4.3 ms for the whole (..., i, j, k) array)
    c = _cross(points[..., :, None, :], points[..., None, :, :])  # (..., a, b)
    if scale is None:
        scale = np.maximum(np.abs(points).max(axis=(-1, -2)), 1.0)
    tolerance = (-EPS * scale**2)[..., None, None]
    pair = active[..., :, None] & active[..., None, :] & ~np.eye(points.shape[-2], dtype=bool)
    for k in range(points.shape[-2]):  # every active k on the left of i → j (or on it)
        left = (c + c[..., None, :, k]) + c[..., k, :, None] >= tolerance
        pair &= left | ~active[..., k, None, None]
    return pair


def hull_chain(points: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Compact hull edges: for each point (..., P) the end point (..., P, 2) of its edge and whether it has one.

    From the edge mask of :func:`hull_edges`, each hull point keeps its nearest counter-clockwise
    neighbour along the boundary (so collinear points chain up and cover it); interior and
    inactive points have none.
    """
    length = quat.length(points[..., None, :, :] - points[..., :, None, :])
    cand = np.where(edges & (length > 0), length, np.inf)
    nxt = np.argmin(cand, axis=-1)
    valid = np.isfinite(np.take_along_axis(cand, nxt[..., None], axis=-1)[..., 0])
    return np.take_along_axis(points, nxt[..., None], axis=-2), valid


def _segment_closest(q: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Closest points (..., 2) on segments a→b to q (broadcast)."""
    ab = b - a
    den = quat.inner(ab, ab)
    t = np.clip(quat.inner((q - a), ab) / np.where(den > 0, den, 1.0), 0.0, 1.0)
    return a + t[..., None] * ab


def polygon_query(
    start: np.ndarray, end: np.ndarray, valid: np.ndarray, q: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inside flag (...,), signed distance (...,) (negative inside) and the nearest polygon point (..., 2).

    start, end: (..., E, 2) counter-clockwise boundary edges of a convex polygon, valid
    (..., E) which of them exist (:func:`hull_chain`); q: (..., 2). Frames with no edge (no
    support) are outside at distance +inf, nearest point NaN. A NaN q is outside.
    """
    inside, signed, nearest, _, _ = _query(start, end, valid, q)
    return inside, signed, nearest


def _query(start: np.ndarray, end: np.ndarray, valid: np.ndarray, q: np.ndarray) -> tuple:
    """:func:`polygon_query`'s inside, signed distance and nearest point, plus the nearest boundary point
    and its edge's inward normal (:func:`_nearest_on_boundary`)."""
    qq = q[..., None, :]
    inside = _inside(start, end, valid, q)
    d, boundary, normal = _nearest_on_boundary(start, end, valid, qq)
    nearest = np.where(inside[..., None], q, boundary)
    return inside, np.where(inside, -d, d), nearest, boundary, normal


def _inside(start: np.ndarray, end: np.ndarray, valid: np.ndarray, q: np.ndarray) -> np.ndarray:
    """:func:`polygon_query`'s inside flag (...,) alone."""
    side = _cross(end - start, q[..., None, :] - start)  # (..., E)
    scale = np.maximum(np.where(valid, quat.length(end - start), 0.0).max(axis=-1, initial=0.0), 1.0)  # the edges'
    inside = np.all(np.where(valid, side >= -EPS * scale[..., None] ** 2, True), axis=-1)
    return inside & valid.any(axis=-1) & np.all(np.isfinite(q), axis=-1)


def _nearest_on_boundary(start: np.ndarray, end: np.ndarray, valid: np.ndarray, qq: np.ndarray):
    """Distance (...,) to the nearest boundary point (..., 2) of q (..., 1, 2), inside or not (inf,
    NaN: no edge), and the inward normal (..., 2) of that point's edge (counter-clockwise: left)."""
    closest = _segment_closest(qq, start, end)
    dist = np.where(valid, quat.length(closest - qq), np.inf)
    best = np.argmin(dist, axis=-1)[..., None]
    d = np.take_along_axis(dist, best, axis=-1)[..., 0]
    nearest = np.take_along_axis(closest, best[..., None], axis=-2)[..., 0, :]
    edge = np.take_along_axis(end - start, best[..., None], axis=-2)[..., 0, :]
    return d, np.where(np.isfinite(d)[..., None], nearest, np.nan), np.stack((-edge[..., 1], edge[..., 0]), axis=-1)


def project_inside(
    start: np.ndarray, end: np.ndarray, valid: np.ndarray, q: np.ndarray, margin: float = 0.0
) -> np.ndarray:
    """q (..., 2) moved to the nearest point at least ``margin`` inside the polygon (unchanged when already there).

    The goal is ``margin`` from the nearest boundary point along the inward normal there (that
    edge's normal for a point on the boundary) and never farther than the centroid of the
    polygon's vertices (near sharp corners the result can be less than ``margin`` from the other
    edge), so a point ``d`` inside moves by ``margin − d``: the distance to the goal is
    continuous in q.
    """
    inside, signed, _, boundary, edge_normal = _query(start, end, valid, q)
    n = np.maximum(valid.sum(axis=-1, keepdims=True), 1)
    centroid = np.sum(np.where(valid[..., None], start, 0.0), axis=-2) / n
    to_c = centroid - boundary
    span = quat.length(to_c)
    normal = np.where(inside[..., None], q - boundary, boundary - q)
    length = quat.length(normal)
    direction = np.where((length > 1e-9 * np.maximum(span, 1.0))[..., None], normal, edge_normal)
    size = quat.length(direction)
    unit = np.divide(direction, size[..., None], out=np.zeros_like(direction), where=size[..., None] > 1e-12)
    goal = boundary + np.minimum(margin, span)[..., None] * unit
    return np.where((signed <= -margin)[..., None], q, goal)


def convex_hull(points: np.ndarray) -> np.ndarray:
    """(H, 2) counter-clockwise hull of points (N, 2), Andrew's monotone chain (collinear points dropped)."""
    pts = np.unique(np.asarray(points, dtype=float), axis=0)
    if len(pts) < 3:
        return pts

    def half(seq: np.ndarray) -> list:
        out: list = []
        for p in seq:
            while len(out) >= 2 and _cross(out[-1] - out[-2], p - out[-2]) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


class Support:
    """Support polygons of a clip, from B foot boxes (T, B, 4, 2) in ground coordinates with their
    contact flags (T, B) and the joints (B,) that take each box's share of the ground force.

    points (T, 4B, 2) and active (T, 4B) are the candidate hull points; each point's hull edge
    ends at end (T, 4B, 2) where valid (T, 4B) (:func:`hull_chain`); basis
    (2, 3), up (3,) and ground (height along up) place the ground plane, scene units. steady (T,): the frames
    some box's joint bears steadily (:func:`core.contacts.bearing`'s ``steady``; default the frames with a box in
    contact), the frames a flight (:func:`.metrics.flights`) cannot include.
    """

    def __init__(
        self, boxes: np.ndarray, flags: np.ndarray, joints: np.ndarray, basis, up, ground: float, steady=None
    ):  # fmt: skip
        t, b = flags.shape
        self.boxes = np.asarray(boxes, dtype=float)
        self.flags = np.asarray(flags, dtype=bool)
        self.joints = np.asarray(joints, dtype=int)
        self.points = self.boxes.reshape(t, 4 * b, 2)
        self.active = np.repeat(self.flags, 4, axis=1)
        self.basis, self.up, self.ground = basis, np.asarray(up, dtype=float), float(ground)
        self._legs: dict = {}
        self.steady = self.flags.any(axis=1) if steady is None else np.asarray(steady, dtype=bool)

    # The hull edges are made on first use: an analysis that never asks where a point lies against the polygons
    # (the flights' analyses of the final flight and of the planted input, which read the feet's contact alone)
    # does not pay for them (on CMU 01_01 from frame 800, 40 of an analysis's 190 ms of CPU).
    @functools.cached_property
    def _chain(self) -> tuple[np.ndarray, np.ndarray]:
        return hull_chain(self.points, hull_edges(self.points, self.active))

    @functools.cached_property
    def end(self) -> np.ndarray:
        """(T, 4B, 2) the end point of each candidate point's hull edge (:func:`hull_chain`)."""
        return self._chain[0]

    @functools.cached_property
    def valid(self) -> np.ndarray:
        """(T, 4B) whether each candidate point starts a hull edge (:func:`hull_chain`)."""
        return self._chain[1]

    def leg_lines(self, legs: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per leg k (the boxes with ``legs == k``): the hull of its boxes in contact as lines
        (normals (T, P, 2), offsets (T, P), valid (T, P); :func:`core.physics.split.hull_lines`),
        computed once per support."""
        from .split import hull_lines

        key = tuple(int(k) for k in legs)
        if key not in self._legs:
            t = len(self.flags)
            self._legs[key] = [
                hull_lines(self.boxes[:, legs == k].reshape(t, -1, 2), np.repeat(self.flags[:, legs == k], 4, axis=1))
                for k in range(int(legs.max()) + 1)
            ]
        return self._legs[key]

    @property
    def any(self) -> np.ndarray:
        """(T,) frames with at least one box in contact."""
        return self.flags.any(axis=1)

    def query(self, q2: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`polygon_query` of ground points (T, 2)."""
        return polygon_query(self.points, self.end, self.valid, q2)

    def inside(self, q2: np.ndarray) -> np.ndarray:
        """(T,) whether ground points (T, 2) are inside (:func:`polygon_query`'s flag, without the distances)."""
        return _inside(self.points, self.end, self.valid, q2)

    def project(self, q2: np.ndarray, margin: float = 0.0, frames: np.ndarray | None = None) -> np.ndarray:
        """:func:`project_inside` of ground points (T, 2), or with ``frames`` (F,) of points (F, 2) at those frames."""
        if frames is None:
            return project_inside(self.points, self.end, self.valid, q2, margin)
        return project_inside(self.points[frames], self.end[frames], self.valid[frames], q2, margin)

    def hull(self, frame: int) -> np.ndarray:
        """(H, 2) ordered hull of one frame (empty without contact)."""
        return convex_hull(self.points[frame][self.active[frame]]) if self.active[frame].any() else np.zeros((0, 2))

    def tiled(self, n: int) -> Support:
        """The support of ``n`` copies of the clip one after another (the hulls are not recomputed)."""
        out = object.__new__(Support)
        for name in ("boxes", "flags", "points", "active", "end", "valid", "steady"):
            value = getattr(self, name)
            setattr(out, name, np.tile(value, (n,) + (1,) * (value.ndim - 1)))
        out.joints, out.basis, out.up, out.ground = self.joints, self.basis, self.up, self.ground
        out._legs = {
            key: [tuple(np.tile(a, (n,) + (1,) * (a.ndim - 1)) for a in leg) for leg in lines]
            for key, lines in self._legs.items()
        }
        return out

    def frames(self, index) -> Support:
        """The support of selected frames (slice, index array or mask)."""
        return Support(
            self.boxes[index], self.flags[index], self.joints, self.basis, self.up, self.ground, self.steady[index]
        )
