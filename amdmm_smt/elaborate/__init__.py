"""Stage 2, elaboration: a parsed test -> events, static relations and scope instances.

  events.py     events, program order, scope instances, static inclusion, MMRA (`elaborate`)
  barrier.py    the execution-barrier operations of a test, statically (§10.2-10.3)
  async_ops.py  which wait completes which async copy, statically (§11.4)
  cflow.py      a thread with control flow unrolled into paths; path combinations (§15.2)
"""
