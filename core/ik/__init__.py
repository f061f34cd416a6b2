"""Inverse kinematics: analytic two-link limbs, damped-least-squares chains, foot planting."""

from .jacobian import JacobianIKResult, jacobian_ik
from .plant import plant_feet
from .two_link import TwoLinkResult, apply_two_link, solve_two_link, two_link_ik

__all__ = [
    "JacobianIKResult",
    "TwoLinkResult",
    "apply_two_link",
    "jacobian_ik",
    "plant_feet",
    "solve_two_link",
    "two_link_ik",
]
