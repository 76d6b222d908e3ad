#!/usr/bin/env python3
"""The peer baseline for our GPU Monte Carlo tree search: DeepMind's mctx over pgx's Connect Four.

What it measures: the time of one batched search call, i.e. the root evaluation plus S
simulations for each of B independent games, with `mctx.muzero_policy` and/or
`mctx.gumbel_muzero_policy`, and simulations/s = B * S / time.

How: the network has the shape of ours (connect4_mlp256): an MLP 84-256-256-8 with tanh, fp32,
random weights from a fixed seed; its input is pgx's observation (6x7x2 bool planes, seen by
the player to move: plane 0 the mover's stones, plane 1 the opponent's) flattened to 84 floats;
its output is 7 prior logits (illegal actions masked to a large negative) and a value through
tanh. The recurrent function steps pgx's env (`env.step`, vmapped) on the embedding, which is
the pgx State, and evaluates the network on the new state. As mctx's two-player convention
needs (and as pgx's own AlphaZero example does), the reward is the one of the player who just
moved (`rewards[mover]`; pgx gives +-1 at a win, 0 otherwise), the discount is -1 (players
alternate) or 0 once the game is terminated, and the value of a terminated state is 0. The
roots are pgx's initial states (optionally after --opening-moves random legal moves). The whole
search call is jitted; after warm-up (compile excluded) it is timed --repeats times with
`jax.block_until_ready`, and the median is reported. Before timing, the outputs are checked:
root visit counts sum to S in each game, chosen actions and nonzero action weights are legal.
--no-network gives the "uniform prior, no network" row: logits 0 over the legal actions,
value 0 (pgx is still stepped and its rewards used).

--recurrent times mctx with a learned model instead of pgx's rules: the shapes of our
muzero_mlp256 (core/train/benchmark_nets.cpp), for `cuda-agent bench search --model learned`.
The root observation is a fixed random binary vector of --obs-size floats (400: MinAtar's
4x10x10), represent = relu(dense 256), the embedding is the 256-wide latent state; recurrent_fn:
h = relu(dense 256 of [state, one_hot(action)]), h = relu(dense 256 of h), the next state h, the
reward dense 1 of h, then predict: two relu(dense 256) layers, the logits (--actions wide) and a
linear value; discount 0.997; all actions legal. Weights as below, from the seed.

Run it (on the GPU machine, scripts/gpu-bench calls it after `scripts/gpu-wheels --install`):
    python3 bench/mctx_baseline.py --games 1024,4096,16384 --sims 64 --policy both --json
    python3 bench/mctx_baseline.py --games 1024 --sims 64 --policy both --no-network --json
    python3 bench/mctx_baseline.py --recurrent --games 1024,4096 --sims 64 --policy both --json
With --json, one JSON object per line (policy x batch size); status lines go to stderr.
"""
import argparse
import json
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import mctx
import numpy as np

NUM_ACTIONS = 7
OBS_SIZE = 6 * 7 * 2
HIDDEN = 256


def init_params(seed):
    """MLP 84-256-256-8 weights, uniform(+-sqrt(6/(fan_in+fan_out))), zero biases."""
    sizes = [OBS_SIZE, HIDDEN, HIDDEN, NUM_ACTIONS + 1]
    keys = jax.random.split(jax.random.PRNGKey(seed), len(sizes) - 1)
    params = []
    for key, n_in, n_out in zip(keys, sizes[:-1], sizes[1:]):
        limit = np.sqrt(6.0 / (n_in + n_out))
        w = jax.random.uniform(key, (n_in, n_out), jnp.float32, -limit, limit)
        params.append((w, jnp.zeros((n_out,), jnp.float32)))
    return params


def make_evaluate(use_network, precision):
    """Returns evaluate(params, state) -> (masked prior logits [B, 7], value [B])."""

    def evaluate(params, state):
        legal = state.legal_action_mask
        if use_network:
            x = state.observation.reshape(legal.shape[0], OBS_SIZE).astype(jnp.float32)
            (w1, b1), (w2, b2), (w3, b3) = params
            h = jnp.tanh(jnp.dot(x, w1, precision=precision) + b1)
            h = jnp.tanh(jnp.dot(h, w2, precision=precision) + b2)
            out = jnp.dot(h, w3, precision=precision) + b3
            logits, value = out[:, :NUM_ACTIONS], jnp.tanh(out[:, NUM_ACTIONS])
        else:
            logits = jnp.zeros(legal.shape, jnp.float32)
            value = jnp.zeros(legal.shape[:1], jnp.float32)
        logits = jnp.where(legal, logits, jnp.finfo(jnp.float32).min)
        return logits, value

    return evaluate


def make_search(env, policy, num_sims, use_network, precision):
    """Returns a jitted search(params, root_state, key) -> mctx.PolicyOutput."""
    evaluate = make_evaluate(use_network, precision)
    step = jax.vmap(env.step)

    def recurrent_fn(params, rng_key, action, state):
        del rng_key
        mover = state.current_player
        state = step(state, action)
        logits, value = evaluate(params, state)
        reward = state.rewards[jnp.arange(action.shape[0]), mover]
        value = jnp.where(state.terminated, 0.0, value)
        discount = jnp.where(state.terminated, 0.0, -1.0).astype(jnp.float32)
        return mctx.RecurrentFnOutput(reward=reward, discount=discount,
                                      prior_logits=logits, value=value), state

    def search(params, root_state, key):
        logits, value = evaluate(params, root_state)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=root_state)
        kwargs = dict(params=params, rng_key=key, root=root, recurrent_fn=recurrent_fn,
                      num_simulations=num_sims, invalid_actions=~root_state.legal_action_mask)
        if policy == "muzero":
            return mctx.muzero_policy(**kwargs)
        return mctx.gumbel_muzero_policy(**kwargs)

    return jax.jit(search)


def make_roots(env, games, opening_moves, seed):
    """B initial states (random first player), then `opening_moves` random legal moves each."""
    key = jax.random.PRNGKey(seed)
    key, sub = jax.random.split(key)
    state = jax.jit(jax.vmap(env.init))(jax.random.split(sub, games))
    step = jax.jit(jax.vmap(env.step))
    for _ in range(opening_moves):
        key, sub = jax.random.split(key)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        state = step(state, jax.random.categorical(sub, logits))
    # No game ends within 6 plies; a longer opening may end some, and a root must be live.
    if bool(jnp.any(state.terminated)):
        raise SystemExit("mctx_baseline: an opening ended a game; use fewer --opening-moves")
    return state


def check(out, root_state, num_sims):
    """Sanity of one search's outputs; returns a list of failures (empty when sane)."""
    legal = np.asarray(root_state.legal_action_mask)
    visits = np.asarray(out.search_tree.summary().visit_counts)
    action = np.asarray(out.action)
    weights = np.asarray(out.action_weights)
    games = legal.shape[0]
    bad = []
    if not np.all(visits.sum(-1) == num_sims):
        bad.append(f"root visit counts do not sum to {num_sims}: {np.unique(visits.sum(-1))}")
    if np.any(visits[~legal] > 0):
        bad.append("illegal root actions were visited")
    if not np.all(legal[np.arange(games), action]):
        bad.append("an illegal action was chosen")
    if not np.allclose(weights.sum(-1), 1.0, atol=1e-4) or np.any(weights[~legal] > 1e-6):
        bad.append("action weights do not sum to 1 over legal actions")
    if not np.all(np.isfinite(np.asarray(out.search_tree.node_values))):
        bad.append("non-finite node values")
    return bad


def dense_params(key, n_in, n_out):
    limit = np.sqrt(6.0 / (n_in + n_out))
    return (jax.random.uniform(key, (n_in, n_out), jnp.float32, -limit, limit), jnp.zeros((n_out,), jnp.float32))


def init_learned_params(seed, obs_size, actions):
    """muzero_mlp256's layers: represent, dynamics (2 + reward), predict (2 + logits + value)."""
    shapes = [(obs_size, HIDDEN), (HIDDEN + actions, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, 1),
              (HIDDEN, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, actions), (HIDDEN, 1)]
    keys = jax.random.split(jax.random.PRNGKey(seed), len(shapes))
    return [dense_params(k, a, b) for k, (a, b) in zip(keys, shapes)]


def make_learned_search(policy, num_sims, actions, precision, discount=0.997):
    """Returns a jitted search(params, observations, key) over the learned model."""

    def dense(layer, x):
        w, b = layer
        return jnp.dot(x, w, precision=precision) + b

    def predict(params, state):
        h = jax.nn.relu(dense(params[4], state))
        h = jax.nn.relu(dense(params[5], h))
        return dense(params[6], h), dense(params[7], h)[:, 0]

    def recurrent_fn(params, rng_key, action, state):
        del rng_key
        x = jnp.concatenate([state, jax.nn.one_hot(action, actions, dtype=jnp.float32)], axis=-1)
        h = jax.nn.relu(dense(params[1], x))
        h = jax.nn.relu(dense(params[2], h))
        reward = dense(params[3], h)[:, 0]
        logits, value = predict(params, h)
        return mctx.RecurrentFnOutput(reward=reward, discount=jnp.full_like(reward, discount),
                                      prior_logits=logits, value=value), h

    def search(params, observations, key):
        state = jax.nn.relu(dense(params[0], observations))
        logits, value = predict(params, state)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state)
        kwargs = dict(params=params, rng_key=key, root=root, recurrent_fn=recurrent_fn, num_simulations=num_sims)
        if policy == "muzero":
            return mctx.muzero_policy(**kwargs)
        return mctx.gumbel_muzero_policy(**kwargs)

    return jax.jit(search)


class LearnedRoots:
    """What check() needs of a root batch whose actions are all legal."""

    def __init__(self, games, actions):
        self.legal_action_mask = jnp.ones((games, actions), bool)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", default="1024", help="batch size(s), comma-separated: 1024,4096")
    ap.add_argument("--sims", type=int, default=64, help="simulations per move")
    ap.add_argument("--policy", choices=["muzero", "gumbel", "both"], default="both")
    ap.add_argument("--no-network", action="store_true", help="uniform prior logits, value 0")
    ap.add_argument("--repeats", type=int, default=10, help="timed calls (median reported)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed calls after compiling")
    ap.add_argument("--opening-moves", type=int, default=0, help="random moves before the root")
    ap.add_argument("--precision", choices=["default", "high", "highest"], default="highest",
                    help="matmul precision (highest: true fp32, no TF32)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--recurrent", action="store_true", help="a learned model (muzero_mlp256's shapes) instead of pgx's rules")
    ap.add_argument("--obs-size", type=int, default=400, help="--recurrent: observation floats (MinAtar: 400)")
    ap.add_argument("--actions", type=int, default=3, help="--recurrent: actions (MinAtar Breakout: 3)")
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    args = ap.parse_args()

    if args.recurrent:
        env, params = None, init_learned_params(args.seed, args.obs_size, args.actions)
    else:
        import pgx
        env, params = pgx.make("connect_four"), init_params(args.seed)
    policies = ["muzero", "gumbel"] if args.policy == "both" else [args.policy]
    precision = {"default": jax.lax.Precision.DEFAULT, "high": jax.lax.Precision.HIGH,
                 "highest": jax.lax.Precision.HIGHEST}[args.precision]
    device = str(jax.devices()[0])
    failed = False
    for games in [int(g) for g in args.games.split(",") if g]:
        if args.recurrent:
            rng = np.random.default_rng(args.seed + 1)
            roots = jnp.asarray(rng.random((games, args.obs_size)) < 0.1, jnp.float32)
            legal_roots = LearnedRoots(games, args.actions)
        else:
            roots = legal_roots = make_roots(env, games, args.opening_moves, args.seed + 1)
        for policy in policies:
            if args.recurrent:
                search = make_learned_search(policy, args.sims, args.actions, precision)
            else:
                search = make_search(env, policy, args.sims, not args.no_network, precision)
            keys = jax.random.split(jax.random.PRNGKey(args.seed + 2), args.warmup + args.repeats + 1)
            t0 = time.perf_counter()
            out = jax.block_until_ready(search(params, roots, keys[0]))
            compile_s = time.perf_counter() - t0
            bad = check(out, legal_roots, args.sims)
            for k in keys[1:1 + args.warmup]:
                jax.block_until_ready(search(params, roots, k))
            times = []
            for k in keys[1 + args.warmup:]:
                t0 = time.perf_counter()
                jax.block_until_ready(search(params, roots, k))
                times.append(time.perf_counter() - t0)
            ms = statistics.median(times) * 1e3
            row = {"peer": "mctx", "model": "learned" if args.recurrent else "rules", "policy": policy, "games": games,
                   "sims": args.sims, "network": not args.no_network, "ms_per_search": round(ms, 3),
                   "simulations_per_second": round(games * args.sims / (ms / 1e3), 1),
                   "jax": jax.__version__, "mctx": mctx.__version__,
                   "pgx": None if args.recurrent else sys.modules["pgx"].__version__,
                   "device": device, "precision": args.precision,
                   "opening_moves": args.opening_moves, "checks_ok": not bad}
            print(f"mctx_baseline: {policy} B={games} S={args.sims} network={not args.no_network}: "
                  f"compile+first call {compile_s:.1f} s, median {ms:.2f} ms "
                  f"(min {min(times) * 1e3:.2f}, max {max(times) * 1e3:.2f}, n={len(times)}); "
                  f"checks {'ok' if not bad else 'FAILED: ' + '; '.join(bad)}", file=sys.stderr)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{policy:7s} games {games:6d} sims {args.sims:4d} network {str(not args.no_network):5s} "
                      f"{ms:10.2f} ms/search {row['simulations_per_second']:14.0f} sims/s  ({device})")
            failed |= bool(bad)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
