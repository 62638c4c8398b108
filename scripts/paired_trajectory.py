#!/usr/bin/python3
"""A paired comparison of normtool and the PyTorch peer: the peer's model, loss and optimizer
(../shared/peer/torch_peer.py) trained from normtool's exact initial weights on normtool's exact
batches, step by step beside `normtool run` of the same config. Independent seeds compare
distributions (scripts/parity.py); this removes the init and data draws from the comparison,
so what is left is the arithmetic of the training step, over as many steps as asked.

  scripts/paired_trajectory.py --config configs/parity/post.json --seed 11 [--set k=v ...]

It replicates normtool's seeded streams (src/core/rng.h: splitmix64 seeding, xoshiro256**,
Box-Muller normals, Lemire's bounded draws), the init order of src/model/transformer.cpp and
the packed sampler of src/data/lm.cpp; the first step's loss agreeing to float rounding shows
the replication is exact. Transformer with packed fortunes or synthetic-lm only.
Prints the loss of both per logged step and their relative difference; exit 0.
"""
import argparse, importlib.util, json, math, os, subprocess, sys, tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
M64 = (1 << 64) - 1


class Rng:
    """src/core/rng.h, bit for bit."""

    def __init__(self, seed, stream=0):
        x = ((seed * 0x9E3779B97F4A7C15) & M64) ^ ((stream + 0x632BE59BD9B4E019) & M64)
        self.s = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & M64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
            self.s.append(z ^ (z >> 31))

    @staticmethod
    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & M64

    def next(self):
        s = self.s
        result = (self.rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = self.rotl(s[3], 45)
        return result

    def below(self, n):
        m = self.next() * n
        if (m & M64) < n:
            threshold = ((1 << 64) - n) % n
            while (m & M64) < threshold:
                m = self.next() * n
        return m >> 64

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normal(self):
        u1 = 1.0 - self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def draw(rng, shape, std):
    n = int(np.prod(shape))
    return np.array([np.float32(std * rng.normal()) for _ in range(n)], dtype=np.float32).reshape(shape)


def normtool_init(model, c, seed):
    """The draws of Transformer::init in src/model/transformer.cpp, in its order."""
    m, n = c["model"], c["model"]["norm"]
    rng = Rng(seed, 1)
    emb_std = 1.0 if m["init"] == "xavier" else m["init_std"]
    xavier = lambda w, gain: gain * math.sqrt(2.0 / (w.shape[0] + w.shape[1]))
    lin_std = lambda w: xavier(w, 1.0) if m["init"] == "xavier" else m["init_std"]
    deep = n["type"] == "deepnorm"
    with torch.no_grad():
        for emb in (model.tok_emb, model.pos_emb):
            emb.weight.copy_(torch.from_numpy(draw(rng, tuple(emb.weight.shape), emb_std)))
        for b in model.blocks:
            for lin, gain in ((b.attn.q, 1.0), (b.attn.k, 1.0), (b.attn.v, n["beta"]), (b.attn.out, n["beta"]),
                              (b.ffn.fc1, n["beta"]), (b.ffn.fc2, n["beta"])):
                std = xavier(lin.weight, gain) if deep else lin_std(lin.weight)
                lin.weight.copy_(torch.from_numpy(draw(rng, tuple(lin.weight.shape), std)))
        model.head.weight.copy_(torch.from_numpy(draw(rng, tuple(model.head.weight.shape), lin_std(model.head.weight))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--every", type=int, default=10, help="print every this many steps")
    ap.add_argument("--normtool", default=os.path.join(ROOT, "build", "normtool"))
    ap.add_argument("--peer", default=os.path.join(ROOT, "..", "shared", "peer", "torch_peer.py"))
    args = ap.parse_args()

    spec = importlib.util.spec_from_file_location("torch_peer", args.peer)
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)
    sets = args.set + [f"seed={args.seed}", "train.threads=1", "train.log_every=1", "train.stats_every=0"]
    c = peer.load_config(args.config, sets)
    if c["model"]["arch"] != "transformer" or c["data"]["layout"] != "packed":
        sys.exit("error: packed language modelling only")

    # normtool's run
    out = tempfile.mkdtemp(prefix="normtool-paired-")
    cmd = [args.normtool, "run", "--config", args.config, "--out", os.path.join(out, "run")]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
    nt = {}
    with open(os.path.join(out, "run", "metrics.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            if r["split"] == "train":
                nt[r["step"]] = r["loss"]
    subprocess.run(["rm", "-rf", out])

    # the peer's model and step, from normtool's init and batches
    peer.set_threads(1)
    torch.manual_seed(args.seed)
    data = peer.LMData(c)
    model = peer.Transformer(c, 256)
    normtool_init(model, c, args.seed)
    model.train()
    tr, T = c["train"], c["data"]["seq_len"]
    params = list(model.parameters())
    opt = peer.make_optimizer(params, tr)
    stream, rng = data.train, Rng(args.seed, 2)
    print(f"{args.config} {' '.join(args.set)} seed {args.seed}: train loss per step, normtool vs the peer from "
          f"normtool's init and batches")
    print(f"{'step':>5} {'normtool':>10} {'peer':>10} {'rel diff':>10}")
    worst = 0.0
    for step in range(tr["steps"]):
        offsets = [rng.below(len(stream) - T) for _ in range(tr["batch_size"])]
        rows = np.stack([stream[o:o + T + 1] for o in offsets])
        x, y, mask = data._batch(rows)
        for g in opt.param_groups:
            g["lr"] = peer.lr_at(step, tr)
        opt.zero_grad(set_to_none=True)
        loss, _, _ = peer.loss_fn(model(x, mask), y, mask)
        loss.backward()
        if tr["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(params, tr["grad_clip"])
        opt.step()
        a, b = nt.get(step), loss.item()
        rel = abs(a - b) / abs(b) if a is not None else float("nan")
        worst = max(worst, rel)
        if step % args.every == 0 or step == tr["steps"] - 1:
            print(f"{step:5} {a:10.5f} {b:10.5f} {rel:10.2e}")
    print(f"largest relative difference over {tr['steps']} steps: {worst:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
