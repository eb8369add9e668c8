"""The program behind docs/img/trace_speedscope.png: two SGD steps of a small MLP, profiled.

    python docs/img/screenshot_program.py trace.json
"""
import sys

import gradkit
import gradkit.nn.functional as F  # noqa: N812 - the torch idiom
from gradkit.profiler import profile, record_function


def main(path: str) -> None:
    gradkit.manual_seed(0)
    x, y = gradkit.randn(64, 32), gradkit.randint(0, 10, (64,))
    w1 = (gradkit.randn(32, 64) / 6).requires_grad_()
    w2 = (gradkit.randn(64, 10) / 8).requires_grad_()
    with profile(record_shapes=True) as prof:
        for step in range(2):
            with record_function(f"step {step}"):
                with record_function("forward"):
                    loss = F.cross_entropy((x @ w1).relu() @ w2, y)
                with record_function("backward"):
                    loss.backward()
                with gradkit.no_grad(), record_function("sgd"):
                    for w in (w1, w2):
                        w -= 0.1 * w.grad
                        w.grad = None
    prof.export_chrome_trace(path)


if __name__ == "__main__":
    main(sys.argv[1])
