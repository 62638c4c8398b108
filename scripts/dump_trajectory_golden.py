#!/usr/bin/python3
"""Training trajectories from PyTorch for tests/test_train_golden.cpp: the model, optimizer, schedule
and loss of normtool's PyTorch twin (scripts/torch_twin.py, written from the spec's formulas,
independently of normtool's C++), started from normtool's exact initial weights and fed normtool's
exact batches of fortunes (scripts/normtool_streams.py replicates its seeded streams), with
PyTorch's clipping. The golden file holds the config overrides, the seed and the
loss of every step; the test runs `normtool run`'s Session::step() on the same config and
compares. So a long run of the real code path, init and data included, is checked against an
independent implementation in CI, where PyTorch is not installed.

Run with Debian's interpreter:  /usr/bin/python3 scripts/dump_trajectory_golden.py
Writes tests/golden/trajectory_<case>.json.
"""
import json
import pathlib

import torch

from normtool_streams import PackedSampler, fortunes_documents, packed_stream, transformer_init
from torch_twin import Transformer, loss_fn, lr_at, make_config, make_optimizer, normtool_names

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden"


def overrides_of(c, tr, seed):
    m = {"d_model": c["d_model"], "n_layers": c["n_layers"], "n_heads": c["n_heads"], "d_ff": c["d_ff"],
         "init": c["init"], "norm.type": c["norm"], "norm.placement": c["placement"]}
    o = [f"model.{k}={v}" for k, v in m.items()] + [f"data.seq_len={c['seq_len']}", f"seed={seed}"]
    o += [f"train.{k}={v}" for k, v in tr.items()]
    return o + ["train.threads=1", "train.stats_every=0", "train.eval_every=100000", "train.log_every=1"]


def run_case(name, c, tr, seed, stream):
    model_config = {k: c[k] for k in ("d_model", "n_layers", "n_heads", "d_ff", "init")}
    model_config["norm"] = {"type": c["norm"], "placement": c["placement"]}
    config = make_config({"model": model_config, "data": {"seq_len": c["seq_len"]}, "train": tr})
    model = Transformer(config)
    # normtool's init: the twin's biases 0 and gains 1 are normtool's; its matrices are normtool's draws
    named = normtool_names(model)
    sub = {"q": "attn.", "k": "attn.", "v": "attn.", "out": "attn.", "fc1": "ffn.", "fc2": "ffn."}
    full = lambda n: f"{sub.get(n, '')}{n}.weight"
    shapes = {name: tuple(p.shape) for (_, name), p in named.items()}
    m = {"init": c["init"], "init_std": config["model"]["init_std"], "deepnorm": False}
    with torch.no_grad():
        for (layer, n), w in transformer_init(seed, m, c["n_layers"], lambda n: shapes[full(n)]).items():
            named[(layer, full(n))].copy_(torch.from_numpy(w))
    params, train = list(model.parameters()), config["train"]
    opt = make_optimizer(params, train)
    sampler = PackedSampler(stream, seed, c["seq_len"])
    B, T = tr["batch_size"], c["seq_len"]
    losses = []
    for t in range(tr["steps"]):
        rows = torch.from_numpy(sampler.rows(B).astype("int64"))
        tokens, targets = rows[:, :-1], rows[:, 1:]
        loss = loss_fn(model(tokens, torch.ones(B, T)), targets, torch.ones(B, T))[0]
        opt.zero_grad()
        loss.backward()
        if train["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(params, train["grad_clip"])
        for g in opt.param_groups:
            g["lr"] = lr_at(t, train)
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
