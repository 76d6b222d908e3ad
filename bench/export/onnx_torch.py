"""The ONNX export run by PyTorch: a small interpreter of the ONNX ops the latency policies use, so
that latency_cuda.py can time PyTorch on the same weights (eagerly, and replayed as a CUDA graph)
where onnxruntime has no CUDA provider. Ops outside its table stop it with the op's name.
"""
import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper


def _conv(x, w, b=None, pads=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1), group=1, **_):
    top, left, bottom, right = pads
    if (top, left) != (bottom, right):
        x = F.pad(x, (left, right, top, bottom))
        top = left = 0
    return F.conv2d(x, w, b, stride=tuple(strides), padding=(top, left), dilation=tuple(dilations), groups=group)


OPS = {
    "Add": lambda a, b: a + b,
    "Sub": lambda a, b: a - b,
    "Mul": lambda a, b: a * b,
    "Div": lambda a, b: a / b,
    "Neg": lambda a: -a,
    "Relu": torch.relu,
    "Tanh": torch.tanh,
    "Sigmoid": torch.sigmoid,
    "Exp": torch.exp,
    "Log": torch.log,
    "Sqrt": torch.sqrt,
    "Erf": torch.erf,
    "Max": torch.maximum,
    "Min": torch.minimum,
    "MatMul": torch.matmul,
    "Identity": lambda a: a,
    "Conv": _conv,
    "Reshape": lambda x, shape, **_: x.reshape([int(d) for d in shape.tolist()]),
    "Transpose": lambda x, perm=None: x.permute(*perm),
    "Concat": lambda *xs, axis: torch.cat(xs, dim=axis),
    "Softmax": lambda x, axis=-1: torch.softmax(x, dim=axis),
    "LogSoftmax": lambda x, axis=-1: torch.log_softmax(x, dim=axis),
}


class OnnxModule(torch.nn.Module):
    def __init__(self, path, device):
        super().__init__()
        model = onnx.load(path)
        self.graph = model.graph
        # Integer initializers (Reshape's shapes) stay host arrays: reading them during CUDA-graph
        # capture would be a device-to-host copy.
        self.values = {}
        for i in self.graph.initializer:
            array = numpy_helper.to_array(i).copy()
            self.values[i.name] = array if array.dtype.kind in "iu" else torch.from_numpy(array).to(device)
        self.inputs = [i.name for i in self.graph.input if i.name not in self.values]
        self.outputs = [o.name for o in self.graph.output]
        for node in self.graph.node:
            if node.op_type not in OPS:
                raise SystemExit(f"onnx_torch: no PyTorch form for the ONNX op {node.op_type}")

    def forward(self, *args):
        env = dict(self.values)
        env.update(zip(self.inputs, args))
        for node in self.graph.node:
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            result = OPS[node.op_type](*[env[i] for i in node.input if i], **attrs)
            env[node.output[0]] = result
        return tuple(env[o] for o in self.outputs)


def check_against_onnxruntime(path, obs):
    """The interpreter's outputs against onnxruntime's CPU session on the same model (max relative difference)."""
    import onnxruntime as ort
    expected = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"obs": obs})
    with torch.no_grad():
        got = OnnxModule(path, "cpu")(torch.from_numpy(obs))
    return max(float(np.max(np.abs(g.numpy() - e) / (1e-4 + np.abs(e)))) for g, e in zip(got, expected))
