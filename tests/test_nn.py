"""gradkit.nn: Module machinery, Parameter, init, containers and layers (vs torch.nn)."""
import math
from collections import OrderedDict

import numpy as np
import pytest

import gradkit
from gradkit import nn
from gradkit.nn import init


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(gradkit.ones(3))
        self.inner = nn.Sequential(nn.Tanh(), nn.Sigmoid())
        self.register_buffer("count", gradkit.zeros(1))
        self.register_buffer("scratch", gradkit.zeros(2), persistent=False)

    def forward(self, x):
        return self.inner(x * self.scale)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Block()
        self.second = Block()
        self.shared = self.first  # the same module twice: reported once
        self.bias = nn.Parameter(gradkit.zeros(3))

    def forward(self, x):
        return self.second(self.first(x)) + self.bias


# -- Parameter ---------------------------------------------------------------------------

def test_parameter_is_leaf_sharing_memory_and_version():
    data = gradkit.zeros(3)
    p = nn.Parameter(data)
    assert p.requires_grad and p.is_leaf and isinstance(p, gradkit.Tensor)
    with gradkit.no_grad():
        data.add_(1)
    assert p.tolist() == [1.0, 1.0, 1.0] and p._version == data._version
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert type(p * 2) is gradkit.Tensor
    with pytest.raises(TypeError, match="Parameter data must be a Tensor"):
        nn.Parameter([1.0])


# -- registration and traversal ----------------------------------------------------------

def test_named_parameters_buffers_and_modules():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["bias", "first.scale", "second.scale"]
    assert [n for n, _ in net.named_buffers()] == [
        "first.count", "first.scratch", "second.count", "second.scratch"]
    assert [n for n, _ in net.named_modules()] == [
        "", "first", "first.inner", "first.inner.0", "first.inner.1",
        "second", "second.inner", "second.inner.0", "second.inner.1"]
    assert [n for n, _ in net.named_children()] == ["first", "second"]
    assert list(net.children()) == [net.first, net.second]
    assert len(list(net.parameters(recurse=False))) == 1
    assert net.get_submodule("first.inner.1") is net.first.inner[1]


def test_setattr_rules():
    block = Block()
    block.scale = None  # a registered parameter may be cleared
    assert "scale" in block._parameters and list(block.parameters()) == []
    with pytest.raises(TypeError, match="cannot assign 'gradkit.FloatTensor' as parameter 'scale'"):
        block.scale = gradkit.ones(3)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'inner'"):
        block.inner = 3
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'count'"):
        block.count = "x"
    block.count = gradkit.ones(1)
    assert block.count.tolist() == [1.0]
    del block.inner
    assert "inner" not in block._modules
    with pytest.raises(AttributeError, match="'Block' object has no attribute 'missing'"):
        block.missing  # noqa: B018


def test_register_errors():
    block = Block()
    with pytest.raises(KeyError, match=r"parameter name can.*t contain \"\.\""):
        block.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        block.register_buffer("forward", gradkit.zeros(1))
    with pytest.raises(TypeError,
                       match="cannot assign 'gradkit.FloatTensor' object to parameter 'w'"):
        block.register_parameter("w", gradkit.zeros(1))
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        block.add_module("m", 3)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(gradkit.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_missing_forward():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required '
                                                  '"forward" function'):
        nn.Module()(gradkit.zeros(1))


def test_train_eval_and_requires_grad():
    net = Net()
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad_and_backward_through_modules():
    net = Net()
    x = gradkit.tensor([0.5, -1.0, 2.0])
    net(x).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad.tolist() == [0.0] * 3 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_forward_hooks():
    block = Block()
    seen = []
    pre = block.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    post = block.register_forward_hook(lambda m, args, out: seen.append(args[0].tolist()))
    block(gradkit.ones(3))
    assert seen == [[0.0, 0.0, 0.0]]
    pre.remove()
    post.remove()
    block(gradkit.ones(3))
    assert len(seen) == 1


def test_apply_visits_children_first():
    order = []
    Net().apply(lambda m: order.append(type(m).__name__))
    assert order[-1] == "Net" and order[:3] == ["Tanh", "Sigmoid", "Sequential"]


def test_double_casts_parameters_in_place():
    net = Net()
    param = net.bias
    net.double()
    assert net.bias is param and param.dtype == gradkit.float64
    assert net.first.count.dtype == gradkit.float64


# -- state dicts -------------------------------------------------------------------------

def test_state_dict_round_trip():
    source, target = Net(), Net()
    with gradkit.no_grad():
        source.bias.add_(3)
        source.first.count.fill_(7)
    sd = source.state_dict()
    # as torch's: parameters() reports the shared module once, state_dict() under both names
    assert list(sd) == ["bias", "first.scale", "first.count", "second.scale", "second.count",
                        "shared.scale", "shared.count"]
    assert all(not v.requires_grad for v in sd.values())
    result = target.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert target.bias.tolist() == [3.0] * 3 and target.first.count.tolist() == [7.0]
    assert target.bias._version > 0  # copied in place


def test_load_state_dict_errors():
    net = Net()
    sd = net.state_dict()
    del sd["bias"]
    sd["extra"] = gradkit.zeros(1)
    with pytest.raises(RuntimeError, match=r'Error\(s\) in loading state_dict for Net:\n\t'
                                           r'Missing key\(s\) in state_dict: "bias". \n\t'
                                           r'Unexpected key\(s\) in state_dict: "extra". '):
        net.load_state_dict(sd)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    bad = net.state_dict()
    bad["bias"] = gradkit.zeros(4)
    with pytest.raises(RuntimeError, match=r"size mismatch for bias: copying a param with shape "
                                           r"gradkit.Size\(\[4\]\) from checkpoint, the shape in "
                                           r"current model is gradkit.Size\(\[3\]\)."):
        net.load_state_dict(bad)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        net.load_state_dict([1])


# -- containers and repr -----------------------------------------------------------------

def test_sequential_indexing():
    seq = nn.Sequential(nn.Tanh(), nn.ReLU(), nn.Sigmoid())
    assert isinstance(seq[-1], nn.Sigmoid) and len(seq) == 3
    assert isinstance(seq[1:], nn.Sequential) and len(seq[1:]) == 2
    del seq[0]
    assert [type(m).__name__ for m in seq] == ["ReLU", "Sigmoid"]
    assert list(seq._modules) == ["0", "1"]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        seq[5]
    named = nn.Sequential(OrderedDict(act=nn.Tanh()))
    assert named.act is named[0]
    x = gradkit.tensor([-1.0, 0.5])
    np.testing.assert_allclose(nn.Sequential(nn.ReLU(), nn.Sigmoid())(x).tolist(),
                               1 / (1 + np.exp(-np.maximum([-1.0, 0.5], 0))), rtol=1e-6)


def test_module_list():
    blocks = nn.ModuleList([Block(), Block()])
    blocks.append(Block())
    assert len(blocks) == 3 and len(list(blocks.parameters())) == 3
    assert [n for n, _ in blocks.named_parameters()] == ["0.scale", "1.scale", "2.scale"]


def test_repr_like_torch():
    net = nn.Sequential(nn.Flatten(), nn.ReLU(), nn.GELU(approximate="tanh"),
                        nn.Sequential(nn.Tanh()))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Flatten(start_dim=1, end_dim=-1)\n"
        "  (1): ReLU()\n"
        "  (2): GELU(approximate='tanh')\n"
        "  (3): Sequential(\n"
        "    (0): Tanh()\n"
        "  )\n"
        ")")


def test_activations_match_ops():
    x = gradkit.tensor([[-2.0, 0.0, 1.5]], dtype=gradkit.float64)
    np.testing.assert_allclose(nn.GELU()(x).tolist(), gradkit.gelu(x).tolist())
    np.testing.assert_allclose(nn.Tanh()(x).tolist(), np.tanh([[-2.0, 0.0, 1.5]]))
    assert nn.Flatten(0)(gradkit.zeros(2, 3, 4)).shape == (24,)
    layer = nn.GELU("fast")  # torch's checks the argument when called
    with pytest.raises(RuntimeError, match=r"^approximate argument must be either none or tanh\.$"):
        layer(x)


# -- init --------------------------------------------------------------------------------

def test_calculate_gain_matches_torch():
    torch = pytest.importorskip("torch")
    for name, param in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None),
                        ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
                        ("leaky_relu", math.sqrt(5)), ("selu", None)]:
        assert init.calculate_gain(name, param) == pytest.approx(
            torch.nn.init.calculate_gain(name, param))
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope fast not a valid number"):
        init.calculate_gain("leaky_relu", "fast")


def test_fan_in_fan_out():
    assert init._calculate_fan_in_and_fan_out(gradkit.empty(8, 3, 5, 5)) == (75, 200)
    assert init._calculate_fan_in_and_fan_out(gradkit.empty(4, 6)) == (6, 4)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(gradkit.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(gradkit.empty(3, 3), mode="fan_avg")


_INIT_DISTRIBUTIONS = [
    (lambda w: init.uniform_(w, -0.5, 0.5), -0.5, 0.5, 1 / math.sqrt(12)),
    (lambda w: init.kaiming_uniform_(w, a=math.sqrt(5)), -1 / math.sqrt(200),
     1 / math.sqrt(200), 1 / math.sqrt(600)),
    (lambda w: init.kaiming_normal_(w, nonlinearity="relu"), None, None, math.sqrt(2 / 200)),
    (lambda w: init.xavier_uniform_(w), -math.sqrt(6 / 600), math.sqrt(6 / 600),
     math.sqrt(2 / 600)),
    (lambda w: init.xavier_normal_(w, gain=2.0), None, None, 2 * math.sqrt(2 / 600)),
    (lambda w: init.normal_(w, 1.0, 0.1), None, None, 0.1),
    (lambda w: init.trunc_normal_(w, std=1.0, a=-1.0, b=1.0), -1.0, 1.0, 0.5376),
]


@pytest.mark.parametrize("fill,low,high,std", _INIT_DISTRIBUTIONS)
def test_init_distributions(fill, low, high, std):
    w = gradkit.empty(400, 200, dtype=gradkit.float64, requires_grad=True)
    assert fill(w) is w
    values = w.detach().numpy()
    # trunc_normal_ copies its redraws in: one bump more, as torch
    versions = 2 if fill is _INIT_DISTRIBUTIONS[-1][0] else 1
    assert w.requires_grad and w.is_leaf and w._version == versions
    if low is not None:
        assert values.min() >= low and values.max() <= high
    assert values.std() == pytest.approx(std, rel=0.02)


def test_constant_inits_and_orthogonal():
    w = gradkit.empty(3, 5, requires_grad=True)
    assert init.ones_(w).tolist() == [[1.0] * 5] * 3
    assert init.zeros_(w).tolist() == [[0.0] * 5] * 3
    assert init.constant_(w, 2.5).tolist() == [[2.5] * 5] * 3
    np.testing.assert_array_equal(init.eye_(w).detach().numpy(), np.eye(3, 5))
    q = init.orthogonal_(gradkit.empty(3, 5, dtype=gradkit.float64)).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-12)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(gradkit.empty(2, 2, 2))
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        init.orthogonal_(gradkit.empty(3))


def test_init_follows_manual_seed():
    gradkit.manual_seed(3)
    a = init.normal_(gradkit.empty(5)).tolist()
    gradkit.manual_seed(3)
    assert init.normal_(gradkit.empty(5)).tolist() == a


# -- layers ------------------------------------------------------------------------------

def _layer_pairs(torch):
    """(gradkit layer, torch layer, input shape, integer input?) built with the same arguments."""
    def both(name, *args, **kwargs):
        return getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    return [
        (*both("Linear", 5, 3), (4, 5), False),
        (*both("Linear", 5, 3, bias=False), (2, 4, 5), False),
        (*both("Conv2d", 2, 4, 3), (2, 2, 7, 7), False),
        (*both("Conv2d", 2, 4, (3, 2), stride=2, padding=1, bias=False), (1, 2, 8, 8), False),
        (*both("Conv2d", 4, 4, 3, padding=2, dilation=2, groups=2), (1, 4, 6, 6), False),
        (*both("Embedding", 10, 3), (2, 5), True),
        (*both("Embedding", 10, 3, padding_idx=1), (2, 5), True),
        (*both("LayerNorm", 6), (3, 6), False),
        (*both("LayerNorm", (2, 3), eps=1e-3), (4, 2, 3), False),
        (*both("LayerNorm", 6, elementwise_affine=False), (3, 6), False),
        (*both("MaxPool2d", 2), (1, 2, 6, 6), False),
        (*both("Dropout", 0.3), (4, 4), False),
        (*both("ReLU"), (3, 3), False),
        (*both("GELU", approximate="tanh"), (3, 3), False),
        (*both("Flatten"), (2, 3, 4), False),
    ]


def test_layers_match_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs, shape, integer in _layer_pairs(torch):
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        ours.double().load_state_dict(
            {k: gradkit.tensor(v.double().numpy()) for k, v in theirs.state_dict().items()})
        theirs.double().eval()
        ours.eval()
        data = rng_data(shape, integer)
        x = gradkit.tensor(data, requires_grad=not integer)
        tx = torch.tensor(data, requires_grad=not integer)
        out, tout = ours(x), theirs(tx)
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=repr(ours))
        weights = np.random.default_rng(1).standard_normal(tuple(out.shape))
        (out * gradkit.tensor(weights)).sum().backward()
        (tout * torch.tensor(weights)).sum().backward()
        grads = [(p.grad, tp.grad) for p, tp in zip(ours.parameters(), theirs.parameters(),
                                                     strict=True)]
        if not integer:
            grads.append((x.grad, tx.grad))
        for g, tg in grads:
            np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=repr(ours))


def rng_data(shape, integer):
    rng = np.random.default_rng(0)
    return rng.integers(0, 10, shape) if integer else rng.standard_normal(shape)


@pytest.mark.parametrize("make,fan_in", [
    (lambda: nn.Linear(50, 400), 50),
    (lambda: nn.Conv2d(3, 200, 5), 75),
])
def test_default_init_bounds(make, fan_in):
    # kaiming_uniform_(a=√5) and the bias both give U(±1/√fan_in), as in torch
    layer = make()
    bound = 1 / math.sqrt(fan_in)
    for values in (layer.weight.detach().numpy(), layer.bias.detach().numpy()):
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.9 * bound  # and actually spreads to the bound
    assert layer.weight.detach().numpy().std() == pytest.approx(bound / math.sqrt(3), rel=0.05)


def test_embedding_and_layer_norm_init():
    emb = nn.Embedding(300, 40, padding_idx=-1)
    assert emb.padding_idx == 299 and emb.weight[299].tolist() == [0.0] * 40
    assert emb.weight.detach().numpy()[:299].std() == pytest.approx(1.0, rel=0.05)
    norm = nn.LayerNorm(3)
    assert norm.weight.tolist() == [1.0] * 3 and norm.bias.tolist() == [0.0] * 3
    assert nn.LayerNorm(3, bias=False).bias is None


def test_dropout_train_and_eval():
    drop = nn.Dropout(0.5)
    x = gradkit.ones(1000)
    kept = drop(x).numpy()
    assert set(np.unique(kept)) == {0.0, 2.0} and 400 < (kept == 0).sum() < 600
    drop.eval()
    assert drop(x).tolist() == x.tolist()


def test_layer_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode must be one of .*, but got "
                                         "padding_mode='reflection'"):
        nn.Conv2d(1, 1, 3, padding_mode="reflection")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for '
                                         "ConvTranspose2d"):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        nn.Dropout(1.5)


def test_training_a_model_with_modules_and_optimizer_matches_torch():
    torch = pytest.importorskip("torch")

    def build(lib):
        return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.LayerNorm(8),
                                 lib.nn.Linear(8, 3))

    ours, theirs = build(gradkit).double(), build(torch).double()
    ours.load_state_dict({k: gradkit.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    data = np.random.default_rng(0).standard_normal((16, 4))
    labels = np.arange(16) % 3
    opt = gradkit.optim.AdamW(ours.parameters(), lr=0.01)
    topt = torch.optim.AdamW(theirs.parameters(), lr=0.01)
    for _ in range(5):
        opt.zero_grad()
        topt.zero_grad()
        loss = nn.functional.cross_entropy(ours(gradkit.tensor(data)), gradkit.tensor(labels))
        tloss = torch.nn.functional.cross_entropy(theirs(torch.tensor(data)),
                                                  torch.tensor(labels))
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-10)
    for (name, p), tp in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-9,
                                   err_msg=name)


def test_deepcopy_and_pickle_keep_parameters():
    import copy
    import pickle
    model = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    for clone in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert repr(clone) == repr(model)
        for (name, p), q in zip(model.named_parameters(), clone.parameters(), strict=True):
            assert isinstance(q, nn.Parameter) and q.requires_grad, name
            assert q is not p and q.tolist() == p.tolist(), name


def test_to_dtype_leaves_integer_buffers():
    block = Block()
    block.register_buffer("steps", gradkit.zeros(1, dtype=gradkit.int64))
    block.to(gradkit.float64)
    assert block.scale.dtype == gradkit.float64 and block.steps.dtype == gradkit.int64


@pytest.mark.parametrize("name,kwargs,target_kind", [
    ("MSELoss", {}, "float"),
    ("MSELoss", {"reduction": "sum"}, "float"),
    ("CrossEntropyLoss", {}, "class"),
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "ignore_index": 2}, "class"),
    ("CrossEntropyLoss", {"weight": [1.0, 2.0, 0.5, 1.0]}, "class"),
    ("NLLLoss", {"reduction": "none"}, "class"),
    ("BCEWithLogitsLoss", {"pos_weight": [2.0, 1.0, 1.0, 0.5]}, "binary"),
])
def test_loss_modules_match_torch(name, kwargs, target_kind):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((5, 4))
    target = {"float": rng.standard_normal((5, 4)), "class": rng.integers(0, 4, 5),
              "binary": rng.integers(0, 2, (5, 4)).astype(float)}[target_kind]
    ours = getattr(nn, name)(**{k: gradkit.tensor(v, dtype=gradkit.float64)
                                if isinstance(v, list) else v for k, v in kwargs.items()})
    theirs = getattr(torch.nn, name)(**{k: torch.tensor(v, dtype=torch.float64)
                                        if isinstance(v, list) else v
                                        for k, v in kwargs.items()})
    assert repr(ours) == repr(theirs)
    x, tx = gradkit.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    ours(x, gradkit.tensor(target)).sum().backward()
    theirs(tx, torch.tensor(target)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    bad = getattr(nn, name)(reduction="mean_all")  # as torch's: kept until called
    with pytest.raises(ValueError, match="mean_all is not a valid value for reduction"):
        bad(x, gradkit.tensor(target))


# -- PyTorch's introductory nn/optim programs, unchanged but for the import ----------------

def _fit_sine(torch, make_model, make_step, steps=300):
    """The 'fit sin(x) with a cubic' program of PyTorch's tutorials, as users write it."""
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = make_model(torch)
    loss_fn = torch.nn.MSELoss(reduction="sum")
    step = make_step(torch, model)
    losses = []
    for _ in range(steps):
        loss = loss_fn(model(xx), y)
        losses.append(loss.item())
        step(loss)
    return losses


def _sequential(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))


def _manual_step(torch, model):
    def step(loss):
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= 1e-6 * param.grad
    return step


def _rmsprop_step(torch, model):
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)

    def step(loss):
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return step


@pytest.mark.parametrize("make_step", [_manual_step, _rmsprop_step])
def test_tutorial_sine_fit_runs_with_gradkit_as_torch(make_step):
    losses = _fit_sine(gradkit, _sequential, make_step)
    assert losses[-1] < 0.5 * losses[0]
    assert all(np.isfinite(losses))


def test_tutorial_custom_module():
    import gradkit as torch

    class Polynomial3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(torch.randn(()))
            self.b = torch.nn.Parameter(torch.randn(()))
            self.c = torch.nn.Parameter(torch.randn(()))
            self.d = torch.nn.Parameter(torch.randn(()))

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    model = Polynomial3()
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    first = None
    for _ in range(500):
        loss = criterion(model(x), y)
        first = loss.item() if first is None else first
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.2 * first
    assert [n for n, _ in model.named_parameters()] == ["a", "b", "c", "d"]


@pytest.mark.parametrize("module", [
    "gradkit.nn.module", "gradkit.nn.parameter", "gradkit.nn.init", "gradkit.nn.container",
    "gradkit.nn.layers", "gradkit.nn.loss", "gradkit.optim.sgd", "gradkit.optim.adam",
    "gradkit.optim.rmsprop"])
def test_docstring_examples(module):
    import doctest
    import importlib
    result = doctest.testmod(importlib.import_module(module),
                             extraglobs={"gradkit": gradkit, "nn": nn, "math": math})
    assert result.attempted > 0 and result.failed == 0


# -- on a (stand-in) GPU -------------------------------------------------------------------

@pytest.mark.parametrize("opt_name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_training_on_a_cuda_device(monkeypatch, opt_name):
    import strict_xp
    strict_xp.install(monkeypatch)
    gradkit.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))
    weight = model[0].weight
    model.to("cuda")
    assert model[0].weight is weight and weight.device.type == "cuda"
    init.kaiming_normal_(model[3].weight)  # init writes host samples into the device array
    optimizer = getattr(gradkit.optim, opt_name)(model.parameters(), lr=0.01, momentum=0.9) \
        if opt_name in ("SGD", "RMSprop") else getattr(gradkit.optim, opt_name)(
            model.parameters(), lr=0.01)
    x = gradkit.randn(16, 4, device="cuda")
    labels = gradkit.randint(0, 3, (16,), device="cuda")
    losses = []
    for _ in range(20):
        loss = nn.functional.cross_entropy(model(x), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    for state in optimizer.state.values():
        for key, value in state.items():
            if key != "step":
                assert value.device.type == "cuda", key
    assert all(p.device.type == "cuda" for p in model.parameters())
    assert all(v.device.type == "cuda" for v in model.state_dict().values())
    built_there = nn.Conv2d(1, 2, 3, device="cuda")
    assert built_there.weight.device.type == "cuda" and built_there.bias.device.type == "cuda"
