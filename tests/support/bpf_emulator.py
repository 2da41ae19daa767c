"""A classic-BPF interpreter for seccomp programs: what the kernel would answer for one system call.

Lets the tests check the filter K1412 exports for every architecture it supports, on any machine,
call by call and argument by argument. Covers the instructions libseccomp emits (loads from
``struct seccomp_data``, scratch memory, ``and``, the conditional jumps, ``ret``).
"""

from __future__ import annotations

import errno
import struct

ALLOW = 0x7FFF0000
KILL_PROCESS = 0x80000000
_DATA = struct.Struct("=iIQ6Q")  # nr, arch, instruction pointer, args[6]


def evaluate(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """The filter's return value for system call ``nr`` of ``arch`` with ``args``."""
    insns = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    values = [a & 0xFFFFFFFFFFFFFFFF for a in args] + [0] * (6 - len(args))
    data = _DATA.pack(nr, arch, 0, *values)
    a = x = 0
    memory = [0] * 16
    pc = 0
    while True:
        code, jt, jf, k = insns[pc]
        pc += 1
        if code == 0x20:  # ld [k]
            a = struct.unpack_from("=I", data, k)[0]
        elif code == 0x00:  # ld #k
            a = k
        elif code == 0x60:  # ld M[k]
            a = memory[k]
        elif code == 0x61:  # ldx M[k]
            x = memory[k]
        elif code == 0x02:  # st M[k]
            memory[k] = a
        elif code == 0x03:  # stx M[k]
            memory[k] = x
        elif code == 0x54:  # and #k
            a &= k
        elif code == 0x07:  # tax
            x = a
        elif code == 0x87:  # txa
            a = x
        elif code == 0x05:  # ja
            pc += k
        elif code in (0x15, 0x25, 0x35, 0x45, 0x1D, 0x2D, 0x3D, 0x4D):
            operand = x if code & 0x08 else k
            test = {0x10: a == operand, 0x20: a > operand, 0x30: a >= operand, 0x40: bool(a & operand)}[code & 0xF0]
            pc += jt if test else jf
        elif code == 0x06:  # ret #k
            return k
        elif code == 0x16:  # ret a
            return a
        else:
            raise ValueError(f"instruction {code:#x} at {pc - 1} is not one this interpreter knows")


def answer(value: int) -> str:
    """``ALLOW``, ``KILL``, or the errno's name."""
    if value == ALLOW:
        return "ALLOW"
    if value == KILL_PROCESS:
        return "KILL"
    if value >> 16 == 0x5:
        return errno.errorcode.get(value & 0xFFFF, str(value & 0xFFFF))
    return hex(value)


__all__ = ["ALLOW", "KILL_PROCESS", "answer", "evaluate"]
