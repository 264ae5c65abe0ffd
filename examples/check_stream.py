#!/usr/bin/env python3
"""check_stream.py STREAM PARSE_JSONL [REQUEST COMPLETION DSML_RENDER]

Runs the `stream` example on every completion of PARSE_JSONL (golden parse
cases) that the reference parser accepts, each in a different chunk size,
with a request body of the case's thinking mode, and checks what it sends:
server-sent events, each `data: {chat.completion.chunk}` and an empty line,
`data: [DONE]` last; the first delta carries the role; the reasoning_content
and content deltas concatenate to the message's texts; each tool call has
one first delta (index in order, an id "call_" + 24 letters and digits, no
id used twice, type, function.name, namespace) and argument pieces that
concatenate to the call's `arguments` text; the last chunk carries
finish_reason "tool_calls" or "stop".  With REQUEST, COMPLETION and
DSML_RENDER, the same check on COMPLETION against `dsml-render respond
REQUEST COMPLETION` (the non-streamed object), with and without
--stream-arguments.
"""
import json
import re
import subprocess
import sys
import tempfile

CHUNKS = (1, 2, 3, 4, 5, 7, 16, 64, 4096)
CALL_ID = re.compile(r"^call_[A-Za-z0-9]{24}$")


def replay(stream, request, path, chunk, ids, extra=()):
    """The message the stream example's events add up to, and the finish."""
    run = subprocess.run([stream, "--chunk", str(chunk), *extra, request, path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if run.returncode != 0:
        raise AssertionError("exit %d: %s" % (run.returncode, run.stderr.decode(errors="replace")))
    events = run.stdout.decode("utf-8").split("\n\n")
    if events.pop() != "" or events.pop() != "data: [DONE]":
        raise AssertionError("does not end with data: [DONE] and an empty line")
    msg = {"content": "", "reasoning_content": "", "tool_calls": []}
    finish = None
    for i, event in enumerate(events):
        # one line each: "\n" cannot be inside the JSON text
        assert event.startswith("data: ") and "\n" not in event, event
        chunk_obj = json.loads(event[6:])
        assert chunk_obj["object"] == "chat.completion.chunk", event
        (choice,) = chunk_obj["choices"]
        assert choice["index"] == 0
        if finish is not None:
            raise AssertionError("event after the finish_reason: %r" % event)
        delta = dict(choice["delta"])
        if i == 0:
            assert delta.pop("role") == "assistant", event
        if choice["finish_reason"] is not None:
            assert delta == {} and i == len(events) - 1, event
            finish = choice["finish_reason"]
            continue
        (key,) = delta.keys()
        if key in ("content", "reasoning_content"):
            assert delta[key], "empty text delta"
            msg[key] += delta[key]
            continue
        assert key == "tool_calls", event
        (call,) = delta[key]
        n = call["index"]
        calls = msg["tool_calls"]
        if "id" in call:
            assert n == len(calls) and CALL_ID.match(call["id"]), event
            assert call["id"] not in ids, "id used twice: " + call["id"]
            ids.add(call["id"])
            assert call["type"] == "function"
            entry = {"type": "function",
                     "function": {"name": call["function"]["name"],
                                  "arguments": call["function"]["arguments"]}}
            if "namespace" in call:
                entry["namespace"] = call["namespace"]
            calls.append(entry)
        else:
            assert set(call) == {"index", "function"} and set(call["function"]) == {"arguments"}
            assert 0 <= n < len(calls), event
            calls[n]["function"]["arguments"] += call["function"]["arguments"]
    want_finish = "tool_calls" if msg["tool_calls"] else "stop"
    if finish != want_finish:
        raise AssertionError("finish_reason %r, expected %r" % (finish, want_finish))
    return msg


def same(got, want):
    keep = ("content", "reasoning_content", "tool_calls")
    return got == {k: want[k] for k in keep}


def main():
    if len(sys.argv) not in (3, 6):
        sys.exit(__doc__)
    stream, golden = sys.argv[1], sys.argv[2]
    checked = failed = 0
    ids = set()
    with tempfile.TemporaryDirectory(prefix="dsml-stream-") as tmp:
        requests = {}
        for mode in ("chat", "thinking"):
            requests[mode] = "%s/%s.json" % (tmp, mode)
            with open(requests[mode], "w", encoding="utf-8") as f:
                json.dump({"model": "deepseek-v4.1", "stream": True, "thinking_mode": mode,
                           "messages": [{"role": "user", "content": "Hi"}]}, f)
        path = tmp + "/completion.txt"
        with open(golden, encoding="utf-8") as f:
            for line in f:
                case = json.loads(line)
                want = case["expect"].get("message")
                if want is None:
                    continue
                chunk = CHUNKS[checked % len(CHUNKS)]
                with open(path, "wb") as out:
                    out.write(case["text"].encode("utf-8"))
                try:
                    got = replay(stream, requests[case["thinking_mode"] or "chat"], path,
                                 chunk, ids)
                    if not same(got, want):
                        raise AssertionError("got %s\nwant %s" % (json.dumps(got), json.dumps(want)))
                except (AssertionError, ValueError, KeyError) as e:
                    failed += 1
                    print("FAIL %s (chunk %d): %s" % (case["id"], chunk, e))
                checked += 1
    print("%d golden completions streamed, %d failed" % (checked, failed))
    if len(sys.argv) == 6:
        request, completion, cli = sys.argv[3:6]
        obj = json.loads(subprocess.run([cli, "respond", request, completion],
                                        stdout=subprocess.PIPE, check=True).stdout)
        message = obj["choices"][0]["message"]
        want = {"content": message["content"] or "",
                "reasoning_content": message.get("reasoning_content", ""),
                "tool_calls": [{"type": c["type"], "function": c["function"]}
                               for c in message.get("tool_calls", [])]}
        for extra in ((), ("--stream-arguments",)):
            for chunk in CHUNKS:
                checked += 1
                got = replay(stream, request, completion, chunk, ids, extra)
                if not same(got, want):
                    failed += 1
                    print("FAIL %s (chunk %d %s): got %s" % (completion, chunk, extra,
                                                             json.dumps(got)))
        print("%s: %d chunk sizes checked against dsml-render respond" % (completion, len(CHUNKS)))
    if checked == 0 or failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
