#!/usr/bin/env python3
"""Writes the models of the GPU campaign into a gpuletd model repository.

Each model is a torchvision architecture (or a BERT-base shaped encoder)
with random weights drawn from a fixed seed, exported to ONNX with a
dynamic batch dimension as <repo>/<name>/1/model.onnx beside a config.yaml.
textenc, which only --models textenc exports, is a small encoder whose
sequence dimension is dynamic too, profiled at 128 tokens (profile_shapes).
The weights are not pretrained: latency, memory traffic and interference
depend on the shapes, not on the values.

  export-models.py REPO [--models a,b] [--max-batch 64] [--check]

--check runs batch 2 of every export in the onnxruntime Python package on
the CPU and compares it with PyTorch.
"""
import argparse
import math
import os
import sys
import time

import torch
import torchvision
from torch import nn


class DetectorHeads(nn.Module):
    """SSD300-VGG16 without its box decoding and NMS: backbone and heads,
    which is the part that runs on the GPU."""

    def __init__(self):
        super().__init__()
        m = torchvision.models.detection.ssd300_vgg16(weights=None, weights_backbone=None)
        self.backbone, self.head = m.backbone, m.head

    def forward(self, x):
        feats = list(self.backbone(x).values())
        out = self.head(feats)
        return out["bbox_regression"], out["cls_logits"]


class EncoderLayer(nn.Module):
    """One post-norm transformer encoder layer written with plain matmuls, so
    it exports as ordinary ONNX operators."""

    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x):
        n, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (t.reshape(n, s, self.heads, self.dh).transpose(1, 2) for t in (q, k, v))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dh), dim=-1) @ v
        x = self.ln1(x + self.proj(a.transpose(1, 2).reshape(n, s, d)))
        return self.ln2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))


class BertBase(nn.Module):
    """BERT-base shaped encoder: 12 layers, hidden 768, 12 heads, FFN 3072,
    vocabulary 30522, sequence 128; token ids in, pooled [N,768] out."""

    def __init__(self, seq=128):
        super().__init__()
        self.tok, self.pos = nn.Embedding(30522, 768), nn.Embedding(seq, 768)
        self.register_buffer("positions", torch.arange(seq).unsqueeze(0))
        self.ln = nn.LayerNorm(768)
        self.layers = nn.ModuleList(EncoderLayer(768, 12, 3072) for _ in range(12))
        self.pool = nn.Linear(768, 768)

    def forward(self, ids):
        x = self.ln(self.tok(ids) + self.pos(self.positions))
        for layer in self.layers:
            x = layer(x)
        return torch.tanh(self.pool(x[:, 0]))


class TextEncoder(nn.Module):
    """A small text encoder whose sequence length is any: 4 layers, hidden
    256, 4 heads, FFN 1024, vocabulary 30522, positions up to 512; token ids
    [N,T] in, the first token's state [N,256] out."""

    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(30522, 256), nn.Embedding(512, 256)
        self.layers = nn.ModuleList(EncoderLayer(256, 4, 1024) for _ in range(4))
        self.pool = nn.Linear(256, 256)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]).unsqueeze(0))
        for layer in self.layers:
            x = layer(x)
        return torch.tanh(self.pool(x[:, 0]))


# Models whose input's dimension 1 (a sequence) is dynamic too, with the
# length they are profiled at (profile_shapes).
SEQUENCE = {"textenc": 128}


def image(size):
    return lambda b: torch.randn(b, 3, size, size)


# name: (constructor, example input of b rows, input names, output names, note)
MODELS = {
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), image(224), ["input"], ["logits"],
                 "torchvision resnet50, [N,3,224,224] -> [N,1000]"),
    "vgg16": (lambda: torchvision.models.vgg16(weights=None), image(224), ["input"], ["logits"],
              "torchvision vgg16, [N,3,224,224] -> [N,1000]"),
    "googlenet": (lambda: torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True), image(224),
                  ["input"], ["logits"], "torchvision googlenet (inception v1), [N,3,224,224] -> [N,1000]"),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), image(224), ["input"], ["logits"],
                     "torchvision mobilenet_v2, [N,3,224,224] -> [N,1000]"),
    "ssd300": (DetectorHeads, image(300), ["input"], ["boxes", "scores"],
               "torchvision ssd300_vgg16 backbone and heads (no box decoding or NMS), [N,3,300,300]"),
    "bert": (BertBase, lambda b: torch.randint(0, 30522, (b, 128)), ["input_ids"], ["pooled"],
             "BERT-base shaped encoder (12x768, 12 heads), INT64 [N,128] token ids -> [N,768]"),
    "textenc": (TextEncoder, lambda b: torch.randint(0, 30522, (b, 16)), ["input_ids"], ["pooled"],
                "small text encoder (4x256, 4 heads), INT64 [N,T] token ids of any length T -> [N,256]"),
}

# The models exported when --models names none: textenc is left out.
DEFAULT = [m for m in MODELS if m not in SEQUENCE]


def export(name, repo, max_batch, slo, check):
    make, example, inputs, outputs, note = MODELS[name]
    torch.manual_seed(1)
    model = make().eval()
    d = os.path.join(repo, name, "1")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    x = example(2)
    axes = {n: {0: "batch"} for n in inputs + outputs}
    if name in SEQUENCE:
        axes[inputs[0]][1] = "sequence"
    t0 = time.time()
    with torch.no_grad():
        try:
            torch.onnx.export(model, (x,), path, input_names=inputs, output_names=outputs,
                              dynamic_axes=axes, opset_version=17, dynamo=False)
        except TypeError:  # a PyTorch without the dynamo switch
            torch.onnx.export(model, (x,), path, input_names=inputs, output_names=outputs,
                              dynamic_axes=axes, opset_version=17)
    with open(os.path.join(repo, name, "config.yaml"), "w") as f:
        f.write(f"# {name}: {note}; random weights (seed 1), exported by scripts/gpu/export-models.py.\n")
        f.write(f"slo: {slo}\nmax_batch_size: {max_batch}\n")
        if name in SEQUENCE:
            f.write(f"profile_shapes: {{{inputs[0]}: [{SEQUENCE[name]}]}}\n")
    msg = f"{name}: {os.path.getsize(path) / 2**20:.0f} MiB in {time.time() - t0:.1f}s"
    if check:
        import numpy as np
        import onnxruntime as ort
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        got = sess.run(None, {inputs[0]: x.numpy()})
        with torch.no_grad():
            want = model(x)
        want = want if isinstance(want, tuple) else (want,)
        err = max(float(np.max(np.abs(g - w.numpy())) / (np.max(np.abs(w.numpy())) + 1e-12)) for g, w in zip(got, want))
        msg += f", onnxruntime CPU vs torch: largest relative difference {err:.2g}"
    print(msg, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo")
    ap.add_argument("--models", default=",".join(DEFAULT))
    ap.add_argument("--max-batch", type=int, default=64)
    ap.add_argument("--slo", default="500ms", help="SLO written into config.yaml (a Go duration)")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(max(1, (os.cpu_count() or 2) // 2))
    failed = 0
    for name in a.models.split(","):
        try:
            export(name, a.repo, a.max_batch, a.slo, a.check)
        except Exception as e:  # report and go on: one model must not stop the campaign
            failed += 1
            print(f"{name}: export failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
