#!/usr/bin/env python3
"""Records CartPole-v1 trajectories from Gymnasium for tests/core/test_cartpole.cpp.

    pip install gymnasium
    python3 tests/golden/make_cartpole_traces.py      # writes tests/golden/cartpole/traces.json

Each trace: the exact float64 state after reset(seed), then per step the action (random, from a
fixed generator), the float32 observation, reward, terminated and truncated, until the episode
ends (termination, or truncation at 500 steps by the TimeLimit wrapper).
"""
import json
import os

import gymnasium as gym
import numpy as np


def trace(seed):
    env = gym.make("CartPole-v1")
    env.reset(seed=seed)
    state = [float(v) for v in env.unwrapped.state]
    rng = np.random.default_rng(1000 + seed)
    steps = []
    while True:
        # Odd seeds push at random; even seeds balance the pole (a simple controller with some
        # noise), so their episodes run until truncation.
        x, x_dot, theta, theta_dot = env.unwrapped.state
        if seed % 2:
            action = int(rng.integers(0, 2))
        else:
            action = int(theta + 0.5 * theta_dot + 0.01 * x_dot > 0) if rng.random() < 0.9 else int(rng.integers(0, 2))
        obs, reward, terminated, truncated, _ = env.step(action)
        steps.append({"action": action, "obs": [float(v) for v in obs], "reward": float(reward),
                      "terminated": bool(terminated), "truncated": bool(truncated)})
        if terminated or truncated:
            break
    return {"seed": seed, "gymnasium": gym.__version__, "initial_state": state, "steps": steps}


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cartpole", "traces.json")
    traces = [trace(seed) for seed in range(8)]
    with open(out, "w") as f:
        json.dump(traces, f)
    print(out, [len(t["steps"]) for t in traces])


if __name__ == "__main__":
    main()
