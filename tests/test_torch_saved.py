"""Saved tensors compared with torch on the same program: saved-tensor hooks in double
backward, in-place changes of saved tensors, ``_saved_<name>`` attributes and node names."""
import numpy as np
import pytest

import gradkit
from gradkit.ops.one_node import OneNodeOp

torch = pytest.importorskip("torch")

HOOKS = {
    "unpack_doubles": (lambda t: t, lambda t: t * 2),
    "pack_doubles": (lambda t: t * 2, lambda t: t),
    "pack_detaches": (lambda t: t.detach(), lambda t: t),
    "pack_clones": (lambda t: t.clone(), lambda t: t),
}

FUNCTIONS = {
    "mul": lambda x: x * x,
    "exp": lambda x: x.exp(),
    "sin_times_x": lambda x: x.sin() * x,
    "pow": lambda x: x ** 3,
    "non_leaf_input": lambda x: (x * 1).tanh() * (x + 1),
}


def _double_backward_under_hooks(lib, hooks, f):
    pack, unpack = hooks
    x = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = f(x)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    gg, = lib.autograd.grad(g.sum(), x)
    return g.tolist(), gg.tolist()


@pytest.mark.parametrize("f", FUNCTIONS.values(), ids=FUNCTIONS.keys())
@pytest.mark.parametrize("hooks", HOOKS.values(), ids=HOOKS.keys())
def test_double_backward_through_saved_tensor_hooks_matches_torch(hooks, f):
    """The unpacked values are used, but differentiated as the original tensor (torch)."""
    # to rounding: NumPy's tanh and torch's differ by an ulp on some CPUs
    np.testing.assert_allclose(_double_backward_under_hooks(gradkit, hooks, f),
                               _double_backward_under_hooks(torch, hooks, f), rtol=1e-13)


def _custom_function_under_hooks(lib):
    class ExpTimesInput(lib.autograd.Function):  # saves an input and its own output
        @staticmethod
        def forward(ctx, x):
            out = x.exp() * x
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        def backward(ctx, g):
            x, out = ctx.saved_tensors
            return g * (out + out / x)

    x = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 2, lambda t: t):
        y = ExpTimesInput.apply(x * 1)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    gg, = lib.autograd.grad(g.sum(), x)
    return g.tolist(), gg.tolist()


def test_custom_function_saved_tensors_under_hooks_match_torch():
    assert _custom_function_under_hooks(gradkit) == _custom_function_under_hooks(torch)


def _saved_attribute_under_hooks(lib):
    x = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t * 2):
        y = x * (x + 1)
    self_, other = y.grad_fn._saved_self, y.grad_fn._saved_other
    return (self_.tolist(), self_.requires_grad, self_.is_leaf, other.tolist(),
            other.requires_grad, other.is_leaf, type(other.grad_fn).__name__)


def test_saved_attributes_under_hooks_match_torch():
    assert _saved_attribute_under_hooks(gradkit) == _saved_attribute_under_hooks(torch)


# -- node names and _saved_<name> attributes, walking the op table ---------------------------

# where torch's op is a composite whose last step is another op (matmul ends in a view,
# imag/real of a real view are selects, ...)
DIFFERENT_LAST_NODE = {
    "conv2d-complex", "conv1d-complex",
    "imag-0", "imag-1",
    "matmul-1d@2d", "matmul-batched_broadcast",
    "pad-5", "real-0",  # pad-5: circular, torch's copies of slices (CopySlices)
    # gradkit's keepdim nuclear norm over dims (0, 2) ends in unsqueeze, torch's in a permute
    "linalg.matrix_norm-9",
    "nuclear_norm-keepdim",
    # gradkit solves left=False as the transpose of a left solve; torch has one solve node
    "linalg.solve-right",
    # torch's batched matmul folds the batch and ends in _unsafe_view; gradkit's is one node
    "linalg.matrix_power-negative",
    # torch's C++ compositions multiply and divide by a C++ double: the Scalar overloads'
    # MulBackward1 / DivBackward1, which a Python number (torch's or gradkit's) never records
    "trapezoid-0", "trapezoid-1", "trapezoid-x", "trapezoid-x_2d", "trapezoid-one_sample",
    "cumulative_trapezoid-x",
    # vander(increasing=True): torch writes its columns in place (CopySlices), gradkit cats them
    "vander-2",
    # lane misc: norm_except_dim(dim=-1) is torch.norm, whose node torch names NormBackward0;
    # gradkit's norm is linalg.vector_norm's node
    "norm_except_dim-all_dims",
    # lane nodes2: torch's complex convolution is a composite of real ones ending in an add;
    # gradkit's complex transposed convolution ends in its pad
    "conv_transpose1d-complex"}

# one fused torch op that gradkit composes of existing ops (gradkit/ops/pooling_avg.py,
# normalization.py, conv_more.py, attention.py, interpolate.py, nn/functional_bags.py,
# layers_small.py, ops/sampling_grid.py): the gradients are torch's, the last node is gradkit's
# last step. special.ndtr is a composite in both, but torch's C++ steps take Scalar overloads
# (MulBackward1), which a Python-level op never records in torch either.
COMPOSED_IN_GRADKIT = {
    # lane nodes2: special.ndtr is torch's own composition (a multiply); sdpa's node depends
    # on torch's choice of kernel (its flash kernel's for 4-D inputs, its math composite's
    # otherwise)
    "scaled_dot_product_attention", "special.ndtr",
    # lane legacy: torch's older linalg names over gradkit.linalg's ops (ops/linalg_legacy.py:
    # triangular_solve is linalg.solve_triangular's node, ormqr a householder_product times
    # other), frobenius_norm a vector_norm
    "triangular_solve", "ormqr", "frobenius_norm",
    # lane signal: compositions in both; torch's stft/istft end in its own squeeze/transpose
    # overloads (SqueezeBackward4, TransposeBackward1)
    "stft", "istft",
    # lane misc: segment_reduce is narrow, the reductions and stack (ops/segment_reduce.py)
    "segment_reduce"}


def _first_nodes(info, sample):
    from op_db import bind, differentiable_outputs, gradkit_tensor, torch_function, torch_tensor
    leaves, call = bind(info.op, sample, gradkit_tensor)
    t_leaves, t_call = bind(torch_function(info), sample, torch_tensor)
    nodes = [[o.grad_fn for o in differentiable_outputs(out) if o.grad_fn is not None]
             for out in (call(*leaves), t_call(*t_leaves))]
    return nodes[0][0] if nodes[0] else None, nodes[1][0] if nodes[1] else None


def _node_cases():
    from op_db import cases, torch_function
    return [c for c in cases() if torch_function(c[1]) is not None]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", _node_cases(), ids=lambda c: c[0])
def test_node_names_and_saved_attributes_match_torch(case):
    case_id, info, sample = case
    node, t_node = _first_nodes(info, sample)
    if node is None or t_node is None:
        return
    if info.name in COMPOSED_IN_GRADKIT:
        return
    if case_id in DIFFERENT_LAST_NODE:
        assert node.name() != t_node.name()  # a composite in torch: listed, not silently
        return
    assert (type(node).__name__, node.name()) == (type(t_node).__name__, t_node.name())
    for name in sorted(n for n in dir(t_node) if n.startswith("_saved_")):
        reason = KNOWN_SAVED_DIFFERENCES.get((t_node.name(), name)) or \
            KNOWN_SAVED_DIFFERENCES.get((case_id, name))
        if reason is not None:
            assert not _same_saved(node, t_node, name), f"{name} now matches: drop {reason!r}"
            continue
        if isinstance(node.op, OneNodeOp) and not hasattr(node, name):
            # a composite recorded as torch's one node (ops/one_node.py) keeps torch's saved
            # inputs and result its own graph reads, and the sizes and flags some declare
            # (tests/test_one_node_saved.py, tests/test_saved_attrs_nn_torch.py); other
            # one_node ops' parameters are not recorded on them
            continue
        mine = getattr(node, name)  # AttributeError where gradkit lacks torch's name
        if (t_node.name(), name) in PARTLY_UNINITIALIZED_IN_TORCH:
            continue  # compared where torch's values are defined, below
        _assert_same_saved(mine, getattr(t_node, name), name, name in COUNTED_FROM_THE_FRONT)


# torch's dims and positions that gradkit's op counts from the front: torch keeps -1 (shown
# as 2**64 - 1), gradkit the dim it means
COUNTED_FROM_THE_FRONT = {"_saved_dim", "_saved_dims", "_saved_dim1", "_saved_dim2",
                          "_saved_dimension", "_saved_start", "_saved_index"}

_SHAPE_ONLY = "gradkit's node keeps the source's shape: its gradients read no values"
_VECTORS = "singular/eigen vectors are unique up to sign or phase: LAPACK picks others here"
# (torch's node name or an op_db case, _saved_ name): why gradkit's value is not torch's
KNOWN_SAVED_DIFFERENCES = {
    ("IndexAddBackward0", "_saved_source"): _SHAPE_ONLY,
    ("IndexCopyBackward0", "_saved_source"): _SHAPE_ONLY,
    ("PutBackward0", "_saved_source"): _SHAPE_ONLY,
    **{(case, "_saved_" + name): _VECTORS for case, names in (
        *((case, ("eigenvectors",)) for case in ("linalg.eig-0", "linalg.eig-batched",
                                                 "linalg.eigvals-0", "linalg.eigh-0")),
        *((case, ("U", "Vh")) for case in ("linalg.svd-2", "linalg.svd_full_matrices-1",
                                           "svd-batched_wide", "svd_some_false-wide",
                                           "svd_no_uv-batched")))
       for name in names},
    **{(case, "_saved_storage_offset"): "torch keeps None for a storage_offset not given, "
       "gradkit the offset it uses" for case in (
           "as_strided-0", "as_strided-overlap", "as_strided-zero_stride", "as_strided-empty",
           "as_strided-complex", "as_strided_copy-overlap", "as_strided_scatter-empty")},
    ("SliceScatterBackward0", "_saved_end"): "torch keeps None for an end not given, gradkit "
    "the end it uses",
    ("conv2d-2", "_saved_input"): "padding='same' with an even kernel: torch saves the input it "
    "padded on one side, gradkit the input (its padding holds both sides)",
    **{("matmul-empty_inner", f"_saved_{name}_sym_strides"): "torch's strides of an empty "
       "operand" for name in ("self", "mat2")},
    **{("linalg.matrix_power-0", f"_saved_{name}"): "gradkit multiplies the powers in another "
       "order" for name in ("self", "mat2")},
    **{(f"RreluWithNoiseBackward{overload}", "_saved_" + name): "gradkit's rrelu node holds the "
       "slopes it drew (torch's noise is untouched outside training), not lower/upper"
       for overload in (0, 1) for name in ("noise", "lower", "upper", "training")},
}


# torch leaves part of these uninitialized (memory from earlier tensors)
PARTLY_UNINITIALIZED_IN_TORCH = {("CtcLossBackward0", "_saved_result1")}


def _ctc_log_alpha(lib):
    """ctc_loss's log_alpha: (N, T, 2 max(target_lengths) + 1), each sample's alphas up to its
    own lengths; torch leaves the rest uninitialized, gradkit gives -inf."""
    log_probs = lib.tensor(np.random.default_rng(0).standard_normal((4, 3, 5)))
    log_probs = log_probs.log_softmax(2).detach().requires_grad_()
    targets = lib.tensor([1, 2, 1, 3, 4, 1, 2])
    loss = lib.nn.functional.ctc_loss(log_probs, targets, [4, 4, 3], [2, 3, 2],
                                      reduction="none")
    return loss.grad_fn._saved_result1.detach().numpy()


def test_ctc_log_alpha_matches_torch_within_each_samples_lengths():
    mine, theirs = _ctc_log_alpha(gradkit), _ctc_log_alpha(torch)
    assert mine.shape == theirs.shape == (3, 4, 7)
    for sample, (steps, extended) in enumerate([(4, 5), (4, 7), (3, 5)]):
        np.testing.assert_allclose(mine[sample, :steps, :extended],
                                   theirs[sample, :steps, :extended], rtol=1e-12)
        assert np.isneginf(mine[sample, steps:]).all()
        assert np.isneginf(mine[sample, :, extended:]).all()


def _unwrapped(value):
    """torch's binding shows a negative int64 as 2**64 + value: the value meant."""
    if type(value) is int and value >= 2 ** 63:
        return value - 2 ** 64
    return tuple(_unwrapped(v) for v in value) if isinstance(value, (tuple, list)) else value


def _assert_same_saved(mine, theirs, name: str, counted_from_front: bool = False) -> None:
    """Tensors equal in value, shape and dtype; numbers, bools, strings, tuples and None
    equal (torch's negative ints unwrapped; counted from the front where gradkit's op does)."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, gradkit.Tensor), (name, mine)
        assert (tuple(mine.shape), str(mine.dtype).split(".")[-1]) == \
            (tuple(theirs.shape), str(theirs.dtype).split(".")[-1]), name
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().resolve_conj().numpy(),
                                   rtol=1e-10, atol=1e-12, err_msg=name)
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(mine, (tuple, list)) and len(mine) == len(theirs), (name, mine, theirs)
        for m, t in zip(mine, theirs):
            _assert_same_saved(m, t, name, counted_from_front)
    else:
        theirs = _unwrapped(theirs)
        if counted_from_front and type(theirs) is int and theirs < 0 <= mine:
            return  # e.g. dim=-1: gradkit's node holds the last dim's index
        assert isinstance(mine, bool) == isinstance(theirs, bool) and mine == theirs, \
            (name, mine, theirs)


def _same_saved(node, t_node, name: str) -> bool:
    try:
        _assert_same_saved(getattr(node, name), getattr(t_node, name), name)
    except (AssertionError, AttributeError):
        return False
    return True


def _saved_reads_after_backward(lib) -> dict:
    """(program, _saved_ name) -> "value" or the error, read after a backward that freed the
    graph: tensors (and what gradkit computes from them when read) are gone, sizes and
    parameters stay."""
    x = lib.tensor(np.arange(6.0).reshape(2, 3) + 1, requires_grad=True)
    functional = lib.nn.functional
    programs = {
        "mean": (lambda: x.mean(), ("_saved_self_sym_numel", "_saved_self_sym_sizes")),
        "det": (lambda: lib.linalg.det(x[:, :2]), ("_saved_LU", "_saved_pivots", "_saved_A")),
        "conv1d": (lambda: functional.conv1d(x[None], x[:, :2].reshape(2, 2, 1)),
                   ("_saved_stride", "_saved_bias_sym_sizes_opt", "_saved_input")),
        "split": (lambda: x.split(2, 1)[0], ("_saved_split_size",)),
        "layer_norm": (lambda: functional.layer_norm(x, (3,)),
                       ("_saved_result1", "_saved_normalized_shape")),
        "linear": (lambda: functional.linear(x, x, x[0, :2]),
                   ("_saved_mat2", "_saved_mat2_sym_sizes", "_saved_mat1_sym_strides"))}
    reads = {}
    for program, (run, names) in programs.items():
        y = run()
        node = y.grad_fn
        y.sum().backward()
        for name in names:
            reads[program, name] = _outcome(lambda lib, node=node, name=name:
                                            getattr(node, name) is not None and "value", lib)
    return reads


def test_saved_reads_after_backward_match_torch():
    mine, theirs = _saved_reads_after_backward(gradkit), _saved_reads_after_backward(torch)
    strides = ("linear", "_saved_mat1_sym_strides")  # read from the saved tensor: freed too
    assert theirs.pop(strides) == "value"
    assert mine.pop(strides)[0] == "RuntimeError"
    assert mine == theirs


# -- freeing, detach_() and in-place changes of saved tensors ----------------------------------

def _outcome(program, lib):
    """What ``program(lib)`` returns (rounded lists), or its exception's type and message."""
    try:
        return program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the result compared with torch
        return type(exc).__name__, str(exc)


def _leaf(lib):
    return lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)


def _backward_twice(name, loss_of):
    """A program that runs backward twice without retain_graph through ``loss_of(x)``."""
    def program(lib):
        x = _leaf(lib)
        y = loss_of(x)
        y.backward()
        y.backward()
        return x.grad.tolist()
    program.__name__ = name
    return program


_second_backward_nothing_saved = _backward_twice(  # AddBackward0, SumBackward0 save no tensor
    "second_backward_nothing_saved", lambda x: (x + 1).sum())
_second_backward_number_saved = _backward_twice(  # torch saves the 2 as a tensor: refused
    "second_backward_number_saved", lambda x: (x * 2).sum())
_second_backward_shape_saved = _backward_twice(
    "second_backward_shape_saved", lambda x: x.reshape(2, 1).expand(2, 3).sum(0).mean())


def _detached_saved_input(lib):
    x = _leaf(lib)
    a = x * 1
    y = (a * a).sum()
    a.detach_()
    y.backward()
    return x.grad.tolist()


def _detached_input_not_saved(lib):
    x = _leaf(lib)
    a = x * 1
    y = a.exp().sum()  # exp saves its result, not a
    a.detach_()
    y.backward()
    return [round(v, 12) for v in x.grad.tolist()]


def _mutated_saved_input(lib):
    x = _leaf(lib)
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        a = x * 1
        y = (a * a * a).sum()
        a.mul_(10)
        y.backward()
    return x.grad.tolist(), a.tolist()


def _mutated_saved_output_through_view(lib):
    x = _leaf(lib)
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        a = x.exp()
        a[0] = 7.0
        a.sum().backward()
    return [round(v, 12) for v in x.grad.tolist()], [round(v, 12) for v in a.tolist()]


def _mutated_double_backward(lib):
    x = _leaf(lib)
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        a = x * 1
        y = (a * a * a).sum()
        a.add_(1)
        g, = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
    return g.tolist(), x.grad.tolist()


def _backward_outside_the_mutation_block(lib):
    x = _leaf(lib)
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        y = (x * x).sum()
    y.backward()
    return x.grad.tolist()


SAVED_PROGRAMS = [_second_backward_nothing_saved, _second_backward_number_saved,
                  _second_backward_shape_saved, _detached_saved_input, _detached_input_not_saved,
                  _mutated_saved_input, _mutated_saved_output_through_view,
                  _mutated_double_backward, _backward_outside_the_mutation_block]


@pytest.mark.parametrize("program", SAVED_PROGRAMS, ids=lambda p: p.__name__.strip("_"))
def test_saved_tensor_lifetimes_match_torch(program):
    assert _outcome(program, gradkit) == _outcome(program, torch)


def test_detach_message_names_the_out_of_place_fix():
    with pytest.raises(RuntimeError, match=r"detached in-place, i.e. with .detach_\(\)"):
        _detached_saved_input(gradkit)


MATMUL_SHAPES = [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((4,), (4, 5)),
                 ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4,))]


def _matmul_saved_sizes(lib, x_shape, y_shape, needing_grad):
    """The sizes of the tensors x @ y saves, and the gradients it gives."""
    sizes = []

    def operand(shape, name):
        n = 1
        for s in shape:
            n *= s
        values = lib.arange(n, dtype=lib.float64).reshape(shape) / 7 - 1
        return values.requires_grad_(name in needing_grad)

    x, y = operand(x_shape, "x"), operand(y_shape, "y")
    with lib.autograd.graph.saved_tensors_hooks(lambda t: sizes.append(t.numel()) or t,
                                                lambda t: t):
        out = x @ y
    grads = lib.autograd.grad(out.sum(), [t for t in (x, y) if t.requires_grad])
    return sorted(sizes), [g.detach().numpy() for g in grads]


@pytest.mark.parametrize("needing_grad", ["x", "y", "xy"])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_a_matmul_saves_only_the_operands_the_needed_gradients_read(shapes, needing_grad):
    """torch keeps x for y's gradient and y for x's: an operand needing no gradient costs the
    other's memory only."""
    sizes, grads = _matmul_saved_sizes(gradkit, *shapes, needing_grad)
    expected_sizes, expected_grads = _matmul_saved_sizes(torch, *shapes, needing_grad)
    assert sizes == expected_sizes
    assert len(grads) == len(expected_grads) == len(needing_grad)
    for grad, expected in zip(grads, expected_grads):  # BLAS may sum in another order
        np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-12)


def _double_backward_through_hook_on_written_view(lib, keep_view: bool):
    """exp_ written into a view saves the view as its output: torch unpacks it with the view's
    node, so double backward runs the view's tensor hook again (fuzz seed 37558)."""
    calls = []
    x = lib.tensor([[-0.39]], requires_grad=True)
    view = x.clone().unsqueeze(0)
    view.exp_()
    view.register_hook(lambda g: calls.append("hook") or g + 1)
    loss = (x * 0.3).sum() + (view * 0.7).sum()
    if not keep_view:
        del view
    g, = lib.autograd.grad(loss, x, create_graph=True)
    gg, = lib.autograd.grad((g * 0.5).sum(), x)
    return g.tolist(), gg.tolist(), calls


@pytest.mark.parametrize("keep_view", [True, False], ids=["view_alive", "view_deleted"])
def test_saved_output_of_an_in_place_op_on_a_view_keeps_the_views_hooks(keep_view):
    mine = _double_backward_through_hook_on_written_view(gradkit, keep_view)
    theirs = _double_backward_through_hook_on_written_view(torch, keep_view)
    assert mine[2] == theirs[2] == ["hook", "hook"]
    for got, expected in zip(mine[:2], theirs[:2]):
        np.testing.assert_allclose(got, expected, rtol=1e-6)
