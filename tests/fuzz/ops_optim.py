"""The optimizer lane's scenarios for the fuzzer (class ``optim``: ``run_fuzz.py --classes optim``).

One step ``o_run`` is a whole training run drawn at random: an optimizer of ``lib.optim`` with
random options, one or two parameter groups of parameters made from the step's input (float32,
float64 or complex; 0-d, empty, vectors, matrices; some that get no gradient on some steps),
a loss of them, a few steps (a closure for LBFGS), optionally an lr scheduler of any class,
``zero_grad(set_to_none=...)``, a state_dict round trip into a fresh optimizer (and
scheduler) mid-run and ``add_param_group``. Its result is the trace of what the run holds
after every step: the loss, every parameter, every state value (with codes for the state's
keys and dtypes), every param group's hyper-parameters (with codes for their keys) and the
scheduler's ``get_last_lr()`` and ``last_epoch``. Numbers above 1 in magnitude are traced as
``1 + log|x|`` (signed), so a large step count or ``t0`` does not loosen the comparison of the
rest (the runner's tolerance scales with the largest value). Errors compare by type and text
(``error_problems``).
"""
from __future__ import annotations

import copy
import dataclasses

import numpy as np

from .ops_core import OpSpec

# -- drawing a run ------------------------------------------------------------------------
_LR = (0.01, 0.1, 0.5)
_BETAS = ((0.9, 0.999), (0.8, 0.9), (0.5, 0.5))
_IMPL = ("foreach",)            # every optimizer takes foreach (None, True or False)


def _pick(draw, **choices):
    """One drawn value per option (a tuple of choices), each option present half the time."""
    return {name: draw.choice(values) for name, values in choices.items() if draw.boolean()}


OPTIMIZERS = {
    "SGD": lambda d: _pick(d, lr=_LR, momentum=(0, 0.9, 0.5), dampening=(0, 0.1),
                           nesterov=(True, False), weight_decay=(0, 0.1),
                           maximize=(True, False), fused=(None, False, True)),
    "Adam": lambda d: _pick(d, lr=_LR, betas=_BETAS, eps=(1e-8, 1e-3), weight_decay=(0, 0.1),
                            amsgrad=(True, False), maximize=(True, False),
                            capturable=(False,), fused=(None, False, True),
                            decoupled_weight_decay=(True, False)),
    "AdamW": lambda d: _pick(d, lr=_LR, betas=_BETAS, eps=(1e-8, 1e-3), weight_decay=(0, 0.1),
                             amsgrad=(True, False), maximize=(True, False),
                             capturable=(False,), fused=(None, False, True)),
    "Adagrad": lambda d: _pick(d, lr=_LR, lr_decay=(0, 0.01), weight_decay=(0, 0.1),
                               initial_accumulator_value=(0, 0.5), eps=(1e-10, 1e-3),
                               maximize=(True, False), fused=(None, False, True)),
    "RMSprop": lambda d: _pick(d, lr=_LR, alpha=(0.99, 0.9), eps=(1e-8, 1e-3),
                               weight_decay=(0, 0.1), momentum=(0, 0.9), centered=(True, False),
                               maximize=(True, False)),
    "Rprop": lambda d: _pick(d, lr=_LR, etas=((0.5, 1.2), (0.3, 1.5)),
                             step_sizes=((1e-6, 50), (1e-3, 0.2)), maximize=(True, False)),
    "Adadelta": lambda d: _pick(d, lr=(1.0, 0.5), rho=(0.9, 0.8), eps=(1e-6, 1e-4),
                                weight_decay=(0, 0.1), maximize=(True, False)),
    "Adamax": lambda d: _pick(d, lr=_LR, betas=_BETAS, eps=(1e-8, 1e-3), weight_decay=(0, 0.1),
                              maximize=(True, False)),
    "NAdam": lambda d: _pick(d, lr=_LR, betas=_BETAS, eps=(1e-8, 1e-3), weight_decay=(0, 0.1),
                             momentum_decay=(4e-3, 0.01), decoupled_weight_decay=(True, False),
                             maximize=(True, False)),
    "RAdam": lambda d: _pick(d, lr=_LR, betas=_BETAS, eps=(1e-8, 1e-3), weight_decay=(0, 0.1),
                             decoupled_weight_decay=(True, False), maximize=(True, False)),
    "ASGD": lambda d: _pick(d, lr=_LR, lambd=(1e-4, 0.01), alpha=(0.75, 0.5), t0=(1e6, 2, 0),
                            weight_decay=(0, 0.1), maximize=(True, False)),
    "LBFGS": lambda d: _pick(d, lr=(1, 0.5), max_iter=(3, 20), tolerance_grad=(1e-7, 1e-3),
                             history_size=(2, 100), line_search_fn=(None, "strong_wolfe")),
    "Adafactor": lambda d: _pick(d, lr=(1e-2, 0.05), beta2_decay=(-0.8, -0.5),
                                 eps=((None, 1e-3), (1e-20, 1e-2)), d=(1.0, 2.0),
                                 weight_decay=(0, 0.1), maximize=(True, False)),
    "Muon": lambda d: _pick(d, lr=_LR, weight_decay=(0, 0.1), momentum=(0.95, 0.5, 0),
                            nesterov=(True, False), ns_steps=(5, 1, 100),
                            ns_coefficients=((3.4445, -4.775, 2.0315), (2.0, -1.5, 0.5)),
                            adjust_lr_fn=(None, "original", "match_rms_adamw", "other")),
}
_NO_FOREACH = {"LBFGS", "Muon"}

_LAMBDAS = {"halve": lambda e: 0.5 ** (e // 2), "inverse": lambda e: 1.0 / (e + 1),
            "decay": lambda e: 0.9}
SIMPLE_SCHEDULERS = {
    "LambdaLR": lambda d: {"lr_lambda": d.choice(("halve", "inverse"))},
    "MultiplicativeLR": lambda d: {"lr_lambda": "decay"},
    "StepLR": lambda d: {"step_size": d.integer(1, 3), **_pick(d, gamma=(0.1, 0.5))},
    "MultiStepLR": lambda d: {"milestones": d.choice(([1, 3], [2, 2, 4])),
                              **_pick(d, gamma=(0.1, 0.5))},
    "ConstantLR": lambda d: _pick(d, factor=(1 / 3, 0.5), total_iters=(2, 5)),
    "LinearLR": lambda d: _pick(d, start_factor=(1 / 3, 0.1), end_factor=(1.0, 0.5),
                                total_iters=(2, 5)),
    "ExponentialLR": lambda d: {"gamma": d.choice((0.9, 0.5))},
    "PolynomialLR": lambda d: _pick(d, total_iters=(3, 5), power=(1.0, 2.0)),
    "CosineAnnealingLR": lambda d: {"T_max": d.integer(1, 5), **_pick(d, eta_min=(0, 1e-3))},
}
SCHEDULERS = {
    **SIMPLE_SCHEDULERS,
    "CyclicLR": lambda d: {"base_lr": 1e-3, "max_lr": 0.1, "step_size_up": d.integer(1, 3),
                           **_pick(d, step_size_down=(None, 2),
                                   mode=("triangular", "triangular2", "exp_range"),
                                   gamma=(0.9,), cycle_momentum=(True, False),
                                   base_momentum=(0.8,), max_momentum=(0.9,))},
    "OneCycleLR": lambda d: {"max_lr": d.choice((0.1, 0.5)), "total_steps": d.integer(3, 8),
                             **_pick(d, pct_start=(0.3, 0.5), anneal_strategy=("cos", "linear"),
                                     three_phase=(True, False), cycle_momentum=(True, False),
                                     div_factor=(25.0, 4.0), final_div_factor=(1e4, 10.0))},
    "CosineAnnealingWarmRestarts": lambda d: {"T_0": d.integer(1, 3),
                                              **_pick(d, T_mult=(1, 2), eta_min=(0, 1e-3))},
    "ReduceLROnPlateau": lambda d: _pick(d, mode=("min", "max"), factor=(0.1, 0.5),
                                         patience=(0, 1), threshold=(1e-4, 0.1),
                                         threshold_mode=("rel", "abs"), cooldown=(0, 1),
                                         min_lr=(0, 0.01)),
    "SequentialLR": lambda d: {"schedulers": [_simple(d), _simple(d)],
                               "milestones": [d.integer(1, 3)]},
    "ChainedScheduler": lambda d: {"schedulers": [_simple(d), _simple(d)]},
    "SWALR": lambda d: {"swa_lr": d.choice((0.05, 1e-3)),
                        **_pick(d, anneal_epochs=(1, 3), anneal_strategy=("cos", "linear"))},
}
_PARAM_KINDS = ("as_input", "vector", "matrix", "scalar", "empty", "matrix3", "vector")
_DTYPES = ("float64", "float64", "float32", "complex128", "complex64")


def _simple(draw) -> tuple:
    kind = draw.choice(tuple(SIMPLE_SCHEDULERS))
    return kind, SIMPLE_SCHEDULERS[kind](draw)


def _group(draw, dtype: str, kinds: tuple = _PARAM_KINDS) -> dict:
    """A group: its parameters (kind, dtype, requires_grad) and per-group options."""
    params = [(draw.choice(kinds), dtype if draw.chance(0.8) else draw.choice(_DTYPES),
               not draw.chance(0.05)) for _ in range(draw.integer(1, 3))]
    return {"params": params, "options": _pick(draw, lr=(0.05,)) if draw.chance(0.3) else {}}


def _run_params(draw, shapes) -> dict:
    name = draw.choice(tuple(OPTIMIZERS))
    options = OPTIMIZERS[name](draw)
    if name not in _NO_FOREACH and draw.boolean():
        options["foreach"] = draw.choice((None, True, False))
    if draw.chance(0.05):       # torch's errors for a bad value
        options[draw.choice(("lr", "eps", "weight_decay"))] = -0.1
    dtype = draw.choice(_DTYPES)
    # Muon takes matrices only: mostly those (its error for others now and then)
    kinds = ("matrix",) * 12 + _PARAM_KINDS if name == "Muon" else _PARAM_KINDS
    groups = [_group(draw, dtype, kinds) for _ in range(1 if draw.chance(0.7) else 2)]
    steps = draw.integer(2, 6)
    scheduler = None
    if draw.chance(0.6):
        kind = draw.choice(tuple(SCHEDULERS))
        scheduler = (kind, SCHEDULERS[kind](draw))
    return {"optimizer": name, "options": options, "groups": groups, "steps": steps,
            "scheduler": scheduler, "set_to_none": draw.boolean(),
            # (step, parameter index): a parameter left out of that step's loss
            "skip": [(draw.integer(0, steps - 1), draw.integer(0, 5))
                     for _ in range(draw.integer(0, 2))],
            "round_trip": draw.integer(0, steps - 1) if draw.chance(0.3) else None,
            "add_group": (draw.integer(0, steps - 1), _group(draw, dtype, kinds))
            if draw.chance(0.2) else None}


# -- running it --------------------------------------------------------------------------
_FILL = (-0.7, -0.38, -0.06, 0.26, 0.58, 0.9)


def _base(lib, x):
    """x's values, then six fixed ones: every kind of parameter has values to take."""
    return lib.cat([x.detach().reshape(-1).double(), lib.tensor(_FILL, dtype=lib.float64)])


def _make_param(lib, x, base, i, kind, dtype, requires_grad):
    a, b = 1.0 - 0.3 * (i % 3), 0.1 * (i % 4) - 0.15
    if kind == "as_input":
        value = x.detach().double()
    else:
        value = {"vector": base[:4], "matrix": base[:6].reshape(2, 3), "scalar": base[1],
                 "empty": base[:0], "matrix3": base[:6].reshape(1, 2, 3)}[kind]
    value = value * a + b
    if dtype.startswith("complex"):
        value = value.to(getattr(lib, dtype)) + (value * 0.5 - 0.2).to(getattr(lib, dtype)) * 1j
    return value.to(getattr(lib, dtype)).clone().requires_grad_(requires_grad)


def _loss(lib, params, skipped):
    """A smooth non-quadratic loss of the parameters not in ``skipped`` (a 0-d float64)."""
    total = lib.zeros((), dtype=lib.float64)
    for i, p in enumerate(params):
        if i in skipped or not p.requires_grad:
            continue
        r = lib.view_as_real(p) if p.is_complex() else p
        total = total + (((r - 0.2) ** 2) * (1 + 0.5 * i) + 0.3 * lib.sin(r)).sum().double()
    return total


def _scheduler(lib, optimizer, spec):
    kind, options = spec
    options = dict(options)
    if "lr_lambda" in options:
        options["lr_lambda"] = _LAMBDAS[options["lr_lambda"]]
    if "schedulers" in options:
        options["schedulers"] = [_scheduler(lib, optimizer, s) for s in options["schedulers"]]
        if kind == "ChainedScheduler":
            return lib.optim.lr_scheduler.ChainedScheduler(optimizer=optimizer, **options)
    module = lib.optim.swa_utils if kind == "SWALR" else lib.optim.lr_scheduler
    return getattr(module, kind)(optimizer, **options)


def _build(lib, params_of_groups, p):
    groups = [{"params": ps, **g["options"]} for ps, g in zip(params_of_groups, p["groups"])]
    optimizer = getattr(lib.optim, p["optimizer"])(groups, **p["options"])
    return optimizer, p["scheduler"] and _scheduler(lib, optimizer, p["scheduler"])


def _closure(lib, optimizer, params, skipped, set_to_none, losses):
    def closure():
        optimizer.zero_grad(set_to_none=set_to_none)
        loss = _loss(lib, params, skipped)
        losses.append(loss.detach().reshape(1))
        if loss.requires_grad:
            loss.backward()
        return loss
    return closure


def _run_fn(lib, x, **p):
    """The run ``p`` (drawn by ``_run_params``) on parameters made from x: its trace (with
    ``evaluations=True`` in ``p``: every loss the closure computed, in float64)."""
    base = _base(lib, x)
    count = iter(range(100))
    params_of_groups = [[_make_param(lib, x, base, next(count), *spec) for spec in g["params"]]
                        for g in p["groups"]]
    params = [q for g in params_of_groups for q in g]
    optimizer, scheduler = _build(lib, params_of_groups, p)
    trace, losses = [], []
    for k in range(p["steps"]):
        skipped = {i for step, i in p["skip"] if step == k}
        if p["add_group"] and p["add_group"][0] == k:
            spec = p["add_group"][1]
            new = [_make_param(lib, x, base, next(count), *s) for s in spec["params"]]
            optimizer.add_param_group({"params": new, **spec["options"]})
            params += new
        closure = _closure(lib, optimizer, params, skipped, p["set_to_none"], losses)
        if p["optimizer"] == "LBFGS":
            loss = optimizer.step(closure)
        else:
            loss = closure()
            optimizer.step()
        if scheduler is not None:
            if p["scheduler"][0] == "ReduceLROnPlateau":
                scheduler.step(float(loss))
            else:
                scheduler.step()
        trace += _record(lib, loss, params, optimizer, scheduler)
        if p["round_trip"] == k:
            saved = copy.deepcopy(optimizer.state_dict())
            saved_scheduler = scheduler and copy.deepcopy(scheduler.state_dict())
            optimizer, scheduler = _build(lib, [g["params"] for g in optimizer.param_groups],
                                          {**p, "groups": [{"options": {}}] * len(
                                              optimizer.param_groups)})
            optimizer.load_state_dict(saved)
            if scheduler is not None:
                scheduler.load_state_dict(saved_scheduler)
    if p.get("evaluations"):
        return lib.cat(losses)
    single = any(q.dtype in (lib.float32, lib.complex64) for q in params)
    out = lib.cat(trace).to(lib.float32 if single else lib.float64)
    # |x| > 1 as 1 + log|x|: keeps relative differences, bounds the tolerance's scale
    big = out.abs() > 1
    return lib.where(big, out.sign() * (1 + out.abs().clamp(min=1).log()), out)


# codes in [0, 1) for the names and kinds a run's structure is made of
_KEYS = ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach",
         "differentiable", "fused", "betas", "eps", "amsgrad", "capturable",
         "decoupled_weight_decay", "lr_decay", "initial_accumulator_value", "alpha", "centered",
         "etas", "step_sizes", "rho", "momentum_decay", "lambd", "t0", "max_iter", "max_eval",
         "tolerance_grad", "tolerance_change", "history_size", "line_search_fn", "beta2_decay",
         "d", "initial_lr", "base_momentum", "max_momentum", "max_lr", "min_lr",
         "step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer", "sum",
         "square_avg", "grad_avg", "acc_delta", "prev", "exp_inf", "mu_product", "eta", "mu",
         "ax", "row_var", "col_var", "variance", "func_evals", "n_iter", "old_dirs", "old_stps",
         "ro", "H_diag", "prev_flat_grad", "prev_loss", "al", "t", "params", "strong_wolfe",
         "ns_coefficients", "ns_steps", "adjust_lr_fn", "original", "match_rms_adamw")
_KINDS = ("None", "bool", "int", "float", "str", "list", "float32", "float64", "complex64",
          "complex128", "int64")


def _code(table, name) -> float:
    return (table.index(name) + 1) / 128 if name in table else 0.99


def _number(lib, v):
    return lib.tensor([float(v)], dtype=lib.float64)


def _value(lib, v) -> list:
    """A value of a state or a group as codes and numbers (a tensor's elements in order)."""
    if isinstance(v, lib.Tensor):
        v = v.detach()
        flat = (lib.view_as_real(v) if v.is_complex() else v).reshape(-1).double()
        return [_number(lib, _code(_KINDS, str(v.dtype).split(".")[-1])), flat]
    if isinstance(v, (list, tuple)):
        return [_number(lib, _code(_KINDS, "list") + len(v))] + [
            piece for item in v for piece in _value(lib, item)]
    if isinstance(v, dict):  # a scheduler's state dict (its keys not compared: in torch's order)
        return [_number(lib, _code(_KINDS, "list") + len(v))] + [
            piece for key in sorted(v, key=str) for piece in _value(lib, v[key])]
    if callable(v):
        return [_number(lib, _code(_KINDS, "str"))]
    kind = "None" if v is None else type(v).__name__
    number = 0.0 if v is None or isinstance(v, str) else v
    return [_number(lib, _code(_KINDS, kind)),
            _number(lib, _code(_KEYS, v) if isinstance(v, str) else number)]


def _record(lib, loss, params, optimizer, scheduler) -> list:
    out = _value(lib, loss)
    for q in params:
        out += _value(lib, q)
        state = optimizer.state.get(q, {})
        for key in sorted(state):
            out += [_number(lib, _code(_KEYS, key))] + _value(lib, state[key])
    for group in optimizer.param_groups:
        for key in sorted(k for k in group if k not in ("params", "param_names")):
            out += [_number(lib, _code(_KEYS, key))] + _value(lib, group[key])
    if scheduler is not None:
        out += _value(lib, scheduler.get_last_lr()) + _value(
            lib, getattr(scheduler, "last_epoch", None)) + _value(lib, scheduler.state_dict())
    return out


def error_problems(mine, theirs) -> list:
    """An error of both runs must have torch's type and text (the generic comparison reads
    only the family)."""
    if mine.error is None or theirs.error is None:
        return []
    message = mine.message.replace("gradkit.", "torch.")   # dtypes' module names
    if mine.error[2] != theirs.error[2] or message != theirs.message:
        return [f"error text: gradkit {mine.error[2]}: {mine.message!r}, torch "
                f"{theirs.error[2]}: {theirs.message!r}"]
    return []


OPTIM_OPS: dict[str, OpSpec] = {"o_run": OpSpec(1, _run_fn, _run_params)}


# -- known differences (tests/fuzz/known.py lists them with their docs) ----------------------
_WIDER = {"float32": "float64", "complex64": "complex128"}


def _single_lbfgs(step) -> bool:
    return step.op == "o_run" and step.params["optimizer"] == "LBFGS" and any(
        dtype in _WIDER for _, dtype, _ in _param_specs(step.params))


def _param_specs(params: dict) -> list:
    groups = params["groups"] + ([params["add_group"][1]] if params["add_group"] else [])
    return [spec for g in groups for spec in g["params"]]


def _widened(params: dict) -> dict:
    def group(g):
        return {**g, "params": [(k, _WIDER.get(d, d), rg) for k, d, rg in g["params"]]}
    add = params["add_group"]
    return {**params, "groups": [group(g) for g in params["groups"]],
            "add_group": add and (add[0], group(add[1]))}


def single_precision_lbfgs(program, mine, theirs, diff) -> bool:
    """Values of a single-precision LBFGS run differ, and the same program with that run in
    double precision agrees (``diff(program)``: its problems no known difference explains,
    such as the noise of its other float32 values: optim seed 201557): LBFGS's convergence
    tests compare float32 rounding noise, so the iteration count differs; or this run's line
    search meets two equal step lengths, Python floats, whose cubic interpolation divides by
    their difference and raises (optim seed 355481: torch's same code on the same numbers)."""
    if theirs.error is not None or mine.error is not None and mine.error[2] != \
            "ZeroDivisionError":
        return False
    if not any(_single_lbfgs(step) for step in program.steps):
        return False
    steps = tuple(step._replace(params=_widened(step.params)) if _single_lbfgs(step) else step
                  for step in program.steps)
    return not diff(dataclasses.replace(program, steps=steps))


def lbfgs_parting_at_convergence(program, mine, theirs, run_both) -> bool:
    """Runs with LBFGS's strong-Wolfe line search whose double-precision (widened) runs
    evaluate losses that agree to a relative 1e-13 until, the loss converged (its last two
    values changing by less than LBFGS's default ``tolerance_change``, 1e-9), one line search
    picks another step; ``run_both(program)``: (gradkit's Result, torch's). NumPy's sums and
    dot products round otherwise than torch's vectorized ones, and there a comparison of
    losses an ulp apart decides (optim seeds 318744, 329206)."""
    at = [len(program.leaves) + i for i, step in enumerate(program.steps)
          if step.op == "o_run" and step.params["optimizer"] == "LBFGS"
          and step.params["options"].get("line_search_fn") == "strong_wolfe"]
    if not at or mine.error is not None or theirs.error is not None:
        return False
    steps = tuple(step._replace(params={**_widened(step.params), "evaluations": True})
                  if step.op == "o_run" else step for step in program.steps)
    ours, torchs = run_both(dataclasses.replace(program, steps=steps))
    if ours.error is not None or torchs.error is not None:
        return False
    parted = [k for k in at if not np.array_equal(ours.values[k], torchs.values[k])]
    return bool(parted) and all(_parts_at_convergence(ours.values[k], torchs.values[k])
                                for k in parted)


def _parts_at_convergence(a, b) -> bool:
    """Loss sequences a and b agree to a relative 1e-13, then part, the last two distinct
    agreeing losses closer than 1e-9."""
    n = min(len(a), len(b))
    close = np.isclose(a[:n], b[:n], rtol=1e-13, atol=0)
    agreed = a[:n] if close.all() else a[:int(np.argmin(close))]
    distinct = agreed[np.r_[True, np.diff(agreed) != 0]]
    return len(distinct) >= 2 and abs(distinct[-1] - distinct[-2]) < 1e-9


def negated_complex_zero(program, problems) -> bool:
    """Only signed zeros differ, of a run with maximize=True and a complex parameter: torch
    negates a complex gradient as 0 - g in its vectorized lanes (+0.0 for a zero) and as -g
    in the tail (-0.0); Rprop's ``prev`` keeps it."""
    return all(p.startswith("signed zero") for p in problems) and any(
        step.op == "o_run" and step.params["options"].get("maximize")
        and any(d.startswith("complex") for _, d, _ in _param_specs(step.params))
        for step in program.steps)
