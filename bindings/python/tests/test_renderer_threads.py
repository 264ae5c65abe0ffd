"""encode_messages through the binding's per-thread renderer: sessions of
growing and shrinking size, on one thread and on several at once, give the
prompt of a fresh process's first call."""
import threading
import unittest

import _support  # noqa: F401  (loads the library)
import dsml
from dsml import render as R


def session(turns):
    messages = [{"role": "system", "content": "tools below"}]
    for i in range(turns):
        messages.append({"role": "user", "content": "question %d \u00e9t\u00e9 " % i * 3})
        messages.append({"role": "assistant", "content": "", "reasoning_content": "step %d" % i,
                         "tool_calls": [{"id": "c%d" % i, "type": "function",
                                         "function": {"name": "get",
                                                      "arguments": '{"q": "x%d"}' % i}}]})
        messages.append({"role": "tool", "tool_call_id": "c%d" % i, "content": "r%d" % i})
    return messages


class RendererReuse(unittest.TestCase):
    SIZES = (1, 300, 20, 1000, 5, 300, 1)

    def expected(self):
        # each size rendered by a renderer of its own, used once
        want = {}
        for n in set(self.SIZES):
            R._thread.renderer = None
            want[n] = dsml.encode_messages(session(n), "thinking")
        R._thread.renderer = None
        return want

    def test_sizes_up_and_down(self):
        want = self.expected()
        first = R._renderer()
        for n in self.SIZES:
            self.assertEqual(dsml.encode_messages(session(n), "thinking"), want[n])
        self.assertEqual(R._renderer(), first)  # one renderer for the thread

    def test_threads(self):
        want = self.expected()
        failures = []
        handles = []
        together = threading.Barrier(4)

        def work(k):
            handles.append(R._renderer())
            for i in range(len(self.SIZES)):
                n = self.SIZES[(i + k) % len(self.SIZES)]
                if dsml.encode_messages(session(n), "thinking") != want[n]:
                    failures.append((k, n))
            together.wait()  # every renderer alive at once

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])
        self.assertEqual(len(set(handles)), 4)  # one renderer a thread


if __name__ == "__main__":
    unittest.main()
