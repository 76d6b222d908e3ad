#!/usr/bin/env python3
"""Records MinAtar Breakout, Freeway, Asterix, Space Invaders and Seaquest episodes from the
`minatar` package for tests/core/test_minatar.cpp.

    pip install minatar
    python3 tests/golden/make_minatar_traces.py   # writes tests/golden/minatar/{breakout,freeway,asterix,space_invaders,seaquest}.json

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
import sys

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


# Each Seaquest episode also notes, for the record (the test does not read them), how it ended
# and how many subs were removed on a step they fired.
SEAQUEST_STEP = ["action", "sticky draw", "reward", "terminal",
                 "an enemy's draws (side, sub, lane; empty: none due)", "a diver's draws (side, lane; empty: none due)",
                 "the observation's set cells, [channel][row][column] flattened", "difficulty (ramps so far)",
                 "divers carried (minatar's count: -1 after surfacing with 6)", "oxygen"]


class SeaquestSubs(list):
    """minatar's list of enemy subs, counting the subs removed on a step they fire: minatar goes
    on reading a removed sub, so it still fires (possibly from off the grid)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.removed_firing = 0

    def remove(self, sub):
        # Only the removals in act's walk over the subs (`for sub in reversed(self.e_subs)`)
        # are followed by the sub's shot; a sub that a bullet moves onto goes before that walk.
        self.removed_firing += sub[4] == 0 and sys._getframe(1).f_locals.get("sub") is sub
        super().remove(sub)


def seaquest_safe(game, depth):
    """Whether some actions keep the submarine alive for `depth` steps (on copies of the game,
    whose copied generator draws what the game will)."""
    if depth == 0:
        return True
    for action in (0, 2, 4, 1, 3, 5):
        trial = copy.deepcopy(game)
        _, terminal = trial.act(action)
        if not terminal and seaquest_safe(trial, depth - 1):
            return True
    return False


def seaquest_action(inner, policy, noise, surfaces):
    """Rescues divers, shoots enemies ahead in its lane and surfaces with divers when the oxygen
    runs low or six are aboard, then ramps the difficulty (`surfaces` False: never surfaces, so
    the oxygen runs out); dodges what would end the episode within three steps. Random one time
    in `noise`."""
    if policy.random() < noise:
        return int(policy.integers(0, 6))
    x, y = inner.sub_x, inner.sub_y
    wanted = []
    if surfaces and inner.diver_count < 0 and (inner.e_spawn_speed > 1 or inner.move_speed > 2):
        # minatar leaves -1 divers after surfacing with 6, and surfacing is then free: bob
        # between rows 0 and 1 to ramp the difficulty to its end.
        wanted.append(4 if y == 0 else 2)
    elif surfaces and inner.diver_count != 0 and (inner.diver_count == 6 or inner.oxygen < 12 * y + 20):
        wanted.append(2)
    ahead = [e for e in inner.e_fish + inner.e_subs if e[1] == y and (e[0] > x if inner.sub_or else e[0] < x)]
    if ahead and inner.shot_timer == 0:
        wanted.append(5)
    divers = sorted(inner.divers, key=lambda d: abs(d[0] - x) + abs(d[1] - y))
    if divers and inner.diver_count < 6:
        dx, dy = divers[0][0] - x, divers[0][1] - y
        wanted += ([4] if dy > 0 else [2] if dy < 0 else []) + ([3] if dx > 0 else [1] if dx < 0 else [])
    if y == 0 and (inner.diver_count != 0 or not surfaces):
        wanted.append(4)
    wanted += [int(a) for a in policy.permutation(6)]
    for action in wanted:
        if action == 2 and y == 1 and (inner.diver_count == 0 or not surfaces):
            continue  # surfacing without a diver ends the episode
        trial = copy.deepcopy(inner)
        _, terminal = trial.act(action)
        if not terminal and seaquest_safe(trial, 2):
            return action
    return wanted[0]


def seaquest_trace(seed, episodes, max_steps, noise, surfaces=True):
    env, recorder = recorded("seaquest", seed)
    policy = np.random.default_rng(1300 + seed)
    out = {"seed": seed, "episodes": []}
    for _ in range(episodes):
        recorder.draws.clear()
        env.reset()
        assert not recorder.draws  # a reset draws nothing
        env.env.e_subs = SeaquestSubs()
        episode = {"initial": set_cells(env), "steps": []}
        for _ in range(max_steps):
            inner = env.env
            action = seaquest_action(inner, policy, noise, surfaces)
            enemy_due, diver_due = not inner.terminal and inner.e_spawn_timer == 0, not inner.terminal and inner.d_spawn_timer == 0
            recorder.draws.clear()
            reward, terminal = env.act(action)  # the minimal set is minatar's actions 0-5
            (kind, draw), rest = recorder.draws[0], [v for _, v in recorder.draws[1:]]
            assert kind == "rand" and len(rest) == 3 * enemy_due + 2 * diver_due
            enemy, diver = (rest[:3], rest[3:]) if enemy_due else ([], rest)
            episode["steps"].append([action, draw, float(reward), int(terminal), enemy, diver, set_cells(env), inner.ramp_index,
                                     inner.diver_count, inner.oxygen])
            if terminal:
                episode["end"] = seaquest_end(inner)
                break
        episode["subs removed firing"] = inner.e_subs.removed_firing
        out["episodes"].append(episode)
    return out


def seaquest_end(inner):
    """Why the episode ended (for the record: the test does not read it)."""
    if inner.oxygen <= 0:
        return "oxygen"
    if inner.sub_y == 0 and inner.diver_count == 0:
        return "surfaced without a diver"
    x, y = inner.sub_x, inner.sub_y
    if any(b[1] == y and x in (b[0], b[0] - (1 if b[2] else -1)) for b in inner.e_bullets):
        return "enemy bullet"
    return "enemy"


def seaquest_report(traces):
    """What the Seaquest traces cover: surfacings, ramps, enemy shots and how episodes ended."""
    surfacings = full = shots = 0
    ends = {}
    for t in traces:
        for e in t["episodes"]:
            previous = [0, 0, 0, 0, 0, 0, e["initial"], 0, 0, 200]
            for s in e["steps"]:
                surfacings += s[7] > previous[7] or (previous[9] < 200 and s[9] == 200)
                full += previous[8] == 6 and s[8] == -1
                shots += sum(400 <= c < 500 for c in s[6]) > sum(400 <= c < 500 for c in previous[6])
                previous = s
            end = e.get("end", "step limit")
            ends[end] = ends.get(end, 0) + 1
    print(f"seaquest: {surfacings} surfacings ({full} with 6 divers), difficulty up to "
          f"{max(s[7] for t in traces for e in t['episodes'] for s in e['steps'])}, {shots} steps with new enemy bullets, ends: {ends}")


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

    # Long episodes of a careful player (each surfacing ramps the difficulty; seed 0's surfaces
    # with 6 divers, then ramps to the end; in seeds 83 and 84 a sub leaves the grid on a step it
    # fires, and minatar adds its shot from off the grid, then removes it), two that do not mean
    # to surface (seed 7's oxygen runs out, an enemy bullet hits seed 8's) and short careless
    # ones (one surfaces without a diver, one moves into an enemy bullet).
    traces = [seaquest_trace(seed, episodes=1, max_steps=1000, noise=0.02) for seed in (0, 1, 83, 84)]
    traces += [seaquest_trace(seed, episodes=1, max_steps=400, noise=0.02, surfaces=False) for seed in (7, 8)]
    traces += [seaquest_trace(18, episodes=3, max_steps=200, noise=0.5)]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "minatar", "seaquest.json")
    with open(path, "w") as f:
        json.dump({"generator": "tests/golden/make_minatar_traces.py", "step": SEAQUEST_STEP, "minatar_seaquest": traces}, f,
                  separators=(",", ":"))
    report(path, traces)
    seaquest_report(traces)
    assert sum(e["subs removed firing"] for t in traces for e in t["episodes"]) >= 2


def report(path, traces):
    steps = sum(len(e["steps"]) for t in traces for e in t["episodes"])
    rewards = sum(s[2] for t in traces for e in t["episodes"] for s in e["steps"])
    sticky = sum(s[1] < 0.1 for t in traces for e in t["episodes"] for s in e["steps"])
    print(f"{path}: {len(traces)} traces, {steps} steps, {rewards:.0f} reward, {sticky} sticky steps")


if __name__ == "__main__":
    main()
