#!/usr/bin/env python3
"""The JAX baseline for our MinAtar PPO: gymnax's MinAtar environments, stepped on the device,
and PureJaxRL's PPO (Lu et al. 2022, purejaxrl/ppo.py: the whole training run is one jitted
function, a lax.scan over updates) with the network and hyperparameters of
projects/minatar-breakout-ppo.

Two modes; each prints one JSON object as the last line of stdout (status lines go to stderr):

  --mode env   gymnax's environment step rate under uniformly random actions: one jitted
               lax.scan of --steps steps of jax.vmap(env.step) over --envs environments (gymnax's
               step resets finished episodes itself), a fresh key split per step and per
               environment. The observations and rewards are summed into the scan's carry, so
               that XLA cannot drop the observation code. The first call compiles and warms up;
               the second is timed (jax.block_until_ready).
      python3 bench/minatar/gymnax_ppo.py --mode env --env Breakout-MinAtar --envs 4096 --steps 1000

  --mode ppo   a whole PPO run: --total-steps environment steps in updates of --envs x
               --rollout-steps steps. The training function is lowered and compiled ahead of time
               (compile_seconds), then run once and timed (seconds, env_steps_per_second: rollout
               and update together). final_mean_return is the mean return of the episodes that
               ended in the last 10% of the updates (sampled actions), read from the episode
               returns that PureJaxRL's LogWrapper puts in the info dict.
      python3 bench/minatar/gymnax_ppo.py --mode ppo --env Breakout-MinAtar --envs 64 \\
          --total-steps 10000000 --curve breakout.csv
               --curve FILE.csv writes env_steps,mean_return per update (mean_return empty for
               an update in which no episode ended).

The PPO is PureJaxRL's, written here without distrax or flax.linen (plain JAX and optax):
  - network (policy.pdl): conv 16 filters 3x3 'same' + relu, flatten, dense 128 + relu, then a
    logits head (one per action) and a value head (1) on the same features. gymnax gives the
    observation as [10, 10, C] channels last, and the convolution runs on that layout (NHWC);
    it is the same function as our channels-first one up to the order of the flattened features.
  - initialisation (--init): "fan-in" (default) is our project's: every weight and bias uniform
    in +-1/sqrt(fan_in); "orthogonal" is PureJaxRL's: orthogonal weights of scale sqrt(2) (0.01
    for the logits, 1 for the value), zero biases.
  - actions sampled from softmax(logits); log-probabilities and entropy from log_softmax.
  - GAE with gamma 0.99, lambda 0.95; an episode end (terminated or truncated, as PureJaxRL
    treats gymnax's done) cuts the bootstrap.
  - loss: clipped surrogate (clip 0.2) with the advantages normalised per minibatch, plus 0.5 x
    the clipped value loss (0.5 * max of the squared errors of the value and of the clipped
    value), minus 0.01 x the entropy.
  - optax: clip_by_global_norm(0.5), then Adam (eps 1e-5) whose learning rate (5e-4) anneals
    linearly to 0 over the updates (PureJaxRL's schedule, stepped per update).
  - each update: --epochs passes over the rollout in --minibatches shuffled minibatches.

How gymnax's MinAtar differs from the minatar package (which our CPU twins follow step for step),
read from gymnax 1.0.1's source:
  - no sticky actions: gymnax's MinAtar environments apply the chosen action every step (the
    minatar package repeats the previous action with probability 0.1, sticky_action_prob=0.1,
    and our twins do the same). gymnax's games are therefore a little easier to control.
  - a time limit: gymnax truncates Breakout, Asterix, Seaquest and Space Invaders episodes at
    1000 steps (EnvParams.max_steps_in_episode; Freeway at 2500, as the package's own clock);
    the minatar package and our twins have no limit for them. A Breakout episode longer than
    1000 steps is cut and counted as ended, which caps the return a good policy shows. Pass
    --max-episode-steps to change it.
  - the observation is [10, 10, C] float32 (ours: [C, 10, 10]); Breakout's minimal action set
    (none, left, right) is the same.
"""
import argparse
import csv
import importlib.metadata
import json
import math
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

import gymnax

try:
    GYMNAX_VERSION = importlib.metadata.version("gymnax")
except importlib.metadata.PackageNotFoundError:
    GYMNAX_VERSION = "unknown"

# ---------------------------------------------------------------------------------------------
# Environment helpers


def make_env(name, max_episode_steps):
    env, params = gymnax.make(name)
    if max_episode_steps is not None:
        params = params.replace(max_steps_in_episode=max_episode_steps)
    return env, params


def env_step(env, key, state, action, params):
    """One gymnax step: (obs, state, reward, done, info), done = terminated or truncated.

    gymnax 1.x returns (obs, state, reward, terminated, truncated, info); gymnax 0.0.x returned
    (obs, state, reward, done, info) with the time limit folded into done."""
    out = env.step(key, state, action, params)
    if len(out) == 6:
        obs, state, reward, terminated, truncated, info = out
        done = jnp.logical_or(terminated, truncated)
    else:
        obs, state, reward, done, info = out
    return obs, state, reward, done, info


# ---------------------------------------------------------------------------------------------
# Mode env: environment steps per second under random actions


def bench_env(args):
    env, params = make_env(args.env, args.max_episode_steps)
    num_actions = env.action_space(params).n
    n = args.envs

    def step_all(keys, states, actions):
        return jax.vmap(lambda k, s, a: env_step(env, k, s, a, params))(keys, states, actions)

    @jax.jit
    def reset(key):
        obs, states = jax.vmap(lambda k: env.reset(k, params))(jax.random.split(key, n))
        return states

    @jax.jit
    def run(key, states):
        def body(carry, _):
            states, key, acc = carry
            key, k_act, k_step = jax.random.split(key, 3)
            actions = jax.random.randint(k_act, (n,), 0, num_actions)
            obs, states, reward, done, _ = step_all(jax.random.split(k_step, n), states, actions)
            acc = acc + jnp.sum(obs) + jnp.sum(reward) + jnp.sum(done)
            return (states, key, acc), None

        (states, _, acc), _ = jax.lax.scan(body, (states, key, jnp.float32(0)), None, args.steps)
        return states, acc

    key = jax.random.PRNGKey(args.seed)
    k_reset, k_warm, k_timed = jax.random.split(key, 3)
    states = reset(k_reset)
    t0 = time.perf_counter()
    states, acc = jax.block_until_ready(run(k_warm, states))  # compile and warm up
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    states, acc = jax.block_until_ready(run(k_timed, states))
    seconds = time.perf_counter() - t0
    print(f"compile + first call {warm:.2f} s, timed call {seconds:.3f} s (checksum {float(acc):.0f})",
          file=sys.stderr)
    return {
        "mode": "env",
        "env": args.env,
        "envs": n,
        "steps": args.steps,
        "seconds": seconds,
        "steps_per_second": n * args.steps / seconds,
        "first_call_seconds": warm,
        "max_episode_steps": int(params.max_steps_in_episode),
        "device": str(jax.devices()[0]),
        "jax": jax.__version__,
        "gymnax": GYMNAX_VERSION,
    }


# ---------------------------------------------------------------------------------------------
# Mode ppo: the network


def init_network(key, obs_shape, num_actions, init):
    """Parameters of conv(16, 3x3, same) -> dense 128 -> (logits, value), NHWC."""
    h, w, c = obs_shape
    filters, hidden = 16, 128
    shapes = {  # name: (weight shape, fan_in, orthogonal scale)
        "conv": ((3, 3, c, filters), 3 * 3 * c, math.sqrt(2)),
        "dense": ((h * w * filters, hidden), h * w * filters, math.sqrt(2)),
        "logits": ((hidden, num_actions), hidden, 0.01),
        "value": ((hidden, 1), hidden, 1.0),
    }
    params = {}
    for name, k in zip(shapes, jax.random.split(key, len(shapes))):
        shape, fan_in, scale = shapes[name]
        k_w, k_b = jax.random.split(k)
        if init == "fan-in":
            bound = 1.0 / math.sqrt(fan_in)
            wt = jax.random.uniform(k_w, shape, jnp.float32, -bound, bound)
            b = jax.random.uniform(k_b, shape[-1:], jnp.float32, -bound, bound)
        else:
            # Orthogonal over (fan_in, fan_out), as flax's orthogonal initialiser for a conv kernel.
            wt = jax.nn.initializers.orthogonal(scale)(k_w, (int(np.prod(shape[:-1])), shape[-1]))
            wt = wt.reshape(shape)
            b = jnp.zeros(shape[-1:], jnp.float32)
        params[name] = {"w": wt, "b": b}
    return params


def apply_network(params, obs):
    """obs [B, H, W, C] float32 -> (logits [B, A], value [B])."""
    x = jax.lax.conv_general_dilated(obs, params["conv"]["w"], window_strides=(1, 1), padding="SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    x = jax.nn.relu(x + params["conv"]["b"])
    x = x.reshape((x.shape[0], -1))
    x = jax.nn.relu(x @ params["dense"]["w"] + params["dense"]["b"])
    logits = x @ params["logits"]["w"] + params["logits"]["b"]
    value = (x @ params["value"]["w"] + params["value"]["b"])[:, 0]
    return logits, value


def log_prob_of(logits, actions):
    logp = jax.nn.log_softmax(logits)
    return jnp.take_along_axis(logp, actions[:, None], axis=-1)[:, 0]


def entropy_of(logits):
    logp = jax.nn.log_softmax(logits)
    return -jnp.sum(jnp.exp(logp) * logp, axis=-1)


# ---------------------------------------------------------------------------------------------
# Mode ppo: PureJaxRL's training loop


def make_train(args):
    env, env_params = make_env(args.env, args.max_episode_steps)
    num_actions = env.action_space(env_params).n
    obs_shape = tuple(env.observation_space(env_params).shape)
    n_envs, n_steps = args.envs, args.rollout_steps
    batch = n_envs * n_steps
    if batch % args.minibatches:
        sys.exit(f"gymnax_ppo: --minibatches {args.minibatches} does not divide envs x rollout-steps = {batch}")
    num_updates = args.total_steps // batch
    if num_updates < 1:
        sys.exit(f"gymnax_ppo: --total-steps {args.total_steps} is less than one rollout ({batch} steps)")
    minibatch = batch // args.minibatches
    gamma, lam, clip = args.gamma, args.gae_lambda, args.clip

    def schedule(count):  # PureJaxRL's linear_schedule: count is the optimizer's step
        frac = 1.0 - (count // (args.minibatches * args.epochs)) / num_updates
        return args.lr * frac

    tx = optax.chain(optax.clip_by_global_norm(args.max_grad_norm),
                     optax.adam(learning_rate=schedule if args.anneal_lr else args.lr, eps=1e-5))

    def log_reset(key):
        obs, state = env.reset(key, env_params)
        zero = jnp.float32(0)
        # PureJaxRL's LogEnvState: running and last finished episode return/length.
        return obs, (state, zero, jnp.int32(0), zero, jnp.int32(0))

    def log_step(key, log_state, action):
        state, ep_ret, ep_len, last_ret, last_len = log_state
        obs, state, reward, done, _ = env_step(env, key, state, action, env_params)
        new_ret = ep_ret + reward
        new_len = ep_len + 1
        d = done.astype(jnp.float32)
        log_state = (state, new_ret * (1 - d), new_len * (1 - done.astype(jnp.int32)),
                     last_ret * (1 - d) + new_ret * d, jnp.where(done, new_len, last_len))
        info = {"returned_episode_returns": log_state[3], "returned_episode": done}
        return obs, log_state, reward, done, info

    def loss_fn(params, mb):
        logits, value = apply_network(params, mb["obs"])
        log_prob = log_prob_of(logits, mb["action"])
        value_clipped = mb["value"] + jnp.clip(value - mb["value"], -clip, clip)
        value_loss = 0.5 * jnp.maximum(jnp.square(value - mb["target"]),
                                       jnp.square(value_clipped - mb["target"])).mean()
        ratio = jnp.exp(log_prob - mb["log_prob"])
        gae = mb["advantage"]
        gae = (gae - gae.mean()) / (gae.std() + 1e-8)
        actor_loss = -jnp.minimum(ratio * gae, jnp.clip(ratio, 1.0 - clip, 1.0 + clip) * gae).mean()
        entropy = entropy_of(logits).mean()
        total = actor_loss + args.vf_coef * value_loss - args.ent_coef * entropy
        return total, (value_loss, actor_loss, entropy)

    def train(key):
        key, k_net, k_reset = jax.random.split(key, 3)
        params = init_network(k_net, obs_shape, num_actions, args.init)
        opt_state = tx.init(params)
        obs, log_state = jax.vmap(log_reset)(jax.random.split(k_reset, n_envs))

        def update_step(runner, _):
            def rollout_step(runner, _):
                params, opt_state, log_state, last_obs, key = runner
                key, k_act, k_step = jax.random.split(key, 3)
                logits, value = apply_network(params, last_obs)
                action = jax.random.categorical(k_act, logits)
                log_prob = log_prob_of(logits, action)
                obs, log_state, reward, done, info = jax.vmap(log_step)(
                    jax.random.split(k_step, n_envs), log_state, action)
                transition = {"done": done, "action": action, "value": value, "reward": reward,
                              "log_prob": log_prob, "obs": last_obs, "info": info}
                return (params, opt_state, log_state, obs, key), transition

            runner, traj = jax.lax.scan(rollout_step, runner, None, n_steps)
            params, opt_state, log_state, last_obs, key = runner
            _, last_val = apply_network(params, last_obs)

            def gae_step(carry, t):
                gae, next_value = carry
                not_done = 1.0 - t["done"].astype(jnp.float32)
                delta = t["reward"] + gamma * next_value * not_done - t["value"]
                gae = delta + gamma * lam * not_done * gae
                return (gae, t["value"]), gae

            _, advantages = jax.lax.scan(gae_step, (jnp.zeros_like(last_val), last_val),
                                         {k: traj[k] for k in ("done", "reward", "value")},
                                         reverse=True, unroll=16)
            targets = advantages + traj["value"]
            data = {"obs": traj["obs"], "action": traj["action"], "value": traj["value"],
                    "log_prob": traj["log_prob"], "advantage": advantages, "target": targets}

            def epoch(carry, _):
                params, opt_state, key = carry
                key, k_perm = jax.random.split(key)
                perm = jax.random.permutation(k_perm, batch)
                flat = jax.tree.map(lambda x: x.reshape((batch,) + x.shape[2:]), data)
                shuffled = jax.tree.map(lambda x: jnp.take(x, perm, axis=0), flat)
                mbs = jax.tree.map(lambda x: x.reshape((args.minibatches, minibatch) + x.shape[1:]),
                                   shuffled)

                def minibatch_step(carry, mb):
                    params, opt_state = carry
                    (loss, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, mb)
                    updates, opt_state = tx.update(grads, opt_state, params)
                    params = optax.apply_updates(params, updates)
                    return (params, opt_state), (loss,) + aux

                (params, opt_state), losses = jax.lax.scan(minibatch_step, (params, opt_state), mbs)
                return (params, opt_state, key), losses

            (params, opt_state, key), losses = jax.lax.scan(epoch, (params, opt_state, key), None,
                                                            args.epochs)
            info = traj["info"]
            ended = info["returned_episode"].astype(jnp.float32)
            metrics = {"return_sum": jnp.sum(info["returned_episode_returns"] * ended),
                       "episodes": jnp.sum(ended),
                       "loss": jnp.mean(losses[0]), "entropy": jnp.mean(losses[3])}
            return (params, opt_state, log_state, last_obs, key), metrics

        runner = (params, opt_state, log_state, obs, key)
        runner, metrics = jax.lax.scan(update_step, runner, None, num_updates)
        return metrics

    return train, num_updates, batch, env_params


def bench_ppo(args):
    train, num_updates, batch, env_params = make_train(args)
    key = jax.random.PRNGKey(args.seed)
    t0 = time.perf_counter()
    compiled = jax.jit(train).lower(key).compile()
    compile_seconds = time.perf_counter() - t0
    print(f"compiled in {compile_seconds:.1f} s; {num_updates} updates of {batch} steps", file=sys.stderr)
    t0 = time.perf_counter()
    metrics = jax.block_until_ready(compiled(key))
    seconds = time.perf_counter() - t0
    metrics = jax.tree.map(np.asarray, metrics)
    return_sum = metrics["return_sum"].astype(np.float64)
    episodes = metrics["episodes"].astype(np.float64)
    last = max(1, math.ceil(num_updates / 10))
    ended_last = episodes[-last:].sum()
    final = float(return_sum[-last:].sum() / ended_last) if ended_last > 0 else None
    first = float(return_sum[0] / episodes[0]) if episodes[0] > 0 else None
    if args.curve:
        with open(args.curve, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["env_steps", "mean_return"])
            for i in range(num_updates):
                mean = return_sum[i] / episodes[i] if episodes[i] > 0 else None
                w.writerow([(i + 1) * batch, "" if mean is None else f"{mean:.4f}"])
    total_steps = num_updates * batch
    print(f"{total_steps} steps in {seconds:.2f} s; mean return: first update {first}, "
          f"last {last} updates {final} ({int(ended_last)} episodes)", file=sys.stderr)
    return {
        "mode": "ppo",
        "env": args.env,
        "envs": args.envs,
        "total_steps": total_steps,
        "updates": num_updates,
        "seconds": seconds,
        "env_steps_per_second": total_steps / seconds,
        "compile_seconds": compile_seconds,
        "final_mean_return": final,
        "final_episodes": int(ended_last),
        "first_update_mean_return": first,
        "rollout_steps": args.rollout_steps,
        "minibatches": args.minibatches,
        "epochs": args.epochs,
        "lr": args.lr,
        "anneal_lr": args.anneal_lr,
        "init": args.init,
        "max_episode_steps": int(env_params.max_steps_in_episode),
        "seed": args.seed,
        "device": str(jax.devices()[0]),
        "jax": jax.__version__,
        "gymnax": GYMNAX_VERSION,
        # JAX's default on this GPU lets fp32 products and convolutions round their operands to
        # TF32; JAX_DEFAULT_MATMUL_PRECISION=highest keeps them in fp32.
        "matmul_precision": getattr(jax.config, "jax_default_matmul_precision", None) or "default",
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=["env", "ppo"], required=True)
    p.add_argument("--env", default="Breakout-MinAtar",
                   help="a gymnax id: Breakout-MinAtar, Asterix-MinAtar, Freeway-MinAtar, "
                        "SpaceInvaders-MinAtar, Seaquest-MinAtar")
    p.add_argument("--envs", type=int, default=None, help="parallel environments (env: 4096, ppo: 64)")
    p.add_argument("--steps", type=int, default=1000, help="env mode: steps of each environment")
    p.add_argument("--total-steps", type=int, default=10_000_000, help="ppo: environment steps")
    p.add_argument("--rollout-steps", type=int, default=128)
    p.add_argument("--minibatches", type=int, default=8)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--no-anneal-lr", dest="anneal_lr", action="store_false")
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--init", choices=["fan-in", "orthogonal"], default="fan-in",
                   help="fan-in: our project's uniform +-1/sqrt(fan_in); orthogonal: PureJaxRL's")
    p.add_argument("--max-episode-steps", type=int, default=None,
                   help="gymnax's time limit (EnvParams.max_steps_in_episode; default gymnax's own)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--curve", default=None, help="ppo: write env_steps,mean_return per update")
    args = p.parse_args()
    if args.envs is None:
        args.envs = 4096 if args.mode == "env" else 64
    print(f"jax {jax.__version__} on {jax.devices()[0]}, gymnax "
          f"{GYMNAX_VERSION}", file=sys.stderr)
    result = bench_env(args) if args.mode == "env" else bench_ppo(args)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
