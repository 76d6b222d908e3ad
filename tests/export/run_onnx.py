#!/usr/bin/env python3
"""Runs an exported ONNX model for test_export (tests/core/test_export.cpp).

usage: run_onnx.py MODEL OBSERVATIONS OUT_DIR

Checks MODEL with onnx.checker (full check, shape inference included), runs it with onnxruntime's
CPU provider on the float32 observations in OBSERVATIONS (row-major; the batch is the file's size
over one observation's), writes each output to OUT_DIR/<output name>.f32 and prints one JSON line:
the opset, IR version, inputs and outputs with their shapes (a named axis as its name) and the
metadata_props. When onnx or onnxruntime cannot be imported it prints why and exits 77 (the test
then skips with that reason).
"""
import json
import os
import sys

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
except ImportError as error:
    print(f"python3 cannot import {error.name}: {error} (scripts/deps installs onnx and onnxruntime with pip)")
    sys.exit(77)


def main():
    model_path, observations_path, out_dir = sys.argv[1:4]
    model = onnx.load(model_path)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    obs = session.get_inputs()[0]
    per_sample = [int(d) for d in obs.shape[1:]]
    observations = np.fromfile(observations_path, dtype="<f4").reshape([-1] + per_sample)
    results = session.run(None, {obs.name: observations})
    for output, values in zip(session.get_outputs(), results):
        np.asarray(values, dtype="<f4").tofile(os.path.join(out_dir, output.name + ".f32"))

    def described(values):
        return [{"name": v.name, "shape": [d if isinstance(d, (int, str)) else None for d in v.shape]} for v in values]

    print(json.dumps({
        "opset": model.opset_import[0].version,
        "ir_version": model.ir_version,
        "producer": model.producer_name + " " + model.producer_version,
        "inputs": described(session.get_inputs()),
        "outputs": described(session.get_outputs()),
        "metadata": {p.key: p.value for p in model.metadata_props},
    }))


if __name__ == "__main__":
    main()
