"""torch's test/nn/test_parametrization.py, second half: nn.utils.parametrizations
(spectral_norm, orthogonal, weight_norm) on gradkit and on torch 2.13.

Programs with torch's asserts run on both libraries; where no random draw is involved
(weights copied in, u and v copied between the libraries) the numbers are compared too.
Left out: DataParallel, bfloat16, the swap_tensors path.
"""
import contextlib
import copy

import numpy as np
import pytest

import gradkit
from torch_expectations.twin import both_libraries as both, like_torch, raises_like_torch

RNG = np.random.default_rng(11)
WEIGHT, BIAS, INPUT = RNG.standard_normal((7, 5)), RNG.standard_normal(7), \
    RNG.standard_normal((3, 5))
U, V = RNG.standard_normal(7), RNG.standard_normal(5)


@both
def test_new_spectral_norm_structure(lib):
    P, S = lib.nn.utils.parametrize, lib.nn.utils.parametrizations  # noqa: N806 - modules
    m = S.spectral_norm(lib.nn.Linear(5, 7).double())
    snm = m.parametrizations.weight[0]
    assert snm._u.size() == (7,) and snm._v.size() == (5,)
    assert "original" in m.parametrizations.weight._parameters
    assert "_u" in snm._buffers and "_v" in snm._buffers
    assert "weight" not in m._buffers and "weight" not in m._parameters
    original = m.parametrizations.weight.original
    assert original.size() == m.weight.size() and original.stride() == m.weight.stride()
    m = P.remove_parametrizations(m, "weight")
    assert not hasattr(m, "parametrizations") and "weight" in m._parameters
    m = S.spectral_norm(S.spectral_norm(m, "weight"), "weight")  # twice on one tensor
    m = S.spectral_norm(m, "bias")  # and on a 1-D one
    assert len(m.parametrizations.weight) == 2
    m = P.remove_parametrizations(m, "bias")
    assert "bias" in m._parameters and hasattr(m, "parametrizations")
    m = P.remove_parametrizations(m, "weight")
    assert not P.is_parametrized(m) and "weight" in m._parameters


def _spectral_linear(lib, requires_grad=True):
    """Linear(5, 7) in float64 with fixed weight, bias, u and v (no random draws left)."""
    m = lib.nn.Linear(5, 7).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(WEIGHT))
        m.bias.copy_(lib.tensor(BIAS))
    m.weight.requires_grad_(requires_grad)
    m = lib.nn.utils.parametrizations.spectral_norm(m)
    snm = m.parametrizations.weight[0]
    snm._u.copy_(lib.nn.functional.normalize(lib.tensor(U), dim=0))
    snm._v.copy_(lib.nn.functional.normalize(lib.tensor(V), dim=0))
    return m, snm


@pytest.mark.parametrize("requires_grad", [True, False])
def test_new_spectral_norm_training_eval_and_removal_like_torch(requires_grad):
    """torch's training / eval / removal sequence, with torch's numbers."""
    def program(lib):
        x = lib.tensor(INPUT)
        m, snm = _spectral_linear(lib, requires_grad)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        opt.zero_grad()
        m(x).sum().backward()
        opt.step()
        found = [m(x), snm._u.clone(), snm._v.clone()]
        m.eval()
        eval_out = m(x)
        found += [eval_out, lib.equal(eval_out, m(x)), lib.equal(found[1], snm._u)]
        m.train()
        m(x)
        pre_remove = m(x).detach()
        m.eval()
        m = lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
        return found + [pre_remove, lib.equal(m(x), pre_remove), m.weight]
    like_torch(program, rtol=1e-7, atol=1e-9)


def test_new_spectral_norm_gradcheck_over_several_forwards():
    """torch's ``fn``: u and v reset, forwards in training and eval mode summed; gradcheck
    of the input and of the original weight (float64), as torch."""
    m, snm = _spectral_linear(gradkit)
    saved_u, saved_v = snm._u.clone(), snm._v.clone()

    def fn(x):
        snm._u.data.copy_(saved_u)
        snm._v.data.copy_(saved_v)
        outs = []
        for training in (True, False, True, False):
            m.train(training)
            outs.append(m(x))
        return outs[0] + outs[1] + outs[2] + outs[3]

    x = gradkit.tensor(INPUT, requires_grad=True)
    assert gradkit.autograd.gradcheck(fn, (x,))
    m.eval()
    original = m.parametrizations.weight.original
    assert gradkit.autograd.gradcheck(lambda w: m(gradkit.tensor(INPUT)), (original,))


@pytest.mark.parametrize("activate_times", [0, 3])
def test_new_spectral_norm_load_state_dict(activate_times):
    def program(lib):
        x = lib.tensor(INPUT)
        snm, _ = _spectral_linear(lib)
        for _ in range(activate_times):
            snm(x)
        state = copy.deepcopy(snm.state_dict())
        keys = sorted(state)
        loose = copy.deepcopy(state)
        loose["nonsense"] = "nonsense"
        with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: "nonsense"'):
            snm.load_state_dict(loose, strict=True)
        for key in ("parametrizations.weight.original", "parametrizations.weight.0._u",
                    "parametrizations.weight.0._v"):
            snm.load_state_dict(loose, strict=False)
            del loose[key]
        loose["weight"] = snm.weight.detach().clone()
        snm.load_state_dict(loose, strict=False)
        m = lib.nn.utils.parametrize.remove_parametrizations(snm, "weight")
        snm = lib.nn.utils.parametrizations.spectral_norm(m)  # re-wrapping does not matter
        snm.load_state_dict(state)
        outs = []
        with lib.no_grad():
            for training in (False, True, True, False):
                snm.train(training)
                outs.append(snm(x))
        return [keys] + outs
    keys = like_torch(program)[0]
    assert keys == ["bias", "parametrizations.weight.0._u", "parametrizations.weight.0._v",
                    "parametrizations.weight.original"]


@both
def test_new_spectral_norm_dim(lib):
    m = lib.nn.utils.parametrizations.spectral_norm(lib.nn.ConvTranspose2d(3, 4, (5, 6)))
    snm = m.parametrizations.weight[0]
    assert m(lib.randn(2, 3, 10, 12)).shape == (2, 4, 14, 17)
    assert snm._u.shape == m.parametrizations.weight.original[0, :, 0, 0].shape


def test_new_spectral_norm_forward_like_torch():
    """torch's naive forward: one power step by hand, then weight / σ."""
    def program(lib):
        m, snm = _spectral_linear(lib)
        weight = m.parametrizations.weight.original.detach()
        u = lib.nn.functional.normalize(lib.mv(weight, snm._v), dim=0, eps=1e-12)
        v = lib.nn.functional.normalize(lib.mv(weight.t(), u), dim=0, eps=1e-12)
        naive = lib.nn.functional.linear(lib.tensor(INPUT), weight / lib.dot(u, weight @ v),
                                         m.bias)
        return [m(lib.tensor(INPUT)), naive]
    out, naive = like_torch(program)
    np.testing.assert_allclose(out.detach().numpy(), naive.detach().numpy(), rtol=1e-12)


@both
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_new_spectral_norm_value(lib, dtype):
    """A diagonal weight is divided by its largest |entry| (the top singular value); torch's
    random diagonal fixed here to one the 15 power steps resolve in float32."""
    m = lib.nn.Linear(2, 2, dtype=getattr(lib, dtype))
    with lib.no_grad():
        x = lib.tensor([0.9, -0.3], dtype=getattr(lib, dtype))
        m.weight = lib.nn.Parameter(lib.diag(x))
        lib.nn.utils.parametrizations.spectral_norm(m)
        expected = lib.diag(x / x.abs().max())
        assert lib.allclose(m.weight.data, expected, atol=1e-6)


def _assert_is_orthogonal(lib, x):
    n, k = x.size(-2), x.size(-1)
    if n < k:
        x, n, k = x.mT, k, n
    eye = lib.eye(k, dtype=x.dtype).expand(*(x.size()[:-2]), k, k)
    eps = 10 * n * lib.finfo(x.dtype).eps
    assert lib.allclose(x.mH @ x, eye, atol=eps, rtol=0.0)


def _assert_weight_is_q_of(lib, weight, w):
    wide = w.size(-2) < w.size(-1)
    w = w.mT if wide else w
    q, r = lib.linalg.qr(w)
    q = q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    assert lib.allclose(q.mT if wide else q, weight, atol=1e-5, rtol=0.0)


@both
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_orthogonal_parametrization(lib, shape, dtype):
    """torch's six algorithms (three maps, with and without trivialization)."""
    dtype = getattr(lib, dtype)
    x = lib.randn(3, shape[0], dtype=dtype)
    for name in ("matrix_exp", "cayley", "householder"):
        for trivial in (False, True):
            can_initialize = trivial or name == "householder"
            m = lib.nn.Linear(*shape, dtype=dtype)
            w_init = m.weight.clone()
            if name == "householder" and m.weight.is_complex():
                with pytest.raises(ValueError, match="householder parametrization does not "
                                                     "support complex tensors"):
                    lib.nn.utils.parametrizations.orthogonal(m, "weight", name,
                                                             use_trivialization=trivial)
                continue
            lib.nn.utils.parametrizations.orthogonal(m, "weight", name,
                                                     use_trivialization=trivial)
            assert m.weight.shape == w_init.shape
            _assert_is_orthogonal(lib, m.weight)
            if can_initialize:
                _assert_weight_is_q_of(lib, m.weight, w_init)
            wide = m.weight.size(-2) < m.weight.size(-1)
            a = lib.randn_like(m.weight)
            w_new = lib.linalg.qr(a.mT if wide else a).Q
            for value, is_q in ((w_new.mT if wide else w_new, True),
                                (lib.randn_like(m.weight), False)):
                if not can_initialize:
                    with pytest.raises(NotImplementedError, match="assign to the matrix "
                                       "exponential or the Cayley parametrization"):
                        m.weight = value
                    continue
                m.weight = value
                if is_q:
                    assert lib.allclose(value, m.weight, atol=1e-5, rtol=0.0)
                else:
                    _assert_weight_is_q_of(lib, m.weight, value)
            opt = lib.optim.SGD(m.parameters(), lr=0.1)
            for _ in range(2):
                opt.zero_grad()
                m(x).norm().backward()
                grad = m.parametrizations.weight.original.grad
                zeros = grad.triu(1) if grad.size(-2) >= grad.size(-1) else grad.tril(-1)
                assert lib.equal(zeros, lib.zeros_like(zeros))
                diag = grad.diagonal(dim1=-2, dim2=-1)
                diag = diag.real if grad.is_complex() else diag
                assert lib.equal(diag, lib.zeros_like(diag))
                opt.step()
                _assert_is_orthogonal(lib, m.weight)


def test_orthogonal_errors():
    def call(lib, *args):
        return lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 4), *args)

    raises_like_torch(lambda lib: call(lib, "weight", "foo"), ValueError,
                      'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                      "Got: foo")
    raises_like_torch(lambda lib: call(lib, "bias"), ValueError,
                      "Expected a matrix or batch of matrices. Got a tensor of 1 dimensions.")

    def assign_wrong_shape(lib):
        m = call(lib, "weight")
        m.weight = lib.randn(5, 5)
    raises_like_torch(assign_wrong_shape, ValueError,
                      r"Expected a matrix or batch of matrices of shape torch.Size\(\[4, 3\]\). "
                      r"Got a tensor of shape torch.Size\(\[5, 5\]\).".replace(
                          "torch.", "(torch|gradkit)."))


def test_weight_norm_state_dict_compat():
    """The old hook-based weight_norm's state_dict (weight_g, weight_v) loads into the
    parametrized one; outputs agree (and agree with torch)."""
    def program(lib):
        m = lib.nn.Linear(4, 5).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(WEIGHT[:5, :4]))
            m.bias.copy_(lib.tensor(BIAS[:5]))
        m = lib.nn.utils.weight_norm(m)
        old = m.state_dict()
        m2 = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 5).double())
        m2.load_state_dict(old)
        x = lib.tensor(INPUT[:, :4])
        return [sorted(old), m(x), m2(x), lib.equal(m(x), m2(x))]
    assert like_torch(program)[-1]


@both
def test_weight_norm_parametrization(lib):
    x = lib.randn(3, 4)
    m = lib.nn.Linear(4, 5)
    expected = m(x)
    m = lib.nn.utils.parametrizations.weight_norm(m)
    assert m.parametrizations.weight.original1.size() == m.weight.size()
    assert m.parametrizations.weight.original0.size() == (5, 1)
    assert lib.allclose(m(x), expected, atol=1e-6)
    lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
    assert not hasattr(m, "parametrizations")
    assert lib.allclose(m(x), expected, atol=1e-6)
    m = lib.nn.utils.parametrizations.weight_norm(m, dim=1)
    assert m.parametrizations.weight.original0.size() == (1, 4)
    assert lib.allclose(m(x), expected, atol=1e-6)
    m = lib.nn.Linear(4, 5)
    expected = m(x)
    m = lib.nn.utils.parametrizations.weight_norm(m, dim=None)
    assert m.parametrizations.weight.original0.size() == ()
    assert lib.allclose(m(x), expected, atol=1e-6)


@pytest.mark.parametrize("hooked", [False, True])
@pytest.mark.parametrize("dim", [-3, -2, -1, 0, 1, 2, None])
def test_weight_norm_of_every_dim_like_torch(hooked, dim):
    """A negative dim other than -1 counts from the end (torch's transpose(0, dim)): g keeps
    that dim; -1 and None take one norm of the whole weight."""
    weight = RNG.standard_normal((4, 3, 2))

    def program(lib):
        m = lib.nn.Conv1d(3, 4, 2).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(weight))
        wrap = lib.nn.utils.weight_norm if hooked else lib.nn.utils.parametrizations.weight_norm
        with pytest.warns(FutureWarning) if hooked else contextlib.nullcontext():
            m = wrap(m, dim=dim)
        m(lib.ones(1, 3, 5, dtype=lib.float64)).sum().backward()
        return [[tuple(p.shape) for p in m.parameters()], m.weight] + \
            [p.grad for p in m.parameters()]
    like_torch(program)


@pytest.mark.parametrize("shape,dim", [((4, 3, 2), 3), ((4, 3, 2), -4), ((), 0), ((), 1)])
def test_norm_except_dim_out_of_range_like_torch(shape, dim):
    message = "Dimension out of range" if dim else "Dimension specified as 0 but tensor"
    raises_like_torch(lambda lib: lib.norm_except_dim(lib.ones(shape), 2, dim), IndexError,
                      message)
    if len(shape) > 1:
        raises_like_torch(lambda lib: lib.nn.utils.parametrizations.weight_norm(
            lib.nn.Conv1d(3, 4, 2), dim=dim), IndexError, message)


@both
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_parametrization_of_a_conv_weight(lib, shape):
    """torch's use_linear=False branch (skipped there for complex): a batch of matrices."""
    x = lib.randn(2, 2, shape[0] + 2, shape[1] + 1)
    for name in ("matrix_exp", "cayley", "householder"):
        for trivial in (False, True):
            m = lib.nn.Conv2d(2, 3, shape)
            w_init = m.weight.clone()
            lib.nn.utils.parametrizations.orthogonal(m, "weight", name,
                                                     use_trivialization=trivial)
            assert m.weight.shape == (3, 2) + shape
            _assert_is_orthogonal(lib, m.weight)
            if trivial or name == "householder":
                _assert_weight_is_q_of(lib, m.weight, w_init)
            opt = lib.optim.SGD(m.parameters(), lr=0.1)
            for _ in range(2):
                opt.zero_grad()
                m(x).norm().backward()
                opt.step()
                _assert_is_orthogonal(lib, m.weight)
