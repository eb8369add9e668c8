"""torch's grid-sampling, affine-grid and loss tests of test/test_nn.py (h-nnB:
test_grid_sample_error_checking, test_grid_sample's empty batch, channel and grid shapes,
test_affine_grid_error_checking, test_cosine_similarity, the loss tests between
test_bce_loss_always_nonnegative and test_huber_loss_invalid_delta), rerun on gradkit and
compared with torch 2.13 on the same program.
"""
import itertools

import numpy as np
import pytest

import gradkit
from tensor_twins import data, same_as_torch


@pytest.mark.parametrize("input_shape,grid_shape,kwargs", [
    ((1, 2, 2), (1, 1, 1, 2), {}),
    ((1, 2, 2), (1, 1, 1), {}),
    ((1, 1, 2, 2), (1, 1, 1, 1, 3), {}),
    ((1, 1, 2, 2), (1, 1, 1, 1, 2), {}),
    ((1, 1, 2, 2, 2), (1, 1, 1, 3), {}),
    ((1, 1, 2, 2, 2, 2), (1, 1, 1, 1, 1, 4), {}),
    ((1, 2), (1, 0), {}),
    ((1, 1, 2, 2), (2, 1, 1, 2), {}),
    ((1, 1, 2, 2), (1, 1, 1, 3), {}),
    ((1, 1, 0, 2), (1, 1, 1, 2), {}),
    ((1, 1, 2, 0), (1, 1, 1, 2), {}),
    ((1, 1, 2, 0, 2), (1, 1, 1, 1, 3), {}),
    ((1, 1, 0, 2, 2), (1, 1, 1, 1, 3), {"mode": "bicubic"}),
    ((1, 1, 2, 2, 2), (1, 1, 1, 1, 2), {"mode": "bicubic"}),
    ((1, 1, 2, 2, 2), (1, 1, 1, 1, 3), {"mode": "bicubic"}),
])
def test_grid_sampler_checks_come_in_torchs_order(input_shape, grid_shape, kwargs):
    """Batch size, grid's last size, empty spatial dims, then the kernel's rank (gradkit
    checked the rank first and indexed an empty input)."""
    def program(m):
        grid = m.zeros(grid_shape)
        return [m.nn.functional.grid_sample(m.ones(input_shape), grid, align_corners=False,
                                            **kwargs),
                m.grid_sampler(m.ones(input_shape), grid, 2 if kwargs else 0, 0, False)]
    same_as_torch(program)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "complex64", "float64"])
@pytest.mark.parametrize("dims", [4, 5])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sampler_kernels_refuse_what_is_not_floating(dtype, dims, mode):
    def program(m):
        dt = getattr(m, dtype)
        image = m.ones((1, 1) + (2,) * (dims - 2), dtype=dt)
        grid = m.zeros((1, 1, 1) + (1,) * (dims - 4) + (dims - 2,), dtype=dt)
        return m.nn.functional.grid_sample(image, grid, mode=mode, align_corners=False)
    same_as_torch(program)
    if dtype == "int64" and mode != "bicubic":
        with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
            program(gradkit)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("n,c,h", [(0, 3, 3), (2, 0, 3), (2, 3, 0)])
def test_empty_batches_channels_and_grids(mode, n, c, h):
    """An empty batch gives an empty result and gradients (gradkit's reshape failed)."""
    def program(m):
        image = m.tensor(data(n, c, 4, 5), requires_grad=True)
        grid = m.tensor(data(n, h, 4, 2, seed=1), requires_grad=True)
        out = m.nn.functional.grid_sample(image, grid, mode=mode, align_corners=False)
        out.sum().backward()
        return out, image.grad, grid.grad
    same_as_torch(program)

    def volume(m):
        image = m.tensor(data(n, c, 3, 4, 5), requires_grad=True)
        grid = m.tensor(data(n, 2, h, 4, 3, seed=1), requires_grad=True)
        out = m.nn.functional.grid_sample(image, grid, align_corners=False)
        out.sum().backward()
        return out, image.grad, grid.grad
    if mode != "bicubic":
        same_as_torch(volume)


@pytest.mark.parametrize("mode,padding_mode,align_corners", list(itertools.product(
    ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (True, False))))
def test_grid_sample_known_values_and_strided_grids(mode, padding_mode, align_corners):
    """test_grid_sample's known input, and grids made contiguous in each of its dim orders
    with a channels-first input transposed from (C, N, H, W)."""
    def program(m):
        f = m.nn.functional
        image = m.arange(1., 11, dtype=m.float64).view(1, 1, 2, 5)
        grid = m.tensor([[[-0.9, -4.1], [0, 0.2], [1, -1], [-0.333, 1e-6], [0.5, 1.0]],
                         [[-1.0, -0.5], [0, 0.3333], [1, -1], [-0.2, 1e-6], [1.5, 0.5]]],
                        dtype=m.float64).view(1, 2, 5, 2)
        results = [f.grid_sample(image, grid, mode=mode, padding_mode=padding_mode,
                                 align_corners=align_corners)]
        for order in [(0, 1, 2, 3), (0, 3, 1, 2), (3, 0, 1, 2), (0, 2, 1, 3)]:
            back = [order.index(d) for d in range(4)]
            init = [(2, 4, 5, 2)[d] for d in order]
            g = m.tensor(np.clip(data(*init), -1.2, 1.2)).permute(back).requires_grad_()
            x = m.tensor(data(3, 2, 4, 6, seed=1)).transpose(0, 1).requires_grad_()
            out = f.grid_sample(x, g, mode=mode, padding_mode=padding_mode,
                                align_corners=align_corners)
            out.backward(m.ones_like(out))
            results += [out, x.grad, g.grad.abs()]
        return results
    same_as_torch(program, rtol=1e-9)


@pytest.mark.parametrize("delta", [-0.5, 0.0])
def test_huber_loss_refuses_non_positive_delta(delta):
    same_as_torch(lambda m: m.nn.HuberLoss(delta=delta)(m.ones(2, 2), m.zeros(2, 2)))


def test_cosine_similarity_shapes_zero_norms_promotion_and_broadcasting():
    def program(m):
        f = m.nn.functional
        x1 = m.tensor(data(1, 3, 2, 1), requires_grad=True)
        x2 = m.tensor(data(1, 3, 2, 1, seed=1), requires_grad=True)
        a = m.tensor(data(10), requires_grad=True)
        b = m.zeros_like(a).requires_grad_()
        m.cosine_similarity(a, b, 0).sum().backward()
        twelve = m.tensor(12.)
        return (f.cosine_similarity(x1, x2, dim=1).shape, a.grad, b.grad,
                f.cosine_similarity(twelve.to(m.int8), twelve, dim=-1),
                f.cosine_similarity(m.ones(2, 3), m.ones(1, 1)),
                f.cosine_similarity(m.ones(2, 3), m.ones(1)),
                f.cosine_similarity(m.arange(84.).unsqueeze(0), m.arange(84.).unsqueeze(0)))
    same_as_torch(program)


def test_loss_errors_and_broadcasts():
    """BCE's range and size errors, BCE with logits' size error, cosine embedding's shape
    errors, smooth L1's negative beta, the broadcasting warning of the pointwise losses."""
    def program(m):
        f, outcomes = m.nn.functional, []
        attempts = [
            lambda: m.nn.BCELoss()(m.rand(5, 5) - 1.0, m.rand(5, 5)),
            lambda: m.nn.BCELoss()(m.rand(5, 5) + 1.0, m.rand(5, 5)),
            lambda: m.nn.BCELoss()(m.rand(25), m.rand(25, 1)),
            lambda: m.nn.BCEWithLogitsLoss()(m.rand(5, 1), m.rand(5)),
            lambda: m.nn.BCEWithLogitsLoss()(m.rand(5), m.rand(5, 1)),
            lambda: f.cosine_embedding_loss(m.empty(0, 0), m.empty(0), m.empty(0, dtype=m.int)),
            lambda: f.cosine_embedding_loss(m.empty(1, 5), m.empty(1, 6), m.ones(1, dtype=m.int)),
            lambda: f.cosine_embedding_loss(m.randn(15, 10), m.randn(15, 10), m.randn(15, 1)),
            lambda: f.cosine_embedding_loss(m.randn(10), m.randn(10), m.randn(10)),
            lambda: f.cosine_embedding_loss(m.randn(2, 5), m.randn(2, 5), m.randn(())),
            lambda: f.smooth_l1_loss(m.randn(2, 2), m.randn(2, 2), beta=-1.0),
        ]
        for attempt in attempts:
            try:
                attempt()
            except (RuntimeError, ValueError) as error:
                outcomes.append((type(error).__name__, str(error)))
        x = m.tensor(data(2, 1))
        target = m.tensor(data(2, 10, seed=1))
        outcomes += [loss(x, target, reduction=r) for loss, r in itertools.product(
            (f.mse_loss, f.l1_loss, f.smooth_l1_loss, f.huber_loss), ("none", "mean", "sum"))]
        return outcomes
    assert len(same_as_torch(program)) == 23


def test_cosine_embedding_and_kl_div_across_dtypes():
    """test_cosine_embedding_loss_with_diff_type, test_kl_div_with_diff_type(_log_target)."""
    def program(m):
        f = m.nn.functional
        x1 = m.tensor([[2, 3, 4], [6, 2, 4]], dtype=m.float64)
        x2 = m.tensor([[2, 3, 5], [3, 2, 1]], dtype=m.float64)
        target = m.tensor([1, -1], dtype=m.int32)
        kinds = [m.int8, m.int16, m.int32, m.int64, m.float16, m.float32, m.float64]
        out = [f.cosine_embedding_loss(x1.to(a), x2.to(b), target.to(c)).to(m.float64)
               for a, b, c in itertools.product(kinds + [m.uint8], kinds + [m.uint8], kinds)]
        probs = m.tensor([[1, 2, 3], [4, 5, 6]], dtype=m.float64)
        for log_target in (False, True):
            t = probs.log() if log_target else probs
            out += [f.kl_div(x2.to(a), t.to(b), reduction="sum", log_target=log_target)
                    for a, b in itertools.product((m.float32, m.float64, m.float16),
                                                  (m.float32, m.float64))]
        return out
    same_as_torch(program, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
@pytest.mark.parametrize("scale_factor", [-1e20, 1e20, -1.0, -0.5])
def test_interpolate_refuses_overflowing_and_negative_scale_factors(mode, scale_factor):
    """test_interpolate_undefined_behavior_casting: torch's int64 overflow error (gradkit
    raised NumPy's ValueError); a negative scale is its size error (gradkit's nearest modes
    answered a result)."""
    same_as_torch(lambda m: m.nn.functional.interpolate(m.ones(1, 1, 16, 16),
                                                        scale_factor=scale_factor, mode=mode))
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without "
                       "overflow|Input and output sizes should be greater than 0"):
        gradkit.nn.functional.interpolate(gradkit.ones(1, 1, 4), scale_factor=scale_factor,
                                          mode="linear" if "bi" in mode else mode)


@pytest.mark.parametrize("channels_last", [False, True])
def test_interpolate_reads_the_last_element_of_a_long_row(channels_last):
    """test_interpolate_buffer_overflow with one channel: 2**24 + 4 float32 positions, where
    the last source index rounds past the end in float32."""
    def program(m):
        x = m.ones([1, 1, 2 ** 24 + 4])
        if channels_last:
            x = x.transpose(1, 2).contiguous().transpose(1, 2)
        before = m.nn.functional.interpolate(x, 2, mode="linear", align_corners=True)
        x[0, 0, -1] = 0.5
        return before, m.nn.functional.interpolate(x, 2, mode="linear", align_corners=True)
    assert same_as_torch(program)[1][3].tolist() == [[[1.0, 0.5]]]


def test_affine_grid_known_values_and_channel_shuffle_checks():
    """test_affine_grid(_3d)'s known inputs, test_channel_shuffle_input_checks and the empty
    input of test_(native_)channel_shuffle_return_alias_of_self."""
    def program(m):
        f, out = m.nn.functional, []
        for theta, size in ((m.arange(1., 7, dtype=m.float64).view(1, 2, 3), [1, 1, 2, 2]),
                            (m.arange(1., 13, dtype=m.float64).view(1, 3, 4), [1, 1, 2, 2, 2])):
            out += [f.affine_grid(theta, m.Size(size), align_corners=ac) for ac in (True, False)]
        empty = m.rand(0, 9, 4, 4)
        out += [m.nn.ChannelShuffle(3)(empty), m.native_channel_shuffle(empty, 3)]
        for x, groups in ((m.rand(1, 3, 2, 2), 0), (m.rand(1, 3, 2, 2), 2), (m.rand(1, 2), 2)):
            try:
                m.native_channel_shuffle(x, groups)
            except RuntimeError as error:
                out.append(str(error))
        return out
    same_as_torch(program)
