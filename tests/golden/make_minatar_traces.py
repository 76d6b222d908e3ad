#!/usr/bin/env python3
"""Records MinAtar Breakout and Freeway episodes from the `minatar` package for
tests/core/test_minatar.cpp.

    pip install minatar
    python3 tests/golden/make_minatar_traces.py      # writes tests/golden/minatar/{breakout,freeway}.json

minatar's Environment draws from one numpy RandomState: the ball's starting side at each reset
(randint(2)) and, at each step, the sticky-action draw (rand() < 0.1 repeats the previous
action). A recording RandomState notes every draw, so the C++ twin replays them. Each trace:
the seed, then per episode the ball's starting side and per step the action (of the minimal set:
0 none, 1 left, 2 right; a player that heads for the ball with some noise),
the sticky draw, the reward, the terminal flag and the observation after the step (the
paddle's column, the ball's and the trail's cells, each row's bricks as a bit mask; the initial
observation first), as one array per step whose columns the file's "step" names. The previous action survives a reset, as in minatar.
"""
import json
import os

import numpy as np
from minatar import Environment

MINIMAL = [0, 1, 3]  # minatar's numbers for none, left, right


OBSERVATION = ["paddle column", "ball row", "ball column", "trail row", "trail column"] + [f"bricks of row {r}" for r in range(10)]
STEP = ["action", "sticky draw", "reward", "terminal"] + OBSERVATION


FREEWAY_STEP = ["action", "sticky draw", "reward", "terminal", "cars drawn (8 signed periods; empty: none)",
                "the observation's set cells, [channel][row][column] flattened"]
FREEWAY_MINIMAL = [0, 2, 4]  # minatar's numbers for none, up, down


class RecordingRandomState(np.random.RandomState):
    def __init__(self, seed):
        super().__init__(seed)
        self.draws = []

    def rand(self, *args):
        v = super().rand(*args)
        self.draws.append(("rand", v.tolist() if isinstance(v, np.ndarray) else float(v)))
        return v

    def randint(self, *args, **kwargs):
        v = super().randint(*args, **kwargs)
        self.draws.append(("randint", v.tolist() if isinstance(v, np.ndarray) else int(v)))
        return v


def observation(env):
    """The observation, compactly: the paddle's column, the ball's and the trail's [row, column],
    and each row's bricks as a bit mask (bit c: column c)."""
    state = env.state()  # [row][column][channel], bool
    cells = []
    for channel in range(3):  # paddle, ball, trail: one cell each
        (rows, columns) = np.nonzero(state[:, :, channel])
        assert len(rows) == 1
        cells.append([int(rows[0]), int(columns[0])])
    assert cells[0][0] == 9
    bricks = [int(sum(1 << c for c in range(10) if state[r, c, 3])) for r in range(10)]
    return [cells[0][1], *cells[1], *cells[2], *bricks]


def landing_column(inner):
    """Where the ball reaches the paddle's row, bouncing off today's bricks (the player heads there)."""
    x, y, d = inner.ball_x, inner.ball_y, inner.ball_dir
    for _ in range(40):
        nx, ny = x + (-1 if d in (0, 3) else 1), y + (-1 if d in (0, 1) else 1)
        if nx < 0 or nx > 9:
            nx, d = min(9, max(0, nx)), [1, 0, 3, 2][d]
        if ny < 0:
            ny, d = 0, [3, 2, 1, 0][d]
        elif inner.brick_map[ny, nx] == 1:
            ny, d = y, [3, 2, 1, 0][d]
        if ny == 9:
            return nx
        x, y = nx, ny
    return x


def trace(seed, episodes, max_steps, noise):
    env = Environment("breakout", sticky_action_prob=0.1)
    recorder = RecordingRandomState(seed)
    env.random = recorder
    env.env.random = recorder
    policy = np.random.default_rng(500 + seed)
    out = {"seed": seed, "episodes": []}
    for _ in range(episodes):
        recorder.draws.clear()
        env.reset()
        (kind, start), = recorder.draws
        assert kind == "randint"
        episode = {"ball_start": start, "initial": observation(env), "steps": []}
        for _ in range(max_steps):
            inner = env.env
            target = landing_column(inner)
            if policy.random() < noise:
                action = int(policy.integers(0, 3))
            else:
                action = 0 if target == inner.pos else (1 if target < inner.pos else 2)
            recorder.draws.clear()
            reward, terminal = env.act(MINIMAL[action])
            (kind, draw), = recorder.draws
            assert kind == "rand"
            episode["steps"].append([action, draw, float(reward), int(terminal), *observation(env)])
            if terminal:
                break
        out["episodes"].append(episode)
    return out


def set_cells(env):
    chw = np.transpose(env.state(), (2, 0, 1)).reshape(-1)
    return [int(i) for i in np.flatnonzero(chw)]


def car_draw(draws):
    """minatar's _randomize_cars draws: eight periods (randint(1, 6, 8)), then eight directions
    (rand(8)); the signed periods."""
    (k1, periods), (k2, directions) = draws
    assert k1 == "randint" and k2 == "rand"
    return [int(p * np.sign(d - 0.5)) for p, d in zip(periods, directions)]


def freeway_trace(seed, episodes, max_steps, noise):
    env = Environment("freeway", sticky_action_prob=0.1)
    recorder = RecordingRandomState(seed)
    env.random = recorder
    env.env.random = recorder
    policy = np.random.default_rng(700 + seed)
    out = {"seed": seed, "episodes": []}
    for _ in range(episodes):
        recorder.draws.clear()
        env.reset()
        episode = {"cars": car_draw(recorder.draws), "initial": set_cells(env), "steps": []}
        for _ in range(max_steps):
            # Mostly up (crossings), sometimes none or down.
            action = int(policy.integers(0, 3)) if policy.random() < noise else 1
            recorder.draws.clear()
            reward, terminal = env.act(FREEWAY_MINIMAL[action])
            (kind, draw), rest = recorder.draws[0], recorder.draws[1:]
            assert kind == "rand"
            episode["steps"].append([action, draw, float(reward), int(terminal), car_draw(rest) if rest else [], set_cells(env)])
            if terminal:
                break
        out["episodes"].append(episode)
    return out


def main():
    # Short episodes of a noisy player, and long ones of a steady player that clear every brick.
    traces = [trace(seed, episodes=3, max_steps=300, noise=0.3) for seed in range(4)]
    # Seed 14's steady player clears the bricks twice (67 bricks) before it misses.
    traces += [trace(14, episodes=1, max_steps=3000, noise=0.02)]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "minatar", "breakout.json")
    with open(path, "w") as f:
        json.dump({"generator": "tests/golden/make_minatar_traces.py", "observation": OBSERVATION, "step": STEP,
                   "minatar_breakout": traces}, f, separators=(",", ":"))
    report(path, traces)

    # A whole episode, to its time limit; and two short ones, the second after a reset.
    traces = [freeway_trace(0, episodes=1, max_steps=3000, noise=0.3), freeway_trace(1, episodes=2, max_steps=300, noise=0.5)]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "minatar", "freeway.json")
    with open(path, "w") as f:
        json.dump({"generator": "tests/golden/make_minatar_traces.py", "step": FREEWAY_STEP, "minatar_freeway": traces}, f,
                  separators=(",", ":"))
    report(path, traces)


def report(path, traces):
    steps = sum(len(e["steps"]) for t in traces for e in t["episodes"])
    rewards = sum(s[2] for t in traces for e in t["episodes"] for s in e["steps"])
    sticky = sum(s[1] < 0.1 for t in traces for e in t["episodes"] for s in e["steps"])
    print(f"{path}: {len(traces)} traces, {steps} steps, {rewards:.0f} reward, {sticky} sticky steps")


if __name__ == "__main__":
    main()
