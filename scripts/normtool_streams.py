"""normtool's seeded streams, replicated in Python bit for bit, so that a PyTorch model can start
from normtool's exact initial weights and see normtool's exact batches:

- Rng: src/core/rng.h (splitmix64 seeding, xoshiro256**, Lemire's bounded draws, Box-Muller).
- transformer_init: the draws of src/model/transformer.cpp's init, in its order (stream 1).
- fortunes_documents / packed_stream: the spec's fortunes corpus and its packed training stream.
- PackedSampler: src/data/lm.cpp's packed training rows (stream 2).
Used by scripts/paired_trajectory.py and scripts/dump_trajectory_golden.py.
"""
import math
import os

import numpy as np

M64 = (1 << 64) - 1


class Rng:
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
    def _rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & M64

    def next(self):
        s = self.s
        result = (self._rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = self._rotl(s[3], 45)
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
    """init_normal: float32(std * normal()) in row-major order."""
    n = int(np.prod(shape))
    return np.array([np.float32(std * rng.normal()) for _ in range(n)], dtype=np.float32).reshape(shape)


def transformer_init(seed, m, n_layers, shapes):
    """The weight matrices of src/model/transformer.cpp's init, in its draw order.

    m: {"init": "normal"|"xavier", "init_std", "deepnorm": bool, "beta"}; shapes(name) -> (rows, cols)
    for "tok_emb", "pos_emb", "q", "k", "v", "out", "fc1", "fc2", "head". Returns {(layer, name): array}.
    """
    rng = Rng(seed, 1)
    xavier = lambda shape, gain: gain * math.sqrt(2.0 / (shape[0] + shape[1]))
    linear_std = lambda shape: xavier(shape, 1.0) if m["init"] == "xavier" else m["init_std"]
    emb_std = 1.0 if m["init"] == "xavier" else m["init_std"]
    out = {}
    for name in ("tok_emb", "pos_emb"):
        out[(0, name)] = draw(rng, shapes(name), emb_std)
    for layer in range(n_layers):
        for name, gain in (("q", 1.0), ("k", 1.0), ("v", m.get("beta")), ("out", m.get("beta")),
                           ("fc1", m.get("beta")), ("fc2", m.get("beta"))):
            shape = shapes(name)
            std = xavier(shape, gain) if m.get("deepnorm") else linear_std(shape)
            out[(layer, name)] = draw(rng, shape, std)
    out[(n_layers, "head")] = draw(rng, shapes("head"), linear_std(shapes("head")))
    return out


def fortunes_documents(path="/usr/share/games/fortunes"):
    """The spec: regular files without '.' in byte order of name, split at lines '%', stripped of
    leading and trailing newlines, empty documents dropped."""
    docs = []
    for name in sorted((n for n in os.listdir(path) if "." not in n), key=os.fsencode):
        p = os.path.join(path, name)
        if os.path.islink(p) or not os.path.isfile(p):
            continue
        with open(p, "rb") as f:
            cur = []
            for line in f.read().split(b"\n"):
                if line == b"%":
                    docs.append(b"\n".join(cur).strip(b"\n"))
                    cur = []
                else:
                    cur.append(line)
            docs.append(b"\n".join(cur).strip(b"\n"))
    return [d for d in docs if d]


def packed_stream(docs, val_fraction=0.05):
    """The training split's documents joined by blank lines."""
    n_val = math.ceil(val_fraction * len(docs))
    return np.frombuffer(b"\n\n".join(docs[:len(docs) - n_val]), dtype=np.uint8)


class PackedSampler:
    """Rows of seq_len + 1 bytes at offsets below(len - seq_len), from Rng(seed, 2)."""

    def __init__(self, stream, seed, seq_len):
        self.stream, self.rng, self.T = stream, Rng(seed, 2), seq_len

    def rows(self, batch):
        offsets = [self.rng.below(len(self.stream) - self.T) for _ in range(batch)]
        return np.stack([self.stream[o:o + self.T + 1] for o in offsets])
