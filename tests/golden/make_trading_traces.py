#!/usr/bin/env python3
"""Records gym-anytrading's StocksEnv and ForexEnv episodes on its bundled price series
(STOCKS_GOOGL.csv, FOREX_EURUSD_1H_ASK.csv) for tests/core/test_trading.cpp.

    pip install gym-anytrading            # 2.0.0, with numpy >= 2
    python3 tests/golden/make_trading_traces.py   # writes tests/golden/trading/traces.json

The test reads the same CSV files from the installed package and replays each trace's actions
on core/env/trading.hpp. Each trace names its data file, its rules (stocks or forex), its window
and frame_bound (stocks-v0's and forex-v0's own, as gym.make builds them, and shorter frames
played to their truncation), the initial observation and per step the columns "step" names:
the action (0 sell, 1 buy; seeded, each step flipping the previous one with the trace's
probability), the reward, the total profit, the position after the step (0 short, 1 long), the
truncation flag and two checksums of the observation after the step, summed in float64 in
order: sum_k o[k] and sum_k (k + 1) o[k] over the observation flattened row-major ([window][price,
diff]). Per data file it notes the bars and the first and last close, so a changed bundled file
is told apart from a wrong reader.
"""
import json
import os

import gymnasium as gym
import numpy as np

import gym_anytrading  # noqa: F401 (registers stocks-v0 and forex-v0)
from gym_anytrading import datasets
from gym_anytrading.envs import ForexEnv, StocksEnv

STEP = ["action", "reward", "total profit", "position (0 short, 1 long)", "truncated",
        "observation sum", "observation weighted sum"]

FILES = {"STOCKS_GOOGL.csv": datasets.STOCKS_GOOGL, "FOREX_EURUSD_1H_ASK.csv": datasets.FOREX_EURUSD_1H_ASK}


def checksums(observation):
    plain, weighted = 0.0, 0.0
    for k, v in enumerate(np.asarray(observation, dtype=np.float32).reshape(-1)):
        plain += float(v)
        weighted += (k + 1) * float(v)
    return plain, weighted


def make(market, data, window, frame_bound):
    if frame_bound is None:  # the registered environment, as users make it
        env = gym.make("stocks-v0" if market == "stocks" else "forex-v0")
        inner = env.unwrapped
        return env, inner, inner.window_size, list(inner.frame_bound)
    kind = StocksEnv if market == "stocks" else ForexEnv
    env = kind(df=FILES[data].copy(), window_size=window, frame_bound=frame_bound)
    return env, env, window, list(frame_bound)


def trace(market, data, seed, steps, flip, window=None, frame_bound=None):
    env, inner, window, frame_bound = make(market, data, window, frame_bound)
    observation, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    action = int(rng.integers(0, 2))
    out = {"market": market, "data": data, "window": window, "frame_bound": frame_bound, "seed": seed, "flip": flip,
           "initial": [float(v) for v in np.asarray(observation).reshape(-1)], "steps": []}
    for _ in range(steps):
        if rng.random() < flip:
            action = 1 - action
        observation, reward, terminated, truncated, info = env.step(action)
        assert not terminated
        out["steps"].append([action, float(reward), float(info["total_profit"]), int(info["position"].value), int(truncated),
                             *checksums(observation)])
        if truncated:
            break
    return out


def main():
    traces = [
        # stocks-v0 and forex-v0 as registered (the whole series; a few hundred steps of it).
        trace("stocks", "STOCKS_GOOGL.csv", seed=1, steps=400, flip=0.5),
        trace("stocks", "STOCKS_GOOGL.csv", seed=2, steps=400, flip=0.08),
        trace("forex", "FOREX_EURUSD_1H_ASK.csv", seed=3, steps=400, flip=0.5),
        trace("forex", "FOREX_EURUSD_1H_ASK.csv", seed=4, steps=400, flip=0.08),
        # Shorter frames inside the series, played to their truncation (the last step's profit).
        trace("stocks", "STOCKS_GOOGL.csv", seed=5, steps=1000, flip=0.15, window=30, frame_bound=(500, 800)),
        trace("forex", "FOREX_EURUSD_1H_ASK.csv", seed=6, steps=1000, flip=0.15, window=24, frame_bound=(1000, 1250)),
        # Each market's rules on the other's series, and a frame at the series' first bar.
        trace("stocks", "FOREX_EURUSD_1H_ASK.csv", seed=7, steps=1000, flip=0.2, window=24, frame_bound=(24, 300)),
        trace("forex", "STOCKS_GOOGL.csv", seed=8, steps=1000, flip=0.2, window=10, frame_bound=(2000, 2335)),
    ]
    files = {name: {"bars": len(df), "first close": float(df["Close"].iloc[0]), "last close": float(df["Close"].iloc[-1])}
             for name, df in FILES.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trading", "traces.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"generator": "tests/golden/make_trading_traces.py", "gym_anytrading": "2.0.0", "numpy": np.__version__,
                   "files": files, "step": STEP, "traces": traces}, f, separators=(",", ":"))
    steps = sum(len(t["steps"]) for t in traces)
    trades = sum(1 for t in traces for a, b in zip(t["steps"], t["steps"][1:]) if a[3] != b[3])
    ended = sum(t["steps"][-1][4] for t in traces)
    print(f"{path}: {len(traces)} traces, {steps} steps, {trades} trades, {ended} played to their truncation")


if __name__ == "__main__":
    main()
