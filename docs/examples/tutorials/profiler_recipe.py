"""The profiler recipe: profile a model, label code with record_function, read the table."""
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
inputs = torch.linspace(-1.0, 1.0, 8 * 16).reshape(8, 16)

with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    with record_function("model_inference"):
        out = model(inputs)
    with record_function("model_backward"):
        out.sum().backward()

averages = prof.key_averages()
names = {event.key for event in averages}
print("labelled ranges recorded:", "model_inference" in names, "model_backward" in names)
inference = next(e for e in averages if e.key == "model_inference")
print("model_inference calls:", inference.count)
print("a backward node was profiled:", any(name.endswith("Backward0") for name in names))
table = averages.table(sort_by="cpu_time_total", row_limit=5)
print("table has torch's columns:", all(column in table for column in
                                        ("Name", "Self CPU %", "CPU total", "# of Calls")))

with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    model(inputs)
by_shape = prof.key_averages(group_by_input_shape=True)
print("input shapes recorded:", any(e.input_shapes for e in by_shape))

steps = []
with profile(activities=[ProfilerActivity.CPU],
             schedule=torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
             on_trace_ready=lambda p: steps.append(p.step_num)) as prof:
    for _ in range(5):
        model(inputs).sum().backward()
        prof.step()
print("trace ready after step:", steps)
prof.export_chrome_trace("trace.json")
print("chrome trace written")
