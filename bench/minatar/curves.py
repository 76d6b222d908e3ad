#!/usr/bin/env python3
"""Training curves of PPO runs from their metrics.jsonl: the mean episode return (sampled actions)
against environment steps and against minutes of training, in about 40 windows per run (each
point the mean of the iterations in its window that finished an episode), as one CSV.

    python3 bench/minatar/curves.py OUT.csv GAME=RUN_DIR_OR_METRICS_JSONL [...]
"""
import csv
import json
import os
import sys

POINTS = 40


def curve(path):
    if os.path.isdir(path):
        path = os.path.join(path, "metrics.jsonl")
    rows = [json.loads(line) for line in open(path) if line.strip()]
    seconds = 0.0
    points = []
    for r in rows:
        seconds += r.get("seconds_wall", 0.0)
        points.append((r["env_steps"], seconds / 60, r.get("episode_return_mean")))
    size = max(1, len(points) // POINTS)
    out = []
    for start in range(0, len(points), size):
        window = points[start:start + size]
        returns = [p[2] for p in window if p[2] is not None]
        if returns:
            out.append((window[-1][0], window[-1][1], sum(returns) / len(returns)))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["game", "env_steps", "minutes", "mean_return"])
        for arg in sys.argv[2:]:
            game, path = arg.split("=", 1)
            for steps, minutes, ret in curve(path):
                w.writerow([game, steps, f"{minutes:.3f}", f"{ret:.2f}"])


if __name__ == "__main__":
    main()
