"""AdaptiveLogSoftmaxWithLoss against torch (output, loss, every gradient, log_prob, predict,
errors), torch.nn's deprecated classes (Container, NLLLoss2d) with their warnings, and the
legacy CrossMapLRN2d (torch's values and backward formula, which is not the derivative of its
forward: gradcheck's verdict is compared with torch's instead)."""
import warnings

import numpy as np
import pytest

import gradkit
from nn_twins import compare, errors, same, twins

torch = pytest.importorskip("torch")

rng = np.random.default_rng(5)


def _asm(lib):
    return lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=True)


@pytest.mark.parametrize("target", [
    [0, 4, 11, 2, 8, 5],   # every cluster
    [0, 1, 2, 0, 1, 2],    # the head only
    [5, 1, 2, 0, 1, 2],    # one row in a tail (its index squeezes to 0-d)
    [9, 9, 9, 9, 9, 9],    # one tail only
], ids=["all_clusters", "head_only", "one_tail_row", "tail_only"])
def test_adaptive_log_softmax_output_loss_and_gradients_match_torch(target):
    ours, _ = compare(torch, _asm, (rng.standard_normal((6, 8)), np.array(target)))
    result = ours(gradkit.ones(6, 8, dtype=gradkit.float64), gradkit.tensor(target))
    assert type(result).__name__ == "_ASMoutput" and result._fields == ("output", "loss")


def test_adaptive_log_softmax_unbatched_and_default_arguments_match_torch():
    compare(torch, _asm, (rng.standard_normal(8), np.array(10)))
    compare(torch, lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 5, [2]),
            (rng.standard_normal((4, 16)), np.array([4, 0, 2, 1])))


@pytest.mark.parametrize("method", ["log_prob", "predict"])
def test_adaptive_log_softmax_log_prob_and_predict_match_torch(method):
    ours, theirs = twins(torch, _asm)
    x = rng.standard_normal((20, 8)) * 3
    g_x, t_x = gradkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    g_out, t_out = getattr(ours, method)(g_x), getattr(theirs, method)(t_x)
    same(g_out, t_out)
    if method == "log_prob":
        seed = rng.standard_normal(tuple(t_out.shape))
        g_out.backward(gradkit.tensor(seed))
        t_out.backward(torch.tensor(seed))
        same(g_x.grad, t_x.grad)
        for g, t in zip(ours.parameters(), theirs.parameters(), strict=True):
            same(g.grad, t.grad)


def test_adaptive_log_softmax_predict_paths_match_torch():
    """All rows in the shortlist, none, and some: the three branches of torch's predict."""
    ours, theirs = twins(torch, lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2]))
    for bias in (10.0, -10.0, None):
        with torch.no_grad(), gradkit.no_grad():
            for module, lib in ((ours, gradkit), (theirs, torch)):
                weight = module.head.weight
                weight.copy_(lib.tensor(np.arange(12.0).reshape(3, 4) / 10))
                if bias is not None:  # the cluster token's row decides
                    weight[2] = bias
        x = np.abs(rng.standard_normal((5, 4)))
        if bias is None:
            x[::2] *= -1
        same(ours.predict(gradkit.tensor(x)), theirs.predict(torch.tensor(x)))


ASM_ERRORS = {
    "no_cutoffs": (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, []), None),
    "unsorted": (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [3, 2]), None),
    "too_large": (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [6]), None),
    "repeated": (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 2]), None),
    "not_integer": (lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2.5]), None),
    "batch_mismatch": (_asm, lambda m, lib: m(lib.ones(3, 8), lib.tensor([1, 2]))),
    "1d_target_3d_input": (_asm, lambda m, lib: m(lib.ones(2, 2, 8), lib.tensor([1, 2]))),
    "0d_target_2d_input": (_asm, lambda m, lib: m(lib.ones(2, 8), lib.tensor(1))),
    "2d_target": (_asm, lambda m, lib: m(lib.ones(2, 8), lib.tensor([[1], [2]]))),
    "out_of_range": (_asm, lambda m, lib: m(lib.ones(2, 8), lib.tensor([1, 12]))),
    "negative": (_asm, lambda m, lib: m(lib.ones(2, 8), lib.tensor([-1, 3]))),
}


@pytest.mark.parametrize("name", sorted(ASM_ERRORS))
def test_adaptive_log_softmax_errors_match_torch(name):
    make, call = ASM_ERRORS[name]
    found = errors(torch, make, call or (lambda module, lib: None))
    assert found[1] == found[0]


# -- deprecated classes ---------------------------------------------------------------------

def _warnings_of(action, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = action(*args)
    # where the deprecation points (torch's legacy size_average warning points inside torch)
    return result, [(w.category, str(w.message),
                     w.filename if w.category is FutureWarning else None) for w in caught]


def test_container_adds_its_keyword_modules_and_warns_as_torch():
    seen = []
    for lib in (torch, gradkit):
        container, warned = _warnings_of(
            lambda lib: lib.nn.Container(a=lib.nn.Linear(1, 2), b=lib.nn.ReLU()), lib)
        seen.append((repr(container), list(container.state_dict()), warned,
                     isinstance(container, lib.nn.Module)))
    assert seen[1] == seen[0]
    assert seen[0][2][0][2] == __file__


def test_subclassing_container_warns_once_at_the_class_statement_as_torch():
    seen = []
    for lib in (torch, gradkit):
        def declare(lib):
            class Block(lib.nn.Container):
                pass
            return Block
        block, at_class = _warnings_of(declare, lib)
        _, at_instance = _warnings_of(block)
        seen.append((at_class, at_instance))
    assert seen[1] == seen[0]
    assert len(seen[0][0]) == 1 and seen[0][1] == []


@pytest.mark.parametrize("args, kwargs", [((), {}), ((None, None, 1), {}),
                                          ((None, True, -100, False), {}),
                                          ((), {"reduction": "sum"})])
def test_nll_loss_2d_is_nll_loss_with_torchs_warnings(args, kwargs):
    x = rng.standard_normal((2, 3, 2, 2))
    target = np.array([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])
    seen = []
    for lib in (torch, gradkit):
        loss, warned = _warnings_of(lambda lib: lib.nn.NLLLoss2d(*args, **kwargs), lib)
        value = loss(lib.tensor(x).log_softmax(1), lib.tensor(target))
        seen.append((repr(loss), loss.reduction, loss.ignore_index, warned,
                     np.round(value.numpy(), 12).tolist(), isinstance(loss, lib.nn.NLLLoss)))
    assert seen[1] == seen[0]


# -- CrossMapLRN2d: torch's legacy values and backward formula -------------------------------

@pytest.mark.parametrize("size", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("channels", [1, 3, 6, 8])
def test_cross_map_lrn2d_values_and_backward_match_torch(size, channels):
    x = rng.standard_normal((2, channels, 2, 3))
    seed = rng.standard_normal(x.shape)
    found = []
    for lib in (torch, gradkit):
        xt = lib.tensor(x, requires_grad=True)
        module = lib.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.5)
        out = module(xt)
        out.backward(lib.tensor(seed))
        found.append((out, xt.grad, out.grad_fn.name(), repr(module)))
    same(found[1][0], found[0][0])
    same(found[1][1], found[0][1])
    assert found[1][2:] == found[0][2:] == ("CrossMapLRN2dBackward",
                                            f"CrossMapLRN2d({size}, alpha=0.5, beta=0.75, k=1.5)")


def test_cross_map_lrn2d_float32_defaults_match_torch():
    x = rng.standard_normal((1, 5, 3, 3)).astype(np.float32) * 4
    found = [lib.nn.CrossMapLRN2d(3)(lib.tensor(x)).numpy() for lib in (torch, gradkit)]
    assert found[1].dtype == np.float32
    np.testing.assert_allclose(found[1], found[0], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("size, channels", [(3, 1), (5, 2), (2, 5), (3, 4), (5, 6)])
def test_cross_map_lrn2d_gradcheck_verdict_is_torchs(size, channels):
    """torch's backward is the derivative only while its forward's window has not moved past
    channel 0: gradcheck passes there and fails beyond, in both libraries."""
    x = rng.standard_normal((1, channels, 2, 2))
    verdicts = []
    for lib in (torch, gradkit):
        module = lib.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.75, k=1.5)
        verdicts.append(lib.autograd.gradcheck(module, (lib.tensor(x, requires_grad=True),),
                                               raise_exception=False))
    assert verdicts[1] == verdicts[0]


LRN_ERRORS = {
    "not_4d": lambda lib: lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3)),
    "size_1_backward": lambda lib: lib.nn.CrossMapLRN2d(1)(
        lib.ones(1, 3, 2, 2, requires_grad=True)).sum().backward(),
    "double_backward": lambda lib: _grad_with_graph(lib, lib.ones(1, 3, 2, 2, requires_grad=True)),
}


def _grad_with_graph(lib, x):
    return lib.autograd.grad(lib.nn.CrossMapLRN2d(3)(x).sum(), x, create_graph=True)


@pytest.mark.parametrize("name", sorted(LRN_ERRORS))
def test_cross_map_lrn2d_errors_match_torch(name):
    found = errors(torch, lambda lib: lib, lambda lib, _: LRN_ERRORS[name](lib))
    assert found[1] == found[0]
