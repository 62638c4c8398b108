#!/usr/bin/python3
"""Training trajectories from PyTorch for tests/test_train_golden.cpp: the model of
scripts/dump_train_golden.py (written from the spec's formulas, independently of normtool's C++),
started from normtool's exact initial weights and fed normtool's exact batches of fortunes
(scripts/normtool_streams.py replicates its seeded streams), trained with PyTorch's optimizer,
clipping and the spec's schedule. The golden file holds the config overrides, the seed and the
loss of every step; the test runs `normtool run`'s Session::step() on the same config and
compares. So a long run of the real code path, init and data included, is checked against an
independent implementation in CI, where PyTorch is not installed.

Run with Debian's interpreter:  /usr/bin/python3 scripts/dump_trajectory_golden.py
Writes tests/golden/trajectory_<case>.json.
"""
import json
import math
import pathlib
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from dump_train_golden import Transformer  # noqa: E402
from normtool_streams import PackedSampler, fortunes_documents, packed_stream, transformer_init  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden"


def lr_at(t, tr):
    """The spec's schedule: linear warm-up from 0, then constant / cosine."""
    w, T = tr.get("warmup_steps", 0), tr["steps"]
    if t < w:
        return tr["lr"] * t / w
    p = (t - w) / max(1, T - w)
    return tr["lr"] * (0.5 * (1 + math.cos(math.pi * p)) if tr.get("schedule") == "cosine" else 1.0)


def overrides_of(c, tr, seed):
    m = {"d_model": c["d_model"], "n_layers": c["n_layers"], "n_heads": c["n_heads"], "d_ff": c["d_ff"],
         "init": c["init"], "norm.type": c["norm"], "norm.placement": c["placement"]}
    o = [f"model.{k}={v}" for k, v in m.items()] + [f"data.seq_len={c['seq_len']}", f"seed={seed}"]
    o += [f"train.{k}={v}" for k, v in tr.items()]
    return o + ["train.threads=1", "train.stats_every=0", "train.eval_every=100000", "train.log_every=1"]


def run_case(name, c, tr, seed, stream):
    model = Transformer(c)
    named = model.named()
    with torch.no_grad():  # normtool's init: its draws for the matrices, biases 0, gains 1
        for (layer, pname), p in named.items():
            p.zero_()
            if pname.endswith("norm.weight"):
                p.fill_(1.0)
        b0 = model.blocks[0]
        mods = {"q": b0.q, "k": b0.k, "v": b0.v, "out": b0.out, "fc1": b0.fc1, "fc2": b0.fc2, "head": model.head}
        shape = lambda n: tuple(model.tok_emb.shape if n == "tok_emb" else model.pos_emb.shape if n == "pos_emb"
                                else mods[n].weight.shape)
        m = {"init": c["init"], "init_std": 0.02, "deepnorm": False}
        for (layer, wname), w in transformer_init(seed, m, c["n_layers"], shape).items():
            key = (layer, f"{wname}.weight") if wname in ("tok_emb", "pos_emb", "head") else \
                (layer, f"{'attn' if wname in ('q', 'k', 'v', 'out') else 'ffn'}.{wname}.weight")
            named[key].copy_(torch.from_numpy(w))
    params = list(model.parameters())
    betas = (tr.get("beta1", 0.9), tr.get("beta2", 0.999))
    opt = (torch.optim.AdamW(params, lr=tr["lr"], betas=betas, weight_decay=tr.get("weight_decay", 0.0))
           if tr["optimizer"] == "adamw" else torch.optim.Adam(params, lr=tr["lr"], betas=betas))
    sampler = PackedSampler(stream, seed, c["seq_len"])
    B, T = tr["batch_size"], c["seq_len"]
    losses = []
    for t in range(tr["steps"]):
        rows = torch.from_numpy(sampler.rows(B).astype("int64"))
        tokens, targets = rows[:, :-1], rows[:, 1:]
        loss = F.cross_entropy(model(tokens, torch.ones(B * T)), targets.reshape(-1))
        opt.zero_grad()
        loss.backward()
        if tr.get("grad_clip", 0) > 0:
            torch.nn.utils.clip_grad_norm_(params, tr["grad_clip"])
        for g in opt.param_groups:
            g["lr"] = lr_at(t, tr)
        opt.step()
        losses.append(loss.item())
    body = {"format": "normtool-golden", "version": 1, "torch": torch.__version__, "case": name,
            "overrides": overrides_of(c, tr, seed), "losses": losses}
    (OUT / f"trajectory_{name}.json").write_text(json.dumps(body) + "\n")
    print(f"trajectory_{name}: {len(losses)} steps, losses {losses[0]:.4f} -> {losses[-1]:.4f}")


PARITY = {"d_model": 48, "n_layers": 3, "n_heads": 3, "d_ff": 144, "seq_len": 48, "init": "normal"}
PARITY_TRAIN = {"steps": 150, "batch_size": 12, "optimizer": "adamw", "lr": 2e-3, "weight_decay": 0.01,
                "schedule": "cosine", "warmup_steps": 20, "grad_clip": 1.0}
CASES = {  # name: (model, training, seed)
    "parity_post": (dict(PARITY, norm="layernorm", placement="post"), PARITY_TRAIN, 11),
    "parity_pre": (dict(PARITY, norm="layernorm", placement="pre"), PARITY_TRAIN, 3),
    # the Post-LN claims' setting: 12 Xavier layers without warm-up
    "xavier_post_12": ({"d_model": 64, "n_layers": 12, "n_heads": 4, "d_ff": 128, "seq_len": 64, "init": "xavier",
                        "norm": "layernorm", "placement": "post"},
                       {"steps": 60, "batch_size": 16, "optimizer": "adam", "lr": 2e-3, "beta2": 0.98}, 1),
}

if __name__ == "__main__":
    torch.set_num_threads(1)
    stream = packed_stream(fortunes_documents())
    for name, (c, tr, seed) in CASES.items():
        run_case(name, c, tr, seed, stream)
