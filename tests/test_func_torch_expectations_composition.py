"""torch's functorch tests of how the transforms compose with each other and with the rest
of autograd (test/functorch/test_eager_transforms.py: TestComposability, the functional_call
cases of TestMakeFunctional, TestExamplesCorrectness), re-checked on gradkit.func against
torch 2.13."""
import pytest
from torch_expectations.functions import mul2
from torch_expectations.twin import leaf, like_torch, plain, raises_like_torch

TRANSFORMS = ["vmap", "grad", "jacrev", "jacfwd", "grad_and_value", "hessian", "vjp", "jvp"]


def transformed(lib, transform: str, func, x):
    """``func`` under ``transform`` at ``x`` (vjp and jvp called with their own arguments)."""
    f = lib.func
    if transform == "vjp":
        return f.vjp(func, x)
    if transform == "jvp":
        return f.jvp(func, (x,), (lib.ones_like(x),))
    return getattr(f, transform)(func)(x)


def test_every_pair_of_transforms_composes():
    # test_grad_grad, test_grad_vmap, test_grad_vjp, test_vmap_grad, test_vmap_vmap,
    # test_vmap_vjp, test_vjp_grad, test_vjp_vmap, test_vjp_vjp
    def program(lib):
        f, x, s, v = lib.func, plain(lib, 3), plain(lib, seed=1), plain(lib, seed=2)
        xs = plain(lib, 5, 3, seed=3)
        _, sin_vjp = f.vjp(lib.sin, x)

        def vjp_at_itself(t):
            return f.vjp(lib.sin, t)[1](t)
        grad_vjp_out, grad_vjp_fn = f.vjp(f.grad(lib.sin), s)
        vmap_vjp_out, vmap_vjp_fn = f.vjp(f.vmap(lib.sin), x)
        y, vjp_vjp_fn = f.vjp(lambda t: sin_vjp(t)[0], x)
        return (f.grad(f.grad(lib.sin))(s), f.grad(lambda t: f.vmap(lib.sin)(t).sum())(x),
                f.grad(lambda t: vjp_at_itself(t)[0].sum())(x),
                f.grad(lambda t: (t * t.cos()).sum())(x), f.vmap(f.grad(lib.sin))(x),
                f.vmap(f.vmap(lib.sin))(xs), f.vmap(vjp_at_itself)(x), sin_vjp(x),
                f.vmap(lambda t: sin_vjp(t)[0])(xs), grad_vjp_out, grad_vjp_fn(v),
                vmap_vjp_out, vmap_vjp_fn(x), y, vjp_vjp_fn(x))
    like_torch(program)


@pytest.mark.parametrize("transform", ["vmap", "grad", "vmap_grad", "grad_grad"])
def test_requires_grad_inside_a_transform_is_refused(transform):
    # test_requires_grad_inside_transform
    def f(x):
        x.requires_grad_()
        return x.sin().sum()

    def program(lib):
        fn = {"vmap": lib.func.vmap(f), "grad": lib.func.grad(f),
              "vmap_grad": lib.func.vmap(lib.func.grad(f)),
              "grad_grad": lib.func.grad(lib.func.grad(f))}[transform]
        fn(plain(lib) if transform == "grad_grad" else plain(lib, 3))
    raises_like_torch(program, RuntimeError, r"Tensor.requires_grad_\(\)")


@pytest.mark.parametrize("transform", ["vmap", "grad"])
@pytest.mark.parametrize("form", ["false", "fresh_tensor"])
def test_requires_grad_inside_a_transform_is_refused_in_every_form(transform, form):
    # requires_grad_(False), and on a tensor made inside the function, refused as well
    def f(x):
        if form == "false":
            x.requires_grad_(False)
        else:
            x = x * x.new_ones(3).requires_grad_()
        return x.sin().sum()
    raises_like_torch(lambda lib: getattr(lib.func, transform)(f)(plain(lib, 3)), RuntimeError,
                      r"Tensor.requires_grad_\(\)")


@pytest.mark.parametrize("transform", ["vmap", "grad"])
@pytest.mark.parametrize("form", ["factory", "setter"])
def test_requires_grad_without_requires_grad_inside_a_transform_runs(transform, form):
    # a factory's requires_grad=True and the attribute's setter do not call requires_grad_()
    def f(lib, x):
        if form == "factory":
            x = x * lib.ones(3, requires_grad=True, dtype=lib.float64)
        else:
            x.requires_grad = True
        return x.sin().sum()
    like_torch(lambda lib: getattr(lib.func, transform)(lambda x: f(lib, x))(plain(lib, 3)))


@pytest.mark.parametrize("transform", ["grad", "vjp"])
def test_retain_grad_inside_a_transform_is_refused(transform):
    # test_retain_grad_inside_transform
    def f(x):
        y = x.sin()
        y.retain_grad()
        return y.sum()
    raises_like_torch(lambda lib: transformed(lib, transform, f, plain(lib, 3)), RuntimeError,
                      r"Tensor.retain_grad\(\)")


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_backward_inside_a_transform_is_refused(transform):
    def program(lib):
        def f(x):
            z = lib.ones(3, requires_grad=True)
            (z * 2).sum().backward()
            return (x * 1).sum()
        transformed(lib, transform, f, plain(lib, 3))
    raises_like_torch(program, RuntimeError, r"backward\(\) called inside a functorch transform")


@pytest.mark.parametrize("api", ["jacobian", "vjp", "jvp", "hessian", "hvp"])
@pytest.mark.parametrize("transform", ["vmap", "grad", "jvp"])
def test_autograd_functional_inside_a_transform_is_refused(api, transform):
    # test_autograd_functional_{jacrev,vjp,jvp}_inside_transform
    def program(lib):
        functional = lib.autograd.functional
        inner = lambda t: t.sin().sum()  # noqa: E731
        call = {"jacobian": lambda x: functional.jacobian(inner, x),
                "vjp": lambda x: functional.vjp(inner, x)[1],
                "jvp": lambda x: functional.jvp(inner, (x,), (lib.ones_like(x),))[1],
                "hessian": lambda x: functional.hessian(inner, x),
                "hvp": lambda x: functional.hvp(inner, x, lib.ones_like(x))[1]}[api]
        if transform == "vmap":
            lib.func.vmap(call)(plain(lib, 5, 3))
        elif transform == "grad":
            lib.func.grad(lambda x: call(x).sum())(plain(lib))
        else:
            lib.func.jvp(call, (plain(lib, 3),), (plain(lib, 3, seed=1),))
    raises_like_torch(program, RuntimeError, r"torch.autograd.functional")


@pytest.mark.parametrize("transform", TRANSFORMS + ["functionalize"])
def test_a_function_without_setup_context_is_refused_by_every_transform(transform):
    # test_autograd_function_no_setup_context
    def program(lib):
        class MySin(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.sin()

            @staticmethod
            def backward(ctx, gy):
                (x,) = ctx.saved_tensors
                return gy * x.cos()
        scalar = transform in ("grad", "grad_and_value")
        x = plain(lib) if scalar else plain(lib, 3)
        if transform == "functionalize":
            return lib.func.functionalize(MySin.apply)(x)
        return transformed(lib, transform, MySin.apply, x)
    raises_like_torch(program, RuntimeError, "must override the setup_context")


def test_a_function_without_setup_context_still_works_outside_transforms():
    def program(lib):
        x = leaf(lib, 3)
        return lib.autograd.grad(mul2(lib, custom=True)(x).sum(), x)
    like_torch(program)


@pytest.mark.parametrize("transform", ["grad", "jacrev", "grad_and_value", "hessian", "vjp"])
@pytest.mark.parametrize("where", ["outside", "inside"])
def test_reverse_transforms_refuse_saved_tensor_hooks(transform, where):
    # test_transforms_dont_support_saved_tensor_hooks, test_vjp_doesnt_support_saved_tensor_hooks
    def program(lib):
        def f(x):
            return lib.sin(x).sum()

        def g(x):
            with lib.autograd.graph.save_on_cpu():
                return f(x)
        x = plain(lib, 3)
        if where == "outside":
            with lib.autograd.graph.save_on_cpu():
                transformed(lib, transform, f, x)
        else:
            transformed(lib, transform, g, x)
    raises_like_torch(program, RuntimeError, "saved tensor hooks")


@pytest.mark.parametrize("transform", ["jvp", "jacfwd", "vmap"])
def test_forward_transforms_and_vmap_accept_saved_tensor_hooks(transform):
    # test_jvp_supports_saved_tensor_hooks
    def program(lib):
        def f(x):
            return lib.sin(x).sum() if transform != "jacfwd" else lib.sin(x)

        def g(x):
            with lib.autograd.graph.save_on_cpu():
                return f(x)
        x = plain(lib, 3)
        with lib.autograd.graph.save_on_cpu():
            outside = transformed(lib, transform, f, x)
        return outside, transformed(lib, transform, g, x)
    like_torch(program)


def _set_weights(lib, module):
    """The same float64 weights in both libraries' modules."""
    module.double()
    with lib.no_grad():
        for seed, p in enumerate(module.parameters()):
            p.copy_(0.3 * plain(lib, *p.shape, seed=seed))
    return module


@pytest.mark.parametrize("detach_params", [True, False])
def test_functional_call_with_detached_parameters_has_no_graph(detach_params):
    # TestMakeFunctional.test_using_detach_functional_call,
    # test_make_functional_state_correctly_returned_after_forward (functional_call)
    def program(lib):
        nn = lib.nn
        mod = _set_weights(lib, nn.Linear(3, 3))
        mod.register_buffer("buffer", plain(lib, 3, seed=9))
        params = {k: v.detach() if detach_params else v for k, v in mod.named_parameters()}
        weight, bias = mod.weight, mod.bias
        out = lib.func.functional_call(mod, (params, dict(mod.named_buffers())),
                                       plain(lib, 3, 3, seed=10) + mod.buffer)
        return out, out.grad_fn is None, mod.weight is weight and mod.bias is bias
    assert like_torch(program)[1:] == (detach_params, True)


def test_functional_call_of_a_small_convnet_matches_the_module():
    # TestMakeFunctional.test_correctness_mnist (functional_call; smaller, float64, eval)
    def program(lib):
        nn = lib.nn
        net = _set_weights(lib, nn.Sequential(
            nn.Conv2d(1, 3, 3), nn.MaxPool2d(2), nn.ReLU(), nn.Dropout2d(), nn.Flatten(),
            nn.Linear(12, 5), nn.LogSoftmax(dim=-1))).eval()
        x = plain(lib, 2, 1, 6, 6, seed=11)
        return lib.func.functional_call(net, dict(net.named_parameters()), (x,)), net(x)
    result = like_torch(program)
    assert result[0].allclose(result[1])


def test_stack_module_state_gives_stacked_leaves():
    # TestMakeFunctional.test_stack_module_state_smoke, test_stack_module_state_leaf
    def program(lib):
        models = [_set_weights(lib, lib.nn.Linear(2, 2)) for _ in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        return params, buffers, [(p.requires_grad, p.is_leaf) for p in params.values()]
    like_torch(program)


@pytest.mark.parametrize("case, match", [
    ("none", "stack_module_state:.* Expected at least one model"),
    ("eval", "stack_module_state:.* same training/eval mode."),
    ("class", "stack_module_state:.* models to be of the same class"),
    ("requires_grad", "same .requires_grad")])
def test_stack_module_state_errors(case, match):
    # TestMakeFunctional.test_stack_module_state_error, test_stack_module_state_mismatch_error
    def program(lib):
        models = [] if case == "none" else [lib.nn.Linear(2, 2) for _ in range(3)]
        if case == "eval":
            models[1].eval()
        elif case == "class":
            models[1] = lib.nn.Conv2d(3, 3, (3, 3))
        elif case == "requires_grad":
            models[0].weight.requires_grad_(False)
        lib.func.stack_module_state(models)
    raises_like_torch(program, RuntimeError, match)


def same_both_ways(program) -> None:
    """``program`` returns (by transforms, by plain autograd): alike in torch, and each other."""
    for got, expected in zip(*like_torch(program), strict=True):
        assert got.allclose(expected)


def inner_step(lib, use_transform: bool, loss, params: dict, *data, lr: float = 0.1) -> dict:
    """One MAML inner step, ``params - lr * d loss / d params``, by ``grad`` or by plain
    ``autograd.grad`` (with a graph, for the outer gradient)."""
    if use_transform:
        grads = lib.func.grad(loss)(params, *data)
    else:
        grads = dict(zip(params, lib.autograd.grad(loss(params, *data), list(params.values()),
                                                   create_graph=True)))
    return {k: params[k] - lr * grads[k] for k in params}


def _mlp(lib, sizes, act="ReLU"):
    nn, layers = lib.nn, []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers += [nn.Linear(a, b)] + ([getattr(nn, act)()] if i < len(sizes) - 2 else [])
    return _set_weights(lib, nn.Sequential(*layers))


def test_maml_regression_by_vmap_of_grad():
    # TestExamplesCorrectness.test_maml_regression (functional_call; float64, smaller net)
    def program(lib):
        f, net = lib.func, _mlp(lib, [1, 8, 8, 1])
        params = dict(net.named_parameters())

        def mse(x, y):
            return ((x - y) ** 2).mean()

        def task_loss(use_transform, x1, y1, x2, y2):
            def inner(params, x, y):
                return mse(f.functional_call(net, params, (x,)), y)
            new = inner_step(lib, use_transform, inner, params, x1, y1)
            return mse(f.functional_call(net, new, (x2,)), y2)
        task = [plain(lib, 3, 5, 1, seed=k) for k in range(4)]
        losses = f.vmap(lambda *t: task_loss(True, *t))(*task)
        looped = [task_loss(False, *(t[i] for t in task)) for i in range(3)]
        return (lib.autograd.grad(losses.sum(), list(params.values())),
                lib.autograd.grad(sum(looped), list(params.values())))
    same_both_ways(program)


def test_maml_with_buffers_and_group_norm():
    # TestExamplesCorrectness.test_maml_omniglot (functional_call with buffers; smaller)
    def program(lib):
        nn, f = lib.nn, lib.func
        net = _set_weights(lib, nn.Sequential(
            nn.Conv2d(1, 4, 3), nn.GroupNorm(2, 4), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(),
            nn.Linear(64, 3)))
        params, buffers = dict(net.named_parameters()), dict(net.named_buffers())

        def loss_for_task(use_transform, x_spt, y_spt, x_qry, y_qry):
            def compute_loss(p, x, y):
                return nn.functional.cross_entropy(f.functional_call(net, (p, buffers), (x,)), y)
            new = params
            for _ in range(2):
                new = inner_step(lib, use_transform, compute_loss, new, x_spt, y_spt)
            return compute_loss(new, x_qry, y_qry)
        x_spt, x_qry = plain(lib, 2, 4, 1, 10, 10), plain(lib, 2, 6, 1, 10, 10, seed=1)
        y_spt, y_qry = lib.tensor([[0, 1, 2, 0]] * 2), lib.tensor([[2, 1, 0, 0, 1, 2]] * 2)
        losses = f.vmap(lambda *t: loss_for_task(True, *t))(x_spt, y_spt, x_qry, y_qry)
        looped = [loss_for_task(False, x_spt[i], y_spt[i], x_qry[i], y_qry[i]) for i in range(2)]
        return (lib.autograd.grad(losses.sum(), list(params.values())),
                lib.autograd.grad(sum(looped), list(params.values())))
    same_both_ways(program)


@pytest.mark.parametrize("track_running_stats", [True, False])
def test_per_sample_grads_through_batch_norm_after_replace_all_batch_norm_modules(
        track_running_stats):
    # TestExamplesCorrectness.test_update_batch_norm (functional_call; smaller)
    def program(lib):
        nn, f = lib.nn, lib.func
        net = _set_weights(lib, nn.Sequential(
            nn.Conv2d(2, 2, 3), nn.BatchNorm2d(2, track_running_stats=track_running_stats),
            nn.ReLU(), nn.Flatten(), nn.Linear(18, 3)))
        f.replace_all_batch_norm_modules_(net)
        params, buffers = dict(net.named_parameters()), dict(net.named_buffers())

        def compute_loss(x, y, params, buffers):
            return nn.functional.cross_entropy(f.functional_call(net, (params, buffers), (x,)), y)
        x, y = plain(lib, 2, 1, 2, 5, 5), lib.tensor([[1], [2]])
        per_sample = f.vmap(f.grad(compute_loss, argnums=2), in_dims=(0, 0, None, None))(
            x, y, params, buffers)
        looped = [lib.autograd.grad(compute_loss(x[i], y[i], params, buffers),
                                    list(params.values())) for i in range(2)]
        return per_sample, {k: lib.stack(shards) for k, shards in zip(params, zip(*looped))}
    result = like_torch(program)
    for k in result[0]:
        assert result[0][k].allclose(result[1][k])


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev"])
def test_lennard_jones_forces_by_vmap_of_jacobian(jac):
    # TestExamplesCorrectness.test_lennard_jones_batched_jac (float64, fewer points)
    def program(lib):
        sigma, epsilon = 0.5, 4.0
        r = lib.linspace(0.5, 2 * sigma, steps=12, dtype=lib.float64)
        drs = lib.outer(r, lib.tensor([1.0, 0, 0], dtype=lib.float64))
        norms = lib.norm(drs, dim=1).reshape(-1, 1)
        energies = epsilon * ((sigma / norms) ** 12 - (sigma / norms) ** 6)
        forces = -epsilon * ((-12 * sigma ** 12 / norms ** 13) + (6 * sigma ** 6 / norms ** 7))
        forces = forces * drs
        model = _mlp(lib, [1, 6, 6, 1], act="Tanh")
        F = lib.nn.functional

        def loss(use_transform):
            predicted = model(norms)
            if use_transform:
                derivs = lib.func.vmap(getattr(lib.func, jac)(model))(norms).squeeze(-1)
                predicted_forces = -derivs * drs / norms
            else:
                predicted_forces = lib.cat([
                    -lib.autograd.functional.jacobian(model, n, create_graph=True) * dr / n
                    for n, dr in zip(norms, drs)])
            return F.mse_loss(energies, predicted) + 0.01 * F.mse_loss(forces,
                                                                       predicted_forces) / 3
        return (lib.autograd.grad(loss(True), list(model.parameters())),
                lib.autograd.grad(loss(False), list(model.parameters())))
    same_both_ways(program)


def test_ensemble_training_step_by_vmap_of_grad_and_value():
    # TestExamplesCorrectness.test_ensemble_regression (functional_call + stack_module_state)
    def program(lib):
        f, nn = lib.func, lib.nn
        models = [_mlp(lib, [2, 6, 2]) for _ in range(2)]
        with lib.no_grad():
            models[1][0].weight.mul_(-1)
        reference = models[0]
        points, labels = plain(lib, 20, 2, seed=5), lib.tensor([0, 1] * 10)

        def step(use_transform, weights, batch, targets, lr=0.2):
            def compute_loss(weights, batch, targets):
                out = f.functional_call(reference, weights, (batch,)).log_softmax(-1)
                return nn.functional.nll_loss(out, targets)
            if use_transform:
                grads, loss = f.grad_and_value(compute_loss)(weights, batch, targets)
            else:
                loss = compute_loss(weights, batch, targets)
                grads = dict(zip(weights, lib.autograd.grad(loss, list(weights.values()))))
            return loss, {k: weights[k] - lr * grads[k] for k in weights}
        batched = f.stack_module_state(models)[0]
        loss, weights = f.vmap(lambda w, b, t: step(True, w, b, t), in_dims=(0, None, None))(
            batched, points, labels)
        singles = [step(False, {k: v[i].detach().requires_grad_() for k, v in batched.items()},
                        points, labels) for i in range(2)]
        return (loss, weights, lib.stack([s[0] for s in singles]),
                {k: lib.stack([s[1][k] for s in singles]) for k in weights})
    result = like_torch(program)
    assert result[0].allclose(result[2])


@pytest.mark.parametrize("dropout", ["Dropout", "AlphaDropout", "FeatureAlphaDropout"])
def test_same_randomness_gives_every_ensemble_member_the_same_dropout(dropout):
    # TestExamplesCorrectness.test_find_learning_rate_ensembling (functional_call): the
    # draws are each library's own, so only their agreement across the batch is compared
    def program(lib):
        f, nn = lib.func, lib.nn
        model = nn.Sequential(getattr(nn, dropout)(), nn.Flatten(), nn.Linear(16, 8), nn.ReLU(),
                              nn.Linear(8, 2), nn.LogSoftmax(-1))
        _set_weights(lib, model)
        points, labels = plain(lib, 10, 2, 2, 2, 2), lib.tensor([0, 1] * 5)

        def train_step(weights, batch, targets, lr):
            def compute_loss(weights, batch, targets):
                out = f.functional_call(model, weights, (batch,))
                return nn.functional.nll_loss(out, targets)
            grads, loss = f.grad_and_value(compute_loss)(weights, batch, targets)
            return (loss, *[weights[k] - lr * grads[k] for k in weights])
        batched = f.stack_module_state([model, model])[0]
        loss, *weights = f.vmap(train_step, in_dims=(0, None, None, 0), randomness="same")(
            batched, points, labels, lib.tensor([0.2, 0.4], dtype=lib.float64))
        return bool(loss[0] == loss[1]), all(bool((w[0] == w[1]).all()) for w in weights)
    assert like_torch(program) == (True, False)


def _functionalize_cases(lib):
    """TestFunctionalize's programs: (function, input, also under vmap)."""
    def simple_view(x):
        x.view(4, 2).add_(lib.ones(2))
        return x

    def multioutput_view(x):
        y1, _ = x.split(2)
        y1.diagonal().add_(lib.ones(2))
        return x

    def inplace_view(x):
        y = x + x
        y.transpose(1, 0)[0].add_(lib.ones(4))
        return y

    def inplace_slice_view(x):
        z1 = x.view(8).reshape(2, 4).transpose(1, 0)
        z1.unsqueeze_(0)
        z1.squeeze_()
        z1.split(2)[0].add_(lib.ones(2, 2))
        return x

    def regenerated(x):
        base = x.clone()
        outs = base.split(2)
        base.add_(1)
        return tuple(o.clone() for o in outs)
    zeros = lib.zeros(4, 2)
    return [(simple_view, zeros, True), (multioutput_view, zeros, True),
            (inplace_view, zeros, False), (inplace_slice_view, zeros, False),
            (regenerated, lib.arange(15.0).reshape(5, 3), False)]


def test_functionalize_gives_eager_results_and_mutations():
    # TestFunctionalize: test_simple_view, test_multioutput_view, test_inplace_view,
    # test_multioutput_inplace_slice_view, test_multioutput_view_regeneration_matches_eager
    # (its _check_functionalize_correctness: plain, under vmap, remove="mutations_and_views")
    def program(lib):
        f, results = lib.func, []
        for fn, inpt, with_vmap in _functionalize_cases(lib):
            plain_in, func_in, views_in = inpt.clone(), inpt.clone(), inpt.clone()
            results += [fn(plain_in), f.functionalize(fn)(func_in),
                        f.functionalize(fn, remove="mutations_and_views")(views_in),
                        plain_in, func_in, views_in]
            if with_vmap:
                vmapped_in = inpt.clone()
                results += [f.vmap(f.functionalize(fn))(vmapped_in.unsqueeze(0))[0].squeeze(),
                            vmapped_in]
        return results
    like_torch(program)


def test_functionalize_keeps_autograd_s_view_rules_and_composes():
    # test_multioutput_view_preserves_autograd_metadata, test_linear,
    # test_functionalize_opt_tensor_list, test_functionalize_grad, test_vmap_functionalize_jvp
    def mutate_unbound(lib):
        def f(x):
            base = x.clone()
            out = base.unbind(0)[0]
            base.add_(1)
            return out
        lib.func.functionalize(f)(lib.ones(2, 3, requires_grad=True)).mul_(2)
    raises_like_torch(mutate_unbound, RuntimeError,
                      "output of a function that returns multiple views")

    def program(lib):
        f = lib.func
        x, w, b = plain(lib, 14, 1, 38), plain(lib, 9, 38, seed=1), plain(lib, 9, seed=2)

        def viewed_sum(t):
            y = t + t
            z = y.view(4, 2)
            y.add_(lib.ones(2))
            return z.sum()

        def jvp_wrapper(x, t):
            def g(x):
                y = x + x
                z = y.view(-1)
                y.add_(1)
                return z
            return f.jvp(g, (x,), (t,))
        first, second = lib.ones(4, 2), lib.ones(4, 2)
        xs, ts = plain(lib, 2, 3, seed=3), plain(lib, 2, 3, seed=4)
        return (f.functionalize(lib.nn.functional.linear)(x, w, b),
                lib.nn.functional.linear(x, w, b),
                f.functionalize(lambda a, i: a[i])(lib.ones(4), lib.arange(2)),
                f.grad(viewed_sum)(first), f.grad(f.functionalize(viewed_sum))(second),
                first, second, f.vmap(jvp_wrapper)(xs, ts),
                f.vmap(f.functionalize(jvp_wrapper))(xs, ts))
    like_torch(program)


def test_transformed_functions_keep_their_name_and_functional_call_takes_several_dicts():
    # TestHigherOrderOperatorInteraction: test_grad_name_wrapping,
    # test_functional_call_multiple_dicts
    def program(lib):
        def my_fn(x):
            return x.sum()
        mod = lib.nn.Linear(1, 1)
        params = ({"weight": lib.zeros(1, 1)}, {"bias": lib.ones(1)})
        return (lib.func.grad(my_fn).__name__,
                lib.func.functional_call(mod, params, lib.ones(1, 1) * 3))
    assert like_torch(program)[0] == "my_fn"


def test_tolist_inside_grad():
    # TestGradTrackingTensorToList: test_tolist_with_grad, test_tolist_nested_grad,
    # test_tolist_multidimensional_grad, test_tolist_conj_neg_grad
    def program(lib):
        seen = []

        def f(x):
            seen.append(x.tolist())
            return (x ** 2).sum()

        def nested(x):
            seen.append(x.tolist())
            return lib.func.grad(f)(x).sum()

        def flat(x):
            seen.append(x.tolist())
            return x.sum()

        def complex_part(x):
            seen.append(x.conj().tolist())
            return (x * x.conj()).real.sum()
        v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        m = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        c = lib.tensor([1.0 + 2.0j, 3.0 + 4.0j], requires_grad=True)
        g = lib.func.grad
        return g(f)(v), g(nested)(v), g(flat)(m), g(complex_part)(c), seen
    like_torch(program)
