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
from gradkit.profiler.recorder import BACKWARD, MEM, NODE, OP, RANGE, SAVED, site_text
from gradkit.profiler.op_arguments import concrete_text, input_lists
from gradkit.profiler.timeline import (EVALUATE_PREFIX, memory_series,
                                       node_inside_wrapper,
                                       stack_frames, thread_names)

LIVE_BYTES = "Memory allocated (bytes)"
SAVED_BYTES = "Saved for backward (bytes)"

_CHUNK_RECORDS = 1024  # records formatted before their text goes to the writer
_MEMORY = ('{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":%d,"tid":%d,'
           '"ts":%s,"args":{"Total Reserved":%d,"Total Allocated":%d,"Bytes":%d,"Addr":%d,'
           '"Device Type":0,"Device Id":-1}},\n'
           '{"ph":"C","name":' + encode_json(LIVE_BYTES) + ',"pid":%d,"tid":0,"ts":%s,'
           '"args":{"Allocated":%d}}')
SAVED_EVENT = "[saved]"  # one pack (+) or release (-), on the thread that did it
# the counter, and an instant event that tells who saved (the op open on the thread at a pack)
# and pairs a release with its pack (gradkit.profiler.saved_lines reads them)
_SAVED = ('{"ph":"C","name":' + encode_json(SAVED_BYTES) + ',"pid":%d,"tid":0,"ts":%s,'
          '"args":{"Saved":%d}},\n'
          '{"ph":"i","cat":"cpu_instant_event","s":"t","name":"' + SAVED_EVENT + '","pid":%d,'
          '"tid":%d,"ts":%s,"args":{"Bytes":%d,"Pack":%d}}')


class _Texts:
    """The args fragments that repeat, each formatted once per session."""

    def __init__(self, record_shapes: bool, with_flops: bool, ranges_with_args=()) -> None:
        self.record_shapes, self.with_flops = record_shapes, with_flops
        # (name, start, tid) of the record_function(name, args) ranges: one input of shape []
        self.ranges_with_args = ranges_with_args if record_shapes else ()
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
            shapes, types, values, strides = input_lists(name, meta)
            concrete = [concrete_text(v) for v in values]
            dims = flops = ""
            if self.record_shapes:
                dims = (f',"Input Dims":{encode_json(shapes)},"Input type":{encode_json(types)},'
                        f'"Concrete Inputs":{encode_json(concrete)},'
                        f'"Input Strides":{encode_json(strides)}')
            count = int(count_flops(name, shapes)) if self.with_flops else 0
            if count:
                flops = f',"flops":{count}'
            texts = self.inputs[key] = (dims, flops)
        return texts


_RANGE_ARGS = ',"Input Dims":[[]],"Input type":[""],"Concrete Inputs":[""],"Input Strides":[[]]'


def _op_args(r, texts: _Texts) -> str:
    """What follows "Record function id" in the args of a forward op record."""
    _, name, _, _, _, seq, meta, code, lasti, stack = r
    if seq >= 0:  # its node carries its call site
        text = f',"Sequence number":{seq},"Fwd thread id":0'
    else:  # no node (no_grad, an optimizer's update): the op carries it
        text = "" if code is None else texts.call_site(code, lasti)
    if meta is None:
        return text + texts.stack(stack) if stack else text
    dims, flops = texts.op_inputs(name, meta)
    return text + dims + texts.stack(stack) + flops if stack else text + dims + flops


def _head(name: str, cat: str, pid: int, tid: int) -> str:
    """An X event's text up to its timestamp (the rest is an f-string in _write_events)."""
    return f'{{"ph":"X","cat":"{cat}","name":{encode_json(name)},"pid":{pid},"tid":{tid},"ts":'


def _ordered(events: list) -> list:
    """Event records by (thread, start, longest first), ties in recording order."""
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
    events = _ordered(recorder.records_of(OP, NODE, RANGE, BACKWARD))
    forward = {r[5]: r for r in events if r[0] == OP and r[5] >= 0}
    pid = os.getpid()
    with ChromeTraceWriter(path, recorder.start_epoch_ns, flags) as writer:
        writer.metadata("process_name", pid, 0, {"name": "python"})
        writer.metadata("process_labels", pid, 0, {"labels": "CPU"})
        writer.metadata("process_sort_index", pid, 0, {"sort_index": 0})
        names = thread_names({r[4] for r in events})
        for index, (tid, name) in enumerate(sorted(names.items())):
            writer.metadata("thread_name", pid, tid, {"name": f"thread {tid} ({name})"})
            writer.metadata("thread_sort_index", pid, tid, {"sort_index": index})
        _write_events(writer, pid, events, base, forward,
                      _Texts(record_shapes, with_flops, recorder.ranges_with_args))
        memory, saved = memory_series(recorder.records_of(MEM, SAVED), base)
        _write_memory(writer, pid, memory, saved)
        if gpu_timer is not None:
            write_gpu_track(writer, gpu_timer, origin_ns=base)


def _write_events(writer, pid: int, events: list, base: int, forward: dict,
                  texts: _Texts) -> None:
    """X events, each clamped into its parent; a backward node's flow arrow from its forward
    op follows it. Handed to the writer in chunks: the text of a whole trace is never held."""
    out, extra, sites, flow_id = [], 0, texts.sites, 0  # extra: events beyond one per text
    emit = out.append
    thread, stack, number = None, [], 0
    for first in range(0, len(events), _CHUNK_RECORDS):
        for r in events[first:first + _CHUNK_RECORDS]:
            kind, name, start, end, tid = r[0], r[1], r[2] - base, r[3] - base, r[4]
            if tid != thread:
                # X event heads by kind, then name (for a node: its wrapper's and its own)
                thread, stack, heads = tid, [], ({}, {}, {}, {})
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
            head = heads[kind].get(name)
            if head is None:
                head = heads[kind][name] = (
                    _head(EVALUATE_PREFIX + name, "cpu_op", pid, tid),
                    _head(name, "cpu_op", pid, tid), not name.startswith("autograd::engine")
                ) if kind == NODE else _head(name, "user_annotation" if kind == RANGE
                                             else "cpu_op", pid, tid)
            if kind == NODE:  # torch's evaluate_function wrapper, then the node inside it
                head, node, linkable = head
                seq = r[5]
                source = forward.get(seq)
                t, d = f"{ts:.3f}", f"{dur:.3f}"
                inner = node_inside_wrapper(start, end)
                node_t, node_d = f"{inner[0] / 1000:.3f}", f"{(inner[1] - inner[0]) / 1000:.3f}"
                flow = ""
                if source is None:  # its forward ran before profiling began: still backward
                    tail = f',"Sequence number":{seq},"Fwd thread id":{tid}' if seq >= 0 else ""
                else:  # the forward op's thread and call site, and an arrow from it
                    fwd_tid, code = source[4], source[7]
                    site = "" if not fwd_tid or code is None else \
                        sites.get((code, source[8])) or texts.call_site(code, source[8])
                    tail = f',"Sequence number":{seq},"Fwd thread id":{fwd_tid}{site}'
                    if linkable:
                        flow_id += 1
                        fwd_ts = (source[2] - base) / 1000 if source[2] > base else 0.0
                        flow = (f',\n{{"ph":"s","id":{flow_id},"pid":{pid},"tid":{fwd_tid},'
                                f'"ts":{fwd_ts:.3f},"cat":"fwdbwd","name":"fwdbwd"}},\n'
                                f'{{"ph":"f","id":{flow_id},"pid":{pid},"tid":{tid},"ts":{node_t},'
                                f'"cat":"fwdbwd","name":"fwdbwd","bp":"e"}}')
                        extra += 2
                extra += 1  # the wrapper and the node are one text
                emit(f'{head}{t},"dur":{d},"args":{{"External id":{number},'
                     f'"Record function id":0{tail}}}}},\n'
                     f'{node}{node_t},"dur":{node_d},"args":{{"External id":{number + 1},'
                     f'"Record function id":0{tail}}}}}{flow}')
                number += 1
                stack.append(inner[1])  # the node, inside its wrapper
            elif kind == RANGE and (name, r[2], tid) in texts.ranges_with_args:
                emit(f'{head}{ts:.3f},"dur":{dur:.3f},"args":{{"External id":{number},'
                     f'"Record function id":0{_RANGE_ARGS}}}}}')
            else:
                tail = "" if kind != OP else \
                    f',"Sequence number":{r[5]},"Fwd thread id":0' \
                    if r[6] is None and r[9] is None and r[5] >= 0 else _op_args(r, texts)
                emit(f'{head}{ts:.3f},"dur":{dur:.3f},"args":{{"External id":{number},'
                     f'"Record function id":0{tail}}}}}')
        writer.raw_chunk(out, len(out) + extra)
        extra = 0


def _write_memory(writer, pid: int, memory: list, saved: list) -> None:
    texts, live = [], 0
    for ts, nbytes, tid, addr in memory:
        live += nbytes
        ts = format_us(ts)
        texts.append(_MEMORY % (pid, tid, ts, live, live, nbytes, addr, pid, ts, live))
    writer.raw_events(texts, events_each=2)
    texts, held = [], 0
    for ts, nbytes, tid, pack in saved:
        held += nbytes
        ts = format_us(ts)
        texts.append(_SAVED % (pid, ts, held, pid, tid, ts, nbytes, pack))
    writer.raw_events(texts, events_each=2)
