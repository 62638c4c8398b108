#!/usr/bin/python3
"""The first 10 training losses of tiny fixed-weight models, from PyTorch, for
tests/test_train_golden.cpp (the llm.c check): same weights, same batches, same optimizer.

Run with Debian's interpreter:  /usr/bin/python3 scripts/dump_train_golden.py
Writes tests/golden/train_<case>.json. The models, optimizers, schedule and loss are normtool's
PyTorch twin's (scripts/torch_twin.py: pre x + f(norm(x)); post norm(x + f(x)); deepnorm
norm(alpha x + f(x))), written from the formulas, independently of normtool's C++ code; the
weights are drawn here, under normtool's parameter names and layer numbers (layers.jsonl).
"""
import json
import pathlib

import torch

from dump_golden import fill, twin_model
from torch_twin import loss_fn, lr_at, make_config, make_optimizer, normtool_names

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden"
STEPS = 10


def exact(t):
    """float32 values as the shortest decimals that read back to the same float32."""
    return [float(f"{v:.9g}") for v in t.detach().flatten().tolist()]


def twin_config(c):
    """The twin's config of a case (the case's keys are what tests/test_train_golden.cpp reads)."""
    train = {k: c[k] for k in ("optimizer", "lr", "batch_size", "weight_decay", "grad_clip", "warmup_steps") if k in c}
    train["steps"] = STEPS
    if c["arch"] == "transformer":  # deepnorm: the twin's alpha is the case's, (2 n_layers)^(1/4)
        model = {k: c[k] for k in ("d_model", "n_layers", "n_heads", "d_ff")}
        model["norm"] = {"type": c["norm"], "placement": c["placement"]}
        model.update(c.get("model", {}))  # the case's other model keys (position, ffn, ...)
        return {"model": model, "data": {"seq_len": c["seq_len"]}, "train": train}
    model = {"arch": "mlp", "hidden": c["hidden"], "n_layers": c["n_layers"], "activation": "relu",
             "norm": {"type": c["norm"]}}
    return {"model": model, "data": {"dataset": "fashion-mnist"}, "train": train}


def std_mean(name):  # gains near 1, biases and weights small
    if "norm" in name:
        return (0.1, 1.0) if name.endswith("weight") else (0.1, 0.0)
    return (0.3, 0.0) if "emb" in name else (0.2, 0.0) if name.endswith("weight") else (0.05, 0.0)


def run_case(seed, name, c):
    config = twin_config(c)
    model = twin_model(config) if c["arch"] == "transformer" else twin_model(config, c["inputs"], c["classes"])
    torch.manual_seed(seed)
    fill(model, model.named_parameters(), std_mean, linear_init=True)  # the twin's order; the file's is normtool's
    weights = {f"{l}.{n}": exact(p) for (l, n), p in normtool_names(model).items()}
    tr = make_config(config)["train"]
    opt = make_optimizer(model.parameters(), tr)
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
            loss = loss_fn(model(tokens, mask), targets, mask)[0]
            batches.append({"tokens": tokens.flatten().tolist(), "targets": targets.flatten().tolist(),
                            "mask": mask.flatten().tolist()})
        else:
            x = torch.randn(B, c["inputs"])
            y = x[:, :c["classes"]].argmax(1)  # a learnable rule
            loss = loss_fn(model(x, torch.ones(B)), y, torch.ones(B))[0]
            batches.append({"x": exact(x), "targets": y.tolist()})
        opt.zero_grad()
        loss.backward()
        if tr["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), tr["grad_clip"])
        for g in opt.param_groups:
            g["lr"] = lr_at(t, tr)
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
    # new cases go last: each case draws with its index as the seed
    "rotary_swiglu_tied_adamw": dict(LM, norm="rmsnorm", placement="pre", optimizer="adamw", lr=1e-2, weight_decay=0.1,
                                     model={"position": "rotary", "ffn": "glu", "activation": "silu", "bias": False,
                                            "tie_embeddings": True}),
}

if __name__ == "__main__":
    import sys
    only = sys.argv[1:]  # case names: regenerate those alone
    for seed, (name, c) in enumerate(CASES.items()):
        if not only or name in only:
            run_case(seed, name, c)
