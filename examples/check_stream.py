#!/usr/bin/env python3
"""check_stream.py STREAM PARSE_JSONL [COMPLETION DSML_RENDER]

Runs the `stream` example on every completion of PARSE_JSONL (golden parse
cases) that the reference parser accepts, each in a different chunk size,
and checks its output against the expected message: every line is one JSON
chat-completion chunk; the reasoning_content and content deltas concatenate
to the message's texts; each tool call has one first delta (index, id "call_N",
type, function.name, namespace) and argument pieces that concatenate to the
call's `arguments` text; the last line carries finish_reason "tool_calls" or
"stop".  With COMPLETION and DSML_RENDER, the same check on COMPLETION
(thinking mode) against `dsml-render parse --thinking --strict COMPLETION`.
"""
import json
import subprocess
import sys
import tempfile

CHUNKS = (1, 2, 3, 4, 5, 7, 16, 64, 4096)


def replay(stream, path, thinking, chunk):
    """The message the stream example's chunk lines add up to."""
    args = [stream, "--chunk", str(chunk), path]
    if thinking:
        args.insert(1, "--thinking")
    run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if run.returncode != 0:
        raise AssertionError("exit %d: %s" % (run.returncode, run.stderr.decode(errors="replace")))
    # split("\n"), not splitlines(): U+2028 and U+0085 are text inside a line.
    lines = run.stdout.decode("utf-8").split("\n")
    if lines[-1] != "":
        raise AssertionError("output does not end with a newline")
    lines.pop()
    msg = {"content": "", "reasoning_content": "", "tool_calls": []}
    finish = None
    for i, line in enumerate(lines):
        chunk_obj = json.loads(line)
        (choice,) = chunk_obj["choices"]
        assert choice["index"] == 0
        if finish is not None:
            raise AssertionError("line after the finish_reason: %r" % line)
        delta = choice["delta"]
        if "finish_reason" in choice:
            assert delta == {} and i == len(lines) - 1, line
            finish = choice["finish_reason"]
            continue
        (key,) = delta.keys()
        if key in ("content", "reasoning_content"):
            assert delta[key], "empty text delta"
            msg[key] += delta[key]
            continue
        assert key == "tool_calls", line
        (call,) = delta[key]
        n = call["index"]
        calls = msg["tool_calls"]
        if "id" in call:
            assert n == len(calls) and call["id"] == "call_%d" % n, line
            assert call["type"] == "function" and call["function"]["arguments"] == ""
            entry = {"type": "function",
                     "function": {"name": call["function"]["name"], "arguments": ""}}
            if "namespace" in call:
                entry["namespace"] = call["namespace"]
            calls.append(entry)
        else:
            assert set(call) == {"index", "function"} and set(call["function"]) == {"arguments"}
            assert 0 <= n < len(calls), line
            calls[n]["function"]["arguments"] += call["function"]["arguments"]
    want_finish = "tool_calls" if msg["tool_calls"] else "stop"
    if finish != want_finish:
        raise AssertionError("finish_reason %r, expected %r" % (finish, want_finish))
    return msg


def same(got, want):
    keep = ("content", "reasoning_content", "tool_calls")
    return got == {k: want[k] for k in keep}


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    stream, golden = sys.argv[1], sys.argv[2]
    checked = failed = 0
    with tempfile.NamedTemporaryFile(prefix="dsml-stream-") as tmp:
        with open(golden, encoding="utf-8") as f:
            for line in f:
                case = json.loads(line)
                want = case["expect"].get("message")
                if want is None:
                    continue
                chunk = CHUNKS[checked % len(CHUNKS)]
                tmp.seek(0)
                tmp.truncate()
                tmp.write(case["text"].encode("utf-8"))
                tmp.flush()
                try:
                    got = replay(stream, tmp.name, case["thinking_mode"] == "thinking", chunk)
                    if not same(got, want):
                        raise AssertionError("got %s\nwant %s" % (json.dumps(got), json.dumps(want)))
                except (AssertionError, ValueError, KeyError) as e:
                    failed += 1
                    print("FAIL %s (chunk %d): %s" % (case["id"], chunk, e))
                checked += 1
    print("%d golden completions streamed, %d failed" % (checked, failed))
    if len(sys.argv) == 5:
        completion, cli = sys.argv[3], sys.argv[4]
        want = json.loads(subprocess.run([cli, "parse", "--thinking", "--strict", completion],
                                         stdout=subprocess.PIPE, check=True).stdout)
        for chunk in CHUNKS:
            checked += 1
            got = replay(stream, completion, True, chunk)
            if not same(got, want):
                failed += 1
                print("FAIL %s (chunk %d): got %s" % (completion, chunk, json.dumps(got)))
        print("%s: %d chunk sizes checked against dsml-render parse" % (completion, len(CHUNKS)))
    if checked == 0 or failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
