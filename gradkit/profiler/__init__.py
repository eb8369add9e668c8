"""gradkit.profiler: torch.profiler's API on gradkit's engine, writing Chrome traces.

>>> import gradkit
>>> from gradkit.profiler import profile, record_function
>>> x = gradkit.ones(4, requires_grad=True)
>>> with profile(record_shapes=True, profile_memory=True) as prof:
...     with record_function("model"):
...         loss = (x * 2).sin().sum()
...     loss.backward()
>>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=5))
>>> prof.export_chrome_trace("trace.json")     # open in ui.perfetto.dev or chrome://tracing
"""
from gradkit.profiler.chrome_trace import ChromeTraceWriter
from gradkit.profiler.events import EventList, FunctionEvent, FunctionEventAvg
from gradkit.profiler.load import TraceFile, load_trace
from gradkit.profiler.profile import (
    ProfilerAction, ProfilerActivity, profile, schedule, supported_activities,
    tensorboard_trace_handler)
from gradkit.profiler.record_function import record_function

__all__ = ["profile", "record_function", "schedule", "tensorboard_trace_handler",
           "supported_activities",
           "ProfilerActivity", "ProfilerAction", "EventList", "FunctionEvent",
           "FunctionEventAvg", "ChromeTraceWriter", "load_trace", "TraceFile"]
