"""The named rule families of the encoding, each with the sentence of the documents it encodes.

An encoding module tags what it adds with `with x.ctx.family(NAME):` (encode/logic.py Ctx);
`amdmm-smt explain` reports a minimal set of these families whose constraints together forbid
an outcome. A family is either a restriction (coherence, the read-value rule ...) or the
definition of a derived relation (availability, happens-before ...): dropping a definition
leaves its relation unconstrained, so a definition is in a core exactly when the outcome is
forbidden because that relation holds (or fails to hold) as the documents define it.

STRUCTURE (what a candidate execution is: a read returns undef or the value of the one write
it reads from, modification order is a total order, registers and final values) is never
dropped and never reported. docs/semantics.md section 12 lists the families.

A new module adds its family here (name, source, sentence) and tags its constraints; a family
with no entry is still tracked and reported, without a sentence.
"""

from __future__ import annotations

STRUCTURE = "execution structure"
WRITE_VALUES = "write values"
SYNC = "release/acquire synchronization"
HB = "happens-before"
SCOPE = "scope inclusion"
ADDR_SPACE = "address-space synchronization"
MMRA = "MMRA ordering"
AVAIL = "availability"
VIS = "visibility"
LO = "location order"
READ_VALUE = "read-value rule"
CO_LO = "modification order extends location order"
COHERENCE = "coherence"
RMW = "RMW atomicity"
SEQ_CST = "seq_cst order"
NO_THIN_AIR = "no thin air (option)"
BARRIER = "barrier counting and phases"
ASYNC = "async completion"
CONTROL = "control flow (branch conditions)"

# name -> (source, the sentence it encodes)
CATALOGUE: dict[str, tuple[str, str]] = {
    WRITE_VALUES: (
        "UP§4 LangRef cmpxchg / atomicrmw",
        "cmpxchg: \"the value is loaded, compared with the expected value, and if they are "
        "equal the new value is stored\"; atomicrmw stores the result of its operation on the "
        "value it loads (docs R-cas-undef for an undef comparison)"),
    SYNC: (
        "UP§4 LangRef release/acquire, fence; S002 sync scopes",
        "a release synchronizes-with an acquire that reads from its release sequence "
        "(\"this occurs even if the value written by a release operation has been modified by "
        "a read-modify-write operation before being read\"), only between operations with "
        "inclusive scopes, and per address space for -one-as and amdgpu-synchronize-as"),
    HB: (
        "UP§4 LangRef; S002 HRF-indirect",
        "happens-before is \"the least partial order that is a superset of single-thread "
        "program order\" and synchronizes-with, \"transitive over the synchronizes-with "
        "relation independent of scope\""),
    SCOPE: (
        "S002 AMDHSA sync scopes; S000 Inclusive Scopes",
        "synchronizes-with holds only between operations with inclusive scopes (\"the scope "
        "instance of each operation contains the other operation\"); HSA: \"provided the "
        "other operation's sync scope is\" wide enough to include it"),
    ADDR_SPACE: (
        "S002 sync scopes (-one-as); S002 Fence and Address Spaces",
        "a -one-as operation \"only synchronizes with other operations within the same "
        "address space\"; a fence tagged amdgpu-synchronize-as synchronizes only the address "
        "spaces its tags name"),
    MMRA: (
        "S001 MMRA",
        "\"When two instructions' metadata are not compatible, any program order between "
        "them are not in happens-before\""),
    AVAIL: (
        "S000 Availability Operation",
        "X is an availability operation on a write W if X is W itself and W is "
        "store-available, or X is a MakeAvailable that follows W in program order, or X is a "
        "MakeAvailable whose scope instance includes W and an availability operation Z on W "
        "happens-before X with Z's scope instance including X"),
    VIS: (
        "S000 Visibility Operation",
        "Y (load-visible to the same address, or MakeVisible) is a visibility operation on W "
        "if an availability operation X on W happens-before Y and X and Y specify inclusive "
        "scopes, or a visibility operation X on W happens-before Y, made W visible in a scope "
        "instance S1 that includes Y, and X is included in Y's scope instance S2"),
    LO: (
        "S000 Location Order",
        "W is location-ordered before Y if W is program-ordered before Y; before a write W1 "
        "if an availability operation Z on W happens-before W1 and W1 is in Z's scope "
        "instance; before a read R if a visibility operation Z on W is R itself or precedes R "
        "in program order"),
    READ_VALUE: (
        "S000 Location Order (may see; the value returned)",
        "R may see any write to the same byte, except a write W1 location-ordered before a "
        "write W2 location-ordered before R, and a write W3 that R happens-before; R returns "
        "undef if no write is location-ordered before it, else the value of one of the writes "
        "it may see if they and R are all atomic with inclusive scopes, else undef if it may "
        "see a write not location-ordered before it, else the value of the one write it may "
        "see, else undef"),
    CO_LO: (
        "S000 Location Order; docs R-final",
        "modification order extends location order between writes (\"Each initialized global "
        "is assumed to have an initial system scoped atomic write operation that is "
        "location-ordered before any other read or write\"; option final_co: happens-before)"),
    COHERENCE: (
        "UP§4 LangRef monotonic; docs R-coherence",
        "\"All modification orders must be compatible with the happens-before order\"; \"If "
        "one atomic read happens before another atomic read of the same address, the later "
        "read must not see an earlier value in the modification order\" (and C++ CoWR, CoRW), "
        "between accesses with inclusive scopes"),
    RMW: (
        "UP§4 LangRef monotonic",
        "\"If the read in an atomic read-modify-write operation M reads from a monotonic (or "
        "stronger) write W, W must be immediately before M in the address's modification "
        "order\""),
    SEQ_CST: (
        "UP§4 LangRef seq_cst; docs R-sc",
        "\"a global total order on all sequentially-consistent operations\" (RC11 psc, between "
        "operations with inclusive scopes) must exist"),
    NO_THIN_AIR: (
        "option no_thin_air (not in the documents; docs R-no-thin-air)",
        "program order and reads-from together are acyclic (RC11)"),
    BARRIER: ("S002 execution-barrier model", "barrier counting and phases"),
    ASYNC: ("S004 AMDGPU asynchronous operations", "async completion"),
    CONTROL: ("LangRef br, icmp, phi; docs/semantics.md §15",
              "the executed path: each conditional branch went the way its defined condition "
              "says (an undef condition is undefined behaviour)"),
}


# The families that restrict candidate executions (an axiom a candidate may fail), as against
# the ones that define a derived relation (happens-before, availability ...). `explain` draws
# the closest candidate of a forbidden outcome by dropping as few families as it can, and
# prefers dropping restrictions: relations stay as the documents define them, one axiom fails
# (herd's `-through invalid`). docs/semantics.md section 12.
RESTRICTIONS = (READ_VALUE, COHERENCE, CO_LO, RMW, SEQ_CST, NO_THIN_AIR, WRITE_VALUES, CONTROL,
                BARRIER, ASYNC)


def describe(name: str) -> tuple[str, str]:
    return CATALOGUE.get(name, ("", ""))


def untracked(name: str) -> bool:
    return name == STRUCTURE
