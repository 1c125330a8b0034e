"""Function calls, inlined (issue 18 item 3; docs/semantics.md 15.8, R-call-inline)."""

from __future__ import annotations

import os

import pytest

from amdmm_smt.elaborate.events import elaborate
from amdmm_smt.errors import LitmusError
from amdmm_smt.frontend.litmus import parse_file, parse_text
from amdmm_smt.model import get_model
from amdmm_smt.reference import run_reference
from amdmm_smt.report.table import verdict_text
from amdmm_smt.solve import run_test

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIT = os.path.join(ROOT, "litmus")


def both(t, model="seed"):
    m = get_model(model) if isinstance(model, str) else model
    a, b = run_test(t, m), run_reference(t, m)
    assert set(a.states) == set(b.states)
    return set(a.states)


def test_the_call_form_of_s004s_example_is_the_hand_inlined_test():
    call = parse_file(os.path.join(LIT, "calls", "async-ordinary-call.yaml"))
    hand = parse_file(os.path.join(LIT, "async", "async-inlined-call.yaml"))
    for m in ("seed", "upstream-2026"):
        assert both(call, m) == both(hand, m)


def test_inlined_code_is_the_written_out_code():
    t = parse_file(os.path.join(LIT, "calls", "MP+calls.agent.diff-wg.yaml"))
    p0, p1 = t.threads
    # docs R-call-async-seq: an `enter` (no event) marks where the call's body execution begins
    assert p0.code[0].kind == "enter" and p0.code[0].frame == (1,)
    assert [i.text for i in p0.code if i.kind != "enter"] == [
        "store i32 1, ptr addrspace(1) @x",
        'store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release']
    assert all(i.frame == (1,) for i in p0.code)
    code1 = [i for i in p1.code if i.kind != "enter"]
    assert code1[0].reg == "f" and code1[0].loc == "y"    # the callee's %got is P1's %f
    assert [i.reg for i in code1 if i.reg] == ["f", "r"]


MP_TWO_CALLS = """
name: two-calls
functions: |
  define i32 @spin(ptr addrspace(1) %p, i32 %want) {
  entry:
    br label %top
  top:
    %v = load atomic i32, ptr addrspace(1) %p syncscope("agent") acquire
    %c = icmp ne i32 %v, %want
    br i1 %c, label %top, label %out
  out:
    ret i32 %v
  }
unroll: 2
bound: assume
memory:
  x: {space: global}
  y: {space: global}
threads:
  P0:
    workgroup: 0
    code: |
      store atomic i32 1, ptr addrspace(1) @x syncscope("agent") release
      store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release
  P1:
    workgroup: 1
    code: |
      %a = call i32 @spin(ptr addrspace(1) @x, i32 1)
      %b = call i32 @spin(ptr addrspace(1) @y, i32 1)
"""


def test_two_calls_of_a_looping_function_get_their_own_blocks():
    t = parse_text(MP_TWO_CALLS, "two.yaml")
    labels = [i.targets[0] for i in t.threads[1].code if i.kind == "label"]
    assert labels == ["entry.spin.1", "top.spin.1", "out.spin.1", "ret.spin.1",
                      "entry.spin.2", "top.spin.2", "out.spin.2", "ret.spin.2"]
    # bound: assume keeps the executions in which both spins end: each read 1
    assert both(t) == {(("P1:%a", 1), ("P1:%b", 1))}


def test_nested_calls_and_register_arguments():
    text = """
name: nested
functions: |
  define void @put(ptr addrspace(1) %p, i32 %v) {
    store i32 %v, ptr addrspace(1) %p
    ret void
  }
  define i32 @copy(ptr addrspace(1) %from, ptr addrspace(1) %to) {
    %t = load i32, ptr addrspace(1) %from
    call void @put(ptr addrspace(1) %to, i32 %t)
    ret i32 %t
  }
memory:
  a: {space: global, init: 5}
  b: {space: global}
threads:
  T0:
    code: |
      %r = call i32 @copy(ptr addrspace(1) @a, ptr addrspace(1) @b)
      %s = load i32, ptr addrspace(1) @b
"""
    t = parse_text(text, "nested.yaml")
    assert both(t) == {(("T0:%r", 5), ("T0:%s", 5))}


def test_a_constant_result_is_copied():
    text = """
name: const-ret
functions: |
  define i32 @seven() {
    ret i32 7
  }
memory:
  a: {space: global}
threads:
  T0:
    code: |
      %r = call i32 @seven()
      store i32 %r, ptr addrspace(1) @a
exists: "@a == 7"
expect: allowed
"""
    t = parse_text(text, "c.yaml")
    assert both(t) == {(("T0:%r", 7), ("@a", 7))}


@pytest.mark.parametrize("body,needle", [
    ("define void @f() {\n    ret i32 1\n  }", "returns void: `ret i32 1` does not"),
    ("define void @f() {\n    ret void\n  }\n  define void @f() {\n    ret void\n  }",
     "defined twice"),
    ("define void @llvm.amdgcn.s.barrier() {\n    ret void\n  }", "cannot define an intrinsic"),
    ("define void @f(float %x) {\n    ret void\n  }", "expected `ptr addrspace(N) %name`"),
])
def test_bad_definitions_are_errors_with_the_line(body, needle):
    text = ("name: bad\nfunctions: |\n  " + body + "\nmemory:\n  x: {space: global}\n"
            "threads:\n  T0:\n    code: |\n      call void @f()\n")
    with pytest.raises(LitmusError) as e:
        parse_text(text, "bad.yaml")
    assert needle in e.value.message and e.value.line is not None


def test_the_elaboration_sees_no_call():
    t = parse_file(os.path.join(LIT, "calls", "async-ordinary-call.yaml"))
    el = elaborate(t, get_model("seed"))
    assert not any("@bar" in (i.text or "") for th in t.threads for i in th.code
                   if i.kind != "enter")
    assert sum(1 for e in el.events if e.kind == "dma") >= 4
    # the call's body execution is known (docs R-call-async-seq), not as an event
    assert not any(e.kind == "enter" for e in el.events)
    assert {e.body for e in el.events if e.kind == "dma"} == {0, 1}


# ---- per-function asyncmark sequences (issue 28 item 1, docs R-call-async-seq) ---------------

CALL_PINS = sorted(f for f in os.listdir(os.path.join(LIT, "calls"))
                   if f.startswith("async-call-") and f.endswith(".yaml"))


SAME_UNDER_BOTH = {"async-call-branch-wait.yaml"}


def _calls_model(base: str, value: str):
    from dataclasses import replace
    m = get_model(base)
    return replace(m, name=f"{base}+{value}", options=replace(m.options, async_calls=value))


@pytest.mark.parametrize("name", CALL_PINS)
def test_call_pins_hold_in_both_engines_and_both_async_versions(name):
    """Each hand-derived call test holds in both engines, under its own reading (the default
    per-function, or `.inlined`), with the seed and the upstream async version alike (no
    derivation of these tests depends on program order of the copies or on stages)."""
    t = parse_file(os.path.join(LIT, "calls", name))
    value = "inlined" if name.endswith(".inlined.yaml") else "per-function"
    for base in ("seed", "upstream-2026"):
        m = _calls_model(base, value)
        for r in (run_test(t, m), run_reference(t, m)):
            assert r.status == "pass", (base, verdict_text(r))


@pytest.mark.parametrize("name", CALL_PINS)
def test_each_call_pin_fails_under_the_other_reading(name):
    """The twins pin a difference: each fails under the other value of async_calls (except a
    test whose marks and waits are all in one body, which pins the body a branch belongs to)."""
    t = parse_file(os.path.join(LIT, "calls", name))
    other = "per-function" if name.endswith(".inlined.yaml") else "inlined"
    if name in SAME_UNDER_BOTH:      # one body makes every mark and wait: no difference
        assert run_test(t, _calls_model("seed", other)).status == "pass"
        return
    assert run_test(t, _calls_model("seed", other)).status == "fail"


def test_each_call_in_a_loop_is_a_body_execution_of_its_own():
    """S004 "during the execution of a function body": a call made in each iteration of a loop
    is one execution per iteration, each with its own sequence (elaborate.body_executions);
    nested calls and the caller's code after a return are told apart."""
    from amdmm_smt.elaborate.events import body_executions
    from amdmm_smt.ir import Instr
    code = [Instr("enter", 1, "", frame=(1,)), Instr("asyncmark", 2, "", frame=(1,)),
            Instr("enter", 3, "", frame=(1, 2)), Instr("asyncmark", 4, "", frame=(1, 2)),
            Instr("asyncmark", 5, "", frame=(1,)), Instr("asyncmark", 6, ""),
            Instr("enter", 1, "", frame=(1,)), Instr("asyncmark", 2, "", frame=(1,)),
            Instr("enter", 1, "", frame=(1,)), Instr("asyncmark", 2, "", frame=(1,))]
    assert body_executions(code) == [1, 1, 2, 2, 1, 0, 3, 3, 4, 4]
    text = """
name: loop-call
unroll: 2
functions: |
  define void @issue() {
    call void @llvm.amdgcn.wait.asyncmark(i16 0)
    call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @g, ptr addrspace(3) @l, i32 4, i32 0, i32 0)
    call void @llvm.amdgcn.asyncmark()
    ret void
  }
memory:
  g: {space: global, init: 7}
  l: {space: local, init: 0}
threads:
  T0:
    code: |
      entry:
        br label %loop
      loop:
        %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
        call void @issue()
        %i1 = add i32 %i, 1
        %c = icmp ult i32 %i1, 2
        br i1 %c, label %loop, label %out
      out:
        call void @llvm.amdgcn.wait.asyncmark(i16 0)
        %r = load i32, ptr addrspace(3) @l
"""
    # Inlined: the second iteration's wait(0) completes the first copy before the second is
    # initiated (so the first happens-before the second) and the final wait(0) completes the
    # second: the load sees the second copy only, 7. Per-function: every wait examines a
    # sequence of its own, empty (a fresh execution of @issue, or the thread's code, which
    # makes no mark), so each copy's completion at each later wait is unspecified: with both
    # marks completed in time 7, else the two copies race with each other or with the load
    # (R-async-two-async): undef.
    t = parse_text(text, "loop.yaml")
    for m in ("seed", "upstream-2026"):
        assert {dict(st)["T0:%r"] for st in both(t, m)} == {7, None}
        assert {dict(st)["T0:%r"] for st in both(t, _calls_model(m, "inlined"))} == {7}


def test_async_calls_changes_nothing_without_calls():
    """async_calls only splits sequences at calls: every async and forms corpus test (no
    function calls) gives the same outcomes under both values, both async versions."""
    import glob
    files = sorted(glob.glob(os.path.join(LIT, "async", "*.yaml"))
                   + glob.glob(os.path.join(LIT, "forms", "*.yaml")))
    assert len(files) >= 40
    for f in files:
        t = parse_file(f)
        base = "upstream-2026" if t.model == "upstream-2026" else "seed"
        a = run_test(t, _calls_model(base, "per-function"))
        b = run_test(t, _calls_model(base, "inlined"))
        assert set(a.states) == set(b.states), f


def test_explain_names_the_unspecified_completion_it_chose():
    """An `explain` witness says which unspecified completion its execution takes (docs
    R-call-async-seq): in async-call-nested, r1 undef and r3 7 need inner's mark completed at
    the thread's last wait, not at outer's."""
    from amdmm_smt.explain.witness import explain, format_text, parse_outcome
    t = parse_file(os.path.join(LIT, "calls", "async-call-nested.yaml"))
    ex = explain(t, get_model("seed"), parse_outcome(t, "T0:%r1 == undef && T0:%r3 == 7"))
    text = format_text(ex)
    assert "ALLOWED" in text
    assert "unspecified completion (R-call-async-seq): asyncmark T0:20 completed at T0:44" in text
