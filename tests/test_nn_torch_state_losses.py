"""torch's test/test_nn.py (TestNN, first quarter): state dicts and their metadata, extra
state, attribute assignment, deepcopy, RNN cells, and the loss tests of that stretch (shape
checks, weights, Gaussian NLL, KL divergence, CTC argument checks).

Each program runs on gradkit and on torch 2.13 (``lib``); values come from NumPy data where
they are compared (``like_torch``).
"""
import warnings
from copy import deepcopy

import numpy as np
import pytest

from torch_expectations.twin import both_libraries as both, data, like_torch


def _net(lib):
    nn = lib.nn
    lin = nn.Linear(5, 5)
    block = nn.Module()
    block.conv = nn.Conv2d(3, 3, 3, bias=False)
    net = nn.Module()
    net.linear1 = lin
    net.linear2 = lin
    net.bn = nn.BatchNorm2d(2)
    net.block = block
    net.add_module("empty", None)
    return net


@both
def test_state_dict(lib):
    net = _net(lib)
    state_dict = net.state_dict()
    assert list(state_dict) == [
        "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "bn.weight",
        "bn.bias", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
        "block.conv.weight"]
    assert list(state_dict._metadata) == ["", "linear1", "linear2", "bn", "block", "block.conv"]
    assert state_dict._metadata["bn"] == {"version": 2} and state_dict._metadata[""]["version"] >= 0
    for key, value in state_dict.items():
        owner = net
        for part in key.split("."):
            owner = getattr(owner, part)
        assert value.data_ptr() == owner.data_ptr() and not value.requires_grad
    lin = lib.nn.Linear(5, 5)
    state_dict = lin.state_dict()
    assert len(state_dict) == 2 and list(state_dict._metadata) == [""]
    assert state_dict["bias"].data_ptr() == lin.bias.data_ptr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        given = {}
        assert lin.state_dict(destination=given) is given and not hasattr(given, "_metadata")


@both
def test_state_dict_metadata_reaches_load_pre_hooks(lib):
    seen = []
    m = lib.nn.Sequential(lib.nn.Linear(2, 2))
    m[0]._register_load_state_dict_pre_hook(lambda *args: seen.append(args[2]))
    state = m.state_dict()
    state._metadata["0"]["mine"] = 7
    m.load_state_dict(state)
    plain = dict(state)
    m.load_state_dict(plain)
    assert seen == [{"version": 1, "mine": 7}, {}]


def _extra_state_modules(lib):
    class Sub(lib.nn.Module):
        def __init__(self, foo):
            super().__init__()
            self.foo = foo

        def get_extra_state(self):
            return {"foo": self.foo}

        def set_extra_state(self, state):
            self.foo = state["foo"]

    class Outer(lib.nn.Module):
        def __init__(self, foo, bar):
            super().__init__()
            self.sub = Sub(foo)
            self.bar = bar

        def get_extra_state(self):
            return {"bar": self.bar}

        def set_extra_state(self, state):
            self.bar = state["bar"]

    class Plain(lib.nn.Module):
        def __init__(self, foo):
            super().__init__()
            self.foo = foo

        def get_extra_state(self):
            return self.foo

        def set_extra_state(self, state):
            self.foo = state

    return Outer, Plain


@both
def test_extra_state(lib):
    outer, plain = _extra_state_modules(lib)
    m, m2 = outer(3, "something"), outer(5, "something else")
    m2.load_state_dict(m.state_dict())
    assert m.state_dict() == m2.state_dict() and (m2.bar, m2.sub.foo) == (m.bar, m.sub.foo)
    for state in ("something", 5, plain(3)):  # a Module: set_extra_state adds a child,
        # whose own extra state ("foo._extra_state") is loaded after it, as torch
        m, m2 = plain(state), plain("something else")
        m2.load_state_dict(m.state_dict())
        assert m2.foo is m.foo


@both
def test_extra_state_missing_half(lib):
    class OnlyGet(lib.nn.Module):
        def get_extra_state(self):
            return {"foo": 5}

    class OnlySet(lib.nn.Module):
        def set_extra_state(self):
            pass

    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        OnlyGet().load_state_dict(OnlyGet().state_dict())
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        OnlySet().load_state_dict(OnlySet().state_dict())


@both
def test_parameter_assignment(lib):
    lin = lib.nn.Linear(5, 5)

    def count():
        return len(list(lin.parameters()))

    new_param = lib.nn.Parameter(lib.randn(5, 5))
    lin.param_name = new_param
    assert count() == 3 and any(p is new_param for p in lin.parameters())
    var = lib.randn(5, 5)
    lin.var_name = var
    lin.variable_attr = lib.empty(5, 5)
    assert count() == 3 and all(p is not var for p in lin.parameters())
    lin.param_attr = lib.nn.Parameter(lib.empty(5, 5))
    assert count() == 4
    with pytest.raises(TypeError, match=r"cannot assign '\w+.FloatTensor' as parameter "
                                        r"'param_attr' \(\w+.nn.Parameter or None expected\)"):
        lin.param_attr = lib.empty(5, 5)
    lin.param_attr = None
    assert count() == 3


@both
@pytest.mark.parametrize("kind", ["parameters", "children"])
def test_assignment(lib, kind):
    nn = lib.nn
    m = nn.Module()
    if kind == "parameters":
        a, b, c = (nn.Parameter(lib.randn(n)) for n in (2, 3, 4))
    else:
        a, b, c = (nn.Linear(n, n) for n in (4, 5, 6))

    def listed():
        return list(getattr(m, kind)())

    for name, value, expected in (("a", a, [a]), ("b", b, [a, b])):
        setattr(m, name, None)  # None can be shadowed
        assert getattr(m, name) is None and name in m.__dict__
        setattr(m, name, value)
        assert getattr(m, name) is value and listed() == expected and name not in m.__dict__
    m.a = None  # removed and put back: the order is kept
    assert m.a is None and listed() == [b]
    m.a = a
    assert listed() == [a, b]
    m.a = c
    assert m.a is c and listed() == [c, b]
    del m.a  # deleted and assigned again: it comes last
    assert not hasattr(m, "a")
    m.a = a
    assert listed() == [b, a]
    del m.a, m.b
    assert listed() == []


@both
def test_buffer_assignment(lib):
    m = lib.nn.Module()
    buf = lib.nn.Buffer(lib.randn(10))
    m.buf = buf
    assert m.buf is buf
    m.buf = None
    assert m.buf is None and "buf" not in m.__dict__
    m.buf = buf
    assert lib.equal(m.state_dict()["buf"], buf)


@both
def test_container_copy(lib):
    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = lib.nn.Linear(4, 5)

        def forward(self, x):
            return self.linear(x)

    x = lib.randn(2, 4)
    model = Model()
    copy = deepcopy(model)
    assert lib.equal(model(x).data, copy(x).data)
    copy.linear.weight.data[:] = 2
    assert not lib.equal(model(x).data, copy(x).data)


def test_rnn_cells():
    def program(lib):
        results = []
        for cell_type in (lib.nn.RNNCell, lib.nn.GRUCell):
            for bias in (True, False):
                cell = cell_type(10, 20, bias=bias).double()
                with lib.no_grad():
                    for i, p in enumerate(cell.parameters()):
                        p.copy_(lib.tensor(data(*p.shape, seed=i)) * 0.2)
                x = lib.tensor(data(3, 10, seed=10))
                hx = lib.tensor(data(3, 20, seed=11))
                for _ in range(6):
                    hx = cell(x, hx)
                hx.sum().backward()
                results.append([hx, [p.grad for p in cell.parameters()]])
        x, hx = lib.randn(3, 10), lib.randn(3, 0)
        shapes = [tuple(cell(x, hx).shape) for cell in (
            lib.nn.RNNCell(10, 0, nonlinearity="relu"), lib.nn.RNNCell(10, 0, nonlinearity="tanh"),
            lib.nn.GRUCell(10, 0))]
        return results, shapes

    _, shapes = like_torch(program, rtol=1e-10, atol=1e-12)
    assert shapes == [(3, 0)] * 3


@both
@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                                  "kl_div", "poisson_nll_loss"])
def test_loss_equal_input_target_shape(lib, loss):
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        getattr(lib.nn.functional, loss)(lib.randn(3, 5), lib.randn(5, 3))


@both
def test_mse_loss_size_warning(lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.nn.functional.mse_loss(lib.randn(10, 1, requires_grad=True), lib.randn(10))
    assert len(caught) == 1 and "Please ensure they have the same size." in str(caught[0])


def test_weighted_losses():
    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        target = lib.tensor([1.5, 2.5, 3.5, 4.5])
        weight = lib.tensor([1.0, 2.0, 3.0, 4.0])
        F = lib.nn.functional
        return [F.mse_loss(x, target, weight=weight, reduction="mean"),
                F.l1_loss(x, target, weight=weight, reduction="mean"),
                F.huber_loss(input=x, target=target, weight=weight, reduction="mean", delta=1.0)]

    mse, l1, huber = like_torch(program)
    assert (mse.item(), l1.item(), huber.item()) == (0.25, 0.5, 0.3125)


@both
def test_gaussian_nll_loss_broadcasting(lib):
    x = lib.tensor([[0.5, 1.5, 2.5], [2., 4., 6.]])
    target_full = lib.tensor([[1., 2., 3.], [1., 2., 3.]])
    target_part = lib.tensor([[1., 2., 3.]])
    var_full = lib.tensor([[0.5, 0.5, 0.5], [1.5, 1.5, 1.5]])
    expected = 0.5 * (lib.log(var_full) + (x - target_full) ** 2 / var_full)
    for target, var in ((target_part, var_full), (target_full, lib.tensor([[0.5], [1.5]])),
                        (target_full, lib.tensor([0.5, 1.5])),
                        (target_part, lib.tensor([[0.5], [1.5]])),
                        (target_part, lib.tensor([0.5, 1.5]))):
        got = lib.nn.functional.gaussian_nll_loss(x, target, var, reduction="none")
        assert lib.allclose(got, expected)
    var_tensor = 0.5 * lib.ones_like(x)
    expected = 0.5 * (lib.log(var_tensor) + (x - target_full) ** 2 / var_tensor)
    assert lib.allclose(lib.nn.functional.gaussian_nll_loss(x, target_full, 0.5, reduction="none"),
                        expected)


@both
def test_gaussian_nll_loss_args(lib):
    x, target = lib.randn(3, 5), lib.randn(3, 5)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        lib.nn.functional.gaussian_nll_loss(x, target, lib.ones(3, 3))
    for var in (-1 * lib.ones(3, 5), -1.0):
        with pytest.raises(ValueError, match="var has negative entry/entries"):
            lib.nn.functional.gaussian_nll_loss(x, target, var)


def test_kl_div_batchmean():
    def program(lib):
        F = lib.nn.functional
        log_p = F.log_softmax(lib.tensor(data(2, 5)), 1)
        q, log_q = F.softmax(lib.tensor(data(2, 5, seed=1)), 1), F.log_softmax(
            lib.tensor(data(2, 5, seed=1)), 1)
        return [[lib.nn.KLDivLoss(reduction=r, log_target=log)(log_p, target)
                 for r in ("batchmean", "sum")] for target, log in ((q, False), (log_q, True))]

    for batchmean, total in like_torch(program):
        np.testing.assert_allclose(batchmean.numpy(), total.numpy() / 2, rtol=1e-15)


@both
def test_ctc_loss_argument_checks(lib):
    target_lengths, input_lengths = lib.tensor([30, 25, 20]), lib.tensor([50, 50, 50])
    targets = lib.randint(1, 15, (75,), dtype=lib.int)
    log_probs = lib.randn(50, 3, 15).log_softmax(2)
    ctc = lib.nn.functional.ctc_loss
    for lengths in ((input_lengths.float(), target_lengths),
                    (input_lengths, target_lengths.float())):
        with pytest.raises(RuntimeError, match="lengths must be integral"):
            ctc(log_probs, targets, *lengths)
    for tl in ([30, 25, 20], [-1, -1, -1]):
        for il in ([50, 50, 50], [-1, -1, -1]):
            with pytest.raises(RuntimeError, match="Expected target_lengths to have value at "
                               "least 0, but got value -1|size at least 30 at dimension 1"):
                ctc(log_probs, lib.randint(1, 15, (3, 29), dtype=lib.int), il, tl)
    for il, message in (([-1, 50, 50], "input_lengths to have value at least 0, but got "
                                       "value -1"),
                        ([51, 50, 50], "input_lengths to have value at most 50, but got value "
                                       "51")):
        with pytest.raises(RuntimeError, match=message + r" \(while checking arguments for "
                                                         r"ctc_loss_allocate_outputs\)"):
            ctc(log_probs, lib.randint(1, 15, (3, 30), dtype=lib.int), il, [30, 25, 20])


@both
@pytest.mark.parametrize("layer", ["BatchNorm1d", "InstanceNorm1d"])
def test_norm_state_dict_without_num_batches_tracked(lib, layer):
    """torch's _NormBase version 2: an older (or plain) state dict may lack the count."""
    norm = getattr(lib.nn, layer)(3, track_running_stats=True)
    norm.num_batches_tracked += 5
    plain = {k: v for k, v in norm.state_dict().items() if k != "num_batches_tracked"}
    assert not norm.load_state_dict(plain).missing_keys and norm.num_batches_tracked == 5
    current = norm.state_dict()
    del current["num_batches_tracked"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: '
                                           '"num_batches_tracked"'):
        norm.load_state_dict(current)


@both
def test_load_state_dict_loads_the_keys_without_error(lib):
    """torch copies every key it can, raises for the rest after, and runs the post-hooks."""
    m = lib.nn.Linear(2, 2)
    seen = []
    m.register_load_state_dict_post_hook(lambda module, keys: seen.append(list(keys)))
    with pytest.raises(RuntimeError, match="size mismatch for weight: copying a param with "
                                           "shape .*Size\\(\\[3, 3\\]\\) from checkpoint"):
        m.load_state_dict({"weight": lib.ones(3, 3), "bias": lib.ones(2), "x": lib.ones(1)})
    assert m.bias.tolist() == [1.0, 1.0] and seen == [[[], ["x"]]]
