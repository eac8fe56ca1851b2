"""sharp's normalisers as PyTorch autograd functions, on the same kernels as sharp.normalise
(docs/architecture.md#python-module). Needs PyTorch (Debian python3-torch); CPU tensors of float32
or float64, rows along the last dimension.

One torch.autograd.Function per normaliser, named like it (Softmax, Adaptive, Ssmax, Topk, Argmax,
Sparsemax, Entmax15, Entmax, Asentmax, Asentmax_query (on rows alone, without hidden states, the
same as Asentmax), Stieltjes; FUNCTIONS maps names to them):

    p = sharp.torch.Softmax.apply(x, "softmax:beta=2")        # the spec's values
    p = sharp.torch.Softmax.apply(x, "softmax", beta)         # beta a tensor: dL/dbeta too
    p = sharp.torch.normalise(x, "entmax", alpha=alpha)       # by spec and keyword

The spec must be valid by itself; the tensors after it replace, in sharp.parameter_names(spec)
order, its continuous parameters (the ones the backward differentiates), and their gradient is the
sum over rows (sharp.torch.normalise adds a keyword the spec lacks). Inputs are
used without a copy when contiguous (a non-contiguous tensor is copied once).
"""
from __future__ import annotations

import numpy as np
import torch

from . import kernels

__all__ = ["FUNCTIONS", "normalise"]


def _spec_text(name: str, spec: str, values: tuple) -> tuple:
    """(canonical spec text with `values` in place of the continuous parameters, their names)."""
    parsed_name, params = kernels.parse_spec(spec)
    if parsed_name != name:
        raise kernels.BadInput(f"sharp.torch.{_class_name(name)} runs {name!r}, not the spec {spec!r}")
    names = kernels.parameter_names(kernels.format_spec(name, params))
    if values:
        if len(values) > len(names):
            raise kernels.BadInput(f"normaliser {name!r} has {len(names)} continuous parameter(s) "
                                   f"({', '.join(names) or 'none'}), got {len(values)} tensor(s)")
        params = dict(params, **{n: float(v) for n, v in zip(names, values)})
    return kernels.format_spec(name, params), names


def _as_numpy(t: torch.Tensor) -> np.ndarray:
    if t.device.type != "cpu":
        raise kernels.BadInput(f"sharp.torch runs on CPU tensors (got one on {t.device})")
    return t.detach().contiguous().numpy()


def _make_function(name: str) -> type:
    def forward(ctx, x, spec, *values):
        text, names = _spec_text(name, spec, values)
        p = torch.from_numpy(kernels.normalise(_as_numpy(x), text))
        ctx.save_for_backward(x, p)
        ctx.text, ctx.names, ctx.values = text, names, values
        return p

    def backward(ctx, grad_p):
        x, p = ctx.saved_tensors
        grad_x, per_row = kernels.normalise_backward(_as_numpy(x), _as_numpy(p), _as_numpy(grad_p),
                                                     ctx.text, parameters=True)
        grads = []
        for n, v in zip(ctx.names, ctx.values):
            if isinstance(v, torch.Tensor) and v.requires_grad:
                grads.append(torch.as_tensor(per_row[n].sum(), dtype=v.dtype).reshape(v.shape))
            else:
                grads.append(None)
        return (torch.from_numpy(grad_x), None, *grads)

    doc = (f"p = {_class_name(name)}.apply(x, spec, *parameters): the {name!r} normaliser along "
           f"the last dimension of x (sharp.torch module docs).")
    return type(_class_name(name), (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward), "__doc__": doc,
                 "__module__": __name__, "normaliser": name})


def _class_name(name: str) -> str:
    return name[:1].upper() + name[1:]


FUNCTIONS = {name: _make_function(name) for name in kernels.normaliser_names()}
globals().update({_class_name(name): f for name, f in FUNCTIONS.items()})
__all__ += [_class_name(name) for name in FUNCTIONS]


def normalise(x: torch.Tensor, spec: str, **parameters) -> torch.Tensor:
    """The normaliser `spec` along the last dimension of x; keyword tensors (or numbers) set the
    spec's continuous parameters by name and tensors get gradients, e.g. normalise(x, "softmax",
    beta=beta) or normalise(x, "ssmax", s=s) (a parameter the spec does not give is added to it)."""
    given = {item.split("=", 1)[0].strip() for item in spec.split(":")[1:]}
    spec = spec + "".join(f":{k}={float(v)!r}" for k, v in parameters.items() if k not in given)
    name, values = kernels.parse_spec(spec)
    names = kernels.parameter_names(spec)
    unknown = sorted(set(parameters) - set(names))
    if unknown:
        raise kernels.BadInput(f"normaliser {name!r}: no continuous parameter {', '.join(unknown)} "
                               f"(it has: {', '.join(names) or 'none'})")
    return FUNCTIONS[name].apply(x, spec, *[parameters.get(n, values[n]) for n in names])
