#!/usr/bin/env python3
"""Records MinAtar Breakout, Freeway, Asterix and Space Invaders episodes from the `minatar`
package for tests/core/test_minatar.cpp.

    pip install minatar
    python3 tests/golden/make_minatar_traces.py   # writes tests/golden/minatar/{breakout,freeway,asterix,space_invaders}.json

minatar's Environment draws from one numpy RandomState: the ball's starting side at each reset
(randint(2)) and, at each step, the sticky-action draw (rand() < 0.1 repeats the previous
action). A recording RandomState notes every draw, so the C++ twin replays them. Each trace:
the seed, then per episode the ball's starting side and per step the action (of the minimal set:
0 none, 1 left, 2 right; a player that heads for the ball with some noise),
the sticky draw, the reward, the terminal flag and the observation after the step (the
paddle's column, the ball's and the trail's cells, each row's bricks as a bit mask; the initial
observation first), as one array per step whose columns the file's "step" names. The previous action survives a reset, as in minatar.
"""
import copy
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


def recorded(game, seed):
    """minatar's game with sticky actions, its one RandomState (the wrapper's and the game's)
    replaced by a recording one."""
    env = Environment(game, sticky_action_prob=0.1)
    recorder = RecordingRandomState(seed)
    env.random = recorder
    env.env.random = recorder
    return env, recorder


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
    env, recorder = recorded("breakout", seed)
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
    env, recorder = recorded("freeway", seed)
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


ASTERIX_STEP = ["action", "sticky draw", "reward", "terminal",
                "the spawn's draws (side, gold, index among the free lanes; empty: no spawn; no index: no free lane)",
                "the observation's set cells, [channel][row][column] flattened", "difficulty (ramps so far)"]


def asterix_action(inner, policy, noise):
    """A player that keeps away from enemies and heads for gold; random one time in `noise`."""
    if policy.random() < noise:
        return int(policy.integers(0, 5))
    moves = {0: (0, 0), 1: (-1, 0), 2: (0, -1), 3: (1, 0), 4: (0, 1)}
    best, best_score = 0, None
    for action, (dx, dy) in moves.items():
        x, y = min(9, max(0, inner.player_x + dx)), min(8, max(1, inner.player_y + dy))
        # Entities enter at columns 0 and 9; staying put is preferred, since a sticky step repeats
        # the previous action.
        score = policy.random() * 0.1 - (3 if x in (0, 9) else 0) + (0.5 if action == 0 else 0)
        moving = inner.move_timer == 0
        for e in inner.entities:
            if e is None or e[1] != y:
                continue
            step = 1 if e[2] else -1
            if e[3]:
                score += 1.0 / (1 + abs(e[0] - x))
            elif e[0] == x or (moving and e[0] + step == x):
                score -= 100
            elif 0 < (x - e[0]) * step <= 2:
                score -= 5
        if best_score is None or score > best_score:
            best, best_score = action, score
    return best


def asterix_trace(seed, episodes, max_steps, noise):
    env, recorder = recorded("asterix", seed)
    policy = np.random.default_rng(900 + seed)
    out = {"seed": seed, "episodes": []}
    for _ in range(episodes):
        env.reset()
        episode = {"initial": set_cells(env), "steps": []}
        for _ in range(max_steps):
            action = asterix_action(env.env, policy, noise)
            recorder.draws.clear()
            reward, terminal = env.act(action)  # the minimal set is minatar's actions 0-4
            (kind, draw), spawn = recorder.draws[0], [v for _, v in recorder.draws[1:]]
            assert kind == "rand" and len(spawn) in (0, 2, 3)
            episode["steps"].append([action, draw, float(reward), int(terminal), spawn, set_cells(env), env.env.ramp_index])
            if terminal:
                break
        out["episodes"].append(episode)
    return out


INVADERS_STEP = ["action", "sticky draw", "reward", "terminal", "the observation's set cells, [channel][row][column] flattened",
                 "difficulty (blocks cleared while it ramps)"]
INVADERS_MINIMAL = [0, 1, 3, 5]  # minatar's numbers for none, left, right, fire


def invaders_action(inner, policy, noise):
    """Fires at the column above and moves under the aliens, never into an alien bullet's way."""
    if policy.random() < noise:
        return int(policy.integers(0, 4))
    pos = inner.pos
    if 0 < inner.alien_map.sum() <= 4:
        # The last aliens march fast: try moving 0-4 columns either way and then firing at every
        # chance, on a copy of the game (which draws nothing), and start the first plan that hits
        # one within 20 steps without dying.
        for moves in range(5):
            for direction in (1, 2):
                game = copy.deepcopy(inner)
                for k in range(20):
                    reward, terminal = game.act(INVADERS_MINIMAL[direction if k < moves else 3])
                    if terminal:
                        break
                    if reward > 0:
                        return direction if moves > 0 else 3
    danger = lambda x: inner.e_bullet_map[8, x] or inner.e_bullet_map[7, x] or inner.alien_map[8:, x].any()
    columns = [c for c in range(10) if inner.alien_map[:, c].any()]
    # The lowest aliens first (the last few march fast and must not reach the bottom), then the nearest.
    lowest = lambda c: int(np.max(np.nonzero(inner.alien_map[:, c])[0]))
    target = min(columns, key=lambda c: (-lowest(c), abs(c - pos), c)) if columns else pos
    wanted = 3 if target == pos else (1 if target < pos else 2)
    landing = {0: pos, 1: max(0, pos - 1), 2: min(9, pos + 1), 3: pos}
    if not danger(landing[wanted]):
        return wanted
    safe = [a for a in (0, 1, 2) if not danger(landing[a])]
    return int(policy.choice(safe)) if safe else wanted


def invaders_trace(seed, episodes, max_steps, noise):
    env, recorder = recorded("space_invaders", seed)
    policy = np.random.default_rng(1100 + seed)
    out = {"seed": seed, "episodes": []}
    for _ in range(episodes):
        recorder.draws.clear()
        env.reset()
        assert not recorder.draws  # the game itself draws nothing
        episode = {"initial": set_cells(env), "steps": []}
        for _ in range(max_steps):
            action = invaders_action(env.env, policy, noise)
            recorder.draws.clear()
            reward, terminal = env.act(INVADERS_MINIMAL[action])
            (kind, draw), = recorder.draws
            assert kind == "rand"
            episode["steps"].append([action, draw, float(reward), int(terminal), set_cells(env), env.env.ramp_index])
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

    # Long episodes of a careful player (the difficulty ramps to its end), and short careless ones.
    traces = [asterix_trace(seed, episodes=1, max_steps=1500, noise=0.05) for seed in (0, 1)]
    traces += [asterix_trace(seed, episodes=3, max_steps=300, noise=0.5) for seed in (2, 3)]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "minatar", "asterix.json")
    with open(path, "w") as f:
        json.dump({"generator": "tests/golden/make_minatar_traces.py", "step": ASTERIX_STEP, "minatar_asterix": traces}, f,
                  separators=(",", ":"))
    report(path, traces)
    print("asterix difficulty reached:", max(s[6] for t in traces for e in t["episodes"] for s in e["steps"]))

    traces = [invaders_trace(seed, episodes=1, max_steps=2000, noise=0.05) for seed in (0, 1)]
    traces += [invaders_trace(seed, episodes=3, max_steps=200, noise=0.6) for seed in (2,)]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "minatar", "space_invaders.json")
    with open(path, "w") as f:
        json.dump({"generator": "tests/golden/make_minatar_traces.py", "step": INVADERS_STEP, "minatar_space_invaders": traces}, f,
                  separators=(",", ":"))
    report(path, traces)
    print("space invaders difficulty reached:", max(s[5] for t in traces for e in t["episodes"] for s in e["steps"]))


def report(path, traces):
    steps = sum(len(e["steps"]) for t in traces for e in t["episodes"])
    rewards = sum(s[2] for t in traces for e in t["episodes"] for s in e["steps"])
    sticky = sum(s[1] < 0.1 for t in traces for e in t["episodes"] for s in e["steps"])
    print(f"{path}: {len(traces)} traces, {steps} steps, {rewards:.0f} reward, {sticky} sticky steps")


if __name__ == "__main__":
    main()
