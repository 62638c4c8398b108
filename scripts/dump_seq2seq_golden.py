#!/usr/bin/python3
"""PyTorch reference values for the encoder and encoder-decoder pieces (tests/test_attention.cpp).

Run with Debian's interpreter, which has python3-torch:  /usr/bin/python3 scripts/dump_seq2seq_golden.py
Writes tests/golden/<case>.json in the format of scripts/dump_golden.py.
"""
import math

import torch

from dump_golden import backward, dump, leaf


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



def rand_linear(i, o, bias=True):
    lin = torch.nn.Linear(i, o, bias=bias)
    with torch.no_grad():
        lin.weight.copy_(0.3 * torch.randn(o, i))
        if bias:
            lin.bias.copy_(0.05 * torch.randn(o))
    return lin


class LN(torch.nn.Module):
    """LayerNorm with gain and bias; bias=False: the gain alone (model.norm.bias false)."""

    def __init__(self, C, eps, bias=True):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(C))
        self.bias = torch.nn.Parameter(0.1 * torch.randn(C)) if bias else None

    def forward(self, x):
        return torch.nn.functional.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)


class RMS(torch.nn.Module):
    """T5's norm (T5LayerNorm in Hugging Face's modeling_t5.py): x / sqrt(mean(x^2) + eps) * g, no
    mean, no bias; torch 1.13 has no nn.RMSNorm."""

    def __init__(self, C, eps, bias=False):
        super().__init__()
        self.eps, self.bias = eps, None
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(C))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attn(torch.nn.Module):
    def __init__(self, C, NH, bias=True):
        super().__init__()
        self.NH = NH
        self.q, self.k, self.v, self.out = (rand_linear(C, C, bias) for _ in range(4))

    def forward(self, x, mem, B, Tq, Tk, key_mask, causal):  # x (B*Tq, C), mem (B*Tk, C)
        o = sdpa(heads(self.q(x), B, Tq, self.NH), heads(self.k(mem), B, Tk, self.NH),
                 heads(self.v(mem), B, Tk, self.NH), key_mask, causal)
        return self.out(merge(o))


class Sub(torch.nn.Module):
    """One sub-layer f with its LayerNorm in a placement: pre x + f(LN(x)), post LN(x + f(x)),
    deepnorm LN(alpha x + f(x))."""

    def __init__(self, C, eps, placement, alpha=1.0, norm=LN, norm_bias=True):
        super().__init__()
        self.norm, self.placement, self.alpha = norm(C, eps, norm_bias), placement, alpha

    def forward(self, x, f):
        if self.placement == "pre":
            return x + f(self.norm(x))
        return self.norm(self.alpha * x + f(x))


class Ffn(torch.nn.Module):
    def __init__(self, C, F, bias=True):
        super().__init__()
        self.fc1, self.fc2 = rand_linear(C, F, bias), rand_linear(F, C, bias)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


class Stack(torch.nn.Module):
    """Embeddings (optionally normalized), blocks of self-attention (+ cross-attention) and
    feed-forward, a final norm in pre placement."""

    def __init__(self, prefix, V, T, C, NH, F, L, eps, placement, embed_norm, cross, alpha=1.0, norm=LN,
                 norm_bias=True, bias=True):
        super().__init__()
        self.prefix, self.cross, self.NH = prefix, cross, NH
        self.tok = torch.nn.Parameter(0.5 * torch.randn(V, C))
        self.pos = torch.nn.Parameter(0.5 * torch.randn(T, C))
        self.emb_norm = norm(C, eps, norm_bias) if embed_norm else None
        self.layers = torch.nn.ModuleList()
        for _ in range(L):
            layer = torch.nn.ModuleDict({"attn_norm": Sub(C, eps, placement, alpha, norm, norm_bias)})
            if cross:
                layer["cross_norm"] = Sub(C, eps, placement, alpha, norm, norm_bias)
            layer["ffn_norm"] = Sub(C, eps, placement, alpha, norm, norm_bias)
            layer["attn"] = Attn(C, NH, bias)
            if cross:
                layer["cross"] = Attn(C, NH, bias)
            layer["ffn"] = Ffn(C, F, bias)
            self.layers.append(layer)
        self.final = norm(C, eps, norm_bias) if placement == "pre" else None

    def forward(self, tokens, mask, causal, memory=None, mem_mask=None):
        B, T = tokens.shape
        x = (self.tok[tokens] + self.pos[:T]).reshape(B * T, -1)
        if self.emb_norm is not None:
            x = self.emb_norm(x)
        S = None if memory is None else mem_mask.shape[1]
        for l in self.layers:
            x = l["attn_norm"](x, lambda h: l["attn"](h, h, B, T, T, mask, causal))
            if self.cross:
                x = l["cross_norm"](x, lambda h: l["cross"](h, memory, B, T, S, mem_mask, False))
            x = l["ffn_norm"](x, l["ffn"])
        return self.final(x) if self.final is not None else x

    def named(self):
        """normtool's parameters: "layer:name" -> tensor."""
        p, L = self.prefix, len(self.layers)
        out = {f"0:{p}tok_emb.weight": self.tok, f"0:{p}pos_emb.weight": self.pos}
        if self.emb_norm is not None:
            out.update({f"0:{p}emb_norm.weight": self.emb_norm.weight, f"0:{p}emb_norm.bias": self.emb_norm.bias})
        for i, l in enumerate(self.layers):
            for key in l.keys():
                mod = l[key]
                if isinstance(mod, Sub):
                    out.update({f"{i}:{p}{key}.weight": mod.norm.weight, f"{i}:{p}{key}.bias": mod.norm.bias})
                elif isinstance(mod, Attn):
                    for n in ("q", "k", "v", "out"):
                        lin = getattr(mod, n)
                        out.update({f"{i}:{p}{key}.{n}.weight": lin.weight, f"{i}:{p}{key}.{n}.bias": lin.bias})
                else:
                    for n in ("fc1", "fc2"):
                        lin = getattr(mod, n)
                        out.update({f"{i}:{p}{key}.{n}.weight": lin.weight, f"{i}:{p}{key}.{n}.bias": lin.bias})
        if self.final is not None:
            out.update({f"{L}:{p}final_norm.weight": self.final.weight, f"{L}:{p}final_norm.bias": self.final.bias})
        return {k: t for k, t in out.items() if t is not None}  # no bias: no parameter (model.bias, model.norm.bias)


def dump_model(name, config, named, logits, loss, **batch):
    named = {k: t for k, t in named.items() if t is not None}
    loss.backward()
    tensors = dict(batch, logits=logits, loss=loss.reshape(1))
    for key, t in named.items():
        tensors["p:" + key] = t
        tensors["g:" + key] = t.grad
    dump(name, config, **tensors)


def encoder_model():
    """BERT-style masked LM: Post-LN with an embedding norm (eps 1e-12), bidirectional attention whose
    keys are the real tokens; loss over the chosen positions only (row 1 padded after 4 tokens)."""
    B, T, C, NH, F, L, eps = 2, 6, 4, 2, 8, 2, 1e-12
    enc = Stack("", 256, T, C, NH, F, L, eps, "post", True, False)
    head = rand_linear(C, 256)
    tokens = torch.randint(4, 256, (B, T))
    real = torch.ones(B, T)
    real[1, 4:] = 0
    tokens[1, 4:] = 0
    targets = torch.randint(4, 256, (B, T))
    chosen = torch.tensor([[1, 0, 0, 1, 0, 1], [0, 1, 0, 1, 0, 0]], dtype=torch.float32)
    logits = head(enc(tokens, real, False))
    loss = (torch.nn.functional.cross_entropy(logits, targets.flatten(), reduction="none") * chosen.flatten()).sum() / chosen.sum()
    named = enc.named()
    named.update({f"{L}:head.weight": head.weight, f"{L}:head.bias": head.bias})
    dump_model("model_encoder", {"B": B, "T": T, "d_model": C, "n_heads": NH, "d_ff": F, "n_layers": L, "eps": eps},
               named, logits, loss, tokens=tokens.float(), real=real, targets=targets.float(), chosen=chosen)


def encdec_model():
    """Encoder-decoder, Pre-LN with final norms: source (B, S) with padding keys, decoder input BOS +
    target with its mask; cross-attention from the decoder to the encoder's real source positions."""
    B, S, T, C, NH, F, N, M, eps, max_len = 2, 5, 4, 4, 2, 8, 2, 1, 1e-5, 6
    enc = Stack("enc.", 256, max_len, C, NH, F, N, eps, "pre", False, False)
    dec = Stack("dec.", 256, max_len + 1, C, NH, F, M, eps, "pre", False, True)
    head = rand_linear(C, 256)
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
    memory = enc(src, src_mask, False)
    logits = head(dec(tokens, mask, True, memory, src_mask))
    loss = (torch.nn.functional.cross_entropy(logits, targets.flatten(), reduction="none") * mask.flatten()).sum() / mask.sum()
    named = enc.named()
    named.update(dec.named())
    named.update({f"{M}:head.weight": head.weight, f"{M}:head.bias": head.bias})
    dump_model("model_encdec", {"B": B, "S": S, "T": T, "d_model": C, "n_heads": NH, "d_ff": F, "n_layers": N,
                                "n_dec_layers": M, "eps": eps, "max_len": max_len},
               named, logits, loss, src=src.float(), src_mask=src_mask, tokens=tokens.float(), mask=mask,
               targets=targets.float())


def encoder_nobias_model():
    """The encoder of encoder_model without any bias: no Linear bias (model.bias false) and LayerNorm
    with its gain alone (model.norm.bias false), eps 1e-5."""
    B, T, C, NH, F, L, eps = 2, 6, 4, 2, 8, 2, 1e-5
    enc = Stack("", 256, T, C, NH, F, L, eps, "post", True, False, norm_bias=False, bias=False)
    head = rand_linear(C, 256, False)
    tokens = torch.randint(4, 256, (B, T))
    real = torch.ones(B, T)
    real[1, 4:] = 0
    tokens[1, 4:] = 0
    targets = torch.randint(4, 256, (B, T))
    chosen = torch.tensor([[1, 0, 1, 1, 0, 1], [0, 1, 1, 1, 0, 0]], dtype=torch.float32)
    logits = head(enc(tokens, real, False))
    loss = (torch.nn.functional.cross_entropy(logits, targets.flatten(), reduction="none") * chosen.flatten()).sum() / chosen.sum()
    named = enc.named()
    named.update({f"{L}:head.weight": head.weight})
    dump_model("model_encoder_nobias", {"B": B, "T": T, "d_model": C, "n_heads": NH, "d_ff": F, "n_layers": L,
                                        "eps": eps}, named, logits, loss, tokens=tokens.float(), real=real,
               targets=targets.float(), chosen=chosen)


def encdec_t5_model():
    """Encoder-decoder normalized as T5 (Hugging Face modeling_t5.py): T5LayerNorm (RMS, no mean, no
    bias, eps 1e-6) in Pre-LN, a final norm in both stacks, no Linear bias anywhere (head included)."""
    B, S, T, C, NH, F, N, M, eps, max_len = 2, 5, 4, 4, 2, 8, 2, 2, 1e-6, 6
    enc = Stack("enc.", 256, max_len, C, NH, F, N, eps, "pre", False, False, norm=RMS, norm_bias=False, bias=False)
    dec = Stack("dec.", 256, max_len + 1, C, NH, F, M, eps, "pre", False, True, norm=RMS, norm_bias=False, bias=False)
    head = rand_linear(C, 256, False)
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
    memory = enc(src, src_mask, False)
    logits = head(dec(tokens, mask, True, memory, src_mask))
    loss = (torch.nn.functional.cross_entropy(logits, targets.flatten(), reduction="none") * mask.flatten()).sum() / mask.sum()
    named = enc.named()
    named.update(dec.named())
    named.update({f"{M}:head.weight": head.weight})
    dump_model("model_encdec_t5", {"B": B, "S": S, "T": T, "d_model": C, "n_heads": NH, "d_ff": F, "n_layers": N,
                                   "n_dec_layers": M, "eps": eps, "max_len": max_len},
               named, logits, loss, src=src.float(), src_mask=src_mask, tokens=tokens.float(), mask=mask,
               targets=targets.float())


if __name__ == "__main__":
    torch.manual_seed(20261123)
    # new cases go last: the earlier ones keep their draws and their files
    for case in (attention_masked, encoder_model, encdec_model, encoder_nobias_model, encdec_t5_model):
        case()
