#!/usr/bin/python3
"""PyTorch reference values for the recurrent language model (model.arch rnn, tests/test_rnn.cpp).

Run with Debian's interpreter, which has python3-torch:  /usr/bin/python3 scripts/dump_rnn_golden.py
Writes tests/golden/rnn_<cell>_<norm>.json in the format of scripts/dump_golden.py: every parameter
as "p:<layer>:<name>" (normtool's names), a batch of tokens and targets, the logits, the loss and
every parameter's gradient "g:<layer>:<name>".

The model is the PyTorch twin's Rnn (scripts/torch_twin.py), its cells written from their
definitions, not from normtool's code:
  gru (Nematus, nematus_compat false): gx = n(W_g x + b_g), cx = n(W_c x + b_c), gh = n(U_g h),
      ch = n(U_c h); [r, u] = sigmoid(gx + gh); p = tanh(cx + r ch); h' = u h + (1 - u) p
  lstm (ryankiros/layer-norm lnlstm_layer): [f, i, o, g] = n(W_h h) + n(W_x x) + b;
      c' = sigmoid(f) c + sigmoid(i) tanh(g); h' = sigmoid(o) tanh(n(c'))
with the state and cell 0 at the start of each row, n_layers stacked, logits = W_o h + b_o.
"""
import torch

from dump_golden import dump_case, fill, named, twin_model
from torch_twin import loss_fn

V, E, H, L, B, T, EPS = 16, 6, 8, 2, 3, 7, 1e-5


def std_mean(name):
    """Random parameters: gains near 1, biases small."""
    if "norm" in name and name.endswith("weight"):
        return 0.2, 1.0
    return (0.1, 0.0) if name.endswith("bias") else (1.0, 0.0) if "emb" in name else (0.3, 0.0)


def case(cell, kind, seed):
    model = twin_model({"model": {"arch": "rnn", "cell": cell, "d_emb": E, "d_model": H, "n_layers": L,
                                  "norm": {"type": kind, "eps": EPS}}}, V)
    torch.manual_seed(seed)
    fill(model, named(model).items(), std_mean)
    tokens, targets = torch.randint(0, V, (B, T)), torch.randint(0, V, (B, T))
    logits = model(tokens, torch.ones(B, T))
    dump_case(f"rnn_{cell}_{kind}", {"V": V, "d_emb": E, "d_model": H, "n_layers": L, "B": B, "T": T, "eps": EPS,
                                     "cell": cell, "norm": kind}, model, logits,
              loss_fn(logits, targets, torch.ones(B, T))[0], tokens=tokens.reshape(-1), targets=targets.reshape(-1))


if __name__ == "__main__":
    case("gru", "layernorm", 1)
    case("gru", "rmsnorm", 2)
    case("lstm", "layernorm", 3)
    case("lstm", "none", 4)
