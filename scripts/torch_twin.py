#!/usr/bin/python3
"""normtool's PyTorch twin: the same config format, models, data, optimizers and run files, in
PyTorch, so that normtool's results can be checked against PyTorch from a clone of the project.

  /usr/bin/python3 scripts/torch_twin.py run --config configs/parity/pre.json --set seed=2 --out runs/twin
  scripts/parity.py --suite            (normtool against this twin over seeds)
  scripts/bench_vs_torch.py            (normtool's step time against this twin's)

Needs Debian's python3-torch (and python3-numpy); run it with /usr/bin/python3.

What it implements, from docs/config.md, docs/data.md and docs/usage.md ("Model families"), every
model.arch of normtool:
- transformer, the decoder-only LM (pre: x + f(norm(x)) and a final norm; post: norm(x + f(x));
  deepnorm: LN(alpha x + f(x)) with gain beta on the feed-forward, value and output projections;
  peri: x + norm_out(f(norm(x))) and a final norm; depth_scaling: block l's input norms / sqrt(l);
  postln-init: xavier, block l's v, out, fc1, fc2 divided by N - l + 1; init_mean on every Linear weight);
- encoder, the same stack bidirectional over the real tokens, BERT's masked LM (mask_prob; MASK
  byte 1 80%, a random byte 10%, kept 10%; the loss over the chosen positions);
- encoder-decoder (n_layers encoder blocks, n_dec_layers decoder blocks with causal self-attention
  and cross-attention to the real source positions; DeepNet's alpha and beta per stack);
- mlp (Linear -> norm -> activation);
- rnn, stacked GRU (Nematus's transition, four norm sites) or LN-LSTM cells (model.cell, d_emb);
- rnnsearch, the GRU encoder-decoder with additive attention in Nematus's layout.
Norms layernorm, rmsnorm, prmsnorm, scalenorm, dyt, batchnorm (batch_time or batch axes, running
statistics) and none, with affine, norm.bias, embed_norm, final_norm, model.bias and qk_norm; position learned,
none or rotary (GPT-NeoX's half split, rotary_base); ffn mlp or glu (SwiGLU with silu, GeGLU with gelu);
tie_embeddings; embed_scale (the token embedding times sqrt(d_model)); norm.unit_offset (Gemma's gain 1 + w);
attn_softcap and logit_softcap (Gemma 2's soft-capping, cap tanh(x / cap)); placement reordered (OLMo 2's
x + norm(f(x))) and qk_norm_scope all (OLMo 2's query and key norms over d_model);
scaled_residual_init (GPT-2's out and fc2 / sqrt(2N)); init normal,
xavier or nematus (orthogonal square and recurrent blocks); sgd, adam, adamw; the four schedules
with linear warm-up; global-norm clipping; the fortunes (packed and padded), fashion-mnist and
gettext-de and synthetic-seq2seq datasets (the same split and pairs: summary.json's
data.corpus_fnv1a64 is normtool's).
It writes config.json, metrics.jsonl and summary.json as normtool does (no layers.jsonl, stats.csv,
ranges.csv or checkpoint: train.stats_every and train.checkpoint_every change nothing here), and
stops a diverged run as normtool does. Batches come from PyTorch's generator seeded with `seed`:
the twin draws the same distribution of rows (and of masked-LM masks) as normtool, not the same
rows (for the same rows, scripts/paired_trajectory.py replays normtool's streams). It checks a
config's choices and combinations as normtool does; synthetic-lm, synthetic-classify and the reduced
precisions are normtool's own and are refused here (exit 2), as is any unknown key.

The models are written here from the formulas, independently of normtool's C++ code. The golden-file
scripts (scripts/dump_*.py) build their models, optimizers and schedule from this file, so the golden
tests check the twin too; normtool_names gives a model's parameters under normtool's names and layers
(layers.jsonl).
"""
import argparse
import copy
import gzip
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from normtool_streams import Rng, fortunes_documents  # noqa: E402
from gettext_fixture import fnv1a64, read_mo  # noqa: E402

# normtool's defaults (docs/config.md, `normtool config`)
DEFAULTS = {
    "name": "", "seed": 1,
    "data": {"dataset": "fortunes", "path": "", "seq_len": 64, "layout": "packed", "val_fraction": 0.05,
             "max_len": 48, "catalogs": None, "mask_prob": 0.15},
    "model": {"arch": "transformer", "d_model": 64, "n_layers": 2, "n_heads": 4, "d_ff": 256, "hidden": 256,
              "activation": "gelu", "ffn": "mlp", "init": "normal", "init_std": 0.02, "init_mean": 0.0,
              "norm": {"type": "layernorm", "placement": "pre", "eps": 1e-5, "affine": True, "bias": True,
                       "momentum": 0.1, "bn_axes": "batch_time", "alpha": None, "beta": None, "p": 0.0625,
                       "dyt_alpha0": 0.5, "impl": "fused", "depth_scaling": False,
                       "unit_offset": False},
              "final_norm": True, "embed_norm": False, "bias": True, "qk_norm": False, "qk_norm_scope": "head", "position": "learned", "tie_embeddings": False, "scaled_residual_init": False,
              "embed_scale": False, "attn_softcap": 0.0, "logit_softcap": 0.0,
              "rotary_base": 10000.0, "n_dec_layers": None,
              "cell": "gru", "d_emb": None},
    "train": {"steps": 500, "batch_size": 16, "optimizer": "adam", "lr": 1e-3, "momentum": 0.9, "beta1": 0.9,
              "beta2": 0.999, "adam_eps": 1e-8, "weight_decay": 0.0, "schedule": "constant", "warmup_steps": 0,
              "grad_clip": 0.0, "log_every": 10, "eval_every": 100, "eval_batches": 20, "stats_every": 100,
              "checkpoint_every": 0, "threads": 0, "precision": "fp32"},
}
ACT = {"relu": F.relu, "gelu": F.gelu, "tanh": torch.tanh, "silu": F.silu}
LM_DATA, SEQ2SEQ_DATA = ("fortunes",), ("gettext-de", "synthetic-seq2seq")
RECURRENT = ("rnn", "rnnsearch")
# data.catalogs' default (docs/usage.md, "Seq2seq datasets")
GETTEXT_CATALOGS = ["iso_639-3", "iso_3166-1", "iso_4217", "iso_15924", "coreutils", "bash", "grep", "sed", "tar",
                    "findutils", "diffutils", "dpkg", "apt", "libapt-pkg6.0", "make", "git", "wget", "man-db",
                    "gettext-tools", "libc", "gtk20", "gtk20-properties", "glib20", "xkeyboard-config",
                    "shared-mime-info", "procps-ng", "shadow", "xz"]


class ConfigError(Exception):
    pass


def _merge(base, user, prefix=""):
    for k, v in user.items():
        path = prefix + k
        if k not in base:
            raise ConfigError(f"{path}: unknown key")
        if isinstance(base[k], dict):
            if not isinstance(v, dict):
                raise ConfigError(f"{path}: expected an object")
            _merge(base[k], v, path + ".")
        else:
            base[k] = v


def deepnorm_constants(c, stack):
    """DeepNet's (alpha, beta) of a stack (docs/deepnorm.md); an explicit alpha or beta replaces it."""
    m = c["model"]
    N, M = m["n_layers"], m["n_dec_layers"]
    if m["arch"] != "encoder-decoder":
        alpha, beta = (2 * N) ** 0.25, (8 * N) ** -0.25
    elif stack == "enc":
        alpha, beta = 0.81 * (N ** 4 * M) ** (1 / 16), 0.87 * (N ** 4 * M) ** (-1 / 16)
    else:
        alpha, beta = (3 * M) ** 0.25, (12 * M) ** -0.25
    return m["norm"]["alpha"] or alpha, m["norm"]["beta"] or beta


CHOICES = {  # docs/config.md
    "data.dataset": ("fortunes", "fashion-mnist", "synthetic-lm", "synthetic-classify", "gettext-de",
                     "synthetic-seq2seq"),
    "data.layout": ("packed", "padded"),
    "model.arch": ("transformer", "mlp", "encoder", "encoder-decoder", "rnn", "rnnsearch"),
    "model.activation": tuple(ACT), "model.init": ("normal", "xavier", "nematus", "postln-init"),
    "model.norm.type": ("none", "batchnorm", "layernorm", "rmsnorm", "deepnorm", "prmsnorm", "scalenorm",
                        "dyt"),
    "model.position": ("learned", "none", "rotary"), "model.ffn": ("mlp", "glu"),
    "model.norm.placement": ("pre", "post", "peri", "reordered"),
    "model.qk_norm_scope": ("head", "all"), "model.norm.bn_axes": ("batch_time", "batch"),
    "model.norm.impl": ("fused", "composite"), "model.cell": ("gru", "lstm"),
    "train.optimizer": ("sgd", "adam", "adamw"), "train.schedule": ("constant", "linear", "cosine", "inverse_sqrt"),
    "train.precision": ("fp32", "bf16", "fp16"),
}


def validate(c):
    """normtool's combination checks (src/config/validate.cpp's rules, from docs/config.md and usage.md), and
    what the twin does not implement, each refused naming the key."""
    for key, names in CHOICES.items():
        node = c
        for part in key.split("."):
            node = node[part]
        if node not in names:
            raise ConfigError(f"{key}: one of {', '.join(names)}, got {node!r}")
    d, m, n, tr = c["data"], c["model"], c["model"]["norm"], c["train"]
    arch, ds = m["arch"], d["dataset"]
    if tr["precision"] != "fp32":
        raise ConfigError("train.precision: the twin trains in fp32 only")
    if ds in ("synthetic-lm", "synthetic-classify"):
        raise ConfigError(f"data.dataset: {ds} is normtool's own; the twin reads fortunes, fashion-mnist, gettext-de "
                          "and synthetic-seq2seq")
    if arch in ("transformer", "encoder", "rnn") and ds not in LM_DATA:
        raise ConfigError(f"model.arch: {arch} needs a language-modelling dataset, got data.dataset {ds!r}")
    if arch == "mlp" and ds != "fashion-mnist":
        raise ConfigError(f"model.arch: mlp needs a classification dataset, got data.dataset {ds!r}")
    if arch in ("encoder-decoder", "rnnsearch") and ds not in SEQ2SEQ_DATA:
        raise ConfigError(f"model.arch: {arch} needs a seq2seq dataset, got data.dataset {ds!r}")
    if arch in RECURRENT:
        if n["type"] in ("batchnorm", "deepnorm"):
            raise ConfigError(f"model.norm.type: model.arch {arch} takes a norm over each row, got {n['type']!r}")
        for key, bad in (("model.norm.placement", n["placement"] != "pre"), ("model.embed_norm", m["embed_norm"]),
                         ("model.bias", not m["bias"])):
            if bad:
                raise ConfigError(f"{key}: model.arch {arch} has fixed norm sites and Nematus's biases: leave the default")
    else:
        if m["d_emb"] is not None:
            raise ConfigError(f"model.d_emb: is the embedding width of rnn or rnnsearch, not of {arch!r}")
        if m["init"] == "nematus":
            raise ConfigError(f"model.init: nematus is for rnn or rnnsearch, got {arch!r}")
    if arch == "encoder-decoder":
        m["n_dec_layers"] = m["n_dec_layers"] or m["n_layers"]
    elif m["n_dec_layers"] is not None:
        raise ConfigError(f"model.n_dec_layers: counts the decoder blocks of an encoder-decoder, not of {arch!r}")
    if arch == "mlp" and m["embed_norm"]:
        raise ConfigError("model.embed_norm: the mlp has no embeddings to normalize")
    if arch == "encoder-decoder" and n["type"] == "batchnorm" and n["bn_axes"] == "batch":
        raise ConfigError("model.norm.bn_axes: batch (per position) needs fixed-length rows: use batch_time")
    if d["catalogs"] is not None and ds != "gettext-de":
        raise ConfigError(f"data.catalogs: only gettext-de reads catalogs, got data.dataset {ds!r}")
    if ds == "gettext-de" and d["catalogs"] is None:
        d["catalogs"] = list(GETTEXT_CATALOGS)
    if arch not in ("mlp",) + RECURRENT and m["d_model"] % m["n_heads"]:
        raise ConfigError(f"model.n_heads: must divide model.d_model = {m['d_model']}, got {m['n_heads']}")
    if n["placement"] in ("peri", "reordered") and (arch in ("mlp",) + RECURRENT
                                                   or n["type"] not in ("none", "layernorm", "rmsnorm")):
        raise ConfigError(f"model.norm.placement: {n['placement']} wraps a Transformer stack's sub-layers, norm types "
                          f"none|layernorm|rmsnorm, got {arch!r} with {n['type']!r}")
    if m["qk_norm_scope"] != "head" and not m["qk_norm"]:
        raise ConfigError("model.qk_norm_scope: sets model.qk_norm's features, which is false")
    if n["depth_scaling"] and (arch in ("mlp",) + RECURRENT or n["placement"] in ("post", "reordered")
                               or n["type"] not in ("layernorm", "rmsnorm")):
        raise ConfigError("model.norm.depth_scaling: a Transformer stack's pre or peri placement with layernorm or "
                          f"rmsnorm, got {arch!r}, {n['placement']!r}, {n['type']!r}")
    for key in ("attn_softcap", "logit_softcap"):
        if m[key] > 0 and arch in ("mlp",) + RECURRENT:
            raise ConfigError(f"model.{key}: caps a Transformer stack's scores or logits, got {arch!r}")
    if m["embed_scale"] and arch in ("mlp",) + RECURRENT:
        raise ConfigError(f"model.embed_scale: scales a Transformer stack's token embedding, got {arch!r}")
    if n["unit_offset"] and (n["type"] in ("none", "scalenorm") or not n["affine"]):
        raise ConfigError("model.norm.unit_offset: offsets a gain per feature that starts at 1, got "
                          f"{n['type']!r} with affine {n['affine']}")
    if m["init"] == "postln-init" and (arch in ("mlp",) + RECURRENT or n["placement"] != "post"
                                       or n["type"] == "deepnorm"):
        raise ConfigError("model.init: postln-init is DeepNet's init for a Post-LN Transformer stack, got "
                          f"{arch!r}, {n['placement']!r}, {n['type']!r}")
    if n["type"] == "deepnorm":
        if arch == "mlp":
            raise ConfigError("model.norm.type: deepnorm is a transformer residual scheme, not for mlp")
        n["placement"] = "post"
        if arch != "encoder-decoder":
            n["alpha"], n["beta"] = deepnorm_constants(c, "dec")
    if m["scaled_residual_init"] and arch in ("mlp",) + RECURRENT:
        raise ConfigError(f"model.scaled_residual_init: a Transformer stack's out and fc2, not {arch!r}'s")
    if m["tie_embeddings"] and arch not in ("transformer", "encoder"):
        raise ConfigError(f"model.tie_embeddings: ties a single stack's token table to its output layer, not {arch!r}")
    if m["ffn"] != "mlp" and arch in ("mlp",) + RECURRENT:
        raise ConfigError(f"model.ffn: glu is a Transformer block's feed-forward, not {arch!r}'s")
    if m["position"] != "learned" and arch in ("mlp",) + RECURRENT:
        raise ConfigError(f"model.position: {m['position']} is a Transformer stack's position scheme, not {arch!r}")
    if m["position"] == "rotary" and arch not in ("mlp",) + RECURRENT and (m["d_model"] // m["n_heads"]) % 2:
        raise ConfigError("model.position: rotary needs an even head size model.d_model / model.n_heads")
    if n["type"] == "batchnorm" and n["impl"] == "composite":
        raise ConfigError("model.norm.impl: composite batchnorm keeps no running statistics: use fused")
    if n["type"] == "batchnorm" and arch == "mlp" and tr["batch_size"] < 2:
        raise ConfigError("train.batch_size: batchnorm needs at least 2 rows per batch, got 1")


def make_config(user, sets=()):
    """The resolved config: normtool's defaults, `user` (a config file's object), then the `key.path=value`
    overrides, checked."""
    c = copy.deepcopy(DEFAULTS)
    _merge(c, user)
    for s in sets:
        key, eq, raw = s.partition("=")
        if not eq:
            raise ConfigError(f"override {s!r}: expected key.path=value")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        node = {}
        cur = node
        parts = key.split(".")
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = value
        _merge(c, node)
    validate(c)
    return c


def load_config(path, sets=()):
    """make_config of a config file; the run's name defaults to the file's."""
    if not os.path.exists(path) and os.path.exists(os.path.join(ROOT, path)):
        path = os.path.join(ROOT, path)
    with open(path) as f:
        user = json.load(f)
    user.pop("_sources", None)  # a preset's citations, not config
    c = make_config(user, sets)
    if not c["name"]:
        c["name"] = os.path.splitext(os.path.basename(path))[0]
    return c


def set_threads(n):
    torch.set_num_threads(n if n > 0 else os.cpu_count() or 1)


# ---- data (docs/data.md, docs/usage.md); a batch is a dict of tensors: x, y, mask (the targets that count),
# real (the real tokens: attention keys and norm statistics), and for seq2seq src, src_mask
class LMData:
    """fortunes: byte rows, packed (random windows of one stream) or padded (one document a row).
    shift false (the masked LM's rows): rows of seq_len bytes, targets = inputs."""

    def __init__(self, c, shift=True):
        d = c["data"]
        docs = fortunes_documents(d["path"] or "/usr/share/games/fortunes")
        n_val = math.ceil(d["val_fraction"] * len(docs))
        n_train = len(docs) - min(n_val, len(docs) - 1)
        self.train_docs, self.val_docs = docs[:n_train], docs[n_train:]
        self.T, self.L, self.layout = d["seq_len"], d["seq_len"] + shift, d["layout"]
        self.train = np.frombuffer(b"\n\n".join(self.train_docs), dtype=np.uint8)
        self.val = np.frombuffer(b"\n\n".join(self.val_docs), dtype=np.uint8)
        self.gen = torch.Generator().manual_seed(c["seed"])

    def val_rows(self):
        return len(self.val) // self.L if self.layout == "packed" else len(self.val_docs)

    def _batch(self, rows):
        """rows: byte strings of at most L bytes, right-padded with 0 to L -> inputs, targets, mask (0 where a
        target is padding)."""
        s = self.L - self.T
        pad = np.zeros((len(rows), self.L), dtype=np.int64)
        mask = np.zeros((len(rows), self.T), dtype=np.float32)
        for i, r in enumerate(rows):
            pad[i, :len(r)] = np.frombuffer(bytes(r), dtype=np.uint8)
            mask[i, :max(0, len(r) - s)] = 1
        rows = torch.as_tensor(pad)
        return rows[:, :self.T], rows[:, s:], torch.as_tensor(mask)

    def _dict(self, rows):
        x, y, mask = self._batch(rows)
        return {"x": x, "y": y, "mask": mask, "real": mask}

    def train_batch(self, B):
        if self.layout == "packed":
            off = torch.randint(0, len(self.train) - self.L + 1, (B,), generator=self.gen).tolist()
            return self._dict([self.train[o:o + self.L] for o in off])
        idx = torch.randint(0, len(self.train_docs), (B,), generator=self.gen).tolist()
        return self._dict([self.train_docs[i][:self.L] for i in idx])

    def val_batch(self, i, B):
        if self.layout == "packed":
            L = self.L
            return self._dict([self.val[(i * B + b) * L:(i * B + b + 1) * L] for b in range(B)])
        return self._dict([d[:self.L] for d in self.val_docs[i * B:(i + 1) * B]])


class MaskedLMData(LMData):
    """The encoder's masked LM (docs/usage.md): each real position chosen with probability mask_prob; a chosen
    input becomes byte 1 (MASK) with probability 0.8, a random byte 0.1, stays 0.1; the loss counts the chosen
    positions. Validation batch i is masked from its own generator, the same at every evaluation."""

    def __init__(self, c):
        super().__init__(c, shift=False)
        self.p, self.seed = c["data"]["mask_prob"], c["seed"]

    def _mask(self, b, gen):
        u = torch.rand(b["x"].shape, generator=gen)
        v = torch.rand(b["x"].shape, generator=gen)
        rand = torch.randint(0, 256, b["x"].shape, generator=gen)
        chosen = (u < self.p) & (b["real"] > 0)
        x = torch.where(chosen & (v < 0.8), torch.ones_like(b["x"]), b["x"])
        b["x"] = torch.where(chosen & (v >= 0.8) & (v < 0.9), rand, x)
        b["mask"] = chosen.float()
        return b

    def train_batch(self, B):
        return self._mask(super().train_batch(B), self.gen)

    def val_batch(self, i, B):
        return self._mask(super().val_batch(i, B), torch.Generator().manual_seed(self.seed * 100003 + 103 + i))


def gettext_pairs(d):
    """gettext-de (docs/usage.md): (msgid, msgstr) of the catalogs' entries, skipping the header, contexts, plural
    forms, empty or unchanged translations, any '%', control byte or newline, and pairs longer than max_len; the
    first per msgid in file-name order."""
    folder = d["path"] or "/usr/share/locale/de/LC_MESSAGES"
    clean = lambda b: all(ch >= 0x20 and ch != 0x7f and ch != ord("%") for ch in b)
    pairs = {}
    for name in sorted(set(stem + ".mo" for stem in d["catalogs"])):
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            raise OSError(f"{path}: no such catalog")
        for src, tgt in read_mo(path):
            if (src and tgt and src != tgt and len(src) <= d["max_len"] and len(tgt) <= d["max_len"]
                    and clean(src) and clean(tgt)):
                pairs.setdefault(src, tgt)
    return pairs


def synthetic_seq2seq_pairs(seed, max_len):
    """synthetic-seq2seq (docs/usage.md), from normtool's stream 104 (scripts/normtool_streams.py): a permutation
    of a..z (Fisher-Yates), then 12,000 sources of 1 + below(min(24, max_len)) letters; the target is the source
    reversed through the permutation; the first per source."""
    rng = Rng(seed, 104)
    pi = list(range(ord("a"), ord("z") + 1))
    for i in range(25, 0, -1):
        j = rng.below(i + 1)
        pi[i], pi[j] = pi[j], pi[i]
    pairs = {}
    for _ in range(12000):
        n = 1 + rng.below(min(24, max_len))
        src = bytes(ord("a") + rng.below(26) for _ in range(n))
        pairs.setdefault(src, bytes(pi[ch - ord("a")] for ch in reversed(src)))
    return pairs


class Seq2SeqData:
    """(source, target) byte pairs sorted by source; validation: fnv1a64(source) % 1000 below 1000 val_fraction.
    Batches padded with 0 to the longest source and the longest target + 1: the decoder reads BOS (2) + target
    and predicts target + EOS (3)."""

    def __init__(self, c):
        d = c["data"]
        pairs = gettext_pairs(d) if d["dataset"] == "gettext-de" else synthetic_seq2seq_pairs(c["seed"], d["max_len"])
        pairs = sorted(pairs.items())
        h = 0xcbf29ce484222325
        for s, t in pairs:
            h = fnv1a64(b"\x1e", fnv1a64(t, fnv1a64(b"\x1f", fnv1a64(s, h))))
        is_val = lambda s: fnv1a64(s) % 1000 < 1000 * d["val_fraction"]
        self.train = [p for p in pairs if not is_val(p[0])]
        self.val = [p for p in pairs if is_val(p[0])]
        if not self.train or not self.val:
            raise OSError(f"{d['dataset']}: {len(self.train)} training and {len(self.val)} validation pairs")
        self.fingerprint = {"train_pairs": len(self.train), "val_pairs": len(self.val),
                            "corpus_fnv1a64": f"{h:016x}"}
        self.gen = torch.Generator().manual_seed(c["seed"])

    def val_rows(self):
        return len(self.val)

    @staticmethod
    def _batch(rows):
        B, S, T = len(rows), max(len(s) for s, _ in rows), max(len(t) for _, t in rows) + 1
        src, x, y = (np.zeros((B, n), dtype=np.int64) for n in (S, T, T))
        src_mask, mask = np.zeros((B, S), dtype=np.float32), np.zeros((B, T), dtype=np.float32)
        for b, (s, t) in enumerate(rows):
            src[b, :len(s)], src_mask[b, :len(s)] = list(s), 1
            x[b, 0], x[b, 1:len(t) + 1] = 2, list(t)
            y[b, :len(t)], y[b, len(t)] = list(t), 3
            mask[b, :len(t) + 1] = 1
        mask = torch.as_tensor(mask)
        return {"src": torch.as_tensor(src), "src_mask": torch.as_tensor(src_mask), "x": torch.as_tensor(x),
                "y": torch.as_tensor(y), "mask": mask, "real": mask}

    def train_batch(self, B):
        return self._batch([self.train[i] for i in torch.randint(0, len(self.train), (B,), generator=self.gen).tolist()])

    def val_batch(self, i, B):
        return self._batch(self.val[i * B:(i + 1) * B])


class FashionMnist:
    def __init__(self, c):
        path = c["data"]["path"] or "/usr/share/datasets/fashion-mnist"

        def idx(name, offset):
            with gzip.open(os.path.join(path, name)) as f:
                return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)

        self.train_x = torch.as_tensor(idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 784) / 255.0).float()
        self.train_y = torch.as_tensor(idx("train-labels-idx1-ubyte.gz", 8).astype(np.int64))
        self.val_x = torch.as_tensor(idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 784) / 255.0).float()
        self.val_y = torch.as_tensor(idx("t10k-labels-idx1-ubyte.gz", 8).astype(np.int64))
        self.gen = torch.Generator().manual_seed(c["seed"])

    def val_rows(self):
        return len(self.val_y)

    def train_batch(self, B):
        i = torch.randint(0, len(self.train_y), (B,), generator=self.gen)
        return {"x": self.train_x[i], "y": self.train_y[i], "mask": torch.ones(B), "real": torch.ones(B)}

    def val_batch(self, i, B):
        y = self.val_y[i * B:(i + 1) * B]
        return {"x": self.val_x[i * B:(i + 1) * B], "y": y, "mask": torch.ones(len(y)), "real": torch.ones(len(y))}


# ---- models
class Norm(torch.nn.Module):
    """layernorm | rmsnorm | prmsnorm | scalenorm | dyt | batchnorm | none over the last dimension of (N, C) rows;
    deepnorm's norm is layernorm. mask (N): the real rows, for batchnorm's statistics. dyt (Zhu et al. 2025):
    weight * tanh(alpha x) + bias, alpha one parameter (dyt_alpha0) with or without affine. unit_offset: the gain
    is 1 + weight, weight from 0 (Gemma's RMSNorm)."""

    def __init__(self, c, C, positions=1):
        super().__init__()
        n = c["model"]["norm"]
        self.kind = "layernorm" if n["type"] == "deepnorm" else n["type"]
        self.eps, self.momentum, self.p, self.axes = n["eps"], n["momentum"], n["p"], n["bn_axes"]
        if self.kind == "dyt":
            self.alpha = torch.nn.Parameter(torch.full((1,), float(n["dyt_alpha0"])))
        if self.kind != "none" and n["affine"]:
            gain = torch.full((1,), math.sqrt(C)) if self.kind == "scalenorm" else torch.ones(C)
            self.offset = 1.0 if n["unit_offset"] else 0.0  # Gemma's RMSNorm: the gain is 1 + weight
            self.weight = torch.nn.Parameter(gain - self.offset)
            if self.kind in ("layernorm", "batchnorm", "dyt") and n["bias"]:
                self.bias = torch.nn.Parameter(torch.zeros(C))
        if self.kind == "batchnorm":
            shape = (positions, C) if self.axes == "batch" else (C,)
            self.register_buffer("running_mean", torch.zeros(shape))
            self.register_buffer("running_var", torch.ones(shape))

    def affine(self, y):
        if hasattr(self, "weight"):
            y = y * (self.offset + self.weight) if self.offset else y * self.weight
        return y + self.bias if hasattr(self, "bias") else y

    def forward(self, x, mask=None, B=None, T=None):
        if self.kind == "none":
            return x
        if self.kind == "layernorm":
            return self.affine(F.layer_norm(x, x.shape[-1:], None, None, self.eps))
        if self.kind in ("rmsnorm", "prmsnorm"):
            k = max(1, int(self.p * x.shape[-1])) if self.kind == "prmsnorm" else x.shape[-1]
            return self.affine(x / torch.sqrt(x[:, :k].pow(2).mean(-1, keepdim=True) + self.eps))
        if self.kind == "scalenorm":
            return self.affine(x / torch.sqrt(x.pow(2).sum(-1, keepdim=True) + self.eps))
        if self.kind == "dyt":
            return self.affine(torch.tanh(self.alpha * x))
        mask = torch.ones(x.shape[0]) if mask is None else mask
        if self.axes == "batch" and T is not None:  # per position and feature, over the batch
            xs, m = x.view(B, T, -1), mask.view(B, T, 1)
        else:
            xs, m = x, mask[:, None]
        if self.training:
            count = m.sum(0)
            mean = (xs * m).sum(0) / count
            var = (((xs - mean) ** 2) * m).sum(0) / count
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * var * count / (count - 1).clamp(min=1))
        else:
            mean, var = self.running_mean, self.running_var
        return self.affine(((xs - mean) / torch.sqrt(var + self.eps)).reshape(x.shape))



def _normal(t, std):
    with torch.no_grad():
        t.normal_(0.0, std)


def _init_weight(w, m, gain=None, recurrent=False):
    """A Linear weight (out, in) as model.init says (model/init.h's contract, docs/config.md): normal
    N(0, init_std); xavier Glorot normal, gain 1; nematus a square weight orthogonal, each H x H block of a
    recurrent (k H, H) one orthogonal, any other N(0, 0.01^2). `gain`: DeepNorm's Xavier with that gain."""
    out_f, in_f = w.shape
    xavier = math.sqrt(2.0 / (in_f + out_f))
    if gain is not None or m["init"] in ("xavier", "postln-init"):
        return _normal(w, (1.0 if gain is None else gain) * xavier)
    if m["init"] == "normal":
        return _normal(w, m["init_std"])
    with torch.no_grad():
        if recurrent:
            for r in range(0, out_f, in_f):
                torch.nn.init.orthogonal_(w[r:r + in_f])
        elif out_f == in_f:
            torch.nn.init.orthogonal_(w)
        else:
            w.normal_(0.0, 0.01)


def _embedding_std(m):
    return {"xavier": 1.0, "postln-init": 1.0, "nematus": 0.01}.get(m["init"], m["init_std"])


def linear(m, i, o, bias=True, gain=None, recurrent=False):
    """A Linear, its weight as model.init says, its bias 0."""
    lin = torch.nn.Linear(i, o, bias=bias)
    _init_weight(lin.weight, m, gain, recurrent)
    if bias:
        torch.nn.init.zeros_(lin.bias)
    return lin


def rotate(t, base):
    """RoPE (Su et al. 2021) in GPT-NeoX's half split: t (B, NH, T, hs), feature i < hs/2 paired with i + hs/2,
    turned by the angle pos * base^(-2i/hs) (GPT-NeoX's rotate_half, GLM-130B, Gemma, OLMo 2)."""
    T, hs = t.shape[-2], t.shape[-1]
    inv_freq = base ** (-torch.arange(0, hs, 2, dtype=torch.float64) / hs)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]  # (T, hs/2)
    cos, sin = torch.cos(angle).to(t.dtype), torch.sin(angle).to(t.dtype)
    a, b = t[..., :hs // 2], t[..., hs // 2:]
    return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)


def soft_cap(logits, cap):
    """Gemma 2's soft-capping: cap tanh(logits / cap); cap 0: the logits."""
    return cap * torch.tanh(logits / cap) if cap > 0 else logits


class Attention(torch.nn.Module):
    def __init__(self, m, gains, cross=False):
        super().__init__()
        C, b = m["d_model"], m["bias"]
        self.heads = m["n_heads"]
        self.rotary = m["rotary_base"] if m["position"] == "rotary" and not cross else None  # self-attention's
        self.cap = m["attn_softcap"]  # Gemma 2: scores cap tanh(scores / cap) before the mask
        self.q, self.k, self.v, self.out = (linear(m, C, C, b, g) for g in gains)
        self.qk_all = m["qk_norm_scope"] == "all"  # OLMo 2: over all of q's (k's) C features, before the heads
        if m["qk_norm"]:  # Dehghani et al. 2023: a norm of the block's type on each head's q and k, gains shared
            width = C if self.qk_all else C // self.heads
            self.q_norm, self.k_norm = Norm({"model": m}, width), Norm({"model": m}, width)

    def forward(self, x, B, T, mem=None, S=None, key_mask=None, causal=False):
        """x (B*T, C) queries; keys and values from mem (B*S, C), else x; key_mask (B, S): 1 = a real key."""
        mem, S = (x, T) if mem is None else (mem, S)
        hs = x.shape[-1] // self.heads
        split = lambda t, n: t.view(B, n, self.heads, hs).transpose(1, 2)
        q, k = self.q(x), self.k(mem)
        if hasattr(self, "q_norm") and self.qk_all:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k, v = split(q, T), split(k, S), split(self.v(mem), S)
        if hasattr(self, "q_norm") and not self.qk_all:
            q, k = (n(t.reshape(-1, hs)).view(t.shape) for n, t in ((self.q_norm, q), (self.k_norm, k)))
        if self.rotary is not None:  # after the q and k norms (OLMo 2)
            q, k = rotate(q, self.rotary), rotate(k, self.rotary)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
        if self.cap > 0:
            att = self.cap * torch.tanh(att / self.cap)
        keep = torch.ones(B, 1, T, S, dtype=torch.bool)
        if key_mask is not None:
            keep = keep & key_mask.bool()[:, None, None, :]
        if causal:
            keep = keep & torch.tril(torch.ones(T, S, dtype=torch.bool))
        att = att.masked_fill(~keep, float("-inf")).softmax(-1)
        return self.out((att @ v).transpose(1, 2).reshape(B * T, -1))


class FeedForward(torch.nn.Module):
    def __init__(self, m, gain):
        super().__init__()
        self.fc1 = linear(m, m["d_model"], m["d_ff"], m["bias"], gain)
        self.fc2 = linear(m, m["d_ff"], m["d_model"], m["bias"], gain)
        # glu (Shazeer 2020): fc2(act(fc1 x) * fc3 x), SwiGLU with silu, GeGLU with gelu
        self.fc3 = linear(m, m["d_model"], m["d_ff"], m["bias"], gain) if m["ffn"] == "glu" else None
        self.act = ACT[m["activation"]]

    def forward(self, x):
        h = self.act(self.fc1(x))
        return self.fc2(h if self.fc3 is None else h * self.fc3(x))


class Block(torch.nn.Module):
    """Self-attention, (cross-attention,) feed-forward, each placed: pre x + f(norm(x)); post norm(x + f(x));
    deepnorm norm(alpha x + f(x)), with v, out, fc1, fc2 Xavier with gain beta and q, k with gain 1; peri
    x + norm_out(f(norm(x))), each output norm its own (Peri-LN); reordered x + norm(f(x)) (OLMo 2).
    depth_scaling: block l = i + 1's input norms times 1 / sqrt(l) (LayerNorm Scaling)."""

    def __init__(self, c, positions, causal, cross, alpha, beta, i=0):
        super().__init__()
        m = c["model"]
        deep = m["norm"]["type"] == "deepnorm"
        gains = (1.0, 1.0, beta, beta) if deep else (None,) * 4
        self.placement, self.alpha, self.causal = m["norm"]["placement"], alpha if deep else 1.0, causal
        self.attn_norm, self.attn = Norm(c, m["d_model"], positions), Attention(m, gains)
        self.cross = Attention(m, gains, cross=True) if cross else None
        self.cross_norm = Norm(c, m["d_model"], positions) if cross else None
        self.ffn_norm, self.ffn = Norm(c, m["d_model"], positions), FeedForward(m, beta if deep else None)
        self.scale = 1 / math.sqrt(i + 1) if m["norm"]["depth_scaling"] else 1.0
        peri = self.placement == "peri" and not deep
        self.attn_out_norm = Norm(c, m["d_model"], positions) if peri else None
        self.cross_out_norm = Norm(c, m["d_model"], positions) if peri and cross else None
        self.ffn_out_norm = Norm(c, m["d_model"], positions) if peri else None

    def _place(self, x, f, norm, mask, B, T, out_norm=None):
        if self.placement == "reordered":
            return x + norm(f(x), mask, B, T)
        if self.placement == "peri" and out_norm is not None:
            return x + out_norm(f(self.scale * norm(x, mask, B, T)), mask, B, T)
        if self.placement in ("pre", "peri"):
            return x + f(self.scale * norm(x, mask, B, T))
        return norm(self.alpha * x + f(x), mask, B, T)

    def forward(self, x, real, key_mask, B, T, mem=None, mem_mask=None):
        x = self._place(x, lambda h: self.attn(h, B, T, key_mask=key_mask, causal=self.causal), self.attn_norm,
                        real, B, T, self.attn_out_norm)
        if self.cross is not None:
            S = mem_mask.shape[1]
            x = self._place(x, lambda h: self.cross(h, B, T, mem, S, mem_mask), self.cross_norm, real, B, T,
                            self.cross_out_norm)
        return self._place(x, self.ffn, self.ffn_norm, real, B, T, self.ffn_out_norm)


class Stack(torch.nn.Module):
    """Token and position embeddings (embed_norm: normalized), n blocks, a final norm in pre placement."""

    def __init__(self, c, positions, n, causal=False, cross=False, stack="dec", vocab=256):
        super().__init__()
        m = c["model"]
        C = m["d_model"]
        alpha, beta = deepnorm_constants(c, stack) if m["norm"]["type"] == "deepnorm" else (1.0, None)
        self.tok_emb = torch.nn.Embedding(vocab, C)  # model.position learned: and a position table
        self.pos_emb = torch.nn.Embedding(positions, C) if m["position"] == "learned" else None
        for e in (self.tok_emb, self.pos_emb):
            if e is not None:
                _normal(e.weight, _embedding_std(m))
        self.emb_norm = Norm(c, C, positions) if m["embed_norm"] else None
        self.embed_scale = m["embed_scale"]
        self.blocks = torch.nn.ModuleList(Block(c, positions, causal, cross, alpha, beta, i) for i in range(n))
        if m["init"] == "postln-init":  # DeepNet §3: block l = i + 1 of n, v, out, fc1, fc2 divided by n - i
            with torch.no_grad():
                for i, b in enumerate(self.blocks):
                    for lin in (b.attn.v, b.attn.out, b.ffn.fc1, b.ffn.fc2) + (
                            (b.cross.v, b.cross.out) if b.cross is not None else ()):
                        lin.weight.div_(n - i)
        if m["scaled_residual_init"]:  # GPT-2: the projections into the residual stream / sqrt(2 n)
            with torch.no_grad():
                for b in self.blocks:
                    for lin in (b.attn.out, b.ffn.fc2) + ((b.cross.out,) if b.cross is not None else ()):
                        lin.weight.div_(math.sqrt(2 * n))
        pre = m["norm"]["placement"] in ("pre", "peri", "reordered")
        self.final_norm = Norm(c, C, positions) if pre and m["final_norm"] else None

    def encode(self, tokens, real, key_mask, mem=None, mem_mask=None):
        """tokens (B, T); real (B, T): the real tokens (norm statistics); key_mask: the attention's keys."""
        B, T = tokens.shape
        r = real.reshape(-1)
        h = self.tok_emb(tokens)
        if self.embed_scale:  # Vaswani et al. 2017 §3.4, Gemma: the token embedding times sqrt(d_model)
            h = h * math.sqrt(h.shape[-1])
        if self.pos_emb is not None:
            h = h + self.pos_emb(torch.arange(T))
        h = h.reshape(B * T, -1)
        if self.emb_norm is not None:
            h = self.emb_norm(h, r, B, T)
        for b in self.blocks:
            h = b(h, r, key_mask, B, T, mem, mem_mask)
        return self.final_norm(h, r, B, T) if self.final_norm is not None else h


class Transformer(Stack):
    """transformer: decoder-only, causal; encoder: bidirectional over the real tokens (the masked LM)."""

    def __init__(self, c, vocab=256):
        m = c["model"]
        encoder = m["arch"] == "encoder"
        super().__init__(c, c["data"]["seq_len"], m["n_layers"], causal=not encoder, vocab=vocab)
        self.encoder = encoder
        if m["tie_embeddings"]:  # GPT-2: the output layer's weight is tok_emb, its bias (if any) its own
            self.head = torch.nn.Module()
            self.head.bias = torch.nn.Parameter(torch.zeros(vocab)) if m["bias"] else None
        else:
            self.head = linear(m, m["d_model"], vocab, m["bias"])
        self.tied = m["tie_embeddings"]
        self.cap = m["logit_softcap"]

    def forward(self, x, mask):  # mask (B, T): the real tokens
        h = self.encode(x, mask, mask if self.encoder else None)
        return soft_cap(F.linear(h, self.tok_emb.weight, self.head.bias) if self.tied else self.head(h), self.cap)


class EncoderDecoder(torch.nn.Module):
    """n_layers bidirectional encoder blocks over the source; n_dec_layers decoder blocks of causal
    self-attention, cross-attention to the real source positions and feed-forward; its own output layer."""

    def __init__(self, c, vocab=256):
        super().__init__()
        m, L = c["model"], c["data"]["max_len"]
        self.enc = Stack(c, L, m["n_layers"], stack="enc", vocab=vocab)
        self.dec = Stack(c, L + 1, m["n_dec_layers"], causal=True, cross=True, stack="dec", vocab=vocab)
        self.head = linear(m, m["d_model"], vocab, m["bias"])
        self.cap = m["logit_softcap"]

    def forward(self, x, mask, src, src_mask):
        mem = self.enc.encode(src, src_mask, src_mask)
        return soft_cap(self.head(self.dec.encode(x, mask, mask, mem, src_mask)), self.cap)


class Mlp(torch.nn.Module):
    def __init__(self, c, inputs=784, classes=10):
        super().__init__()
        m = c["model"]
        dims = [inputs] + [m["hidden"]] * m["n_layers"]
        self.linears = torch.nn.ModuleList(linear(m, i, o, m["bias"]) for i, o in zip(dims, dims[1:]))
        self.norms = torch.nn.ModuleList(Norm(c, m["hidden"]) for _ in range(m["n_layers"]))
        self.out = linear(m, m["hidden"], classes, m["bias"])
        self.act = ACT[m["activation"]]

    def forward(self, x, mask):
        for lin, norm in zip(self.linears, self.norms):
            x = self.act(norm(lin(x), mask))
        return self.out(x)


class Gru(torch.nn.Module):
    """Nematus's GRU transition with four norm sites: gx = n(W_g x + b_g), cx = n(W_c x + b_c), gh = n(U_g h),
    ch = n(U_c h) (the gates' 2H jointly); [r, u] = sigmoid(gx + gh); p = tanh(cx + r ch); h' = u h + (1 - u) p."""

    def __init__(self, c, d_in, H):
        super().__init__()
        m = c["model"]
        self.H = H
        self.W_g, self.W_c = linear(m, d_in, 2 * H), linear(m, d_in, H)
        self.U_g, self.U_c = linear(m, H, 2 * H, False, recurrent=True), linear(m, H, H, False, recurrent=True)
        self.norm_gx, self.norm_cx = Norm(c, 2 * H), Norm(c, H)
        self.norm_gh, self.norm_ch = Norm(c, 2 * H), Norm(c, H)

    def inputs(self, x):
        return self.norm_gx(self.W_g(x)), self.norm_cx(self.W_c(x))

    def step(self, gx, cx, h):
        r, u = torch.sigmoid(gx + self.norm_gh(self.U_g(h))).split(self.H, -1)
        p = torch.tanh(cx + r * self.norm_ch(self.U_c(h)))
        return u * h + (1 - u) * p

    def forward(self, x):  # (B, T, d_in) -> (B, T, H), the state 0 at t = 0
        gx, cx = self.inputs(x.reshape(-1, x.shape[-1]))
        B, T = x.shape[:2]
        gx, cx = gx.view(B, T, -1), cx.view(B, T, -1)
        h, out = torch.zeros(B, self.H), []
        for t in range(T):
            h = self.step(gx[:, t], cx[:, t], h)
            out.append(h)
        return torch.stack(out, 1)


class Lstm(torch.nn.Module):
    """The LayerNorm paper's LN-LSTM: [f, i, o, g] = n(W_h h) + n(W_x x) + b (4H jointly);
    c' = sigmoid(f) c + sigmoid(i) tanh(g); h' = sigmoid(o) tanh(n(c'))."""

    def __init__(self, c, d_in, H):
        super().__init__()
        m = c["model"]
        self.H = H
        self.W_x, self.W_h = linear(m, d_in, 4 * H, False), linear(m, H, 4 * H, False, recurrent=True)
        self.bias = torch.nn.Parameter(torch.zeros(4 * H))
        self.norm_x, self.norm_h, self.norm_c = Norm(c, 4 * H), Norm(c, 4 * H), Norm(c, H)

    def forward(self, x):
        B, T = x.shape[:2]
        xg = (self.norm_x(self.W_x(x.reshape(B * T, -1))) + self.bias).view(B, T, -1)
        h, cell, out = torch.zeros(B, self.H), torch.zeros(B, self.H), []
        for t in range(T):
            f, i, o, g = (xg[:, t] + self.norm_h(self.W_h(h))).split(self.H, -1)
            cell = torch.sigmoid(f) * cell + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(self.norm_c(cell))
            out.append(h)
        return torch.stack(out, 1)


class Rnn(torch.nn.Module):
    """The recurrent LM: an embedding of width d_emb, n_layers stacked cells of width d_model, logits W_o h + b_o."""

    def __init__(self, c, vocab=256):
        super().__init__()
        m = c["model"]
        H, E = m["d_model"], m["d_emb"] or m["d_model"]
        self.emb = torch.nn.Embedding(vocab, E)
        _normal(self.emb.weight, _embedding_std(m))
        cell = Gru if m["cell"] == "gru" else Lstm
        self.cells = torch.nn.ModuleList(cell(c, E if i == 0 else H, H) for i in range(m["n_layers"]))
        self.head = linear(m, H, vocab)

    def forward(self, x, mask):
        x = self.emb(x)
        for cell in self.cells:
            x = cell(x)
        return self.head(x.reshape(-1, x.shape[-1]))


class RnnSearch(torch.nn.Module):
    """RNNSearch in Nematus's layout (docs/usage.md): forward and backward GRUs over the source (a padded
    position keeps the state), annotations [fwd; bwd]; s0 = tanh(n(W_i mean(annotations) + b_i)); per target
    step s1 = GRU1(emb(y_{t-1}), s), e_j = v . tanh(n(W_a ann_j + b_a) + n(U_a s1)) over the real positions,
    c = softmax(e) . ann, s = GRU2(c, s1); o = tanh(n(W_s s + b_s + W_y emb(y_{t-1}) + W_c c)); W_o o + b_o."""

    def __init__(self, c, vocab=256):
        super().__init__()
        m = c["model"]
        H, E = m["d_model"], m["d_emb"] or m["d_model"]
        self.src_emb, self.tgt_emb = torch.nn.Embedding(vocab, E), torch.nn.Embedding(vocab, E)
        for e in (self.src_emb, self.tgt_emb):
            _normal(e.weight, _embedding_std(m))
        self.enc_fwd, self.enc_bwd = Gru(c, E, H), Gru(c, E, H)
        self.init = linear(m, 2 * H, H)
        self.init.norm = Norm(c, H)
        self.dec1, self.dec2 = Gru(c, E, H), Gru(c, 2 * H, H)
        self.attention = a = torch.nn.Module()
        a.W_a, a.U_a, a.v = linear(m, 2 * H, 2 * H), linear(m, H, 2 * H, False), linear(m, 2 * H, 1, False)
        a.norm_keys, a.norm_query = Norm(c, 2 * H), Norm(c, 2 * H)
        self.readout = r = torch.nn.Module()
        r.W_s, r.W_y, r.W_c = linear(m, H, E), linear(m, E, E, False), linear(m, 2 * H, E, False)
        r.norm = Norm(c, E)
        self.head = linear(m, E, vocab)

    def forward(self, y_in, mask, src, sm):
        (B, S), T = src.shape, y_in.shape[1]
        x = self.src_emb(src).reshape(B * S, -1)
        ann = []
        for gru, order in ((self.enc_fwd, range(S)), (self.enc_bwd, range(S - 1, -1, -1))):
            gx, cx = (t.view(B, S, -1) for t in gru.inputs(x))
            h, out = torch.zeros(B, gru.H), [None] * S
            for j in order:
                keep = sm[:, j:j + 1]
                h = keep * gru.step(gx[:, j], cx[:, j], h) + (1 - keep) * h
                out[j] = h
            ann.append(torch.stack(out, 1))
        ann = torch.cat(ann, -1)  # (B, S, 2H)
        mean = (ann * sm[:, :, None]).sum(1) / sm.sum(1, keepdim=True)
        a, r = self.attention, self.readout
        s = torch.tanh(self.init.norm(self.init(mean)))
        keys = a.norm_keys(a.W_a(ann.reshape(B * S, -1))).view(B, S, -1)
        y = self.tgt_emb(y_in)
        g1, c1 = (t.view(B, T, -1) for t in self.dec1.inputs(y.reshape(B * T, -1)))
        states, ctxs = [], []
        for t in range(T):
            s1 = self.dec1.step(g1[:, t], c1[:, t], s)
            e = a.v(torch.tanh(keys + a.norm_query(a.U_a(s1))[:, None, :])).squeeze(-1)
            alpha = e.masked_fill(sm == 0, float("-inf")).softmax(-1)
            ctx = (alpha[:, :, None] * ann).sum(1)
            s = self.dec2.step(*self.dec2.inputs(ctx), s1)
            states.append(s)
            ctxs.append(ctx)
        states, ctxs = torch.stack(states, 1).reshape(B * T, -1), torch.stack(ctxs, 1).reshape(B * T, -1)
        o = torch.tanh(r.norm(r.W_s(states) + r.W_y(y.reshape(B * T, -1)) + r.W_c(ctxs)))
        return self.head(o)


def make_model(c, *args):
    """The model of the config, model.init_mean added to every Linear weight after every other init rule
    (RMS §6.1 Fig. 4); embeddings, biases and norm gains keep theirs."""
    model = MODELS[c["model"]["arch"]](c, *args)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.Linear):
                mod.weight.add_(c["model"]["init_mean"])
    return model


MODELS = {"transformer": Transformer, "encoder": Transformer, "encoder-decoder": EncoderDecoder, "mlp": Mlp,
          "rnn": Rnn, "rnnsearch": RnnSearch}


def normtool_names(model):
    """A model's parameters under normtool's (layer, name) (layers.jsonl), in the order normtool declares and
    draws them: {(layer, name): parameter}."""
    out = {}

    def add(module, name, layer):  # within a module normtool declares the weights, a bias, then the norms
        if module is not None:
            params = sorted(module.named_parameters(), key=lambda np: (np[0].startswith("norm"), np[0] == "bias"))
            out.update(((layer, f"{name}.{n}"), p) for n, p in params)

    def stack(s, prefix=""):  # embeddings; per block its norms, then its sub-layers; the final norm
        for name in ("tok_emb", "pos_emb", "emb_norm"):
            add(getattr(s, name), prefix + name, 0)
        for i, b in enumerate(s.blocks):
            for name in ("attn_norm", "attn_out_norm", "cross_norm", "cross_out_norm", "ffn_norm", "ffn_out_norm",
                         "attn", "cross", "ffn"):
                add(getattr(b, name), prefix + name, i)
        add(s.final_norm, prefix + "final_norm", len(s.blocks))

    if isinstance(model, Stack):
        stack(model)
        add(model.head, "head", len(model.blocks))
    elif isinstance(model, EncoderDecoder):
        stack(model.enc, "enc.")
        stack(model.dec, "dec.")
        add(model.head, "head", len(model.dec.blocks))
    elif isinstance(model, Mlp):
        for i, (lin, norm) in enumerate(zip(model.linears, model.norms)):
            add(norm, "norm", i)
            add(lin, "linear", i)
        add(model.out, "out", len(model.linears))
    elif isinstance(model, Rnn):
        add(model.emb, "emb", 0)
        for i, cell in enumerate(model.cells):
            add(cell, type(cell).__name__.lower(), i)
        add(model.head, "head", len(model.cells))
    else:  # RnnSearch: all of layer 0
        for name in ("src_emb", "enc_fwd", "enc_bwd", "init", "tgt_emb", "dec1", "attention", "dec2", "readout",
                     "head"):
            add(getattr(model, name), name, 0)
    return out


def forward(model, b):
    """The logits of a batch: inputs, the real tokens, and for seq2seq the source and its mask."""
    return model(b["x"], b["real"], *[b[k] for k in ("src", "src_mask") if k in b])


def make_data(c):
    arch = c["model"]["arch"]
    if arch == "mlp":
        return FashionMnist(c)
    if arch in ("encoder-decoder", "rnnsearch"):
        return Seq2SeqData(c)
    return MaskedLMData(c) if arch == "encoder" else LMData(c)


# ---- training
def make_optimizer(params, tr):
    if tr["optimizer"] == "sgd":
        return torch.optim.SGD(params, lr=tr["lr"], momentum=tr["momentum"], weight_decay=tr["weight_decay"])
    cls = torch.optim.AdamW if tr["optimizer"] == "adamw" else torch.optim.Adam
    return cls(params, lr=tr["lr"], betas=(tr["beta1"], tr["beta2"]), eps=tr["adam_eps"],
               weight_decay=tr["weight_decay"])


def lr_at(t, tr):
    w, lr = tr["warmup_steps"], tr["lr"]
    if t < w:
        return lr * t / w
    p = (t - w) / max(1, tr["steps"] - w)
    return {"constant": lr, "linear": lr * (1 - p), "cosine": lr * 0.5 * (1 + math.cos(math.pi * p)),
            "inverse_sqrt": lr * math.sqrt(max(1, w) / max(t, w, 1))}[tr["schedule"]]


def loss_fn(logits, y, mask):
    """Mean cross-entropy over the real targets; also the number of correct predictions and of targets."""
    y, mask = y.reshape(-1), mask.reshape(-1)
    losses = F.cross_entropy(logits, y, reduction="none")
    loss = (losses * mask).sum() / mask.sum().clamp(min=1)
    correct = ((logits.argmax(-1) == y).float() * mask).sum().item()
    return loss, correct, mask.sum().item()


def run(c, out):
    set_threads(c["train"]["threads"])
    torch.manual_seed(c["seed"])
    arch = c["model"]["arch"]
    lm = arch in ("transformer", "encoder", "rnn")  # byte rows of seq_len (summary's tokens_per_s)
    acc = arch not in ("transformer", "rnn")  # classification, masked LM and seq2seq lines carry "acc"
    data, model = make_data(c), make_model(c)
    tr, B = c["train"], c["train"]["batch_size"]
    eval_batches = min(tr["eval_batches"], data.val_rows() // B)
    if eval_batches < 1:
        print(f"error: data: {data.val_rows()} validation rows, fewer than train.batch_size = {B}", file=sys.stderr)
        return 2
    params = list(model.parameters())
    opt = make_optimizer(params, tr)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
    metrics = open(os.path.join(out, "metrics.jsonl"), "w")
    start, step_ms, recent, since = time.time(), [], [], []
    first, diverged, last_val, last_acc, best_val, steps_done = None, False, None, None, None, 0

    def evaluate(step):
        nonlocal last_val, last_acc, best_val
        model.eval()
        total = n = correct = 0.0
        with torch.no_grad():
            for i in range(eval_batches):
                b = data.val_batch(i, B)
                loss, ok, count = loss_fn(forward(model, b), b["y"], b["mask"])
                total, n, correct = total + loss.item() * count, n + count, correct + ok
        model.train()
        last_val, last_acc = total / n, correct / n
        best_val = last_val if best_val is None else min(best_val, last_val)
        line = {"step": step, "split": "val", "loss": last_val, "elapsed_s": time.time() - start}
        if acc:
            line["acc"] = last_acc
        metrics.write(json.dumps(line) + "\n")
        metrics.flush()

    model.train()
    for step in range(tr["steps"]):
        if step % tr["eval_every"] == 0:
            evaluate(step)
        t0 = time.perf_counter()
        b = data.train_batch(B)
        lr = lr_at(step, tr)
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad(set_to_none=True)
        loss, ok, count = loss_fn(forward(model, b), b["y"], b["mask"])
        loss.backward()
        grad_norm = torch.norm(torch.stack([p.grad.norm() for p in params if p.grad is not None])).item()
        if tr["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(params, tr["grad_clip"])
        value = loss.item()
        first = value if first is None else first
        bad = not math.isfinite(value) or value > 1e3 * first or not math.isfinite(grad_norm)
        if not bad:
            opt.step()
            steps_done = step + 1
        step_ms.append((time.perf_counter() - t0) * 1e3)
        since.append(step_ms[-1])
        recent = (recent + [value])[-tr["log_every"]:]
        if step % tr["log_every"] == 0 or step == tr["steps"] - 1 or bad:
            line = {"step": step, "split": "train", "loss": value if math.isfinite(value) else None, "lr": lr,
                    "grad_norm": grad_norm if math.isfinite(grad_norm) else None,
                    "step_ms": sum(since) / len(since), "elapsed_s": time.time() - start}
            if acc:
                line["acc"] = ok / count
            metrics.write(json.dumps(line) + "\n")
            metrics.flush()
            since = []
        if bad:
            diverged = True
            break
    if not diverged:
        evaluate(steps_done)
    metrics.close()
    train_s = sum(step_ms) / 1e3
    finite = [v for v in recent if math.isfinite(v)]
    summary = {"name": c["name"], "status": "diverged" if diverged else "completed", "steps_completed": steps_done,
               "final_train_loss": sum(finite) / len(finite) if finite and not diverged else None,
               "final_val_loss": last_val, "best_val_loss": best_val, "diverged": diverged,
               "wall_s": time.time() - start, "train_s": train_s,
               "steps_per_s": steps_done / train_s if train_s > 0 else None,
               "tokens_per_s": steps_done / train_s * B * (c["data"]["seq_len"] if lm else 1) if train_s > 0 else None,
               "step_ms_median": statistics.median(step_ms) if step_ms else None, "impl": "torch_twin",
               "torch": torch.__version__, "threads": torch.get_num_threads(),
               "params": sum(p.numel() for p in params)}
    if acc:
        summary["final_val_acc"] = last_acc
    if hasattr(data, "fingerprint"):
        summary["data"] = data.fingerprint
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(f"{c['name']}: {summary['status']} after {steps_done} steps: val loss {last_val} -> {out}")
    return 1 if diverged else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="train one config and write its run directory")
    r.add_argument("--config", required=True)
    r.add_argument("--set", action="append", default=[], help="key.path=value (repeatable)")
    r.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        c = load_config(args.config, args.set)
    except (ConfigError, OSError, json.JSONDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        return run(c, args.out)
    except OSError as e:  # a missing or unreadable data file
        print(f"error: data: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
