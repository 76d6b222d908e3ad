#!/usr/bin/env python3
"""Batch-1 forward latency of the standalone CUDA export on the GPU machine, beside onnxruntime's
CUDA execution provider on the ONNX export of the same weights, in one run on one GPU. Policies:
latency.py's (the two Connect Four projects and the 32-64-64-3 MLP).

    python3 bench/export/latency_cuda.py [--agent .gpu-bundle/bin/cuda-agent] [--json OUT.json]

The CUDA file is exported at --batch 1, built with nvcc -arch=sm_90 -O3 beside cuda_latency.cu
and timed per call from pinned host memory to pinned host memory (policy_cuda_forward: copy in,
graph launch, copy out, wait), and with device-resident buffers. onnxruntime is timed as in
latency.py (IOBinding, inputs and outputs in host memory, so its copies are part of the call as
ours are). When onnxruntime has no CUDA provider on the machine, its column says so. PyTorch runs
the same ONNX model (onnx_torch.py, checked against onnxruntime's CPU session first), eagerly and
replayed as a CUDA graph, with the same pinned host buffers and with device-resident ones. Each
figure is the median of 15 rounds.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


import numpy as np
import onnxruntime as ort
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from latency import POLICIES, ROUNDS, calls_for, observations, run, time_call, time_session  # noqa: E402
import onnx_torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def time_cuda(agent, nvcc, source, work, obs):
    cu = os.path.join(work, "policy_cuda.cu")
    run([agent, "export", *source, "--format", "cuda", "--batch", "1", "--out", cu])
    exe = os.path.join(work, "cuda_latency")
    run([nvcc, "-arch=sm_90", "-O3", "-I", work, "-o", exe, os.path.join(HERE, "cuda_latency.cu"), cu])
    obs_file = os.path.join(work, "obs.f32")
    obs.astype(np.float32).tofile(obs_file)
    probe = json.loads(run([exe, str(len(obs)), obs_file, "3", "10"]))
    return json.loads(run([exe, str(len(obs)), obs_file, str(ROUNDS), str(calls_for(probe["median_us"]))]))


def time_torch(model, obs):
    """PyTorch on the ONNX model: eager and CUDA-graph replay, host buffers (pinned, copies in each
    call) and device-resident buffers; also its outputs for the first observation."""
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 products and convolutions, as the CUDA export's
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest convolution for these shapes
    module = onnx_torch.OnnxModule(model, "cuda")
    host_in = torch.from_numpy(obs[:1]).pin_memory()
    device_in = host_in.to("cuda")
    with torch.no_grad():
        outs = module(device_in)
        host_out = [torch.empty(o.shape, dtype=o.dtype, pin_memory=True) for o in outs]
        stream = torch.cuda.current_stream()

        def eager_host():
            device_in.copy_(host_in, non_blocking=True)
            for h, o in zip(host_out, module(device_in)):
                h.copy_(o, non_blocking=True)
            stream.synchronize()

        side = torch.cuda.Stream()
        side.wait_stream(stream)
        with torch.cuda.stream(side):
            for _ in range(3):
                module(device_in)
        stream.wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            graph_outs = module(device_in)

        def graph_host():
            device_in.copy_(host_in, non_blocking=True)
            graph.replay()
            for h, o in zip(host_out, graph_outs):
                h.copy_(o, non_blocking=True)
            stream.synchronize()

        def graph_device():
            graph.replay()
            stream.synchronize()

        figures = {"torch_eager_host_us": time_call(eager_host)[0], "torch_graph_host_us": time_call(graph_host)[0],
                   "torch_graph_device_us": time_call(graph_device)[0]}
        graph_host()
        return figures, [h.numpy().copy() for h in host_out]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agent", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), ".gpu-bundle", "bin", "cuda-agent"))
    parser.add_argument("--nvcc", default="nvcc")
    parser.add_argument("--json", help="also write the figures as JSON here")
    args = parser.parse_args()
    gpu = run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]).strip()
    providers = ort.get_available_providers()
    has_cuda = "CUDAExecutionProvider" in providers
    print(f"GPU: {gpu}; nvcc: {run([args.nvcc, '--version']).strip().splitlines()[-1]}; onnxruntime {ort.__version__} "
          f"(providers: {', '.join(providers)})")
    rows = []
    rng = np.random.default_rng(1)
    for name, source, shape in POLICIES:
        with tempfile.TemporaryDirectory() as work:
            obs = observations(rng, shape)
            cuda = time_cuda(args.agent, args.nvcc, source, work, obs)
            row = {"policy": name, "cuda_host_us": cuda["median_us"], "cuda_device_us": cuda["device_median_us"]}
            model = os.path.join(work, "policy.onnx")
            run([args.agent, "export", *source, "--batch", "1", "--out", model])
            row["onnx_torch_vs_onnxruntime_cpu"] = onnx_torch.check_against_onnxruntime(model, obs[:1])
            figures, torch_out = time_torch(model, obs)
            row.update(figures)
            reference = torch_out
            if has_cuda:
                session = ort.InferenceSession(model, providers=["CUDAExecutionProvider"])
                outputs = [o.name for o in session.get_outputs()]
                median, _, values = time_session(session, {"obs": obs[:1]}, outputs)
                row["ort_cuda_us"] = median
            logits, value = reference[0][0], reference[1][0]
            row["max_relative_difference"] = float(max(
                np.max(np.abs(np.array(cuda["logits"]) - logits) / (1e-4 + np.abs(logits))),
                abs(cuda["value"] - value[0]) / (1e-4 + abs(value[0]))))
            rows.append(row)
    print()
    print("| policy | CUDA export, host buffers | CUDA export, device buffers | onnxruntime CUDA provider, host buffers | "
          "PyTorch eager, host buffers | PyTorch CUDA graph, host buffers | PyTorch CUDA graph, device buffers |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        ort_text = f"{r['ort_cuda_us']:.1f} us" if "ort_cuda_us" in r else "no CUDA provider in this onnxruntime"
        print(f"| {r['policy']} | {r['cuda_host_us']:.1f} us | {r['cuda_device_us']:.1f} us | {ort_text} | "
              f"{r['torch_eager_host_us']:.1f} us | {r['torch_graph_host_us']:.1f} us | {r['torch_graph_device_us']:.1f} us |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": gpu, "onnxruntime": ort.__version__, "providers": providers, "rows": rows}, f, indent=1)
    worst = max(r["max_relative_difference"] for r in rows)
    print("\nlargest relative difference between the CUDA export and PyTorch on the ONNX model: %.2g" % worst)
    if worst > 1e-3:
        sys.exit("the CUDA export and PyTorch disagree by more than 1e-3: the figures time different computations")


if __name__ == "__main__":
    main()
