"""Async-heavy generated tests for the differential run (docs/semantics.md §11), richer than
`gen.gen_async`: besides copies both ways, marks and waits with stage masks, they put MMRA tags
on copies, marks, waits and accesses (S001 compatibility is part of §11.5's po-in-hb), use
atomic loads / stores of sources and destinations (value rule branch (b) against a non-atomic
DMA write), release / acquire / seq_cst fences, consumers in the same or (reading global data)
another workgroup (§11.3 R-async-scope), consumers that copy and wait themselves, and a third
wave storing to a source or destination, with distinct initial values (`render_rich`; target:
the default, gfx1250)."""

from __future__ import annotations

from .gen import TO_LDS, Gen, Op, Thr, render

TAGS = [(), (), (), (("foo", "bar"),), (("foo", "baz"),)]
# gfx1250 stage masks (a set bit: "do not participate"), biased to masks that single stages
# out: 0 (all), only(GLOBAL_LOAD) 45, only(GLOBAL_STORE) 39, only(BUFFER_GLOBAL_LOAD) 15,
# only(MCAST) 43, and one omitted stage: 2, 8, 32, 4
MASKS = [0, 0, 45, 39, 15, 43, 2, 8, 32, 4]


def gen_async_rich(pick) -> Gen:
    counter = [0]

    def val() -> int:
        counter[0] += 1
        return counter[0]

    def tags():
        return pick(TAGS)

    def copy():
        if pick([True, True, False]):
            op = Op("copy", pick(["l", "m"]), src=pick(["x", "y"]),
                    spelling=pick(range(len(TO_LDS))), tags=tags())
        else:
            op = Op("copy", pick(["x", "y"]), src=pick(["l", "m"]), tags=tags())
        dsts.append(op.loc)
        return op

    dsts: list = []                            # destinations of the copies so far

    def access(locs, load_bias=False):
        loc = pick(locs)
        near = [d for d in dsts if d in locs]
        if near and pick([True, False, load_bias]):
            loc = pick(near)                      # mostly where a copy wrote
        if load_bias and pick([True, True, False]):
            return Op("load", loc, scope="", tags=tags())
        if pick([False, False, True]):          # atomic
            if pick([True, False]):
                return Op("load", loc, 0, True, pick(["monotonic", "acquire", "seq_cst"]), None,
                          pick(["workgroup", "agent"]), tags())
            return Op("store", loc, val(), True, pick(["monotonic", "release", "seq_cst"]),
                      None, pick(["workgroup", "agent"]), tags())
        if pick([True, False]):
            return Op("load", loc, scope="", tags=tags())
        return Op("store", loc, val(), scope="", tags=tags())

    prod = []
    for _ in range(pick([1, 2, 2, 3])):  # S004's blocks: copies closed by an asyncmark
        for _ in range(pick([1, 1, 2])):
            prod.append(copy())
            if pick([False, False, False, True]):
                prod.append(access(["x", "y", "l", "m"]))
        prod.append(Op("mark", mask=pick(MASKS), spelling=pick([0, 1]), tags=tags()))
        if pick([True, False]):
            prod.append(Op("wait", value=pick([0, 0, 1, 2]), mask=pick(MASKS),
                           spelling=pick([0, 1]), tags=tags()))
            for _ in range(pick([0, 1, 1, 2])):
                prod.append(access(["x", "y", "l", "m"], load_bias=True))
    if pick([True, True, False]):
        prod.append(Op("wait", value=pick([0, 0, 1]), mask=pick(MASKS), spelling=pick([0, 1]),
                       tags=tags()))
    for _ in range(pick([0, 1, 2])):
        prod.append(pick([access(["x", "y", "l", "m"], True), access(["x", "y", "l", "m"]),
                          Op("fence", "x", 0, False, pick(["release", "acquire", "acq_rel",
                                                           "seq_cst"]),
                             None, pick(["workgroup", "agent"]), tags())]))
    other_wg = pick([False, False, False, True])
    scope = "agent" if other_wg else pick(["workgroup", "agent"])
    how = pick(["store", "store", "fence", "none"])
    if how == "store":
        prod.append(Op("store", "f", 1, True, "release", None, scope, tags()))
    elif how == "fence":
        prod.append(Op("fence", "x", 0, False, "release", None, scope, tags()))
        prod.append(Op("store", "f", 1, True, "monotonic", None, scope))
    cons = []
    if how != "none":
        if pick([True, False]):
            cons.append(Op("load", "f", 0, True, "acquire", None, scope, tags()))
        else:
            cons.append(Op("load", "f", 0, True, "monotonic", None, scope))
            cons.append(Op("fence", "x", 0, False, "acquire", None, scope, tags()))
    if not other_wg and pick([False, False, True]):   # LDS is per workgroup
        cons.append(copy())
        if pick([True, False]):
            cons.append(Op("mark"))
            cons.append(Op("wait", value=0))
    for _ in range(pick([1, 2])):
        cons.append(access(["x", "y"] if other_wg else ["l", "m", "x", "y"], True))
    threads = [Thr(0, None, 0, tuple(prod)), Thr(1 if other_wg else 0, None, 0, tuple(cons))]
    if pick([False, False, True]):
        threads.append(Thr(0, None, 0, (Op("store", pick(["x", "l"]), val(), scope=""),)))
    return Gen(tuple(threads), True, ("x", "y", "l", "m", "f"))


INIT = {"x": 11, "y": 22, "l": 33, "m": 44, "f": 0}


def render_rich(g: Gen, name: str = "gen") -> str:
    """`gen.render` with a distinct initial value per location, so that a copy is visible in
    the values (a copied source value differs from the destination's initial value)."""
    text = render(g, name)
    for loc, v in INIT.items():
        for sp in ("global", "local"):
            text = text.replace(f"  {loc}: {{space: {sp}}}", f"  {loc}: {{space: {sp}, init: {v}}}")
    return text


def async_rich_examples(n: int, seed: int = 0) -> list:
    """n deterministic rich async tests, rendered."""
    import random
    rng = random.Random(seed)
    return [render_rich(gen_async_rich(lambda xs: rng.choice(list(xs))), f"gen-async-rich-{i}")
            for i in range(n)]


# ---- multi-wait async with MMRA tags (issue 17 items 3, 4; docs §11.5 R-async-done-every,
# R-async-po-after-done) ----------------------------------------------------------------------

MW_TAGS = [(), (("foo", "bar"),), (("foo", "baz"),), (("foo", "qux"),)]
# gfx1250 masks a wait may carry: 0 (every stage), only(GLOBAL_LOAD) 45 (the stage of the
# copies to LDS), only(GLOBAL_STORE) 39 (ignores them), only(BUFFER_GLOBAL_LOAD) 15
MW_MASKS = [0, 0, 0, 45, 39, 15]


def gen_async_multiwait(pick) -> Gen:
    """Small tests where a copy is completed at one wait and followed by more waits and
    accesses with differently tagged MMRA metadata: which later waits it is completed-at
    (stage masks, wait counts that remove nothing), and which later operations its program
    order reaches (seed-004: only after completion, only with compatible tags). A release /
    acquire handoff to a second wave of the workgroup is added sometimes."""
    counter = [0]

    def val() -> int:
        counter[0] += 1
        return counter[0]

    def tags():
        return pick(MW_TAGS)

    dsts: list = []

    def copy():
        if pick([True, True, True, False]):
            op = Op("copy", pick(["l", "m"]), src=pick(["x", "y"]), spelling=0,
                    tags=pick([(), tags()]))
        else:   # store-from-LDS: another stage (GLOBAL_STORE_ASYNC_FROM_LDS)
            op = Op("copy", pick(["x", "y"]), src=pick(["l", "m"]), tags=tags())
        dsts.append(op.loc)
        return op

    def read(like=None):
        """A plain load, mostly of a destination; after a wait mostly tagged like the wait
        (so that program order from that wait, and only from it, is in happens-before)."""
        t = tags()
        if like is not None:     # like the wait, or cut from it (compatible with other things)
            t = pick([like, pick([u for u in MW_TAGS[1:] if u != like]), t])
        return Op("load", pick(dsts) if dsts and pick([True, True, False]) else
                  pick(["l", "m", "x", "y"]), scope="", tags=t)

    prod = []
    for _ in range(pick([1, 1, 2])):
        for _ in range(pick([1, 1, 2])):
            prod.append(copy())
        prod.append(Op("mark", tags=pick([(), (("foo", "baz"),), (("foo", "qux"),)])))
        if pick([True, False]):
            prod.append(read())
    wt = ()
    for _ in range(pick([2, 2, 3])):         # several waits, mostly each tagged unlike the last
        wt = pick([t for t in MW_TAGS[1:] if t != wt] + [()])
        prod.append(Op("wait", value=pick([0, 0, 0, 1]), mask=pick(MW_MASKS), spelling=1,
                       tags=wt))
        for _ in range(pick([0, 1, 1])):
            prod.append(read(wt) if pick([True, True, False]) else
                        Op("store", pick(["x", "l"]), val(), scope="",
                           tags=wt if pick([True, False]) else tags()))
    prod.append(read(wt))                   # something after the last wait
    threads = [Thr(0, None, 0, tuple(prod))]
    if pick([False, True]):
        rt = pick([t for t in MW_TAGS if t != wt])     # mostly cut from the last wait
        prod2 = list(prod) + [Op("store", "f", 1, True, "release", None, "workgroup", rt)]
        cons = (Op("load", "f", 0, True, "acquire", None, "workgroup"),
                Op("load", pick(dsts), scope=""))
        threads = [Thr(0, None, 0, tuple(prod2)), Thr(0, None, 0, cons)]
    return Gen(tuple(threads), True, ("x", "y", "l", "m", "f"))


def async_multiwait_examples(n: int, seed: int = 0) -> list:
    """n deterministic multi-wait tagged async tests, rendered with distinct initial values."""
    import random
    rng = random.Random(seed)
    return [render_rich(gen_async_multiwait(lambda xs: rng.choice(list(xs))),
                        f"gen-async-multiwait-{i}") for i in range(n)]
