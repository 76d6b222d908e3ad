#!/usr/bin/env python3
"""PyTorch golden data for the PDL CPU backend.

For every case in CASES this writes two files under tests/golden/data/:

  <case>.bin   raw little-endian float32 tensors, concatenated
  <case>.json  metadata: the PDL source, observation shape, action count, batch
               size, and for each stored tensor its shape, its offset (in floats)
               into the .bin file and its element count.

Stored tensors: the observation batch ("obs"), the entry's outputs ("output:i"),
random cotangents ("cotangent:i"), and the gradients of
L = sum_i sum(output_i * cotangent_i) with respect to the observation
("grad:obs") and every parameter ("grad:<param name>"). Network cases
("update": true) additionally store the batch and the results of three
actor-critic update steps (clip_grad_norm_ 5.0 + Adam lr 1e-3, and + SGD lr 0.01 momentum 0.9);
see README.md.

Parameters are not stored: they are a pure function of their name and element
index (init_param below), and the C++ side implements the same formula.

Everything runs on the CPU in float32, single-threaded, with fixed seeds, so the
output is reproducible.

Run from the repository root:

    python3 tests/golden/make_golden.py            # all cases
    python3 tests/golden/make_golden.py dense attention   # only these cases
"""

import json
import math
import os
import sys
import zlib
from dataclasses import dataclass
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

# Parameters with more elements than this get no "update:param:<name>" entry.
MAX_UPDATE_PARAM_ELEMENTS = 100000

# Update hyper-parameters.
UPDATE_STEPS = 3
SGD_LR = 0.01
SGD_MOMENTUM = 0.9
CLIP_NORM = 5.0
ADAM_LR = 1e-3
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
ENTROPY_COEF = 0.01
VALUE_COEF = 0.5


# --------------------------------------------------------------------------------------
# Reproducibility
# --------------------------------------------------------------------------------------

def configure_torch() -> None:
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set (e.g. when imported twice)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    if hasattr(torch.backends.mkldnn, "deterministic"):
        torch.backends.mkldnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_default_dtype(torch.float32)


def case_seed(name: str) -> int:
    """Stable per-case seed: CRC-32 of the case name."""
    return zlib.crc32(name.encode("utf-8")) & 0x7FFFFFFF


# --------------------------------------------------------------------------------------
# Parameter initialisation (shared formula with the C++ side)
# --------------------------------------------------------------------------------------

FNV_OFFSET_BASIS = 14695981039346656037
FNV_PRIME = 1099511628211
MASK64 = (1 << 64) - 1


def fnv1a64(name: str) -> int:
    h = FNV_OFFSET_BASIS
    for byte in name.encode("utf-8"):
        h ^= byte
        h = (h * FNV_PRIME) & MASK64
    return h


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser applied element-wise to a uint64 array (wrapping)."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        z = x
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return z


def uniform01(name: str, n: int) -> np.ndarray:
    """u_i in [0, 1) as float64, for i = 0..n-1."""
    h = np.uint64(fnv1a64(name))
    with np.errstate(over="ignore"):
        x = h + np.arange(n, dtype=np.uint64)
    z = splitmix64(x)
    return (z >> np.uint64(11)).astype(np.float64) * (2.0 ** -53)


def init_param(name: str, shape: Sequence[int], kind: str, fan_in: int = 1) -> np.ndarray:
    """kind: 'weight'/'bias' (uniform +-1/sqrt(fan_in)), 'gamma', 'beta', 'table'."""
    n = int(np.prod(shape)) if len(shape) else 1
    s = 2.0 * uniform01(name, n) - 1.0
    if kind in ("weight", "bias"):
        v = s * (1.0 / math.sqrt(fan_in))
    elif kind == "gamma":
        v = 1.0 + 0.1 * s
    elif kind == "beta":
        v = 0.1 * s
    elif kind == "table":
        v = s
    else:
        raise ValueError(f"unknown parameter kind {kind!r}")
    return v.astype(np.float32).reshape(tuple(shape))


class Params:
    """Named parameters, created from the formula on first use (in creation order)."""

    def __init__(self) -> None:
        self.tensors: Dict[str, torch.Tensor] = {}

    def get(self, name: str, shape: Sequence[int], kind: str, fan_in: int = 1) -> torch.Tensor:
        shape = tuple(int(d) for d in shape)
        if name in self.tensors:
            t = self.tensors[name]
            if tuple(t.shape) != shape:
                raise ValueError(f"parameter {name}: shape {tuple(t.shape)} vs {shape}")
            return t
        t = torch.from_numpy(init_param(name, shape, kind, fan_in)).requires_grad_(True)
        self.tensors[name] = t
        return t

    def names(self) -> List[str]:
        return list(self.tensors.keys())

    def values(self) -> List[torch.Tensor]:
        return list(self.tensors.values())


class Scope:
    """One scope instance: names builtin layer calls and user-function calls."""

    def __init__(self, params: Params, path: str) -> None:
        self.params = params
        self.path = path
        self._layer_counts: Dict[str, int] = {}
        self._call_counts: Dict[str, int] = {}

    def layer(self, builtin: str) -> str:
        k = self._layer_counts.get(builtin, 0)
        self._layer_counts[builtin] = k + 1
        return f"{self.path}/{builtin}_{k}"

    def child(self, function: str) -> "Scope":
        j = self._call_counts.get(function, 0)
        self._call_counts[function] = j + 1
        return Scope(self.params, f"{self.path}/{function}_{j}")


# --------------------------------------------------------------------------------------
# PDL builtins. Tensors are [B, *per-sample]; "axis" arguments are per-sample axes.
# --------------------------------------------------------------------------------------

def _dim(x: torch.Tensor, axis: int) -> int:
    """Per-sample axis -> torch dim (axis 0 is torch dim 1; negative counts from the end)."""
    per_sample = x.dim() - 1
    if not -per_sample <= axis < per_sample:
        raise ValueError(f"axis {axis} out of range for per-sample rank {per_sample}")
    return axis + 1 if axis >= 0 else axis


def _dims(x: torch.Tensor, axis) -> List[int]:
    if axis is None:
        return list(range(1, x.dim()))
    if isinstance(axis, (tuple, list)):
        return [_dim(x, a) for a in axis]
    return [_dim(x, axis)]


# Layers with parameters -----------------------------------------------------------------

def dense(s: Scope, x: torch.Tensor, units: int, bias: bool = True) -> torch.Tensor:
    name = s.layer("dense")
    x = x.reshape(x.shape[0], -1)
    k = x.shape[1]
    w = s.params.get(f"{name}/weight", (k, units), "weight", k)  # [in, out]
    b = s.params.get(f"{name}/bias", (units,), "bias", k) if bias else None
    return F.linear(x, w.t(), b)


def conv2d(s: Scope, x: torch.Tensor, filters: int, kernel: int = 3, stride: int = 1,
           padding: str = "same", bias: bool = True) -> torch.Tensor:
    name = s.layer("conv2d")
    c = x.shape[1]
    fan_in = c * kernel * kernel
    w = s.params.get(f"{name}/weight", (filters, c, kernel, kernel), "weight", fan_in)
    b = s.params.get(f"{name}/bias", (filters,), "bias", fan_in) if bias else None
    if padding == "same":
        if stride != 1 or kernel % 2 != 1:
            raise ValueError("padding='same' is only defined here for stride 1, odd kernel")
        pad = kernel // 2
    elif padding == "valid":
        pad = 0
    else:
        raise ValueError(f"bad padding {padding!r}")
    return F.conv2d(x, w, b, stride=stride, padding=pad)


def layer_norm(s: Scope, x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    name = s.layer("layer_norm")
    d = x.shape[-1]
    gamma = s.params.get(f"{name}/gamma", (d,), "gamma")
    beta = s.params.get(f"{name}/beta", (d,), "beta")
    return F.layer_norm(x, (d,), gamma, beta, eps)


def embedding(s: Scope, ids: torch.Tensor, vocab: int, dim: int) -> torch.Tensor:
    name = s.layer("embedding")
    table = s.params.get(f"{name}/table", (vocab, dim), "table")
    return F.embedding(ids.detach().round().long(), table)


# Parameter-free builtins ------------------------------------------------------------------

relu = torch.relu
tanh = torch.tanh
sigmoid = torch.sigmoid
exp = torch.exp
log = torch.log


def gelu(x):
    return F.gelu(x, approximate="none")


def softmax(x, axis=-1):
    return torch.softmax(x, dim=_dim(x, axis))


def log_softmax(x, axis=-1):
    return torch.log_softmax(x, dim=_dim(x, axis))


def reduce_sum(x, axis=None, keepdims=False):
    return torch.sum(x, dim=_dims(x, axis), keepdim=keepdims)


def reduce_mean(x, axis=None, keepdims=False):
    return torch.mean(x, dim=_dims(x, axis), keepdim=keepdims)


def reduce_max(x, axis=None, keepdims=False):
    return torch.amax(x, dim=_dims(x, axis), keepdim=keepdims)


def clip(x, lo, hi):
    return torch.clamp(x, lo, hi)


def where(mask, a, b):
    return torch.where(mask != 0, a, b)


def gt(a, b):
    return (a > b).to(torch.float32)


def le(a, b):
    return (a <= b).to(torch.float32)


def eq(a, b):
    return (a == b).to(torch.float32)


def flatten(x):
    return x.reshape(x.shape[0], -1)


def reshape(x, shape):
    return x.reshape(x.shape[0], *shape)


def concat(*xs, axis=0):
    return torch.cat(xs, dim=_dim(xs[0], axis))


def matmul(a, b):
    return torch.matmul(a, b)


def _pool_args(kernel, stride, padding):
    if padding != "valid":
        raise ValueError("only padding='valid' pooling is used by the golden cases")
    return kernel, (kernel if stride is None else stride)


def max_pool2d(x, kernel=2, stride=None, padding="valid"):
    k, st = _pool_args(kernel, stride, padding)
    return F.max_pool2d(x, k, st)


def avg_pool2d(x, kernel=2, stride=None, padding="valid"):
    k, st = _pool_args(kernel, stride, padding)
    return F.avg_pool2d(x, k, st)


def attention(q, k, v, heads=1, causal=False):
    b, t, d = q.shape
    s_len = k.shape[1]
    if d % heads:
        raise ValueError("D must be divisible by heads")
    dh = d // heads
    qh = q.reshape(b, t, heads, dh).transpose(1, 2)
    kh = k.reshape(b, s_len, heads, dh).transpose(1, 2)
    vh = v.reshape(b, s_len, heads, dh).transpose(1, 2)
    o = F.scaled_dot_product_attention(qh, kh, vh, is_causal=causal)
    return o.transpose(1, 2).reshape(b, t, d)


def dropout(x, rate):
    return x  # inference: identity


# --------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------

Forward = Callable[[Scope, torch.Tensor, int], Tuple[torch.Tensor, ...]]


@dataclass
class Case:
    name: str
    obs_shape: Tuple[int, ...]
    batch: int
    pdl: str
    forward: Forward
    action_dim: int = 3
    update: bool = False
    obs_kind: str = "normal"  # 'normal': N(0,1); 'ids10': integers uniform in 0..9


def program(*body: str) -> str:
    lines = ["@parallel(axis='batch')", "def policy(obs):"] + ["    " + b for b in body]
    return "\n".join(lines) + "\n"


RESNET_PDL = """const channels = 64

@parallel(axis='batch')
def policy(obs):
    x = relu(conv2d(obs, filters=channels, kernel=3, padding='same'))
    for i in range(3):
        x = residual(x)
    h = flatten(x)
    logits = dense(h, units=action_dim)
    value = tanh(dense(relu(dense(h, units=64)), units=1))
    return logits, value

def residual(x):
    y = relu(conv2d(x, filters=channels, kernel=3, padding='same'))
    return relu(x + conv2d(y, filters=channels, kernel=3, padding='same'))
"""


def _mlp(units: int) -> Forward:
    def f(s, obs, action_dim):
        h = tanh(dense(s, obs, units=units))
        h = tanh(dense(s, h, units=units))
        return (dense(s, h, units=action_dim + 1),)
    return f


def _atari(s, obs, action_dim):
    x = relu(conv2d(s, obs, filters=32, kernel=8, stride=4, padding="valid"))
    x = relu(conv2d(s, x, filters=64, kernel=4, stride=2, padding="valid"))
    x = relu(conv2d(s, x, filters=64, kernel=3, stride=1, padding="valid"))
    h = relu(dense(s, x, units=512))
    return (dense(s, h, units=action_dim + 1),)


def _resnet(s, obs, action_dim):
    channels = 64

    def residual(s, x):
        y = relu(conv2d(s, x, filters=channels, kernel=3, padding="same"))
        return relu(x + conv2d(s, y, filters=channels, kernel=3, padding="same"))

    x = relu(conv2d(s, obs, filters=channels, kernel=3, padding="same"))
    for _ in range(3):
        x = residual(s.child("residual"), x)
    h = flatten(x)
    logits = dense(s, h, units=action_dim)
    value = tanh(dense(s, relu(dense(s, h, units=64)), units=1))
    return logits, value


CASES: List[Case] = [
    # ---- single ops (batch 3) ----
    Case("dense", (5,), 3, program("return dense(obs, units=3)"),
         lambda s, o, a: (dense(s, o, units=3),)),
    Case("dense_nobias", (2, 3), 3, program("return dense(obs, units=4, bias=False)"),
         lambda s, o, a: (dense(s, o, units=4, bias=False),)),
    Case("conv2d_same", (2, 5, 5), 3, program("return conv2d(obs, filters=3, kernel=3)"),
         lambda s, o, a: (conv2d(s, o, filters=3, kernel=3),)),
    Case("conv2d_valid_stride2", (3, 9, 9), 3,
         program("return conv2d(obs, filters=4, kernel=3, stride=2, padding='valid')"),
         lambda s, o, a: (conv2d(s, o, filters=4, kernel=3, stride=2, padding="valid"),)),
    Case("max_pool2d", (2, 6, 6), 3, program("return max_pool2d(obs, kernel=2)"),
         lambda s, o, a: (max_pool2d(o, kernel=2),)),
    Case("avg_pool2d", (2, 6, 6), 3, program("return avg_pool2d(obs, kernel=3, stride=1)"),
         lambda s, o, a: (avg_pool2d(o, kernel=3, stride=1),)),
    Case("reshape_flatten", (2, 3, 4), 3, program("return reshape(flatten(obs), shape=(4, 6))"),
         lambda s, o, a: (reshape(flatten(o), shape=(4, 6)),)),
    Case("concat", (3, 4), 3, program("return concat(obs, tanh(obs), axis=1)"),
         lambda s, o, a: (concat(o, tanh(o), axis=1),)),
    Case("matmul", (3, 4), 3, program("return matmul(obs, reshape(obs, shape=(4, 3)))"),
         lambda s, o, a: (matmul(o, reshape(o, shape=(4, 3))),)),
    Case("embedding", (4,), 3, program("return embedding(obs, vocab=10, dim=3)"),
         lambda s, o, a: (embedding(s, o, vocab=10, dim=3),), obs_kind="ids10"),
    Case("layer_norm", (3, 6), 3, program("return layer_norm(obs)"),
         lambda s, o, a: (layer_norm(s, o),)),
    Case("attention_causal", (4, 8), 3,
         program("return attention(obs, tanh(obs), sigmoid(obs), heads=2, causal=True)"),
         lambda s, o, a: (attention(o, tanh(o), sigmoid(o), heads=2, causal=True),)),
    Case("attention", (4, 8), 3, program("return attention(obs, obs * 0.5, tanh(obs), heads=4)"),
         lambda s, o, a: (attention(o, o * 0.5, tanh(o), heads=4),)),
    Case("activations", (6,), 3,
         program("return relu(obs), tanh(obs), sigmoid(obs), gelu(obs), exp(obs), "
                 "log(exp(obs) + 1)"),
         lambda s, o, a: (relu(o), tanh(o), sigmoid(o), gelu(o), exp(o), log(exp(o) + 1))),
    Case("softmax", (3, 5), 3,
         program("return softmax(obs), log_softmax(obs), softmax(obs, axis=0), "
                 "log_softmax(obs, axis=0)"),
         lambda s, o, a: (softmax(o), log_softmax(o), softmax(o, axis=0),
                          log_softmax(o, axis=0))),
    Case("reductions", (3, 4), 3,
         program("return sum(obs, axis=1), mean(obs), max(obs, axis=0, keepdims=True), "
                 "sum(obs, axis=(0, 1))"),
         lambda s, o, a: (reduce_sum(o, axis=1), reduce_mean(o),
                          reduce_max(o, axis=0, keepdims=True), reduce_sum(o, axis=(0, 1)))),
    Case("elementwise", (3, 4), 3,
         program("return clip(obs, -0.5, 0.5), where(obs > 0, obs, obs * 0.1), "
                 "(obs + 1) * obs - obs / 2, obs / (obs * obs + 1), 2 - obs"),
         lambda s, o, a: (clip(o, -0.5, 0.5), where(gt(o, 0), o, o * 0.1),
                          (o + 1) * o - o / 2, o / (o * o + 1), 2 - o)),
    Case("comparisons", (6,), 3,
         program("return (obs > 0) + (obs <= 0.5) * 2 + (obs == obs) * 4"),
         lambda s, o, a: (gt(o, 0) + le(o, 0.5) * 2 + eq(o, o) * 4,)),
    Case("dropout_inference", (6,), 3, program("return dropout(obs, rate=0.5) * 3"),
         lambda s, o, a: (dropout(o, rate=0.5) * 3,)),
    # ---- networks (update cases) ----
    Case("cartpole_mlp64", (4,), 4,
         program("h = tanh(dense(obs, units=64))", "h = tanh(dense(h, units=64))",
                 "return dense(h, units=action_dim + 1)"),
         _mlp(64), action_dim=2, update=True),
    Case("connect4_mlp256", (2, 6, 7), 4,
         program("h = tanh(dense(obs, units=256))", "h = tanh(dense(h, units=256))",
                 "return dense(h, units=action_dim + 1)"),
         _mlp(256), action_dim=7, update=True),
    Case("atari_nature_cnn", (4, 84, 84), 2,
         program("x = relu(conv2d(obs, filters=32, kernel=8, stride=4, padding='valid'))",
                 "x = relu(conv2d(x, filters=64, kernel=4, stride=2, padding='valid'))",
                 "x = relu(conv2d(x, filters=64, kernel=3, stride=1, padding='valid'))",
                 "h = relu(dense(x, units=512))",
                 "return dense(h, units=action_dim + 1)"),
         _atari, action_dim=6, update=True),
    Case("connect4_resnet", (2, 6, 7), 4, RESNET_PDL, _resnet, action_dim=7, update=True),
]


# --------------------------------------------------------------------------------------
# Running a case
# --------------------------------------------------------------------------------------

class TensorWriter:
    def __init__(self) -> None:
        self.meta: Dict[str, dict] = {}
        self.chunks: List[np.ndarray] = []
        self.offset = 0

    def add(self, key: str, t) -> None:
        if key in self.meta:
            raise KeyError(f"duplicate tensor key {key}")
        a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        a = np.ascontiguousarray(a, dtype="<f4")
        self.meta[key] = {"shape": list(a.shape), "offset": self.offset, "size": int(a.size)}
        self.chunks.append(a.reshape(-1))
        self.offset += int(a.size)

    def bytes(self) -> bytes:
        if not self.chunks:
            return b""
        return np.concatenate(self.chunks).astype("<f4").tobytes()


def forward(case: Case, params: Params, obs: torch.Tensor) -> Tuple[torch.Tensor, ...]:
    outs = case.forward(Scope(params, "policy"), obs, case.action_dim)
    if isinstance(outs, torch.Tensor):
        outs = (outs,)
    for o in outs:
        if o.dtype != torch.float32 or o.shape[0] != case.batch:
            raise AssertionError(f"{case.name}: bad output {o.dtype} {tuple(o.shape)}")
    return tuple(outs)


def policy_loss(case: Case, outs: Tuple[torch.Tensor, ...], actions: torch.Tensor,
                advantages: torch.Tensor, returns: torch.Tensor) -> torch.Tensor:
    a = case.action_dim
    if len(outs) == 2:
        logits, value = outs[0], outs[1][:, 0]
    elif len(outs) == 1:
        logits, value = outs[0][:, :-1], outs[0][:, -1]
    else:
        raise AssertionError("update needs one or two outputs")
    if tuple(logits.shape) != (case.batch, a):
        raise AssertionError(f"{case.name}: logits shape {tuple(logits.shape)}")
    logp = torch.log_softmax(logits, dim=-1)
    p = torch.softmax(logits, dim=-1)
    chosen = logp.gather(1, actions.long().unsqueeze(1)).squeeze(1)
    pg = -(chosen * advantages).mean()
    vloss = VALUE_COEF * ((value - returns) ** 2).mean()
    entropy = (-(p * logp).sum(dim=-1)).mean()
    return pg + vloss - ENTROPY_COEF * entropy


def run_case(case: Case) -> Tuple[dict, bytes]:
    torch.manual_seed(case_seed(case.name))
    shape = (case.batch,) + tuple(case.obs_shape)
    if case.obs_kind == "normal":
        obs = torch.randn(shape)
    elif case.obs_kind == "ids10":
        obs = torch.randint(0, 10, shape).to(torch.float32)
    else:
        raise ValueError(case.obs_kind)

    w = TensorWriter()
    w.add("obs", obs)

    # Forward + gradients of L = sum_i sum(output_i * cotangent_i).
    params = Params()
    obs_in = obs.clone().requires_grad_(True)
    outs = forward(case, params, obs_in)
    cots = [torch.randn(o.shape) for o in outs]
    for i, o in enumerate(outs):
        w.add(f"output:{i}", o)
    for i, c in enumerate(cots):
        w.add(f"cotangent:{i}", c)
    loss = sum((o * c).sum() for o, c in zip(outs, cots))
    inputs = [obs_in] + params.values()
    if loss.requires_grad:
        grads = torch.autograd.grad(loss, inputs, allow_unused=True)
    else:  # e.g. comparisons: nothing differentiable reaches the outputs
        grads = [None] * len(inputs)
    grads = [torch.zeros_like(x) if g is None else g for x, g in zip(inputs, grads)]
    w.add("grad:obs", grads[0])
    for name, g in zip(params.names(), grads[1:]):
        w.add(f"grad:{name}", g)

    if case.update:
        run_update(case, obs, w)

    meta = {
        "name": case.name,
        "pdl": case.pdl,
        "obs_shape": list(case.obs_shape),
        "action_dim": case.action_dim,
        "batch": case.batch,
        "update": case.update,
        "seed": case_seed(case.name),
        "tensors": w.meta,
    }
    return meta, w.bytes()


def run_update(case: Case, obs: torch.Tensor, w: TensorWriter) -> None:
    # Draws continue the case's generator sequence (after obs and cotangents).
    actions = torch.randint(0, case.action_dim, (case.batch,)).to(torch.float32)
    advantages = torch.randn(case.batch)
    returns = torch.randn(case.batch)
    w.add("update:actions", actions)
    w.add("update:advantages", advantages)
    w.add("update:returns", returns)

    optimizers = [
        ("update:", lambda plist: torch.optim.Adam(plist, lr=ADAM_LR, betas=ADAM_BETAS, eps=ADAM_EPS)),
        ("update_sgd:", lambda plist: torch.optim.SGD(plist, lr=SGD_LR, momentum=SGD_MOMENTUM)),
    ]
    for prefix, make_optimizer in optimizers:
        params = Params()  # fresh, formula-initialised parameters
        forward(case, params, obs)  # creates them (in creation order)
        plist = params.values()
        opt = make_optimizer(plist)
        losses = []
        for _ in range(UPDATE_STEPS):
            opt.zero_grad(set_to_none=False)
            loss = policy_loss(case, forward(case, params, obs), actions, advantages, returns)
            losses.append(loss.item())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(plist, CLIP_NORM)
            opt.step()
        w.add(prefix + "loss", np.array(losses, dtype=np.float32))
        for name, t in params.tensors.items():
            if t.numel() <= MAX_UPDATE_PARAM_ELEMENTS:
                w.add(f"{prefix}param:{name}", t)


def main(argv: List[str]) -> int:
    configure_torch()
    selected = CASES
    if argv:
        by_name = {c.name: c for c in CASES}
        unknown = [a for a in argv if a not in by_name]
        if unknown:
            print(f"unknown case(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        selected = [by_name[a] for a in argv]
    os.makedirs(OUT_DIR, exist_ok=True)
    total = 0
    for case in selected:
        meta, blob = run_case(case)
        with open(os.path.join(OUT_DIR, f"{case.name}.bin"), "wb") as f:
            f.write(blob)
        text = json.dumps(meta, indent=1) + "\n"
        with open(os.path.join(OUT_DIR, f"{case.name}.json"), "w", encoding="utf-8") as f:
            f.write(text)
        total += len(blob) + len(text.encode("utf-8"))
        print(f"{case.name:24s} {len(meta['tensors']):3d} tensors {len(blob):10d} bytes")
    print(f"total {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
