#!/usr/bin/env python3
"""Golden data for MuZero's unrolled loss (tests/core/test_muzero_loss.cpp), written to
tests/golden/muzero/loss.json.

A tiny learned model (the PDL program in SOURCE: represent, dynamics, predict), its parameters,
one batch of K-step training data and what PyTorch (float32, CPU) computes for it the way
MuZero's pseudocode does (Schrittwieser et al. 2020, appendix):

  state_0 = represent(obs); logits_0, value_0 = predict(state_0)
  for k in 1..K: state_k, reward_k = dynamics(state_{k-1}', action_k); logits_k, value_k = predict(state_k)
                 state_k' = 0.5 * state_k + 0.5 * stop_gradient(state_k)     (the dynamics' gradient halved)
  h(x) = sign(x) (sqrt(|x| + 1) - 1) + 0.001 x                               (value and reward scaling)
  step weight w_0 = 1, w_k = 1 / K                                          (the recurrent steps' share)
  policy = mean_b sum_k w_k * -sum_a pi_k[a] log_softmax(logits_k)[a]
  value  = mean_b sum_k w_k * (value_k - h(z_k))^2
  reward = mean_b sum_{k>=1} w_k * (reward_k - h(u_k))^2
  loss   = policy + 0.25 * value + reward                                    (0.25: MuZero's value weight)

The inverse transform the search's programs apply to the reward and value heads (numpy, float64):

  h^-1(x) = sign(x) (((sqrt(1 + 4 eps (|x| + 1 + eps)) - 1) / (2 eps))^2 - 1)

is stored under "inverse" for a range of x (and checked here to undo h).

Stored: the source, K, the parameters (name, shape, values), the inputs (obs, one-hot actions,
policy, value and reward targets; rows past an episode's end have zero policy targets, so they
add no policy loss), the loss, its three terms and the gradient of the loss with respect to every
parameter.

Run from the repository root (needs python3 with torch and numpy):

    python3 tests/golden/make_muzero_golden.py

Deterministic: fixed seeds, one thread.
"""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "muzero")

SOURCE = (
    "def represent(obs):\n"
    "    return tanh(dense(flatten(obs), units=5))\n"
    "\n"
    "def dynamics(state, action):\n"
    "    h = tanh(dense(concat(state, action), units=5))\n"
    "    return h, dense(h, units=1)\n"
    "\n"
    "def predict(state):\n"
    "    return dense(state, units=action_dim), dense(state, units=1)\n"
)
BATCH, OBS, ACTIONS, STATE, K = 4, 6, 3, 5, 2
VALUE_WEIGHT = 0.25
EPSILON = 0.001

PARAMETER_SHAPES = {
    "represent/dense_0/weight": (OBS, STATE), "represent/dense_0/bias": (STATE,),
    "dynamics/dense_0/weight": (STATE + ACTIONS, STATE), "dynamics/dense_0/bias": (STATE,),
    "dynamics/dense_1/weight": (STATE, 1), "dynamics/dense_1/bias": (1,),
    "predict/dense_0/weight": (STATE, ACTIONS), "predict/dense_0/bias": (ACTIONS,),
    "predict/dense_1/weight": (STATE, 1), "predict/dense_1/bias": (1,),
}


def scale(x):
    return torch.sign(x) * (torch.sqrt(torch.abs(x) + 1) - 1) + EPSILON * x


def dense(p, name, x):
    return x @ p[name + "/weight"] + p[name + "/bias"]


def predict(p, state):
    return dense(p, "predict/dense_0", state), dense(p, "predict/dense_1", state)[:, 0]


def losses(p, obs, actions, pi, z, u):
    state = torch.tanh(dense(p, "represent/dense_0", obs))
    logits, values, rewards = [], [], []
    l0, v0 = predict(p, state)
    logits.append(l0)
    values.append(v0)
    for k in range(K):
        h = torch.tanh(dense(p, "dynamics/dense_0", torch.cat([state, actions[:, k]], dim=1)))
        rewards.append(dense(p, "dynamics/dense_1", h)[:, 0])
        lk, vk = predict(p, h)
        logits.append(lk)
        values.append(vk)
        state = 0.5 * h + 0.5 * h.detach()
    weights = [1.0] + [1.0 / K] * K
    policy = sum(w * -(pi[:, k] * F.log_softmax(logits[k], dim=1)).sum(1) for k, w in enumerate(weights)).mean()
    value = sum(w * (values[k] - scale(z[:, k])) ** 2 for k, w in enumerate(weights)).mean()
    reward = sum(weights[k + 1] * (rewards[k] - scale(u[:, k])) ** 2 for k in range(K)).mean()
    return policy + VALUE_WEIGHT * value + reward, policy, value, reward


def inverse_scale(x):
    root = np.sqrt(1 + 4 * EPSILON * (np.abs(x) + 1 + EPSILON))
    return np.sign(x) * (((root - 1) / (2 * EPSILON)) ** 2 - 1)


def inverse_table():
    x = np.concatenate([np.linspace(-300, 300, 61), [-1.5, -0.25, -1e-3, 0.0, 1e-3, 0.25, 1.5, 7.0]])
    y = inverse_scale(x)
    forward = np.sign(y) * (np.sqrt(np.abs(y) + 1) - 1) + EPSILON * y
    assert np.allclose(forward, x, rtol=1e-9, atol=1e-9), "h^-1 does not undo h"
    return {"x": x.tolist(), "h_inverse": y.tolist()}


def main():
    torch.set_num_threads(1)
    rng = np.random.default_rng(38)
    params = {n: torch.tensor(rng.normal(0, 0.5, s).astype(np.float32), requires_grad=True) for n, s in PARAMETER_SHAPES.items()}
    obs = torch.tensor(rng.integers(0, 2, (BATCH, OBS)).astype(np.float32))
    chosen = rng.integers(0, ACTIONS, (BATCH, K))
    actions = torch.zeros(BATCH, K, ACTIONS)
    for b in range(BATCH):
        for k in range(K):
            actions[b, k, chosen[b, k]] = 1
    pi = torch.tensor(rng.dirichlet(np.ones(ACTIONS), (BATCH, K + 1)).astype(np.float32))
    pi[1, K] = 0  # game 1 ended before its last step
    z = torch.tensor(rng.uniform(-5, 20, (BATCH, K + 1)).astype(np.float32))
    u = torch.tensor(rng.uniform(-1, 3, (BATCH, K)).astype(np.float32))
    total, policy, value, reward = losses(params, obs, actions, pi, z, u)
    total.backward()
    out = {
        "source": SOURCE, "batch": BATCH, "observation": [OBS], "actions": ACTIONS, "unroll": K,
        "parameters": {n: {"shape": list(PARAMETER_SHAPES[n]), "values": t.detach().numpy().ravel().tolist()} for n, t in params.items()},
        "inputs": {"obs": obs.numpy().ravel().tolist(), "actions": actions.numpy().ravel().tolist(),
                   "policy_targets": pi.numpy().ravel().tolist(), "value_targets": z.numpy().ravel().tolist(),
                   "reward_targets": u.numpy().ravel().tolist()},
        "loss": total.item(), "terms": {"policy": policy.item(), "value": value.item(), "reward": reward.item()},
        "gradients": {n: t.grad.numpy().ravel().tolist() for n, t in params.items()},
        "inverse": inverse_table(),
        "torch": torch.__version__,
    }
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "loss.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(f"loss {total.item():.6f} (policy {policy.item():.6f}, value {value.item():.6f}, reward {reward.item():.6f})")


if __name__ == "__main__":
    main()
