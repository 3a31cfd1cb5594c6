"""grader.scoring."""

import math

import pytest

from grader.scoring import correctness_points, performance_points


@pytest.mark.parametrize("ratio, expected", [
    (None, 0.0), (math.nan, 0.0), (-1.0, 0.0), (0.0, 0.0), (0.3, 0.0), (0.55, 20.0),
    (0.8, 40.0), (0.79999, 39.9992), (5.0, 40.0), (math.inf, 40.0)])
def test_performance_points(ratio, expected):
    assert performance_points(ratio, 0.3, 0.8, 40) == pytest.approx(expected)


def test_performance_points_is_monotonic():
    values = [performance_points(r / 100, 0.3, 0.8, 40) for r in range(0, 120)]
    assert values == sorted(values)
    assert values[0] == 0 and values[-1] == 40


@pytest.mark.parametrize("passed, total, expected", [
    (0, 0, 0.0), (0, 4, 0.0), (1, 4, 15.0), (3, 4, 45.0), (4, 4, 60.0), (5, -1, 0.0)])
def test_correctness_points(passed, total, expected):
    assert correctness_points(passed, total, 60) == pytest.approx(expected)
