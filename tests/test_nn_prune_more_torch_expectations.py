"""nn.utils.prune beyond torch's own tests: its error messages, the hook recomputing the
pruned tensor, masks composing over repeated pruning, every Ln norm, state_dict round trips
and gradients, each program run on gradkit and on torch 2.13."""
import numpy as np
import pytest

from tensor_twins import same_as_torch
from torch_expectations.twin import both_libraries as both, like_torch, raises_like_torch

try:  # torch.nn.utils does not import its prune module itself (gradkit's does)
    import torch.nn.utils.prune  # noqa: F401
except ImportError:
    pass

WEIGHT = np.random.default_rng(5).standard_normal((6, 4, 3))
BIAS = np.random.default_rng(6).standard_normal(6)


def _conv(lib):
    """Conv1d(4, 6, 3) in float64 with WEIGHT and BIAS (no ties among magnitudes or norms)."""
    m = lib.nn.Conv1d(4, 6, 3).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(WEIGHT))
        m.bias.copy_(lib.tensor(BIAS))
    return m


def _dtype_name(t) -> str:
    return str(t.dtype).split(".")[-1]


ERRORS = {
    "structured_1d": (lambda lib, m: lib.nn.utils.prune.ln_structured(m, "bias", 1, 2, 0),
                      ValueError, r"Structured pruning can only be applied to multidimensional "
                                  r"tensors. Found tensor of shape .*\[6\]\) with 1 dims"),
    "dim_too_big": (lambda lib, m: lib.nn.utils.prune.random_structured(m, "weight", 1, 3),
                    IndexError, r"Invalid index 3 for tensor of size .*\[6, 4, 3\]\)"),
    "dim_too_small": (lambda lib, m: lib.nn.utils.prune.ln_structured(m, "weight", 1, 2, -4),
                      IndexError, "index out of range"),
    "amount_over_size": (lambda lib, m: lib.nn.utils.prune.l1_unstructured(m, "weight", 73),
                         ValueError, "amount=73 should be smaller than the number of parameters "
                                     "to prune=72"),
    "amount_type": (lambda lib, m: lib.nn.utils.prune.random_unstructured(m, "weight", "1"),
                    TypeError, "Invalid type for amount: 1. Must be int or float."),
    "amount_fraction": (lambda lib, m: lib.nn.utils.prune.l1_unstructured(m, "weight", 1.5),
                        ValueError, r"amount=1.5 should either be a float in the range \[0, 1\] "
                                    "or a non-negative integer"),
    "scores_shape": (lambda lib, m: lib.nn.utils.prune.l1_unstructured(
        m, "weight", 2, importance_scores=lib.ones(6, 4)), AssertionError,
        r"importance_scores should have the same shape as parameter weight of Conv1d\(4, 6, "
        r"kernel_size=\(3,\), stride=\(1,\)\), got .*\[6, 4\]\) vs .*\[6, 4, 3\]\)"),
    "prune_scores_shape": (lambda lib, m: lib.nn.utils.prune.L1Unstructured(2).prune(
        m.weight, importance_scores=lib.ones(2)), AssertionError,
        r"importance_scores should have the same shape as tensor t, got .*\[2\]\) vs "),
    "custom_mask_shape": (lambda lib, m: lib.nn.utils.prune.custom_from_mask(
        m, "weight", lib.ones(6, 4)), AssertionError,
        r"default_mask shape .*\[6, 4, 3\]\) must match self.mask shape .*\[6, 4\]\)"),
    "global_structured": (lambda lib, m: lib.nn.utils.prune.global_unstructured(
        [(m, "weight")], lib.nn.utils.prune.RandomStructured, amount=1, dim=0), TypeError,
        'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
        "<class '.*RandomStructured'> of type structured"),
    "global_not_iterable": (lambda lib, m: lib.nn.utils.prune.global_unstructured(
        m, lib.nn.utils.prune.L1Unstructured, amount=1), TypeError,
        r"global_unstructured\(\): parameters is not an Iterable"),
    "global_scores_type": (lambda lib, m: lib.nn.utils.prune.global_unstructured(
        [(m, "weight")], lib.nn.utils.prune.L1Unstructured, importance_scores=[1], amount=1),
        TypeError, r"global_unstructured\(\): importance_scores must be of type dict"),
    "remove_unpruned": (lambda lib, m: lib.nn.utils.prune.remove(m, "weight"), ValueError,
                        r"Parameter 'weight' of module Conv1d\(4, 6, kernel_size=\(3,\), "
                        r"stride=\(1,\)\) has to be pruned before pruning can be removed"),
    "method_remove_unapplied": (lambda lib, m: lib.nn.utils.prune.L1Unstructured(2).remove(m),
                                AttributeError, "'L1Unstructured' object has no attribute "
                                                "'_tensor_name'"),
    "no_parameter": (lambda lib, m: lib.nn.utils.prune.identity(m, "nothing"), AttributeError,
                     "'Conv1d' object has no attribute 'nothing'"),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_as_torch(case):
    program, exception, match = ERRORS[case]
    modules = {}

    def run(lib):
        modules[lib.__name__] = m = _conv(lib)
        program(lib, m)
    raises_like_torch(run, exception, match)
    m = modules["gradkit"]  # a failed pruning leaves the module as it was
    assert "weight" in m._parameters and not hasattr(m, "weight_mask")
    assert not m._forward_pre_hooks


def test_container_errors_as_torch():
    class Odd:  # methods whose PRUNING_TYPE the container cannot handle
        def compute_mask(self, t, default_mask):
            return default_mask

    def program(lib, kind):
        prune = lib.nn.utils.prune
        method = type("Odd", (Odd, prune.BasePruningMethod), {"PRUNING_TYPE": kind})()
        method._tensor_name = "w"
        container = prune.PruningContainer(method)
        return container.compute_mask(lib.ones(2, 2), lib.ones(2, 2))
    raises_like_torch(lambda lib: program(lib, "structured"), AttributeError,
                      'Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                      "`dim` defined.")
    raises_like_torch(lambda lib: program(lib, "diagonal"), ValueError,
                      "Unrecognized PRUNING_TYPE diagonal")

    def two_hooks(lib):
        m, prune = _conv(lib), lib.nn.utils.prune
        for _ in range(2):
            method = prune.Identity()
            method._tensor_name = "weight"
            m.register_forward_pre_hook(method)
        prune.identity(m, "weight")
    raises_like_torch(two_hooks, AssertionError, "Avoid adding multiple pruning hooks to the "
                                                 "same tensor weight of module Conv1d.* Use a "
                                                 "PruningContainer.")


@pytest.mark.parametrize("n", [1, 2, 3, 0.5, float("inf"), float("-inf"), "fro"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_ln_structured_norms_and_dims(n, dim):
    def program(lib):
        m = lib.nn.utils.prune.ln_structured(_conv(lib), "weight", amount=0.5, n=n, dim=dim)
        return m.weight_mask, m.weight, _dtype_name(m.weight_mask)
    like_torch(program)


@pytest.mark.parametrize("amount", [0, 1, 0.25, 0.5, 1.0, 72])
def test_l1_unstructured_amounts_and_repeats(amount):
    def program(lib):
        m = lib.nn.utils.prune.l1_unstructured(_conv(lib), "weight", amount=amount)
        first = m.weight_mask.clone()
        if amount != 72:
            lib.nn.utils.prune.l1_unstructured(m, "weight", amount=amount)
        return first, m.weight_mask, int((m.weight_mask == 0).sum())
    like_torch(program)


def test_random_methods_compose_counts_and_structure():
    def program(lib):
        prune, m = lib.nn.utils.prune, _conv(lib)
        prune.random_unstructured(m, "bias", amount=0.5)
        prune.random_unstructured(m, "bias", amount=0.5)  # 3 of 6, then round(1.5) = 2 of 3
        prune.random_structured(m, "weight", amount=2, dim=0)
        prune.random_structured(m, "weight", amount=0.5, dim=-1)  # round(1.5) = 2 of 3
        mask = m.weight_mask
        rows = (mask.sum(dim=(1, 2)) == 0).sum()
        columns = (mask.sum(dim=(0, 1)) == 0).sum()
        kept = mask[mask.sum(dim=(1, 2)) != 0][:, :, mask.sum(dim=(0, 1)) != 0]
        return (int((m.bias_mask == 0).sum()), int(rows), int(columns), kept.shape[0],
                kept.shape[2], bool((kept == 1).all()), [type(h).__name__ for h in
                                                       m._forward_pre_hooks.values()])
    assert like_torch(program) == (5, 2, 2, 4, 1, True, ["PruningContainer", "PruningContainer"])


def test_hook_recomputes_and_gradients_reach_orig():
    def program(lib):
        m = lib.nn.utils.prune.l1_unstructured(_conv(lib), "weight", amount=30)
        x = lib.tensor(np.linspace(-1, 1, 2 * 4 * 5).reshape(2, 4, 5))
        with lib.no_grad():
            m.weight_orig.mul_(2)  # the pre-hook recomputes weight on the next call
        y = m(x)
        y.pow(2).sum().backward()
        return y, m.weight, m.weight_orig.grad, m.bias.grad, m.weight.grad_fn is not None
    grads = like_torch(program)
    assert (grads[2].numpy()[grads[1].detach().numpy() == 0] == 0).all()


def test_state_dict_loads_into_a_pruned_model():
    def program(lib):
        prune = lib.nn.utils.prune
        source = prune.ln_structured(_conv(lib), "weight", amount=2, n=1, dim=0)
        target = prune.identity(lib.nn.Conv1d(4, 6, 3).double(), "weight")
        result = target.load_state_dict(source.state_dict())
        x = lib.ones(1, 4, 3, dtype=lib.float64)
        return (list(target.state_dict()), target.weight_mask, target(x), source(x),
                list(result.missing_keys), list(result.unexpected_keys))
    like_torch(program)


def test_global_unstructured_after_pruning_and_partial_scores():
    def program(lib):
        prune, m, n = lib.nn.utils.prune, _conv(lib), lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            n.weight.copy_(lib.tensor([[0.01, -2.0, 0.3], [0.02, 1.5, -0.04]]))
        prune.l1_unstructured(m, "bias", amount=3)
        prune.global_unstructured([(m, "weight"), (m, "bias"), (n, "weight")],
                                  prune.L1Unstructured,
                                  importance_scores={(n, "weight"): n.weight.abs() * 100},
                                  amount=0.4)
        hooks = [type(h).__name__ for h in m._forward_pre_hooks.values()]
        return m.weight_mask, m.bias_mask, n.weight_mask, hooks, _dtype_name(n.weight_mask)
    like_torch(program)


@pytest.mark.parametrize("mask_dtype", ["bool", "int64", "float32"])
def test_custom_from_mask_dtypes_and_composition(mask_dtype):
    def program(lib):
        prune, m = lib.nn.utils.prune, _conv(lib)
        mask = lib.tensor([1, 0, 1, 1, 0, 1]).to(getattr(lib, mask_dtype))
        method = prune.CustomFromMask.apply(m, "bias", mask)
        prune.custom_from_mask(m, "bias", lib.tensor([0, 1, 1, 1, 1, 1]))
        container = next(iter(m._forward_pre_hooks.values()))
        return (m.bias_mask, m.bias, _dtype_name(m.bias_mask), type(method).__name__,
                len(container), container[0] is method)
    like_torch(program)


@both
def test_container_compute_mask_in_place_when_dtypes_agree(lib):
    prune = lib.nn.utils.prune
    p = prune.L1Unstructured(amount=1)
    p._tensor_name = "w"
    container = prune.PruningContainer(p)
    default_mask = lib.tensor([1.0, 1.0, 0.0, 1.0])
    mask = container.compute_mask(lib.tensor([3.0, 1.0, 0.5, 2.0]), default_mask)
    assert mask is default_mask and default_mask.tolist() == [1.0, 0.0, 0.0, 1.0]
    int_mask = lib.tensor([1, 1, 0, 1])
    mask = container.compute_mask(lib.tensor([3.0, 1.0, 0.5, 2.0]), int_mask)
    assert int_mask.tolist() == [1, 1, 0, 1] and mask.dtype == lib.float32


@both
def test_is_pruned_sees_submodules_and_hooks_are_the_methods(lib):
    prune = lib.nn.utils.prune
    model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.Linear(2, 1)))
    assert not prune.is_pruned(model)
    method = prune.RandomUnstructured.apply(model[1][0], "weight", amount=1)
    assert prune.is_pruned(model) and not prune.is_pruned(model[0])
    assert list(model[1][0]._forward_pre_hooks.values()) == [method]
    assert isinstance(method, prune.BasePruningMethod) and method.amount == 1
    prune.remove(model[1][0], "weight")
    assert not prune.is_pruned(model) and not model[1][0]._forward_pre_hooks


@pytest.mark.parametrize("dim", [3, -4])
def test_structured_dim_out_of_range_after_pruning(dim):
    def program(lib):
        m = lib.nn.utils.prune.identity(_conv(lib), "weight")
        with pytest.raises(IndexError, match="list assignment index out of range" if dim == 3
                           else "Index is out of bounds for tensor with dimensions 3"):
            lib.nn.utils.prune.ln_structured(m, "weight", amount=1, n=2, dim=dim)
        # torch drops the old hook and keeps the reparametrization: so does gradkit
        return (len(m._forward_pre_hooks), sorted(m._parameters), sorted(m._buffers),
                m.weight_mask)
    assert like_torch(program)[:3] == (0, ["bias", "weight_orig"], ["weight_mask"])


def _linear(lib, bias=True):
    """Linear(4, 3) in float64 with fixed weight and bias."""
    m = lib.nn.Linear(4, 3, bias=bias).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(WEIGHT[:3, :, 0]))
        if bias:
            m.bias.copy_(lib.tensor([0.1, 0.2, 0.3]))
    return m


def _pruned(lib, method, m, *args, **kwargs):
    """``m`` after ``prune.<method>(m, *args, **kwargs)``."""
    getattr(lib.nn.utils.prune, method)(m, *args, **kwargs)
    return m


EDGES = {
    "a_buffer": lambda lib: _pruned(lib, "l1_unstructured", lib.nn.BatchNorm1d(3),
                                    "running_mean", 1),
    "scores_not_a_tensor": lambda lib: _pruned(lib, "l1_unstructured", _linear(lib), "weight", 1,
                                               importance_scores=[1]),
    "float16": lambda lib: (lambda m: (m.weight_mask, m.weight))(
        _pruned(lib, "l1_unstructured", _linear(lib).half(), "weight", 5)),
    "amount_0_and_true": lambda lib: [_pruned(lib, "l1_unstructured", _linear(lib), "weight",
                                              amount).weight_mask for amount in (0, True)],
    "double_after_pruning": lambda lib: (lambda m: (m.double().weight_mask,
                                                    m(lib.ones(1, 4, dtype=lib.float64))))(
        _pruned(lib, "l1_unstructured", _linear(lib).float(), "weight", 3)),
    "mask_of_halves": lambda lib: _pruned(lib, "custom_from_mask", _linear(lib), "weight",
                                          lib.full((3, 4), 0.5)).weight,
    "global_empty": lambda lib: lib.nn.utils.prune.global_unstructured(
        [], lib.nn.utils.prune.L1Unstructured, amount=1),
    "global_generator": lambda lib: (lambda m: lib.nn.utils.prune.global_unstructured(
        ((m, n) for n in ["weight"]), lib.nn.utils.prune.L1Unstructured, amount=1))(_linear(lib)),
    "random_structured_0": lambda lib: _pruned(lib, "random_structured", _linear(lib), "weight",
                                               0, 1).weight_mask,
    "empty_weight": lambda lib: [_pruned(lib, "l1_unstructured", lib.nn.Linear(0, 2), "weight",
                                         0.5).weight_mask,
                                 _pruned(lib, "ln_structured", lib.nn.Linear(0, 2), "weight",
                                         1, 2, 0).weight_mask],
    "parametrized": lambda lib: _pruned(
        lib, "l1_unstructured", lib.nn.utils.parametrize.register_parametrization(
            _linear(lib), "weight", lib.nn.Identity()), "weight", 1),
    "n_nuc": lambda lib: _pruned(lib, "ln_structured", _linear(lib), "weight", 1, "nuc", 0),
    "n_unknown": lambda lib: _pruned(lib, "ln_structured", _linear(lib), "weight", 1, "abc", 0),
    "pruned_weight_is_computed": lambda lib: (lambda m: (
        m.weight.grad_fn.name(), m.weight.is_leaf, m.weight.requires_grad))(
        _pruned(lib, "l1_unstructured", _linear(lib), "weight", 1)),
}


@pytest.mark.parametrize("case", EDGES)
def test_edge_cases_as_torch(case):
    same_as_torch(lambda lib: _plain_module(EDGES[case](lib)))


def _plain_module(value):
    """A module as what pruning left in it (names, hooks); anything else as it is."""
    if hasattr(value, "_forward_pre_hooks"):
        return (sorted(value._parameters), sorted(value._buffers),
                [type(h).__name__ for h in value._forward_pre_hooks.values()])
    return value


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.Linear(2, 2, bias=False), lambda lib: lib.nn.Conv1d(1, 1, 2, bias=False),
    lambda lib: lib.nn.ConvTranspose2d(1, 1, 2, bias=False),
    lambda lib: lib.nn.Bilinear(2, 2, 2, bias=False),
    lambda lib: lib.nn.BatchNorm1d(2, affine=False),
    lambda lib: lib.nn.GroupNorm(1, 2, affine=False),
    lambda lib: lib.nn.LayerNorm(2, elementwise_affine=False),
    lambda lib: lib.nn.LayerNorm(2, bias=False)])
def test_absent_weights_are_none_parameters_as_torch(make):
    """torch registers an absent bias (or affine weight) as a None parameter: pruning it fails
    after moving the name to ``bias_orig``, as torch (gradkit's ones_like(None) raises
    AttributeError where torch's raises TypeError)."""
    def program(lib):
        m = make(lib)
        names = list(m._parameters)
        with pytest.raises((TypeError, AttributeError)):
            lib.nn.utils.prune.identity(m, "bias")
        return (names, _plain_module(m), list(m.state_dict()), len(list(m.parameters())),
                m.bias is None)
    same_as_torch(program)
