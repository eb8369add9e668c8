"""gradkit.optim.Muon against torch.optim.Muon: updates, state, state dicts and errors."""
import copy

import numpy as np
import pytest

import gradkit
from gradkit.optim import muon

torch = pytest.importorskip("torch")

def _run(lib, shape, dtype, steps=5, round_trip_at=None, **options):
    w0 = np.random.default_rng(sum(shape)).standard_normal(shape)
    target = np.random.default_rng(7).standard_normal(shape)
    w = lib.tensor(w0, dtype=getattr(lib, dtype), requires_grad=True)
    opt = lib.optim.Muon([w], lr=0.05, **options)
    for k in range(steps):
        opt.zero_grad()
        ((w - lib.tensor(target, dtype=w.dtype)) ** 2 + lib.sin(w)).sum().backward()
        opt.step()
        if k == round_trip_at:
            saved = copy.deepcopy(opt.state_dict())
            opt = lib.optim.Muon([w], lr=0.05, **options)
            opt.load_state_dict(saved)
    return w.detach().numpy(), opt


@pytest.mark.parametrize("shape,dtype,options", [
    ((3, 4), "float32", {}),
    ((5, 2), "float64", {"nesterov": False, "adjust_lr_fn": "match_rms_adamw"}),
    ((4, 4), "float32", {"momentum": 0.5, "weight_decay": 0.0, "ns_steps": 2}),
    ((6, 3), "float64", {"adjust_lr_fn": "original", "ns_coefficients": (2.0, -1.5, 0.5)}),
    ((1, 5), "float32", {"momentum": 0.0}),
])
def test_muon_steps_like_torch(shape, dtype, options):
    """torch iterates in bfloat16; gradkit rounds each result to bfloat16 the same way."""
    mine, opt = _run(gradkit, shape, dtype, round_trip_at=2, **options)
    theirs, topt = _run(torch, shape, dtype, round_trip_at=2, **options)
    np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-7)
    buf = opt.state[opt.param_groups[0]["params"][0]]["momentum_buffer"]
    tbuf = topt.state[topt.param_groups[0]["params"][0]]["momentum_buffer"]
    np.testing.assert_allclose(buf.numpy(), tbuf.numpy(), rtol=1e-6, atol=1e-7)
    assert sorted(opt.param_groups[0]) == sorted(topt.param_groups[0])
    assert opt.defaults == topt.defaults


def _error(lib, make):
    try:
        make(lib)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e).replace("gradkit.", "torch.")
    return None


def _stepped(lib, param, **options):
    opt = lib.optim.Muon([param], **options)
    param.grad = lib.ones_like(param)
    opt.step()


def _added_vector(lib):
    opt = lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)])
    opt.add_param_group({"params": [lib.zeros(3, requires_grad=True)]})
    for group in opt.param_groups:
        group["params"][0].grad = lib.ones_like(group["params"][0])
    opt.step()


def test_a_vector_added_later_is_refused_at_its_step_like_torch():
    theirs = _error(torch, _added_vector)
    assert theirs == ("ValueError", "Param gradient must be a 2D matrix")
    assert _error(gradkit, _added_vector) == theirs


@pytest.mark.parametrize("make", [
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], lr=-1.0),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], momentum=-0.5),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], weight_decay=-0.1),
    lambda lib: lib.optim.Muon([lib.zeros(2, 2, requires_grad=True)], adjust_lr_fn="other"),
    lambda lib: lib.optim.Muon([lib.zeros(3, requires_grad=True)]),
    lambda lib: lib.optim.Muon([lib.zeros(1, 2, 3, requires_grad=True)]),
    lambda lib: _stepped(lib, lib.zeros(2, 2, dtype=lib.complex64, requires_grad=True)),
    lambda lib: _stepped(lib, lib.zeros(2, 2, requires_grad=True), ns_steps=100),
    lambda lib: _stepped(lib, lib.zeros(2, 2, requires_grad=True), ns_coefficients=(1.0, 2.0)),
])
def test_muon_errors_match_torch(make):
    theirs = _error(torch, make)
    assert theirs is not None
    assert _error(gradkit, make) == theirs


def test_a_zero_gradient_leaves_the_parameter_but_for_weight_decay():
    """The norm is clamped at eps, so a zero update stays zero (no NaN), as torch's."""
    for lib in (gradkit, torch):
        w = lib.ones(2, 3, requires_grad=True)
        opt = lib.optim.Muon([w], lr=0.1, weight_decay=0.5)
        w.grad = lib.zeros(2, 3)
        opt.step()
        assert np.allclose(w.detach().numpy(), 1 - 0.1 * 0.5)


def _one_cycle_run(lib, start):
    """Fuzz seed 28055's run: two 2x3 float64 matrices, Muon under OneCycleLR for 3 steps."""
    base = np.concatenate([start, [-0.7, -0.38, -0.06, 0.26, 0.58, 0.9]])[:6].reshape(2, 3)
    ws = [lib.tensor(base * (1.0 - 0.3 * i) + (0.1 * i - 0.15), requires_grad=True)
          for i in range(2)]
    opt = lib.optim.Muon([{"params": ws, "lr": 0.05}], lr=0.1, momentum=0)
    scheduler = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
    for _ in range(3):
        opt.zero_grad()
        sum(((((w - 0.2) ** 2) * (1 + 0.5 * i) + 0.3 * lib.sin(w)).sum()
             for i, w in enumerate(ws))).backward()
        opt.step()
        scheduler.step()
    return np.stack([w.detach().numpy() for w in ws])


def test_a_float32_result_on_a_bfloat16_tie_rounds_as_torchs_fused_one():
    """At its second step this run's Newton-Schulz ``addmm`` gives, in plain float32, exactly
    a bfloat16 tie (0.20263671875) that torch's fused multiply-add lands just below: gradkit
    computes in float64 and rounds once, so it takes torch's side (fuzz seeds 28055, 37419)."""
    start = np.random.default_rng(28055).uniform(-1, 1, 2)
    np.testing.assert_array_equal(_one_cycle_run(gradkit, start), _one_cycle_run(torch, start))


def test_casting_a_double_to_bfloat16_rounds_twice_as_torch():
    """torch casts a double to bfloat16 through float32: a double just off a tie rounds to
    float32's tie, then to even (the gradient's cast at the iteration's start)."""
    tie = 0.20263671875  # halfway between the bfloat16 numbers 0.2021484375 and 0.203125
    values = [tie, tie - 1e-11, tie + 1e-11, -tie + 1e-11, 1.0 + 2.0 ** -8, 3e-41, -0.0]
    mine = muon._cast_to_bfloat16(gradkit.tensor(values, dtype=gradkit.float64))
    theirs = torch.tensor(values, dtype=torch.float64).bfloat16().double()
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_a_result_rounds_to_bfloat16_once():
    """A result (computed in float64) rounds by its side of a bfloat16 tie, a tie to even."""
    tie, below, above = 0.20263671875, 0.2021484375, 0.203125
    values = [tie, tie - 1e-11, tie + 1e-11, -tie + 1e-11, 1.0 + 2.0 ** -8, 1.0 + 2.0 ** -8 + 1e-12]
    mine = muon._bfloat16(gradkit.tensor(values, dtype=gradkit.float64)).numpy()
    np.testing.assert_array_equal(mine, [above, below, above, -below, 1.0, 1.0 + 2.0 ** -7])
