"""scaled_dot_product_attention's dropout_p > 0 and enable_gqa, against torch: dropout's
statistics and one mask shared by the value and its gradient; grouped heads' values,
gradients and errors."""
import numpy as np
import pytest

import gradkit
import gradkit.nn.functional as F  # noqa: N812

torch = pytest.importorskip("torch")

from fuzz.opinfo_samples import differing_samples, op_db  # noqa: E402


def _weights(lib, q, k):
    """The softmax weights without dropout: the output for an identity value."""
    eye = lib.eye(k.shape[-2], dtype=q.dtype)
    return lib.nn.functional.scaled_dot_product_attention(q, k, eye.expand(*k.shape[:-1],
                                                                               k.shape[-2]))


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_drops_a_fraction_p_and_scales_the_rest(p):
    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((8, 64, 16)) for _ in range(2))
    fractions = []
    for lib in (gradkit, torch):
        lib.manual_seed(1)
        q_, k_ = lib.tensor(q), lib.tensor(k)
        eye = lib.eye(64, dtype=q_.dtype).expand(8, 64, 64)
        dropped = lib.nn.functional.scaled_dot_product_attention(q_, k_, eye, dropout_p=p)
        weights = _weights(lib, q_, k_)
        kept = dropped.numpy() != 0
        np.testing.assert_allclose(dropped.numpy()[kept], weights.numpy()[kept] / (1 - p),
                                   rtol=1e-12)
        fractions.append(1 - kept.mean())
    # 32768 draws: the dropped fraction within 5 standard deviations of p, for both
    bound = 5 * np.sqrt(p * (1 - p) / kept.size)
    assert abs(fractions[0] - p) < bound and abs(fractions[1] - p) < bound


def test_the_gradient_uses_the_forward_mask():
    rng = np.random.default_rng(2)
    q = gradkit.tensor(rng.standard_normal((2, 5, 4)), requires_grad=True)
    k = gradkit.tensor(rng.standard_normal((2, 7, 4)))
    v = gradkit.eye(7, dtype=q.dtype).expand(2, 7, 7).clone().requires_grad_()
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    g = gradkit.tensor(rng.standard_normal((2, 5, 7)))
    (out * g).sum().backward()
    # out = dropped weights (v is the identity), so dL/dv = dropped^T g
    np.testing.assert_allclose(v.grad.numpy(), (out.detach().transpose(-2, -1) @ g).numpy(),
                               rtol=1e-12)


def test_dropout_gradcheck_and_gradgradcheck_under_a_fixed_seed():
    rng = np.random.default_rng(3)
    q, k, v = (gradkit.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
               for _ in range(3))

    def run(q, k, v):
        gradkit.manual_seed(7)  # the same mask at each call
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.4, is_causal=True)
    assert gradkit.autograd.gradcheck(run, (q, k, v))
    assert gradkit.autograd.gradgradcheck(run, (q, k, v))


@pytest.mark.parametrize("shapes", [((2, 4, 3, 5), (2, 2, 6, 5), (2, 2, 6, 7)),
                                    ((2, 4, 3, 5), (2, 2, 6, 5), (2, 4, 6, 5)),
                                    ((4, 3, 5), (2, 6, 5), (1, 6, 5)),
                                    ((2, 3, 3, 5), (2, 3, 6, 5), (2, 3, 6, 5))])
def test_grouped_query_attention_matches_torch(shapes):
    rng = np.random.default_rng(4)
    data = [rng.standard_normal(shape) for shape in shapes]
    results = []
    for lib in (gradkit, torch):
        q, k, v = (lib.tensor(d, requires_grad=True) for d in data)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True,
                                                             is_causal=True)
        (out * lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum()\
            .backward()
        results.append([t.detach().numpy() for t in (out, q.grad, k.grad, v.grad)])
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-13)


def test_grouped_heads_that_do_not_divide_are_refused_as_torch():
    messages = []
    for lib in (gradkit, torch):
        q, k = lib.zeros(2, 3, 3, 5), lib.zeros(2, 2, 6, 5)
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.scaled_dot_product_attention(q, k, k, enable_gqa=True)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_grouped_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(5)
    q = gradkit.tensor(rng.standard_normal((1, 4, 2, 3)), requires_grad=True)
    k, v = (gradkit.tensor(rng.standard_normal((1, 2, 3, 3)), requires_grad=True)
            for _ in range(2))

    def run(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert gradkit.autograd.gradcheck(run, (q, k, v))
    assert gradkit.autograd.gradgradcheck(run, (q, k, v))


def test_torch_samples_agree():
    """torch's samples (its dropout ones are random: there, that gradkit computes)."""
    opinfo = next(o for o in op_db if o.name == "nn.functional.scaled_dot_product_attention")
    differing = differing_samples(opinfo, (torch.float64, torch.float32), ("op",))
    assert not differing, differing
