"""Inverse kinematics: analytic two-link limbs, damped-least-squares chains, foot planting."""

from .two_link import TwoLinkResult, apply_two_link, solve_two_link, two_link_ik

__all__ = ["TwoLinkResult", "apply_two_link", "solve_two_link", "two_link_ik"]
