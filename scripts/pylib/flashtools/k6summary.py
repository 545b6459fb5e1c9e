"""The summary k6 writes at the end of a drill (its --summary-export file), as the drills read it: the
answer counters load-tests/drills/flash-sale.js counts, and any metric's values."""
from __future__ import annotations

import json


def read(path: str) -> dict:
    """The summary's metrics by name; none when k6 wrote no readable summary (it died, say)."""
    try:
        with open(path) as f:
            return json.load(f)["metrics"]
    except (OSError, ValueError, KeyError):
        return {}


def values(metrics: dict, name: str) -> dict:
    """One metric's values (count, rate, p(99), ...); none when k6 did not report it."""
    return (metrics.get(name) or {}).get("values", {})


def answers(metrics: dict) -> dict:
    """The drill's answers by kind (201, 202 or 409 expected; 503 unavailable; other) and the arrivals k6 dropped."""
    def count(name: str) -> int:
        return values(metrics, name).get("count", 0)

    return {"expected": count("answers_expected"), "unavailable": count("answers_unavailable"),
            "other": count("answers_other"), "dropped": count("dropped_iterations")}
