"""torch's test/test_nn.py (TestNN, first quarter): module conversions (``_apply``, ``type``,
``torch.__future__``), parameters as a vector, weight_norm, spectral_norm, threshold, pad and
normalize.

Each program runs on gradkit and on torch 2.13 (``lib``); where values are compared the data
comes from NumPy (``like_torch``), spectral norm's random u and v vectors included.
"""
import pickle
import warnings
from copy import deepcopy

import numpy as np
import pytest

from torch_expectations.twin import both_libraries as both, data, like_torch


@pytest.fixture
def overwrite_params(request):
    """torch.__future__'s overwrite switch on for one test of ``lib``, off afterwards."""
    lib = request.getfixturevalue("lib")
    lib.__future__.set_overwrite_module_params_on_conversion(True)
    yield
    lib.__future__.set_overwrite_module_params_on_conversion(False)


@both
def test_conversion_keeps_parameters_by_default(lib):
    assert lib.__future__.get_overwrite_module_params_on_conversion() is False
    m = lib.nn.Linear(20, 10).float()
    view = m.weight[:]
    m.weight.grad = lib.randn(10, 20)
    weight, grad = m.weight, m.weight.grad
    versions = weight._version, grad._version
    m.double()
    assert (weight._version, grad._version) == versions  # torch's param.data = ...: no bump
    with lib.no_grad():
        view[0][0] = 5  # the view keeps the old float32 memory
    assert view[0][0].dtype == lib.float32 and view._base[0][0].dtype == lib.float64
    assert m.weight is weight and m.weight.grad is grad and grad.dtype == lib.float64
    versions = weight._version, grad._version
    m._apply(lambda t: lib.randn(t.shape))
    assert (weight._version, grad._version) == versions


@both
def test_overwrite_module_params_on_conversion(lib, overwrite_params):
    m = lib.nn.Linear(20, 10).float()
    view = m.weight[:]
    m.double()
    with lib.no_grad():
        view[0][0] = 5
    assert view[0][0] == view._base[0][0]
    m = lib.nn.Linear(20, 10).float()
    m.weight.grad = lib.randn(10, 20).float()
    weight, grad = m.weight, m.weight.grad
    m.double()
    assert weight.dtype != m.weight.dtype and grad.dtype != m.weight.grad.dtype
    m = lib.nn.Linear(20, 10)
    product = m.weight.mul(m.weight)
    weight, version = m.weight, m.weight._version
    m = m._apply(lambda t: t.add_(1.0))
    assert weight._version > version and m.weight is not weight
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        product.backward(lib.randn(10, 20))
    m = lib.nn.Linear(20, 10)
    m.weight.grad = lib.randn(10, 20).requires_grad_()
    product = m.weight.grad.mul(m.weight.grad)
    grad, version = m.weight.grad, m.weight.grad._version
    m = m._apply(lambda t: t.add_(1.0))
    assert grad._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        product.backward(lib.randn(10, 20))
    m = lib.nn.Linear(20, 10)
    m.weight.grad = lib.randn(10, 20).requires_grad_()
    weight, grad = m.weight, m.weight.grad
    versions = weight._version, grad._version
    m = m._apply(lambda t: lib.randn(t.shape))
    assert (weight._version, grad._version) == versions
    assert type(m.weight).__name__ == "Parameter" and m.weight.grad.requires_grad


@both
def test_type(lib):
    l = lib.nn.Linear(10, 20)
    net = lib.nn.Module()
    net.l = l
    net.l2 = l
    net.add_module("empty", None)
    net.indices = lib.nn.Buffer(lib.LongTensor(1))
    for convert, kind in ((lambda: net.float(), lib.FloatTensor),
                          (lambda: net.double(), lib.DoubleTensor),
                          (lambda: net.to(lib.half), lib.HalfTensor),
                          (lambda: net.to(lib.device("cpu"), non_blocking=True), lib.HalfTensor),
                          (lambda: net.to(lib.float), lib.FloatTensor),
                          (lambda: net.to(lib.DoubleTensor(1)), lib.DoubleTensor)):
        assert convert() is net
        assert isinstance(l.weight.data, kind) and isinstance(l.bias.data, kind)
        assert isinstance(net.indices, lib.LongTensor)


@both
def test_to_complex_warns(lib):
    with pytest.warns(UserWarning, match="Complex modules are a new feature"):
        m = lib.nn.Linear(2, 2).to(lib.complex64)
    assert m.weight.dtype == lib.complex64


@both
def test_non_leaf_parameters(lib):
    l1, l2 = lib.nn.Linear(10, 10), lib.nn.Linear(10, 10)
    with pytest.raises(TypeError, match=r"cannot assign '\w+.FloatTensor' as parameter 'weight' "
                                        r"\(\w+.nn.Parameter or None expected\)"):
        l2.weight = l1.weight + 2
    l2.weight = lib.nn.Parameter(lib.randn(10, 10))


@both
def test_parameters_to_vector_and_back(lib):
    model = lib.nn.Sequential(lib.nn.Conv2d(3, 10, 5), lib.nn.Linear(10, 20))
    assert lib.nn.utils.parameters_to_vector(model.parameters()).size(0) == 980
    vec = lib.arange(0., 980)
    lib.nn.utils.vector_to_parameters(vec, model.parameters())
    assert lib.equal(next(model.parameters())[0, 0, 0].data, vec.data[:5])


@both
@pytest.mark.parametrize("proj_size, name, count", [(0, "weight_ih_l0", 4),
                                                     (16, "weight_hr_l0", 5)])
def test_rnn_weight_norm(lib, proj_size, name, count):
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
        lstm = lib.nn.utils.weight_norm(lib.nn.LSTM(32, 32, proj_size=proj_size), name=name)
    assert sum(isinstance(p, lib.nn.Parameter) for p in lstm._flat_weights) == count - 1
    lstm = lib.nn.utils.remove_weight_norm(lstm, name=name)
    assert sum(isinstance(p, lib.nn.Parameter) for p in lstm._flat_weights) == count
    named = dict(lstm.named_parameters())
    assert lstm._parameters[name] is not None and named[name] is not None
    assert not {name + "_v", name + "_g"} & (set(lstm._parameters) | set(named))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_weight_norm(dtype):
    def program(lib):
        warnings.simplefilter("ignore", FutureWarning)
        kind = getattr(lib, dtype)
        x = lib.tensor(data(3, 4), dtype=kind)
        m = lib.nn.Linear(4, 5).to(dtype=kind)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(data(5, 4, seed=1)))
            m.bias.copy_(lib.tensor(data(5, seed=2)))
        outs = [m(x)]
        m = lib.nn.utils.weight_norm(m)
        sizes = [tuple(m.weight_v.shape), tuple(m.weight_g.shape)]
        outs.append(m(x))
        m = lib.nn.utils.remove_weight_norm(m)
        gone = not hasattr(m, "weight_g") and not hasattr(m, "weight_v")
        outs.append(m(x))
        m = lib.nn.utils.weight_norm(m, dim=1)
        sizes.append(tuple(m.weight_g.shape))
        outs.append(m(x))
        m = lib.nn.utils.weight_norm(lib.nn.Linear(4, 5).to(dtype=kind), dim=None)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the "
                                               "same parameter weight"):
            lib.nn.utils.weight_norm(m)
        return [o.detach().float() for o in outs], sizes, gone, m.weight_g.shape == ()

    outs, sizes, gone, scalar_g = like_torch(program, rtol=1e-3 if dtype == "float16" else 1e-6,
                                             atol=1e-3 if dtype == "float16" else 1e-6)
    assert sizes == [(5, 4), (5, 1), (1, 4)] and gone and scalar_g
    for out in outs[1:]:
        np.testing.assert_allclose(out.numpy(), outs[0].numpy(), atol=1e-2 if dtype == "float16"
                                   else 1e-5)


@both
def test_parameter_containers_quiet_and_pickle(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plist = lib.nn.ParameterList(map(lib.nn.Parameter, [lib.rand(2), lib.rand(2)]))
        pdict = lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.rand(2)),
                                      "b": lib.nn.Parameter(lib.rand(2))})
        for mod in (plist, pdict):
            mod.train()
            mod.eval()
            copy = pickle.loads(pickle.dumps(mod))
            assert len(copy) == 2 and not copy.training
        assert list(pickle.loads(pickle.dumps(pdict))) == ["a", "b"]
    with pytest.warns(FutureWarning):
        m = lib.nn.utils.weight_norm(lib.nn.Linear(5, 7))
    assert isinstance(pickle.loads(pickle.dumps(m)), lib.nn.Linear)  # test_weight_norm_pickle


def _spectral_linear(lib, n_in=5, n_out=7, seed=0):
    """A spectral-normed Linear whose weight, bias, u and v come from NumPy data."""
    m = lib.nn.Linear(n_in, n_out).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(data(n_out, n_in, seed=seed)))
        m.bias.copy_(lib.tensor(data(n_out, seed=seed + 1)))
    return _seeded_uv(lib, lib.nn.utils.spectral_norm(m), seed)


def _seeded_uv(lib, m, seed=0):
    """Spectral norm's u and v vectors (random in each library) set from NumPy data."""
    n_out, n_in = m.weight_orig.shape
    with lib.no_grad():
        m.weight_u.copy_(lib.nn.functional.normalize(lib.tensor(data(n_out, seed=seed + 2)),
                                                     dim=0))
        m.weight_v.copy_(lib.nn.functional.normalize(lib.tensor(data(n_in, seed=seed + 3)),
                                                     dim=0))
    return m


@both
def test_spectral_norm_structure(lib):
    m = lib.nn.utils.spectral_norm(lib.nn.Linear(5, 7))
    assert m.weight_u.size() == (m.weight.size(0),)
    assert "weight_orig" in m._parameters and {"weight_u", "weight_v"} <= set(m._buffers)
    assert "weight" not in m._buffers and "weight" not in m._parameters
    assert m.weight_orig.untyped_storage() == m.weight.untyped_storage()  # shares memory
    assert (m.weight_orig.size(), m.weight_orig.stride()) == (m.weight.size(), m.weight.stride())
    m = lib.nn.utils.remove_spectral_norm(m)
    assert not hasattr(m, "weight_orig") and not hasattr(m, "weight_u")
    assert "weight" in m._parameters
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on the "
                                           "same parameter weight"):
        lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(m))
    assert isinstance(pickle.loads(pickle.dumps(lib.nn.utils.spectral_norm(
        lib.nn.Linear(5, 7)))), lib.nn.Linear)  # test_spectral_norm_pickle


@pytest.mark.parametrize("requires_grad", [True, False])
def test_spectral_norm_train_eval(requires_grad):
    def program(lib):
        m = _spectral_linear(lib, 3, 4)
        m.weight_orig.requires_grad_(requires_grad)
        x = lib.tensor(data(2, 3, seed=9))
        u0 = m.weight_u.clone()
        outs = [m(x)]
        moved = not lib.equal(u0, m.weight_u)
        grad = lib.autograd.grad(outs[0].sum(), m.weight_orig)[0] if requires_grad else None
        outs = [o.detach() for o in outs] + [m(x).detach(), m(x).detach()]
        before_removal = m(x)
        m = lib.nn.utils.remove_spectral_norm(m)
        removed_same = lib.equal(m(x), before_removal)
        m = _seeded_uv(lib, lib.nn.utils.spectral_norm(m))
        m(x)
        last_train = m(x)
        last_u = m.weight_u.clone()
        m.eval()
        eval_out = m(x)
        return (outs, grad, moved, removed_same, eval_out, last_train, m(x), last_u, m.weight_u)

    got = like_torch(program, rtol=1e-10, atol=1e-12)
    outs, grad, moved, removed_same, eval_out, last_train, eval_again, last_u, u = got
    assert moved and removed_same
    np.testing.assert_allclose(eval_out.detach().numpy(), last_train.detach().numpy())
    np.testing.assert_allclose(eval_again.detach().numpy(), eval_out.detach().numpy())
    np.testing.assert_array_equal(u.numpy(), last_u.numpy())


@both
def test_spectral_norm_gradcheck(lib):
    m = _spectral_linear(lib, 3, 4)
    x = lib.tensor(data(2, 3, seed=9), requires_grad=True)
    saved_u, saved_v = m.weight_u.clone(), m.weight_v.clone()

    def train_twice(inp):
        m.weight_u.data.copy_(saved_u)
        m.weight_v.data.copy_(saved_v)
        return m(inp) + m(inp)

    def mixed_modes(inp):
        m.weight_u.data.copy_(saved_u)
        m.weight_v.data.copy_(saved_v)
        outs = []
        for training in (True, False, True, False):
            m.train(training)
            outs.append(m(inp))
        return sum(outs)

    assert lib.autograd.gradcheck(train_twice, (x,), check_batched_grad=False)
    assert lib.autograd.gradcheck(mixed_modes, (x,))
    m.eval()
    assert lib.autograd.gradcheck(lambda weight: m(x), (m.weight_orig,))


@pytest.mark.parametrize("activate_times", [0, 3])
def test_spectral_norm_load_state_dict(activate_times):
    def program(lib):
        x = lib.tensor(data(2, 3, seed=4))
        snm = _spectral_linear(lib, 3, 5)
        for _ in range(activate_times):
            snm(x)
        reference = deepcopy(snm.state_dict())
        keys = sorted(reference)
        loose = deepcopy(reference)
        loose["nonsense"] = "nonsense"
        with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "nonsense"'):
            snm.load_state_dict(loose, strict=True)
        for drop in ("weight_orig", "weight_u", "weight_v"):
            snm.load_state_dict(loose, strict=False)
            del loose[drop]
        loose["weight"] = snm.weight.detach().clone()
        snm.load_state_dict(loose, strict=False)
        del loose._metadata[""]["spectral_norm"]
        snm.load_state_dict(loose, strict=False)
        del loose["weight"], loose["bias"]
        snm.load_state_dict(loose, strict=False)
        version_none = deepcopy(reference)
        del version_none._metadata[""]["spectral_norm"], version_none["weight_v"]
        version_none["weight"] = snm.weight.detach().clone()
        results = []
        for state in (reference, version_none, reference):
            snm = _seeded_uv(lib, lib.nn.utils.spectral_norm(lib.nn.utils.remove_spectral_norm(
                snm)), seed=5)
            snm.load_state_dict(state)
            with lib.no_grad():
                results.append([snm.eval()(x), snm.train()(x), snm(x), snm.eval()(x)])
        return keys, results

    keys, results = like_torch(program, rtol=1e-10, atol=1e-12)
    assert keys == ["bias", "weight_orig", "weight_u", "weight_v"]
    if activate_times:  # version None state: equal after one forward at least
        for a, b in zip(results[0], results[1]):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    for a, b in zip(results[0], results[2]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


@both
def test_spectral_norm_dim_and_forward(lib):
    m = lib.nn.utils.spectral_norm(lib.nn.ConvTranspose2d(3, 4, (5, 6)))
    m(lib.randn(2, 3, 10, 12))
    assert m.weight_u.shape == m.weight_orig[0, :, 0, 0].shape
    m = _spectral_linear(lib)
    x = lib.tensor(data(3, 5, seed=7))
    weight, bias, u = m.weight_orig, m.bias, m.weight_u
    matrix = weight.view(weight.size(0), -1)
    v = lib.nn.functional.normalize(lib.mv(matrix.t(), u), dim=0, eps=1e-12)
    u = lib.nn.functional.normalize(lib.mv(matrix, v), dim=0, eps=1e-12)
    expected = lib.nn.functional.linear(x, weight / lib.dot(u, lib.matmul(matrix, v)), bias)
    assert lib.allclose(m(x), expected, rtol=1e-12, atol=1e-12)


def test_threshold():
    def program(lib):
        x = lib.tensor([-3, -2, -1, 0, 1, 2, 3])
        out = [lib.nn.functional.threshold(x, 0, 99)]
        y = lib.tensor(data(100), dtype=lib.float32)
        for threshold in (0, -0.5, 0.5, float("inf"), float("-inf"), float("nan")):
            half = lib.nn.functional.threshold(y.half(), threshold, 0).float()
            out.append((half, lib.nn.functional.threshold(y, threshold, 0).half().float()))
        return out

    out = like_torch(program)
    assert out[0].tolist() == [99, 99, 99, 99, 1, 2, 3]
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in out[1:])


@both
def test_pad_scalar_error(lib):
    x = lib.tensor(0., requires_grad=True)
    for pad in ((1, 1), (1,)):
        with pytest.raises(RuntimeError, match="Padding length must be divisible by 2|Padding "
                                               "length should be less than or equal to two"):
            lib.nn.functional.pad(x, pad)


@both
def test_normalize_gradcheck(lib):
    x = lib.tensor(data(1, 3, 4, 4), requires_grad=True)
    assert lib.autograd.gradcheck(lambda t: lib.nn.functional.normalize(t, p=1, dim=-1), (x,))
    assert lib.autograd.gradcheck(lambda t: lib.nn.functional.normalize(t, p=2, dim=-2), (x,))
    scalar = lib.tensor(0.7, dtype=lib.float64, requires_grad=True)
    assert lib.autograd.gradcheck(lambda t: lib.nn.functional.normalize(t, p=1, dim=-1),
                                  (scalar,))
