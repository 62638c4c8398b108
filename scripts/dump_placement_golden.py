#!/usr/bin/python3
"""PyTorch reference values for the placements after the seed papers (tests/test_peri_depth.cpp):
Peri-LN (model.norm.placement peri) and LayerNorm Scaling (model.norm.depth_scaling).

Run with Debian's interpreter, which has python3-torch:  /usr/bin/python3 scripts/dump_placement_golden.py
Writes tests/golden/<case>.json in the format of scripts/dump_golden.py. The models are the PyTorch
twin's (scripts/torch_twin.py), with random weights; each case seeds its own draws, so a new case
leaves the files of the others as they are.
"""
import torch

from dump_golden import dump_case, fill, named, twin_model
from torch_twin import loss_fn


def std_mean(name):
    """Random parameters: gains near 1 (peri's output norms too), biases small."""
    if "norm" in name:
        return (0.1, 1.0) if name.endswith("weight") else (0.1, 0.0)
    return (0.5, 0.0) if "emb" in name else (0.3, 0.0) if name.endswith("weight") else (0.05, 0.0)


def model_of(model, norm, **data):
    m = twin_model({"model": dict(model, d_model=4, n_heads=2, d_ff=8, norm=norm), "data": data})
    fill(m, named(m).items(), std_mean)
    return m


def decoder_case(name, seed, norm, L, bias=True):
    """The decoder-only LM (causal, every position real) of `norm` and L blocks."""
    torch.manual_seed(seed)
    B, T = 2, 5
    model = model_of({"arch": "transformer", "n_layers": L, "bias": bias}, norm, seq_len=T)
    tokens, targets = torch.randint(0, 256, (B, T)), torch.randint(0, 256, (B, T))
    real = torch.ones(B, T)
    logits = model(tokens, real)
    dump_case(name, {"B": B, "T": T, "d_model": 4, "n_heads": 2, "d_ff": 8, "n_layers": L, "norm": norm,
                     "bias": bias}, model, logits, loss_fn(logits, targets, real)[0], tokens=tokens.float(),
              targets=targets.float())


def peri_encdec():
    """Encoder-decoder in Peri-LN with LayerNorm: output norms after self-attention, cross-attention (padded
    source keys) and feed-forward in both stacks, final norms."""
    torch.manual_seed(20261126)
    B, S, T, N, M, max_len = 2, 5, 4, 2, 2, 6
    norm = {"type": "layernorm", "placement": "peri"}
    model = model_of({"arch": "encoder-decoder", "n_layers": N, "n_dec_layers": M}, norm,
                     dataset="synthetic-seq2seq", max_len=max_len)
    src = torch.randint(4, 256, (B, S))
    src_mask = torch.ones(B, S)
    src_mask[1, 3:] = 0
    src[1, 3:] = 0
    tokens = torch.randint(4, 256, (B, T))
    tokens[:, 0] = 2
    mask = torch.ones(B, T)
    mask[0, 3:] = 0
    tokens[0, 3:] = 0
    targets = torch.randint(4, 256, (B, T)) * mask.long()
    logits = model(tokens, mask, src, src_mask)
    dump_case("model_peri_encdec", {"B": B, "S": S, "T": T, "d_model": 4, "n_heads": 2, "d_ff": 8, "n_layers": N,
                                    "n_dec_layers": M, "max_len": max_len, "norm": norm},
              model, logits, loss_fn(logits, targets, mask)[0], src=src.float(), src_mask=src_mask,
              tokens=tokens.float(), mask=mask, targets=targets.float())


def depth_scaling_pre():
    """Pre-LN RMSNorm with LayerNorm Scaling over 3 blocks: factors 1, 1/sqrt(2), 1/sqrt(3)."""
    decoder_case("model_depth_scaling_pre", 20261127, {"type": "rmsnorm", "depth_scaling": True}, 3)


def depth_scaling_peri():
    """Peri-LN LayerNorm with LayerNorm Scaling (input norms only) over 3 blocks, no Linear bias."""
    decoder_case("model_depth_scaling_peri", 20261128,
                 {"type": "layernorm", "placement": "peri", "depth_scaling": True}, 3, bias=False)


if __name__ == "__main__":
    for case in (peri_encdec, depth_scaling_pre, depth_scaling_peri):
        case()
