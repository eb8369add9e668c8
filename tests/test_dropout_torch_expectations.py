"""The expectations of torch's test/nn/test_dropout.py, as programs run in gradkit and in
torch 2.13 and compared where they are deterministic (p = 0 or 1, eval mode, shapes, dtypes,
strides, errors and warnings); the random masks differ from torch's even under one seed, so
the draws are checked by their statistics, as torch's tests check them."""
import itertools
import warnings

import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.outcome import assert_like_torch  # noqa: E402

CLASSES = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]
FUNCTIONS = ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
             "dropout3d"]
SHAPES = {"Dropout": (1000,), "Dropout1d": (12, 13, 14), "Dropout2d": (1000, 3, 2, 4),
          "Dropout3d": (1000, 2, 2, 3, 4)}


@pytest.mark.parametrize("name", list(SHAPES))
def test_dropout(name):  # test_Dropout, test_Dropout1d/2d/3d (_test_dropout)
    gradkit.manual_seed(0)
    p = 0.2
    source = gradkit.full(SHAPES[name], 1 - p, dtype=gradkit.float64)
    for inplace in (False, True):
        x = source.clone().requires_grad_()
        output = getattr(gradkit.nn, name)(p, inplace)(x + 0 if inplace else x)
        assert output.is_contiguous()
        assert abs(float(output.detach().mean()) - (1 - p)) < 0.05  # the kept share, rescaled
        output.backward(source)
        assert abs(float(x.grad.mean()) - (1 - p)) < 0.05
    for inplace in (True, False):  # eval mode changes nothing
        assert_like_torch(lambda m, i=inplace: getattr(m.nn, name)(p, i).eval()(
            m.full(SHAPES[name][:1] + (2, 3, 2)[:len(SHAPES[name]) - 1], 0.8)))


def test_dropout_channels_last():  # test_Dropout2d's channels_last half
    def program(m):
        x = m.ones(4, 3, 2, 2).contiguous(memory_format=m.channels_last).requires_grad_()
        out = m.nn.Dropout2d(0.2)(x)
        out.backward(m.ones_like(out))
        return (out.is_contiguous(memory_format=m.channels_last),
                x.grad.is_contiguous(memory_format=m.channels_last), out.stride())
    assert_like_torch(program)


@pytest.mark.parametrize("name", list(SHAPES))
def test_dropout_discontiguous(name):  # _test_dropout_discontiguous
    def program(m):
        results = []
        for p in (0.0, 1e-10):
            x = m.empty(2, 3, 3, 6)[..., ::2]
            x.copy_(m.ones(2, 3, 3, 3))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (Dropout1d/3d: their rank warnings)
                if name == "Dropout1d":
                    x = x[0]
                out = getattr(m.nn, name)(p=p)(x)
            results += [out, out.stride(), out.is_contiguous()]
        return results
    assert_like_torch(program)


def test_dropout_stride_mean_preserve():  # _test_dropout_stride_mean_preserve
    # (a size-1 dim's stride is free: NumPy's layouts and torch's may name it differently)
    for perm in list(itertools.permutations(range(4)))[::5]:
        inverse = tuple(int(i) for i in np.argsort(perm))
        for shift in ((0, 0), (1, 0), (0, 1), (1, 1)):
            for p in (1e-10, 0.3, 0.7):
                def program(m, perm=perm, inverse=inverse, shift=shift, p=p):
                    x = m.ones(2, 3, 4, 5).permute(perm).contiguous().permute(inverse)
                    x = x[shift[0]:, shift[1]:]
                    out = m.nn.Dropout(p=p)(x)
                    kept = out != 0
                    strides = [st for st, n in zip(out.stride(), out.shape) if n > 1]
                    return (strides, out.permute(perm).is_contiguous(),
                            # (torch's tolerance of the mean)
                            abs(float(out.mean()) - 1) <= 1.0 if p > 0.1 else out,
                            bool(((out == 0) | (out == 1 / (1 - p))).all()), kept.shape)
                assert_like_torch(program, rtol=1e-12)


@pytest.mark.parametrize("name", ["Dropout1d", "Dropout3d"])
def test_dropout_nd_no_batch(name):  # _test_dropoutNd_no_batch
    shape = (50, 2) if name == "Dropout1d" else (50, 2, 2, 2)
    for inplace in (False, True):
        x = gradkit.rand(*shape)
        gradkit.manual_seed(3)
        unbatched = getattr(gradkit.nn, name)(0.5, inplace)(x.clone())
        gradkit.manual_seed(3)
        batched = getattr(gradkit.nn, name)(0.5, inplace)(x.clone().unsqueeze(0)).squeeze(0)
        assert gradkit.equal(unbatched, batched)
        assert unbatched.shape == shape

    def program(m):  # the result is a view of a batch of one, as torch's
        x = m.ones(*shape, requires_grad=True)
        out = getattr(m.nn, name)(0.0)(x)
        return out is x, out.shape, out.grad_fn.name()
    assert_like_torch(program)


@pytest.mark.parametrize("name,shape", [("Dropout1d", (10, 4, 2)), ("Dropout2d", (10, 4, 2, 2)),
                                        ("Dropout3d", (10, 4, 2, 2, 2))])
def test_dropout_nd_channel_zero(name, shape):  # _test_dropoutNd_channel_zero
    gradkit.manual_seed(1)
    for inplace in (False, True):
        out = getattr(gradkit.nn, name)(0.5, inplace)(gradkit.ones(shape))
        per_channel = out.reshape(10, 4, -1).count_nonzero(-1)
        assert set(per_channel.reshape(-1).tolist()) <= {0, int(np.prod(shape[2:]))}
        assert 0 < int((per_channel == 0).sum()) < 40  # some channels dropped, not all


def test_dropout_nd_rank_errors_and_warnings():  # test_Dropout1d/2d/3d's rank checks
    for shape in ((1, 2, 2, 2), (2,)):
        assert_like_torch(lambda m, s=shape: m.nn.Dropout1d(p=0.5)(m.rand(*s)))
    for name, shape, text in (("Dropout2d", (1, 2, 2, 2, 2), "Received a 5-D input to dropout2d"),
                              ("Dropout2d", (1, 2), "Received a 2-D input to dropout2d"),
                              ("Dropout2d", (1, 2, 2), "assuming that channel-wise 1D dropout"),
                              ("Dropout3d", (1, 2, 2, 2, 2, 2), "Received a 6-D input to "),
                              ("Dropout3d", (1, 2, 2), "Received a 3-D input to dropout3d")):
        for m in (torch, gradkit):
            with pytest.warns(UserWarning, match=text):
                assert tuple(getattr(m.nn, name)(p=0.5)(m.rand(*shape)).shape) == shape


@pytest.mark.parametrize("name,shape", [("AlphaDropout", (5000,)),
                                        ("FeatureAlphaDropout", (1000, 3, 2, 2, 3)),
                                        ("FeatureAlphaDropout", (50, 20, 16, 16))])
def test_alpha_dropout(name, shape):  # test_AlphaDropout, test_FeatureAlphaDropout
    gradkit.manual_seed(2)
    x = gradkit.randn(*shape, dtype=gradkit.float64)
    for p in (0.2, 0.5, 0.8):
        out = getattr(gradkit.nn, name)(p)(x.clone().requires_grad_())
        values = out.detach()
        assert abs(float(values.mean()) - float(x.mean())) < 0.1  # SELU's mean and std kept
        assert abs(float(values.std()) - float(x.std())) < 0.1
        out.backward(x)


@pytest.mark.parametrize("name", CLASSES)
def test_invalid_dropout_p(name):  # test_invalid_dropout_p
    for p in (-0.1, 1.1):
        for m in (torch, gradkit):
            with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
                getattr(m.nn, name)(p)
    assert_like_torch(lambda m: repr(getattr(m.nn, name)(0.3, True)))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_invalid_dropout_p_functional(name):  # test_invalid_dropout_p (F.dropout)
    for p in (-0.1, 1.1):
        assert_like_torch(lambda m, p=p: getattr(m.nn.functional, name)(m.ones(2, 3, 4, 4), p))


def test_empty_dropout():  # test_empty_dropout
    assert_like_torch(lambda m: [getattr(m.nn.functional, name)(m.ones(0, 2, 3, 3), 0.5, True)
                                 .shape for name in FUNCTIONS[:3] + FUNCTIONS[4:]])


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("p", [0.0, 1.0])
@pytest.mark.parametrize("inplace", [False, True])
def test_dropout_corner_p(name, p, inplace):  # test_native_dropout_corner_case (on CPU)
    def program(m):
        x = m.tensor(np.random.default_rng(0).standard_normal((2, 3, 4, 5)),
                     requires_grad=True)
        source = x.clone() if inplace else x
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (dropout1d: a 4-D input is an error, below)
            try:
                out = getattr(m.nn.functional, name)(source, p, True, inplace)
            except RuntimeError as error:
                return str(error)
        out.sum().backward()
        return out, x.grad, out is source, getattr(out.grad_fn, "name", lambda: None)()
    assert_like_torch(program)


@pytest.mark.parametrize("name", FUNCTIONS[:3] + FUNCTIONS[4:])
@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "complex64", "complex128"])
@pytest.mark.parametrize("p", [0.5, 1.0])
def test_dropout_non_floating(name, dtype, p):  # (torch's kernels: no float mask to cast)
    for inplace in (False, True):
        def program(m, inplace=inplace):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    return getattr(m.nn.functional, name)(m.ones(2, 3, 4, 5,
                                                                 dtype=getattr(m, dtype)),
                                                          p, True, inplace)
                except NotImplementedError as error:
                    return str(error)
        assert_like_torch(program)


def test_native_dropout():  # test_native_dropout_corner_case (torch.native_dropout)
    def program(m):
        x = m.ones(5, requires_grad=True)
        results = []
        for train in (True, False):
            for p in (0.0, 1.0):
                out, mask = m.native_dropout(x, p, train)
                reference = m.dropout(x, p, train)
                results += [out, mask, out.equal(reference)]
        return results
    assert_like_torch(program)
