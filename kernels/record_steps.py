#!/usr/bin/env python3
"""Record forward passes of a catalogue model on a real GPU for `headroom calibrate-program`.

    python3 kernels/record_steps.py --model Llama-3.1-8B --out recorded/
    build/headroom calibrate-program recorded/*.pickle

Builds the model's shapes (from `headroom model NAME --json`, so the catalogue is the one source)
with random bf16 weights, keeping only as many decoder layers as fit in half the free memory,
then runs prefill and decode steps at several token counts and batch sizes, each recorded alone
with torch.cuda.memory._record_memory_history. Weights, inputs and the KV cache are allocated,
and one unrecorded warm-up pass is run, before recording starts, so a snapshot holds exactly one
forward pass. Each snapshot
`<stem>.pickle` gets a sidecar `<stem>.step.json` (sim/model/recorded_step.hpp) naming the model,
layers and shape it holds.

The forward follows vLLM's dense decoder (LlamaDecoderLayer): fused qkv, rotary in place, the
attention output allocated before the kernel, o_proj, fused add+RMSNorm in place, gate_up,
SiluAndMul, down. It follows vLLM's kernels only where vLLM is installed: vLLM's fused kernels
(vllm._custom_ops) and flash-attn are used when importable. Without vLLM the recording is of plain
PyTorch, not of vLLM: the script says so, the sidecar's "kernels" starts with "torch", and
`headroom calibrate-program` reports such a step as a comparison against plain PyTorch rather than
as a difference from vLLM's program (plain PyTorch's RMSNorm makes fp32 temporaries that vLLM's
fused kernel does not: +28-30 % peak on Llama-3.1-8B and Qwen2.5-7B on an H100, issue 19).
Dense models only (llama, qwen2, qwen3).
"""
import argparse
import json
import os
import subprocess

import torch
import torch.nn.functional as F

try:
    from vllm import _custom_ops as vllm_ops
except ImportError:
    vllm_ops = None
try:
    from flash_attn import flash_attn_varlen_func, flash_attn_with_kvcache
except ImportError:
    flash_attn_varlen_func = flash_attn_with_kvcache = None

PREFILL = [(512, 1), (2048, 1), (2048, 4), (8192, 8)]  # (tokens, sequences)
DECODE = [1, 16, 64, 256]                              # sequences, one token each
DECODE_CONTEXT = 1024                                  # tokens cached per decoding sequence
EPS = 1e-5


def rms_norm(x, weight, residual=None):
    """vLLM RMSNorm: a new tensor without residual; fused add+norm in place with one."""
    if vllm_ops is not None:
        if residual is None:
            out = torch.empty_like(x)
            vllm_ops.rms_norm(out, x, weight, EPS)
            return out
        vllm_ops.fused_add_rms_norm(x, residual, weight, EPS)
        return x
    if residual is not None:
        residual.add_(x)
        x.copy_(residual)
    variance = x.float().pow(2).mean(-1, keepdim=True)
    out = x if residual is not None else torch.empty_like(x)
    out.copy_(x.float() * torch.rsqrt(variance + EPS) * weight.float())
    return out


def silu_and_mul(gate_up):
    width = gate_up.shape[-1] // 2
    out = torch.empty(gate_up.shape[0], width, dtype=gate_up.dtype, device=gate_up.device)
    if vllm_ops is not None:
        vllm_ops.silu_and_mul(out, gate_up)
    else:
        torch.mul(F.silu(gate_up[:, :width]), gate_up[:, width:], out=out)
    return out


def rotary(q, k, positions, cos_sin, head_dim):
    if vllm_ops is not None:
        vllm_ops.rotary_embedding(positions, q, k, head_dim, cos_sin, True)
        return
    cos, sin = cos_sin[positions].chunk(2, dim=-1)
    for x in (q, k):
        x3 = x.view(x.shape[0], -1, head_dim)
        a, b = x3[..., : head_dim // 2], x3[..., head_dim // 2:]
        ra = a * cos[:, None] - b * sin[:, None]
        rb = b * cos[:, None] + a * sin[:, None]
        a.copy_(ra)
        b.copy_(rb)


def attention(q, k, v, shape, cache):
    """Writes the attention output into a new [T, Hq·D] tensor, as vLLM's Attention layer does."""
    c, seqs, decode = shape["config"], shape["seqs"], shape["decode"]
    hq, hkv, d = c["heads"], c["kv_heads"], c["head_dim"]
    tokens = q.shape[0]
    q, k, v = q.view(tokens, hq, d), k.view(tokens, hkv, d), v.view(tokens, hkv, d)
    if decode:
        k_cache, v_cache, lens = cache
        if flash_attn_with_kvcache is not None:
            return flash_attn_with_kvcache(q[:, None], k_cache, v_cache, k=k[:, None], v=v[:, None],
                                           cache_seqlens=lens, causal=True).view(tokens, hq * d)
        k_cache[:, DECODE_CONTEXT] = k
        v_cache[:, DECODE_CONTEXT] = v
        out = F.scaled_dot_product_attention(q[:, :, None], k_cache.transpose(1, 2), v_cache.transpose(1, 2),
                                             enable_gqa=True)
        return out.reshape(tokens, hq * d)
    if flash_attn_varlen_func is not None:
        cu = torch.arange(0, tokens + 1, tokens // seqs, dtype=torch.int32, device=q.device)
        return flash_attn_varlen_func(q, k, v, cu, cu, tokens // seqs, tokens // seqs,
                                      causal=True).view(tokens, hq * d)
    per = tokens // seqs
    split = [x.view(seqs, per, -1, d).transpose(1, 2) for x in (q, k, v)]
    out = F.scaled_dot_product_attention(*split, is_causal=True, enable_gqa=True)
    return out.transpose(1, 2).reshape(tokens, hq * d)


def forward(weights, ids, positions, shape, cache):
    c = shape["config"]
    hq, hkv, d = c["heads"], c["kv_heads"], c["head_dim"]
    residual = F.embedding(ids, weights["embed"])
    hidden = rms_norm(residual, weights["layers"][0]["input_norm"])
    for i, w in enumerate(weights["layers"]):
        if i > 0:
            hidden = rms_norm(hidden, w["input_norm"], residual)
        qkv = F.linear(hidden, w["qkv"], w.get("qkv_bias"))
        q, k, v = qkv.split([hq * d, hkv * d, hkv * d], dim=-1)
        rotary(q, k, positions, weights["cos_sin"], d)
        attn_out = attention(q, k, v, shape, cache)
        o = F.linear(attn_out, w["o"])
        del q, k, v, qkv, attn_out, hidden
        o = rms_norm(o, w["post_norm"], residual)
        gate_up = F.linear(o, w["gate_up"])
        act = silu_and_mul(gate_up)
        del gate_up
        hidden = F.linear(act, w["down"])
        del act, o
    hidden = rms_norm(hidden, weights["final_norm"], residual)
    del residual
    return hidden


def build(c, layers, device):
    h, i, hq, hkv, d = c["hidden"], c["intermediate"], c["heads"], c["kv_heads"], c["head_dim"]

    def rand(*size):  # scaled so activations stay finite through the layers
        return torch.randn(*size, dtype=torch.bfloat16, device=device) * (1.0 / size[-1] ** 0.5)

    ones = lambda: torch.ones(h, dtype=torch.bfloat16, device=device)  # noqa: E731
    inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d))
    freqs = torch.outer(torch.arange(65536, device=device, dtype=torch.float32), inv)
    weights = {"embed": rand(c["vocab"], h), "final_norm": ones(),
               "cos_sin": torch.cat([freqs.cos(), freqs.sin()], dim=-1).to(torch.bfloat16), "layers": []}
    for _ in range(layers):
        w = {"input_norm": ones(), "post_norm": ones(), "qkv": rand((hq + 2 * hkv) * d, h),
             "o": rand(h, hq * d), "gate_up": rand(2 * i, h), "down": rand(h, i)}
        if c["qkv_bias"]:
            w["qkv_bias"] = rand((hq + 2 * hkv) * d)
        weights["layers"].append(w)
    return weights


def record(path, run):
    # One unrecorded run first: cuBLAS workspaces and kernel caches are created on first use, once.
    with torch.inference_mode():
        del_me = run()
        del del_me
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(max_entries=1_000_000)
    with torch.inference_mode():
        out = run()
        del out
    torch.cuda.synchronize()
    torch.cuda.memory._dump_snapshot(path)
    torch.cuda.memory._record_memory_history(enabled=None)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a headroom catalogue name, e.g. Llama-3.1-8B")
    p.add_argument("--out", required=True, help="folder for the snapshots and their .step.json")
    p.add_argument("--layers", type=int, default=0, help="decoder layers to build (default: as many as fit)")
    p.add_argument("--headroom", default="build/headroom", help="the headroom binary (for the model's shapes)")
    a = p.parse_args()
    info = json.loads(subprocess.run([a.headroom, "model", a.model, "--tokens", "1", "--seqs", "1", "--json"],
                                     check=True, capture_output=True, text=True).stdout)
    c = info["config"]
    if c["moe"] or c["mla"] or c["qk_norm"] or c["dtype"] != "bf16":
        raise SystemExit(f"record_steps.py builds dense bf16 llama/qwen2 models only; {a.model} is not one")
    if not torch.cuda.is_available():
        raise SystemExit("record_steps.py: no CUDA/ROCm device visible to PyTorch; nothing recorded")
    device = torch.device("cuda")
    free, _ = torch.cuda.mem_get_info()
    h, i, hq, hkv, d = c["hidden"], c["intermediate"], c["heads"], c["kv_heads"], c["head_dim"]
    layer_bytes = 2 * (h * (hq + 2 * hkv) * d + h * hq * d + 3 * h * i)
    layers = a.layers or max(1, min(c["layers"], int((free // 2 - 2 * c["vocab"] * h) // layer_bytes)))
    weights = build(c, layers, device)
    kernels = ("vllm._custom_ops" if vllm_ops else "torch") + (", flash-attn" if flash_attn_varlen_func else ", sdpa")
    if vllm_ops is None:
        print("record_steps.py: vLLM is not installed: these steps run plain PyTorch kernels, so the comparison "
              "is against plain PyTorch, not vLLM's fused kernels (RMSNorm, SiLU-and-mul, rotary)")
    os.makedirs(a.out, exist_ok=True)
    steps = [(t, n, False) for t, n in PREFILL] + [(n, n, True) for n in DECODE]
    for tokens, seqs, decode in steps:
        shape = {"config": c, "seqs": seqs, "decode": decode}
        ids = torch.randint(0, c["vocab"], (tokens,), device=device)
        per = tokens // seqs
        positions = (torch.full((tokens,), DECODE_CONTEXT, device=device) if decode
                     else torch.arange(per, device=device).repeat(seqs))
        cache = None
        if decode:
            kv = [torch.zeros(seqs, DECODE_CONTEXT + 1, hkv, d, dtype=torch.bfloat16, device=device) for _ in "kv"]
            cache = (kv[0], kv[1], torch.full((seqs,), DECODE_CONTEXT, dtype=torch.int32, device=device))
        stem = f"{a.model.replace('/', '_')}-{'decode' if decode else 'prefill'}-t{tokens}-s{seqs}"
        record(os.path.join(a.out, stem + ".pickle"), lambda: forward(weights, ids, positions, shape, cache))
        sidecar = {"format": "headroom-recorded-step/1", "model": a.model, "layers": layers, "tp": 1,
                   "program": "forward", "tokens": tokens, "seqs": seqs, "decode_seqs": seqs if decode else 0,
                   "attention": "flash-attn", "dtype": "bf16", "kernels": kernels,
                   "torch_version": torch.__version__, "device": torch.cuda.get_device_name()}
        with open(os.path.join(a.out, stem + ".step.json"), "w") as f:
            json.dump(sidecar, f, indent=2)
        print(f"recorded {stem} ({layers} of {c['layers']} layers, kernels: {kernels})")


if __name__ == "__main__":
    main()
