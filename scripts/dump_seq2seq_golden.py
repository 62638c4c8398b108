#!/usr/bin/python3
"""PyTorch reference values for the encoder and encoder-decoder pieces (tests/test_attention.cpp).

Run with Debian's interpreter, which has python3-torch:  /usr/bin/python3 scripts/dump_seq2seq_golden.py
Writes tests/golden/<case>.json in the format of scripts/dump_golden.py. The models are the PyTorch
twin's (scripts/torch_twin.py: Transformer as the encoder, EncoderDecoder), with random weights.
"""
import math

import torch

from dump_golden import backward, dump, dump_case, fill, leaf, named, twin_model
from torch_twin import loss_fn


def sdpa(q, k, v, key_mask, causal):
    """q (B, NH, Tq, hs), k, v (B, NH, Tk, hs), key_mask (B, Tk) 1 = real key."""
    att = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    keep = key_mask[:, None, None, :].bool().expand_as(att)
    if causal:
        keep = keep & torch.tril(torch.ones(att.shape[-2:], dtype=torch.bool))
    return att.masked_fill(~keep, float("-inf")).softmax(-1) @ v


def heads(t, B, T, NH):  # (B*T, NH*hs) -> (B, NH, T, hs)
    return t.view(B, T, NH, -1).transpose(1, 2)


def merge(t):  # (B, NH, T, hs) -> (B*T, NH*hs)
    B, NH, T, hs = t.shape
    return t.transpose(1, 2).reshape(B * T, NH * hs)


def attention_masked():
    """Bidirectional self-attention over qkv (B*T, 3C) with padding keys, and cross-attention from
    q (B*Tq, C) to kv (B*Tk, 2C) with padding keys; T = 33 and Tk = 34 cross the kernel's row blocks."""
    B, T, Tq, Tk, C, NH = 2, 33, 5, 34, 4, 2
    qkv = leaf(B * T, 3 * C)
    mask = torch.ones(B, T)
    mask[1, 30:] = 0
    q, k, v = qkv.split(C, dim=1)
    o = merge(sdpa(heads(q, B, T, NH), heads(k, B, T, NH), heads(v, B, T, NH), mask, False))
    dout = backward(o)
    xq, kv = leaf(B * Tq, C), leaf(B * Tk, 2 * C)
    xmask = torch.ones(B, Tk)
    xmask[0, 25:] = 0
    xk, xv = kv.split(C, dim=1)
    xo = merge(sdpa(heads(xq, B, Tq, NH), heads(xk, B, Tk, NH), heads(xv, B, Tk, NH), xmask, False))
    xdout = backward(xo)
    dump("attention_masked", {"B": B, "T": T, "Tq": Tq, "Tk": Tk, "C": C, "NH": NH},
         qkv=qkv, mask=mask, dout=dout, o=o, dqkv=qkv.grad,
         q=xq, kv=kv, xmask=xmask, xdout=xdout, xo=xo, dq=xq.grad, dkv=kv.grad)


def std_mean(name):
    """Random parameters: gains near 1, biases small."""
    if "norm" in name:
        return (0.1, 1.0) if name.endswith("weight") else (0.1, 0.0)
    return (0.5, 0.0) if "emb" in name else (0.3, 0.0) if name.endswith("weight") else (0.05, 0.0)


def model_of(model, norm, **data):
    """The twin's model with random weights (drawn after each Linear's own init, as the files were)."""
    m = twin_model({"model": dict(model, d_model=4, n_heads=2, d_ff=8, norm=norm), "data": data})
    fill(m, named(m).items(), std_mean, linear_init=True)
    return m


def encoder_model():
    """BERT-style masked LM: Post-LN with an embedding norm (eps 1e-12), bidirectional attention whose
    keys are the real tokens; loss over the chosen positions only (row 1 padded after 4 tokens)."""
    B, T, C, NH, F, L, eps = 2, 6, 4, 2, 8, 2, 1e-12
    model = model_of({"arch": "encoder", "n_layers": L, "embed_norm": True},
                     {"type": "layernorm", "placement": "post", "eps": eps}, seq_len=T)
    tokens = torch.randint(4, 256, (B, T))
    real = torch.ones(B, T)
    real[1, 4:] = 0
    tokens[1, 4:] = 0
    targets = torch.randint(4, 256, (B, T))
    chosen = torch.tensor([[1, 0, 0, 1, 0, 1], [0, 1, 0, 1, 0, 0]], dtype=torch.float32)
    logits = model(tokens, real)
    dump_case("model_encoder", {"B": B, "T": T, "d_model": C, "n_heads": NH, "d_ff": F, "n_layers": L, "eps": eps},
              model, logits, loss_fn(logits, targets, chosen)[0], tokens=tokens.float(), real=real,
              targets=targets.float(), chosen=chosen)


def encdec_model():
    """Encoder-decoder, Pre-LN with final norms: source (B, S) with padding keys, decoder input BOS +
    target with its mask; cross-attention from the decoder to the encoder's real source positions."""
    B, S, T, C, NH, F, N, M, eps, max_len = 2, 5, 4, 4, 2, 8, 2, 1, 1e-5, 6
    model = model_of({"arch": "encoder-decoder", "n_layers": N, "n_dec_layers": M},
                     {"type": "layernorm", "placement": "pre", "eps": eps}, dataset="synthetic-seq2seq",
                     max_len=max_len)
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
    dump_case("model_encdec", {"B": B, "S": S, "T": T, "d_model": C, "n_heads": NH, "d_ff": F, "n_layers": N,
                               "n_dec_layers": M, "eps": eps, "max_len": max_len},
              model, logits, loss_fn(logits, targets, mask)[0], src=src.float(), src_mask=src_mask,
              tokens=tokens.float(), mask=mask, targets=targets.float())


def encoder_nobias_model():
    """The encoder of encoder_model without any bias: no Linear bias (model.bias false) and LayerNorm
    with its gain alone (model.norm.bias false), eps 1e-5."""
    B, T, C, NH, F, L, eps = 2, 6, 4, 2, 8, 2, 1e-5
    model = model_of({"arch": "encoder", "n_layers": L, "embed_norm": True, "bias": False},
                     {"type": "layernorm", "placement": "post", "eps": eps, "bias": False}, seq_len=T)
    tokens = torch.randint(4, 256, (B, T))
    real = torch.ones(B, T)
    real[1, 4:] = 0
    tokens[1, 4:] = 0
    targets = torch.randint(4, 256, (B, T))
    chosen = torch.tensor([[1, 0, 1, 1, 0, 1], [0, 1, 1, 1, 0, 0]], dtype=torch.float32)
    logits = model(tokens, real)
    dump_case("model_encoder_nobias", {"B": B, "T": T, "d_model": C, "n_heads": NH, "d_ff": F, "n_layers": L,
                                       "eps": eps}, model, logits, loss_fn(logits, targets, chosen)[0],
              tokens=tokens.float(), real=real, targets=targets.float(), chosen=chosen)


def encdec_t5_model():
    """Encoder-decoder normalized as T5 (Hugging Face modeling_t5.py): T5LayerNorm (RMS, no mean, no
    bias, eps 1e-6) in Pre-LN, a final norm in both stacks, no Linear bias anywhere (head included)."""
    B, S, T, C, NH, F, N, M, eps, max_len = 2, 5, 4, 4, 2, 8, 2, 2, 1e-6, 6
    model = model_of({"arch": "encoder-decoder", "n_layers": N, "n_dec_layers": M, "bias": False},
                     {"type": "rmsnorm", "placement": "pre", "eps": eps}, dataset="synthetic-seq2seq", max_len=max_len)
    src = torch.randint(4, 256, (B, S))
    src_mask = torch.ones(B, S)
    src_mask[0, 4:] = 0
    src[0, 4:] = 0
    tokens = torch.randint(4, 256, (B, T))
    tokens[:, 0] = 2
    mask = torch.ones(B, T)
    mask[1, 2:] = 0
    tokens[1, 2:] = 0
    targets = torch.randint(4, 256, (B, T)) * mask.long()
    logits = model(tokens, mask, src, src_mask)
    dump_case("model_encdec_t5", {"B": B, "S": S, "T": T, "d_model": C, "n_heads": NH, "d_ff": F, "n_layers": N,
                                  "n_dec_layers": M, "eps": eps, "max_len": max_len},
              model, logits, loss_fn(logits, targets, mask)[0], src=src.float(), src_mask=src_mask,
              tokens=tokens.float(), mask=mask, targets=targets.float())


def encdec_qk_norm_model():
    """encdec_model with model.qk_norm: LayerNorm over each head's queries and keys in every attention (the
    encoder's, the decoder's causal self-attention and its cross-attention), gain and bias shared by the heads."""
    B, S, T, C, NH, F, N, M, eps, max_len = 2, 5, 4, 4, 2, 8, 2, 1, 1e-5, 6
    model = model_of({"arch": "encoder-decoder", "n_layers": N, "n_dec_layers": M, "qk_norm": True},
                     {"type": "layernorm", "placement": "pre", "eps": eps}, dataset="synthetic-seq2seq",
                     max_len=max_len)
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
    dump_case("model_encdec_qk_norm", {"B": B, "S": S, "T": T, "d_model": C, "n_heads": NH, "d_ff": F,
                                       "n_layers": N, "n_dec_layers": M, "eps": eps, "max_len": max_len},
              model, logits, loss_fn(logits, targets, mask)[0], src=src.float(), src_mask=src_mask,
              tokens=tokens.float(), mask=mask, targets=targets.float())


if __name__ == "__main__":
    torch.manual_seed(20261123)
    # new cases go last: the earlier ones keep their draws and their files
    for case in (attention_masked, encoder_model, encdec_model, encoder_nobias_model, encdec_t5_model,
                 encdec_qk_norm_model):
        case()
