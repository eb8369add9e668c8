"""Regenerate mlp_step.json.gz: two training steps of a small MLP, profiled with every option.

    python traces/examples/make_mlp_trace.py
"""
import os

import numpy as np

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - the torch idiom
from gradkit.profiler import profile, record_function, schedule


def main() -> None:
    gradkit.manual_seed(0)
    rng = np.random.default_rng(0)
    x = gradkit.tensor(rng.standard_normal((64, 32)).astype("float32"))
    y = gradkit.tensor(rng.integers(0, 10, 64))
    w1 = (gradkit.randn(32, 64) / 32 ** 0.5).requires_grad_()
    w2 = (gradkit.randn(64, 10) / 8).requires_grad_()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp_step.json.gz")
    with profile(record_shapes=True, profile_memory=True, with_stack=True, with_flops=True,
                 schedule=schedule(wait=0, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(out)) as prof:
        for _ in range(3):
            with record_function("forward"):
                loss = F.cross_entropy((x @ w1).relu() @ w2, y)
            with record_function("backward"):
                loss.backward()
            with gradkit.no_grad(), record_function("sgd"):
                for w in (w1, w2):
                    w -= 0.1 * w.grad
                    w.grad = None
            prof.step()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=12))


if __name__ == "__main__":
    main()
