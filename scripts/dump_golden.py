#!/usr/bin/python3
"""Reference values from PyTorch for normtool's golden tests (tests/test_golden.cpp).

Run with Debian's interpreter, which has python3-torch:  /usr/bin/python3 scripts/dump_golden.py
Writes tests/golden/<case>.json: inputs, parameters, the upstream gradient `dout`, outputs,
and the gradients of L = sum(out * dout) for every input and parameter, all float32 values
stored exactly (as doubles). CI does not need PyTorch: the files are committed. The norms
without a function in torch 1.13 (rmsnorm, prmsnorm, scalenorm) are the twin's (scripts/torch_twin.py),
as are the models of the other dump scripts (twin_model), so the golden tests check the twin too.
"""
import json
import math
import pathlib

import torch
import torch.nn.functional as F

from torch_twin import MODELS, Norm, make_config, normtool_names

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden"
FORMAT = {"format": "normtool-golden", "version": 1, "torch": torch.__version__}


def dump(name, config, **tensors):
    OUT.mkdir(parents=True, exist_ok=True)
    body = dict(FORMAT, case=name, config=config, tensors={
        k: {"shape": list(v.shape), "data": v.detach().double().flatten().tolist()}
        for k, v in tensors.items()})
    (OUT / f"{name}.json").write_text(json.dumps(body, indent=None) + "\n")
    print(f"wrote {OUT / name}.json ({len(tensors)} tensors)")


def leaf(*shape, scale=1.0, shift=0.0):
    return (torch.randn(*shape) * scale + shift).requires_grad_()


def named(model):
    """normtool's "layer:name" of each parameter, in its order."""
    return {f"{layer}:{name}": p for (layer, name), p in normtool_names(model).items()}


def dump_case(name, config, model, logits, loss, **batch):
    """A model's case: the batch, the logits, the loss, and every parameter "p:<layer>:<name>" with its gradient
    "g:<layer>:<name>"."""
    loss.backward()
    tensors = dict(batch, logits=logits, loss=loss.reshape(1))
    for key, p in named(model).items():
        tensors["p:" + key], tensors["g:" + key] = p, p.grad
    dump(name, config, **tensors)


def twin_model(config, *args):
    """The twin's model of a config (a config file's object); its init draws leave the global generator alone,
    so that each case's draws (fill, then its batch) are the same whatever the twin's init."""
    c = make_config(config)
    with torch.random.fork_rng():
        return MODELS[c["model"]["arch"]](c, *args)


def fill(model, params, std_mean, linear_init=False):
    """Draws the model's parameters in the order of `params` ((name, parameter) pairs): randn * std + mean,
    (std, mean) = std_mean(name). linear_init: each Linear's init by torch draws first, as it did when the cases
    of dump_train_golden and dump_seq2seq_golden built their own torch.nn.Linear: their files keep their values."""
    linears = {id(m.weight): m for m in model.modules() if isinstance(m, torch.nn.Linear)}
    with torch.no_grad():
        for name, p in params:
            if linear_init and id(p) in linears:
                linears[id(p)].reset_parameters()
            std, mean = std_mean(name)
            p.copy_(torch.randn(p.shape) * std + mean)


def twin_norm(kind, x, weight, **norm):
    """The twin's Norm of that kind over x's rows, its gain the leaf `weight`."""
    n = Norm(make_config({"model": {"norm": dict(type=kind, **norm)}}), x.shape[-1])
    del n.weight
    n.weight = weight
    return n(x)


def backward(out):
    dout = torch.randn_like(out)
    (out * dout).sum().backward()
    return dout


def layernorm():
    N, C, eps = 8, 16, 1e-5
    x, w, b = leaf(N, C, scale=2.0, shift=0.5), leaf(C, shift=1.0), leaf(C)
    y = F.layer_norm(x, (C,), w, b, eps)
    dout = backward(y)
    dump("layernorm", {"N": N, "C": C, "eps": eps}, x=x, weight=w, bias=b, dout=dout, y=y,
         dx=x.grad, dweight=w.grad, dbias=b.grad)


def rmsnorm():  # torch 1.13 has no nn.RMSNorm: x / sqrt(mean(x^2) + eps) * g
    N, C, eps = 8, 16, 1e-5
    x, w = leaf(N, C, scale=2.0, shift=0.5), leaf(C, shift=1.0)
    y = twin_norm("rmsnorm", x, w, eps=eps)
    dout = backward(y)
    dump("rmsnorm", {"N": N, "C": C, "eps": eps}, x=x, weight=w, dout=dout, y=y, dx=x.grad, dweight=w.grad)


def prmsnorm():  # partial RMSNorm as the paper's code computes it (bzhangGo/rmsnorm): the mean over the first p C
    N, C, eps, p = 8, 64, 1e-5, 0.0625
    x, w = leaf(N, C, scale=2.0, shift=0.5), leaf(C, shift=1.0)
    y = twin_norm("prmsnorm", x, w, eps=eps, p=p)
    dout = backward(y)
    dump("prmsnorm", {"N": N, "C": C, "eps": eps, "p": p}, x=x, weight=w, dout=dout, y=y, dx=x.grad, dweight=w.grad)


def scalenorm():  # ScaleNorm (Nguyen & Salazar 2019): g x / sqrt(sum(x^2) + eps), one scalar gain
    N, C, eps = 8, 16, 1e-5
    x, g = leaf(N, C, scale=2.0, shift=0.5), leaf(1, scale=0.5, shift=4.0)
    y = twin_norm("scalenorm", x, g, eps=eps)
    dout = backward(y)
    dump("scalenorm", {"N": N, "C": C, "eps": eps}, x=x, weight=g, dout=dout, y=y, dx=x.grad, dweight=g.grad)


def dyt():  # Dynamic Tanh (Zhu et al. 2025): weight * tanh(alpha x) + bias, alpha one learnable scalar
    N, C = 8, 16
    x, a = leaf(N, C, scale=2.0, shift=0.5), leaf(1, scale=0.2, shift=0.5)
    w, b = leaf(C, scale=0.5, shift=1.0), leaf(C)
    n = Norm(make_config({"model": {"norm": {"type": "dyt"}}}), C)
    del n.alpha, n.weight, n.bias
    n.alpha, n.weight, n.bias = a, w, b
    y = n(x)
    dout = backward(y)
    dump("dyt", {"N": N, "C": C}, x=x, alpha=a, weight=w, bias=b, dout=dout, y=y, dx=x.grad, dalpha=a.grad,
         dweight=w.grad, dbias=b.grad)


def batchnorm():
    """nn.BatchNorm1d: one training step (batch statistics, running-stat update), then eval."""
    N, C, eps, momentum = 10, 6, 1e-5, 0.1
    bn = torch.nn.BatchNorm1d(C, eps=eps, momentum=momentum)
    with torch.no_grad():
        bn.weight.copy_(torch.randn(C) * 0.5 + 1.0)
        bn.bias.copy_(torch.randn(C))
    weight0, bias0 = bn.weight.detach().clone(), bn.bias.detach().clone()
    x = leaf(N, C, scale=2.0, shift=0.5)
    y = bn(x)
    dout = backward(y)
    x_eval = leaf(N, C, scale=2.0, shift=0.5)
    bn.eval()
    weight_grad_train = bn.weight.grad.clone()
    bias_grad_train = bn.bias.grad.clone()
    bn.weight.grad = None
    bn.bias.grad = None
    y_eval = bn(x_eval)
    dout_eval = backward(y_eval)
    dump("batchnorm", {"N": N, "C": C, "eps": eps, "momentum": momentum},
         x=x, weight=weight0, bias=bias0, dout=dout, y=y, dx=x.grad, dweight=weight_grad_train,
         dbias=bias_grad_train, running_mean=bn.running_mean, running_var=bn.running_var,
         x_eval=x_eval, dout_eval=dout_eval, y_eval=y_eval, dx_eval=x_eval.grad,
         dweight_eval=bn.weight.grad, dbias_eval=bn.bias.grad)


def batchnorm_sequence():
    """Sequences (B, T, C): batch_time = nn.BatchNorm1d over (B, C, T); batch = per (t, c) over B."""
    B, T, C, eps, momentum = 4, 5, 3, 1e-5, 0.1
    w, b = leaf(C, shift=1.0), leaf(C)
    x = leaf(B, T, C, scale=2.0, shift=0.5)
    rm_bt, rv_bt = torch.zeros(C), torch.ones(C)
    y_bt = F.batch_norm(x.transpose(1, 2), rm_bt, rv_bt, w, b, True, momentum, eps).transpose(1, 2)
    dout_bt = backward(y_bt)
    dx_bt, dw_bt, db_bt = x.grad.clone(), w.grad.clone(), b.grad.clone()
    x.grad, w.grad, b.grad = None, None, None
    rm_b, rv_b = torch.zeros(T * C), torch.ones(T * C)
    y_b = F.batch_norm(x.reshape(B, T * C), rm_b, rv_b, None, None, True, momentum, eps).reshape(B, T, C) * w + b
    dout_b = backward(y_b)
    dump("batchnorm_sequence", {"B": B, "T": T, "C": C, "eps": eps, "momentum": momentum},
         x=x, weight=w, bias=b,
         dout_batch_time=dout_bt, y_batch_time=y_bt, dx_batch_time=dx_bt, dweight_batch_time=dw_bt,
         dbias_batch_time=db_bt, running_mean_batch_time=rm_bt, running_var_batch_time=rv_bt,
         dout_batch=dout_b, y_batch=y_b, dx_batch=x.grad, dweight_batch=w.grad, dbias_batch=b.grad,
         running_mean_batch=rm_b, running_var_batch=rv_b)


def weightnorm():
    """torch.nn.utils.weight_norm on a Linear (dim=0: one norm per output row)."""
    N, IN, OUT_ = 6, 5, 4
    lin = torch.nn.utils.weight_norm(torch.nn.Linear(IN, OUT_))
    x = leaf(N, IN)
    g0, v0, b0 = (t.detach().clone() for t in (lin.weight_g, lin.weight_v, lin.bias))
    with torch.no_grad():
        lin.weight_g.mul_(torch.rand_like(lin.weight_g) + 0.5)
        g0 = lin.weight_g.detach().clone()
    y = lin(x)
    dout = backward(y)
    dump("weightnorm", {"N": N, "in": IN, "out": OUT_}, x=x, weight_v=v0, weight_g=g0, bias=b0, dout=dout, y=y,
         dx=x.grad, dweight_v=lin.weight_v.grad, dweight_g=lin.weight_g.grad, dbias=lin.bias.grad)


def attention():
    """One causal self-attention layer: q, k, v, out projections (with bias), 2 heads."""
    B, T, C, NH = 2, 5, 8, 2
    hs = C // NH
    x = leaf(B, T, C)
    lins = {n: torch.nn.Linear(C, C) for n in ("q", "k", "v", "out")}

    def heads(t):  # (B, T, C) -> (B, NH, T, hs)
        return t.view(B, T, NH, hs).transpose(1, 2)

    q, k, v = (heads(lins[n](x)) for n in ("q", "k", "v"))
    att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
    att = att.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf")).softmax(-1)
    y = lins["out"]((att @ v).transpose(1, 2).reshape(B, T, C))
    dout = backward(y)
    tensors = dict(x=x, dout=dout, y=y, dx=x.grad)
    for n, lin in lins.items():
        tensors.update({f"{n}_weight": lin.weight, f"{n}_bias": lin.bias,
                        f"d{n}_weight": lin.weight.grad, f"d{n}_bias": lin.bias.grad})
    dump("attention", {"B": B, "T": T, "C": C, "NH": NH}, **tensors)


def mlp_gelu():
    """Linear -> GELU (exact) -> Linear, the transformer's feed-forward block."""
    N, C, H = 6, 8, 16
    x = leaf(N, C)
    fc1, fc2 = torch.nn.Linear(C, H), torch.nn.Linear(H, C)
    y = fc2(F.gelu(fc1(x)))
    dout = backward(y)
    dump("mlp_gelu", {"N": N, "C": C, "H": H}, x=x, fc1_weight=fc1.weight, fc1_bias=fc1.bias,
         fc2_weight=fc2.weight, fc2_bias=fc2.bias, dout=dout, y=y, dx=x.grad,
         dfc1_weight=fc1.weight.grad, dfc1_bias=fc1.bias.grad, dfc2_weight=fc2.weight.grad, dfc2_bias=fc2.bias.grad)


def cross_entropy():
    """Mean cross-entropy over the rows whose target is not ignored (padding)."""
    N, V = 7, 11
    logits = leaf(N, V, scale=2.0)
    targets = torch.randint(0, V, (N,))
    targets[[1, 4]] = -100
    loss = F.cross_entropy(logits, targets, ignore_index=-100)
    loss.backward()
    dump("cross_entropy", {"N": N, "V": V}, logits=logits, targets=targets.float(), loss=loss.reshape(1),
         dlogits=logits.grad)


if __name__ == "__main__":
    torch.manual_seed(20261122)
    # new cases go last: the earlier ones keep their draws and their files
    for case in (layernorm, rmsnorm, batchnorm, batchnorm_sequence, weightnorm, attention, mlp_gelu, cross_entropy,
                 prmsnorm, scalenorm, dyt):
        case()
