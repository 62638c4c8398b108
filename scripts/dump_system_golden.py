#!/usr/bin/python3
"""PyTorch reference values for the parts of the seed articles' systems that change what a norm sees
(tests/test_system_parts.cpp): rotary position embedding and no position table (model.position), gated
feed-forwards (model.ffn glu: SwiGLU, GeGLU), tied input and output embeddings, Gemma's (1 + w) norm gain
(model.norm.unit_offset), its token embedding times sqrt(d_model) (model.embed_scale) and Gemma 2's soft caps
of the attention scores and output logits (model.attn_softcap, model.logit_softcap; caps small enough here that
tanh bends); OLMo 2's reordered norm x + norm(f(x)) (model.norm.placement reordered) and its query and key norms
over all of q's and k's features (model.qk_norm_scope all).

Run with Debian's interpreter, which has python3-torch:  /usr/bin/python3 scripts/dump_system_golden.py
Writes tests/golden/<case>.json in the format of scripts/dump_golden.py: the batch, the logits, the loss and
every parameter with its gradient. The models are the PyTorch twin's (scripts/torch_twin.py), written from
the formulas independently of normtool's C++ code, with random weights; each case seeds its own draws, so a
new case leaves the files of the others as they are. A case's config holds the model keys it sets
("model": {...}), which the test gives normtool as overrides.
"""
import torch

from dump_golden import dump_case, fill, named, twin_model
from torch_twin import loss_fn

SIZES = {"d_model": 8, "n_heads": 2, "d_ff": 12}  # d_head 4: two frequencies per head


def std_mean(name):
    """Random parameters: gains near 1, biases small, weights large enough that positions matter."""
    if "norm" in name:
        return (0.1, 1.0) if name.endswith("weight") else (0.1, 0.0)
    return (0.5, 0.0) if "emb" in name else (0.4, 0.0) if name.endswith("weight") else (0.05, 0.0)


def offset_std_mean(name):
    """As std_mean, the (1 + w) gains' w near 0 (model.norm.unit_offset)."""
    return (0.1, 0.0) if "norm" in name and name.endswith("weight") else std_mean(name)


def decoder_case(name, seed, model_keys, T=6, stds=std_mean):
    """The decoder-only LM (causal, every position real) of `model_keys` (SIZES, 2 blocks unless given)."""
    torch.manual_seed(seed)
    B = 2
    keys = dict(SIZES, n_layers=2, **model_keys)
    model = twin_model({"model": keys, "data": {"seq_len": T}})
    fill(model, named(model).items(), stds)
    tokens, targets = torch.randint(0, 256, (B, T)), torch.randint(0, 256, (B, T))
    real = torch.ones(B, T)
    logits = model(tokens, real)
    dump_case(name, {"B": B, "T": T, "model": keys}, model, logits, loss_fn(logits, targets, real)[0],
              tokens=tokens.float(), targets=targets.float())


def encdec_case(name, seed, model_keys, stds=std_mean):
    """Encoder-decoder with padded sources and targets: rotary in both stacks' self-attention, none in
    cross-attention."""
    torch.manual_seed(seed)
    B, S, T, max_len = 2, 5, 4, 6
    keys = dict(SIZES, arch="encoder-decoder", n_layers=1, n_dec_layers=2, **model_keys)
    model = twin_model({"model": keys, "data": {"dataset": "synthetic-seq2seq", "max_len": max_len}})
    fill(model, named(model).items(), stds)
    src = torch.randint(4, 256, (B, S))
    src_mask = torch.ones(B, S)
    src_mask[1, 3:], src[1, 3:] = 0, 0
    tokens = torch.randint(4, 256, (B, T))
    tokens[:, 0] = 2
    mask = torch.ones(B, T)
    mask[0, 3:], tokens[0, 3:] = 0, 0
    targets = torch.randint(4, 256, (B, T)) * mask.long()
    logits = model(tokens, mask, src, src_mask)
    dump_case(name, {"B": B, "S": S, "T": T, "max_len": max_len, "model": keys}, model, logits,
              loss_fn(logits, targets, mask)[0], src=src.float(), src_mask=src_mask, tokens=tokens.float(),
              mask=mask, targets=targets.float())


CASES = [  # new cases go last
    lambda: decoder_case("model_rotary", 20261201,
                         {"position": "rotary", "bias": False, "norm": {"type": "rmsnorm"}}),
    lambda: decoder_case("model_position_none", 20261202, {"position": "none"}),
    lambda: encdec_case("model_rotary_encdec_qk_norm", 20261203,
                        {"position": "rotary", "rotary_base": 500000.0, "qk_norm": True}),
    lambda: decoder_case("model_swiglu", 20261204,
                         {"ffn": "glu", "activation": "silu", "bias": False, "norm": {"type": "rmsnorm"}}),
    lambda: decoder_case("model_geglu_post", 20261205,
                         {"ffn": "glu", "activation": "gelu", "norm": {"placement": "post"}}),
    lambda: decoder_case("model_tied", 20261206, {"tie_embeddings": True}),
    lambda: decoder_case("model_gemma2", 20261207,
                         {"position": "rotary", "bias": False, "ffn": "glu", "activation": "gelu", "tie_embeddings": True,
                          "embed_scale": True, "attn_softcap": 2.0, "logit_softcap": 3.0,
                          "norm": {"type": "rmsnorm", "placement": "peri", "unit_offset": True}},
                         stds=offset_std_mean),
    lambda: encdec_case("model_unit_offset_encdec", 20261208,
                        {"qk_norm": True, "embed_scale": True, "attn_softcap": 1.5, "logit_softcap": 4.0,
                         "norm": {"unit_offset": True}}, stds=offset_std_mean),
    lambda: decoder_case("model_olmo2", 20261209,
                         {"position": "rotary", "rotary_base": 500000.0, "bias": False, "ffn": "glu",
                          "activation": "silu", "qk_norm": True, "qk_norm_scope": "all",
                          "norm": {"type": "rmsnorm", "placement": "reordered"}}),
    lambda: encdec_case("model_reordered_encdec", 20261210, {"qk_norm": True, "qk_norm_scope": "all",
                                                             "norm": {"placement": "reordered"}}),
]

if __name__ == "__main__":
    for case in CASES:
        case()
