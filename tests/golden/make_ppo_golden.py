#!/usr/bin/env python3
"""Golden data for PPO (tests/core/test_ppo.cpp), written to tests/golden/ppo/:

  gae.json   a rollout of 5 steps of 3 environments with episode ends, and the advantages and
             returns numpy computes for it the way CleanRL's ppo.py does (its `dones[t]` says
             whether observation t starts a new episode; our `dones[t]` says whether step t ended
             one, so the conversion between the two conventions is checked too).
  loss.json  a small actor-critic (the PDL program in the file), one minibatch of rollout data
             and PPO's loss as CleanRL's ppo.py computes it in PyTorch (float32, CPU): the total,
             each term, approx_kl, the clip fraction, and the gradient of the total with respect
             to every parameter.

Run from the repository root (needs python3 with torch and numpy):

    python3 tests/golden/make_ppo_golden.py

Deterministic: fixed seeds, one thread.
"""
import json
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ppo")


def cleanrl_gae(rewards, values, cleanrl_dones, next_value, next_done, gamma, gae_lambda):
    """CleanRL ppo.py's loop, verbatim in numpy (float64)."""
    steps = rewards.shape[0]
    advantages = np.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(steps)):
        if t == steps - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = next_value
        else:
            nextnonterminal = 1.0 - cleanrl_dones[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
    return advantages, advantages + values


def make_gae():
    rng = np.random.default_rng(18)
    steps, envs, gamma, lam = 5, 3, 0.99, 0.95
    rewards = rng.uniform(-1, 2, (steps, envs)).astype(np.float32)
    values = rng.uniform(-1, 3, (steps, envs)).astype(np.float32)
    last_values = rng.uniform(-1, 3, envs).astype(np.float32)
    # Step t of environment e ended an episode: two ends in environment 0, one at the last step of 2.
    ended = np.zeros((steps, envs), np.float32)
    ended[1, 0] = ended[3, 0] = 1
    ended[4, 2] = 1
    cleanrl_dones = np.zeros_like(ended)
    cleanrl_dones[1:] = ended[:-1]
    adv, ret = cleanrl_gae(rewards.astype(np.float64), values.astype(np.float64), cleanrl_dones, last_values.astype(np.float64),
                           ended[-1], gamma, lam)
    return {"steps": steps, "envs": envs, "gamma": gamma, "lambda": lam, "rewards": rewards.ravel().tolist(),
            "values": values.ravel().tolist(), "dones": ended.ravel().tolist(), "last_values": last_values.tolist(),
            "advantages": adv.ravel().tolist(), "returns": ret.ravel().tolist()}


PDL = """@parallel(axis='batch')
def policy(obs):
    h = tanh(dense(obs, units=8))
    logits = dense(h, units=action_dim)
    value = dense(h, units=1)
    return logits, value
"""


def make_loss():
    torch.manual_seed(18)
    batch, obs_size, actions, hidden = 16, 4, 3, 8
    clip_coef, vf_coef, ent_coef = 0.2, 0.5, 0.01
    # Parameters named as PDL names them; dense weights are [in, out].
    shapes = {"policy/dense_0/weight": (obs_size, hidden), "policy/dense_0/bias": (hidden,),
              "policy/dense_1/weight": (hidden, actions), "policy/dense_1/bias": (actions,),
              "policy/dense_2/weight": (hidden, 1), "policy/dense_2/bias": (1,)}
    params = {name: (torch.randn(shape) * 0.6).requires_grad_() for name, shape in shapes.items()}

    def forward(x):
        h = torch.tanh(x @ params["policy/dense_0/weight"] + params["policy/dense_0/bias"])
        logits = h @ params["policy/dense_1/weight"] + params["policy/dense_1/bias"]
        value = h @ params["policy/dense_2/weight"] + params["policy/dense_2/bias"]
        return logits, value.view(-1)

    obs = torch.randn(batch, obs_size)
    b_actions = torch.randint(0, actions, (batch,))
    b_advantages = torch.randn(batch) * 2 + 0.5
    b_returns = torch.randn(batch) * 3
    with torch.no_grad():
        logits, value = forward(obs)
        logp = torch.distributions.Categorical(logits=logits).log_prob(b_actions)
        # The rollout's policy and values a little away from the current ones, so that some
        # ratios and some values are clipped.
        b_logprobs = logp + torch.randn(batch) * 0.3
        b_values = value + torch.randn(batch) * 0.5

    # CleanRL ppo.py's minibatch loss, verbatim.
    logits, newvalue = forward(obs)
    probs = torch.distributions.Categorical(logits=logits)
    newlogprob = probs.log_prob(b_actions)
    entropy = probs.entropy()
    logratio = newlogprob - b_logprobs
    ratio = logratio.exp()
    approx_kl = ((ratio - 1) - logratio).mean()
    clipfrac = ((ratio - 1.0).abs() > clip_coef).float().mean()
    mb_advantages = (b_advantages - b_advantages.mean()) / (b_advantages.std() + 1e-8)
    pg_loss1 = -mb_advantages * ratio
    pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()
    v_loss_unclipped = (newvalue - b_returns) ** 2
    v_clipped = b_values + torch.clamp(newvalue - b_values, -clip_coef, clip_coef)
    v_loss_clipped = (v_clipped - b_returns) ** 2
    v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
    entropy_loss = entropy.mean()
    loss = pg_loss - ent_coef * entropy_loss + v_loss * vf_coef
    loss.backward()

    def flat(t):
        return t.detach().reshape(-1).tolist()

    return {"pdl": PDL, "obs_size": obs_size, "action_dim": actions, "batch": batch, "clip": clip_coef, "value_coef": vf_coef,
            "entropy_coef": ent_coef, "obs": flat(obs), "actions": flat(b_actions.float()), "advantages": flat(b_advantages),
            "returns": flat(b_returns), "old_log_probs": flat(b_logprobs), "old_values": flat(b_values),
            "parameters": {n: flat(p) for n, p in params.items()}, "gradients": {n: flat(p.grad) for n, p in params.items()},
            "loss": loss.item(), "policy": pg_loss.item(), "value": v_loss.item(), "entropy": entropy_loss.item(),
            "approx_kl": approx_kl.item(), "clip_fraction": clipfrac.item()}


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    for name, data in (("gae", make_gae()), ("loss", make_loss())):
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        print("wrote", os.path.join(OUT, name + ".json"))


if __name__ == "__main__":
    main()
