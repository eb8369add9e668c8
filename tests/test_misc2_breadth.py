"""torch's constants, torch.return_types, and the other breadth of lane misc2, against torch."""
import math
import pickle
import numpy as np
import warnings

import pytest

import gradkit

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _torchs_distribution_validation_kept():
    """torch.cond and torch.while_loop run through dynamo, which turns torch's distribution
    validation off for the whole process (torch 2.13): put it back, so later tests compare
    distributions with torch's default."""
    validating = torch.distributions.Distribution._validate_args
    yield
    torch.distributions.Distribution.set_default_validate_args(validating)


@pytest.mark.parametrize("name", ["pi", "e", "inf", "nan", "newaxis"])
def test_constants_are_torchs(name):
    ours, theirs = getattr(gradkit, name), getattr(torch, name)
    assert type(ours) is type(theirs)
    assert ours is None if theirs is None else (math.isnan(ours) if math.isnan(theirs)
                                                else ours == theirs)


def test_newaxis_indexes_as_none():
    x = gradkit.ones(2, 3)
    assert x[gradkit.newaxis, :, gradkit.newaxis].shape == torch.ones(2, 3)[
        torch.newaxis, :, torch.newaxis].shape


# each op returning a named tuple: the return type's name and fields are torch's
RETURNING = {
    "max": lambda t, x: t.max(x, 0), "min": lambda t, x: t.min(x, 1),
    "sort": lambda t, x: t.sort(x), "topk": lambda t, x: t.topk(x, 2),
    "kthvalue": lambda t, x: t.kthvalue(x, 1), "median": lambda t, x: t.median(x, 0),
    "nanmedian": lambda t, x: t.nanmedian(x, 0), "mode": lambda t, x: t.mode(x, 0),
    "aminmax": lambda t, x: t.aminmax(x), "cummax": lambda t, x: t.cummax(x, 0),
    "cummin": lambda t, x: t.cummin(x, 0), "frexp": lambda t, x: t.frexp(x),
    "geqrf": lambda t, x: t.geqrf(x), "histogram": lambda t, x: t.histogram(x.flatten()),
    "histogramdd": lambda t, x: t.histogramdd(x, bins=2),
    "slogdet": lambda t, x: t.slogdet(x), "slogdet_method": lambda t, x: x.slogdet(),
    "linalg_slogdet": lambda t, x: t.linalg.slogdet(x), "svd": lambda t, x: t.svd(x),
    "linalg_svd": lambda t, x: t.linalg.svd(x), "qr": lambda t, x: t.qr(x),
    "linalg_qr": lambda t, x: t.linalg.qr(x), "linalg_eig": lambda t, x: t.linalg.eig(x),
    "linalg_eigh": lambda t, x: t.linalg.eigh(x @ x.mT),
    "linalg_inv_ex": lambda t, x: t.linalg.inv_ex(x),
    "linalg_cholesky_ex": lambda t, x: t.linalg.cholesky_ex(x @ x.mT + t.eye(3)),
    "linalg_solve_ex": lambda t, x: t.linalg.solve_ex(x, x),
    "linalg_lu_factor": lambda t, x: t.linalg.lu_factor(x),
    "linalg_lu_factor_ex": lambda t, x: t.linalg.lu_factor_ex(x),
    "linalg_lu": lambda t, x: t.linalg.lu(x),
    "lu_unpack": lambda t, x: t.lu_unpack(*t.linalg.lu_factor(x)),
    "linalg_ldl_factor": lambda t, x: t.linalg.ldl_factor(x @ x.mT),
    "linalg_ldl_factor_ex": lambda t, x: t.linalg.ldl_factor_ex(x @ x.mT),
    "linalg_lstsq": lambda t, x: t.linalg.lstsq(x, x),
    "triangular_solve": lambda t, x: t.triangular_solve(x, x.triu()),
    "max_method": lambda t, x: x.max(dim=0), "sort_method": lambda t, x: x.sort(0),
}


def _run(lib, program):
    x = lib.tensor([[4., 1, 2], [1, 5, 3], [2, 0, 6]], dtype=lib.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.qr's and torch.svd's deprecation
        return program(lib, x)


@pytest.mark.parametrize("name", sorted(RETURNING))
def test_ops_return_torchs_return_types(name):
    ours, theirs = _run(gradkit, RETURNING[name]), _run(torch, RETURNING[name])
    assert type(ours).__name__ == type(theirs).__name__
    assert type(ours) is getattr(gradkit.return_types, type(theirs).__name__)
    assert type(ours).__module__ == "gradkit.return_types"
    fields = [f for f in dir(theirs) if f in ours._fields]
    assert sorted(ours._fields) == sorted(fields) and len(ours) == len(theirs)
    assert type(ours).n_fields == type(theirs).n_fields


def test_every_torch_return_type_exists():
    names = {n for n in dir(torch.return_types) if not n.startswith("_")
             and isinstance(getattr(torch.return_types, n), type)
             and issubclass(getattr(torch.return_types, n), tuple) and not n.endswith("_out")}
    assert names == set(gradkit.return_types.__all__)


def test_return_type_repr_construction_and_errors_as_torch():
    for lib in (gradkit, torch):
        made = lib.return_types.max((lib.tensor(1.0), lib.tensor(0)))
        assert made.values.item() == 1.0 and made[1].item() == 0
        assert lib.return_types.topk([1, 2]) == (1, 2)
    assert repr(gradkit.return_types.max((1, 2))) == repr(torch.return_types.max((1, 2))).replace(
        "torch.", "gradkit.")
    assert (repr(gradkit.max(gradkit.tensor([[1., 3.]]), 1))
            == repr(torch.max(torch.tensor([[1., 3.]]), 1)).replace("torch.", "gradkit."))
    for lib in (gradkit, torch):
        with pytest.raises(TypeError, match=r"return_types.max\(\) takes a 2-sequence "
                                            r"\(3-sequence given\)"):
            lib.return_types.max((1, 2, 3))


def test_return_types_pickle_and_unpack():
    values, indices = gradkit.sort(gradkit.tensor([3.0, 1.0, 2.0]))
    assert values.tolist() == [1.0, 2.0, 3.0] and indices.tolist() == [1, 2, 0]
    again = pickle.loads(pickle.dumps(gradkit.return_types.sort((1, 2))))
    assert type(again) is gradkit.return_types.sort and again == (1, 2)


# -- clone() and *_like with preserve_format keep a dense input's strides, as torch's -----------

def _sources(lib):
    x = lib.arange(24.).reshape(2, 3, 4)
    return {
        "transposed": x[0].t(), "permuted": x.permute(2, 0, 1), "mT": x.mT,
        "stepped": x[:, ::2], "narrowed_t": x[0, :, 1:].t(), "stepped_view": x.transpose(0, 2)[::2],
        "expanded": lib.arange(3.).expand(2, 3),
        "expanded_mid": lib.arange(3.).reshape(3, 1).expand(3, 4),
        "contiguous": x, "one_element_dims": lib.arange(3.).reshape(3, 1).t(),
        "one_element_dims_3d": lib.ones(1, 3, 1).permute(2, 1, 0), "scalar": lib.tensor(1.),
        "channels_last": lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
        "diagonal": lib.ones(3, 3).diagonal(), "unfolded": lib.arange(10.).unfold(0, 3, 2),
    }


COPIES = {
    "clone_method": lambda lib, x: x.clone(),
    "clone_function": lambda lib, x: lib.clone(x),
    "clone_contiguous": lambda lib, x: x.clone(memory_format=lib.contiguous_format),
    "zeros_like": lambda lib, x: lib.zeros_like(x), "empty_like": lambda lib, x: lib.empty_like(x),
    "full_like": lambda lib, x: lib.full_like(x, 2.0), "rand_like": lambda lib, x: lib.rand_like(x),
}


@pytest.mark.parametrize("copy", sorted(COPIES))
@pytest.mark.parametrize("source", sorted(_sources(torch)))
def test_copies_in_preserve_format_have_torchs_strides(copy, source):
    ours = COPIES[copy](gradkit, _sources(gradkit)[source])
    theirs = COPIES[copy](torch, _sources(torch)[source])
    assert ours.stride() == theirs.stride() and ours.storage_offset() == 0
    assert ours.is_contiguous() == theirs.is_contiguous()
    if copy not in ("empty_like", "rand_like"):
        assert ours.tolist() == theirs.tolist()


def test_clone_in_preserve_format_is_differentiable_and_owns_its_memory():
    x = gradkit.arange(6., dtype=gradkit.float64).reshape(2, 3).requires_grad_()
    source = x.t()
    copy = source.clone()
    assert copy.stride() == source.stride() and copy.grad_fn.name() == "CloneBackward0"
    assert copy.data_ptr() != source.data_ptr()
    with gradkit.no_grad():
        copy.add_(1)
    assert x.tolist() == [[0., 1., 2.], [3., 4., 5.]]
    assert gradkit.autograd.gradcheck(lambda t: t.t().clone(), (x,))
    assert gradkit.autograd.gradgradcheck(lambda t: t.t().clone(), (x,))


# -- storages ---------------------------------------------------------------------------------

def _storage_programs(t):
    x = t.arange(6.).reshape(2, 3)
    pairs = t.view_as_real(t.tensor([1 + 2j, 3 - 1j]))
    untyped = x.untyped_storage
    return {
        "untyped_sizes": lambda: (untyped().nbytes(), untyped().size(), len(untyped()),
                                  untyped().element_size()),
        "untyped_bytes": lambda: untyped().tolist(),
        "shared_by_views": lambda: (x[1].untyped_storage().data_ptr() == untyped().data_ptr(),
                                    x.t().untyped_storage() == untyped(),
                                    x.clone().untyped_storage().data_ptr() == untyped().data_ptr(),
                                    x[1].untyped_storage().nbytes()),
        "first_address": lambda: untyped().data_ptr() == x.data_ptr(),
        "untyped_items": lambda: (untyped()[6], untyped()[-1], untyped()[4:8].tolist()),
        "untyped_negative_out": lambda: untyped()[-25],
        "untyped_out": lambda: untyped()[24],
        "untyped_repr": lambda: repr(t.tensor([1, 2], dtype=t.int8).untyped_storage()),
        "empty": lambda: (repr(t.empty(0).untyped_storage()),
                          t.empty(0).untyped_storage().data_ptr(), repr(t.empty(0).storage())),
        "typed": lambda: (x.storage().size(), len(x.storage()), x.storage().nbytes(),
                          x.storage().element_size(), str(x.storage().dtype),
                          str(x.storage().device), x.storage().tolist()),
        "typed_of_view": lambda: (x[1].storage().size(), x[1].storage().tolist(),
                                  x[1].storage().data_ptr() == x.data_ptr(),
                                  x[1].storage_offset()),
        "typed_items": lambda: (x.storage()[1], x.storage()[-1]),
        "typed_out": lambda: x.storage()[-7],
        "typed_bad_index": lambda: x.storage()["a"],
        "typed_slice": lambda: x.storage()[1:2],
        "typed_repr": lambda: repr(x.storage()),
        "bools": lambda: (repr(t.tensor([True, False]).storage()),
                          t.tensor([True, False]).untyped_storage().tolist()),
        "typed_untyped": lambda: (x.storage().untyped() == untyped(),
                                  x.storage().untyped().nbytes()),
        "real_view": lambda: (pairs.storage().size(), str(pairs.storage().dtype),
                              pairs.untyped_storage().nbytes(), pairs.storage().tolist()),
        "is_storage": lambda: (t.is_storage(x.storage()), t.is_storage(untyped()),
                               t.is_storage(x), t.is_storage([1])),
        "int16": lambda: t.tensor([1, -2], dtype=t.int16).storage().tolist(),
        "is_cuda": lambda: (x.storage().is_cuda, untyped().is_cuda),
        "type_names": lambda: (x.storage().type(), t.tensor([1j]).storage().type(),
                               t.tensor([True]).storage().type(), untyped().type()),
        "written_through": lambda: (x.add_(1), x.storage().tolist(), x.storage()[0])[1:],
    }


def _storage_outcome(lib, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # TypedStorage's deprecation
        try:
            result = _storage_programs(lib)[name]()
        except Exception as error:  # noqa: BLE001 - compared with torch's
            result = (type(error).__name__, str(error))
    return str(result).replace("torch.", "gradkit.")


@pytest.mark.parametrize("name", sorted(_storage_programs(torch)))
def test_storages_as_torchs(name):
    assert _storage_outcome(gradkit, name) == _storage_outcome(torch, name)


def test_typed_storage_warns_its_deprecation():
    gradkit.set_warn_always(True)
    try:
        with pytest.warns(UserWarning) as ours:
            gradkit.ones(2).storage()
    finally:
        gradkit.set_warn_always(False)
    torch.storage._reset_warn_typed_storage_removal()
    with pytest.warns(UserWarning) as theirs:
        torch.ones(2).storage()
    assert str(ours[0].message) == str(theirs[0].message)


# -- as_subclass --------------------------------------------------------------------------------

def _subclass_program(lib):
    class Sub(lib.Tensor):
        pass
    x = lib.arange(3., requires_grad=True)
    y = x.as_subclass(Sub)
    facts = [type(y).__name__, y.requires_grad, y.grad_fn.name(), y.is_leaf,
             y.data_ptr() == x.data_ptr(), y._base is x, y.tolist()]
    (y * lib.tensor([1., 2., 3.])).sum().backward()
    facts.append(x.grad.tolist())
    plain = lib.ones(2)
    alias = plain.as_subclass(Sub)
    alias.add_(1)
    facts += [plain.tolist(), plain._version, alias._version, alias.grad_fn, alias.is_leaf]
    base = lib.ones(2, requires_grad=True).clone()
    view = base.as_subclass(Sub)
    base.mul_(lib.tensor([2., 3.]))
    facts.append(view.tolist())
    return facts


def test_as_subclass_as_torch():
    assert _subclass_program(gradkit) == _subclass_program(torch)


@pytest.mark.parametrize("cls", [int, object, "a"])
def test_as_subclass_errors_as_torch(cls):
    with pytest.raises(TypeError) as theirs:
        torch.ones(1).as_subclass(cls)
    with pytest.raises(TypeError, match=str(theirs.value).replace(".", r"\.").replace(
            "(", r"\(").replace(")", r"\)")):
        gradkit.ones(1).as_subclass(cls)


def test_as_subclass_keeps_the_subclass_attributes_and_gradient_to_second_order():
    class Tagged(gradkit.Tensor):
        def tag(self):
            return "tagged"
    x = gradkit.tensor([1.0, 2.0], dtype=gradkit.float64, requires_grad=True)
    y = x.as_subclass(Tagged)
    y.note = "kept"
    assert y.tag() == "tagged" and y.note == "kept" and x.as_subclass(gradkit.Tensor) is not x
    assert gradkit.autograd.gradcheck(lambda t: t.as_subclass(Tagged) ** 3, (x,))
    assert gradkit.autograd.gradgradcheck(lambda t: t.as_subclass(Tagged) ** 3, (x,))


# -- torch.func: stack_module_state, replace_all_batch_norm_modules_, functionalize ------------

def _models(lib, count=3):
    """``count`` small models with the same numbers in gradkit and torch."""
    models = []
    for k in range(count):
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
        with lib.no_grad():
            model[0].weight.copy_(lib.arange(6.).reshape(2, 3) / (k + 1))
            model[0].bias.fill_(k)
            model[1].running_mean.fill_(0.5 * k)
        models.append(model)
    return models


def _stack_state(lib):
    params, buffers = lib.func.stack_module_state(_models(lib))
    summary = {name: (tuple(v.shape), v.requires_grad, v.is_leaf, v.tolist())
               for name, v in {**params, **buffers}.items()}
    return list(params), list(buffers), summary


def test_stack_module_state_as_torch():
    assert _stack_state(gradkit) == _stack_state(torch)


def _ensemble(lib):
    models = _models(lib)
    params, buffers = lib.func.stack_module_state(models)
    data = lib.arange(12.).reshape(4, 3) / 10

    def one(p, b, x):
        return lib.func.functional_call(models[0], (p, b), (x,))
    out = lib.func.vmap(one, (0, 0, None))(params, buffers, data)
    out.pow(2).sum().backward()
    return out.tolist(), params["0.weight"].grad.tolist()


def test_stacked_state_runs_an_ensemble_with_vmap_as_torch():
    ours, theirs = _ensemble(gradkit), _ensemble(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-4, atol=1e-5)


def _stack_error(lib, case):
    models = _models(lib, 2)
    if case == "none":
        models = []
    elif case == "modes":
        models[1].eval()
    elif case == "classes":
        models[1] = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
        models[1] = lib.nn.ModuleList(list(models[1]))
    elif case == "requires_grad":
        models[1][0].weight.requires_grad_(False)
    with pytest.raises(RuntimeError) as error:
        lib.func.stack_module_state(models)
    return str(error.value)


@pytest.mark.parametrize("case", ["none", "modes", "classes", "requires_grad"])
def test_stack_module_state_errors_as_torch(case):
    assert _stack_error(gradkit, case) == _stack_error(torch, case)


def _without_running_stats(lib):
    model = _models(lib, 1)[0]
    assert lib.func.replace_all_batch_norm_modules_(model) is model
    bn = model[1]
    data = lib.arange(12.).reshape(4, 3) / 10
    facts = [bn.track_running_stats, bn.running_mean, bn.running_var, bn.num_batches_tracked,
             sorted(name for name, _ in model.named_buffers()), model(data).tolist()]
    model.eval()  # no running statistics: the batch's, in eval mode too
    return facts + [model(data).tolist()]


def test_replace_all_batch_norm_modules_as_torch():
    ours, theirs = _without_running_stats(gradkit), _without_running_stats(torch)
    assert ours[:5] == theirs[:5]
    np.testing.assert_allclose(ours[5:], theirs[5:], rtol=1e-5, atol=1e-6)


def _functionalized(t):
    functionalize = t.func.functionalize

    def mutates_through_a_view(a):
        a.view(-1).add_(1)
        return a

    def mutates_an_intermediate(a):
        b = a + 1
        b.view(-1).add_(1)
        return b
    facts = {}
    x = t.arange(4.)
    y = functionalize(mutates_through_a_view)(x)
    facts["input_updated_once"] = (x.tolist(), y.tolist(), y is x,
                                   y.data_ptr() == x.data_ptr(), x._version)
    facts["intermediate"] = functionalize(mutates_an_intermediate)(t.ones(2)).tolist()
    x = t.arange(4.)
    y = functionalize(lambda a: a.view(2, 2), remove="mutations_and_views")(x)
    facts["no_alias"] = (y.data_ptr() == x.data_ptr(), y.tolist())
    w = t.ones(2, requires_grad=True)
    out = functionalize(lambda a: (a * 2).sum())(w)
    out.backward()
    facts["gradient"] = (out.item(), w.grad.tolist())
    x = t.arange(4.)
    y = functionalize(lambda a, k: a.mul_(k))(x, k=3)
    facts["keywords"] = (x.tolist(), y.tolist(), y is x, x._version)
    nested = {"a": t.ones(2)}
    functionalize(lambda d: d["a"].add_(1))(nested)
    facts["nested"] = nested["a"].tolist()
    w = t.ones(2, requires_grad=True)
    h = w * 1
    functionalize(lambda a: a.mul_(3))(h)
    h.sum().backward()
    facts["gradient_through_the_update"] = w.grad.tolist()
    with pytest.raises(RuntimeError) as error:
        functionalize(mutates_an_intermediate, remove="views")
    facts["error"] = str(error.value)
    return facts


def test_functionalize_as_torch():
    assert _functionalized(gradkit) == _functionalized(torch)


# -- torch.cond and torch.while_loop, eagerly ----------------------------------------------------

def _cond_results(t):
    x = t.arange(3.)
    return [t.cond(True, lambda a: a + 1, lambda a: a - 1, (x,)).tolist(),
            t.cond(0, lambda a: a + 1, lambda a: a - 1, (x,)).tolist(),
            [v.tolist() for v in t.cond(t.tensor([True]), lambda a: (a + 1, a * 2),
                                        lambda a: (a - 1, a * 3), [x])],
            t.cond(t.tensor(False), lambda d: {"k": d["a"] + 1}, lambda d: {"k": d["a"] - 1},
                   ({"a": x},))["k"].tolist()]


def test_cond_runs_the_chosen_branch_as_torch():
    assert _cond_results(gradkit) == _cond_results(torch)


COND_ERRORS = {
    "pred_string": lambda t, x: t.cond("a", lambda a: a, lambda a: a, (x,)),
    "pred_two_elements": lambda t, x: t.cond(t.tensor([True, False]), lambda a: a,
                                             lambda a: a, (x,)),
    "branch_not_callable": lambda t, x: t.cond(t.tensor(True), 1, lambda a: a, (x,)),
    "operand_not_tensor": lambda t, x: t.cond(t.tensor(True), lambda a: a, lambda a: a, (x, 1)),
    "operands_not_tuple": lambda t, x: t.cond(t.tensor(True), lambda a: a, lambda a: a, x),
}


@pytest.mark.parametrize("name", sorted(COND_ERRORS))
def test_cond_argument_errors_as_torch(name):
    messages = []
    for lib in (gradkit, torch):
        with pytest.raises(RuntimeError) as error:
            COND_ERRORS[name](lib, lib.arange(3.))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def _loop_results(t):
    def below_three(i, y):
        return i < 3

    def step(i, y):
        return i + 1, y * 2
    x = t.arange(3.)
    ran = t.while_loop(below_three, step, (t.tensor(0), x))
    never = t.while_loop(below_three, step, (t.tensor(5), x))
    return [type(ran).__name__, [v.tolist() for v in ran], type(never).__name__,
            [v.tolist() for v in never], never[1].data_ptr() == x.data_ptr()]


def test_while_loop_as_torch():
    assert _loop_results(gradkit) == _loop_results(torch)


def test_while_loop_is_differentiable_to_second_order():
    x = gradkit.tensor([0.5, 1.5], dtype=gradkit.float64, requires_grad=True)

    def three_steps(v):
        return gradkit.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y.sin() * y),
                                  (gradkit.tensor(0), v))[1]
    assert gradkit.autograd.gradcheck(three_steps, (x,))
    assert gradkit.autograd.gradgradcheck(three_steps, (x,))


LOOP_ERRORS = {
    "not_callable": (RuntimeError, lambda t, i, x: t.while_loop(1, lambda i, y: (i, y), (i, x))),
    "float_carried": (AssertionError, lambda t, i, x: t.while_loop(
        lambda i, y: i < 3, lambda i, y: (i, y), (i, 1.5))),
}


@pytest.mark.parametrize("name", sorted(LOOP_ERRORS))
def test_while_loop_argument_errors_as_torch(name):
    kind, program = LOOP_ERRORS[name]
    messages = []
    for lib in (gradkit, torch):
        with pytest.raises(kind) as error:
            program(lib, lib.tensor(0), lib.arange(3.))
        messages.append(str(error.value).replace("torch.Tensor", "gradkit._tensor.Tensor"))
    assert messages[0].split(" can only be of ")[0] == messages[1].split(" can only be of ")[0]


def test_while_loop_eager_checks_of_each_step():
    i, x = gradkit.tensor(0), gradkit.arange(3.)
    with pytest.raises(RuntimeError, match=r"^carried_inputs must be a tuple or list but got"):
        gradkit.while_loop(lambda i: i < 3, lambda i: (i + 1,), i)
    with pytest.raises(RuntimeError, match=r"^cond_fn must return a boolean scalar tensor or a "
                                           r"boolean but got tensor\(0\)"):
        gradkit.while_loop(lambda i, y: i, lambda i, y: (i, y), (i, x))
    with pytest.raises(AssertionError, match=r"^body_fn should return the same number of "
                                             r"elements as carried_inputs, got 1 vs 2"):
        gradkit.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1,), (i, x))
    with pytest.raises(AssertionError, match=r"^body_fn should return a tuple but got"):
        gradkit.while_loop(lambda i, y: i < 3, lambda i, y: i + 1, (i, x))
