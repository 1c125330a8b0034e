"""Generated tests with function calls that make async copies, asyncmarks and waits
(docs/semantics.md R-call-async-seq, §15.8) for the differential run: up to three functions,
each a straight-line body of copies, marks, waits, loads and stores of sources and destinations,
and calls of earlier functions (so calls nest, never recursively), sometimes with a branch on a
flag another workgroup sets around a wait (the branch belongs to the callee's body execution);
an i32 function returns a
load it made, so what a callee sees is in the outcome. The thread calls them among its own
copies, marks, waits and loads, sometimes from a counted loop (each iteration is another
execution of the body, with a sequence of its own), and a second wave of the workgroup may
store to a source or a destination. MMRA tags on some waits and loads reach the readings that
differ only where tags cut program order (R-async-done-every, R-async-po-after-done)."""

from __future__ import annotations

import random

COPY = ("call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @{src}, "
        "ptr addrspace(3) @{dst}, i32 4, i32 0, i32 0){tag}")
TAGS = ["", "", "", ', !mmra !{!"foo", !"bar"}', ', !mmra !{!"foo", !"baz"}']
SPACE = {"x": 1, "y": 1, "l": 3, "m": 3}


def _op(rng, regs: list, calls: list, in_fn: bool) -> list:
    k = rng.choice(["copy", "copy", "copy", "mark", "mark", "wait", "wait", "load", "store",
                    "call", "call"])
    tag = rng.choice(TAGS)
    if k == "copy":
        return [COPY.format(src=rng.choice(["x", "y"]), dst=rng.choice(["l", "m"]), tag=tag)]
    if k == "mark":
        return ["call void @llvm.amdgcn.asyncmark()"]
    if k == "wait":
        return [f"call void @llvm.amdgcn.wait.asyncmark(i16 {rng.choice([0, 0, 1, 2])}){tag}"]
    if k == "load":
        loc = rng.choice(["l", "m", "l", "x"])
        r = f"r{len(regs)}"
        regs.append(r)
        return [f"%{r} = load i32, ptr addrspace({SPACE[loc]}) @{loc}{tag}"]
    if k == "store":
        loc = rng.choice(["l", "x", "m"])
        return [f"store i32 {rng.choice([5, 6])}, ptr addrspace({SPACE[loc]}) @{loc}"]
    if not calls:
        return []
    name, ret = rng.choice(calls)
    if ret:
        r = f"r{len(regs)}"
        regs.append(r)
        return [f"%{r} = call i32 @{name}()"]
    return [f"call void @{name}()"]


def calls_test(rng: random.Random, name: str = "gen-calls") -> str:
    funcs, calls = [], []
    flag = [False]
    for k in range(rng.choice([1, 2, 2, 3])):
        body, regs = [], []
        for _ in range(rng.choice([1, 2, 3, 3])):
            body += _op(rng, regs, calls, True)
        if not any("async" in b or "@f" in b for b in body):
            body.insert(0, COPY.format(src="x", dst="l", tag=""))
        if rng.random() < 0.5:      # S004's block: copies closed by a mark (outstanding)
            body.append("call void @llvm.amdgcn.asyncmark()")
        ret = bool(regs) and rng.random() < 0.6
        if ret:
            body.append(f"ret i32 %{regs[-1]}")
        else:
            body.append("ret void")
        fname = f"f{k}"
        if rng.random() < 0.15:     # a branch on a flag another wave may set, around a wait
            fv = f"fl{k}"
            body = (["entry:"] + body[:-1]
                    + [f"%{fv} = load atomic i32, ptr addrspace(1) @f syncscope(\"agent\") "
                       "monotonic", f"%c{k} = icmp eq i32 %{fv}, 0",
                       f"br i1 %c{k}, label %w{k}, label %e{k}", f"w{k}:",
                       f"call void @llvm.amdgcn.wait.asyncmark(i16 {rng.choice([0, 1])})",
                       f"br label %e{k}", f"e{k}:", body[-1]])
            flag[0] = True
        funcs.append(f"define {'i32' if ret else 'void'} @{fname}() {{\n"
                     + "".join(f"  {b}\n" for b in body) + "}\n")
        calls.append((fname, ret))
    regs: list = []
    code = []
    for _ in range(rng.choice([1, 2, 3])):
        code += _op(rng, regs, calls, False)
    if not any("@f" in c for c in code) or rng.random() < 0.5:
        f, ret = rng.choice(calls)
        if ret:
            regs.append(f"r{len(regs)}")
        code.append(f"%{regs[-1]} = call i32 @{f}()" if ret else f"call void @{f}()")
    code += ["call void @llvm.amdgcn.wait.asyncmark(i16 " + str(rng.choice([0, 0, 1])) + ")"] \
        if rng.random() < 0.7 else []
    for _ in range(rng.choice([1, 2])):
        loc = rng.choice(["l", "m"])
        r = f"r{len(regs)}"
        regs.append(r)
        code.append(f"%{r} = load i32, ptr addrspace(3) @{loc}{rng.choice(TAGS)}")
    loop = rng.random() < 0.25
    if loop:                       # a counted loop around one call: two body executions
        f, ret = rng.choice(calls)
        callline = f"%c = call i32 @{f}()" if ret else f"call void @{f}()"
        code = (["entry:", "  br label %loop", "loop:",
                 "  %i = phi i32 [ 0, %entry ], [ %i1, %latch ]", "  " + callline,
                 "  br label %latch", "latch:",
                 "  %i1 = add i32 %i, 1", "  %k = icmp ult i32 %i1, 2",
                 "  br i1 %k, label %loop, label %out", "out:"]
                + ["  " + c for c in code if "@f" not in c])
    lines = [f"name: {name}", "description: generated (tests/gen_async_calls.py)"]
    if loop or flag[0]:
        lines.append("unroll: 2")
    lines.append("functions: |")
    lines += ["  " + ln for f in funcs for ln in f.splitlines()]
    lines += ["memory:", "  x: {space: global, init: 11}", "  y: {space: global, init: 22}",
              "  l: {space: local, init: 33}", "  m: {space: local, init: 44}",
              "  f: {space: global, init: 0}",
              "threads:", "  T0:", "    code: |"]
    lines += ["      " + c for c in code]
    if flag[0]:
        lines += ["  T1:", "    workgroup: 1", "    code: |",
                  '      store atomic i32 1, ptr addrspace(1) @f syncscope("agent") monotonic']
    elif rng.random() < 0.15:
        loc = rng.choice(["l", "x"])
        lines += ["  T1:", "    code: |",
                  f"      store i32 9, ptr addrspace({SPACE[loc]}) @{loc}"]
    lines.append("outcomes: []")
    text = "\n".join(lines) + "\n"
    if not loop and flag[0]:        # the branchy function may be called by no one
        from amdmm_smt.errors import LitmusError
        from amdmm_smt.frontend.litmus import parse_text
        try:
            parse_text(text, "gen.yaml")
        except LitmusError as e:
            if "'unroll' needs control flow" not in e.message:
                raise
            text = text.replace("unroll: 2\n", "", 1)
    return text


def calls_examples(n: int, seed: int = 0) -> list:
    rng = random.Random(seed)
    return [calls_test(rng, f"gen-calls-{i}") for i in range(n)]
