#!/usr/bin/env python3
"""PyTorch's per-kernel GPU time for one update of a TARGETS.md network (eager mode), beside
`cuda-agent kernels NET --graph update`: which kernels PyTorch runs and how long each takes.

    python3 bench/torch_kernels.py --net atari_nature_cnn --batch 1024 --precision bf16
"""
import argparse

import torch
from torch.profiler import ProfilerActivity, profile

from torch_baseline import NETS, loss_fn, make_net


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--net", default="atari_nature_cnn", choices=list(NETS))
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--updates", type=int, default=10)
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    obs_shape, actions = NETS[a.net]
    net = make_net(a.net).cuda()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    obs = torch.randn(a.batch, *obs_shape, device="cuda")
    act = torch.randint(0, actions, (a.batch,), device="cuda")
    adv = torch.randn(a.batch, device="cuda")
    ret = torch.randn(a.batch, device="cuda")

    def update():
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = loss_fn(net(obs).float(), act, adv, ret)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        opt.step()

    for _ in range(5):
        update()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(a.updates):
            update()
        torch.cuda.synchronize()
    print(f"{a.net} batch {a.batch} {a.precision}: GPU time per update, by kernel (us, {a.updates} updates)")
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=90))


if __name__ == "__main__":
    main()
