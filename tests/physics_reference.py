"""An independent re-measurement of the physics figures of a written motion (issue 16, "Checked").

Written from textbook formulas with numpy and scipy, without the project's physics code
(core/physics/dynamics.py, derivatives.py, support.py, metrics.py): only the body model's data
(segment masses, CoM offsets, inertia tensors, torque limits of core/physics/body.py, and which
joints are the ankles) is shared, since that is what is being checked against. Forward kinematics
is recomputed here with scipy rotations from the motion's local channels.

- Derivatives: ``scipy.signal.savgol_filter`` (cubic, ``mode="interp"``) over a window of
  ``2·round(smooth·fps/2) + 1`` frames, ``smooth`` the span the report states
  (``derivative_window_s``, 0.2 s: ``PhysicsOptions.smooth``). Plain central differences
  (``smooth=0``) are the alternative, and not comparable: at 120 fps their accelerations carry the
  capture's noise times fps², so the ZMP jumps by decimetres (the walk 02_01 slice after physics: ZMP
  inside 5 % instead of 100 %, worst |τ|/limit 7.9 instead of 0.82; the jump slice 20 % and 8.2).
  Angular velocity and acceleration come from the rotation matrices, [ω]× = Ṙ Rᵀ and
  [α]× = skew(R̈ Rᵀ) (the project differentiates quaternions instead).
- ZMP (Kajita et al., multi-body form): with z up and the ground at height h₀,
  x_zmp = [Σ mᵢ(z̈ᵢ + g) xᵢ − Σ mᵢ ẍᵢ (zᵢ − h₀) − Σ L̇ᵢ,y] / Σ mᵢ(z̈ᵢ + g), y likewise with +L̇ᵢ,x,
  L̇ᵢ = Iᵢαᵢ + ωᵢ × Iᵢωᵢ each segment's spin; undefined (free fall) when the vertical force is
  under a tenth of the weight.
- Contacts: an ankle or toe joint is in contact when it is within 4 % of the stature of its own
  lowest level (5th percentile) in its stretch and moves slower than half a stature per second (cubic
  Savitzky–Golay over 0.05 s). Each stretch (the clip cut at a capture's jumps and flips) has its own levels and
  its own floor, as a capture can stand its feet higher after a cut (CMU 05_18 at 1.4×: the right ankle's flat
  stance 2.4 cm higher after the flip at 1458; over the whole clip its still heel stance at 1594–1808 read 8.9 cm
  above its lowest level against 8.0, off the floor, where the ZMP reaches 3–9 cm past the left foot towards
  it); frames outside every stretch are not measured. No hysteresis and no debouncing, but a release a detector with hysteresis may hold
  on (the joint still that low and under 1.5x that speed after a contact: core/contacts.py's detector holds up to
  1.5x its thresholds) gives each frame's worst ratio its lower bound as the lesser of the two readings. Support polygon: the convex hull
  (``scipy.spatial.ConvexHull``) of the footprints in contact, each footprint the documented foot
  box (core/physics/dynamics.py ``support_from``: a quarter of the ankle → toe-tip length behind
  the ankle to the toe tip, half of it wide; a toe: from a tenth of it behind the toe joint to the tip,
  along toe → tip).
- Torques: recursive Newton–Euler, backward pass from the leaves,
  fⱼ = Fⱼ + Σ_c f_c − Gⱼ, nⱼ = Nⱼ + (cⱼ − pⱼ) × Fⱼ + Σ_c [n_c + (p_c − pⱼ) × f_c] − (rⱼ − pⱼ) × Gⱼ,
  Fⱼ = mⱼ(aⱼ + g·up), Nⱼ = L̇ⱼ. Ground force: one leg in contact takes the whole force at the
  ZMP (its nearest polygon point when outside); two legs take the split the project documents
  (shares w, 1 − w of the force at centres of pressure inside each leg's footprint, the two
  summing to the force at the ZMP, the valid split with the least worst |τ|/limit), solved here
  as the convex problem it is with scipy (:func:`least_split`).
- Flight: frames without contact (at least 3) whose vertical force is under the free-fall
  threshold on most frames; CoM fitted by ``np.polyfit`` with g given (CoM + ½ g t²·up is
  linear in t), its RMS and max distance; the angular momentum about the CoM
  L = Σ mᵢ (cᵢ − C) × (vᵢ − V) + Iᵢ ωᵢ from derivatives of the phase's own frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.signal import savgol_filter
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

G = 9.81
FREE_FALL = 0.1  # share of the body weight under which the vertical ground force counts as zero
EDGE = 2  # frames either side of a change of contacts where two contact detectors may disagree (a landing)
HYSTERESIS = 1.5  # a detector may hold a contact on up to this many times its thresholds (core/contacts.py's does)


def rotation_matrices(quaternions_wxyz: np.ndarray) -> np.ndarray:
    """(..., 3, 3) matrices of unit quaternions (..., 4) in w, x, y, z order."""
    q = np.asarray(quaternions_wxyz, dtype=float)
    flat = q.reshape(-1, 4)[:, [1, 2, 3, 0]]
    return Rotation.from_quat(flat).as_matrix().reshape(*q.shape[:-1], 3, 3)


def world_pose(motion) -> tuple[np.ndarray, np.ndarray]:
    """World positions (T, J, 3) scene units and orientations (T, J, 3, 3) by forward kinematics:
    R_j = R_parent · R_rest,j · R_pose,j and p_j = p_parent + R_parent · t_j."""
    sk = motion.skeleton
    local = rotation_matrices(motion.rotations)
    rest = (
        rotation_matrices(sk.rest_rotations)
        if sk.rest_rotations is not None
        else np.broadcast_to(np.eye(3), (sk.n_joints, 3, 3))
    )
    t, j = motion.rotations.shape[:2]
    pos, rot = np.zeros((t, j, 3)), np.zeros((t, j, 3, 3))
    for k in range(j):
        parent = sk.parents[k]
        own = rest[k] @ local[:, k]
        if parent < 0:
            pos[:, k], rot[:, k] = motion.translations[:, k], own
        else:
            pos[:, k] = pos[:, parent] + np.einsum("tab,tb->ta", rot[:, parent], motion.translations[:, k])
            rot[:, k] = rot[:, parent] @ own
    return pos, rot


def derivative(x: np.ndarray, fps: float, order: int, smooth: float = 0.2) -> np.ndarray:
    """d^order x / dt^order along axis 0: cubic Savitzky–Golay over ``smooth`` seconds (0: central differences)."""
    if smooth <= 0:
        dt = 1.0 / fps
        return np.gradient(x, dt, axis=0) if order == 1 else _second_difference(x, dt)
    half = max(int(round(0.5 * smooth * fps)), 2)
    window = min(2 * half + 1, len(x) - (1 - len(x) % 2))
    return savgol_filter(x, window, min(3, window - 1), deriv=order, delta=1.0 / fps, axis=0, mode="interp")


def _second_difference(x: np.ndarray, dt: float) -> np.ndarray:
    out = np.empty_like(x)
    out[1:-1] = (x[2:] - 2 * x[1:-1] + x[:-2]) / dt**2
    out[0], out[-1] = out[1], out[-2]
    return out


def _vee(skew: np.ndarray) -> np.ndarray:
    """Vector (..., 3) of the skew-symmetric part of (..., 3, 3) matrices."""
    s = 0.5 * (skew - np.swapaxes(skew, -1, -2))
    return np.stack((s[..., 2, 1], s[..., 0, 2], s[..., 1, 0]), axis=-1)


@dataclass
class Kinematic:
    """Per-frame state in SI units: joint positions p (T, J, 3) m, orientations R (T, J, 3, 3), segment CoMs
    c (T, J, 3) m, their velocity v and acceleration a, angular velocity w and acceleration alpha (T, J, 3), world
    inertia I (T, J, 3, 3) kg·m² about each CoM."""

    p: np.ndarray
    R: np.ndarray
    c: np.ndarray
    v: np.ndarray
    a: np.ndarray
    w: np.ndarray
    alpha: np.ndarray
    I: np.ndarray  # noqa: E741


def kinematics(pos: np.ndarray, rot: np.ndarray, body, fps: float, smooth: float = 0.2) -> Kinematic:
    """:class:`Kinematic` of a stretch of frames (world pose from :func:`world_pose`, scene units)."""
    p = pos * body.unit
    c = p + np.einsum("tjab,jb->tja", rot, body.com_local * body.unit)
    v, a = derivative(c, fps, 1, smooth), derivative(c, fps, 2, smooth)
    r1, r2 = derivative(rot, fps, 1, smooth), derivative(rot, fps, 2, smooth)
    rt = np.swapaxes(rot, -1, -2)
    w, alpha = _vee(r1 @ rt), _vee(r2 @ rt)
    inertia = rot @ body.inertia_local @ rt
    return Kinematic(p, rot, c, v, a, w, alpha, inertia)


def spin_rate(k: Kinematic) -> np.ndarray:
    """L̇ of each segment about its CoM (T, J, 3) N·m: I α + ω × I ω."""
    iw = np.einsum("tjab,tjb->tja", k.I, k.w)
    return np.einsum("tjab,tjb->tja", k.I, k.alpha) + np.cross(k.w, iw)


def ground_axes(up: np.ndarray) -> np.ndarray:
    """(3, 3) rows: two horizontal axes and ``up`` (a right-handed frame)."""
    up = np.asarray(up, dtype=float) / np.linalg.norm(up)
    helper = np.array([1.0, 0.0, 0.0]) if abs(up[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = helper - (helper @ up) * up
    x /= np.linalg.norm(x)
    return np.stack((x, np.cross(up, x), up))


def zmp(k: Kinematic, body, h0: float, axes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ZMP (T, 2) in ground coordinates (m; NaN in free fall) and the free-fall flag (T,): the multi-body formula
    in the module notes, h₀ the ground height in metres along up."""
    m = body.masses
    c = k.c @ axes.T  # (T, J, 3) in the ground frame: x, y horizontal, z up
    acc = k.a @ axes.T
    spin = spin_rate(k) @ axes.T
    x, y, z = c[..., 0], c[..., 1], c[..., 2] - h0
    weight = m * (acc[..., 2] + G)  # (T, J)
    fz = weight.sum(axis=1)
    px = ((weight * x).sum(1) - (m * acc[..., 0] * z).sum(1) - spin[..., 1].sum(1)) / fz
    py = ((weight * y).sum(1) - (m * acc[..., 1] * z).sum(1) + spin[..., 0].sum(1)) / fz
    flag = fz < FREE_FALL * m.sum() * G
    out = np.stack((px, py), axis=1)
    out[flag] = np.nan
    return out, flag


@dataclass
class Feet:
    """Per leg (left first as the body model lists them): ankle joint, toe joint (or -1) and toe tip (T, 3)
    scene units; ``flags`` (T, 2 legs, 2: ankle, toe) contacts."""

    ankles: list
    toes: list
    tips: list
    flags: np.ndarray
    held: np.ndarray | None = None  # the flags held on within HYSTERESIS times the thresholds (None: ``flags``)


def _toe_of(skeleton, ankle: int) -> int:
    children = np.flatnonzero(skeleton.parents == ankle)
    return int(children[0]) if len(children) else -1


def _tip(skeleton, pos, rot, ankle: int, toe: int) -> np.ndarray:
    """The toe tip (T, 3): the toe's End Site, else the farthest point of the foot's subtree from the ankle."""
    for j in (toe, ankle):
        if j >= 0 and np.any(skeleton.end_site_parents == j):
            offset = skeleton.end_site_offsets[int(np.flatnonzero(skeleton.end_site_parents == j)[0])]
            return pos[:, j] + rot[:, j] @ offset
    below = [j for j in range(skeleton.n_joints) if _is_below(skeleton, j, ankle)]
    far = max(below, key=lambda j: np.linalg.norm(pos[:, j] - pos[:, ankle], axis=1).mean())
    return pos[:, far]


def _is_below(skeleton, j: int, ancestor: int) -> bool:
    while j >= 0:
        if j == ancestor:
            return True
        j = int(skeleton.parents[j])
    return False


def detect_feet(motion, pos, rot, body, axes, stretches=None) -> Feet:
    """Contacts of the ankle and toe joints (module notes), each stretch ([start, stop) frames; default the whole
    clip) on its own levels; none outside the stretches."""
    sk = motion.skeleton
    ankles = list(body.roles["ankle"])
    toes = [_toe_of(sk, a) for a in ankles]
    tips = [_tip(sk, pos, rot, a, t) for a, t in zip(ankles, toes)]
    stature = body.height / body.unit
    flags = np.zeros((motion.n_frames, len(ankles), 2), dtype=bool)
    held = np.zeros_like(flags)
    for a, b in stretches or [(0, motion.n_frames)]:
        for leg, joints in enumerate(zip(ankles, toes)):
            for kind, j in enumerate(joints):
                if j < 0:
                    continue
                height = pos[a:b, j] @ axes[2]
                speed = np.linalg.norm(derivative(pos[a:b, j], motion.fps, 1, smooth=0.05), axis=1)
                low = np.percentile(height, 5)
                on = (height < low + 0.04 * stature) & (speed < 0.5 * stature)
                band = (height < low + 0.04 * stature) & (speed < HYSTERESIS * 0.5 * stature)  # sliding off
                flags[a:b, leg, kind] = on
                held[a, leg, kind] = on[0]
                for f in range(1, b - a):  # a contact held on while its joint stays within the band
                    held[a + f, leg, kind] = on[f] or (band[f] and held[a + f - 1, leg, kind])
    return Feet(ankles, toes, tips, flags, held)


def ground_height(pos, feet: Feet, axes) -> float:
    """Median over contact frames of the lowest point among ankles, toes and toe tips (scene units)."""
    points = [pos[:, a] for a in feet.ankles] + [pos[:, t] for t in feet.toes if t >= 0] + feet.tips
    low = np.min(np.stack(points, axis=1) @ axes[2], axis=1)
    contact = feet.flags.any(axis=(1, 2))
    return float(np.median(low[contact])) if contact.any() else float(low.min())


def footprints(pos, feet: Feet, axes, leg: int, frame: int, heel: float = 0.25, width: float = 0.5) -> np.ndarray:
    """(P, 2) ground points (scene units) of one leg's footprints in contact on one frame (empty: none)."""
    ankle2 = pos[frame, feet.ankles[leg]] @ axes[:2].T
    tip2 = feet.tips[leg][frame] @ axes[:2].T
    along = tip2 - ankle2
    length = np.linalg.norm(along)
    d = along / max(length, 1e-12)
    side = np.array([-d[1], d[0]]) * 0.5 * width * length
    out = []
    if feet.flags[frame, leg, 0]:
        rear = ankle2 - heel * length * d
        out += [rear - side, rear + side, tip2 - side, tip2 + side]
    if feet.flags[frame, leg, 1] and feet.toes[leg] >= 0:  # the forefoot box lies along toe → tip (else the foot)
        toe2 = pos[frame, feet.toes[leg]] @ axes[:2].T
        e = tip2 - toe2 if np.linalg.norm(tip2 - toe2) > 1e-12 else along
        e = e / max(np.linalg.norm(e), 1e-12)
        side = np.array([-e[1], e[0]]) * 0.5 * width * length
        rear = toe2 - 0.1 * length * e
        out += [rear - side, rear + side, tip2 - side, tip2 + side]
    return np.array(out).reshape(-1, 2)


def hull_halfplanes(points: np.ndarray) -> np.ndarray:
    """(H, 3) rows (n, b) with n·x + b ≤ 0 inside the convex hull of 2-D points (≥ 3 not collinear)."""
    return ConvexHull(points).equations


def inside(planes: np.ndarray, q: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """(...) bool: points q (..., 2) inside (or on) the hull of ``planes``."""
    return np.all(q @ planes[:, :2].T + planes[:, 2] <= tol, axis=-1)


def nearest_in(points: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The point of the convex hull of ``points`` (P, 2) nearest to q (2,)."""
    planes = hull_halfplanes(points)
    if inside(planes, q):
        return q
    hull = points[ConvexHull(points).vertices]
    best, dist = q, np.inf
    for a, b in zip(hull, np.roll(hull, -1, axis=0)):
        s = np.clip((q - a) @ (b - a) / max((b - a) @ (b - a), 1e-300), 0.0, 1.0)
        x = a + s * (b - a)
        if np.linalg.norm(q - x) < dist:
            best, dist = x, np.linalg.norm(q - x)
    return best


def newton_euler(k: Kinematic, body, parents: np.ndarray, ground=None) -> np.ndarray:
    """Joint moments (T, J, 3) N·m on each body from its parent, backward recursion (module notes).

    ground: (joint, force (T, 3) N, point (T, 3) m) triples of ground forces, or None."""
    t, j = k.c.shape[:2]
    up = body.up
    force = body.masses[None, :, None] * (k.a + G * up)
    moment = spin_rate(k) + np.cross(k.c - k.p, force)
    f = force.copy()
    n = moment.copy()
    for joint, g, r in ground or []:
        f[:, joint] -= g
        n[:, joint] -= np.cross(r - k.p[:, joint], g)
    for child in range(j - 1, 0, -1):
        parent = parents[child]
        if parent < 0:
            continue
        f[:, parent] += f[:, child]
        n[:, parent] += n[:, child] + np.cross(k.p[:, child] - k.p[:, parent], f[:, child])
    return n


def ratios(torques: np.ndarray, body) -> np.ndarray:
    """|τ| / limit (T, J), 0 where unlimited."""
    limits = body.torque_limits
    finite = np.isfinite(limits)
    out = np.zeros(torques.shape[:2])
    out[:, finite] = np.linalg.norm(torques[:, finite], axis=-1) / limits[finite]
    return out


@dataclass
class Measured:
    """What :func:`measure` finds on a motion (module notes)."""

    zmp_inside_share: float
    contact_frames: int
    zmp_inside: np.ndarray  # (T,) bool, meaningful on ``counted``
    zmp_margin: np.ndarray  # (T,) signed distance of the ZMP from the support polygon's boundary, m (negative inside)
    contact_edge: np.ndarray  # (T,) within EDGE frames of a change of the contacts
    derivative_edge: np.ndarray  # (T,) a stretch's first or last half window: one-sided Savitzky–Golay (extrapolated)
    zmp_edge_ambiguous: np.ndarray  # (T,) contact edge where the fewest and the most feet put the ZMP apart
    counted: np.ndarray  # (T,) contact frames with a defined ZMP
    single: np.ndarray  # (T,) one leg in contact
    double: np.ndarray  # (T,) both legs in contact
    ratios: np.ndarray  # (T, J) |τ|/limit
    worst_lower: np.ndarray  # (T,) a lower bound of each frame's worst ratio (equal to it but on double support)
    worst_ratio: float
    worst_joint: str
    violation_frames: int
    flights: list  # per phase: dict(start, stop, rms_mm, max_mm, g_fit, momentum_change, momentum_rms)

    @property
    def flight_rms_m(self) -> float:
        """RMS over every flight frame of the CoM's distance from its ballistic fit, metres (the report's figure)."""
        if not self.flights:
            return 0.0
        sq = sum(f["sum_sq"] for f in self.flights)
        return float(np.sqrt(sq / sum(f["stop"] - f["start"] for f in self.flights)))

    def flight_range(self, key: str) -> tuple[float, float]:
        """Range of the frame-weighted RMS of a phase figure (``rms_mm``, ``momentum_rms``) with every phase's
        ends moved by up to EDGE frames (:func:`_flights`); (0, 0) without flight."""
        if not self.flights:
            return 0.0, 0.0
        n = np.array([f["stop"] - f["start"] for f in self.flights])
        lo, hi = (np.array([f[key + "_range"][i] for f in self.flights]) for i in (0, 1))
        return tuple(float(np.sqrt((n * x**2).sum() / n.sum())) for x in (lo, hi))

    @property
    def flight_momentum_rms(self) -> float:
        """RMS over every flight frame of |L − L̄| / |L̄| of its phase (the report's ``flight_momentum_change``)."""
        if not self.flights:
            return 0.0
        n = [f["stop"] - f["start"] for f in self.flights]
        return float(np.sqrt(sum(k * f["momentum_rms"] ** 2 for k, f in zip(n, self.flights)) / sum(n)))


def measure(motion, body, stretches=None, smooth: float = 0.2, flags=None) -> Measured:
    """Re-measure ``motion`` (scene units, ``body`` its body model) over its stretches (list of [start, stop), each
    differentiated on its own; default the whole clip). flags: contacts (T, legs, 2: ankle, toe) to use instead
    of :func:`detect_feet`'s (to tell a difference of contacts from one of the physics)."""
    pos, rot = world_pose(motion)
    axes = ground_axes(body.up)
    t = motion.n_frames
    stretches = stretches or [(0, t)]
    feet = detect_feet(motion, pos, rot, body, axes, stretches)
    if flags is not None:
        feet.flags = np.asarray(flags, dtype=bool)
        feet.held = None
    in_stretch = np.zeros(t, dtype=bool)
    for a, b in stretches:
        in_stretch[a:b] = True
    p = np.full((t, 2), np.nan)
    free = np.zeros(t, dtype=bool)
    rat = np.zeros((t, motion.skeleton.n_joints))
    low = np.zeros(t)
    legs_on = feet.flags.any(axis=2)  # (T, legs)
    flights = []
    for a, b in stretches:
        part = Feet(feet.ankles, feet.toes, [x[a:b] for x in feet.tips], feet.flags[a:b])
        h0 = ground_height(pos[a:b], part, axes)  # each stretch on its own floor
        k = kinematics(pos[a:b], rot[a:b], body, motion.fps, smooth)
        p[a:b], free[a:b] = zmp(k, body, h0 * body.unit, axes)
        rat[a:b], low[a:b] = _stretch_ratios(k, body, pos, feet, axes, h0 * body.unit, p[a:b], free[a:b], a)
        if feet.held is not None and (feet.held[a:b] != feet.flags[a:b]).any():
            # a release a detector with hysteresis holds on (CMU 131_01 after physics: a toe sliding off at 1.1-1.4x
            # the speed limit on frames 562-565, 4 frames past this rule's release, bearing the body there): the
            # lower bound is the lesser of the two readings
            alt = Feet(feet.ankles, feet.toes, feet.tips, feet.held)
            _, low_held = _stretch_ratios(k, body, pos, alt, axes, h0 * body.unit, p[a:b], free[a:b], a)
            differ = (feet.held[a:b] != feet.flags[a:b]).any(axis=(1, 2))
            low[a:b] = np.where(differ, np.fmin(low[a:b], low_held), low[a:b])
        flights += _flights(motion, pos[a:b], rot[a:b], body, legs_on[a:b].any(axis=1), free[a:b], a, smooth)
    counted = legs_on.any(axis=1) & ~free & in_stretch  # outside the stretches nothing is measured (ZMP NaN)
    margin = _margins(pos, feet, axes, p / body.unit, counted) * body.unit
    ins = margin <= 1e-9
    # contacts that may differ by EDGE frames from another detector's: the fewest and the most feet in contact
    # within EDGE frames of each frame, and where the ZMP's side of the polygon depends on which holds
    window = np.lib.stride_tricks.sliding_window_view(
        np.pad(feet.flags, ((EDGE, EDGE), (0, 0), (0, 0)), mode="edge"), 2 * EDGE + 1, axis=0
    )
    fewest, most = window.all(axis=-1), window.any(axis=-1)
    edge = np.any(fewest != most, axis=(1, 2))
    sides = []
    for flags in (fewest, most):
        alt = Feet(feet.ankles, feet.toes, feet.tips, flags)
        alt_counted = flags.any(axis=(1, 2)) & ~free & in_stretch
        sides.append(np.where(alt_counted, _margins(pos, alt, axes, p / body.unit, alt_counted) <= 1e-9, -1))
    ambiguous = edge & (sides[0] != sides[1])
    # the first and last half window of each stretch: derivatives extrapolated by a one-sided window, where the
    # angular accelerations from matrices (here) and from quaternions (the project) part by up to 4x their spread
    # inside (Bandai's run, 24 frames: 67 rad/s² on its last frame, 0.04 of the stance hip's ratio; elsewhere
    # 2–10 rad/s²) — neither is the truth there (on known thigh swings at 30 fps both err 4x more than inside)
    half = max(int(round(0.5 * smooth * motion.fps)), 2) if smooth > 0 else 1
    one_sided = np.zeros(t, dtype=bool)
    for a, b in stretches:
        one_sided[a : min(a + half, b)] = one_sided[max(b - half, a) : b] = True
    worst = np.unravel_index(np.nanargmax(rat), rat.shape)
    return Measured(
        zmp_inside_share=float(ins[counted].mean()) if counted.any() else 1.0,
        contact_frames=int(counted.sum()),
        zmp_inside=ins,
        zmp_margin=margin,
        contact_edge=edge,
        derivative_edge=one_sided,
        zmp_edge_ambiguous=ambiguous,
        counted=counted,
        single=legs_on.sum(axis=1) == 1,
        double=legs_on.sum(axis=1) == 2,
        ratios=rat,
        worst_lower=low,
        worst_ratio=float(np.nanmax(rat)),
        worst_joint=motion.skeleton.names[worst[1]],
        violation_frames=int((rat > 1.0).any(axis=1).sum()),
        flights=flights,
    )


def _margins(pos, feet: Feet, axes, zmp2: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """(T,) signed distance (scene units, negative inside) of the ZMP (T, 2) from the support polygon on ``frames``
    (T,) bool; NaN elsewhere."""
    out = np.full(len(zmp2), np.nan)
    for f in np.flatnonzero(frames):
        planes = hull_halfplanes(
            np.concatenate([footprints(pos, feet, axes, leg, f) for leg in range(len(feet.ankles))])
        )
        out[f] = np.max(zmp2[f] @ planes[:, :2].T + planes[:, 2])
    return out


def _stretch_ratios(k, body, pos, feet, axes, ground, p, free, first) -> tuple[np.ndarray, np.ndarray]:
    """|τ|/limit (T, J) of one stretch (frames from ``first``; ZMP p (T, 2) m, ground height m, ``pos`` the
    clip's world positions): ground forces as the module notes say; and (T,) a lower bound of each frame's
    worst ratio (the ratio itself but on double support: :func:`least_split`'s bound)."""
    unit = body.unit
    parents = body.skeleton.parents
    free_torques = newton_euler(k, body, parents)
    force = (body.masses[None, :, None] * (k.a + G * body.up)).sum(axis=1)  # the ground force the motion needs, N
    out = ratios(free_torques, body)
    lower = np.full(len(out), np.nan)
    legs = len(feet.ankles)
    chains = [
        np.array([_is_below(body.skeleton, feet.ankles[leg], j) for j in range(len(parents))]) for leg in range(legs)
    ]
    for f in range(len(p)):
        frame = first + f
        on = [leg for leg in range(legs) if feet.flags[frame, leg].any()]
        if not on or free[f]:
            continue
        prints = [footprints(pos, feet, axes, leg, frame) for leg in range(legs)]
        zmp2 = nearest_in(np.concatenate([prints[leg] for leg in on]), p[f] / unit) * unit
        to3 = lambda q2: q2 @ axes[:2] + ground * axes[2]  # noqa: E731  ground points (..., 2) m → 3-D
        if len(on) == 1:
            leg = on[0]
            tau = free_torques[f] - np.cross(to3(zmp2) - k.p[f], force[f]) * chains[leg][:, None]
            out[f] = ratios(tau[None], body)[0]
        else:
            out[f], _, lower[f] = least_split(free_torques[f], k.p[f], force[f], zmp2, [p_ * unit for p_ in prints],
                                              chains, to3, body)  # fmt: skip
    lower = np.where(np.isnan(lower), out.max(axis=1), lower)
    return out, lower


def least_split(free, joint_pos, force, zmp2, prints, chains, to3, body) -> tuple[np.ndarray, np.ndarray | None, float]:
    """|τ|/limit (J,) of a double-support frame at (nearly) the least worst ratio over the valid splits, that
    split x = (w, s) (None: no valid split) and a lower bound of that least worst ratio.

    With x = (w, s), s = w (r_L − p) the left share's lever from the ZMP p (ground coordinates, m), the left
    centre of pressure is p + s/w and the right one p − s/(1 − w): every joint moment is affine in x and
    "each centre of pressure inside its leg's footprint" is linear in x, so the least worst ratio is a convex
    problem (a second-order cone program), solved here as a linear programme (scipy's HiGHS) on an outer
    polyhedral approximation of each norm cone: min t s.t. u·τⱼ(x) ≤ t·limitⱼ for 600 directions u and the
    footprint rows. Its t is a lower bound of the least worst ratio, the worst ratio at its split an upper
    bound (within 1 % of each other: the directions' covering angle). A valid split exists whenever the ZMP is
    in the hull of both footprints (a point of the hull of two convex sets is a convex combination of one
    point of each): NaN ratios (not measured) only if the programme finds none."""
    left, right = prints
    planes = hull_halfplanes(left), hull_halfplanes(right)
    limits = np.where(np.isfinite(body.torque_limits), body.torque_limits, np.inf)
    horizontal = to3(np.eye(2)) - to3(np.zeros(2))  # (2, 3) ground axes in 3-D
    p3 = to3(zmp2)

    def torques(x: np.ndarray) -> np.ndarray:  # x (N, 3) → τ (N, J, 3)
        w, s3 = x[:, 0], x[:, 1:] @ horizontal
        lever_l = w[:, None, None] * (p3 - joint_pos)[None] + s3[:, None]
        lever_r = (1.0 - w)[:, None, None] * (p3 - joint_pos)[None] - s3[:, None]
        tau = free[None] - np.cross(lever_l, force) * chains[0][None, :, None]
        return tau - np.cross(lever_r, force) * chains[1][None, :, None]

    def slack(x: np.ndarray) -> np.ndarray:  # ≥ 0 when both centres of pressure are inside (N, H_L + H_R + 2)
        w, s = x[:, :1], x[:, 1:]
        a = -((w * zmp2 + s) @ planes[0][:, :2].T + w * planes[0][:, 2])
        b = -(((1.0 - w) * zmp2 - s) @ planes[1][:, :2].T + (1.0 - w) * planes[1][:, 2])
        return np.concatenate((a, b, w, 1.0 - w), axis=1)

    # slack(x) = rows @ x + base and τⱼ(x) = τⱼ(0) + Mⱼ x (both affine)
    base = slack(np.zeros((1, 3)))[0]
    rows = np.stack([slack(np.eye(3)[None, c])[0] - base for c in range(3)], axis=1)
    tau0 = torques(np.zeros((1, 3)))[0]
    gains = np.stack([torques(np.eye(3)[None, c])[0] - tau0 for c in range(3)], axis=-1)  # (J, 3, 3)
    moving = np.isfinite(limits) & (np.abs(gains).max(axis=(1, 2)) > 0)
    fixed = np.linalg.norm(tau0[~moving], axis=-1) / limits[~moving]
    # |v| ≤ t·L replaced by u·v ≤ t·L for DIRECTIONS unit vectors u: an outer polyhedral cone, so the linear
    # programme's t is a lower bound of the least worst ratio and the true worst at its x an upper one
    u = DIRECTIONS
    a_tau = np.concatenate(
        [np.column_stack((u @ gains[j], -limits[j] * np.ones(len(u)))) for j in np.flatnonzero(moving)]
    )
    b_tau = np.concatenate([-(u @ tau0[j]) for j in np.flatnonzero(moving)])
    lp = linprog([0, 0, 0, 1], A_ub=np.vstack((a_tau, np.column_stack((-rows, np.zeros(len(rows)))))),
                 b_ub=np.concatenate((b_tau, base)), bounds=[(0, 1), (None, None), (None, None), (0, None)],
                 method="highs")  # fmt: skip
    if lp.status != 0:  # no valid split (numerically): not measured
        return np.full(len(free), np.nan), None, np.nan
    x = lp.x[:3]
    lower = max(lp.x[3], fixed.max(initial=0.0))
    return np.linalg.norm(torques(x[None])[0], axis=-1) / limits, x, lower


def _fibonacci_sphere(n: int) -> np.ndarray:
    """(n, 3) unit vectors spread evenly over the sphere."""
    k = np.arange(n) + 0.5
    z = 1 - 2 * k / n
    phi = np.pi * (1 + 5**0.5) * k
    r = np.sqrt(1 - z**2)
    return np.column_stack((r * np.cos(phi), r * np.sin(phi), z))


DIRECTIONS = _fibonacci_sphere(600)


def _flights(motion, pos, rot, body, support, free, first, smooth) -> list:
    """Flight phases of one stretch (module notes), frames numbered in the clip: :func:`flight_phase`'s figures,
    and the range of its RMS distance and RMS momentum change over the phases whose ends are moved in by up to
    EDGE frames (a detector with hysteresis, as the project's, holds a contact a frame or two longer: its phase
    on the CMU jump 01_01 has 48 frames, this one 50)."""
    d = np.diff(np.concatenate(([0], (~support).astype(int), [0])))
    out = []
    for a, b in zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)):
        if b - a < 3 or free[a:b].mean() < 0.5:
            continue
        phase = flight_phase(pos[a:b], rot[a:b], body, motion.fps, smooth)
        moved = [flight_phase(pos[a + x : b - y], rot[a + x : b - y], body, motion.fps, smooth)
                 for x in range(EDGE + 1) for y in range(EDGE + 1) if b - y - a - x >= 3]  # fmt: skip
        for key in ("rms_mm", "momentum_rms"):
            phase[key + "_range"] = (min(f[key] for f in moved), max(f[key] for f in moved))
        out.append(phase | {"start": first + int(a), "stop": first + int(b)})
    return out


def flight_phase(pos, rot, body, fps: float, smooth: float) -> dict:
    """Figures of one flight phase from its own frames (world pose (n, J, 3) scene units, (n, J, 3, 3)): the CoM's
    RMS and max distance from its least-squares parabola with g (mm), g of a free parabola, the angular
    momentum about the CoM at its first and last frame, their difference and the RMS of L − L̄, both over |L̄|."""
    k = kinematics(pos, rot, body, fps, smooth)
    m = body.masses
    com = np.einsum("j,tjc->tc", m, k.c) / m.sum()
    tt = np.arange(len(pos)) / fps
    lifted = com + 0.5 * G * tt[:, None] ** 2 * body.up  # linear in t on a ballistic path
    coef = np.polyfit(tt, lifted, 1)
    fit = np.outer(tt, coef[0]) + coef[1] - 0.5 * G * tt[:, None] ** 2 * body.up
    err = np.linalg.norm(com - fit, axis=1)
    vel = np.einsum("j,tjc->tc", m, k.v) / m.sum()
    orbital = np.einsum("j,tjc->tc", m, np.cross(k.c - com[:, None], k.v - vel[:, None]))
    momentum = orbital + np.einsum("tjab,tjb->ta", k.I, k.w)
    mean = momentum.mean(axis=0)
    scale = max(np.linalg.norm(mean), 1e-9)
    return {
        "rms_mm": float(1000 * np.sqrt(np.mean(err**2))),
        "max_mm": float(1000 * err.max()),
        "sum_sq": float(np.sum(err**2)),
        "g_fit": float(-2 * np.polyfit(tt, com @ body.up, 2)[0]),
        "momentum_start": momentum[0],
        "momentum_end": momentum[-1],
        "momentum_change": float(np.linalg.norm(momentum[-1] - momentum[0]) / scale),
        "momentum_rms": float(np.sqrt(np.mean(np.sum((momentum - mean) ** 2, axis=1))) / scale),
    }


# Agreement tolerances between a report's figures and this measure (the reasons, measured on the clips of
# tests/scripts/test_physics_independent.py):
ZMP_BAND = 0.005  # m: ZMPs this close to the polygon's boundary may fall either side (the two ZMPs differ by
#   a median 0.04–0.14 mm, p95 0.6–1.1 mm, max 6–10 mm where the vertical force is small: the angular
#   accelerations from matrices here, from quaternions there, at the same Savitzky–Golay window)
RATIO_BAND = 0.02  # |τ|/limit: the same contacts give ratios within 0.009 of the project's (the free moments
#   within 0.005, the double-support split's polyhedral bound within 0.005)
FLIGHT_ERROR = (1e-4, 0.05)  # m and share, beyond the range of the figure over phase ends moved in by up to
#   EDGE frames (:func:`_flights`)
MOMENTUM = (0.01, 0.1)  # absolute and share, likewise (the RMS change over |L̄| is ill-conditioned where L̄ is
#   small: on the procedural jump one more take-off frame takes it from 0.42 to 0.71)


def disagreements(after: dict, m: Measured) -> list[str]:
    """Where a report's figures (``physics.after`` of scripts/retarget.py's JSON) disagree with the measure
    ``m`` of the motion that was written, beyond the tolerances above (empty: they agree).

    ZMP share: frames whose ZMP is within ``ZMP_BAND`` of the boundary, or at a contact change inside the
    polygon of one choice of contacts there and not the other, may count either way (one more for rounding). Torques: a frame away from the contact changes whose least worst
    ratio is over 1 + RATIO_BAND is a frame the report must count, and one under 1 − RATIO_BAND anywhere
    cannot be counted unless at a contact change or in a stretch's first or last derivative half-window (both
    sides extrapolate there); the report's worst ratio lies between the worst of those steady frames and the worst
    anywhere (± RATIO_BAND). Flight: the RMS distance from the ballistic path and
    the RMS change of the angular momentum, each within its tolerance of the range this measure finds over
    phase ends moved in by up to EDGE frames."""
    out = []
    counted = m.counted
    loose = m.zmp_edge_ambiguous | (counted & (np.abs(m.zmp_margin) <= ZMP_BAND))
    allowed = (loose.sum() + 1) / max(counted.sum(), 1)
    if abs(after["zmp_inside_share"] - m.zmp_inside_share) > allowed:
        out.append(f"ZMP inside: report {after['zmp_inside_share']:.4f}, measured {m.zmp_inside_share:.4f} "
                   f"(± {allowed:.4f}: {loose.sum()} of {counted.sum()} contact frames ambiguous)")  # fmt: skip
    steady = ~(m.contact_edge | m.derivative_edge)
    worst = np.nanmax(m.ratios, axis=1)
    surely_over = int((steady & (m.worst_lower > 1 + RATIO_BAND)).sum())
    maybe_over = int(((worst > 1 - RATIO_BAND) | ~steady).sum())
    frames = after["torque_violation_frames"]
    if not surely_over <= frames <= maybe_over:
        out.append(f"frames over a torque limit: report {frames}, measured between {surely_over} and {maybe_over}")
    low, high = m.worst_lower[steady].max(initial=0.0) - RATIO_BAND, np.nanmax(worst) + RATIO_BAND
    if not low <= after["torque_worst_ratio"] <= high:
        out.append(f"worst |τ|/limit: report {after['torque_worst_ratio']:.4f}, measured {low:.4f} to {high:.4f}")
    lo, hi = m.flight_range("rms_mm")
    error = 1000 * after["flight_error_m"]
    if (
        not lo - 1000 * FLIGHT_ERROR[0] - FLIGHT_ERROR[1] * lo
        <= error
        <= hi + 1000 * FLIGHT_ERROR[0] + FLIGHT_ERROR[1] * hi
    ):
        out.append(f"flight CoM error: report {error:.3f} mm, measured {lo:.3f} to {hi:.3f} mm")
    if (m.flights != []) != (after["flight_frames"] > 0):
        out.append(f"flight: report {after['flight_frames']} frames, measured {len(m.flights)} phases")
    lo, hi = m.flight_range("momentum_rms")
    change = after["flight_momentum_change"]
    if not lo - MOMENTUM[0] - MOMENTUM[1] * lo <= change <= hi + MOMENTUM[0] + MOMENTUM[1] * hi:
        out.append(f"flight momentum change: report {change:.4f}, measured {lo:.4f} to {hi:.4f}")
    return out
