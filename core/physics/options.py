"""Settings of the physics solve (:func:`.solve.physics_retarget`): :class:`PhysicsOptions`, read by every stage."""

from __future__ import annotations

from dataclasses import dataclass

from .dynamics import FREE_FALL
from .errors import PhysicsError


@dataclass
class PhysicsOptions:
    """Settings of :func:`.solve.physics_retarget`; lengths in body heights, times in seconds."""

    balance: bool = True
    torques: bool = True
    flight: bool = True
    toes: bool = True  # detect toe contacts for forefoot support
    smooth: float = 0.2  # Savitzky–Golay span of velocities and accelerations
    free_fall: float = FREE_FALL  # vertical force below this share of the weight: ZMP undefined
    heel: float = 0.25  # foot box behind the ankle, share of the ankle → toe-tip length
    width: float = 0.5  # foot box width, same unit
    margin: float = 0.02  # planned ZMP this far inside the polygon (absorbs what the filter and smoothing change)
    plan_spacing: float = 1 / 30  # seconds between balance-plan control points (at least MIN_PLAN_SPACING frames)
    plan_deviation: float = 1e-2  # weight of |δ|² against the ZMP goals
    plan_smoothness: float = 1e-3  # weight of the plan's second differences
    plan_jerk: float = 0.15  # weight of the plan's third differences (its jerk, which adds to the motion's)
    plan_unseen: float = 0.004  # weight of the plan's acceleration the derivative window does not see (.balance)
    plan_iterations: int = 6  # Gauss–Newton iterations of the plan (and of the final plan, its own Jacobian)
    plan_torque_weight: float = 0.2  # heights of ZMP error worth one unit of |τ|/limit over the limit
    plan_jacobian_every: int = 6  # Gauss–Newton iterations per fresh Jacobian (between: the last one, new residuals)
    polish_iterations: int = 4  # Gauss–Newton iterations of the final plan on the filtered, planted motion (0: none)
    polish_torque_weight: float = 0.2  # the final plan's torque weight (balance first: nothing moves the ZMP after it)…
    zmp_target: float = 0.99  # below this share of contact frames with the ZMP inside, the final plan runs once more
    torque_guard: int = 4  # rounds of the torque guard (0: none): worse frames blended back to the input
    guard_width: float = 0.3  # seconds of the guard's blend around such a frame
    polish_boost: float = 5.0  # … times this on the joint-frames the solve made worse than the input
    retry_boost: float = (
        1.0  # a result missing a bar: the final stages again with this polish_boost, the better kept (0: no)
    )
    trim_jerk: bool = True  # smooth what the solve added as far as every figure allows (.jerk_trim)
    keep_settled: bool = True  # an input that meets every bar of issue 16 is returned as it is
    polish_back: bool = True  # … whose deviation term measures the shift from the way back to the input
    polish_deviation: float = 0.3  # … with this weight (the plan's ``plan_deviation``)
    repair_rounds: int = 2  # rounds of the torque repair (0: none): local plans around the frames still over a limit
    repair_window: float = 0.35  # seconds of motion either side of such frames that a local plan may move
    repair_iterations: int = 3  # Gauss–Newton iterations of each local plan
    repair_spacing: float = 1 / 30  # seconds between a local plan's control points, as ``plan_spacing``
    repair_torque_weight: float = 1.0  # the local plans' torque weight (the plan's is ``plan_torque_weight``)
    repair_margin: float = 0.02  # … which aim this far under each limit
    repair_vertical: float = 1.0  # … and move the body up and down too, |δ_up|² weighed 1/this
    repair_jerk: float = 1.5  # … with this weight on the jerk of their shift (the plan's ``plan_jerk``)
    key_rate: float = 30.0  # filter steps per second
    decay: float = 0.5  # displacement carry-over time constant
    sigma_root: float = 0.05  # process noise of the root translation, heights per √s
    max_root_step: float = 0.01  # trust region of one filter update: root, heights
    max_rotation_step: float = 0.1  # … and each joint, radians
    sigma_rotation: float = 0.5  # process noise of joint rotations, rad per √s
    sigma_contact: float = 0.002  # contact joints where the planted input has them
    plant: bool = True  # plant the feet with core.ik.plant_feet before the first and after every pass
    plant_ease: float = 0.2  # seconds at each end of a contact over which its anchor eases (≥ MIN_EASE frames)
    sigma_zmp: float = 0.002  # ZMP at its planned point
    sigma_torque: float = 0.2  # clamped torques, share of the limit
    torque_margin: float = 0.05  # torque rows for joints above (1 − margin) of their limit
    sigma_flight: float = 0.002  # CoM on the ballistic path
    flight_blend: float = 0.1  # seconds over which the flight correction's velocity fades in and out
    sigma_momentum: float = 0.01  # angular momentum, m·h² per s
    smoothing: float = 0.05  # final B-spline smoothness
    spline_spacing: float = 0.1  # seconds between the final displacement's control points (at least one key)
    spine_joints: int = 2
    passes: int = 1  # plan → filter passes; a further pass plans on the previous result
    stiffness: float = 1.0  # Q = Q₀/s, R = s·R₀: how firmly the filter holds the pose to its prediction (notes)
    alpha: float = 0.05
    beta: float = 2.0
    kappa: float = 0.0

    def __post_init__(self) -> None:
        if not self.stiffness > 0:
            raise PhysicsError(f"stiffness must be positive, got {self.stiffness}")
