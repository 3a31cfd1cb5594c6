"""Turning measurements into points."""

from __future__ import annotations


def performance_points(ratio: float | None, zero_at: float, full_at: float,
                       points: float) -> float:
    """Full points at or above full_at, none at or below zero_at, linear in between."""
    if ratio is None or ratio != ratio or ratio <= zero_at:
        return 0.0
    if ratio >= full_at:
        return points
    return points * (ratio - zero_at) / (full_at - zero_at)


def correctness_points(passed: int, total: int, points: float) -> float:
    """A share of the points for each passing case."""
    if total <= 0:
        return 0.0
    return points * passed / total
