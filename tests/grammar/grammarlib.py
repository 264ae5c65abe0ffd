"""Helpers of the grammar tests: the tools a golden completion needs, read
back from its expected calls; the GBNF reader (rule structure, and GBNF
turned into Lark so that python3-lark can run it); mutations of a
completion."""
import json
import random
import re

D = "｜DSML｜"
EOS = "<｜end▁of▁sentence｜>"

# The names after the DSML marker: the block, an invoke, a parameter.
TAGS = {"v41": (" calls", " invoke", " parameter"),
        "prerelease": (" calls", " invoke", " parameter"),
        "v4": ("tool_calls", "invoke", "parameter"),
        "v32": ("function_calls", "invoke", "parameter")}
V41 = TAGS["v41"]


def load_lark():
    """The lark module, or None.  Debian's python3-lark lives in
    /usr/lib/python3/dist-packages, which another interpreter may not
    search."""
    try:
        import lark  # noqa: F401
        return lark
    except ImportError:
        pass
    import sys
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import lark  # noqa: F401
        return lark
    except ImportError:
        return None


# ---- tools from calls ---------------------------------------------------

def _kind(v):
    if isinstance(v, bool):
        return "boolean"
    if v is None:
        return "null"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def schema_of(values):
    """A schema every one of the values matches, as close as the values
    say: their types; objects with the keys all of them have required, in
    the order they appear (objects whose keys come in orders no one order
    fits get a schema each, in an anyOf); arrays with items of their
    elements' schema."""
    kinds = []
    for v in values:
        k = _kind(v)
        if k not in kinds:
            kinds.append(k)
    if "integer" in kinds and "number" in kinds:
        kinds.remove("integer")
    branches = []
    scalars = [k for k in kinds if k not in ("array", "object")]
    if scalars:
        branches.append({"type": scalars[0] if len(scalars) == 1 else scalars})
    if "array" in kinds:
        items = [e for v in values if isinstance(v, list) for e in v]
        s = {"type": "array"}
        if items:
            s["items"] = schema_of(items)
        branches.append(s)
    if "object" in kinds:
        for group in order_groups([v for v in values if isinstance(v, dict)]):
            branches.append(object_schema(group))
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


def key_order(dicts):
    """One order of all the keys of the dicts that keeps each dict's order
    (first appearance breaks ties), or None when there is none."""
    keys, after = [], {}
    for d in dicts:
        ks = list(d)
        for k in ks:
            if k not in after:
                keys.append(k)
                after[k] = set()
        for a, b in zip(ks, ks[1:]):
            after[a].add(b)
    before = {k: sum(k in after[a] for a in keys) for k in keys}
    order = []
    while len(order) < len(keys):
        ready = [k for k in keys if before[k] == 0 and k not in order]
        if not ready:
            return None
        order.append(ready[0])
        for b in after[ready[0]]:
            before[b] -= 1
    return order


def order_groups(dicts):
    """The dicts in groups whose key orders one order fits (the grammar
    writes properties in their schema's order)."""
    groups = []
    for d in dicts:
        for g in groups:
            if key_order(g + [d]) is not None:
                g.append(d)
                break
        else:
            groups.append([d])
    return groups


def object_schema(dicts):
    keys = key_order(dicts)
    props = {k: schema_of([d[k] for d in dicts if k in d]) for k in keys}
    required = [k for k in keys if all(k in d for d in dicts)]
    s = {"type": "object", "properties": props}
    if required:
        s["required"] = required
    return s


def call_name(call):
    """The name an invoke tag writes: "ns::name" when the call has a
    namespace."""
    name = call["function"]["name"]
    return call["namespace"] + "::" + name if "namespace" in call else name


def tools_for(calls):
    """OpenAI tools for the expected calls of a completion: one a name --
    or more, when its calls order their parameters in ways no one order fits
    --, parameters inferred from the arguments of its calls (the golden
    completions carry no tool declarations).  None when an arguments text is
    not JSON (the reference inserts string="false" text verbatim; no schema
    describes it)."""
    by_name = {}
    for c in calls:
        try:
            args = json.loads(c["function"]["arguments"])
        except ValueError:
            return None
        by_name.setdefault(call_name(c), []).append(args)
    tools = []
    for name, args in by_name.items():
        for group in order_groups(args):
            tools.append({"type": "function", "function": {
                "name": name, "parameters": object_schema(group)}})
    return tools


# ---- GBNF ------------------------------------------------------------------

TOKEN = re.compile(r'\s+|"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|[a-z][a-z0-9-]*|[()|*+?]')


def rule_lines(text, pattern):
    """(name, body) of each line of a grammar text, one rule a line matching
    `pattern` (blank lines and # comments skipped); raises ValueError for
    another line or a name defined twice."""
    seen = set()
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(pattern, line)
        if m is None:
            raise ValueError(f"not a rule: {line[:80]!r}")
        name, body = m.groups()
        if name in seen:
            raise ValueError(f"rule {name} defined twice")
        seen.add(name)
        yield name, body


def gbnf_rules(text):
    """{name: [tokens]} of a GBNF text, in order; raises ValueError when a
    line is not `name ::= body` or a body does not tokenize."""
    rules = {}
    for name, body in rule_lines(text, r"([a-z][a-z0-9-]*) ::= (.*)$"):
        toks, at = [], 0
        while at < len(body):
            t = TOKEN.match(body, at)
            if t is None:
                raise ValueError(f"rule {name}: cannot read {body[at:at + 40]!r}")
            at = t.end()
            if not t.group().isspace():
                toks.append(t.group())
        depth = 0
        for t in toks:
            depth += t == "("
            depth -= t == ")"
            if depth < 0:
                raise ValueError(f"rule {name}: unbalanced parentheses")
        if depth != 0 or not toks:
            raise ValueError(f"rule {name}: unbalanced parentheses or empty body")
        rules[name] = toks
    return rules


def gbnf_check(text):
    """The structure of a GBNF grammar: a root; every rule referred to is
    defined; every rule defined is reached from the root.  Returns the rule
    names."""
    rules = gbnf_rules(text)
    if "root" not in rules:
        raise ValueError("no root rule")
    seen, todo = {"root"}, ["root"]
    while todo:
        for t in rules[todo.pop()]:
            if re.fullmatch(r"[a-z][a-z0-9-]*", t):
                if t not in rules:
                    raise ValueError(f"rule {t} is referred to but not defined")
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
    unused = set(rules) - seen
    if unused:
        raise ValueError(f"rules defined but never used: {sorted(unused)[:5]}")
    return list(rules)


def lark_class(t):
    r"""A GBNF class ([^\x3C｜]) as Lark reads a regular expression: Lark turns
    \xHH into the character itself before Python's re sees it, so
    punctuation gets a backslash instead.  A raw '-' is a range, a raw '^'
    first a negation."""
    out = "["
    for i, m in enumerate(re.finditer(r"\\x[0-9A-Fa-f]{2}|.", t[1:-1], re.S)):
        tok = m.group()
        if tok == "^" and i == 0 or tok == "-":
            out += tok
            continue
        c = chr(int(tok[2:], 16)) if tok.startswith("\\x") else tok
        if ord(c) < 0x20:
            out += "\\x%02X" % ord(c)
        elif ord(c) < 0x80 and not c.isalnum():
            out += "\\" + c
        else:
            out += c
    return out + "]"


def gbnf_to_lark(text):
    """The same grammar in Lark, rule for rule: classes become one-character
    regular expressions, and every parenthesized group a rule of its own (Lark
    would multiply nested choices out)."""
    out = []
    groups = []

    def name_of(t):
        return "start" if t == "root" else "r_" + t.replace("-", "_")

    def convert(toks):
        body, stack = [], []
        for t in toks:
            if t == "(":
                stack.append(body)
                body = []
            elif t == ")":
                groups.append(" ".join(body))
                body = stack.pop()
                body.append(f"g_{len(groups)}")
            elif t.startswith("["):
                body.append("/" + lark_class(t) + "/")
            elif re.fullmatch(r"[a-z][a-z0-9-]*", t):
                body.append(name_of(t))
            else:
                body.append(t)
        return " ".join(body)

    for name, toks in gbnf_rules(text).items():
        out.append(name_of(name) + ": " + convert(toks))
    for i, g in enumerate(groups, 1):
        out.append(f"g_{i}: {g}")
    return "\n".join(out) + "\n"


# ---- many Lark grammars in one parser ------------------------------------------

LARK_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|/(?:\\.|[^/\\\n])+/[imslux]*|[A-Za-z_][A-Za-z0-9_]*'
                        r'|\s+|.', re.S)
LARK_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def lark_rules(text):
    """{name: [tokens]} of a Lark grammar as dsml-render and gbnf_to_lark
    write it (one `name: body` a line), in order."""
    return {name: LARK_TOKEN.findall(body)
            for name, body in rule_lines(text, r"([A-Za-z_][A-Za-z0-9_]*): (.*)$")}


class LarkBatch:
    """Many Lark grammars built as one parser, each grammar its own start
    symbol.  Lark's cost is building a parser (reading the grammar, the
    widths of its regular expressions, the parser's sets), and the grammars
    of a test share most of their rules: the text, value and JSON lexemes
    everywhere, a tool's rules among the tool_choice forms of one tool set.
    Rules are written once a class: two rules are in one class when they
    are both terminals or both rules, their bodies are the same but for the
    names they refer to, and those names are, in turn, in the same classes
    (the coarsest such partition, found by refining).  Rules of one class
    derive the same language, so each start symbol derives exactly its
    grammar's; and Earley (with its dynamic lexer, the default) scans only
    the terminals its start can reach.  Identical grammars are one."""

    def __init__(self, lark):
        self.lark = lark
        self.keys = {}       # grammar text -> its number
        self.grammars = []   # {name: tokens} of each grammar
        self.starts = []     # the start symbol of each
        self.parser = None

    def add(self, text):
        """The key of the grammar `text` (a Lark grammar whose root is
        `start`) for accepts()."""
        if text not in self.keys:
            self.keys[text] = len(self.grammars)
            self.grammars.append(lark_rules(text))
            self.parser = None
        return self.keys[text]

    def text(self):
        """The one grammar; sets the start symbol of each grammar."""
        nodes, shape, refs = [], {}, {}
        for g, rules in enumerate(self.grammars):
            for name, toks in rules.items():
                node = (g, name)
                nodes.append(node)
                named = [LARK_NAME.fullmatch(t) is not None and t in rules for t in toks]
                shape[node] = (name[0].isupper(),
                               tuple("\0" if k else t for t, k in zip(toks, named)))
                refs[node] = [(g, t) for t, k in zip(toks, named) if k]
        ids = {}
        cls = {n: ids.setdefault(shape[n], len(ids)) for n in nodes}
        while True:  # refine until no class splits
            ids = {}
            new = {n: ids.setdefault((cls[n], tuple(cls[r] for r in refs[n])), len(ids))
                   for n in nodes}
            stable = len(ids) == len(set(cls.values()))
            cls = new
            if stable:
                break
        names, lines = {}, []
        for g, name in nodes:  # a class is named after its first rule
            c = cls[(g, name)]
            if c in names:
                continue
            names[c] = name + ("_C%d" if name[0].isupper() else "_c%d") % c
        written = set()
        for g, name in nodes:
            c = cls[(g, name)]
            if c in written:
                continue
            written.add(c)
            rules = self.grammars[g]
            body = "".join(names[cls[(g, t)]] if LARK_NAME.fullmatch(t) and t in rules else t
                           for t in rules[name])
            lines.append(names[c] + ": " + body)
        self.starts = [names[cls[(g, "start")]] for g in range(len(self.grammars))]
        return "\n".join(lines) + "\n"

    def accepts(self, key, text):
        if self.parser is None:
            grammar = self.text()
            self.parser = self.lark.Lark(grammar, start=sorted(set(self.starts)))
        try:
            self.parser.parse(text, start=self.starts[key])
            return True
        except self.lark.exceptions.LarkError:
            return False

# ---- mutations -------------------------------------------------------------

class Param:
    """One parameter as the reference reads it: the span of its line (the
    "\n" after its closing tag included), its name."""

    def __init__(self, start, end, name):
        self.span = (start, end)
        self.key = name

    def start(self):
        return self.span[0]

    def end(self):
        return self.span[1]

    def group(self, i):
        return self.key


def invokes(text, tags=V41):
    """(start, end, name, [Param]) of each invoke of the calls block, read as
    the reference's parser reads them: a name runs to the first parameter
    tag or closing tag, a value to the first "/｜DSML｜ parameter"."""
    blk, inv, par = tags
    block = text.find("\n\n<" + D + blk + ">\n")
    inv_open, inv_close = "<" + D + inv, "</" + D + inv
    par_open, par_stop = "<" + D + par, "/" + D + par
    out, at = [], block
    while True:
        start = text.find(inv_open, at)
        if start < 0:
            return out
        head = start + len(inv_open)
        stops = [i for i in (text.find(par_open, head), text.find(inv_close, head)) if i >= 0]
        body = min(stops)
        name = re.match(r'\s*name="(.*?)">\n\n?$', text[head:body], re.S).group(1)
        params = []
        while text.startswith(par_open, body):
            stop = text.index(par_stop, body)
            m = re.match(r' name="(.*?)" string="(true|false)">', text[body + len(par_open):], re.S)
            end = stop + len(par_stop) + 2  # ">\n"
            params.append(Param(body, end, m.group(1)))
            body = end
        close = text.index(inv_close, body)
        out.append((start, close, name, params))
        at = close


def undeclared_name(text, tags=V41):
    inv = invokes(text, tags)[0]
    at = text.index('"', inv[0]) + 1 + len(inv[2])
    return text[:at] + "_undeclared" + text[at:]


def missing_required(text, tools, tags=V41):
    """The text without the first parameter every declaration of its tool
    requires, or None."""
    required = {}
    for t in tools:
        req = set(t["function"]["parameters"].get("required", []))
        name = t["function"]["name"]
        required[name] = required[name] & req if name in required else req
    for _, _, name, params in invokes(text, tags):
        for p in params:
            if p.group(1) in required.get(name, ()):
                return text[:p.start()] + text[p.end():]
    return None


def _types(schema):
    if "anyOf" in schema:
        return {t for b in schema["anyOf"] for t in _types(b)}
    t = schema.get("type")
    return set(t) if isinstance(t, list) else {t}


def wrong_type(text, tools, tags=V41):
    """The first parameter with a value of a type its schema does not allow,
    or None."""
    props = {}
    for t in tools:
        for k, v in t["function"]["parameters"]["properties"].items():
            props.setdefault(t["function"]["name"], {}).setdefault(k, set()).update(_types(v))
    par = tags[2]
    for _, _, name, params in invokes(text, tags):
        for p in params:
            kinds = props[name][p.group(1)]
            for value, kind in (("true", "boolean"), ("null", "null"), ("12345", "integer"),
                                ("[]", "array"), ("{}", "object")):
                if kind not in kinds and not (kind == "integer" and "number" in kinds):
                    line = ('<' + D + par + ' name="' + p.group(1) + '" string="false">' +
                            value + '</' + D + par + '>\n')
                    return text[:p.start()] + line + text[p.end():]
    return None


def stray_bytes(text, seed, tags=V41):
    """Texts with one byte put inside one tag (not inside a name, which could
    become another declared one): the block's opener and closer, each
    invoke's tags, each parameter's opening tag.  Not a raw value's closing
    tag: the reference reads such a value on, to the next closer, and so may
    the grammar."""
    blk, inv, par = tags
    rnd = random.Random(seed)
    spans = []
    opener = text.find("\n\n<" + D + blk + ">\n")
    spans.append((opener + 2, opener + 2 + len("<" + D + blk + ">")))
    closer = text.rfind("</" + D + blk + ">")
    spans.append((closer, closer + len("</" + D + blk + ">")))
    for start, end, _, params in invokes(text, tags):
        spans.append((start, start + len("<" + D + inv + ' name="')))
        spans.append((end, end + len("</" + D + inv + ">")))
        for p in params:
            spans.append((p.start(), p.start() + len("<" + D + par + ' name="')))
    out = []
    for a, b in spans:
        at = rnd.randrange(a + 1, b)
        out.append(text[:at] + rnd.choice("x \n\"<") + text[at:])
    return out
