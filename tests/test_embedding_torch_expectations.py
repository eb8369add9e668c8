"""The expectations of torch's test/nn/test_embedding.py (nn.Embedding and F.embedding), as
programs run in gradkit and in torch 2.13 and compared: values, dtypes, shapes, gradients
(gradcheck / gradgradcheck in float64), errors by type and message. Each program names the
torch test it covers. EmbeddingBag: test_embedding_bag_torch_expectations.py.
docs/torch_expectations.md lists what is out of scope and why."""
import numpy as np
import pytest

import gradkit

torch = pytest.importorskip("torch")
from torch_expectations.outcome import assert_like_torch  # noqa: E402

WEIGHT = np.random.default_rng(0).standard_normal((6, 4)) * 2


def _weight(m, dtype="float64", requires_grad=False):
    return m.tensor(WEIGHT, dtype=getattr(m, dtype), requires_grad=requires_grad)


def _raises_like_torch(program, exception, match):
    """Errors outside outcome()'s four types (AssertionError, NotImplementedError)."""
    for m in (torch, gradkit):
        with pytest.raises(exception, match=match):
            program(m)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_embedding_functional(index_dtype):  # test_embedding_functional
    def program(m):
        weight = _weight(m, requires_grad=True)
        index = m.tensor([[1, 3, 2], [0, 2, 1]], dtype=getattr(m, index_dtype))
        out = m.nn.functional.embedding(index, weight, padding_idx=2)
        out.backward(m.ones_like(out))
        return out, weight.grad, out.grad_fn.name(), out.grad_fn._saved_padding_idx
    assert_like_torch(program)


def test_embedding_dense_grad():  # test_embedding_dense_grad
    index = gradkit.tensor([[0, 1, 1, 2], [3, 5, 5, 1]])
    weight = gradkit.tensor(WEIGHT, requires_grad=True)
    # (padding_idx and scale_grad_by_freq are not the true derivative: compared with torch)
    def fn(w):
        return gradkit.nn.functional.embedding(index, w)
    assert gradkit.autograd.gradcheck(fn, (weight,))
    assert gradkit.autograd.gradgradcheck(fn, (weight,))


@pytest.mark.parametrize("padding_idx", [None, 1, -1])
def test_embedding_scale_grad_by_freq(padding_idx):  # (the option, in test_embedding_bag_*)
    def program(m):
        weight = _weight(m, requires_grad=True)
        index = m.tensor([[0, 1, 1, 5], [3, 1, 0, 0]])
        out = m.nn.functional.embedding(index, weight, padding_idx, scale_grad_by_freq=True)
        grad_out = m.tensor(np.arange(32.).reshape(2, 4, 4), requires_grad=True)
        # not the true derivative (gradcheck fails in torch too): compared with torch's,
        # and its own derivative (double backward)
        grad, = m.autograd.grad(out, weight, grad_out, create_graph=True)
        grad_of_grad, = m.autograd.grad((grad * grad).sum(), grad_out)
        return out, grad, grad_of_grad, out.grad_fn._saved_scale_grad_by_freq
    assert_like_torch(program)


def test_embedding_scalar_weight_error():  # test_embedding_scalar_weight_error
    for weight in (lambda m: m.tensor(1.0), lambda m: m.ones(1, 1, 1)):
        assert_like_torch(lambda m, w=weight: m.nn.functional.embedding(
            m.tensor([[0, 0], [0, 0]]), w(m)))


@pytest.mark.parametrize("index_dtype", ["uint8", "int8", "int16", "float32", "bool"])
def test_embedding_index_dtypes_refused(index_dtype):  # ATen's Long/Int check
    assert_like_torch(lambda m: m.nn.functional.embedding(
        m.tensor([0, 1], dtype=getattr(m, index_dtype)), _weight(m)))


def test_embedding_index_out_of_range():  # (ATen's index_select check)
    for index in ([0, 6], [-1, 0]):
        assert_like_torch(lambda m, i=index: m.nn.functional.embedding(m.tensor(i), _weight(m)))


@pytest.mark.parametrize("padding_idx", [-7, 6])
def test_embedding_padding_idx_out_of_range(padding_idx):  # test_embedding_padding_idx
    _raises_like_torch(lambda m: m.nn.functional.embedding(m.tensor([0]), _weight(m),
                                                           padding_idx),
                       AssertionError, "Padding_idx must be within num_embeddings")
    _raises_like_torch(lambda m: m.nn.Embedding(6, 4, padding_idx),
                       AssertionError, "Padding_idx must be within num_embeddings")


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 0.5, float("inf")])
def test_embedding_max_norm(norm_type):  # test_embedding_max_norm, _from_pretrained_options
    def program(m):
        weight = _weight(m)
        out = m.nn.functional.embedding(m.tensor([2, 0, 0, 5]), weight, max_norm=1.5,
                                        norm_type=norm_type)
        return out, weight, weight._version > 0, out.norm(p=norm_type, dim=1) <= 1.5
    assert_like_torch(program, rtol=1e-12)


def test_embedding_max_norm_backward():  # test_embedding_max_norm_backward
    def program(m):
        weight = _weight(m, "float32", requires_grad=True)
        out = m.nn.functional.embedding(m.tensor([0, 1, 2, 2]), weight, max_norm=1.0)
        out.sum().backward()
        return weight.grad, weight.detach()
    assert_like_torch(program, rtol=1e-6)


def test_embedding_max_norm_fwd_ad():  # test_embedding_max_norm_fwd_AD
    def program(m):
        weight = _weight(m, "float32")
        with m.autograd.forward_ad.dual_level():
            dual = m.autograd.forward_ad.make_dual(weight, m.ones(6, 4))
            out = m.nn.functional.embedding(m.tensor([[0, 1], [2, 2]]), dual, max_norm=1.0)
            return m.autograd.forward_ad.unpack_dual(out).tangent
    assert_like_torch(program)


def test_embedding_max_norm_of_a_leaf_needs_no_grad():  # (F.embedding renorms under no_grad)
    assert_like_torch(lambda m: m.embedding_renorm_(_weight(m, requires_grad=True),
                                                    m.tensor([0]), 1.0, 2.0))
    assert_like_torch(lambda m: m.embedding_renorm_(_weight(m), m.tensor([0.0]), 1.0, 2.0))
    assert_like_torch(lambda m: m.embedding_renorm_(m.ones(3), m.tensor([0]), 1.0, 2.0))


def test_embedding_sparse_refused():  # test_embedding_sparse_basic (gradkit: no sparse grad)
    module = gradkit.nn.Embedding(10, 3, sparse=True)
    with pytest.raises(NotImplementedError, match="sparse=True .* not supported by gradkit"):
        module(gradkit.tensor([0, 2]))
    with gradkit.no_grad():  # nothing to make sparse: the lookup is torch's
        assert module(gradkit.tensor([0, 2])).shape == (2, 3)


def _table(m, dtype="float64"):
    return m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=getattr(m, dtype))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "float32",
                                   "float64"])
def test_embedding_from_pretrained(dtype):  # test_embedding_from_pretrained
    def program(m):
        embedding = m.nn.Embedding.from_pretrained(_table(m, dtype))
        return embedding.weight, embedding(m.tensor([0, 1])), embedding.weight.requires_grad
    assert_like_torch(program)


def test_embedding_from_pretrained_padding_idx():  # test_embedding_from_pretrained_padding_idx
    def program(m):
        table = m.tensor(WEIGHT, requires_grad=True)
        embedding = m.nn.Embedding.from_pretrained(table, freeze=False, padding_idx=-2)
        out = embedding(m.tensor([4, 1, 4]))
        out.sum().backward()
        return (out, embedding.padding_idx, embedding.weight.grad, embedding.weight is table,
                embedding.weight.requires_grad, repr(embedding))
    assert_like_torch(program)


def test_embedding_from_pretrained_options():  # test_embedding_from_pretrained_options
    def program(m):
        table = _table(m)
        embedding = m.nn.Embedding.from_pretrained(table, max_norm=2.0, norm_type=0.5,
                                                   scale_grad_by_freq=False, sparse=True)
        out = embedding(m.tensor([0, 1]))  # (no gradient: the weight is frozen)
        return out, table, out.norm(p=0.5, dim=1) <= 2.0, repr(embedding)
    assert_like_torch(program, rtol=1e-12)


def test_embedding_from_pretrained_not_2d():  # (from_pretrained's assert)
    for cls in ("Embedding", "EmbeddingBag"):
        _raises_like_torch(lambda m, c=cls: getattr(m.nn, c).from_pretrained(m.ones(3)),
                           AssertionError, "Embeddings parameter is expected to be 2-dimensional")


def test_embedding_weight_argument():  # (nn.Embedding's _weight and _freeze)
    def program(m):
        given = _weight(m)
        embedding = m.nn.Embedding(6, 4, _weight=given, _freeze=True)
        return embedding.weight, embedding.weight.requires_grad, embedding(m.tensor([3]))
    assert_like_torch(program)
    _raises_like_torch(lambda m: m.nn.Embedding(4, 6, _weight=_weight(m)), AssertionError,
                       "Shape of weight does not match num_embeddings and embedding_dim")


def test_embedding_module_options():  # (the module's attributes, repr, forward)
    def program(m):
        m.manual_seed(0)
        embedding = m.nn.Embedding(6, 4, padding_idx=-1, max_norm=1.0, norm_type=1.0,
                                   scale_grad_by_freq=True, _weight=_weight(m))
        out = embedding(m.tensor([[0, 5, 0]]))
        out.backward(m.ones_like(out))
        plain = m.nn.Embedding(5, 2, dtype=m.float64)
        return (out, embedding.weight.grad, repr(embedding), repr(plain), plain.weight.dtype,
                [embedding.padding_idx, embedding.max_norm, embedding.norm_type,
                 embedding.scale_grad_by_freq, embedding.sparse])
    assert_like_torch(program, rtol=1e-12)


def test_embedding_padding_idx():  # test_embedding_padding_idx
    def program(m):
        results = []
        for padding_idx, index in ((0, [[0, 2, 4, 5], [4, 3, 0, 9]]),
                                   (-2, [[0, 2, 8, 5], [4, 8, 0, 9]])):
            embedding = m.nn.Embedding(10, 20, padding_idx=padding_idx)
            results.append(embedding(m.tensor(index)).sum(-1) == 0)
        embedding = m.nn.Embedding(10, 20, padding_idx=2)
        with m.no_grad():  # the padding vector may be changed
            embedding.weight[2] = m.ones(20)
        results.append(embedding(m.tensor([0, 2]))[1])
        embedding = m.nn.Embedding(5, 2, padding_idx=0, _weight=m.tensor(WEIGHT[:5, :2]))
        for n in (1, 2, 1000):
            for others in ([], [1, 3], [2]):
                out = embedding(m.tensor(others + [0] * n)).sum()
                grad, = m.autograd.grad(out, embedding.weight, create_graph=True)
                (grad.sum() + out).backward()  # the padding row learns nothing, twice over
                results += [grad[0], embedding.weight.grad[0]]
                embedding.zero_grad()
        return results
    assert_like_torch(program)


def test_move_half_embedding():  # test_move_sparse_half_embedding (dense: see sparse)
    def program(m):
        embedding = m.nn.Embedding(10, 3).to(m.float16)
        return (embedding.weight.dtype, embedding.weight.device.type, embedding.embedding_dim,
                embedding.num_embeddings, embedding(m.tensor([1])).dtype)
    assert_like_torch(program)


def test_a_complex_weight_that_requires_grad_is_refused():
    """torch has no complex formula for embedding: refused at the forward, computed without
    grad (found by torch's module table run at complex64, Embedding)."""
    def program(m):
        weight = m.randn(4, 3, dtype=m.complex64)
        plain = m.nn.functional.embedding(m.tensor([1, 2]), weight)
        weight.requires_grad_(True)
        with pytest.raises(RuntimeError, match="^embedding does not support automatic "
                                               "differentiation for outputs with complex dtype"):
            m.nn.functional.embedding(m.tensor([1, 2]), weight)
        return plain.dtype
    assert str(program(gradkit)) == str(program(torch)).replace("torch", "gradkit")
