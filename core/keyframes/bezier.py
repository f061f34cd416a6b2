"""Bezier handles that make a curve editor's per-channel playback follow a rebuilt motion.

Blender (like most animation packages) interpolates each F-curve on its own with cubic
Bezier segments. With the time handles of a segment [a, b] at a + (b−a)/3 and b − (b−a)/3,
time runs linearly along the segment, so the value is the cubic Bernstein polynomial
y(s) = (1−s)³·y_a + 3(1−s)²s·h₁ + 3(1−s)s²·h₂ + s³·y_b with s = (t − a)/(b − a).
Choosing h₁, h₂ by least squares against the rebuilt values on the segment's frames makes
Blender's playback match the slerp rebuild to within a cubic's reach of a sine arc.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def fit_handles(values: np.ndarray, keys: np.ndarray, smoothing: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Handle values of every segment, fitted to the dense curve ``values`` (T, C).

    keys: rising frame indices (K,) from 0 to T−1, no repeats (else ValueError; a single key [0] gives
    empty handles). Returns right handles of keys 0..K−2 and left handles of keys 1..K−1, each (K−1, C),
    for handle times at the thirds of each segment. A small ridge term pulls short segments (no inner
    frame) to the straight line, where the fit is under-determined.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    keys = np.asarray(keys, dtype=int)
    if len(keys) < 2:  # one key (a 1-frame clip): no segment, no handles
        return np.zeros((0, values.shape[1])), np.zeros((0, values.shape[1]))
    a, b = keys[:-1], keys[1:]
    ya, yb = values[a], values[b]
    n_frames = values.shape[0]
    lengths = np.diff(keys)
    if keys[0] != 0 or keys[-1] != n_frames - 1 or lengths.min() < 1:
        raise ValueError(f"keys must rise from frame 0 to frame {n_frames - 1} without repeats")
    line1, line2 = ya + (yb - ya) / 3.0, ya + 2.0 * (yb - ya) / 3.0  # the straight line's handles, the ridge's anchor
    # the basis depends on a frame's place k in its segment and the segment's length L only: computed
    # once for each distinct L (k = 0..L), then gathered — the same numbers as computed frame by frame,
    # 2.3× faster on the hybrid's curves laid end to end (CMU 01_01 at 10 %, 350,000 frames: 24 → 11 ms)
    distinct, which = np.unique(lengths, return_inverse=True)
    first = np.concatenate(([0], np.cumsum(distinct + 1)[:-1]))
    size = np.repeat(distinct, distinct + 1)
    s = (np.arange(len(size)) - np.repeat(first, distinct + 1)) / size
    t = 1 - s
    b1, b2 = 3 * t**2 * s, 3 * t * s**2
    group = np.repeat(np.arange(len(distinct)), distinct + 1)
    m11 = np.bincount(group, b1 * b1, len(distinct))[which] + smoothing
    m12 = np.bincount(group, b1 * b2, len(distinct))[which]
    m22 = np.bincount(group, b2 * b2, len(distinct))[which] + smoothing
    counts = lengths.copy()
    counts[-1] += 1  # the last key's frame ends the last segment
    index = np.repeat(first[which] - a, counts) + np.arange(n_frames)
    t3, s3, b1, b2 = (t * t * t)[index], (s * s * s)[index], b1[index], b2[index]
    residual = values - t3[:, None] * np.repeat(ya, counts, axis=0) - s3[:, None] * np.repeat(yb, counts, axis=0)
    r1 = np.add.reduceat(b1[:, None] * residual, a, axis=0) + smoothing * line1
    r2 = np.add.reduceat(b2[:, None] * residual, a, axis=0) + smoothing * line2
    det = (m11 * m22 - m12 * m12)[:, None]
    h1 = (m22[:, None] * r1 - m12[:, None] * r2) / det
    h2 = (m11[:, None] * r2 - m12[:, None] * r1) / det
    return h1, h2


def evaluate(values_at_keys: np.ndarray, h1: np.ndarray, h2: np.ndarray, keys: np.ndarray, n_frames: int) -> np.ndarray:
    """Values (T, C) of the Bezier curves through the keys with the given handles (the same
    curve Blender evaluates for thirds-placed time handles)."""
    keys = np.asarray(keys, dtype=int)
    values_at_keys = np.asarray(values_at_keys, dtype=float)
    if len(keys) < 2:  # one key: the curve is constant
        return np.repeat(values_at_keys[:1], n_frames, axis=0)
    frames = np.arange(n_frames)
    seg = np.clip(np.searchsorted(keys, frames, side="right") - 1, 0, len(keys) - 2)
    s = ((frames - keys[seg]) / (keys[seg + 1] - keys[seg]))[:, None]
    ya, yb = values_at_keys[seg], values_at_keys[seg + 1]
    return (1 - s) ** 3 * ya + 3 * (1 - s) ** 2 * s * h1[seg] + 3 * (1 - s) * s**2 * h2[seg] + s**3 * yb


# Blender's interpolation ids (``Keyframe.interpolation`` read with ``foreach_get``): the three this
# module plays; the easing modes (SINE … ELASTIC) are left to Blender (:func:`plays`).
CONSTANT, LINEAR, BEZIER = 0, 1, 2
_SMALL, _END = np.float32(-1.0e-10), np.float32(1.000001)  # the cubic's roots kept, as Blender keeps them
_ON_KEY = 1e-4  # a frame this close to a key plays the key's value (Blender's key search threshold)
_F32_EPS = np.finfo(np.float32).eps


@dataclass(frozen=True)
class CurveKeys:
    """An F-curve's keys as Blender stores them (float32, sorted by frame): ``co``, ``left``, ``right``
    (n, 2) frame and value of each key and of its left and right handles; ``interpolation`` (n,) of
    each key's segment onwards (:data:`CONSTANT`, :data:`LINEAR`, :data:`BEZIER`); ``linear``: the
    curve's Extrapolation is LINEAR (else CONSTANT)."""

    co: np.ndarray
    left: np.ndarray
    right: np.ndarray
    interpolation: np.ndarray
    linear: bool = False


def plays(interpolation: np.ndarray) -> bool:
    """Whether :func:`play_curves` plays keys of these interpolations (CONSTANT, LINEAR, BEZIER)."""
    interpolation = np.asarray(interpolation)
    return bool(np.all((interpolation >= CONSTANT) & (interpolation <= BEZIER)))


def play_curves(curves: list[CurveKeys], frames: np.ndarray) -> np.ndarray:
    """Values (T, C) of C F-curves at ``frames`` (T,), computed from their keys as Blender evaluates them.

    The same steps as Blender's F-curve evaluation (``fcurve_eval_keyframes``), vectorised over
    frames and curves: before the first and after the last key the extrapolation (constant; linear
    along the neighbouring key for a LINEAR end key, along the end handle otherwise); on a key (within
    1e-4 frames) its value; inside a segment the first key's interpolation — for Bezier the handles
    clamped to the segment's span (``BKE_fcurve_correct_bezpart``), the cubic in time solved for each
    frame by the closed form Blender uses (its first root in [0, 1]), then the cubic in value.
    Arithmetic in float32 where Blender's is, so the values match ``FCurve.evaluate`` to float
    rounding (measured: equal on real captures' curves). Keys only: no modifiers, no easing modes
    (:func:`plays`); a curve without keys plays 0.

    The work is laid out segment by segment (each segment's frames are a run of the sorted frames),
    and on whole frames and keys the time cubic is solved once for each distinct cubic and frame
    offset (curves keyed on segments of the same length share it).
    """
    frames = np.asarray(frames, dtype=np.float64)
    n_t, n_c = len(frames), len(curves)
    out = np.zeros((n_c, n_t))
    full = [c for c in range(n_c) if len(curves[c].co)]
    if not full or not n_t:
        return out.T
    order = None
    if np.any(np.diff(frames) < 0):  # the runs below need sorted frames: played sorted, then put back
        order = np.argsort(frames, kind="stable")
        frames = frames[order]
    sizes = np.array([len(curves[c].co) for c in full])
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    co = np.concatenate([np.asarray(curves[c].co, dtype=np.float32).reshape(-1, 2) for c in full])
    left = np.concatenate([np.asarray(curves[c].left, dtype=np.float32).reshape(-1, 2) for c in full])
    right = np.concatenate([np.asarray(curves[c].right, dtype=np.float32).reshape(-1, 2) for c in full])
    ipo = np.concatenate([np.asarray(curves[c].interpolation).reshape(-1) for c in full])
    linear = np.array([curves[c].linear for c in full])
    x, y = co[:, 0], co[:, 1]
    t = frames.astype(np.float32)
    first, last = starts, starts + sizes - 1
    value = np.empty((len(full), n_t))
    flat_value = value.reshape(-1)
    # before the first key (frames up to it) and after the last (frames from it on): the extrapolation
    inner_start = np.searchsorted(t, x[first], side="right")
    inner_stop = np.maximum(np.searchsorted(t, x[last], side="left"), inner_start)
    for lo, hi, end, toward, handle in ((np.zeros_like(inner_start), inner_start, first, first + 1, left[first]),
                                        (inner_stop, np.full_like(inner_stop, n_t), last, last - 1, right[last])):  # fmt: skip
        slope = _end_slopes(x, y, ipo, end, np.minimum(toward, len(x) - 1), handle, sizes, linear)
        cols, count = _runs(lo, hi)
        rows = np.repeat(np.arange(len(full)), count)
        dx = x[end][rows] - t[cols]
        flat_value[rows * n_t + cols] = y[end][rows] - slope[rows] * dx
    # inside: each segment (key i to i + 1) plays on the frames from its first key to the next key
    curve = np.repeat(np.arange(len(full)), sizes)
    seg = np.flatnonzero(np.arange(len(x)) != np.repeat(last, sizes))  # every key but a curve's last
    lo = np.maximum(np.searchsorted(t, x[seg], side="left"), inner_start[curve[seg]])
    hi = np.minimum(np.searchsorted(t, x[seg + 1], side="left"), inner_stop[curve[seg]])
    busy = hi > lo
    seg, lo, hi = seg[busy], lo[busy], hi[busy]
    kind = ipo[seg]
    kind[x[seg + 1] == x[seg]] = CONSTANT  # a segment of zero duration plays its first key
    # whole frames and keys (exact in float32): a frame is on a segment's first key or a frame past it
    whole = bool(
        np.all(np.floor(t) == t) and np.all(np.floor(x) == x) and max(np.abs(t).max(), np.abs(x).max()) < 2**24
    )
    for pick, play in ((kind == LINEAR, _linear_values), (kind == BEZIER, _bezier_values),
                       ((kind != LINEAR) & (kind != BEZIER), None)):  # fmt: skip
        if not np.any(pick):
            continue
        segs = seg[pick]
        cols, count = _runs(lo[pick], hi[pick])
        tt = t[cols]
        since = np.repeat(x[segs], count) - tt  # float32: also the time cubic's constant term, as Blender's
        if play is None:
            v = np.repeat(y[segs], count).astype(np.float64)
        else:
            v = play(x, y, left, right, co, segs, count, tt, since, whole)
        if whole:  # on a key: a frame at the start of a segment's run (no frame is within 1e-4 of the next key)
            on = np.flatnonzero(since == 0)
            v[on] = y[segs[np.searchsorted(np.cumsum(count), on, side="right")]]
        else:
            p = np.repeat(segs, count)
            on_key = np.abs(since) <= _ON_KEY
            on_next = ~on_key & (np.abs(x[p + 1] - tt) <= _ON_KEY)
            v[on_key], v[on_next] = y[p[on_key]], y[p[on_next] + 1]
        flat_value[np.repeat(curve[segs] * n_t, count) + cols] = v
    out[full] = value
    if order is not None:
        out[:, order] = out.copy()
    return out.T


def _runs(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Runs of frame indices lo … hi − 1, laid end to end: the frame indices, and each run's length."""
    count = np.maximum(hi - lo, 0)
    offset = np.repeat(lo - (np.cumsum(count) - count), count)
    return np.arange(int(count.sum())) + offset, count


def _end_slopes(x, y, ipo, end, toward, handle, sizes, linear) -> np.ndarray:
    """(C,) slope (float32) of each curve's extrapolation past key ``end``: 0 (constant), towards the
    neighbouring key ``toward`` (LINEAR key), or along the end ``handle`` (other keys)."""
    slope = np.zeros(len(end), dtype=np.float32)
    lin = linear & (ipo[end] != CONSTANT)
    by_key = lin & (ipo[end] == LINEAR) & (sizes > 1)
    by_handle = lin & (ipo[end] != LINEAR)
    for pick, run, rise in (
        (by_key, x[toward] - x[end], y[toward] - y[end]),
        (by_handle, x[end] - handle[:, 0], y[end] - handle[:, 1]),
    ):
        pick = pick & (run != 0)
        slope[pick] = rise[pick] / run[pick]
    return slope


def _linear_values(x, y, left, right, co, segs, count, t, since, whole) -> np.ndarray:
    """Values of LINEAR segments starting at keys ``segs``, each on ``count`` of the frames t (m,), float32
    as Blender's."""
    p = np.repeat(segs, count)
    return ((y[p + 1] - y[p]) * (t - x[p]) / (x[p + 1] - x[p]) + y[p]).astype(np.float64)


def _bezier_values(x, y, left, right, co, segs, count, t, since, whole) -> np.ndarray:
    """Values of Bezier segments starting at keys ``segs``, each on ``count`` of the frames t (m,)
    (float32; since: the segment's key frame − t, float32; whole: frames and keys are whole numbers)."""
    cubics, flat = _bezier_segments(co[segs], right[segs].copy(), left[segs + 1].copy(), co[segs + 1])
    if flat.any():  # a flat segment plays its value wherever the time cubic's root falls
        v = np.repeat(cubics[3], count).astype(np.float64)
        moving = np.flatnonzero(np.repeat(~flat, count))
        segs, count, t, since = segs[~flat], count[~flat], t[moving], since[moving]
        cubics = tuple(c[~flat] for c in cubics)
        if not len(segs):
            return v
    if whole:  # whole frames since whole keys: one root for each distinct time cubic and frame offset
        s, found = _shared_roots(count, (-since).astype(np.intp), *cubics[:3])
    else:
        s, found = _first_root(since.astype(np.float64), *(np.repeat(c, count) for c in cubics[:3]))
    b0, b1, b2, b3 = (np.repeat(c, count) for c in cubics[3:])
    played = np.where(found, b0 + s * b1 + s * s * b2 + s * s * s * b3, np.float32(0.0)).astype(np.float64)
    if not flat.any():
        return played
    v[moving] = played
    return v


def _shared_roots(count: np.ndarray, k: np.ndarray, c1, c2, c3) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_first_root` of the time cubics (c1, c2, c3) of segments each on ``count`` frames, with
    constant term −k (m,) (whole frames since the segment's key, exact in float32), solved once for each
    distinct (c1, c2, c3, k)."""
    order = np.lexsort((c3, c2, c1))
    change = np.zeros(len(c1), dtype=bool)
    for c in (c1, c2, c3):
        change[1:] |= c[order][1:] != c[order][:-1]
    group = np.empty(len(c1), dtype=np.intp)
    group[order] = np.cumsum(change)
    g = np.repeat(group, count)
    width = np.zeros(group.max() + 1, dtype=np.intp)
    np.maximum.at(width, group, k[np.cumsum(count)[count > 0] - 1] + 1)  # sorted frames: a run's last is its farthest
    base = np.cumsum(width) - width
    table_group = np.repeat(np.arange(len(width)), width)
    table_k = np.arange(len(table_group)) - base[table_group]
    one = order[np.flatnonzero(np.concatenate(([True], change[1:])))][table_group]  # a segment of each group
    root, found = _first_root(-table_k.astype(np.float64), c1[one], c2[one], c3[one])
    index = base[g] + k
    return root[index], found[index]


def _bezier_segments(v1: np.ndarray, v2: np.ndarray, v3: np.ndarray, v4: np.ndarray) -> tuple[tuple, np.ndarray]:
    """Each Bezier segment's (key v1, its right handle v2, the next key's left handle v3, the next key
    v4: (m, 2) float32 each) cubic in time (c1, c2, c3, float64: c0 is the key's frame − the frame) and
    in value (b0 … b3, float32), as Blender computes them, and whether it is flat (its four values equal)."""
    flat = (
        (np.abs(v1[:, 1] - v4[:, 1]) < _F32_EPS)
        & (np.abs(v2[:, 1] - v3[:, 1]) < _F32_EPS)
        & (np.abs(v3[:, 1] - v4[:, 1]) < _F32_EPS)
    )
    # no handle longer (in time) than the segment, so the curve cannot loop back in time
    span = v4[:, 0] - v1[:, 0]
    for key, handle in ((v1, v2), (v4, v3)):
        h = key - handle
        over = np.flatnonzero(np.abs(h[:, 0]) > span)
        if len(over):
            fac = (span[over] / np.abs(h[over, 0]))[:, None]
            handle[over] = key[over] - fac * h[over]
    q0, q1, q2, q3 = v1[:, 0], v2[:, 0], v3[:, 0], v4[:, 0]
    three, two = np.float32(3.0), np.float32(2.0)
    time = (three * (q1 - q0), three * (q0 - two * q1 + q2), q3 - q0 + three * (q1 - q2))
    f1, f2, f3, f4 = v1[:, 1], v2[:, 1], v3[:, 1], v4[:, 1]
    values = (f1, three * (f2 - f1), three * (f1 - two * f2 + f3), f4 - f1 + three * (f2 - f3))
    return tuple(c.astype(np.float64) for c in time) + values, flat


def _cube_root(d: np.ndarray) -> np.ndarray:
    """Real cube root, as Blender's ``sqrt3d`` computes it (exp(log|d|/3), signed; 0 at 0)."""
    with np.errstate(divide="ignore"):
        return np.where(d == 0, 0.0, np.sign(d) * np.exp(np.log(np.abs(d)) / 3.0))


def _first_root(c0, c1, c2, c3) -> tuple[np.ndarray, np.ndarray]:
    """The first root kept (in [−1e-10, 1.000001], float32) of c0 + c1·s + c2·s² + c3·s³ in the order
    Blender's ``solve_cubic`` tries them, and whether there is one; coefficients float64 (m,)."""
    m = len(c0)
    root = np.zeros(m, dtype=np.float32)
    found = np.zeros(m, dtype=bool)

    def offer(at: np.ndarray, candidate: np.ndarray) -> None:
        """Candidate roots of the polynomials ``at``, kept where in range and none was kept before."""
        r = candidate.astype(np.float32)
        ok = (r >= _SMALL) & (r <= _END) & ~found[at]
        root[at[ok]], found[at[ok]] = r[ok], True

    with np.errstate(divide="ignore", invalid="ignore"):
        cubic = np.flatnonzero(c3 != 0)
        a = c2[cubic] / c3[cubic] / 3
        b = c1[cubic] / c3[cubic]
        p = b / 3 - a * a
        q = (2 * a * a * a - a * b + c0[cubic] / c3[cubic]) / 2
        d = q * q + p * p * p
        one = d > 0
        sq = np.sqrt(d[one])
        offer(cubic[one], _cube_root(-q[one] + sq) + _cube_root(-q[one] - sq) - a[one])
        double = d == 0
        tt = _cube_root(-q[double])
        offer(cubic[double], 2 * tt - a[double])
        offer(cubic[double], -tt - a[double])
        three = d < 0
        pp, aa, at = p[three], a[three], cubic[three]
        phi = np.arccos(-q[three] / np.sqrt(-(pp * pp * pp)))
        tt = np.sqrt(-pp)
        cp = np.cos(phi / 3)
        cq = np.sqrt(3 - 3 * cp * cp)
        for candidate in (2 * tt * cp - aa, -tt * (cp + cq) - aa, -tt * (cp - cq) - aa):
            offer(at, candidate)
        rest = np.flatnonzero(c3 == 0)
        k0, k1, k2 = c0[rest], c1[rest], c2[rest]
        disc = k1 * k1 - 4 * k2 * k0
        two = (k2 != 0) & (disc > 0)
        sq = np.sqrt(disc[two])
        offer(rest[two], (-k1[two] - sq) / (2 * k2[two]))
        offer(rest[two], (-k1[two] + sq) / (2 * k2[two]))
        touch = (k2 != 0) & (disc == 0)
        offer(rest[touch], -k1[touch] / (2 * k2[touch]))
        line = (k2 == 0) & (k1 != 0)
        offer(rest[line], -k0[line] / k1[line])
        offer(rest[(k2 == 0) & (k1 == 0) & (k0 == 0)], np.zeros(int(((k2 == 0) & (k1 == 0) & (k0 == 0)).sum())))
    return root, found
