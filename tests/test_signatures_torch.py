"""Parameter names as torch's: a user who calls by keyword (``nn.Linear(3, 4)(input=x)``,
``nn.MSELoss(size_average=False)``) gets torch's behaviour, not a TypeError.

The scan compares ``inspect.signature`` of every nn Module class both libraries have (its
``__init__`` and ``forward``); the programs call by keyword in both libraries and compare.
"""
import inspect
import warnings

import numpy as np
import pytest

import gradkit
from test_torch_numerics import assert_same_as_torch

torch = pytest.importorskip("torch")

# Deliberate differences, each with its reason: (namespace, name).
FUNCTION_ALLOWED = {
    # @op objects: their signature reads (*args, **kwargs); they take torch's names (input=)
    ("functional", "sigmoid"), ("functional", "tanh"),
}

# Deliberate differences, each with its reason: (class name, method).
MODULE_ALLOWED: set = set()  # none: every module's names are torch's


def _names(function):
    """(name, kind) of each parameter (a keyword-only one is marked), "*args" where the
    signature takes any arguments, None where there is none to read (builtins)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
        return "*args"
    return [p.name + ("(keyword-only)" if p.kind == p.KEYWORD_ONLY else "")
            for p in parameters]


def _module_pairs():
    for name in sorted(dir(torch.nn)):
        theirs, ours = getattr(torch.nn, name), getattr(gradkit.nn, name, None)
        if inspect.isclass(theirs) and issubclass(theirs, torch.nn.Module) \
                and inspect.isclass(ours):
            yield name, theirs, ours


def test_module_parameter_names_match_torch():
    differences = []
    for name, theirs, ours in _module_pairs():
        for method in ("__init__", "forward"):
            expected = _names(getattr(theirs, method, None))
            got = _names(getattr(ours, method, None))
            # torch's (*args, **kwargs) classes check nothing; gradkit's must not hide names
            if expected not in (None, "*args") and got is not None and expected != got \
                    and (name, method) not in MODULE_ALLOWED:
                differences.append(f"{name}.{method}: torch {expected}, gradkit {got}")
    assert not differences, "\n".join(differences)


def test_module_allow_list_is_still_needed():
    pairs = {name: (theirs, ours) for name, theirs, ours in _module_pairs()}
    for name, method in MODULE_ALLOWED:
        theirs, ours = pairs[name]
        assert _names(getattr(theirs, method)) != _names(getattr(ours, method)), (name, method)


def _filled(m, module):
    """``module`` with parameters set to the same numbers in both libraries."""
    with m.no_grad():
        for i, p in enumerate(module.parameters()):
            values = np.sin(np.arange(p.numel(), dtype=np.float64) + i + 0.5)  # no exact 0
            p.copy_(m.tensor(values.reshape(tuple(p.shape)), dtype=p.dtype))
    return module


def _input(m, *shape):
    return m.tensor(np.cos(np.arange(int(np.prod(shape)), dtype=np.float64)).reshape(shape),
                    dtype=m.float64, requires_grad=True)


FORWARD_BY_KEYWORD = {
    "Linear": (lambda m: m.nn.Linear(3, 4), (2, 3)),
    "Conv1d": (lambda m: m.nn.Conv1d(2, 3, 2), (1, 2, 5)),
    "Conv2d": (lambda m: m.nn.Conv2d(2, 3, 2), (1, 2, 4, 4)),
    "Conv3d": (lambda m: m.nn.Conv3d(1, 2, 2), (1, 1, 3, 3, 3)),
    "ConvTranspose1d": (lambda m: m.nn.ConvTranspose1d(2, 3, 2), (1, 2, 4)),
    "ConvTranspose2d": (lambda m: m.nn.ConvTranspose2d(2, 3, 2), (1, 2, 3, 3)),
    "ConvTranspose3d": (lambda m: m.nn.ConvTranspose3d(1, 2, 2), (1, 1, 2, 2, 2)),
    "BatchNorm1d": (lambda m: m.nn.BatchNorm1d(3), (4, 3)),
    "BatchNorm2d": (lambda m: m.nn.BatchNorm2d(2), (2, 2, 3, 3)),
    "InstanceNorm1d": (lambda m: m.nn.InstanceNorm1d(2), (2, 2, 5)),
    "GroupNorm": (lambda m: m.nn.GroupNorm(2, 4), (2, 4, 3)),
    "LayerNorm": (lambda m: m.nn.LayerNorm(3), (2, 3)),
    "MaxPool1d": (lambda m: m.nn.MaxPool1d(2), (1, 2, 6)),
    "MaxPool2d": (lambda m: m.nn.MaxPool2d(2), (1, 2, 4, 4)),
    "MaxPool3d": (lambda m: m.nn.MaxPool3d(2), (1, 1, 4, 4, 4)),
    "AvgPool1d": (lambda m: m.nn.AvgPool1d(2), (1, 2, 6)),
    "AvgPool2d": (lambda m: m.nn.AvgPool2d(2), (1, 2, 4, 4)),
    "AvgPool3d": (lambda m: m.nn.AvgPool3d(2), (1, 1, 4, 4, 4)),
    "AdaptiveAvgPool2d": (lambda m: m.nn.AdaptiveAvgPool2d(2), (1, 2, 5, 5)),
    "Dropout": (lambda m: m.nn.Dropout(0.5).eval(), (2, 3)),
    "Flatten": (lambda m: m.nn.Flatten(), (2, 3, 4)),
    "ReLU": (lambda m: m.nn.ReLU(), (2, 3)),
    "Tanh": (lambda m: m.nn.Tanh(), (2, 3)),
    "Sigmoid": (lambda m: m.nn.Sigmoid(), (2, 3)),
    "GELU": (lambda m: m.nn.GELU(), (2, 3)),
    "Softmax": (lambda m: m.nn.Softmax(dim=1), (2, 3)),
    "LogSoftmax": (lambda m: m.nn.LogSoftmax(dim=1), (2, 3)),
    "Softmin": (lambda m: m.nn.Softmin(dim=1), (2, 3)),
    "Sequential": (lambda m: m.nn.Sequential(m.nn.Linear(3, 2), m.nn.Tanh()), (2, 3)),
    "LazyLinear": (lambda m: m.nn.LazyLinear(2), (2, 3)),
    "LazyConv1d": (lambda m: m.nn.LazyConv1d(2, 2), (1, 2, 5)),
    "LazyBatchNorm1d": (lambda m: m.nn.LazyBatchNorm1d(), (4, 3)),
}


@pytest.mark.parametrize("name", sorted(FORWARD_BY_KEYWORD))
def test_forward_by_keyword_matches_torch(name):
    make, shape = FORWARD_BY_KEYWORD[name]

    def program(m):
        module, x = make(m).double(), _input(m, *shape)  # float64: no rounding noise
        module(input=x)  # a lazy module materializes its parameters on the first call
        out = _filled(m, module)(input=x)
        (out * out).sum().backward()  # not sum(): its normalized grads are ~0, signs noise
        return out, x.grad

    assert_same_as_torch(program, rtol=1e-5, atol=1e-6)


def test_forward_by_keyword_embedding_and_output_size():
    def program(m):
        embedding = _filled(m, m.nn.Embedding(5, 2))
        deconv = _filled(m, m.nn.ConvTranspose1d(1, 1, 3, stride=2).double())
        x = _input(m, 1, 1, 3)
        return embedding(input=m.tensor([[0, 4], [2, 2]])), deconv(input=x, output_size=[8])

    assert_same_as_torch(program, rtol=1e-6)


def test_forward_unknown_keyword_errors_like_torch():
    def program(m):
        return m.nn.Linear(3, 4)(x=m.ones(2, 3))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_torch(program)


LEGACY_LOSSES = sorted(name for name, theirs, _ in _module_pairs()
                       if "size_average" in inspect.signature(theirs.__init__).parameters)


@pytest.mark.parametrize("name", LEGACY_LOSSES)
@pytest.mark.parametrize("size_average, reduce", [(False, None), (None, False), (True, True)])
def test_legacy_size_average_reduce_as_torch(name, size_average, reduce):
    outcomes = []
    for lib in (torch, gradkit):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = getattr(lib.nn, name)(size_average=size_average, reduce=reduce)
        outcomes.append((loss.reduction, [str(w.message) for w in caught]))
    assert outcomes[1] == outcomes[0]


def test_legacy_loss_values_as_torch():
    def program(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            logits, classes = _input(m, 3, 4), m.tensor([0, 3, 1])
            return (m.nn.MSELoss(size_average=False)(logits, m.zeros(3, 4, dtype=m.float64)),
                    m.nn.CrossEntropyLoss(reduce=False)(logits, classes),
                    m.nn.NLLLoss(size_average=False, ignore_index=1)(logits, classes),
                    m.nn.BCEWithLogitsLoss(reduce=False)(logits, m.ones(3, 4, dtype=m.float64)))

    assert_same_as_torch(program, rtol=1e-12)


def test_constructor_keywords_as_torch():
    def program(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Hardtanh's min_value/max_value FutureWarning
            clip = m.nn.Hardtanh(min_value=-0.5, max_value=0.25)
        x = _input(m, 1, 1, 4, 4)
        pooled, indices = m.nn.MaxPool2d(2, return_indices=True)(x)
        positional = m.nn.MaxPool2d(2, 2, 0, 1, True)(x)[1]  # 5th: return_indices, as torch's
        cell = m.nn.RNNCellBase(3, 2, True, 4)
        layer = m.nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0)
        decoder = m.nn.TransformerDecoder(decoder_layer=layer, num_layers=2)
        shapes = m.tensor([list(p.shape) + [0] * (2 - p.ndim) for p in cell.parameters()])
        return (clip(x), pooled, indices, positional, shapes,
                m.tensor(len(decoder.layers)), m.tensor(clip.min_val))

    assert_same_as_torch(program)


def test_hardtanh_deprecated_keywords_warn_as_torch():
    messages = []
    for lib in (torch, gradkit):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.Hardtanh(min_value=-2.0, max_value=3.0)
        messages.append([(w.category, str(w.message)) for w in caught])
    assert messages[1] == messages[0]
    assert len(messages[0]) == 2


def test_rnn_cell_base_requires_num_chunks_as_torch():
    errors = []
    for lib in (torch, gradkit):
        with pytest.raises(TypeError) as caught:
            lib.nn.RNNCellBase(3, 2, True)
        errors.append(str(caught.value).split("__init__() ")[-1])
    assert errors[1] == errors[0]


def test_encoder_layer_fast_path_flag_as_torch():
    for activation, flag in (("relu", 1), ("gelu", 2), (lambda x: x, 0)):
        for lib in (torch, gradkit):
            layer = lib.nn.TransformerEncoderLayer(4, 2, 8, activation=activation)
            assert layer.activation_relu_or_gelu == flag


NAMESPACES = {"functional": (torch.nn.functional, gradkit.nn.functional),
              "init": (torch.nn.init, gradkit.nn.init)}


def test_functional_and_init_parameter_names_match_torch():
    differences = []
    for namespace, (theirs, ours) in NAMESPACES.items():
        for name in sorted(n for n in dir(theirs) if not n.startswith("_")):
            expected, got = _names(getattr(theirs, name)), _names(getattr(ours, name, None))
            if callable(getattr(theirs, name)) and expected not in (None, "*args") \
                    and got is not None and expected != got \
                    and (namespace, name) not in FUNCTION_ALLOWED:
                differences.append(f"{namespace}.{name}: torch {expected}, gradkit {got}")
    assert not differences, "\n".join(differences)


def _loss_arguments(m):
    """Arguments for each torch.nn.functional loss that takes ``size_average``."""
    x = m.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    p = m.tensor(np.linspace(0.1, 0.9, 12).reshape(3, 4))
    y = m.tensor(np.linspace(0.5, -0.5, 12).reshape(3, 4))
    classes, sign = m.tensor([0, 3, 1]), m.tensor([1.0, -1.0, 1.0])
    signs = sign.reshape(3, 1).expand(3, 4)
    labels = m.tensor([[3, 0, -1, 1], [1, 2, -1, 0], [0, -1, 0, 0]])
    return x, {
        "binary_cross_entropy": (x.sigmoid(), p), "binary_cross_entropy_with_logits": (x, p),
        "cosine_embedding_loss": (x, y, sign), "cross_entropy": (x, classes),
        "hinge_embedding_loss": (x, signs), "kl_div": (x, p), "l1_loss": (x, y),
        "margin_ranking_loss": (x[:, 0], y[:, 0], sign), "mse_loss": (x, y),
        "multi_margin_loss": (x, classes), "multilabel_margin_loss": (x, labels),
        "multilabel_soft_margin_loss": (x, p), "nll_loss": (x, classes),
        "poisson_nll_loss": (x, p), "smooth_l1_loss": (x, y), "soft_margin_loss": (x, signs),
        "triplet_margin_loss": (x, y, p)}


LEGACY_FUNCTIONS = sorted(_loss_arguments(gradkit)[1])


@pytest.mark.parametrize("name", LEGACY_FUNCTIONS)
@pytest.mark.parametrize("size_average, reduce", [(False, None), (None, False), (False, True)])
def test_functional_legacy_size_average_reduce_as_torch(name, size_average, reduce):
    def program(m):
        x, arguments = _loss_arguments(m)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = getattr(m.nn.functional, name)(*arguments[name], size_average=size_average,
                                                  reduce=reduce)
        assert any("size_average and reduce args will be deprecated" in str(w.message)
                   for w in caught)
        (loss * loss).sum().backward()
        return loss, x.grad

    assert_same_as_torch(program, rtol=1e-12)


def test_mse_loss_weight_as_torch():
    weight = np.linspace(0.5, 2.0, 12).reshape(3, 4)
    for reduction in ("none", "mean", "sum"):
        def program(m, reduction=reduction):
            x, _ = _loss_arguments(m)
            loss = m.nn.functional.mse_loss(x, x.detach().flip(0), reduction=reduction,
                                            weight=m.tensor(weight))
            loss.sum().backward()
            return loss, x.grad

        assert_same_as_torch(program, rtol=1e-12)
    for weight_shape, reduction in (((4,), "mean"), ((3, 4), "average")):
        def failing(m, weight_shape=weight_shape, reduction=reduction):
            return m.nn.functional.mse_loss(m.ones(3, 4), m.zeros(3, 4), reduction=reduction,
                                            weight=m.ones(weight_shape))

        assert_same_as_torch(failing)


def _keyword_calls(m):
    """Top-level functions called with every tensor by torch's keyword (their ATen names)."""
    a = m.tensor(np.linspace(-1, 1, 6).reshape(2, 3))
    square = m.tensor(np.linspace(0.5, 2, 4).reshape(2, 2)) + 2 * m.eye(2, dtype=m.float64)
    v2, v3 = m.tensor([1.0, -2.0], dtype=m.float64), m.tensor([0.5, 1.0, 3.0], dtype=m.float64)
    batch = a.reshape(1, 2, 3)
    return {
        "mm": lambda: m.mm(input=a, mat2=a.T), "bmm": lambda: m.bmm(input=batch, mat2=batch.mT),
        "mv": lambda: m.mv(input=a, vec=v3), "dot": lambda: m.dot(input=v3, tensor=v3),
        "vdot": lambda: m.vdot(input=v3, other=v3), "inner": lambda: m.inner(input=a, other=a),
        "outer": lambda: m.outer(input=v2, vec2=v3),
        "cross": lambda: m.cross(input=a, other=a.flip(0), dim=1),
        "kron": lambda: m.kron(input=square, other=a),
        "reshape": lambda: m.reshape(input=a, shape=(3, 2)),
        "flatten": lambda: m.flatten(input=batch, start_dim=1),
        "ravel": lambda: m.ravel(input=a), "unflatten": lambda: m.unflatten(a, 1, (3, 1)),
        "broadcast_to": lambda: m.broadcast_to(input=v3, size=(2, 3)),
        "clamp": lambda: m.clamp(input=a, min=-0.5), "clip": lambda: m.clip(input=a, max=0.5),
        "real": lambda: m.real(input=a), "conj": lambda: m.conj(input=a),
        "adjoint": lambda: m.adjoint(input=a), "swapaxes": lambda: m.swapaxes(input=a, axis0=0,
                                                                               axis1=1),
        "swapdims": lambda: m.swapdims(input=a, dim0=0, dim1=1),
        "movedim": lambda: m.movedim(input=batch, source=0, destination=2),
        "moveaxis": lambda: m.moveaxis(input=batch, source=0, destination=2),
        "nan_to_num": lambda: m.nan_to_num(input=a / 0.0, posinf=2.0),
        "take_along_dim": lambda: m.take_along_dim(input=a, indices=m.tensor([[0], [2]]), dim=1),
        "chunk": lambda: m.chunk(input=a, chunks=3, dim=1)[1],
        "matrix_power": lambda: m.matrix_power(input=square, n=3),
        "logdet": lambda: m.logdet(input=square), "slogdet": lambda: m.slogdet(input=square)[1],
        "aminmax": lambda: m.aminmax(input=a, dim=1)[0], "msort": lambda: m.msort(input=a),
        "diagflat": lambda: m.diagflat(input=v2, offset=1),
        "repeat_interleave": lambda: m.repeat_interleave(input=v2, repeats=2),
        "diff": lambda: m.diff(input=a, dim=1),
        "argwhere": lambda: m.argwhere(input=a), "nonzero": lambda: m.nonzero(input=a),
        "histc": lambda: m.histc(input=a, bins=4),
        "bincount": lambda: m.bincount(input=m.tensor([0, 2, 2])),
        "combinations": lambda: m.combinations(input=v3, r=2),
        "tensor_split": lambda: m.tensor_split(input=a, sections=3, dim=1)[2],
        "fliplr": lambda: m.fliplr(input=a), "flipud": lambda: m.flipud(input=a),
        "as_strided": lambda: m.as_strided(input=a, size=(2, 2), stride=(1, 2)),
        "diag": lambda: m.diag(input=a, diagonal=1),
        "std_mean": lambda: m.std_mean(input=a, dim=1)[0],
        "var_mean": lambda: m.var_mean(input=a, dim=1)[0],
        "detach_copy": lambda: m.detach_copy(input=a),
        "diagonal_scatter": lambda: m.diagonal_scatter(input=square, src=v2),
        "select_scatter": lambda: m.select_scatter(input=a, src=v3, dim=0, index=1),
        "slice_scatter": lambda: m.slice_scatter(input=a, src=a[:1], dim=0, start=1),
        "permute_copy": lambda: m.permute_copy(input=a, dims=(1, 0)),
        "narrow_copy": lambda: m.narrow_copy(input=a, dim=1, start=1, length=2),
        "expand_copy": lambda: m.expand_copy(input=v3, size=(2, 3)),
        "split_with_sizes": lambda: m.split_with_sizes(input=a, split_sizes=[1, 2], dim=1)[1],
        "scatter_reduce": lambda: m.scatter_reduce(input=v3, dim=0, index=m.tensor([0, 0]),
                                                   src=v2, reduce="sum"),
        "index_reduce": lambda: m.index_reduce(input=v3, dim=0, index=m.tensor([2, 2]),
                                               source=v2, reduce="prod"),
        "full_like": lambda: m.full_like(input=a, fill_value=2.5),
        "empty_like": lambda: m.tensor(m.empty_like(input=a).shape),
        "numel": lambda: m.tensor(m.numel(input=a)),
        "is_complex": lambda: m.tensor(m.is_complex(input=a)),
        "is_floating_point": lambda: m.tensor(m.is_floating_point(input=a)),
        "as_strided_scatter": lambda: m.as_strided_scatter(input=a, src=m.ones(2, 2,
                                                           dtype=m.float64), size=(2, 2),
                                                           stride=(1, 2)),
    }


KEYWORD_CALLS = sorted(_keyword_calls(gradkit))


@pytest.mark.parametrize("name", KEYWORD_CALLS)
def test_top_level_function_by_keyword_as_torch(name):
    assert_same_as_torch(lambda m: _keyword_calls(m)[name](), rtol=1e-12)


def test_tensor_methods_by_keyword_as_torch():
    def program(m):
        x = m.zeros(2, 3, dtype=m.float64)
        x.copy_(other=m.tensor([1.0, 2.0, 3.0], dtype=m.float64))  # torch's binding: other
        grown = m.ones(2, dtype=m.float64).resize_(size=(1, 2))
        return x, grown, x.mm(mat2=x.T), x.reshape(shape=(3, 2))

    assert_same_as_torch(program)

    def twice(m):
        return m.ones(2).resize_(2, size=(2,))

    assert_same_as_torch(twice)


def _linalg_keyword_calls(m):
    """torch.linalg functions called with torch's keywords (A=, B=)."""
    a = m.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=m.float64)
    b = m.tensor([[1.0], [2.0], [3.0]], dtype=m.float64)
    return {
        "diagonal": lambda: m.linalg.diagonal(A=a, offset=1),
        "inv_ex": lambda: m.linalg.inv_ex(A=a)[0],
        "lu": lambda: m.linalg.lu(A=a)[2], "lu_factor": lambda: m.linalg.lu_factor(A=a)[0],
        "lu_factor_ex": lambda: m.linalg.lu_factor_ex(A=a)[0],
        "qr": lambda: m.linalg.qr(A=a, mode="r")[1].abs(),
        "slogdet": lambda: m.linalg.slogdet(A=a)[1],
        "svd": lambda: m.linalg.svd(A=a, full_matrices=False)[1],
        "svdvals": lambda: m.linalg.svdvals(A=a),
        "solve": lambda: m.linalg.solve(A=a, B=b), "solve_ex": lambda: m.linalg.solve_ex(A=a,
                                                                                      B=b)[0],
    }


@pytest.mark.parametrize("name", sorted(_linalg_keyword_calls(gradkit)))
def test_linalg_by_keyword_as_torch(name):
    assert_same_as_torch(lambda m: _linalg_keyword_calls(m)[name](), rtol=1e-10)
