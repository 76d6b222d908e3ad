#!/usr/bin/env python3
"""PyTorch's time for the same update that `cuda-agent bench update` measures.

The update: forward, loss = policy-gradient term on log_softmax(logits) + 0.5 * value MSE
- 0.01 * entropy, backward, global-norm clipping at 5.0, Adam (lr 1e-3), for the networks of
shared/TARGETS.md. Prints one JSON object per (network, mode) with microseconds per update and
per forward pass.

    python3 bench/torch_baseline.py --device cpu --nets cartpole_mlp64 connect4_mlp256 --batch 1024
    python3 bench/torch_baseline.py --device cuda --modes eager compile reduce-overhead
    python3 bench/torch_baseline.py --device cuda --nets reward_model_6l --batch 1 32 --tf32

On the CPU, timings use time.perf_counter over --seconds of calls; on CUDA, CUDA events over
200 calls after warm-up, TF32 off unless --tf32.
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

NETS = {
    # name: (observation shape, actions)
    "cartpole_mlp64": ((4,), 2),
    "connect4_mlp256": ((2, 6, 7), 7),
    "atari_nature_cnn": ((4, 84, 84), 6),
    "reward_model_6l": ((512,), 1),
    "connect4_transformer": ((42,), 7),
}
# The Transformers (core/train/benchmark_nets.cpp): tokens, vocabulary, layers, width, heads, FFN.
TRANSFORMERS = {
    "reward_model_6l": (512, 1024, 6, 512, 8, 2048),
    "connect4_transformer": (42, 3, 4, 128, 4, 512),
}


class Block(nn.Module):
    """Pre-LN: x + proj(attention(q, k, v)) then x + ffn(layer_norm(x)), GELU; q, k and v are
    three projections as in the PDL program, attention is PyTorch's scaled_dot_product_attention
    (its best backend for the dtype)."""

    def __init__(self, width, heads, ffn):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.q, self.k, self.v, self.o = (nn.Linear(width, width) for _ in range(4))
        self.f1, self.f2 = nn.Linear(width, ffn), nn.Linear(ffn, width)

    def forward(self, x):
        b, t, d = x.shape
        h = self.ln1(x)
        split = lambda y: y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(split(self.q(h)), split(self.k(h)), split(self.v(h)))
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        return x + self.f2(F.gelu(self.f1(self.ln2(x))))


class Transformer(nn.Module):
    def __init__(self, vocab, layers, width, heads, ffn, outputs):
        super().__init__()
        self.embedding = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(Block(width, heads, ffn) for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, outputs)

    def forward(self, tokens):
        x = self.embedding(tokens)
        for block in self.blocks:
            x = block(x)
        h = self.ln(x).mean(1).float()
        with torch.autocast(device_type=h.device.type, enabled=False):
            return self.head(h)  # the head in fp32, as the PDL program's


def make_net(name):
    obs, actions = NETS[name]
    if name in TRANSFORMERS:
        _, vocab, layers, width, heads, ffn = TRANSFORMERS[name]
        return Transformer(vocab, layers, width, heads, ffn, actions + 1)
    if name == "cartpole_mlp64":
        return nn.Sequential(nn.Flatten(), nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, actions + 1))
    if name == "connect4_mlp256":
        return nn.Sequential(nn.Flatten(), nn.Linear(84, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, actions + 1))
    return nn.Sequential(
        nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
        nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(), nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(), nn.Linear(512, actions + 1))


def loss_fn(out, actions, advantages, returns):
    logits, value = out[:, :-1], out[:, -1]
    logp = F.log_softmax(logits, -1)
    pg = -(logp.gather(1, actions[:, None]).squeeze(1) * advantages).mean()
    vloss = 0.5 * ((value - returns) ** 2).mean()
    entropy = -(logp.exp() * logp).sum(-1).mean()
    return pg + vloss - 0.01 * entropy


def measure(fn, device, seconds):
    for _ in range(5):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        calls = 200
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) * 1000.0 / calls, calls
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    calls = max(5, int(seconds / max(once, 1e-6)))
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) * 1e6 / calls, calls


def run(name, batch, device, mode, precision, seconds):
    torch.manual_seed(0)
    obs_shape, actions = NETS[name]
    net = make_net(name).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    obs = torch.randn(batch, *obs_shape, device=device)
    if name in TRANSFORMERS:
        obs = torch.randint(0, TRANSFORMERS[name][1], (batch, *obs_shape), device=device)
    act = torch.randint(0, actions, (batch,), device=device)
    adv = torch.randn(batch, device=device)
    ret = torch.randn(batch, device=device)
    autocast = torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=precision == "bf16")

    def forward():
        with torch.no_grad(), autocast:
            return net(obs)

    def update():
        with autocast:
            loss = loss_fn(net(obs).float(), act, adv, ret)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        opt.step()

    if mode == "compile":
        forward, update = torch.compile(forward), torch.compile(update)
    elif mode == "reduce-overhead":
        forward, update = torch.compile(forward, mode="reduce-overhead"), torch.compile(update, mode="reduce-overhead")
    fwd_us, fwd_calls = measure(forward, device, seconds)
    upd_us, upd_calls = measure(update, device, seconds)
    return {"net": name, "batch": batch, "device": device, "mode": mode, "precision": precision,
            "threads": torch.get_num_threads(), "torch": torch.__version__,
            "update_us": round(upd_us, 2), "update_calls": upd_calls, "forward_us": round(fwd_us, 2), "forward_calls": fwd_calls}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--nets", nargs="+", default=list(NETS))
    p.add_argument("--batch", type=int, nargs="+", default=[1024])
    p.add_argument("--modes", nargs="+", default=["eager"], choices=["eager", "compile", "reduce-overhead"])
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--seconds", type=float, default=2.0, help="CPU timing budget per measurement")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: PyTorch's default)")
    p.add_argument("--tf32", action="store_true", help="let fp32 products use TF32 (PyTorch users' usual setting on Hopper)")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    for name in a.nets:
        for batch in a.batch:
            for mode in a.modes:
                print(json.dumps(run(name, batch, a.device, mode, a.precision, a.seconds)), flush=True)


if __name__ == "__main__":
    main()
