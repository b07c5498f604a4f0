"""Analysis time per request against call length (it must stay flat).

Runs the rules the way ingest does, on the messages each request appended
or changed, over synthetic calls shaped like the Pipecat captures, and
prints the median time per request at several points of a 300-turn call.
Pure functions, no database.

    .venv/bin/python bench/analysis.py
"""

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calls.analysis import analyse  # noqa: E402
from calls.requestbody import parse_request  # noqa: E402
from calls.synthetic import synthetic_call  # noqa: E402

TURNS = 300
CALLS = 5
POINTS = [10, 50, 100, 200, 300]
REPEATS = 5


def main():
    timings: dict[int, list[float]] = {n: [] for n in range(1, TURNS + 1)}
    for seed in range(CALLS):
        previous: list[str] = []
        for number, body in enumerate(synthetic_call(TURNS, seed=seed), start=1):
            parsed = parse_request(body)
            changed = [
                i for i, d in enumerate(parsed.digests) if i >= len(previous) or previous[i] != d
            ]
            # Median of a few runs: one cold run mostly measures the garbage
            # collector walking the freshly parsed body, not the rules.
            runs = []
            for _ in range(REPEATS):
                started = time.perf_counter()
                analyse(parsed, changed)
                runs.append(time.perf_counter() - started)
            timings[number].append(statistics.median(runs))
            previous = parsed.digests
    print(f"Analysis time per request (median of turns around each point, {CALLS} calls)")
    medians = {}
    for point in POINTS:
        window = [t for n in range(max(1, point - 5), min(TURNS, point + 5) + 1) for t in timings[n]]
        medians[point] = statistics.median(window)
        print(f"  turn {point:3d}: {medians[point] * 1e6:7.0f} µs")
    print(f"  ratio turn {POINTS[-1]} / turn {POINTS[0]}: {medians[POINTS[-1]] / medians[POINTS[0]]:.2f}")


if __name__ == "__main__":
    main()
