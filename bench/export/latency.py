#!/usr/bin/env python3
"""Batch-1 forward latency of exported policies: the C export (compiled here with the system's cc,
timed by c_latency.c) beside onnxruntime's CPU session on the ONNX export of the same weights, in
one run on one machine. Policies: the two Connect Four projects (their seeded initial weights:
latency does not depend on training) and the 32-64-64-3 MLP of mlp-32-64-64-3.pdl.

    python3 bench/export/latency.py [--agent build/bin/cuda-agent] [--json OUT.json]

onnxruntime is timed through its Python binding with the input and outputs bound once (IOBinding,
run_with_iobinding), single-threaded and with its default threads; the binding's own cost per call
is part of its figure, so the table also gives onnxruntime's time for an identity model of the
same input size (the floor of a call from Python). Each figure is the median of 15 rounds.
Needs: pip install onnxruntime numpy.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ROUNDS = 15
SAMPLES = 64

POLICIES = [
    ("connect4-alphazero (32 channels, 2 residual blocks)", [os.path.join(ROOT, "projects", "connect4-alphazero")], (2, 6, 7)),
    ("connect4-gpu (64 channels, 3 residual blocks)", [os.path.join(ROOT, "projects", "connect4-gpu")], (2, 6, 7)),
    ("MLP 32-64-64-3", [os.path.join(HERE, "mlp-32-64-64-3.pdl"), "--obs-shape", "32", "--action-dim", "3"], (32,)),
]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return r.stdout


def calls_for(estimate_us):
    """Calls per round for rounds of about 20 ms."""
    return max(10, int(20000 / max(estimate_us, 0.05)))


def time_c(agent, source, work, obs, cc_flags):
    c = os.path.join(work, "policy.c")
    run([agent, "export", *source, "--format", "c", "--out", c])
    exe = os.path.join(work, "c_latency")
    run(["cc", "-std=c99", *cc_flags, "-I", work, "-o", exe, os.path.join(HERE, "c_latency.c"), c, "-lm"])
    obs_file = os.path.join(work, "obs.f32")
    obs.astype(np.float32).tofile(obs_file)
    probe = json.loads(run([exe, str(len(obs)), obs_file, "3", "10"]))
    result = json.loads(run([exe, str(len(obs)), obs_file, str(ROUNDS), str(calls_for(probe["median_us"]))]))
    return result


def observations(rng, shape):
    """SAMPLES observations: 0/1 planes for a board (3 axes), normal values otherwise."""
    if len(shape) == 3:
        return rng.integers(0, 2, size=(SAMPLES, *shape)).astype(np.float32)
    return rng.standard_normal((SAMPLES, *shape)).astype(np.float32)


def time_call(call):
    """Median and minimum microseconds per call of `call` over ROUNDS rounds of about 20 ms each,
    after one call and ten that estimate its time."""
    call()
    start = time.perf_counter()
    for _ in range(10):
        call()
    calls = calls_for((time.perf_counter() - start) / 10 * 1e6)
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        rounds.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(rounds), min(rounds)


def time_session(session, feeds, outputs):
    binding = session.io_binding()
    for name, value in feeds.items():
        binding.bind_cpu_input(name, value)
    for name in outputs:
        binding.bind_output(name)
    median, minimum = time_call(lambda: session.run_with_iobinding(binding))
    return median, minimum, [o.numpy() for o in binding.get_outputs()]


def identity_model(path, size):
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Identity", ["obs"], ["out"])], "identity",
                              [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, size])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, size])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def session(path, threads):
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agent", default=os.path.join(ROOT, "build", "bin", "cuda-agent"))
    parser.add_argument("--json", help="also write the figures as JSON here")
    args = parser.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())
    print(f"CPU: {cpu}, {os.cpu_count()} logical cores; cc: {run(['cc', '--version']).splitlines()[0]}; onnxruntime {ort.__version__}")
    rows = []
    rng = np.random.default_rng(1)
    for name, source, shape in POLICIES:
        with tempfile.TemporaryDirectory() as work:
            obs = observations(rng, shape)
            c_o2 = time_c(args.agent, source, work, obs, ["-O2"])
            c_native = time_c(args.agent, source, work, obs, ["-O3", "-march=native"])
            model = os.path.join(work, "policy.onnx")
            run([args.agent, "export", *source, "--batch", "1", "--out", model])
            feeds = {"obs": obs[:1]}
            outputs = [o.name for o in session(model, 1).get_outputs()]
            single = time_session(session(model, 1), feeds, outputs)
            default = time_session(session(model, 0), feeds, outputs)
            identity = os.path.join(work, "identity.onnx")
            identity_model(identity, int(np.prod(shape)))
            floor = time_session(session(identity, 1), {"obs": obs[:1].reshape(1, -1)}, ["out"])
            # The C file and onnxruntime compute the same policy: the first observation's outputs agree.
            logits, value = single[2][0][0], single[2][1][0]
            err = max(np.max(np.abs(np.array(c_o2["logits"]) - logits) / (1e-5 + np.abs(logits))),
                      abs(c_o2["value"] - value[0]) / (1e-5 + abs(value[0])))
            rows.append({"policy": name, "c_o2_us": c_o2["median_us"], "c_native_us": c_native["median_us"],
                         "ort_1thread_us": single[0], "ort_default_us": default[0], "ort_call_floor_us": floor[0],
                         "max_relative_difference": float(err)})
    print()
    print("| policy | C, cc -O2 | C, cc -O3 -march=native | onnxruntime CPU, 1 thread | onnxruntime CPU, default threads | onnxruntime identity model (call floor) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['policy']} | {r['c_o2_us']:.2f} us | {r['c_native_us']:.2f} us | {r['ort_1thread_us']:.2f} us | "
              f"{r['ort_default_us']:.2f} us | {r['ort_call_floor_us']:.2f} us |")
    print()
    worst = max(r["max_relative_difference"] for r in rows)
    print("largest relative difference between the C and onnxruntime outputs: %.2g" % worst)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu, "onnxruntime": ort.__version__, "rows": rows}, f, indent=1)
    if worst > 1e-5:
        sys.exit("the C export and onnxruntime disagree by more than 1e-5: the figures time different computations")


if __name__ == "__main__":
    main()
