"""What every family of the reference engine shares: relations as bit masks over event ids,
32-bit values (docs/semantics.md section 6 "Candidate execution"), and the engine's exceptions."""

from __future__ import annotations

from ..ir import POISON, SYSTEM

M32 = 0xFFFFFFFF
LEVELS = range(SYSTEM + 1)         # singlethread .. system


class Bytes(tuple):
    """A value with some bytes undef (docs/semantics.md 15.4 R-mem-bytes): (mask, bits), mask
    the bits of the undef bytes (not 0, not all), bits 0 under it."""

    @property
    def mask(self) -> int:
        return self[0]

    @property
    def bits(self) -> int:
        return self[1]


def whole(v):
    """A value as a final state shows it: some undef byte is undef, poison is undef too
    (docs 15.4 R-mem-poison: a location's final value is not shown as poison)."""
    return None if isinstance(v, Bytes) or v == POISON else v


class ReferenceTooBig(Exception):
    """The engine cannot give the complete outcome set: more candidate executions than the
    limit allows (and, as subclasses, the two other reasons below)."""


class ReferenceUnbounded(ReferenceTooBig):
    """A consistent candidate execution whose values depend on themselves through reads-from
    (values "out of thin air", docs R-no-thin-air): any value may then be a solution, so the
    set of final states is not finitely enumerable by this engine."""


class ReferenceUnsupported(ReferenceTooBig):
    """The test uses something the written definitions do not cover."""


class _Guess(Exception):
    """Whether cmpxchg `cid` succeeds is open (it compares undef, or a value that depends on
    itself): the caller tries both."""

    def __init__(self, cid: int):
        super().__init__(cid)
        self.cid = cid


class _Pending(Exception):
    """A value needs a read whose choice is not made yet."""


class _Unknown:
    """A value that depends on itself through reads-from."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
NOWRITE = object()                 # a cmpxchg that failed writes nothing


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _s32(v: int) -> int:
    return v - (1 << 32) if v >= (1 << 31) else v


def _signed(v):
    return v if v is None or isinstance(v, str) else _s32(v)     # None: undef; "poison"
