"""What the optim fuzz class found (tests/fuzz/ops_optim.py), each against torch."""
import copy
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")

from fuzz.known import diff_program  # noqa: E402
from fuzz.ops_optim import _parts_at_convergence  # noqa: E402
from fuzz.programs import RandomDrawer, generate  # noqa: E402


def _loss(lib, params):
    total = lib.zeros((), dtype=lib.float64)
    for p in params:
        r = lib.view_as_real(p) if p.is_complex() else p
        total = total + ((r - 0.2) ** 2 + 0.3 * lib.sin(r)).sum().double()
    return total


def _train(lib, make, values, steps=3, set_to_none=True):
    params = [lib.tensor(v, requires_grad=True) for v in values]
    opt = make(lib.optim, params)
    for _ in range(steps):
        opt.zero_grad(set_to_none=set_to_none)
        _loss(lib, params).backward()
        opt.step()
    return [p.detach().numpy() for p in params], opt


def _same(make, values, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, _ = _train(gradkit, make, values, **kw)
        theirs, _ = _train(torch, make, values, **kw)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_zero_grad_keeps_a_writable_grad_of_a_leaf_with_one_element(shape):
    """sum's gradient of a 0-d (or one-element) leaf was a NumPy scalar or read-only
    broadcast stored as .grad, so zero_grad(set_to_none=False) raised."""
    for lib in (gradkit, torch):
        p = lib.zeros(shape, requires_grad=True)
        (p * 2.0).sum().backward()
        p.grad.zero_()
        p.grad += 3
        assert p.grad.tolist() == np.full(shape, 3.0).tolist()
    _same(lambda o, ps: o.SGD(ps, lr=0.1, momentum=0.9), [np.full(shape, 0.5)],
          set_to_none=False)


def test_load_state_dict_keeps_the_dtype_of_a_complex_parameters_state():
    """torch casts state tensors to the parameter's dtype only for a floating parameter:
    NAdam's float32 mu_product of a complex parameter stayed complex."""
    values = [np.array([0.3 + 0.1j, -0.5 + 0.2j])]
    for lib in (gradkit, torch):
        _, opt = _train(lib, lambda o, ps: o.NAdam(ps, lr=0.1), values, steps=2)
        param = opt.param_groups[0]["params"][0]
        fresh = lib.optim.NAdam([param], lr=0.1)
        fresh.load_state_dict(copy.deepcopy(opt.state_dict()))
        state = fresh.state[param]
        assert str(state["mu_product"].dtype).endswith("float32")
        assert str(state["exp_avg"].dtype).endswith("complex128")
        param.grad = lib.ones_like(param)
        fresh.step()  # raised "value cannot be converted to type double without overflow"


def test_load_state_dict_casts_every_state_tensor_of_a_floating_parameter():
    for lib in (gradkit, torch):
        p = lib.zeros(2, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        saved = {"state": {0: {"momentum_buffer": lib.ones(2, dtype=lib.float32),
                               "extra": [lib.ones(1, dtype=lib.int64)]}},
                 "param_groups": opt.state_dict()["param_groups"]}
        opt.load_state_dict(saved)
        assert str(opt.state[p]["momentum_buffer"].dtype).endswith("float64")
        assert str(opt.state[p]["extra"][0].dtype).endswith("float64")


def test_lbfgs_refuses_a_group_added_after_building_like_torch():
    for lib in (gradkit, torch):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.LBFGS([w])
        opt.add_param_group({"params": [lib.ones(1, requires_grad=True)]})
        with pytest.raises(AssertionError, match="^Expected exactly one param_group, but got 2$"):
            opt.step(lambda w=w: (w * w).sum())


def test_a_group_added_after_load_state_dict_has_torchs_keys():
    """torch's __setstate__ adds differentiable=False to the defaults (Adafactor, LBFGS lack
    it), so a group added after loading has the key."""
    keys = []
    for lib in (gradkit, torch):
        opt = lib.optim.Adafactor([lib.zeros(2, 2, requires_grad=True)])
        opt.load_state_dict(opt.state_dict())
        opt.add_param_group({"params": [lib.zeros(3, requires_grad=True)]})
        keys.append([sorted(g) for g in opt.param_groups])
    assert keys[0] == keys[1]
    assert "differentiable" in keys[0][1] and "differentiable" not in keys[0][0]


@pytest.mark.parametrize("make", [
    lambda o, ps: o.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1,
                        fused=True),
    lambda o, ps: o.Adam(ps, lr=0.1, amsgrad=True, maximize=True, fused=True),
    lambda o, ps: o.AdamW(ps, lr=0.1, fused=True),
    lambda o, ps: o.Adagrad(ps, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.5,
                            fused=True),
])
def test_fused_runs_torchs_algorithm(make):
    """torch's fused CPU kernels give the single-tensor algorithm's numbers to rounding."""
    values = [np.linspace(-1, 1, 5), np.array(0.3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, opt = _train(gradkit, make, values, steps=4)
        theirs, topt = _train(torch, make, values, steps=4)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert opt.param_groups[0]["fused"] is topt.param_groups[0]["fused"] is True


def _fused_error(lib, name, dtypes, **options):
    params = [lib.ones(2, dtype=getattr(lib, d), requires_grad=True) for d in dtypes]
    try:
        opt = getattr(lib.optim, name)(params, lr=0.1, fused=True, **options)
        for p in params:
            p.grad = lib.ones_like(p)
        opt.step()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e).replace("gradkit.", "torch.")
    return None


@pytest.mark.parametrize("name,dtypes,options", [
    ("SGD", ["float64"], {"foreach": True}),
    ("Adam", ["complex64"], {}),
    ("SGD", ["complex128", "float64"], {}),
    ("SGD", ["float32", "complex64"], {}),       # past the first parameter: the kernel's
    ("SGD", ["float32", "complex64", "complex128"], {}),
    ("SGD", ["float64", "complex128", "float32", "complex64", "complex128"], {}),
    ("Adagrad", ["complex64"], {}),
    ("Adagrad", ["float64", "complex128"], {}),
    ("AdamW", ["float32", "complex128"], {}),
])
def test_fused_refusals_match_torch(name, dtypes, options):
    theirs = _fused_error(torch, name, dtypes, **options)
    assert theirs is not None
    assert _fused_error(gradkit, name, dtypes, **options) == theirs


@pytest.mark.parametrize("call", [
    lambda lib: lib.dot(lib.ones(3, dtype=lib.float64), lib.ones(3)),
    lambda lib: lib.vdot(lib.ones(3, dtype=lib.complex64), lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.ones(3, dtype=lib.float64) @ lib.ones(4),
    lambda lib: lib.ones(3) @ lib.ones(4),
    lambda lib: lib.ones(3).dot(lib.ones(2)),
])
def test_vector_products_check_dtypes_then_sizes_like_torch(call):
    """torch's dot_check (dot, vdot, matmul of two vectors): LBFGS after a state dict round
    trip cast its history to the first parameter's float32 and hit it."""
    errors = []
    for lib in (gradkit, torch):
        with pytest.raises(RuntimeError) as info:
            call(lib)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_lbfgs_history_cast_to_the_first_parameter_after_a_reload_like_torch():
    errors = []
    for lib in (gradkit, torch):
        params = [lib.tensor(0.5, requires_grad=True),
                  lib.tensor([0.1, -0.3], dtype=lib.float64, requires_grad=True)]
        opt = lib.optim.LBFGS(params, max_iter=2)

        def closure(lib=lib, opt=opt, params=params):
            opt.zero_grad()
            loss = sum(((p.double() - 0.2) ** 4 + lib.sin(p.double())).sum() for p in params)
            loss.backward()
            return loss

        opt.step(closure)
        opt.step(closure)
        fresh = lib.optim.LBFGS(params, max_iter=2)
        fresh.load_state_dict(copy.deepcopy(opt.state_dict()))
        assert str(fresh.state[params[0]]["d"].dtype).endswith("float32")
        with pytest.raises(RuntimeError) as info:
            fresh.step(closure)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "complex64"])
@pytest.mark.parametrize("options", [
    dict(lr=0.5), dict(lr=0.1, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1),
    dict(lr=0.5, t0=0, maximize=True, weight_decay=0.1)])
def test_asgd_foreach_runs_torchs_multi_tensor_algorithm(dtype, options):
    """foreach=True: torch's other order of the update and its float32 eta (eta one float32
    ulp apart after a LinearLR step before)."""
    values = np.array([0.3 + 0.1j, -0.2 + 0.4j, 0.7 - 0.5j]) if dtype.startswith("complex") \
        else np.array([0.3, -0.2, 0.9, -1.4])
    runs = []
    for lib in (gradkit, torch):
        w = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
        opt = lib.optim.ASGD([w], foreach=True, **options)
        schedule = lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, end_factor=0.5)
        for _ in range(6):
            opt.zero_grad()
            _loss(lib, [w]).backward()
            opt.step()
            schedule.step()
        state = opt.state[w]
        runs.append([w.detach().numpy(), state["ax"].numpy(), state["eta"].numpy(),
                     state["mu"].numpy()])
    for mine, theirs in zip(*runs):  # tight enough to see one float32 ulp of eta
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=0)


@pytest.mark.parametrize("dtypes", [("float32", "float64", "float32"),
                                    ("float32", "float32", "float32")])
def test_fused_sgd_refuses_a_parameter_first_stepped_after_the_others(dtypes):
    """torch's fused SGD makes momentum buffers only at a first step where none has one: a
    parameter without a gradient then, stepped later, hands its kernel a None (optim seed
    39347); when every parameter starts together, the steps agree."""
    def run(lib, late):
        params = [lib.tensor([1.0, 2.0][:k + 1], dtype=getattr(lib, d), requires_grad=True)
                  for k, d in enumerate(dtypes)]
        opt = lib.optim.SGD(params, lr=0.1, momentum=0.9, maximize=True, fused=True)
        for step in range(2):
            opt.zero_grad()
            stepped = params[:2] if late and step == 0 else params
            sum(p.double().sum() * (k + 1) for k, p in enumerate(stepped)).backward()
            opt.step()
        return [p.tolist() for p in params]
    element = 1 if dtypes[1] != dtypes[2] else 2  # its index among its dtype's parameters
    for lib in (torch, gradkit):
        with pytest.raises(TypeError, match=rf"^expected Tensor as element {element} in "
                                            r"argument 2, but got NoneType$"):
            run(lib, late=True)
    assert run(gradkit, late=False) == run(torch, late=False)


def test_single_precision_lbfgs_whose_double_run_differs_as_known_noise():
    """Known difference (docs/optim.md, "float32 rounding noise, so a run may take"; optim
    seed 201557): the same run in double precision also differs, but only by the documented
    noise of the program's own float32 leaf, so the float32 LBFGS run is that noise too."""
    problems, known = diff_program(generate(RandomDrawer(201557), "optim"))
    assert problems and known == "LBFGS in single precision: its convergence tests compare " \
        "rounding noise"


@pytest.mark.parametrize("seed", [318744, 329206])
def test_strong_wolfe_lbfgs_parting_at_convergence_as_known_rounding(seed):
    """Known difference (docs/optim.md, "once the loss has converged"): the double-precision
    runs evaluate the same losses to an ulp (NumPy's sums and dot products round otherwise
    than torch's) until the loss has converged, where the line search compares losses an ulp
    apart and takes another step length (t = 0.34 against 0.625). 318744 is complex64, so the
    single-precision Known takes it, its double run being this one."""
    problems, known = diff_program(generate(RandomDrawer(seed), "optim"))
    assert problems and known in (
        "LBFGS in single precision: its convergence tests compare rounding noise",
        "LBFGS's strong-Wolfe line search at convergence: losses an ulp apart (NumPy's sums "
        "and dot products round otherwise than torch's) pick another step")


def test_lbfgs_parting_before_convergence_is_not_known():
    """The Known's condition: runs that part while the loss still moves are no rounding."""
    moving = np.array([3.0, 2.0, 2.0, 1.0])
    assert not _parts_at_convergence(moving, np.array([3.0, 2.0, 2.0, 1.5]))
    assert not _parts_at_convergence(moving, np.array([3.0, 2.5, 2.0, 1.0]))
    converged = np.array([1.0 + 8e-10, 1.0 + 4e-10, 1.0 + 4e-10, 1.0])
    assert _parts_at_convergence(converged, np.r_[converged[:3], 1.0 - 1e-10])


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_state_lists_its_keys_in_torchs_order(line_search_fn):
    """torch's LBFGS writes d, t, the history (old_dirs, old_stps, ro, H_diag) and the
    previous gradient and loss at the end of its first step, in that order, so its state and
    state_dict list them so; gradkit wrote the history first (seen beside optim seed 318744)."""
    def keys(m):
        w = m.tensor([1.0, -2.0], requires_grad=True)
        optimizer = m.optim.LBFGS([w], lr=0.5, history_size=2, line_search_fn=line_search_fn)

        def closure():
            optimizer.zero_grad()
            loss = ((w - 3) ** 2).sum() + (w ** 4).sum()
            loss.backward()
            return loss
        orders = []
        for _ in range(3):
            optimizer.step(closure)
            orders.append(list(optimizer.state[w]))
        return orders, list(optimizer.state_dict()["state"][0])
    assert keys(gradkit) == keys(torch)


def test_strong_wolfe_interpolation_of_equal_float_steps_raises_in_both():
    """Documented (docs/optim.md, "two step lengths are equal Python floats"; optim seed
    355481): a complex64 LBFGS run's line search met two equal step lengths (rounding noise
    took it down another path than torch's run); the cubic interpolation then divides by
    their difference, which torch's own code does as well on the same numbers."""
    from torch.optim.lbfgs import _cubic_interpolate as theirs

    from gradkit.optim.lbfgs import _cubic_interpolate as ours
    for m, interpolate in ((torch, theirs), (gradkit, ours)):
        with pytest.raises(ZeroDivisionError):
            interpolate(0.5, 1.0, m.tensor(-1.0), 0.5, 0.9, m.tensor(-0.5), bounds=(0.5, 5.0))
    problems, known = diff_program(generate(RandomDrawer(355481), "optim"))
    assert not problems or known == "LBFGS in single precision: its convergence tests " \
        "compare rounding noise"
