"""The one percentile every tool reports: the nearest rank on the sorted values, index round(p/100 × (n − 1)).

p50 of [1, 2, 3, 4] is 3 (index round(1.5) = 2), p99 of 100 values the 99th smallest (index round(98.01) = 98),
p100 the largest. None when there are no values.
"""


def percentile(values, p):
    """The p-th percentile (0 to 100) of values, in any order; None if there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]
