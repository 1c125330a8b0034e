"""Hand-derived checks of the reference engine (amdmm_smt/reference/) on its own.

Each expected set below was derived by hand from docs/semantics.md section 6; none comes from
running the Z3 engine."""

import textwrap
from dataclasses import replace

import pytest

from amdmm_smt.elaborate.events import elaborate
from amdmm_smt.model import Model, get_model
from amdmm_smt.frontend.litmus import parse_text
from amdmm_smt.reference import ReferenceTooBig, ReferenceUnbounded, reference_outcomes

U = None   # undef


def run(text: str, model: Model = None, **options) -> set:
    test = parse_text(textwrap.dedent(text).lstrip("\n"), "t.yaml")
    m = model or get_model(None)
    if options:
        m = Model(m.name, options=replace(m.options, **options))
    return {tuple(v for _, v in s) for s in reference_outcomes(elaborate(test, m))}


def keys(text: str) -> list:
    from amdmm_smt.outcomes import projection
    return projection(parse_text(textwrap.dedent(text).lstrip("\n"), "t.yaml"))[0]


MP = """
name: mp
memory:
  x: {space: global, init: 0}
  y: {space: global, init: 0}
threads:
  T0:
    workgroup: 0
    code: |
      store i32 1, ptr addrspace(1) @x
      store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release{tag}
  T1:
    workgroup: {wg}
    code: |
      %r0 = load atomic i32, ptr addrspace(1) @y syncscope("{acq}") acquire
      %r1 = load i32, ptr addrspace(1) @x
"""


def mp(tag="", wg=1, acq="agent", rel_scope=None):
    t = MP.replace("{tag}", tag).replace("{wg}", str(wg)).replace("{acq}", acq)
    if rel_scope:
        t = t.replace('@y syncscope("agent") release', f'@y syncscope("{rel_scope}") release')
    return t


def test_keys_are_the_projection():
    assert keys(mp()) == ["T1:%r0", "T1:%r1"]


def test_mp_release_acquire_agent_two_workgroups():
    # r0=1: sw, the release is an availability op on x=1 and the acquire a visibility op:
    # x=1 is location-ordered before the plain read, which may see only it.
    # r0=0: no hb; the plain read may see init and x=1, neither lo-ordered last: undef.
    assert run(mp()) == {(0, U), (1, 1)}


def test_mp_release_tagged_av_none():
    # The release is no MakeAvailable: x=1 has no availability operation, so it is never
    # location-ordered before the plain read: undef whatever the flag read.
    assert run(mp(", !mmra !{!\"amdgcn-av\", !\"none\"}")) == {(0, U), (1, U)}


def test_mp_release_tagged_av_none_llvm_hsa():
    # llvm-hsa: location order is happens-before, and the tag changes nothing.
    assert run(mp(", !mmra !{!\"amdgcn-av\", !\"none\"}"), avvis=False) == {(0, U), (1, 1)}


def test_mp_scopes_hsa_inclusion_vs_opencl():
    t = mp(wg=0, rel_scope="workgroup")     # release workgroup, acquire agent, same workgroup
    assert run(t) == {(0, U), (1, 1)}
    # OpenCL: the scopes must match, so the flag store and the acquire are not inclusive:
    # neither synchronization nor the atomic value choice; the acquire is not even a
    # visibility operation on the flag (no hb from it): both reads undef.
    assert run(t, scope_inclusion="opencl") == {(U, U)}


def test_mp_workgroup_scope_across_workgroups():
    # A workgroup acquire in another workgroup is not inclusive with the agent flag store:
    # the atomic branch of the value rule fails and nothing is location-ordered last.
    assert run(mp(acq="workgroup")) == {(U, U)}


SB = """
name: sb
memory:
  x: {space: global, init: 0}
  y: {space: global, init: 0}
threads:
  T0:
    workgroup: 0
    code: |
      store atomic i32 1, ptr addrspace(1) @x syncscope("agent") ORD
      %r0 = load atomic i32, ptr addrspace(1) @y syncscope("agent") LORD
  T1:
    workgroup: 1
    code: |
      store atomic i32 1, ptr addrspace(1) @y syncscope("agent") ORD
      %r1 = load atomic i32, ptr addrspace(1) @x syncscope("agent") LORD
"""


def test_store_buffering():
    every = {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert run(SB.replace("LORD", "acquire").replace("ORD", "release")) == every
    # seq_cst: psc forbids both reads missing the other thread's store.
    assert run(SB.replace("LORD", "seq_cst").replace("ORD", "seq_cst")) == every - {(0, 0)}


def test_store_buffering_sc_fences_workgroup_scope_diff_workgroups():
    t = SB.replace("LORD", "monotonic").replace("ORD", "monotonic")
    fenced = t.replace('syncscope("agent") monotonic\n      %r',
                       'syncscope("agent") monotonic\n      fence syncscope("FS") seq_cst\n'
                       '      %r')
    every = {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert run(fenced.replace("FS", "agent")) == every - {(0, 0)}
    # workgroup fences in different workgroups are not inclusive: no psc edge between them.
    assert run(fenced.replace("FS", "workgroup")) == every


RMW2 = """
name: rmw2
memory:
  x: {space: global, init: 0}
threads:
  T0:
    workgroup: 0
    code: |
      %r0 = atomicrmw add ptr addrspace(1) @x, i32 1 syncscope("S") monotonic
  T1:
    workgroup: 1
    code: |
      %r1 = atomicrmw add ptr addrspace(1) @x, i32 1 syncscope("S") monotonic
exists: "@x == 2"
expect: allowed
"""


def test_racing_rmw_add_distinct_old_values():
    # RMW atomicity: each RMW immediately follows the write it reads from in co.
    assert run(RMW2.replace('"S"', '"agent"')) == {(0, 1, 2), (1, 0, 2)}


def test_racing_rmw_add_workgroup_scope_diff_workgroups():
    # Not inclusive: each RMW may see init and the other RMW, the atomic branch fails, and
    # neither is location-ordered before the other: both read undef; the writes are then
    # OP(undef, 1) = undef, and the last one in co is the final value.
    assert run(RMW2.replace('"S"', '"workgroup"')) == {(U, U, U)}


CAS = """
name: cas
memory:
  x: {space: global, init: 0}
threads:
  T0:
    workgroup: 0
    code: |
      %r0 = cmpxchg ptr addrspace(1) @x, i32 0, i32 1 syncscope("agent") acq_rel monotonic
  T1:
    workgroup: 1
    code: |
      %r1 = cmpxchg ptr addrspace(1) @x, i32 0, i32 2 syncscope("agent") acq_rel monotonic
exists: "@x == 1"
expect: allowed
"""


def test_cmpxchg_writes_only_on_success():
    # Exactly one succeeds; the other reads its value and writes nothing.
    assert run(CAS) == {(0, 1, 1), (2, 0, 2)}


def test_cmpxchg_release_sequence_through_rmw():
    # The flag release is followed in co by T1's RMW; T2's acquire reads the RMW, which is in
    # the release sequence of T0's release: sw, hence the data.
    t = """
    name: relseq
    memory:
      x: {space: global, init: 0}
      y: {space: global, init: 0}
    threads:
      T0:
        workgroup: 0
        code: |
          store atomic i32 1, ptr addrspace(1) @x syncscope("agent") monotonic
          store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release
      T1:
        workgroup: 1
        code: |
          %a = atomicrmw add ptr addrspace(1) @y, i32 1 syncscope("agent") monotonic
      T2:
        workgroup: 2
        code: |
          %b = load atomic i32, ptr addrspace(1) @y syncscope("agent") acquire
          %c = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
    """
    out = run(t)
    # %b == 2 means T2 read the RMW, which read the release: x must be 1.
    assert {s for s in out if s[1] == 2} == {(1, 2, 1)}
    assert (1, 1, 0) not in out and (0, 1, 1) in out and (0, 0, 0) in out


def test_coherence_cowr_cxx_vs_langref():
    t = """
    name: cowr
    memory:
      x: {space: global, init: 0}
    threads:
      T0:
        workgroup: 0
        code: |
          store atomic i32 1, ptr addrspace(1) @x syncscope("agent") monotonic
          %r0 = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
      T1:
        workgroup: 1
        code: |
          store atomic i32 2, ptr addrspace(1) @x syncscope("agent") monotonic
    exists: "@x == 1"
    expect: allowed
    """
    cxx = run(t)
    assert cxx == {(1, 1), (1, 2), (2, 2)}
    assert run(t, coherence="langref") == cxx | {(2, 1)}


def test_upstream_lds_plain_store_is_store_available():
    t = """
    name: lds
    memory:
      l: {space: local, init: 0}
      f: {space: global, init: 0}
    threads:
      T0:
        workgroup: 0
        code: |
          store i32 1, ptr addrspace(3) @l
          store atomic i32 1, ptr addrspace(1) @f syncscope("workgroup") release, !mmra !{!"amdgcn-av", !"none"}
      T1:
        workgroup: 0
        code: |
          %r0 = load atomic i32, ptr addrspace(1) @f syncscope("workgroup") acquire
          %r1 = load i32, ptr addrspace(3) @l
    """
    # seed: the release is no MakeAvailable and a plain store is not store-available.
    assert run(t) == {(0, U), (1, U)}
    # upstream-2026: the LDS store is store-available at workgroup; the acquire (MakeVisible
    # at workgroup, after it in hb) makes it visible and is program-ordered before the read.
    assert run(t, lds_av_workgroup=True) == {(0, U), (1, 1)}


def test_lb_data_dependency_release_acquire_is_finite():
    # Values copied through registers; with acquire/release the cyclic reads-from would be an
    # hb cycle, so only the initial values circulate.
    t = """
    name: lb-data
    memory:
      x: {space: global, init: 0}
      y: {space: global, init: 0}
    threads:
      T0:
        workgroup: 0
        code: |
          %r0 = load atomic i32, ptr addrspace(1) @x syncscope("agent") ORD_L
          store atomic i32 %r0, ptr addrspace(1) @y syncscope("agent") ORD_S
      T1:
        workgroup: 1
        code: |
          %r1 = load atomic i32, ptr addrspace(1) @y syncscope("agent") ORD_L
          store atomic i32 %r1, ptr addrspace(1) @x syncscope("agent") ORD_S
    """
    assert run(t.replace("ORD_L", "acquire").replace("ORD_S", "release")) == {(0, 0)}
    # monotonic: the model has no po ∪ rf acyclicity, so the values are out of thin air.
    with pytest.raises(ReferenceUnbounded):
        run(t.replace("ORD_L", "monotonic").replace("ORD_S", "monotonic"))


def test_register_operands_and_rmw_ops():
    t = """
    name: ops
    memory:
      x: {space: global, init: 5}
      y: {space: global, init: 0}
    threads:
      T0:
        code: |
          %a = atomicrmw sub ptr addrspace(1) @x, i32 7 monotonic
          %b = atomicrmw umax ptr addrspace(1) @x, i32 3 monotonic
          %c = atomicrmw max ptr addrspace(1) @x, i32 3 monotonic
          store i32 %c, ptr addrspace(1) @y
          %d = load i32, ptr addrspace(1) @y
    exists: "@x == 3"
    expect: allowed
    """
    # 5-7 = -2; umax(-2 as 0xfffffffe, 3) = -2; max(-2, 3) = 3 (signed).
    assert run(t) == {(5, -2, -2, -2, 3)}


def test_uninitialised_location_reads_undef():
    t = """
    name: uninit
    memory:
      x: {space: global, init: undef}
    threads:
      T0:
        code: |
          %r = load atomic i32, ptr addrspace(1) @x monotonic
    exists: "@x == undef"
    expect: allowed
    """
    assert run(t) == {(U, U)}


def test_limit():
    with pytest.raises(ReferenceTooBig):
        reference_outcomes(elaborate(parse_text(textwrap.dedent(SB).lstrip("\n")
                                                .replace("LORD", "seq_cst")
                                                .replace("ORD", "seq_cst"), "t.yaml"),
                                     get_model(None)), limit=3)


def test_incompatible_mmra_po_not_in_hb():
    # S001 / section 7: program order between incompatible instructions is not in hb, nor
    # does it give location order: the two plain stores are unordered, either may be last.
    t = """
    name: mmra
    memory:
      x: {space: global, init: 0}
    threads:
      T0:
        code: |
          store i32 1, ptr addrspace(1) @x, !mmra !{!"foo", !"A"}
          store i32 2, ptr addrspace(1) @x, !mmra !{!"foo", !"B"}
    exists: "@x == 1"
    expect: allowed
    """
    assert run(t) == {(1,), (2,)}
    assert run(t.replace('!"B"', '!"A"')) == {(2,)}


def test_cas_undef_option():
    # Two workgroup cmpxchg(0 -> 1) in different workgroups: a read that may see the other's
    # write (not inclusive) is undef. either: a compare with undef may succeed, so both may
    # read undef and write. fail: an undef compare fails; if both failed nothing but init
    # would be seen and both would read 0: so exactly one reads 0.
    t = CAS.replace('"agent"', '"workgroup"').replace("i32 2 sync", "i32 1 sync")
    assert run(t) == {(0, U, 1), (U, 0, 1), (U, U, 1)}
    assert run(t, cas_undef="fail") == {(0, U, 1), (U, 0, 1)}


def test_final_co_option():
    # x=1 happens-before x=2 when r=1 (sw), but the release is tagged amdgcn-av:none, so x=1
    # has no availability operation and is not location-ordered before x=2.
    t = """
    name: final
    memory:
      x: {space: global, init: 0}
      y: {space: global, init: 0}
    threads:
      T0:
        workgroup: 0
        code: |
          store i32 1, ptr addrspace(1) @x
          store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release, !mmra !{!"amdgcn-av", !"none"}
      T1:
        workgroup: 1
        code: |
          %r = load atomic i32, ptr addrspace(1) @y syncscope("agent") acquire
          store i32 2, ptr addrspace(1) @x
    exists: "@x == 1"
    expect: allowed
    """
    every = {(0, 1), (0, 2), (1, 1), (1, 2)}
    assert run(t) == every                       # final_co: lo
    assert run(t, final_co="hb") == every - {(1, 1)}


def test_sync_as_global_fences_do_not_order_lds():
    # Section 7: fences tagged amdgpu-synchronize-as:global synchronize global memory only.
    t = """
    name: sync-as
    metadata: |
      !0 = !{!"amdgpu-synchronize-as", !"SP"}
    memory:
      l: {space: local, init: 0}
      f: {space: global, init: 0}
    threads:
      T0:
        wavefront: 0
        code: |
          store i32 1, ptr addrspace(3) @l
          fence syncscope("workgroup") release, !mmra !0
          store atomic i32 1, ptr addrspace(1) @f syncscope("workgroup") monotonic
      T1:
        wavefront: 1
        code: |
          %r0 = load atomic i32, ptr addrspace(1) @f syncscope("workgroup") monotonic
          fence syncscope("workgroup") acquire, !mmra !0
          %r1 = load i32, ptr addrspace(3) @l
    """
    assert run(t.replace("SP", "local")) == {(0, U), (1, 1)}
    assert run(t.replace("SP", "global")) == {(0, U), (1, U)}


def test_po_hb_is_transitive_through_a_compatible_fence():
    # Section 6: "po" in location order clause 1 is po ∧ hb. W (foo:A) and R (foo:B) are
    # incompatible; an untagged fence between them is compatible with both, so W hb R and W
    # is location-ordered before R, shadowing nothing else (no initial write): 2. Without
    # the fence, W is not location-ordered before R: no write is, so R returns undef.
    t = """
    name: pohb
    memory:
      y: {space: global, init: undef}
    threads:
      T1:
        code: |
          store atomic i32 2, ptr addrspace(1) @y syncscope("wavefront") monotonic, !mmra !{!"foo", !"A"}
          FENCE
          %r = load i32, ptr addrspace(1) @y, !mmra !{!"foo", !"B"}
    """
    assert run(t.replace("FENCE", 'fence syncscope("agent") release')) == {(2,)}
    assert run(t.replace("          FENCE\n", "")) == {(U,)}
