"""Write a Recorder's session as a Chrome trace, in PyTorch's vocabulary (cat, args names, flows).

The trace is written straight from the recorder's tuples in one pass per thread:
no FunctionEvent is built (those are for ``events()``/``key_averages()``, see
``timeline.build``, whose order, ids and clamping this matches event for event).
Texts that repeat (names, call sites, stacks, input metadata) are formatted once.
"""
from __future__ import annotations

import os
from operator import itemgetter

from gradkit.profiler.chrome_trace import ChromeTraceWriter, encode_json, format_us
from gradkit.profiler.cuda_timer import write_gpu_track
from gradkit.profiler.flops import count_flops
from gradkit.profiler.recorder import MEM, NODE, OP, RANGE, site_text
from gradkit.profiler.timeline import (EVALUATE_PREFIX, input_lists, memory_series,
                                       stack_frames, thread_names)

LIVE_BYTES = "Memory allocated (bytes)"
SAVED_BYTES = "Saved for backward (bytes)"

# an X event from its timestamp on; the head up to '"ts":' is formatted once per (name, thread)
_X_TAIL = '%.3f,"dur":%.3f,"args":{"External id":%d,"Record function id":0%s}}'
_FLOW = ('{"ph":"s","id":%d,"pid":%d,"tid":%d,"ts":%.3f,"cat":"fwdbwd","name":"fwdbwd"},\n'
         '{"ph":"f","id":%d,"pid":%d,"tid":%d,"ts":%s,"cat":"fwdbwd","name":"fwdbwd","bp":"e"}')
_MEMORY = ('{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":%d,"tid":%d,'
           '"ts":%s,"args":{"Total Reserved":%d,"Total Allocated":%d,"Bytes":%d,"Addr":%d,'
           '"Device Type":0,"Device Id":-1}},\n'
           '{"ph":"C","name":' + encode_json(LIVE_BYTES) + ',"pid":%d,"tid":0,"ts":%s,'
           '"args":{"Allocated":%d}}')
_SAVED = '{"ph":"C","name":' + encode_json(SAVED_BYTES) + ',"pid":%d,"tid":0,"ts":%s,' \
         '"args":{"Saved":%d}}'


class _Texts:
    """The args fragments that repeat, each formatted once per session."""

    def __init__(self, record_shapes: bool, with_flops: bool) -> None:
        self.record_shapes, self.with_flops = record_shapes, with_flops
        self.sites: dict = {}    # (code, lasti) -> ',"Forward call site":"file:line"'
        self.stacks: dict = {}   # recorded stack -> ',"Call stack":"..."'
        self.inputs: dict = {}   # (name, meta, its types) -> (input dims text, flops text)

    def call_site(self, code, lasti: int) -> str:
        text = self.sites.get((code, lasti))
        if text is None:
            text = self.sites[code, lasti] = \
                f',"Forward call site":{encode_json(site_text((code, lasti)))}'
        return text

    def stack(self, stack) -> str:
        text = self.stacks.get(stack)
        if text is None:
            frames = stack_frames(stack)  # none left when all were runpy's
            text = self.stacks[stack] = \
                f',"Call stack":{encode_json(";".join(frames))}' if frames else ""
        return text

    def op_inputs(self, name: str, meta) -> tuple:
        """(',"Input Dims":...' when recording shapes, ',"flops":n' when counted) of one op."""
        key = (name, meta, *map(type, meta))  # the types keep 1, 1.0 and True apart
        texts = self.inputs.get(key)
        if texts is None:
            shapes, types, concrete = input_lists(meta)
            dims = flops = ""
            if self.record_shapes:
                dims = (f',"Input Dims":{encode_json(shapes)},"Input type":{encode_json(types)},'
                        f'"Concrete Inputs":{encode_json(concrete)}')
            count = int(count_flops(name, shapes)) if self.with_flops else 0
            if count:
                flops = f',"flops":{count}'
            texts = self.inputs[key] = (dims, flops)
        return texts


def _op_args(r, texts: _Texts) -> str:
    """What follows "Record function id" in the args of a forward op record."""
    _, name, _, _, _, seq, meta, _, _, stack = r
    text = f',"Sequence number":{seq},"Fwd thread id":0' if seq >= 0 else ""
    if meta is None:
        return text + texts.stack(stack) if stack else text
    dims, flops = texts.op_inputs(name, meta)
    return text + dims + texts.stack(stack) + flops if stack else text + dims + flops


def _node_args(r, source, texts: _Texts) -> str:
    """The args tail of a backward node: its forward op's thread and call site."""
    seq = r[5]
    if source is None:  # the forward ran before profiling began: still marked as backward
        return f',"Sequence number":{seq},"Fwd thread id":{r[4]}' if seq >= 0 else ""
    text = f',"Sequence number":{seq},"Fwd thread id":{source[4]}' if seq >= 0 else ""
    if source[4] and source[7] is not None:
        text += texts.call_site(source[7], source[8])
    return text


def _heads(name: str, cat: str, pid: int, tid: int, times: str = "%.3f") -> tuple:
    """%-formats of an X event: (ts, dur, id, args tail) and (ts, dur, id, sequence number);
    ``times="%s"`` takes ts and dur already formatted."""
    head = (f'{{"ph":"X","cat":"{cat}","name":{encode_json(name).replace("%", "%%")},'
            f'"pid":{pid},"tid":{tid},"ts":{times},"dur":{times},"args":{{"External id":%d,'
            f'"Record function id":0')
    return head + "%s}}", head + ',"Sequence number":%d,"Fwd thread id":0}}'


def _ordered(records: list) -> list:
    """Event records by (thread, start, longest first), ties in recording order."""
    events = [r for r in records if r[0] < MEM]
    events.sort(key=itemgetter(3), reverse=True)  # stable sorts: the last key is the first
    events.sort(key=itemgetter(2))
    events.sort(key=itemgetter(4))
    return events


def export_chrome_trace(recorder, path, flags: dict | None = None, gpu_timer=None,
                        record_shapes: bool = False, with_flops: bool = False) -> None:
    """Write the session of ``recorder`` to ``path`` (``.json`` or ``.json.gz``), atomically.

    ``gpu_timer`` (a cuda_timer.CudaTimer of the same session) adds the GPU tracks.
    """
    base = recorder.start_ns
    records = list(recorder.records)
    events = _ordered(records)
    forward = {r[5]: r for r in records if r[0] == OP and r[5] >= 0}
    pid = os.getpid()
    with ChromeTraceWriter(path, recorder.start_epoch_ns, flags) as writer:
        writer.metadata("process_name", pid, 0, {"name": "python"})
        writer.metadata("process_labels", pid, 0, {"labels": "CPU"})
        writer.metadata("process_sort_index", pid, 0, {"sort_index": 0})
        names = thread_names({r[4] for r in events})
        for index, (tid, name) in enumerate(sorted(names.items())):
            writer.metadata("thread_name", pid, tid, {"name": f"thread {tid} ({name})"})
            writer.metadata("thread_sort_index", pid, tid, {"sort_index": index})
        _write_events(writer, pid, events, base, forward, _Texts(record_shapes, with_flops))
        memory, saved = memory_series(records, base)
        _write_memory(writer, pid, memory, saved)
        if gpu_timer is not None:
            write_gpu_track(writer, gpu_timer, origin_ns=base)


def _write_events(writer, pid: int, events: list, base: int, forward: dict,
                  texts: _Texts) -> None:
    """X events, each clamped into its parent, then the forward -> backward flow arrows."""
    out, flows = [], []
    emit, flow = out.append, flows.append
    thread, stack, number = None, [], 0
    for r in events:
        kind, name, start, end, tid = r[0], r[1], r[2] - base, r[3] - base, r[4]
        if tid != thread:
            thread, stack, heads = tid, [], ({}, {}, {}, {})  # formats by kind, then name
        if start < 0:   # as the writer always did: no event before the session's start
            start = 0
        if end < start:
            end = start
        while stack and stack[-1] <= start:
            stack.pop()
        if stack and end > stack[-1]:
            end = stack[-1]
        stack.append(end)
        ts, dur = start / 1000, (end - start) / 1000
        number += 1
        formats = heads[kind].get(name)
        if kind == OP:
            if formats is None:
                formats = heads[OP][name] = _heads(name, "cpu_op", pid, tid)
            if r[6] is None and r[9] is None and r[5] >= 0:
                emit(formats[1] % (ts, dur, number, r[5]))
            else:
                emit(formats[0] % (ts, dur, number, _op_args(r, texts)))
        elif kind == NODE:  # torch's evaluate_function wrapper, then the node inside it
            if formats is None:
                formats = heads[NODE][name] = (
                    _heads(EVALUATE_PREFIX + name, "cpu_op", pid, tid, "%s")[0],
                    _heads(name, "cpu_op", pid, tid, "%s")[0])
            source = forward.get(r[5])
            tail = _node_args(r, source, texts)
            ts, dur = f"{ts:.3f}", f"{dur:.3f}"  # written twice or three times
            emit(formats[0] % (ts, dur, number, tail))
            number += 1
            emit(formats[1] % (ts, dur, number, tail))
            stack.append(end)  # the node, inside its wrapper
            if source is not None and not name.startswith("autograd::engine"):
                source_start = source[2] - base
                flow(_FLOW % (len(flows) + 1, pid, source[4],
                              source_start / 1000 if source_start > 0 else 0.0,
                              len(flows) + 1, pid, tid, ts))
        else:
            if formats is None:
                cat = "user_annotation" if kind == RANGE else "cpu_op"
                formats = heads[kind][name] = _heads(name, cat, pid, tid)
            emit(formats[0] % (ts, dur, number, ""))
    writer.raw_events(out)
    writer.raw_events(flows, events_each=2)


def _write_memory(writer, pid: int, memory: list, saved: list) -> None:
    texts, live = [], 0
    for ts, nbytes, tid, addr in memory:
        live += nbytes
        ts = format_us(ts)
        texts.append(_MEMORY % (pid, tid, ts, live, live, nbytes, addr, pid, ts, live))
    writer.raw_events(texts, events_each=2)
    texts, held = [], 0
    for ts, nbytes, _tid in saved:
        held += nbytes
        texts.append(_SAVED % (pid, format_us(ts), held))
    writer.raw_events(texts)
