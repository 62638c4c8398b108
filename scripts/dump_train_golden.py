#!/usr/bin/python3
"""The first 10 training losses of tiny fixed-weight models, from PyTorch, for
tests/test_train_golden.cpp (the llm.c check): same weights, same batches, same optimizer.

Run with Debian's interpreter:  /usr/bin/python3 scripts/dump_train_golden.py
Writes tests/golden/train_<case>.json. The models are written here from the spec's formulas
(pre: x + f(norm(x)); post: norm(x + f(x)); deepnorm: norm(alpha x + f(x))), independently
of normtool's C++ code. Parameter names and layer numbers follow normtool's layers.jsonl.
"""
import json
import math
import pathlib

import torch
import torch.nn.functional as F

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden"
STEPS = 10


class Norm(torch.nn.Module):
    """layernorm | rmsnorm | batchnorm (per feature over the real tokens) | none."""

    def __init__(self, kind, C, eps=1e-5, momentum=0.1):
        super().__init__()
        self.kind, self.eps, self.momentum = kind, eps, momentum
        if kind != "none":
            self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(C))
        if kind in ("layernorm", "batchnorm"):
            self.bias = torch.nn.Parameter(0.1 * torch.randn(C))
        if kind == "batchnorm":
            self.register_buffer("running_mean", torch.zeros(C))
            self.register_buffer("running_var", torch.ones(C))

    def forward(self, x, mask):  # x (N, C); mask (N) of 0/1
        if self.kind == "none":
            return x
        if self.kind == "layernorm":
            return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)
        if self.kind == "rmsnorm":
            return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        m = mask[:, None]
        count = m.sum()
        mean = (x * m).sum(0) / count
        var = (((x - mean) ** 2) * m).sum(0) / count
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * var * count / (count - 1))
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


def linear(i, o):
    lin = torch.nn.Linear(i, o)
    with torch.no_grad():
        lin.weight.copy_(0.2 * torch.randn(o, i))
        lin.bias.copy_(0.05 * torch.randn(o))
    return lin


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        C, kind = c["d_model"], c["norm"]
        self.c = c
        self.attn_norm = Norm("layernorm" if kind == "deepnorm" else kind, C)
        self.q, self.k, self.v, self.out = (linear(C, C) for _ in range(4))
        self.ffn_norm = Norm("layernorm" if kind == "deepnorm" else kind, C)
        self.fc1, self.fc2 = linear(C, c["d_ff"]), linear(c["d_ff"], C)

    def attention(self, x, B, T):
        NH = self.c["n_heads"]
        hs = x.shape[-1] // NH
        heads = lambda t: t.view(B, T, NH, hs).transpose(1, 2)
        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
        att = att.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf")).softmax(-1)
        return self.out((att @ v).transpose(1, 2).reshape(B * T, -1))

    def ffn(self, x):
        return self.fc2(F.gelu(self.fc1(x)))

    def forward(self, x, mask, B, T):
        kind, placement = self.c["norm"], self.c["placement"]
        attn = lambda h: self.attention(h, B, T)
        if kind == "deepnorm":
            a = self.c["alpha"]
            x = self.attn_norm(a * x + attn(x), mask)
            return self.ffn_norm(a * x + self.ffn(x), mask)
        if placement == "post":
            x = self.attn_norm(x + attn(x), mask)
            return self.ffn_norm(x + self.ffn(x), mask)
        x = x + attn(self.attn_norm(x, mask))
        return x + self.ffn(self.ffn_norm(x, mask))


class Transformer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        C, V, T, L = c["d_model"], 256, c["seq_len"], c["n_layers"]
        self.tok_emb = torch.nn.Parameter(0.3 * torch.randn(V, C))
        self.pos_emb = torch.nn.Parameter(0.3 * torch.randn(T, C))
        self.blocks = torch.nn.ModuleList(Block(c) for _ in range(L))
        self.final_norm = Norm(c["norm"], C) if c["placement"] == "pre" and c["norm"] != "deepnorm" else None
        self.head = linear(C, V)

    def forward(self, tokens, mask):
        B, T = tokens.shape
        x = (self.tok_emb[tokens] + self.pos_emb[:T]).reshape(B * T, -1)
        for b in self.blocks:
            x = b(x, mask, B, T)
        if self.final_norm is not None:
            x = self.final_norm(x, mask)
        return self.head(x)

    def named(self):
        """normtool's names: (layer, param) -> tensor."""
        L = len(self.blocks)
        out = {(0, "tok_emb.weight"): self.tok_emb, (0, "pos_emb.weight"): self.pos_emb}
        for l, b in enumerate(self.blocks):
            for mod, name in ((b.attn_norm, "attn_norm"), (b.ffn_norm, "ffn_norm")):
                for p in ("weight", "bias"):
                    if hasattr(mod, p):
                        out[(l, f"{name}.{p}")] = getattr(mod, p)
            for mod, name in ((b.q, "attn.q"), (b.k, "attn.k"), (b.v, "attn.v"), (b.out, "attn.out"),
                              (b.fc1, "ffn.fc1"), (b.fc2, "ffn.fc2")):
                out[(l, f"{name}.weight")], out[(l, f"{name}.bias")] = mod.weight, mod.bias
        if self.final_norm is not None:
            for p in ("weight", "bias"):
                if hasattr(self.final_norm, p):
                    out[(L, f"final_norm.{p}")] = getattr(self.final_norm, p)
        out[(L, "head.weight")], out[(L, "head.bias")] = self.head.weight, self.head.bias
        return out


class Mlp(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        dims = [c["inputs"]] + [c["hidden"]] * c["n_layers"]
        self.linears = torch.nn.ModuleList(linear(i, o) for i, o in zip(dims, dims[1:]))
        self.norms = torch.nn.ModuleList(Norm(c["norm"], c["hidden"]) for _ in range(c["n_layers"]))
        self.out = linear(c["hidden"], c["classes"])

    def forward(self, x, mask):
        for lin, norm in zip(self.linears, self.norms):
            x = F.relu(norm(lin(x), mask))
        return self.out(x)

    def named(self):
        out = {}
        for l, (lin, norm) in enumerate(zip(self.linears, self.norms)):
            out[(l, "linear.weight")], out[(l, "linear.bias")] = lin.weight, lin.bias
            for p in ("weight", "bias"):
                if hasattr(norm, p):
                    out[(l, f"norm.{p}")] = getattr(norm, p)
        out[(len(self.linears), "out.weight")], out[(len(self.linears), "out.bias")] = self.out.weight, self.out.bias
        return out


def exact(t):
    """float32 values as the shortest decimals that read back to the same float32."""
    return [float(f"{v:.9g}") for v in t.detach().flatten().tolist()]


def lr_at(t, c):
    w = c.get("warmup_steps", 0)
    return c["lr"] * t / w if t < w else c["lr"]


def run_case(seed, name, c):
    torch.manual_seed(seed)
    model = Transformer(c) if c["arch"] == "transformer" else Mlp(c)
    params = model.named()
    weights = {f"{l}.{n}": exact(p) for (l, n), p in params.items()}
    if c["optimizer"] == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=c["lr"], momentum=0.9, weight_decay=c.get("weight_decay", 0))
    elif c["optimizer"] == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=c["lr"], weight_decay=c.get("weight_decay", 0))
    else:
        opt = torch.optim.Adam(model.parameters(), lr=c["lr"])
    B = c["batch_size"]
    batches, losses = [], []
    for t in range(STEPS):
        if c["arch"] == "transformer":
            T = c["seq_len"]
            tokens = torch.randint(0, 256, (B, T))
            targets = (tokens * 7 + 3) % 256  # a learnable rule, so the losses move
            mask = torch.ones(B, T)
            if c.get("padded"):  # each row keeps a random-length prefix of real targets
                for b in range(B):
                    mask[b, int(torch.randint(2, T + 1, ())):] = 0
            logits = model(tokens, mask.reshape(-1))
            loss = (F.cross_entropy(logits, targets.reshape(-1), reduction="none") * mask.reshape(-1)).sum() / mask.sum()
            batches.append({"tokens": tokens.flatten().tolist(), "targets": targets.flatten().tolist(),
                            "mask": mask.flatten().tolist()})
        else:
            x = torch.randn(B, c["inputs"])
            y = x[:, :c["classes"]].argmax(1)  # a learnable rule
            loss = F.cross_entropy(model(x, torch.ones(B)), y)
            batches.append({"x": exact(x), "targets": y.tolist()})
        opt.zero_grad()
        loss.backward()
        if c.get("grad_clip", 0) > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), c["grad_clip"])
        for g in opt.param_groups:
            g["lr"] = lr_at(t, c)
        opt.step()
        losses.append(loss.item())
    body = {"format": "normtool-golden", "version": 1, "torch": torch.__version__, "case": name, "config": c,
            "weights": weights, "batches": batches, "losses": losses}
    (OUT / f"train_{name}.json").write_text(json.dumps(body) + "\n")
    print(f"train_{name}: losses {losses[0]:.4f} -> {losses[-1]:.4f}")


LM = {"arch": "transformer", "d_model": 16, "n_layers": 2, "n_heads": 2, "d_ff": 32, "seq_len": 8, "batch_size": 4}
CASES = {
    "layernorm_pre_adam": dict(LM, norm="layernorm", placement="pre", optimizer="adam", lr=1e-2),
    "rmsnorm_post_adam": dict(LM, norm="rmsnorm", placement="post", optimizer="adam", lr=1e-2),
    "batchnorm_pre_padded_adamw": dict(LM, norm="batchnorm", placement="pre", padded=True, optimizer="adamw",
                                       lr=1e-2, weight_decay=0.1, grad_clip=0.5, warmup_steps=3),
    "deepnorm_adam": dict(LM, norm="deepnorm", placement="post", alpha=(2 * 2) ** 0.25, optimizer="adam", lr=1e-2),
    "none_pre_sgd": dict(LM, norm="none", placement="pre", optimizer="sgd", lr=0.3),
    "mlp_batchnorm_sgd": {"arch": "mlp", "inputs": 20, "hidden": 16, "n_layers": 2, "classes": 10, "batch_size": 8,
                          "norm": "batchnorm", "optimizer": "sgd", "lr": 0.1, "weight_decay": 0.01},
}

if __name__ == "__main__":
    for seed, (name, c) in enumerate(CASES.items()):
        run_case(seed, name, c)
