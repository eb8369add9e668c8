"""torch's expectations of utils.checkpoint's recomputation: when it runs, what backward and
``autograd.grad`` get from it, hooks, identity of saved inputs, arbitrary structures, and the
reentrant variant's refusals."""
from .test_autograd_checkpoint import checkpoint_of
from .twin import leaf, like_torch, raises_like_torch


def test_saved_result_outside_backward_recomputes_each_time_then_is_freed():
    # torch: test_access_saved_tensor_twice_without_recomputation_works
    def program(lib):
        calls = [0]

        def block(a):
            calls[0] += 1
            b = a * a
            a * b
            return a.exp()

        a = leaf(lib, 5)
        d = checkpoint_of(lib)(block, a, use_reentrant=False)
        counts = [calls[0]]
        first = d.grad_fn._saved_result
        counts.append(calls[0])
        second = d.grad_fn._saved_result
        counts.append(calls[0])
        d.sum().backward()
        counts.append(calls[0])
        return counts, first, second, a.grad

    counts, first, second, grad = like_torch(program)
    assert counts == [1, 2, 3, 4]
    assert abs(first.detach().numpy() - grad.numpy()).max() == 0  # d(exp a) = exp a

    def after_backward(lib):
        d = checkpoint_of(lib)(lambda a: a.exp(), leaf(lib, 5), use_reentrant=False)
        d.sum().backward()
        return d.grad_fn._saved_result

    raises_like_torch(after_backward, RuntimeError,
                      "or directly access saved tensors after they have already been freed")


def test_saved_tensors_read_twice_in_one_backward_are_refused():
    # torch: test_checkpointing_without_reentrant_custom_function_works
    def program(lib):
        second_read = []

        class Product(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, z):
                w = x * y * z
                out = w + w
                ctx.save_for_backward(x, y, z, w, out)
                return out

            @staticmethod
            def backward(ctx, grad_out):
                x, y, z, w, out = ctx.saved_tensors
                try:
                    second_read.append(ctx.saved_tensors)
                except RuntimeError as error:
                    second_read.append(str(error))
                return x, y, z

        def block(x, y, z):
            return Product.apply(x * y * z, y * y * z, z * z)

        x, y, z = (leaf(lib, seed=i) for i in range(3))
        checkpoint_of(lib)(block, x, y, z, use_reentrant=False).sum().backward()
        return ["Unpack is being triggered for a tensor that was already unpacked once"
                in message for message in second_read], x.grad, y.grad, z.grad

    assert like_torch(program)[0] == [True]


def test_checkpoint_gradients_agree_with_backward_and_grad():
    # torch: test_checkpointing_without_reentrant_correct_grad
    def program(lib):
        a = leaf(lib, 2, 2)
        plain = lib.autograd.grad(a.exp().sum(), (a,))[0]
        checkpoint_of(lib)(lib.exp, a, use_reentrant=False).sum().backward()
        by_grad = lib.autograd.grad(checkpoint_of(lib)(lib.exp, a, use_reentrant=False).sum(),
                                    (a,))[0]
        return plain, a.grad, by_grad

    plain, by_backward, by_grad = like_torch(program)
    assert (plain.numpy() == by_backward.numpy()).all() and (plain.numpy() ==
                                                             by_grad.numpy()).all()


def test_a_tensor_used_inside_and_outside_runs_its_hook_once():
    # torch: test_checkpointing_without_reentrant_parameter_used_in_an_out
    def program(lib):
        w, x = leaf(lib, 4, 4), leaf(lib, 4, 4, seed=1)
        calls = []
        w.register_hook(lambda g: calls.append(1))
        out = checkpoint_of(lib)(lambda h: w * h, w * x, use_reentrant=False)
        out.sum().backward()
        return len(calls), w.grad

    assert like_torch(program)[0] == 1


def test_dict_input_and_output():
    # torch: test_checkpointing_without_reentrant_arbitrary_input_output
    def program(lib):
        weight = leaf(lib, 5, 5)

        def block(inputs):
            return {"result": inputs["tensor"] @ weight.T}

        inputs = {"tensor": leaf(lib, 5, 5, seed=1, requires_grad=False)}
        out = checkpoint_of(lib)(block, inputs, use_reentrant=False)["result"].sum()
        out.backward()
        with_checkpoint = weight.grad
        weight.grad = None
        block(inputs)["result"].sum().backward()
        return out, with_checkpoint, weight.grad

    like_torch(program)


def test_a_saved_input_that_needs_no_grad_is_given_back_itself():
    # torch: test_checkpointing_without_reentrant_saved_object_identity
    def program(lib):
        seen = []

        class SavesY(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(y)
                return x

            @staticmethod
            def backward(ctx, g):
                seen.append(ctx.saved_tensors[0])
                return g, None

        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(1.0)
        SavesY.apply(a, b).backward()
        checkpoint_of(lib)(SavesY.apply, a, b, use_reentrant=False).backward()
        return [s is b for s in seen]

    assert like_torch(program) == [True, True]


def test_non_reentrant_checkpoint_of_a_no_grad_block_adds_nothing():
    # torch: test_checkpointing_without_reentrant_detached_tensor (use_reentrant=False)
    def program(lib):
        w = leaf(lib, 2, 2, seed=1)

        def no_grad_block(x):
            with lib.no_grad():
                return x @ w

        a = leaf(lib, 2, 2)
        for _ in range(3):
            out = checkpoint_of(lib)(no_grad_block, a, use_reentrant=False)
            flags = out.requires_grad
            out += a
            out.sum().backward()
        return flags, a.grad, w.grad

    flags, grad, w_grad = like_torch(program)
    assert flags is False and w_grad is None and (grad.numpy() == 3).all()


def test_reentrant_checkpoint_of_a_no_grad_block_is_refused_in_backward():
    # torch: test_checkpointing_without_reentrant_detached_tensor (use_reentrant=True)
    def program(lib):
        def no_grad_block(x):
            with lib.no_grad():
                return x * 2

        a = leaf(lib, 2, 2)
        out = checkpoint_of(lib)(no_grad_block, a, use_reentrant=True)
        out += a
        out.sum().backward()

    raises_like_torch(program, RuntimeError, "none of output has requires_grad=True")


def test_reentrant_checkpoint_refuses_autograd_grad_and_stays_usable():
    # torch: test_checkpoint_valid_reset_on_error
    def refused(lib):
        a = leaf(lib, 2, 2)
        lib.autograd.grad(checkpoint_of(lib)(lib.exp, a, use_reentrant=True).sum(), (a,))

    raises_like_torch(refused, RuntimeError, "torch.utils.checkpoint is incompatible")

    def program(lib):
        a = leaf(lib, 2, 2)
        try:
            lib.autograd.grad(checkpoint_of(lib)(lib.exp, a, use_reentrant=True).sum(), (a,))
        except RuntimeError:
            pass
        checkpoint_of(lib)(lib.exp, a, use_reentrant=True).sum().backward()
        return a.grad

    like_torch(program)
