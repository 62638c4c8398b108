#!/usr/bin/python3
"""PyTorch reference values for RNNSearch (model.arch rnnsearch, tests/test_rnnsearch.cpp).

Run with Debian's interpreter, which has python3-torch:  /usr/bin/python3 scripts/dump_rnnsearch_golden.py
Writes tests/golden/rnnsearch_<norm>.json in the format of scripts/dump_golden.py: every parameter
as "p:0:<name>" (normtool's names, all of layer 0), a padded batch (src, src_mask, tokens =
BOS + target, targets = target + EOS, mask), the logits, the loss over the real targets and every
parameter's gradient "g:0:<name>".

The model is the PyTorch twin's RnnSearch (scripts/torch_twin.py), written from Nematus v0.3's
definitions (model.py, layers.py, nematus_compat false), not from normtool's code; n() is the
configured norm, the identity for none:
  GRU(x, h): gx = n(W_g x + b_g), cx = n(W_c x + b_c), gh = n(U_g h), ch = n(U_c h);
             [r, u] = sigmoid(gx + gh); p = tanh(cx + r ch); h' = u h + (1 - u) p
  encoder:   a forward and a backward GRU over the source embeddings, the state kept on padding
             (h = m h' + (1 - m) h); annotation_j = [forward_j; backward_j]
  s0 = tanh(n(W_i mean_j(annotation_j) + b_i)) over the real positions
  step t:    s1 = GRU1(emb(y_{t-1}), s); e_j = v . tanh(n(W_a ann_j + b_a) + n(U_a s1)) over the
             real positions; c = sum_j softmax(e)_j ann_j; s = GRU2(c, s1)
  readout:   o = tanh(n(W_s s + b_s + W_y emb(y_{t-1}) + W_c c)); logits = W_o o + b_o
"""
import torch

from dump_golden import dump_case, fill, named, twin_model
from dump_rnn_golden import EPS, std_mean
from torch_twin import loss_fn

V, E, H, B, S, T = 16, 6, 5, 3, 5, 4


def case(kind, seed):
    model = twin_model({"model": {"arch": "rnnsearch", "d_emb": E, "d_model": H, "norm": {"type": kind, "eps": EPS}},
                        "data": {"dataset": "synthetic-seq2seq"}}, V)
    torch.manual_seed(seed)
    fill(model, named(model).items(), std_mean)

    # a padded batch: source lengths 5, 3, 1; target lengths (with BOS / EOS) 4, 2, 3
    src_len, tgt_len = [5, 3, 1], [4, 2, 3]
    src = torch.randint(4, V, (B, S))
    sm = torch.tensor([[1.0 if j < n else 0.0 for j in range(S)] for n in src_len])
    src = src * sm.long()
    tokens, targets = torch.randint(4, V, (B, T)), torch.randint(4, V, (B, T))
    tm = torch.tensor([[1.0 if t < n else 0.0 for t in range(T)] for n in tgt_len])
    tokens, targets = tokens * tm.long(), targets * tm.long()
    tokens[:, 0] = 2  # BOS
    logits = model(tokens, tm, src, sm)
    dump_case(f"rnnsearch_{kind}", {"V": V, "d_emb": E, "d_model": H, "B": B, "S": S, "T": T, "eps": EPS, "norm": kind},
              model, logits, loss_fn(logits, targets, tm)[0], src=src.reshape(-1), src_mask=sm.reshape(-1),
              tokens=tokens.reshape(-1), targets=targets.reshape(-1), mask=tm.reshape(-1))


if __name__ == "__main__":
    case("layernorm", 1)
    case("rmsnorm", 2)
    case("none", 3)
