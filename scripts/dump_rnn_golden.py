#!/usr/bin/python3
"""PyTorch reference values for the recurrent language model (model.arch rnn, tests/test_rnn.cpp).

Run with Debian's interpreter, which has python3-torch:  /usr/bin/python3 scripts/dump_rnn_golden.py
Writes tests/golden/rnn_<cell>_<norm>.json in the format of scripts/dump_golden.py: every parameter
as "p:<layer>:<name>" (normtool's names), a batch of tokens and targets, the logits, the loss and
every parameter's gradient "g:<layer>:<name>".

The cells, written from their definitions (not from normtool's code):
  gru (Nematus, nematus_compat false): gx = n(W_g x + b_g), cx = n(W_c x + b_c), gh = n(U_g h),
      ch = n(U_c h); [r, u] = sigmoid(gx + gh); p = tanh(cx + r ch); h' = u h + (1 - u) p
  lstm (ryankiros/layer-norm lnlstm_layer): [f, i, o, g] = n(W_h h) + n(W_x x) + b;
      c' = sigmoid(f) c + sigmoid(i) tanh(g); h' = sigmoid(o) tanh(n(c'))
with the state and cell 0 at the start of each row, n_layers stacked, logits = W_o h + b_o.
"""
import torch
import torch.nn.functional as F

from dump_golden import dump

V, E, H, L, B, T, EPS = 16, 6, 8, 2, 3, 7, 1e-5


class Params:
    """Random parameters in normtool's order and names; gains near 1, biases small."""

    def __init__(self):
        self.named = []

    def add(self, layer, name, *shape, scale=0.3, shift=0.0):
        t = (torch.randn(*shape) * scale + shift).requires_grad_()
        self.named.append((layer, name, t))
        return t


def make_norm(P, kind, layer, name, width):
    if kind == "none":
        return lambda x: x
    if kind == "layernorm":
        w, b = P.add(layer, name + ".weight", width, scale=0.2, shift=1.0), P.add(layer, name + ".bias", width, scale=0.1)
        return lambda x: F.layer_norm(x, (width,), w, b, EPS)
    if kind == "rmsnorm":
        w = P.add(layer, name + ".weight", width, scale=0.2, shift=1.0)
        return lambda x: x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w
    raise ValueError(kind)


def gru_layer(P, kind, l, d_in):
    Wg, bg = P.add(l, "gru.W_g.weight", 2 * H, d_in), P.add(l, "gru.W_g.bias", 2 * H, scale=0.1)
    Wc, bc = P.add(l, "gru.W_c.weight", H, d_in), P.add(l, "gru.W_c.bias", H, scale=0.1)
    Ug, Uc = P.add(l, "gru.U_g.weight", 2 * H, H), P.add(l, "gru.U_c.weight", H, H)
    ngx, ncx = make_norm(P, kind, l, "gru.norm_gx", 2 * H), make_norm(P, kind, l, "gru.norm_cx", H)
    ngh, nch = make_norm(P, kind, l, "gru.norm_gh", 2 * H), make_norm(P, kind, l, "gru.norm_ch", H)

    def run(x):  # x (B, T, d_in) -> (B, T, H)
        gx, cx = ngx(x @ Wg.T + bg), ncx(x @ Wc.T + bc)
        h, out = torch.zeros(B, H), []
        for t in range(T):
            gates = torch.sigmoid(gx[:, t] + ngh(h @ Ug.T))
            r, u = gates[:, :H], gates[:, H:]
            p = torch.tanh(cx[:, t] + r * nch(h @ Uc.T))
            h = u * h + (1 - u) * p
            out.append(h)
        return torch.stack(out, 1)
    return run


def lstm_layer(P, kind, l, d_in):
    Wx, Wh, b = P.add(l, "lstm.W_x.weight", 4 * H, d_in), P.add(l, "lstm.W_h.weight", 4 * H, H), P.add(l, "lstm.bias", 4 * H, scale=0.1)
    nx, nh, nc = make_norm(P, kind, l, "lstm.norm_x", 4 * H), make_norm(P, kind, l, "lstm.norm_h", 4 * H), make_norm(P, kind, l, "lstm.norm_c", H)

    def run(x):
        xg = nx(x @ Wx.T) + b
        h, c, out = torch.zeros(B, H), torch.zeros(B, H), []
        for t in range(T):
            a = xg[:, t] + nh(h @ Wh.T)
            f, i, o, g = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(nc(c))
            out.append(h)
        return torch.stack(out, 1)
    return run


def case(cell, kind, seed):
    torch.manual_seed(seed)
    P = Params()
    emb = P.add(0, "emb.weight", V, E, scale=1.0)
    layers = [(gru_layer if cell == "gru" else lstm_layer)(P, kind, l, E if l == 0 else H) for l in range(L)]
    Wo, bo = P.add(L, "head.weight", V, H), P.add(L, "head.bias", V, scale=0.1)
    tokens, targets = torch.randint(0, V, (B, T)), torch.randint(0, V, (B, T))
    x = emb[tokens]
    for run in layers:
        x = run(x)
    logits = (x @ Wo.T + bo).reshape(B * T, V)
    loss = F.cross_entropy(logits, targets.reshape(-1))
    loss.backward()
    tensors = {"tokens": tokens.reshape(-1), "targets": targets.reshape(-1), "logits": logits, "loss": loss.reshape(1)}
    for layer, name, t in P.named:
        tensors[f"p:{layer}:{name}"] = t
        tensors[f"g:{layer}:{name}"] = t.grad
    dump(f"rnn_{cell}_{kind}", {"V": V, "d_emb": E, "d_model": H, "n_layers": L, "B": B, "T": T, "eps": EPS,
                                "cell": cell, "norm": kind}, **tensors)


if __name__ == "__main__":
    case("gru", "layernorm", 1)
    case("gru", "rmsnorm", 2)
    case("lstm", "layernorm", 3)
    case("lstm", "none", 4)
