"""torch's test/nn/test_pruning.py (34 tests) on gradkit and on torch 2.13.

Each program runs torch's asserts against both libraries (``lib``); the deterministic
methods (L1, Ln, custom masks, global pruning) also compare their masks and values with
torch's through ``like_torch``. Random methods draw from each library's own generator, so
only counts and structure are compared. gradkit.save stores no modules: the model
round-trip goes through pickle.
"""
import io
import pickle
from unittest import mock

import numpy as np
import pytest

from torch_expectations.twin import both_libraries as both, like_torch

try:  # torch.nn.utils does not import its prune module itself (gradkit's does)
    import torch.nn.utils.prune  # noqa: F401
except ImportError:
    pass

MODULES = [lambda lib: lib.nn.Linear(5, 7), lambda lib: lib.nn.Conv3d(2, 2, 2)]
MATRIX = [[1, 2, 3, 4], [-4, -3, -2, -1]]
SCORES = [[4, 2, 1, 3], [-3, -1, -2, -4]]
CONV_WEIGHT = [[[[1.0, 2.0], [1.0, 2.5]], [[0.5, 1.0], [0.1, 0.1]], [[-3.0, -5.0], [0.1, -1.0]]]]


def each_module_and_name():
    return pytest.mark.parametrize("make, name", [(make, name) for make in MODULES
                                                  for name in ("weight", "bias")])


@both
def test_validate_pruning_amount_init(lib):
    prune = lib.nn.utils.prune
    with pytest.raises(TypeError, match="Invalid type for amount: I'm a string. Must be int"):
        prune._validate_pruning_amount_init(amount="I'm a string")
    for amount in (1.1, 20.0, -10):
        with pytest.raises(ValueError, match=f"amount={amount} should either be a float in"):
            prune._validate_pruning_amount_init(amount=amount)
    for amount in (0.34, 1500, 0, 0.0, 1, 1.0, np.float32(0.5), np.int64(3)):
        prune._validate_pruning_amount_init(amount=amount)


@both
def test_validate_pruning_amount_and_nparams(lib):
    prune = lib.nn.utils.prune
    with pytest.raises(ValueError, match="amount=20 should be smaller than the number of "
                                         "parameters to prune=19"):
        prune._validate_pruning_amount(amount=20, tensor_size=19)
    for amount, size in ((0.3, 0), (19, 20), (0, 0), (1, 1)):
        prune._validate_pruning_amount(amount=amount, tensor_size=size)
    counts = [prune._compute_nparams_toprune(amount=a, tensor_size=s)
              for a, s in ((0, 15), (10, 15), (1, 15), (1.0, 15), (0.4, 17), (0.5, 5), (0.5, 7))]
    assert counts == [0, 10, 1, 15, 7, 2, 4]  # round half to even, as Python's round


@both
@each_module_and_name()
def test_random_pruning_sizes_orig_and_new_weight(lib, make, name):
    m = make(lib)
    original = getattr(m, name)
    lib.nn.utils.prune.random_unstructured(m, name=name, amount=0.1)
    mask, orig, pruned = getattr(m, name + "_mask"), getattr(m, name + "_orig"), getattr(m, name)
    assert mask.size() == orig.size() == pruned.size() == original.size()
    assert orig is original
    assert lib.equal(pruned, orig * mask.to(dtype=original.dtype))
    assert int((mask == 0).sum()) == round(0.1 * original.numel())


def _grads_before(lib, m, x):
    y = m(x)
    y.sum().backward()
    grads = m.weight.grad.clone(), m.bias.grad.clone()
    assert lib.equal(grads[0], lib.ones_like(m.weight))
    m.zero_grad()
    return y, grads


def _check_unchanged(lib, m, x, y_before, grads):
    y = m(x)
    assert lib.equal(y_before, y)
    y.sum().backward()
    assert lib.equal(grads[0], m.weight_orig.grad) and lib.equal(grads[1], m.bias.grad)
    assert lib.equal(m(x), m(x))


@both
def test_identity_pruning(lib):
    x, m = lib.ones(1, 5), lib.nn.Linear(5, 2)
    y, grads = _grads_before(lib, m, x)
    lib.nn.utils.prune.identity(m, name="weight")
    _check_unchanged(lib, m, x, y, grads)


def _mocked_random_unstructured(lib, m, mask):
    """torch's trick: RandomUnstructured.compute_mask patched to return ``mask``."""
    prune = lib.nn.utils.prune
    with mock.patch.object(prune.RandomUnstructured, "compute_mask") as compute_mask:
        compute_mask.return_value = mask
        prune.random_unstructured(m, name="weight", amount=0.9)


def _linear_with_mask(lib, base, special: int):
    """Linear(5, 2) pruned (mocked) by ``base`` mask with entries [1, 0] and [0, 3] set to
    ``special``; returns the input of ones, the module and the mask."""
    x, m = lib.ones(1, 5), lib.nn.Linear(5, 2)
    mask = base(m.weight)
    mask[1, 0] = mask[0, 3] = special
    _mocked_random_unstructured(lib, m, mask)
    return x, m, mask


@both
def test_random_pruning_0perc(lib):
    x, m = lib.ones(1, 5), lib.nn.Linear(5, 2)
    y, grads = _grads_before(lib, m, x)
    _mocked_random_unstructured(lib, m, lib.ones_like(m.weight))
    _check_unchanged(lib, m, x, y, grads)


@both
def test_random_pruning_masks_grad_and_updates(lib):
    x, m, mask = _linear_with_mask(lib, lib.ones_like, 0)
    m(x).sum().backward()
    assert lib.equal(m.weight_orig.grad, mask)
    assert lib.equal(m.bias.grad, lib.ones_like(m.bias))
    old = m.weight_orig.clone()
    for p in m.parameters():
        p.data.sub_(p.grad.data * 1.0)
    assert old[1, 0] == m.weight_orig[1, 0] and old[0, 3] == m.weight_orig[0, 3]


@both
def test_random_pruning_forward(lib):
    x, m, _ = _linear_with_mask(lib, lib.zeros_like, 1)
    y = m(x)
    assert lib.allclose(y[0, 0], m.weight_orig[0, 3] + m.bias[0])
    assert lib.allclose(y[0, 1], m.weight_orig[1, 0] + m.bias[1])


@both
def test_remove_pruning_forward(lib):
    x, m, _ = _linear_with_mask(lib, lib.ones_like, 0)
    y = m(x)
    lib.nn.utils.prune.remove(m, "weight")
    assert lib.equal(y, m(x))


@both
def test_pruning_id_consistency(lib):
    m = lib.nn.Linear(5, 2, bias=False)
    tensor_id = id(next(iter(m.parameters())))
    lib.nn.utils.prune.random_unstructured(m, name="weight", amount=0.9)
    assert tensor_id == id(next(iter(m.parameters())))
    lib.nn.utils.prune.remove(m, "weight")
    assert tensor_id == id(next(iter(m.parameters())))


@both
@each_module_and_name()
def test_random_pruning_pickle(lib, make, name):
    m = make(lib)
    lib.nn.utils.prune.random_unstructured(m, name=name, amount=0.1)
    m_new = pickle.loads(pickle.dumps(m))
    assert isinstance(m_new, type(m))
    assert lib.equal(getattr(m_new, name), getattr(m, name))
    hook = next(iter(m_new._forward_pre_hooks.values()))
    assert isinstance(hook, lib.nn.utils.prune.RandomUnstructured) and hook._tensor_name == name


def test_multiple_pruning_calls():
    def program(lib):
        prune, m = lib.nn.utils.prune, lib.nn.Conv3d(2, 2, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(np.random.default_rng(3).standard_normal((2, 2, 2, 2, 2))))
        prune.l1_unstructured(m, name="weight", amount=0.1)
        mask0 = m.weight_mask
        prune.ln_structured(m, name="weight", amount=0.3, n=2, dim=0)
        hook = next(iter(m._forward_pre_hooks.values()))
        assert isinstance(hook, prune.PruningContainer) and hook._tensor_name == "weight"
        assert len(hook) == 2
        assert isinstance(hook[0], prune.L1Unstructured)
        assert isinstance(hook[1], prune.LnStructured)
        assert bool(lib.all(m.weight_mask[mask0 == 0] == 0))
        mask1 = m.weight_mask
        prune.ln_structured(m, name="weight", amount=0.1, n=float("inf"), dim=1)
        hook = next(iter(m._forward_pre_hooks.values()))
        assert hook._tensor_name == "weight" and len(hook) == 3
        assert [type(h).__name__ for h in hook] == ["L1Unstructured", "LnStructured",
                                                   "LnStructured"]
        return mask0, mask1, m.weight_mask, m.weight
    like_torch(program)


@both
def test_pruning_container(lib):
    prune = lib.nn.utils.prune
    container = prune.PruningContainer()
    container._tensor_name = "test"
    assert len(container) == 0
    p = prune.L1Unstructured(amount=2)
    p._tensor_name = "test"
    container.add_pruning_method(p)
    assert len(container) == 1 and container[0] is p and list(container) == [p]
    q = prune.L1Unstructured(amount=2)
    q._tensor_name = "another_test"
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter "
                                         "named 'test' to PruningContainer .*Found 'another_test'"):
        container.add_pruning_method(q)
    with pytest.raises(TypeError, match="<class 'int'> is not a BasePruningMethod subclass"):
        container.add_pruning_method(10)
    with pytest.raises(TypeError, match="<class 'str'> is not a BasePruningMethod subclass"):
        container.add_pruning_method("ugh")


def test_pruning_container_compute_mask():
    def program(lib):
        prune = lib.nn.utils.prune
        container = prune.PruningContainer()
        container._tensor_name = "test"
        t = lib.tensor([[1, 2, 3, 4], [5, 6, 7, 8]]).to(dtype=lib.float32)
        default_mask = lib.tensor([[1, 1, 1, 0], [1, 1, 0, 1]])
        masks = []
        for method in (prune.L1Unstructured(amount=2), prune.LnStructured(amount=1, n=2, dim=0),
                       prune.LnStructured(amount=1, n=2, dim=1)):
            method._tensor_name = "test"
            container.add_pruning_method(method)
            masks.append(container.compute_mask(t, default_mask))
        return masks
    masks = like_torch(program)
    assert [m.tolist() for m in masks] == [[[0, 0, 1, 0], [1, 1, 0, 1]],
                                           [[0, 0, 0, 0], [1, 1, 0, 1]],
                                           [[0, 1, 1, 0], [0, 1, 0, 1]]]
    assert masks[0].dtype.is_floating_point


@pytest.mark.parametrize("scores", [None, SCORES])
def test_l1_unstructured_pruning(scores):
    def program(lib):
        m = lib.nn.Linear(4, 2)
        m.weight = lib.nn.Parameter(lib.tensor(MATRIX, dtype=lib.float32))
        kw = {} if scores is None else {"importance_scores": lib.tensor(scores,
                                                                       dtype=lib.float32)}
        lib.nn.utils.prune.l1_unstructured(m, "weight", amount=2, **kw)
        first = m.weight
        lib.nn.utils.prune.l1_unstructured(m, "weight", amount=2, **kw)
        return first, m.weight
    first, second = like_torch(program)
    expected = ([[0, 2, 3, 4], [-4, -3, -2, 0]], [[0, 0, 3, 4], [-4, -3, 0, 0]]) \
        if scores is None else ([[1, 2, 0, 4], [-4, 0, -2, -1]], [[1, 0, 0, 4], [-4, 0, 0, -1]])
    assert (first.tolist(), second.tolist()) == expected


@both
def test_unstructured_pruning_same_magnitude(lib):
    p = lib.nn.utils.prune.L1Unstructured(amount=0.2)
    t = 2 * lib.randint(low=-1, high=2, size=(10, 7))
    computed_mask = p.compute_mask(t, default_mask=lib.ones_like(t))
    assert int(lib.sum(computed_mask == 0)) == 14


@both
@pytest.mark.parametrize("amount", [0.6, 1])
def test_random_structured_pruning_amount(lib, amount):
    p = lib.nn.utils.prune.RandomStructured(amount=amount, dim=2)
    t = 2 * lib.randint(low=-1, high=2, size=(5, 4, 2)).to(dtype=lib.float32)
    computed_mask = p.compute_mask(t, default_mask=lib.ones_like(t))
    per_column_sums = sorted(lib.sum(computed_mask == 0, axis=[0, 1]).tolist())
    assert per_column_sums == [0, 20]


@pytest.mark.parametrize("scores", [None, [[[[10.0, 1.0], [10.0, 1.0]], [[30.0, 3.0], [30.0, 3.0]],
                                              [[-20.0, -2.0], [-20.0, -2.0]]]]])
def test_ln_structured_pruning(scores):
    def program(lib):
        m = lib.nn.Conv2d(3, 1, 2)
        m.weight.data = lib.tensor(CONV_WEIGHT)
        kw = {} if scores is None else {"importance_scores": lib.tensor(scores)}
        lib.nn.utils.prune.ln_structured(m, "weight", amount=1, n=2, dim=1, **kw)
        first = m.weight_mask.clone()
        lib.nn.utils.prune.ln_structured(m, "weight", amount=1, n=1, dim=-1, **kw)
        return first, m.weight_mask
    first, second = like_torch(program)
    channel, column = (1, 0) if scores is None else (0, 1)
    expected = np.ones((1, 3, 2, 2))
    expected[:, channel] = 0
    np.testing.assert_array_equal(first.numpy(), expected)
    expected[:, :, :, column] = 0
    np.testing.assert_array_equal(second.numpy(), expected)


@both
@each_module_and_name()
def test_remove_pruning(lib, make, name):
    m, prune = make(lib), lib.nn.utils.prune
    assert not prune.is_pruned(m)
    with pytest.raises(ValueError, match=f"Parameter '{name}' of module .* has to be pruned "
                                         "before pruning can be removed"):
        prune.remove(m, name)
    prune.random_unstructured(m, name, amount=0.5)
    assert prune.is_pruned(m) and prune.is_pruned(lib.nn.Sequential(m))
    assert name + "_orig" in dict(m.named_parameters()) and name not in dict(m.named_parameters())
    assert name + "_mask" in dict(m.named_buffers()) and hasattr(m, name)
    pruned = getattr(m, name)
    assert prune.remove(m, name) is m
    assert name in dict(m.named_parameters()) and name + "_orig" not in dict(m.named_parameters())
    assert name + "_mask" not in dict(m.named_buffers()) and not prune.is_pruned(m)
    assert isinstance(getattr(m, name), lib.nn.Parameter)
    assert lib.equal(pruned, getattr(m, name))


@pytest.mark.parametrize("with_scores", [False, True])
def test_global_pruning(with_scores):
    def program(lib):
        m, n = lib.nn.Linear(4, 2), lib.nn.Linear(3, 1)
        m.weight = lib.nn.Parameter(lib.tensor(MATRIX).to(dtype=lib.float32))
        n.weight = lib.nn.Parameter(lib.tensor([[0, 0.1, -2]]).to(dtype=lib.float32))
        scores = {(m, "weight"): lib.tensor(SCORES, dtype=lib.float32),
                  (n, "weight"): lib.tensor([[0, 10.0, -0.2]])} if with_scores else None
        lib.nn.utils.prune.global_unstructured(((m, "weight"), (n, "weight")),
                                               pruning_method=lib.nn.utils.prune.L1Unstructured,
                                               importance_scores=scores, amount=4)
        hook = next(iter(m._forward_pre_hooks.values()))
        assert type(hook).__name__ == "CustomFromMask"
        return m.weight, n.weight
    m_weight, n_weight = like_torch(program)
    if with_scores:
        assert m_weight.tolist() == [[1, 2, 0, 4], [-4, 0, -2, -1]]
        np.testing.assert_allclose(n_weight.detach().numpy(), [[0, 0.1, 0]])
    else:
        assert (m_weight.tolist(), n_weight.tolist()) == ([[0, 2, 3, 4], [-4, -3, -2, 0]],
                                                          [[0, 0, -2]])


def test_custom_from_mask_pruning():
    def program(lib):
        mask = lib.tensor([[0, 1, 1, 0], [0, 0, 1, 1]])
        default_mask = lib.tensor([[0, 0, 0, 0], [1, 1, 1, 1]])
        t = lib.rand_like(mask.to(dtype=lib.float32))
        return lib.nn.utils.prune.CustomFromMask(mask=mask).compute_mask(t, default_mask)
    assert like_torch(program).tolist() == [[0, 0, 0, 0], [0, 0, 1, 1]]


@both
@each_module_and_name()
def test_pruning_rollback(lib, make, name):
    m, prune = make(lib), lib.nn.utils.prune
    with mock.patch.object(prune.L1Unstructured, "compute_mask") as compute_mask:
        compute_mask.side_effect = Exception("HA!")
        with pytest.raises(Exception, match="HA!"):
            prune.l1_unstructured(m, name=name, amount=0.9)
    assert name in dict(m.named_parameters())
    assert name + "_mask" not in dict(m.named_buffers())
    assert name + "_orig" not in dict(m.named_parameters())


def _pruned_model(lib):
    model = lib.nn.Sequential(lib.nn.Linear(10, 10), lib.nn.ReLU(), lib.nn.Linear(10, 1))
    keys = model.state_dict()
    assert "0.weight" in keys and "0.weight_orig" not in keys and "0.weight_mask" not in keys
    lib.nn.utils.prune.l1_unstructured(module=model[0], name="weight", amount=0.9)
    assert list(model.state_dict()) == ["0.bias", "0.weight_orig", "0.weight_mask", "2.weight",
                                        "2.bias"]
    assert hasattr(model[0], "weight")
    return model


@both
def test_pruning_serialization_model(lib):
    model = _pruned_model(lib)
    new_model = pickle.loads(pickle.dumps(model))  # (torch.save of a module is a pickle)
    keys = new_model.state_dict()
    assert "0.weight_orig" in keys and "0.weight_mask" in keys and "0.weight" not in keys
    assert lib.equal(model[0].weight, new_model[0].weight)
    x = lib.ones(2, 10)
    assert lib.equal(model(x), new_model(x))


@both
def test_pruning_serialization_state_dict(lib):
    model = _pruned_model(lib)
    pruned_weight = model[0].weight
    lib.nn.utils.prune.remove(module=model[0], name="weight")
    assert list(model.state_dict()) == ["0.bias", "0.weight", "2.weight", "2.bias"]
    new_model = lib.nn.Sequential(lib.nn.Linear(10, 10), lib.nn.ReLU(), lib.nn.Linear(10, 1))
    buffer = io.BytesIO()
    lib.save(model.state_dict(), buffer)
    buffer.seek(0)
    new_model.load_state_dict(lib.load(buffer))
    assert "0.weight_orig" not in new_model.state_dict()
    assert lib.equal(pruned_weight, new_model[0].weight)


@pytest.mark.parametrize("scores", ["none", "given", "t"])
def test_prune(scores):
    def program(lib):
        p = lib.nn.utils.prune.L1Unstructured(amount=2)
        t = lib.tensor([[1, 2, 3, 4], [5, 6, 7, 8]]).to(dtype=lib.float32)
        importance_scores = {"none": None, "t": t, "given": lib.tensor(
            [[1, 2, 3, 4], [1.5, 1.6, 1.7, 1.8]])}[scores]
        return p.prune(t, lib.tensor([[1, 1, 1, 0], [1, 1, 0, 1]]),
                       importance_scores=importance_scores)
    expected = [[0, 1, 1, 0], [0, 1, 0, 1]] if scores == "given" else [[0, 0, 1, 0], [1, 1, 0, 1]]
    np.testing.assert_array_equal(like_torch(program).numpy(),
                                  np.array([[1, 2, 3, 4], [5, 6, 7, 8]]) * expected)


@both
def test_rnn_pruning(lib):
    rnn = lib.nn.LSTM(32, 32)
    lib.nn.utils.prune.l1_unstructured(rnn, "weight_ih_l0", 0.5)
    assert sum(isinstance(p, lib.nn.Parameter) for p in rnn._flat_weights) == 3
    x = lib.ones(2, 1, 32)
    pruned_out = rnn(x)[0]
    lib.nn.utils.prune.remove(rnn, "weight_ih_l0")
    assert sum(isinstance(p, lib.nn.Parameter) for p in rnn._flat_weights) == 4
    assert rnn._parameters["weight_ih_l0"] is not None and "weight_ih_l0_orig" not in \
        rnn._parameters
    assert "weight_ih_l0" in dict(rnn.named_parameters())
    assert "weight_ih_l0_orig" not in dict(rnn.named_parameters())
    assert lib.equal(pruned_out, rnn(x)[0])
