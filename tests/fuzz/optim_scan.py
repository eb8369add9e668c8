"""Run torch's optimizer table (optim_db) through gradkit and torch; print differences.

    python tests/fuzz/optim_scan.py [--dtypes float32,float64] [--only Adam,SGD]

Needs torch (the pinned 2.13 CPU build) and expecttest (for torch.testing._internal). Each
optimizer input, with torch's foreach/fused/differentiable variants, runs four closure steps on
a Linear-like weight and bias (a differentiable input steps clones and checks the gradient
through the steps), three steps of complex64 parameters (test_complex), a step of parameters
without gradients and a deepcopy (test_step_is_noop_when_params_have_no_grad,
test_deepcopy_copies_all_public_attrs); each error input is built and stepped. Exits 1 when
any input differs.
"""
from __future__ import annotations

import copy
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradkit  # noqa: E402
import torch  # noqa: E402
from torch.testing._internal.common_optimizers import (  # noqa: E402
    OptimizerErrorEnum, _get_optim_inputs_including_global_cliquey_kwargs, optim_db)

from fuzz.opinfo_scan import (  # noqa: E402
    _TimeoutError, parse_scan_args, report, scan_parser, verdict)


def _converted(value, m):
    """torch's inputs (tensors in kwargs, parameter lists) as ``m``'s."""
    if isinstance(value, torch.Tensor):
        copy = value.detach().clone() if m is torch else gradkit.tensor(value.detach().numpy())
        return copy.requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(_converted(v, m) for v in value)
    if isinstance(value, dict):
        return {k: _converted(v, m) for k, v in value.items()}
    return value


def _outcome(run, m):
    try:
        return run(m)
    except _TimeoutError:  # the scan's time limit: no outcome
        raise
    except Exception as e:  # noqa: BLE001 - an error is an outcome to compare
        return ("raises", type(e).__name__,
                str(e).split("\n")[0].replace("gradkit", "torch")[:200])


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _values(t):
    return None if t is None else t.detach().numpy().copy()


def _steps(info, kwargs: dict, dtype: str):
    """Four steps of ``kwargs``'s optimizer: parameters after each, final state tensors and
    (differentiable) the gradient of the stepped parameters' sum through the steps."""
    name = info.optim_cls.__name__

    def run(m):
        rng = np.random.default_rng(0)
        w0, b0 = (m.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
                  for s in ((4, 3), (4,)))
        x = m.tensor(rng.standard_normal(3).astype(dtype))
        differentiable = kwargs.get("differentiable", False)
        w, b = (w0.clone(), b0.clone()) if differentiable else (w0, b0)
        optimizer = getattr(m.optim, name)([w, b], **_converted(kwargs, m))

        def closure():
            optimizer.zero_grad()
            loss = (w.mv(x) + b).pow(2).sum()
            loss.backward(inputs=[w, b], create_graph=differentiable)
            return loss

        out = []
        for _ in range(4):
            if info.step_requires_closure:
                optimizer.step(closure)
            else:
                closure()
                optimizer.step()
            out.append([_values(w), _values(b)])
        if name != "LBFGS":
            out.append([sorted((k, _values(v)) for k, v in optimizer.state[p].items()
                               if isinstance(v, m.Tensor)) for p in (w, b)])
        if differentiable:
            grads = m.autograd.grad(w.sum() + b.sum(), [w0, b0], allow_unused=True)
            out.append([_values(g) for g in grads])
        return out
    return run


def _complex_steps(info, kwargs: dict):
    """torch's test_complex: complex64 parameters (and a real one) with given gradients."""
    rng = np.random.default_rng(1)
    shapes = [(10, 5), (10,), (10, 5)]

    def draw(shape, real):
        values = rng.standard_normal(shape)
        return (values if real else values + 1j * rng.standard_normal(shape)).astype(
            np.float32 if real else np.complex64)

    values = [draw(s, k == 2) for k, s in enumerate(shapes)]
    grads = [[draw(s, k == 2) for k, s in enumerate(shapes)] for _ in range(3)]

    def run(m):
        params = [m.tensor(v.copy()).requires_grad_() for v in values]
        optimizer = getattr(m.optim, info.optim_cls.__name__)(params, **_converted(kwargs, m))
        for step in range(3):
            def closure(step=step):
                for p, g in zip(params, grads[step], strict=True):
                    p.grad = m.tensor(g.copy())
                return m.tensor(1.0)
            if info.step_requires_closure:
                optimizer.step(closure)
            else:
                closure()
                optimizer.step()
        return [_values(p) for p in params]
    return run


def _no_op_and_copies(info, kwargs: dict):
    """test_step_is_noop_when_params_have_no_grad, test_deepcopy_copies_all_public_attrs."""
    def run(m):
        params = [m.zeros(2, 3) + 1.5 for _ in range(2)]
        cls = getattr(m.optim, info.optim_cls.__name__)
        cls(params, **_converted(kwargs, m)).step(lambda: m.tensor([1.0]))
        stepped = [m.nn.Parameter(m.ones(2, 3)) for _ in range(2)]
        for p in stepped:
            p.grad = m.ones_like(p) * 0.5
        optimizer = cls(stepped, **_converted(kwargs, m))
        for _ in range(3):
            optimizer.step((lambda: 1) if info.step_requires_closure else None)
        public = sorted(k for k in vars(optimizer) if not k.startswith("_"))
        copied = sorted(k for k in vars(copy.deepcopy(optimizer)) if not k.startswith("_"))
        return [_values(p) for p in params], public, copied
    return run


def _error_input(info, error_input):
    optim_input = error_input.optimizer_error_input

    def run(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            optimizer = info.optim_cls.__name__
            optimizer = getattr(m.optim, optimizer)(_converted(optim_input.params, m),
                                                    **_converted(optim_input.kwargs, m))
            if error_input.error_on == OptimizerErrorEnum.STEP_ERROR:
                optimizer.step()
        return [str(w.message).replace("gradkit", "torch") for w in caught]
    return run


def _compare(run) -> str | None:
    ours, theirs = _outcome(run, gradkit), _outcome(run, torch)
    return None if _same(ours, theirs) else f"gradkit {str(ours)[:160]} torch {str(theirs)[:160]}"


def scan(only: set, dtypes: list, show: int) -> tuple[int, int]:
    total = bad = 0
    for info in optim_db:
        name = info.optim_cls.__name__
        if (only and name not in only) or not hasattr(gradkit.optim, name):
            continue
        for dtype in dtypes:
            inputs = _get_optim_inputs_including_global_cliquey_kwargs(
                "cpu", getattr(torch, dtype), info)
            total += len(inputs)
            bad += report(f"{name} [{dtype}", inputs,
                          lambda i, n=info, d=dtype: _compare(_steps(n, i.kwargs, d)), show,
                          lambda i: f"kwargs: {i.kwargs} ({i.desc})")
        inputs = _get_optim_inputs_including_global_cliquey_kwargs(
            "cpu", torch.complex64, info, skip=("differentiable",))
        total += 2 * len(inputs)
        bad += report(f"{name} [complex64", inputs,
                      lambda i, n=info: _compare(_complex_steps(n, i.kwargs)), show,
                      lambda i: f"kwargs: {i.kwargs} ({i.desc})")
        bad += report(f"{name} [no grad, deepcopy", inputs,
                      lambda i, n=info: _compare(_no_op_and_copies(n, i.kwargs)), show,
                      lambda i: f"kwargs: {i.kwargs} ({i.desc})")
        if info.optim_error_inputs_func is not None:
            errors = info.optim_error_inputs_func("cpu", torch.float32)
            total += len(errors)
            bad += report(f"{name} [error", errors, lambda e, n=info: _compare(_error_input(n, e)),
                          show, lambda e: e.optimizer_error_input.desc)
    return total, bad


def main() -> int:
    args, only = parse_scan_args(
        scan_parser(__doc__, "float32,float64", "optimizer class names", "optimizer"))
    return verdict(*scan(only, args.dtypes.split(","), args.show), "optimizer inputs")


if __name__ == "__main__":
    sys.exit(main())
