"""Differences found by running torch's own OpInfo sample inputs through gradkit.

`tests/fuzz/opinfo_scan.py` feeds every sample of torch's op table (the inputs torch's test
suite chose for each op) to gradkit and torch 2.13 and compares values, dtypes, shapes,
gradients and errors; each difference it found is one program here, compared with torch.
"""
import pytest
from torch_expectations.twin import leaf, like_torch, raises_like_torch


def _layer_norm_grads(lib, shape, normalized):
    x, w, b = (leaf(lib, *shape, seed=s) for s in range(3))
    out = lib.nn.functional.layer_norm(x, normalized, w[(0,) * (len(shape) - len(normalized))],
                                       b[(0,) * (len(shape) - len(normalized))])
    return lib.autograd.grad((out * leaf(lib, *shape, seed=3)).sum(), (x, w, b))


def test_layer_norm_over_every_dim_gives_weight_and_bias_their_shape():
    """`layer_norm(x, x.shape, w, b)`: no leading dims to sum the weight's gradient over (it was
    summed over all dims, a 0-d gradient refused by the engine)."""
    like_torch(lambda lib: _layer_norm_grads(lib, (1, 2, 3), (1, 2, 3)))
    like_torch(lambda lib: _layer_norm_grads(lib, (2, 3), (2, 3)))
    like_torch(lambda lib: _layer_norm_grads(lib, (4, 2, 3), (2, 3)))


def _gather_scatter_of_scalars(lib):
    x = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
    src = lib.tensor(5.0, dtype=lib.float64, requires_grad=True)
    results = []
    for index in (lib.tensor([0]), lib.tensor(0), lib.tensor([0, 0, 0])):
        y = lib.gather(x, 0, index)
        results.append((y, lib.autograd.grad(y.sum(), x)))
    for scatter in (lib.scatter, lib.scatter_add):
        y = scatter(x, 0, lib.tensor(0), src)
        results.append((y, lib.autograd.grad(y * 3, (x, src))))
    results.append(lib.scatter(x, 0, lib.tensor(0), 7.0))
    results.append(lib.gather(lib.ones(3), 0, lib.tensor(1)))
    results.append(lib.scatter(lib.ones(3), 0, lib.tensor(1), lib.tensor([5.0, 6.0])))
    return results


def test_gather_and_scatter_read_a_0d_input_or_index_as_one_element():
    """torch reads a 0-d input or index of gather/scatter/scatter_add as 1-d (gradkit refused
    a 0-d input with a 1-d index, and failed inside NumPy on a 0-d index)."""
    like_torch(_gather_scatter_of_scalars)


def test_gather_and_scatter_still_refuse_a_0d_index_into_a_matrix():
    for program, text in (
            (lambda lib: lib.gather(lib.ones(2, 2), 0, lib.tensor(1)), "input tensor"),
            (lambda lib: lib.scatter(lib.ones(2, 2), 0, lib.tensor(1), 1.0), "self tensor")):
        raises_like_torch(program, RuntimeError,
                          f"Index tensor must have the same number of dimensions as {text}")


def test_searchsorted_of_empty_boundaries_and_values():
    """0-size boundaries with a 0-size batch: NumPy cannot infer a reshape of a 0-size array."""
    for shapes in (((0, 0), (0, 0)), ((0,), (0,)), ((2, 0), (2, 3)), ((0, 3), (0, 2)),
                   ((0,), (3,))):
        like_torch(lambda lib, shapes=shapes: lib.searchsorted(lib.zeros(*shapes[0]),
                                                               lib.zeros(*shapes[1])))


def _to_with_flags(lib):
    x = lib.ones(2, 3)
    results = [x.to("cpu", lib.float64, True, True), x.to(lib.float64, True, True),
               x.to(lib.float64, False), x.to(lib.ones(1, dtype=lib.int32), True, True)]
    return results + [x.to(lib.float32, False, True) is x, x.to(lib.float32, False, False) is x]


def test_to_takes_non_blocking_and_copy_positionally():
    """torch's ``to(dtype, non_blocking, copy)`` and ``to(tensor, non_blocking, copy)`` forms."""
    like_torch(_to_with_flags)
    for extra in ((True, True, True), ("cpu", True, True)):
        raises_like_torch(lambda lib, extra=extra: lib.ones(2).to(
            *(lib.float64,) * (len(extra) == 3) + extra), TypeError,
            r"to\(\) received an invalid combination of arguments")


def _casts_with_memory_format(lib):
    x = lib.ones(2, 3, 4, 5)
    results = []
    for name in ("double", "float", "half", "int", "bool", "cdouble"):
        y = getattr(x, name)(memory_format=lib.channels_last)
        results.append((y.dtype == getattr(lib, "complex128" if name == "cdouble" else
                                           {"double": "float64", "float": "float32",
                                            "half": "float16", "int": "int32"}.get(name, name)),
                        y.stride(), y is x))
    return results


def test_cast_methods_take_a_memory_format():
    like_torch(_casts_with_memory_format)


def _losses_with_ignored_targets(lib):
    x = leaf(lib, 2, 3)
    results = []
    for target, weight in (([1, 1], None), ([1, 0], None), ([0, 2], [0.0, 1.0, 0.0])):
        weight = None if weight is None else lib.tensor(weight, dtype=lib.float64)
        for loss in (lib.nn.CrossEntropyLoss(weight=weight, ignore_index=1),
                     lambda x, t: lib.nn.functional.nll_loss(x, t, ignore_index=1)):
            value = loss(x, lib.tensor(target))
            results.append((value, lib.autograd.grad(value * 1.7, x)))
    return results


def test_nll_and_cross_entropy_with_every_target_ignored_have_zero_gradients():
    """torch's module table: mean reduction over ignored targets only is 0/0 = NaN, but the
    backward writes only the targets it reads, so the gradient is zeros (gradkit's was NaN);
    a zero total of class weights stays NaN in both."""
    like_torch(_losses_with_ignored_targets)


def _losses_with_legacy_arguments(lib):
    F = lib.nn.functional
    x, y = leaf(lib, 3, 4), leaf(lib, 3, 4, seed=1, requires_grad=False)
    labels = lib.tensor([0, 3, 1])
    results = []
    for legacy in ({"size_average": False}, {"reduce": False}, {"size_average": True}):
        for value in (F.mse_loss(x, y, **legacy), F.cross_entropy(x, labels, **legacy),
                      F.nll_loss(x, labels, **legacy),
                      F.binary_cross_entropy_with_logits(x, y.sigmoid(), **legacy)):
            results.append((value, lib.autograd.grad(value.sum(), x)))
    return results


def test_functional_losses_honour_the_legacy_size_average_and_reduce():
    """`F.mse_loss(x, y, size_average=False)` was the mean (the legacy arguments were
    ignored): torch sums, with its deprecation warning (lane h-sigs)."""
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        like_torch(_losses_with_legacy_arguments)
