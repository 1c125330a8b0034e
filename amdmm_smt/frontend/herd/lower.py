"""herd / Dartagnan `.litmus` files, stage 2: the AST of one thread -> LLVM IR lines, each with
its .litmus line: `if` / `else`, `while`, `goto` and labels become blocks, `br`, `icmp` and
`phi` (docs/herd-import.md "Control flow")."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Union

from ...errors import LitmusError, show
from .syntax import (ARITH, BARRIER_FUNCS, CONTROL_FLOW, I32_MAX, AddrOf, Assign, BinOp, Block,
                     Break, Call, Cond, Decl, Deref, ExprStmt, Goto, If, Label, Num, Param, Program, ThreadAst,
                     Unary, Var, While)

# ---- lowering one thread to LLVM IR -------------------------------------------------------

@dataclass(frozen=True)
class RegV:
    reg: str                 # IR register name (without %)


@dataclass(frozen=True)
class ConstV:
    value: int


@dataclass(frozen=True)
class FlagV:
    """The success flag of a compare-exchange: 1 iff the old value equals the expected one."""
    old: str
    exp: str
    line: int


@dataclass(frozen=True)
class UninitV:
    line: int
    why: str = ""            # set when a goto / label edge left it without a value


Value = Union[RegV, ConstV, FlagV, UninitV]

ORDERS = {"memory_order_relaxed": "monotonic", "memory_order_acquire": "acquire",
          "memory_order_release": "release", "memory_order_acq_rel": "acq_rel",
          "memory_order_seq_cst": "seq_cst"}
SCOPES = {"memory_scope_work_item": "singlethread", "memory_scope_sub_group": "wavefront",
          "memory_scope_work_group": "workgroup", "memory_scope_device": "agent",
          "memory_scope_all_svm_devices": "", "memory_scope_all_devices": ""}
DEFAULT_SCOPE = "agent"       # OpenCL C 2.0 6.13.11: the default memory scope is device
FLAGS = {"CLK_GLOBAL_MEM_FENCE": "global", "CLK_LOCAL_MEM_FENCE": "local"}
RMW = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "min": "min",
       "max": "max"}
MD_GLOBAL, MD_LOCAL, MD_BOTH = "!0", "!1", "!2"


@dataclass
class IRLine:
    text: str
    line: int


@dataclass
class Lowered:
    code: list = field(default_factory=list)       # IRLine
    env: dict = field(default_factory=dict)        # local variable -> Value (final)
    uses: dict = field(default_factory=dict)       # location -> first line accessed
    cas_private: dict = field(default_factory=dict)   # expected location -> line
    notes: list = field(default_factory=list)
    barrier_labels: list = field(default_factory=list)
    md: set = field(default_factory=set)
    loops: bool = False                  # a while loop or backward goto (bound: assume)


def _as_list(body) -> list:
    if body is None:
        return []
    return body if isinstance(body, list) else [body]


def _has_flow(body: list) -> bool:
    for st in body:
        if isinstance(st, (If, While, Goto, Label, Break)):
            return True
        if isinstance(st, Block) and _has_flow(st.body):
            return True
        if any(_expr_flow(e) for e in _stmt_exprs(st)):
            return True
    return False


def _stmt_exprs(st) -> list:
    if isinstance(st, Decl):
        return [st.init] if st.init is not None else []
    if isinstance(st, Assign):
        return [st.target, st.value]
    if isinstance(st, ExprStmt):
        return [st.expr]
    return []


def _cond_branches(e: Cond) -> bool:
    """A `?:` is lowered to a branch and a phi when an arm accesses memory (C evaluates only
    the arm chosen) or its condition short-circuits; else to a `select`."""
    return (_has_access(e.then) or _has_access(e.other)
            or (isinstance(e.cond, BinOp) and e.cond.op in ("&&", "||")))


def _expr_flow(e) -> bool:
    """Does expression e lower to blocks (a `?:` in its branch form)?"""
    if isinstance(e, Cond):
        return _cond_branches(e) or any(_expr_flow(x) for x in (e.cond, e.then, e.other))
    if isinstance(e, BinOp):
        return _expr_flow(e.left) or _expr_flow(e.right)
    if isinstance(e, (Unary, AddrOf, Deref)):
        return _expr_flow(e.arg)
    if isinstance(e, Call):
        return any(_expr_flow(a) for a in e.args)
    return False


def _assigned(body: list) -> set:
    """The variables a statement list assigns (at any depth)."""
    out: set = set()
    for st in body:
        if isinstance(st, Assign) and isinstance(st.target, Var):
            out.add(st.target.name)
        elif isinstance(st, Block):
            out |= _assigned(st.body)
        elif isinstance(st, If):
            out |= _assigned(_as_list(st.then)) | _assigned(_as_list(st.other))
        elif isinstance(st, While):
            out |= _assigned(_as_list(st.body))
    return out


def _jumps(body: list, labels: list, gotos: list) -> None:
    """The labels and gotos of a statement list (at any depth), in source order."""
    for st in body:
        if isinstance(st, Label):
            labels.append(st)
        elif isinstance(st, Goto):
            gotos.append(st)
        elif isinstance(st, Block):
            _jumps(st.body, labels, gotos)
        elif isinstance(st, If):
            _jumps(_as_list(st.then), labels, gotos)
            _jumps(_as_list(st.other), labels, gotos)
        elif isinstance(st, While):
            _jumps(_as_list(st.body), labels, gotos)


class _Retry(Exception):
    """A variable has no value on a backward goto edge into a label that gave it a phi."""
    def __init__(self, missing: dict):
        super().__init__("retry")
        self.missing = missing          # (label, variable) -> line of the edge


class _Lower:
    def __init__(self, th: ThreadAst, prog: Program, file: str):
        self.th, self.prog, self.file = th, prog, file
        self.out = Lowered()
        self.regs: set[str] = set()
        self.versions: dict[str, int] = {}
        self.tmp = 0
        self.taken: set[str] = set()
        for (ti, name), (v, line) in prog.reg_init.items():
            if ti == th.index:
                self.out.env[name] = ConstV(v)

    def err(self, msg: str, line: int) -> LitmusError:
        return LitmusError(msg, self.file, line)

    def run(self) -> Lowered:
        """Lower the thread; when a backward goto turns out to carry a variable without a
        value into a label that gave it a phi, lower again with that variable unassigned at
        the label (the set only grows, so this ends)."""
        hint: dict = {}
        while True:
            lo = _Lower(self.th, self.prog, self.file)
            lo.no_value = hint
            try:
                return lo.run_once()
            except _Retry as r:
                grew = False
                for key, line in r.missing.items():
                    if key not in hint:
                        hint[key] = line
                        grew = True
                if not grew:     # pragma: no cover - a retry always learns something
                    raise self.err("internal: goto lowering did not converge", self.th.line)

    def run_once(self) -> Lowered:
        self.labels = 0
        self.block = "entry"
        self.dead = False        # after a goto, until the next label: no block to emit into
        self.breaks: list = []   # per enclosing while loop: the (env, block) of each `break`
        self.goto_setup()
        if _has_flow(self.th.body):      # docs/herd-import.md "Control flow" (issue 11)
            self.emit("entry:", self.th.line)
        self.stmts(self.th.body)
        self.goto_finish()
        return self.out

    # goto and labels (docs/herd-import.md "goto and labels")
    def goto_setup(self) -> None:
        labels: list = []
        gotos: list = []
        _jumps(self.th.body, labels, gotos)
        self.user_labels: dict = {}          # name -> Label
        for lab in labels:
            if lab.name in self.user_labels:
                raise self.err(f"label '{lab.name}' is defined twice in {self.th.name} (first at "
                               f"line {self.user_labels[lab.name].line})", lab.line)
            self.user_labels[lab.name] = lab
        self.pending: dict = {}              # label -> gotos to it not lowered yet
        for g in gotos:
            if g.label not in self.user_labels:
                elsewhere = []
                for th in self.prog.threads:
                    if th is not self.th:
                        ls: list = []
                        _jumps(th.body, ls, [])
                        if any(x.name == g.label for x in ls):
                            elsewhere.append(th.name)
                if elsewhere:
                    raise self.err(f"goto {g.label}: the label is in {elsewhere[0]}, not in "
                                   f"{self.th.name} (a goto cannot leave its thread)", g.line)
                raise self.err(f"goto {g.label}: no label '{g.label}' in {self.th.name}",
                               g.line)
            self.pending[g.label] = self.pending.get(g.label, 0) + 1
        self.incoming: dict = {}             # label -> [(block, env, line)] of the edges so far
        self.lab_phis: dict = {}             # label -> [(var, reg, IRLine)] placeholders
        self.lab_ir: dict = {}               # label -> IR block name
        self.assigned_all = _assigned(self.th.body)

    def ir_label(self, name: str) -> str:
        # C identifiers never contain '.', the generated labels all do except `entry`
        return "entry.label" if name == "entry" else name

    def edge(self, name: str, line: int) -> None:
        """Leave the current block for user label `name` (a goto or the fallthrough)."""
        self.settle(self.out.env, line)
        self.incoming.setdefault(name, []).append((self.block, dict(self.out.env), line))
        self.emit(f"br label %{self.ir_label(name)}", line)

    def goto_stmt(self, s: Goto) -> None:
        if s.label in self.lab_ir:       # backward: a loop, read with herd7's unrolling
            self.out.loops = True
        self.pending[s.label] -= 1
        self.edge(s.label, s.line)
        self.dead, self.dead_line, self.dead_what = True, s.line, "goto"

    def label_stmt(self, s: Label) -> None:
        if not self.dead:
            self.edge(s.name, s.line)
        name, ir = s.name, self.ir_label(s.name)
        edges = self.incoming.get(name, [])
        keys = set(self.out.env)
        self.start(ir, s.line)
        self.lab_ir[name] = ir
        self.dead = False
        env: dict = {}
        if not self.pending.get(name):
            # every edge is known: merge as at the end of an if / else
            if not edges:
                raise self.err(f"label '{name}:' cannot be reached (it follows a goto and no "
                               "goto names it)", s.line)
            for var in sorted(keys):
                vals = [e[var] if var in e else UninitV(ln) for _, e, ln in edges]
                miss = [ln for v, (_, _, ln) in zip(vals, edges) if isinstance(v, UninitV)]
                if miss:
                    env[var] = UninitV(s.line, f"it has no value on the way into label "
                                               f"'{name}' from line {miss[0]}")
                elif all(v == vals[0] for v in vals):
                    env[var] = vals[0]
                else:
                    ops = [self.operand(v, s.line, f"'{var}'") for v in vals]
                    r = self.fresh(var)
                    inc = ", ".join(f"[ {o}, %{b} ]" for o, (b, _, _) in zip(ops, edges))
                    self.emit(f"%{r} = phi i32 {inc}", s.line)
                    env[var] = RegV(r)
            self.lab_phis[name] = []
        else:
            # a goto below comes back here: a phi placeholder for every variable that may
            # change, patched in goto_finish once every edge is known
            phis = []
            for var in sorted(keys):
                vals = [e.get(var, UninitV(ln)) for _, e, ln in edges]
                miss = [ln for v, (_, _, ln) in zip(vals, edges) if isinstance(v, UninitV)]
                if (name, var) in self.no_value:
                    miss.append(self.no_value[(name, var)])
                if miss:
                    env[var] = UninitV(s.line, f"it has no value on the way into label "
                                               f"'{name}' from line {miss[0]}")
                elif edges and var not in self.assigned_all and all(v == vals[0] for v in vals):
                    env[var] = vals[0]
                else:
                    r = self.fresh(var)
                    ir_line = IRLine("", s.line)
                    self.out.code.append(ir_line)
                    phis.append((var, r, ir_line))
                    env[var] = RegV(r)
            self.lab_phis[name] = phis
        self.out.env = env

    def goto_finish(self) -> None:
        missing: dict = {}
        for name, phis in self.lab_phis.items():
            edges = self.incoming.get(name, [])
            for var, r, ir_line in phis:
                inc = []
                for b, e, ln in edges:
                    v = e.get(var)
                    if v is None or isinstance(v, UninitV):
                        missing.setdefault((name, var), ln)
                        continue
                    inc.append(f"[ {self.operand(v, ln, repr(var))}, %{b} ]")
                ir_line.text = f"%{r} = phi i32 {', '.join(inc)}"
        if missing:
            raise _Retry(missing)

    # control flow (docs/semantics.md §15; docs/herd-import.md "Control flow")
    def label(self, hint: str) -> str:
        self.labels += 1
        return f"{hint}{self.labels}"

    def start(self, lab: str, line: int) -> None:
        self.emit(f"{lab}:", line)
        self.block = lab

    def branch(self, e, t: str, f: str, line: int) -> None:
        """Branch to t if the C condition e holds, else to f (&&, || short-circuit)."""
        if isinstance(e, BinOp) and e.op in ("&&", "||"):
            mid = self.label("cond")
            if e.op == "&&":
                self.branch(e.left, mid, f, line)
            else:
                self.branch(e.left, t, mid, line)
            self.start(mid, line)
            self.branch(e.right, t, f, line)
            return
        if isinstance(e, Unary) and e.op == "!":
            self.branch(e.arg, f, t, line)
            return
        preds = {"==": "eq", "!=": "ne", "<": "slt", ">": "sgt", "<=": "sle", ">=": "sge"}
        if isinstance(e, BinOp) and e.op in preds:
            self.sequenced(e)
            a, b = self.value(e.left, None), self.value(e.right, None)
            if isinstance(a, ConstV) and isinstance(b, ConstV):
                hold = _fold(e.op, a.value, b.value, self.file, e.line)
                self.emit(f"br label %{t if hold else f}", e.line)
                return
            what = f"an operand of '{e.op}'"
            pa = self.num(a, e.line, what)
            pb = self.num(b, e.line, what)
            c = self.fresh(None, temp="c")
            self.emit(f"%{c} = icmp {preds[e.op]} i32 {pa}, {pb}", e.line)
            self.emit(f"br i1 %{c}, label %{t}, label %{f}", e.line)
            return
        v = self.value(e, None)
        ln = getattr(e, "line", line)
        if isinstance(v, ConstV):
            self.emit(f"br label %{t if v.value != 0 else f}", ln)
            return
        c = self.fresh(None, temp="c")
        if isinstance(v, FlagV):      # C11: the exchange succeeded iff old == expected
            self.emit(f"%{c} = icmp eq i32 %{v.old}, %{v.exp}", ln)
        else:
            self.emit(f"%{c} = icmp ne i32 {self.operand(v, ln, 'a condition')}, 0", ln)
        self.emit(f"br i1 %{c}, label %{t}, label %{f}", ln)

    def settle(self, names, line: int) -> None:
        """Before leaving a block: a variable holding a compare-exchange success flag becomes
        an i32 register (1 iff old == expected), so that a phi can carry it."""
        for var in sorted(names):
            v = self.out.env.get(var)
            if isinstance(v, FlagV):
                c, r = self.fresh(None, temp="c"), self.fresh(var)
                self.emit(f"%{c} = icmp eq i32 %{v.old}, %{v.exp}", line)
                self.emit(f"%{r} = select i1 %{c}, i32 1, i32 0", line)
                self.out.env[var] = RegV(r)

    def merge(self, before: dict, arms: list, line: int) -> None:
        """After a join: each variable (declared before the branch) whose value differs
        between the arms gets a phi; a variable assigned on one arm only, with no value
        before, stays unassigned."""
        env = {}
        for var in before:
            vals = [a[var] for a, _ in arms]
            if all(v == vals[0] for v in vals):
                env[var] = vals[0]
            elif any(isinstance(v, UninitV) for v in vals):
                env[var] = UninitV(line)
            else:
                ops = [self.operand(v, line, f"'{var}' (a compare-exchange result) at a join")
                       for v in vals]
                r = self.fresh(var)
                inc = ", ".join(f"[ {o}, %{b} ]" for o, (_, b) in zip(ops, arms))
                self.emit(f"%{r} = phi i32 {inc}", line)
                env[var] = RegV(r)
        self.out.env = env

    def if_stmt(self, s) -> None:
        t, e, j = self.label("if.then"), self.label("if.else"), self.label("if.end")
        self.branch(s.cond, t, e, s.line)
        before = dict(self.out.env)
        arms = []
        for lab, body in ((t, s.then), (e, s.other or [])):
            self.out.env = dict(before)
            self.dead = False
            self.start(lab, s.line)
            self.stmts(_as_list(body))
            if self.dead:            # the arm ended in a goto: it does not reach the join
                continue
            self.settle(before, s.line)
            arms.append(({k: self.out.env.get(k) for k in before}, self.block))
            self.emit(f"br label %{j}", s.line)
        if not arms:                 # both arms end in a goto: nothing reaches the join
            self.dead = True
            return
        self.dead = False
        self.start(j, s.line)
        self.merge(before, arms, s.line)

    def while_stmt(self, s) -> None:
        """`while (c) body` is lowered rotated, as `if (c) { do body while (c); }` (LLVM's
        loop rotation; C evaluates c before each iteration and once more at the exit, and so
        does the rotated form): the guard tests c once, the body block runs once per
        iteration and tests c again at its end. So every block of the loop runs at most as
        often as the body, and the bound of docs/semantics.md 15.2 (no block runs more than N
        times) allows N iterations, herd7's `-unroll N` (issue 28 item 5; reading
        R-cf-herd-iterations). `break` leaves to the end block. Each way out of a condition
        goes through its own one-line block, so that the phis name one predecessor each."""
        g_in, g_out = self.label("while.enter"), self.label("while.skip")
        b, back, out, x = (self.label("while.body"), self.label("while.back"),
                           self.label("while.exit"), self.label("while.end"))
        self.out.loops = True
        assigned = _assigned(_as_list(s.body))
        self.settle(assigned & set(self.out.env), s.line)
        self.branch(s.cond, g_in, g_out, s.line)
        before = dict(self.out.env)
        arms = []
        self.start(g_out, s.line)
        arms.append(({k: before.get(k) for k in before}, g_out))
        self.emit(f"br label %{x}", s.line)
        self.start(g_in, s.line)
        self.emit(f"br label %{b}", s.line)
        self.start(b, s.line)
        phis = []
        for var in sorted(assigned & set(before)):
            v = before[var]
            if isinstance(v, UninitV):
                raise self.err(f"variable '{var}' is assigned in the loop but has no value "
                               "before it (initialise it: its value after the loop must be "
                               "defined on every path)", s.line)
            op = self.operand(v, s.line, f"'{var}' (a compare-exchange result) in a loop")
            r = self.fresh(var)
            ir = IRLine("", s.line)
            self.out.code.append(ir)
            phis.append((var, r, op, ir))
            self.out.env[var] = RegV(r)
        self.breaks.append((x, assigned, []))
        self.stmts(_as_list(s.body))
        brk = self.breaks.pop()[2]
        if self.dead:       # the body ends in a goto or break: no edge back, no second test
            for var, r, op, ir in phis:
                ir.text = f"%{r} = phi i32 [ {op}, %{g_in} ]"
        else:
            self.settle(assigned & set(before), s.line)
            self.branch(s.cond, back, out, s.line)
            latch_env = dict(self.out.env)
            self.start(back, s.line)
            self.emit(f"br label %{b}", s.line)
            for var, r, op, ir in phis:
                nv = self.operand(latch_env[var], s.line,
                                  f"'{var}' at the end of the loop body")
                ir.text = f"%{r} = phi i32 [ {op}, %{g_in} ], [ {nv}, %{back} ]"
            self.start(out, s.line)
            arms.append(({k: latch_env.get(k) for k in before}, out))
            self.emit(f"br label %{x}", s.line)
        arms.extend(brk)
        self.dead = False
        self.start(x, s.line)
        self.merge(before, arms, s.line)

    def break_stmt(self, s) -> None:
        if not self.breaks:
            raise self.err("'break' outside a while or for loop", s.line)
        end, assigned, edges = self.breaks[-1]
        self.settle(assigned & set(self.out.env), s.line)
        edges.append((dict(self.out.env), self.block))
        self.emit(f"br label %{end}", s.line)
        self.dead, self.dead_line, self.dead_what = True, s.line, "break"

    # registers
    def fresh(self, hint: Optional[str], suffixes: tuple = ("",), temp: str = "t") -> str:
        """A register name for a new value of variable `hint` (`r0`, then `r0.1`, ...) or a
        temporary (`t.1`, ...); never one already taken, with any of `suffixes` appended."""
        while True:
            if hint is None:
                self.tmp += 1
                cand = f"{temp}.{self.tmp}"
            else:
                n = self.versions.get(hint, 0)
                self.versions[hint] = n + 1
                cand = hint if n == 0 else f"{hint}.{n}"
            names = [cand + sfx for sfx in suffixes]
            if not any(x in self.taken for x in names):
                self.taken.update(names)
                return cand

    def emit(self, text: str, line: int) -> None:
        self.out.code.append(IRLine(text, line))

    # statements
    def stmts(self, body: list) -> None:
        for s in body:
            if self.dead and not isinstance(s, Label) and not (
                    isinstance(s, Block) and not s.body):
                raise self.err(f"this statement cannot be reached: it follows a "
                               f"{getattr(self, 'dead_what', 'goto')} (line {self.dead_line}) "
                               "and is not labelled", s.line)
            self.stmt(s)

    def stmt(self, s) -> None:
        if isinstance(s, Block):
            self.stmts(s.body)
        elif isinstance(s, If):
            self.if_stmt(s)
        elif isinstance(s, While):
            self.while_stmt(s)
        elif isinstance(s, Break):
            self.break_stmt(s)
        elif isinstance(s, Goto):
            self.goto_stmt(s)
        elif isinstance(s, Label):
            self.label_stmt(s)
        elif isinstance(s, Decl):
            if s.name in self.th.params:
                raise self.err(f"local variable '{s.name}' shadows the parameter '{s.name}'",
                               s.line)
            if s.name in self.out.env and not (
                    (self.th.index, s.name) in self.prog.reg_init and s.name not in self.regs):
                raise self.err(f"variable '{s.name}' is declared twice", s.line)
            self.regs.add(s.name)
            self.out.env[s.name] = (self.value(s.init, s.name) if s.init is not None
                                    else UninitV(s.line))
        elif isinstance(s, Assign):
            tgt = s.target
            if isinstance(tgt, Var):
                if tgt.name in self.th.params:
                    raise self.err(f"assigning to the pointer parameter '{tgt.name}' is not "
                                   f"supported (did you mean *{tgt.name} = ...?)", s.line)
                if tgt.name not in self.out.env:
                    raise self.err(f"variable '{tgt.name}' is not declared", s.line)
                self.out.env[tgt.name] = self.value(s.value, tgt.name)
            elif isinstance(tgt, Deref):
                p = self.pointer(tgt.arg, s.line)
                v = self.num(self.value(s.value, None), s.line,
                                 f"the value stored to *{p.name}")
                self.use(p, s.line)
                self.emit(f"store{' volatile' if p.volatile else ''} i32 {v}, "
                          f"{self.ptr(p)}", s.line)
            else:
                raise self.err("the left side of an assignment must be a variable or *pointer",
                               s.line)
        elif isinstance(s, ExprStmt):
            e = s.expr
            if isinstance(e, Call):
                self.call(e, None, statement=True)
            else:
                self.value(e, None)      # e.g. a discarded load: still an access
        else:   # pragma: no cover - the parser builds nothing else
            raise self.err(f"unsupported statement {type(s).__name__}", getattr(s, "line", 0))

    # values
    def sequenced(self, e: BinOp) -> None:
        """C11 6.5p3: the operands of `+`, `==`, ... are unsequenced; with a memory access on
        each side a compiler may do either first (docs/herd-import.md "Unsequenced
        operands")."""
        if _has_access(e.left) and _has_access(e.right):
            raise self.err(f"both operands of '{e.op}' access memory: C leaves their order "
                           "unspecified (either may be read first); write them as separate "
                           "statements in the order meant", e.line)

    def num(self, v: Value, line: int, what: str) -> str:
        """An i32 operand; a compare-exchange success flag becomes one (`icmp eq old,
        expected` + `select`: 1 iff the exchange succeeded, C11 7.17.7.4)."""
        if isinstance(v, FlagV):
            c, r = self.fresh(None, temp="c"), self.fresh(None, temp="t")
            self.emit(f"%{c} = icmp eq i32 %{v.old}, %{v.exp}", line)
            self.emit(f"%{r} = select i1 %{c}, i32 1, i32 0", line)
            return f"%{r}"
        return self.operand(v, line, what)

    def cond_value(self, e: Cond, hint: Optional[str]) -> Value:
        """`c ? a : b` (docs/herd-import.md "Control flow"): a `select` when the arms do not
        access memory, else a branch to blocks `cond.trueN` / `cond.falseN` and a `phi` in
        `cond.endN` (C evaluates the condition, then only the arm chosen)."""
        if not _cond_branches(e):
            c = self.value(e.cond, None)
            if isinstance(c, ConstV):
                return self.value(e.then if c.value != 0 else e.other, hint)
            if isinstance(c, FlagV):
                ci = self.fresh(None, temp="c")
                self.emit(f"%{ci} = icmp eq i32 %{c.old}, %{c.exp}", e.line)
            else:
                pc = self.operand(c, e.line, "the condition of '?:'")
                ci = self.fresh(None, temp="c")
                self.emit(f"%{ci} = icmp ne i32 {pc}, 0", e.line)
            a = self.value(e.then, None)
            b = self.value(e.other, None)
            if a == b:
                return a
            pa = self.num(a, e.line, "an arm of '?:'")
            pb = self.num(b, e.line, "an arm of '?:'")
            r = self.fresh(hint, temp="t")
            self.emit(f"%{r} = select i1 %{ci}, i32 {pa}, i32 {pb}", e.line)
            return RegV(r)
        t, f, j = self.label("cond.true"), self.label("cond.false"), self.label("cond.end")
        self.branch(e.cond, t, f, e.line)
        ins = []
        for lab, arm in ((t, e.then), (f, e.other)):
            self.start(lab, e.line)
            ins.append((self.num(self.value(arm, None), e.line, "an arm of '?:'"), self.block))
            self.emit(f"br label %{j}", e.line)
        self.start(j, e.line)
        r = self.fresh(hint, temp="t")
        self.emit(f"%{r} = phi i32 " + ", ".join(f"[ {o}, %{b} ]" for o, b in ins), e.line)
        return RegV(r)

    def operand(self, v: Value, line: int, what: str) -> str:
        if isinstance(v, ConstV):
            return str(v.value)
        if isinstance(v, RegV):
            return f"%{v.reg}"
        if isinstance(v, FlagV):
            raise self.err(f"{what} is the success flag of a compare-exchange: {ARITH}", line)
        if v.why:
            raise self.err(f"{what} is a variable with no value here: {v.why}", line)
        raise self.err(f"{what} is a variable that was never assigned (declared at line "
                       f"{v.line})", line)

    def pointer(self, e, line: int) -> Param:
        if isinstance(e, Var) and e.name in self.th.params:
            return self.th.params[e.name]
        if isinstance(e, AddrOf):
            raise self.err("'&' (taking an address) is not supported: pass the parameter "
                           "itself", line)
        if isinstance(e, Var) and e.name in self.out.env:
            raise self.err(f"an access through the register-dependent address '{e.name}' "
                           f"{CONTROL_FLOW}", line)
        if isinstance(e, Var):
            raise self.err(f"'{e.name}' is not a parameter of {self.th.name}", line)
        raise self.err(f"an access through a computed address {CONTROL_FLOW}", line)

    def ptr(self, p: Param) -> str:
        return f"ptr addrspace({1 if p.space == 'global' else 3}) @{p.name}"

    def use(self, p: Param, line: int) -> None:
        self.out.uses.setdefault(p.name, line)

    def value(self, e, hint: Optional[str]) -> Value:
        if isinstance(e, Num):
            return ConstV(e.value)
        if isinstance(e, Var):
            if e.name in self.th.params:
                raise self.err(f"'{e.name}' is a pointer; read the location with *{e.name} or "
                               "atomic_load", e.line)
            if e.name not in self.out.env:
                raise self.err(f"variable '{e.name}' is not declared", e.line)
            v = self.out.env[e.name]
            if isinstance(v, UninitV) and v.why:
                raise self.err(f"variable '{e.name}' is read here but {v.why}", e.line)
            if isinstance(v, UninitV):
                raise self.err(f"variable '{e.name}' is read before it is assigned (declared at "
                               f"line {v.line})", e.line)
            return v
        if isinstance(e, Deref):
            p = self.pointer(e.arg, e.line)
            r = self.fresh(hint)
            self.use(p, e.line)
            self.emit(f"%{r} = load{' volatile' if p.volatile else ''} i32, {self.ptr(p)}",
                      e.line)
            return RegV(r)
        if isinstance(e, Call):
            v = self.call(e, hint, statement=False)
            assert v is not None
            return v
        if isinstance(e, AddrOf):
            raise self.err("'&' (taking an address) is not supported", e.line)
        if isinstance(e, Cond):
            return self.cond_value(e, hint)
        if isinstance(e, Unary):
            a = self.value(e.arg, None)
            if not isinstance(a, ConstV) and e.op in ("-", "+", "~", "!"):
                pa = self.num(a, e.line, f"the operand of '{e.op}'")   # issue 11: IR ops
                if e.op == "+":
                    return a
                r = self.fresh(hint, temp="t")
                if e.op == "!":
                    c = self.fresh(None, temp="c")
                    self.emit(f"%{c} = icmp eq i32 {pa}, 0", e.line)
                    self.emit(f"%{r} = select i1 %{c}, i32 1, i32 0", e.line)
                else:
                    self.emit(f"%{r} = sub i32 0, {pa}" if e.op == "-" else
                              f"%{r} = xor i32 {pa}, -1", e.line)
                return RegV(r)
            if not isinstance(a, ConstV):
                raise self.err(f"'{e.op}' on a value read from memory {ARITH}", e.line)
            x = a.value
            r = {"-": -x, "+": x, "~": ~x, "!": int(x == 0)}[e.op]
            return ConstV(_wrap(r))
        if isinstance(e, BinOp):
            if e.op not in ("&&", "||"):
                self.sequenced(e)
            a = self.value(e.left, None)
            b = self.value(e.right, None)
            ir_ops = {"+": "add", "-": "sub", "*": "mul", "&": "and", "|": "or", "^": "xor",
                      "<<": "shl", ">>": "ashr"}
            cmps = {"==": "eq", "!=": "ne", "<": "slt", ">": "sgt", "<=": "sle", ">=": "sge"}
            if not (isinstance(a, ConstV) and isinstance(b, ConstV)) and (
                    e.op in ir_ops or e.op in cmps):      # issue 11: IR arithmetic / icmp
                pa = self.num(a, e.line, f"an operand of '{e.op}'")
                pb = self.num(b, e.line, f"an operand of '{e.op}'")
                r = self.fresh(hint, temp="t")
                if e.op in ir_ops:
                    self.emit(f"%{r} = {ir_ops[e.op]} i32 {pa}, {pb}", e.line)
                else:
                    c = self.fresh(None, temp="c")
                    self.emit(f"%{c} = icmp {cmps[e.op]} i32 {pa}, {pb}", e.line)
                    self.emit(f"%{r} = select i1 %{c}, i32 1, i32 0", e.line)
                return RegV(r)
            if not (isinstance(a, ConstV) and isinstance(b, ConstV)):
                what = ("a comparison" if e.op in ("==", "!=", "<", ">", "<=", ">=") else
                        "a logical operator" if e.op in ("&&", "||") else f"'{e.op}'")
                raise self.err(f"{what} on a value read from memory {ARITH}", e.line)
            return ConstV(_fold(e.op, a.value, b.value, self.file, e.line))
        raise self.err(f"unsupported expression {type(e).__name__}", getattr(e, "line", 0))

    # calls
    def order(self, e, line: int, fn: str) -> str:
        if isinstance(e, Var) and e.name in ORDERS:
            return ORDERS[e.name]
        if isinstance(e, Var) and e.name == "memory_order_consume":
            raise self.err("memory_order_consume has no LLVM ordering (clang strengthens it to "
                           "acquire); write memory_order_acquire if that is meant", line)
        raise self.err(f"{fn}: expected a memory_order_* argument, got {_show_expr(e)}", line)

    def scope(self, e, line: int, fn: str) -> str:
        if isinstance(e, Var) and e.name in SCOPES:
            return SCOPES[e.name]
        raise self.err(f"{fn}: expected a memory_scope_* argument, got {_show_expr(e)}", line)

    def flags(self, e, line: int, fn: str) -> set:
        if isinstance(e, Var) and e.name in FLAGS:
            return {FLAGS[e.name]}
        if isinstance(e, BinOp) and e.op == "|":
            return self.flags(e.left, line, fn) | self.flags(e.right, line, fn)
        if isinstance(e, Var) and e.name == "CLK_IMAGE_MEM_FENCE":
            raise self.err(f"{fn}: CLK_IMAGE_MEM_FENCE (images) cannot be mapped", line)
        raise self.err(f"{fn}: expected CLK_GLOBAL_MEM_FENCE and/or CLK_LOCAL_MEM_FENCE, got "
                       f"{_show_expr(e)}", line)

    def mmra(self, spaces: set) -> str:
        md = MD_BOTH if len(spaces) == 2 else MD_GLOBAL if "global" in spaces else MD_LOCAL
        self.out.md.add(md)
        return md

    @staticmethod
    def ss(scope: str) -> str:
        return f' syncscope("{scope}")' if scope else ""

    def call(self, e: Call, hint: Optional[str], statement: bool) -> Optional[Value]:
        name, args, line = e.name, e.args, e.line
        explicit = name.endswith("_explicit")
        base = name[: -len("_explicit")] if explicit else name

        def nargs(lo: int, hi: int):
            if not lo <= len(args) <= hi:
                want = str(lo) if lo == hi else f"{lo} to {hi}"
                raise self.err(f"{name} takes {want} arguments, got {len(args)}", line)

        def mo_scope(first: int, n_orders: int) -> tuple:
            """The orders and scope of an explicit call, or the short form's defaults."""
            if not explicit:
                return ("seq_cst",) * n_orders, DEFAULT_SCOPE
            orders = tuple(self.order(args[first + k], line, name) for k in range(n_orders))
            sc = (self.scope(args[first + n_orders], line, name)
                  if len(args) > first + n_orders else DEFAULT_SCOPE)
            return orders, sc

        def no_side_effects(*exprs):
            for x in exprs:
                if _has_access(x):
                    raise self.err(f"{name}: an argument that accesses memory (evaluation order "
                                   "among arguments is unspecified in C); read it into a "
                                   "variable first", line)

        if name in BARRIER_FUNCS:
            nargs(1, 2)
            if not statement:
                raise self.err(f"{name} returns nothing", line)
            spaces = self.flags(args[0], line, name)
            sc = self.scope(args[1], line, name) if len(args) == 2 else "workgroup"
            md = self.mmra(spaces)
            # OpenCL barrier = release fence, execution barrier, acquire fence (the AMDGPU
            # lowering; S002 "Fence and Address Spaces": the fence tags name the spaces)
            self.emit(f"fence{self.ss(sc)} release, !mmra {md}", line)
            self.emit("call void @llvm.amdgcn.s.barrier()", line)
            self.emit(f"fence{self.ss(sc)} acquire, !mmra {md}", line)
            self.out.barrier_labels.append((e.label, line))
            return None
        if name == "atomic_work_item_fence":
            nargs(3, 3)
            if not statement:
                raise self.err(f"{name} returns nothing", line)
            spaces = self.flags(args[0], line, name)
            order = self.order(args[1], line, name)
            sc = self.scope(args[2], line, name)
            if order == "monotonic":
                self.out.notes.append(f"line {line}: atomic_work_item_fence with "
                                      "memory_order_relaxed has no effect (OpenCL C 6.13.11) and "
                                      "is left out")
                return None
            self.emit(f"fence{self.ss(sc)} {order}, !mmra {self.mmra(spaces)}", line)
            return None
        if name in ("atomic_thread_fence", "atomic_signal_fence"):
            nargs(1, 1)
            order = self.order(args[0], line, name)
            if order == "monotonic":
                self.out.notes.append(f"line {line}: {name}(memory_order_relaxed) has no effect "
                                      "and is left out")
                return None
            sc = DEFAULT_SCOPE if name == "atomic_thread_fence" else "singlethread"
            self.emit(f"fence{self.ss(sc)} {order}", line)
            return None
        if name == "atomic_init":
            # C11 7.17.2.2: initialises the object with a non-atomic store
            nargs(2, 2)
            p = self.pointer(args[0], line)
            v = self.num(self.value(args[1], None), line, f"the value stored to {p.name}")
            if not statement:
                raise self.err(f"{name} returns nothing", line)
            self.use(p, line)
            self.emit(f"store{' volatile' if p.volatile else ''} i32 {v}, {self.ptr(p)}", line)
            return None
        if base == "atomic_load":
            nargs(1, 1) if not explicit else nargs(2, 3)
            p = self.pointer(args[0], line)
            (order,), sc = mo_scope(1, 1)
            if order in ("release", "acq_rel"):
                raise self.err(f"{name}: memory_order_{_c_order(order)} is not a load ordering",
                               line)
            r = self.fresh(hint)
            self.use(p, line)
            self.emit(f"%{r} = load atomic{' volatile' if p.volatile else ''} i32, "
                      f"{self.ptr(p)}{self.ss(sc)} {order}", line)
            return RegV(r)
        if base == "atomic_store":
            nargs(2, 2) if not explicit else nargs(3, 4)
            p = self.pointer(args[0], line)
            no_side_effects(*args[2:])
            v = self.num(self.value(args[1], None), line, f"the value stored to {p.name}")
            (order,), sc = mo_scope(2, 1)
            if order in ("acquire", "acq_rel"):
                raise self.err(f"{name}: memory_order_{_c_order(order)} is not a store ordering",
                               line)
            if not statement:
                raise self.err(f"{name} returns nothing", line)
            self.use(p, line)
            self.emit(f"store atomic{' volatile' if p.volatile else ''} i32 {v}, "
                      f"{self.ptr(p)}{self.ss(sc)} {order}", line)
            return None
        m = re.fullmatch(r"atomic_(exchange|fetch_(add|sub|and|or|xor|min|max))", base)
        if m:
            nargs(2, 2) if not explicit else nargs(3, 4)
            p = self.pointer(args[0], line)
            v = self.num(self.value(args[1], None), line, f"the operand of {name}")
            (order,), sc = mo_scope(2, 1)
            op = "xchg" if m.group(1) == "exchange" else RMW[m.group(2)]
            if op in ("min", "max") and p.unsigned:
                op = "u" + op      # atomic_uint: unsigned comparison (OpenCL C 6.13.11.7.5)
            r = self.fresh(hint)
            self.use(p, line)
            self.emit(f"%{r} = atomicrmw{' volatile' if p.volatile else ''} {op} {self.ptr(p)}, "
                      f"i32 {v}{self.ss(sc)} {order}", line)
            return RegV(r)
        m = re.fullmatch(r"atomic_compare_exchange_(strong|weak)", base)
        if m:
            nargs(3, 3) if not explicit else nargs(5, 6)
            p = self.pointer(args[0], line)
            if not (isinstance(args[1], Var) and args[1].name in self.th.params):
                raise self.err(f"{name}: the expected value must be a pointer parameter (the "
                               f"location holding it), got {_show_expr(args[1])}", line)
            ep = self.th.params[args[1].name]
            if ep.name == p.name:
                raise self.err(f"{name}: the expected value is held in the location the "
                               "exchange operates on", line)
            no_side_effects(*args[3:])
            v = self.num(self.value(args[2], None), line, f"the desired value of {name}")
            (succ, fail), sc = mo_scope(3, 2)
            if fail in ("release", "acq_rel"):
                raise self.err(f"{name}: memory_order_{_c_order(fail)} is not a failure "
                               "ordering", line)
            weak = m.group(1) == "weak"
            base_reg = self.fresh(hint, (".expected", ".old"), "cas")
            exp, old = f"{base_reg}.expected", f"{base_reg}.old"
            self.use(ep, line)
            self.use(p, line)
            # C11 7.17.7.4: reads *expected; on failure writes the value read back to it
            self.emit(f"%{exp} = load{' volatile' if ep.volatile else ''} i32, {self.ptr(ep)}",
                      line)
            self.emit(f"%{old} = cmpxchg{' weak' if weak else ''}"
                      f"{' volatile' if p.volatile else ''} {self.ptr(p)}, i32 %{exp}, i32 {v}"
                      f"{self.ss(sc)} {succ} {fail}", line)
            self.emit(f"store{' volatile' if ep.volatile else ''} i32 %{old}, {self.ptr(ep)}",
                      line)
            self.out.cas_private.setdefault(ep.name, line)
            if weak and not statement:
                raise self.err(f"{name}: the success flag of a weak compare-exchange (which may "
                               "fail spuriously) cannot be expressed without control flow; use "
                               "it as a statement or use _strong", line)
            return FlagV(old, exp, line)
        if name.startswith("atomic_") or name.startswith("__"):
            raise self.err(f"'{name}' is not supported (see docs/herd-import.md for the mapped "
                           "functions)", line)
        raise self.err(f"unknown function '{name}'", line)


def _c_order(order: str) -> str:
    return {v: k for k, v in ORDERS.items()}[order][len("memory_order_"):]


def _has_access(e) -> bool:
    if isinstance(e, (Deref, Call)):
        return True
    if isinstance(e, (BinOp,)):
        return _has_access(e.left) or _has_access(e.right)
    if isinstance(e, (Unary, AddrOf)):
        return _has_access(e.arg)
    if isinstance(e, Cond):
        return _has_access(e.cond) or _has_access(e.then) or _has_access(e.other)
    return False


def _show_expr(e) -> str:
    if isinstance(e, Num):
        return str(e.value)
    if isinstance(e, Var):
        return f"'{show(e.name, 40)}'"
    return f"a {type(e).__name__.lower()} expression"


def _wrap(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 2 ** 32 if v > I32_MAX else v


def _fold(op: str, a: int, b: int, file: str, line: int) -> int:
    """C int arithmetic on constants (32-bit two's complement)."""
    if op in ("/", "%"):
        if b == 0:
            raise LitmusError(f"division by zero ('{op}')", file, line)
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)   # C truncates toward zero
        return _wrap(q if op == "/" else a - q * b)
    if op in ("<<", ">>") and not 0 <= b < 32:
        raise LitmusError(f"shift by {b} is undefined in C", file, line)
    r = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "&": lambda: a & b,
         "|": lambda: a | b, "^": lambda: a ^ b, "<<": lambda: a << b, ">>": lambda: a >> b,
         "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
         ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b),
         "&&": lambda: int(bool(a) and bool(b)), "||": lambda: int(bool(a) or bool(b))}[op]()
    return _wrap(r)
