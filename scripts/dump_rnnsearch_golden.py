#!/usr/bin/python3
"""PyTorch reference values for RNNSearch (model.arch rnnsearch, tests/test_rnnsearch.cpp).

Run with Debian's interpreter, which has python3-torch:  /usr/bin/python3 scripts/dump_rnnsearch_golden.py
Writes tests/golden/rnnsearch_<norm>.json in the format of scripts/dump_golden.py: every parameter
as "p:0:<name>" (normtool's names, all of layer 0), a padded batch (src, src_mask, tokens =
BOS + target, targets = target + EOS, mask), the logits, the loss over the real targets and every
parameter's gradient "g:0:<name>".

The model, written from Nematus v0.3's definitions (model.py, layers.py, nematus_compat false),
not from normtool's code; n() is the configured norm, the identity for none:
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
import torch.nn.functional as F

from dump_golden import dump
from dump_rnn_golden import EPS, Params, make_norm

V, E, H, B, S, T = 16, 6, 5, 3, 5, 4


def gru(P, kind, name, d_in):
    Wg, bg = P.add(0, name + ".W_g.weight", 2 * H, d_in), P.add(0, name + ".W_g.bias", 2 * H, scale=0.1)
    Wc, bc = P.add(0, name + ".W_c.weight", H, d_in), P.add(0, name + ".W_c.bias", H, scale=0.1)
    Ug, Uc = P.add(0, name + ".U_g.weight", 2 * H, H), P.add(0, name + ".U_c.weight", H, H)
    ngx, ncx = make_norm(P, kind, 0, name + ".norm_gx", 2 * H), make_norm(P, kind, 0, name + ".norm_cx", H)
    ngh, nch = make_norm(P, kind, 0, name + ".norm_gh", 2 * H), make_norm(P, kind, 0, name + ".norm_ch", H)

    def step(x, h):
        gates = torch.sigmoid(ngx(x @ Wg.T + bg) + ngh(h @ Ug.T))
        r, u = gates[:, :H], gates[:, H:]
        p = torch.tanh(ncx(x @ Wc.T + bc) + r * nch(h @ Uc.T))
        return u * h + (1 - u) * p
    return step


def case(kind, seed):
    torch.manual_seed(seed)
    P = Params()
    src_emb = P.add(0, "src_emb.weight", V, E, scale=1.0)
    fwd, bwd = gru(P, kind, "enc_fwd", E), gru(P, kind, "enc_bwd", E)
    Wi, bi = P.add(0, "init.weight", H, 2 * H), P.add(0, "init.bias", H, scale=0.1)
    ni = make_norm(P, kind, 0, "init.norm", H)
    tgt_emb = P.add(0, "tgt_emb.weight", V, E, scale=1.0)
    dec1 = gru(P, kind, "dec1", E)
    Wa, ba = P.add(0, "attention.W_a.weight", 2 * H, 2 * H), P.add(0, "attention.W_a.bias", 2 * H, scale=0.1)
    Ua, v = P.add(0, "attention.U_a.weight", 2 * H, H), P.add(0, "attention.v.weight", 1, 2 * H)
    nk, nq = make_norm(P, kind, 0, "attention.norm_keys", 2 * H), make_norm(P, kind, 0, "attention.norm_query", 2 * H)
    dec2 = gru(P, kind, "dec2", 2 * H)
    Ws, bs = P.add(0, "readout.W_s.weight", E, H), P.add(0, "readout.W_s.bias", E, scale=0.1)
    Wy, Wc = P.add(0, "readout.W_y.weight", E, E), P.add(0, "readout.W_c.weight", E, 2 * H)
    no = make_norm(P, kind, 0, "readout.norm", E)
    Wo, bo = P.add(0, "head.weight", V, E), P.add(0, "head.bias", V, scale=0.1)

    # a padded batch: source lengths 5, 3, 1; target lengths (with BOS / EOS) 4, 2, 3
    src_len, tgt_len = [5, 3, 1], [4, 2, 3]
    src = torch.randint(4, V, (B, S))
    sm = torch.tensor([[1.0 if j < n else 0.0 for j in range(S)] for n in src_len])
    src = src * sm.long()
    tokens, targets = torch.randint(4, V, (B, T)), torch.randint(4, V, (B, T))
    tm = torch.tensor([[1.0 if t < n else 0.0 for t in range(T)] for n in tgt_len])
    tokens, targets = tokens * tm.long(), targets * tm.long()
    tokens[:, 0] = 2  # BOS

    x = src_emb[src]
    ann = []
    for step, order in ((fwd, range(S)), (bwd, reversed(range(S)))):
        h, out = torch.zeros(B, H), [None] * S
        for j in order:
            m = sm[:, j:j + 1]
            h = m * step(x[:, j], h) + (1 - m) * h
            out[j] = h
        ann.append(torch.stack(out, 1))
    ann = torch.cat(ann, -1)  # (B, S, 2H)
    mean = (ann * sm[:, :, None]).sum(1) / sm.sum(1, keepdim=True)
    s = torch.tanh(ni(mean @ Wi.T + bi))
    keys = nk(ann @ Wa.T + ba)
    y = tgt_emb[tokens]
    states, ctxs = [], []
    for t in range(T):
        s1 = dec1(y[:, t], s)
        e = (torch.tanh(keys + nq(s1 @ Ua.T)[:, None, :]) @ v.T).squeeze(-1)
        alpha = e.masked_fill(sm == 0, float("-inf")).softmax(-1)
        c = (alpha[:, :, None] * ann).sum(1)
        s = dec2(c, s1)
        states.append(s)
        ctxs.append(c)
    states, ctxs = torch.stack(states, 1), torch.stack(ctxs, 1)
    o = torch.tanh(no(states @ Ws.T + bs + y @ Wy.T + ctxs @ Wc.T))
    logits = (o @ Wo.T + bo).reshape(B * T, V)
    w = tm.reshape(-1)
    loss = (F.cross_entropy(logits, targets.reshape(-1), reduction="none") * w).sum() / w.sum()
    loss.backward()
    tensors = {"src": src.reshape(-1), "src_mask": sm.reshape(-1), "tokens": tokens.reshape(-1),
               "targets": targets.reshape(-1), "mask": w, "logits": logits, "loss": loss.reshape(1)}
    for layer, name, t in P.named:
        tensors[f"p:{layer}:{name}"] = t
        tensors[f"g:{layer}:{name}"] = t.grad
    dump(f"rnnsearch_{kind}", {"V": V, "d_emb": E, "d_model": H, "B": B, "S": S, "T": T, "eps": EPS, "norm": kind},
         **tensors)


if __name__ == "__main__":
    case("layernorm", 1)
    case("rmsnorm", 2)
    case("none", 3)
