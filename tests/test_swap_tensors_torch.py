"""torch.utils.swap_tensors and ``__future__.set_swap_module_params_on_conversion``: torch's
test_swap_module_params_poisons_acc_grad (test_nn.py) and the refusals of swap_tensors (weak
references, a tensor the graph saved), each run in torch 2.13 and gradkit."""
import weakref

import pytest

import gradkit

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        return fn()
    except RuntimeError as error:
        return str(error).split(" this can happen")[0]


def _poisons_acc_grad(m_):
    """test_swap_module_params_poisons_acc_grad, its checks returned."""
    seen = []
    try:
        m_.__future__.set_swap_module_params_on_conversion(True)
        m = m_.nn.Linear(2, 3)
        weight = m.weight
        inp = m_.randn(2, 2)
        out = m(inp)
        m.half()  # (1) backward cannot run after _apply: the accumulators are poisoned
        seen.append(all(p.dtype == m_.float16 for p in m.parameters()) and m.weight is weight)
        seen.append(_outcome(lambda: out.sum().backward()))
        out2 = m(m_.randn(2, 2, dtype=m_.half))  # (2) _apply can run after backward
        out2.sum().backward()
        m.float()
        seen.append(all(p.dtype == m_.float32 for p in m.parameters()) and m.weight is weight)
        seen.append(str(m.weight.grad.dtype).split(".")[1])
        m(inp).sum().backward()
        seen.append(str(m.weight.grad.dtype).split(".")[1])
    finally:
        m_.__future__.set_swap_module_params_on_conversion(False)
    return seen


def test_swap_module_params_poisons_acc_grad():
    ours = _poisons_acc_grad(gradkit)
    assert ours == _poisons_acc_grad(torch)
    assert ours[1].startswith("Trying to execute AccumulateGrad node that was poisoned")


def _contents_swap(m):
    a, b = m.tensor([1.0, 2.0]), m.nn.Parameter(m.tensor([3.0]))
    a.note = "a's"
    m.utils.swap_tensors(a, b)
    x = m.tensor([0.5, 1.0, 2.0], dtype=m.float64, requires_grad=True)
    y, t = x.sin(), m.zeros(2)
    m.utils.swap_tensors(y, t)
    t.sum().backward()
    return (type(a).__name__, a.tolist(), a.requires_grad, type(b).__name__, b.tolist(),
            b.requires_grad, getattr(b, "note", None), hasattr(a, "note"), y.grad_fn is None,
            tuple(y.shape), t.grad_fn.name(), x.grad.tolist())


def test_swap_tensors_swaps_class_attributes_data_and_history():
    assert _contents_swap(gradkit) == _contents_swap(torch)


def _refusals(m):
    x = m.randn(3, requires_grad=True)
    y = x * x  # saves x twice: four users
    ref = weakref.ref(m.zeros(1) + 1)  # noqa: F841 - (a dead reference: no refusal)
    z = m.randn(3, requires_grad=True)
    kept = weakref.ref(z)
    return [_outcome(lambda: m.utils.swap_tensors(x, m.zeros(3))),
            _outcome(lambda: m.utils.swap_tensors(z, m.zeros(3))),
            _outcome(lambda: m.utils.swap_tensors(m.zeros(3), z)),
            y.shape == (3,) and kept() is z]


def test_swap_tensors_refusals_as_torch():
    ours = _refusals(gradkit)
    assert ours == _refusals(torch)
    assert ours[0] == ("Expected use_count of t1 to be 1 or 2 with an AccumulateGrad node but "
                       "got 4 make sure you are not holding references to the tensor in other "
                       "places.")
    assert ours[1:3] == ["Cannot swap t1 because it has weakref associated with it",
                         "Cannot swap t2 because it has weakref associated with it"]


_USERS = {
    "a_live_view": "x = m.randn(3); v = x[0:2]",
    "a_view_of_a_leaf_requiring_grad": "x = m.randn(3, requires_grad=True); v = x[0:2]",
    "a_view_of_a_view": "x = m.randn(3); v = x[0:2]; w = v[1:]",
    "a_dead_view": "x = m.randn(3); v = x[0:2]; del v",
    "a_saved_leaf_without_grad": "x = m.randn(3); z = x * m.randn(3, requires_grad=True)",
    "after_backward": "x = m.randn(3, requires_grad=True); (x * 2).sum().backward()",
}


@pytest.mark.parametrize("program", _USERS.values(), ids=_USERS)
def test_swap_tensors_counts_views_and_saves_as_torch(program):
    """torch's use count counts a live view (its base) and a save; a leaf without grad, used
    twice, has no gradient edge to poison."""
    def run(m):
        names = {"m": m}
        exec(program, names)  # noqa: S102 - the programs above
        return _outcome(lambda: m.utils.swap_tensors(names["x"], m.zeros(3)))
    assert run(gradkit) == run(torch)
