"""The parser accepts the whole contract and rejects malformed input with file and line."""

import pytest

from amdmm_smt.errors import LitmusError
from amdmm_smt.frontend.litmus import parse_file

HEAD = """
name: t
memory:
  x: {space: global}
  y: {space: global, init: 3}
  l: {space: local}
  nb: {space: barrier}
threads:
  T0:
    code: |
"""


def src(*lines, extra=""):
    return HEAD + "".join(f"      {ln}\n" for ln in lines) + extra


def err(write, text):
    with pytest.raises(LitmusError) as e:
        parse_file(write(text))
    return e.value


@pytest.mark.parametrize("line", [
    "store i32 1, ptr addrspace(1) @x",
    "store i32 1, ptr addrspace(1) @x, align 4",
    "store volatile i32 1, ptr addrspace(1) @x",
    "%r = load i32, ptr addrspace(1) @x, align 4",
    "%r = load volatile i32, ptr addrspace(1) @x",
    "%r = load i32, ptr @x",
    'store atomic i32 1, ptr addrspace(1) @x syncscope("agent") release, align 4',
    "store atomic i32 -1, ptr addrspace(1) @x seq_cst",
    'store atomic i32 1, ptr addrspace(1) @x syncscope("one-as") monotonic',
    'store atomic i32 1, ptr addrspace(1) @x syncscope("workgroup-one-as") unordered',
    '%r = load atomic i32, ptr addrspace(1) @x syncscope("wavefront") acquire, align 4',
    '%r = load atomic i32, ptr addrspace(1) @x syncscope("singlethread") monotonic',
    '%r = load atomic i32, ptr addrspace(1) @x syncscope("") seq_cst',
    '%r = atomicrmw umax ptr addrspace(1) @x, i32 7 syncscope("cluster") acq_rel',
    '%r = cmpxchg ptr addrspace(1) @x, i32 0, i32 1 syncscope("agent") acq_rel monotonic',
    '%r = cmpxchg weak ptr addrspace(1) @x, i32 0, i32 1 seq_cst seq_cst',
    'fence syncscope("workgroup") acq_rel',
    "fence seq_cst",
    'call void @llvm.amdgcn.av.global.store.b128(ptr addrspace(1) @x, i32 5, metadata !"agent")',
    '%r = call i32 @llvm.amdgcn.av.global.load.b128(ptr addrspace(1) @x, metadata !"workgroup")',
    "call void @llvm.amdgcn.s.barrier()",
    "call void @llvm.amdgcn.s.barrier.signal(i32 -1)",
    "call void @llvm.amdgcn.s.barrier.wait(i16 -1)",
    "call void @llvm.amdgcn.s.barrier.init(ptr addrspace(3) @nb, i32 2)",
    "call void @llvm.amdgcn.s.barrier.join(ptr addrspace(3) @nb)",
    "call void @llvm.amdgcn.s.barrier.leave(i16 1)",
    "call void @llvm.amdgcn.s.barrier.leave()",
    "call void @llvm.amdgcn.s.barrier.signal.var(ptr addrspace(3) @nb, i32 2)",
    "%f = call i1 @llvm.amdgcn.s.barrier.signal.isfirst(i32 -1)",
    "call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @x, ptr addrspace(3) @l, "
    "i32 4, i32 0, i32 0)",
    "call void @llvm.amdgcn.asyncmark()",
    "call void @llvm.amdgcn.wait.asyncmark(i16 0)",
    "call void @llvm.amdgcn.asyncmark(i32 0)",
    "call void @llvm.amdgcn.wait.asyncmark(i16 1, i32 0)",
    'store i32 2, ptr addrspace(1) @x, !mmra !{!"foo", !"bar"}   ; inline form',
    "store atomic i32 1, ptr addrspace(3) @l syncscope(\"workgroup\") release",
])
def test_accepts_every_form(write, line):
    t = parse_file(write(src(line)))
    assert len(t.threads[0].code) == 1


def test_upstream_av_spelling_and_metadata(write):
    t = parse_file(write(src(
        "call void @llvm.amdgcn.av.store.b128.p1(ptr addrspace(1) @x, i32 1, metadata !3)",
        "%r = call i32 @llvm.amdgcn.av.load.b128.p0(ptr @x, metadata !3)",
        'fence syncscope("workgroup") release, !mmra !2',
        extra='metadata: |\n  !0 = !{!"amdgcn-av", !"none"}\n'
              '  !1 = !{!"amdgpu-synchronize-as", !"local"}\n  !2 = !{!0, !1}\n'
              '  !3 = !{!"agent"}\n')))
    a, b, f = t.threads[0].code
    assert (a.kind, a.scope, b.kind, b.scope) == ("av_store", "agent", "av_load", "agent")
    assert f.mmra == {("amdgcn-av", "none"), ("amdgpu-synchronize-as", "local")}


def test_placement_and_defaults(write):
    t = parse_file(write("""
        name: p
        memory: {x: {}}
        threads:
          A: {code: "store i32 1, ptr addrspace(1) @x"}
          B: {agent: 1, cluster: 0, workgroup: 2, wavefront: 3,
              code: "store i32 1, ptr addrspace(1) @x"}
        """))
    a, b = t.threads
    assert (a.agent, a.cluster, a.workgroup, a.wavefront) == (0, 0, 0, None)
    assert (b.agent, b.workgroup, b.wavefront) == (1, 2, 3)
    assert t.memory["x"].init == 0


def test_herd_conditions(write):
    t = parse_file(write(src("%r0 = load i32, ptr addrspace(1) @x",
                             extra="exists: 'T0:r0=1 \\/ ~(x=0) /\\ 0:r0=2'\n"
                                   "expect: allowed\n")))
    assert t.exists.cond.op == "or"


@pytest.mark.parametrize("body,line,needle", [
    (src("frobnicate i32 1"), 10, "unknown or malformed instruction"),
    (src("store i32 1, ptr addrspace(1) @zz"), 10, "'@zz' is not declared"),
    (src("store i32 %r9, ptr addrspace(1) @x"), 10, "%r9 is used before it is defined"),
    (src("store i32 1, ptr addrspace(1) @x", "store i32 %r, ptr addrspace(1) @x",
         "%r = load i32, ptr addrspace(1) @x"), 11, "used before it is defined"),
    (src('store atomic i32 1, ptr addrspace(1) @x syncscope("galaxy") release'), 10,
     'unknown syncscope "galaxy"'),
    (src("store atomic i32 1, ptr addrspace(1) @x acquire"), 10,
     "'acquire' is not allowed on an atomic store"),
    (src("%r = load atomic i32, ptr addrspace(1) @x release"), 10, "not allowed"),
    (src("%r = atomicrmw add ptr addrspace(1) @x, i32 1 unordered"), 10, "not allowed"),
    (src("fence monotonic"), 10, "not allowed on fence"),
    (src("store atomic i32 1, ptr addrspace(1) @x"), 10, "needs a memory ordering"),
    (src("store i32 1, ptr addrspace(1) @x release"), 10, "non-atomic store takes no ordering"),
    (src("store i32 1, ptr addrspace(3) @x"), 10, "not addrspace(3)"),
    (src("store i32 99999999999, ptr addrspace(1) @x"), 10, "does not fit in i32"),
    (src("%r = load i32, ptr addrspace(1) @x", "%r = load i32, ptr addrspace(1) @x"), 11,
     "defined twice"),
    (src("store i32 1, ptr addrspace(1) @x, !mmra !7"), 10, "!7 is not defined"),
    (src('store i32 1, ptr addrspace(1) @x, !mmra !{!"a", !"b", !"c"}'), 10,
     "malformed MMRA tag"),
    (src("store i32 1, ptr addrspace(1) @x", extra="bogus: 1\n"), 11, "unknown key 'bogus'"),
    (src("store i32 1, ptr addrspace(1) @x", extra="exists: 'T0:%q == 1'\nexpect: allowed\n"),
     11, "defines no register %q"),
    (src("store i32 1, ptr addrspace(1) @x", extra="exists: 'T9:%q == 1'\nexpect: allowed\n"),
     11, "unknown thread 'T9'"),
    (src("store i32 1, ptr addrspace(1) @x", extra="expect: forbidden\n"), 11,
     "needs an exists"),
    (src("store i32 1, ptr addrspace(1) @x", extra="exists: '@x == (1'\nexpect: allowed\n"),
     11, "in condition"),
    ("name: t\nmemory: {x: {}}\nthreads:\n  T0: {code: 'store i32 1, ptr @x'}\n  T0: {}\n", 5,
     "duplicate key"),
    ("name: t\nmemory: {x: {space: heap}}\nthreads: {}\n", 2, "space must be"),
    ("name: t\nmemory: {x: {}}\nthreads:\n  T0: {workgroup: -1, code: 'fence seq_cst'}\n", 4,
     "non-negative"),
    ("name: t\nmemory: {x: {}}\nthreads:\n  T0: {code: ''}\n", 4, "no instructions"),
    ("name: [t\n", 2, "bad YAML"),
    ("- a\n- b\n", 1, "must be a YAML mapping"),
    ("", 1, "empty file"),
])
def test_errors_name_the_line(write, body, line, needle):
    e = err(write, body)
    assert needle in e.message, e.message
    assert e.line == line, (e.line, e.message)
    assert str(e).startswith(e.file + ":")


def test_lds_across_workgroups_is_an_error(write):
    e = err(write, """
        name: t
        memory: {l: {space: local}}
        threads:
          A: {workgroup: 0, code: "store i32 1, ptr addrspace(3) @l"}
          B: {workgroup: 1, code: "%r = load i32, ptr addrspace(3) @l"}
        """)
    assert "different workgroups" in e.message and e.line == 5


def test_block_scalar_lines_are_exact(write):
    e = err(write, src("fence seq_cst", "", "; comment", "oops"))
    assert e.line == 13
