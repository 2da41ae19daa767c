"""The exported system-call filter, call by call, for x86-64 and aarch64 (evaluated by a BPF interpreter).

What a command would get back from the kernel for each call: allowed, refused with a chosen errno,
unknown (ENOSYS, so programs fall back), or killed (another ABI). The live tests in
``test_seccomp.py`` and ``test_seccomp_refusals.py`` show the same answers inside real sandboxes.
"""

from __future__ import annotations

import pytest

from k1412_ls.tools.sandbox import syscall_policy
from k1412_ls.tools.sandbox.libseccomp import ARCH_AARCH64, ARCH_X86_64, Unavailable, syscall_number
from k1412_ls.tools.sandbox.seccomp import command_filter, filter_problem
from tests.support.bpf_emulator import answer, evaluate

pytestmark = pytest.mark.skipif(filter_problem() is not None, reason=f"no filter here: {filter_problem()}")

MACHINES = {"x86_64": ARCH_X86_64, "aarch64": ARCH_AARCH64}
O_CREAT, O_TMPFILE = 0o100, 0o20200000


def call(machine: str, name: str, *args: int, network: bool = False) -> str:
    arch = MACHINES[machine]
    nr = syscall_number(arch, name)
    assert nr is not None, f"{name} does not exist on {machine}"
    return answer(evaluate(command_filter(network, machine), nr, arch, args))


@pytest.fixture(params=sorted(MACHINES))
def machine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_every_refused_call_fails_with_eperm_with_the_network_on_or_off(machine: str) -> None:
    arch = MACHINES[machine]
    for network in (False, True):
        program = command_filter(network, machine)
        for name in syscall_policy.REFUSED:
            nr = syscall_number(arch, name)
            if nr is not None:
                assert answer(evaluate(program, nr, arch)) == "EPERM", (machine, network, name)


def test_the_calls_the_issue_names_are_refused(machine: str) -> None:
    for name in ("io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key", "request_key",
                 "ptrace", "process_vm_readv", "process_vm_writev", "bpf", "perf_event_open", "userfaultfd",
                 "kexec_load", "mount", "setns", "pidfd_getfd"):
        assert call(machine, name) == "EPERM", name


def test_allowed_calls_are_allowed_and_unlisted_ones_are_unknown(machine: str) -> None:
    for name in ("read", "write", "openat", "execve", "mmap", "futex", "wait4", "getdents64", "statx", "connect",
                 "sendto", "bind", "listen", "accept4", "rseq", "close_range", "pipe2", "epoll_pwait"):
        assert call(machine, name, 0, 0, 0, 0) == "ALLOW", name
    # Unknown to the filter: ENOSYS, so glibc falls back (clone3 -> clone, openat2 -> openat).
    for name in ("clone3", "openat2", "lsm_get_self_attr", "statmount"):
        if syscall_number(MACHINES[machine], name) is not None:
            assert call(machine, name) == "ENOSYS", name
    assert answer(evaluate(command_filter(False, machine), 4000, MACHINES[machine])) == "ENOSYS"


def test_other_abis_are_killed() -> None:
    program = command_filter(False, "x86_64")
    getpid = syscall_number(ARCH_X86_64, "getpid")
    assert getpid is not None
    assert answer(evaluate(program, getpid, ARCH_X86_64)) == "ALLOW"  # control: the native call
    assert answer(evaluate(program, getpid | 0x40000000, ARCH_X86_64)) == "KILL"  # the x32 ABI
    assert answer(evaluate(program, 20, 0x40000003)) == "KILL"  # i386 getpid
    assert answer(evaluate(command_filter(False, "aarch64"), 20, 0x40000028)) == "KILL"  # 32-bit arm on aarch64


@pytest.mark.parametrize("network", [False, True], ids=["network-off", "network-on"])
def test_socket_families(machine: str, network: bool) -> None:
    assert call(machine, "socket", 2, 1, 0, network=network) == "ALLOW"  # AF_INET
    assert call(machine, "socket", 10, 2, 0, network=network) == "ALLOW"  # AF_INET6
    assert call(machine, "socket", 16, 3, 0, network=network) == "ALLOW"  # NETLINK_ROUTE
    assert call(machine, "socket", 16, 3, 4, network=network) == "EPROTONOSUPPORT"  # NETLINK_SOCK_DIAG
    assert call(machine, "socket", 16, 3, 15, network=network) == "EPROTONOSUPPORT"  # NETLINK_KOBJECT_UEVENT
    assert call(machine, "socket", 1, 1, 0, network=network) == ("EPERM" if not network else "ALLOW")
    for family in (0, 3, 4, 5, 9, 17, 29, 38, 40, 44, 45, 63, 64, 0x7FFFFFFF, 0xFFFFFFFF):
        assert call(machine, "socket", family, 1, 0, network=network) == "EAFNOSUPPORT", family  # 40: AF_VSOCK
    # The kernel reads an int: a high word does not change the answer.
    assert call(machine, "socket", (1 << 32) | 2, 1, 0, network=network) == "ALLOW"
    assert call(machine, "socket", (1 << 32) | 40, 1, 0, network=network) == "EAFNOSUPPORT"


def test_socketpairs_with_the_network_off_are_stream_or_seqpacket_only(machine: str) -> None:
    nonblock_cloexec = 0o4000 | 0o2000000
    for kind in (1, 5, 1 | nonblock_cloexec, 5 | nonblock_cloexec):
        assert call(machine, "socketpair", 1, kind, 0, 0) == "ALLOW", kind
    for kind in (2, 3, 2 | nonblock_cloexec, 3 | nonblock_cloexec, 4, 6, 10):  # DGRAM, RAW (a datagram), ...
        assert call(machine, "socketpair", 1, kind, 0, 0) == "EPERM", kind
        assert call(machine, "socketpair", 1, kind, 0, 0, network=True) == "ALLOW", kind
    for family in (0, 2, 10, 16, 30, 40):
        assert call(machine, "socketpair", family, 1, 0, 0) == "EAFNOSUPPORT", family


def test_setuid_and_setgid_modes_are_refused(machine: str) -> None:
    calls = [("fchmod", (3, "mode")), ("fchmodat", (-100, 0, "mode")), ("fchmodat2", (-100, 0, "mode", 0)),
             ("mknodat", (-100, 0, "mode", 0))]
    if machine == "x86_64":
        calls += [("chmod", (0, "mode")), ("creat", (0, "mode")), ("mknod", (0, "mode", 0))]
    for name, shape in calls:
        for mode, expected in ((0o755, "ALLOW"), (0o1777, "ALLOW"), (0o4755, "EPERM"), (0o2755, "EPERM"),
                               (0o6755, "EPERM"), (0o104755, "EPERM")):
            args = tuple(mode if part == "mode" else int(part) for part in shape)
            assert call(machine, name, *args) == expected, (name, oct(mode))


def test_open_checks_the_mode_only_when_it_creates(machine: str) -> None:
    opens = [("openat", lambda flags, mode: (-100, 0, flags, mode))]
    if machine == "x86_64":
        opens.append(("open", lambda flags, mode: (0, flags, mode)))
    for name, shape in opens:
        assert call(machine, name, *shape(0, 0o4755)) == "ALLOW"  # no O_CREAT: the mode register is not used
        assert call(machine, name, *shape(O_CREAT | 0o1, 0o644)) == "ALLOW"
        assert call(machine, name, *shape(O_CREAT, 0o4755)) == "EPERM"
        assert call(machine, name, *shape(O_TMPFILE | 0o2, 0o2755)) == "EPERM"
        assert call(machine, name, *shape(O_TMPFILE | 0o2, 0o600)) == "ALLOW"


def test_no_new_namespaces(machine: str) -> None:
    thread = 0x003D0F00  # what pthread_create passes
    assert call(machine, "clone", thread) == "ALLOW"
    assert call(machine, "clone", 0x11) == "ALLOW"  # fork: SIGCHLD
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        assert call(machine, "clone", 0x11 | flag) == "EPERM", hex(flag)
        assert call(machine, "unshare", flag) == "EPERM", hex(flag)
    assert call(machine, "unshare", 0x80) == "EPERM"  # CLONE_NEWTIME
    assert call(machine, "unshare", 0x400) == "ALLOW"  # CLONE_FILES


def test_personality_values_from_dockers_list_only(machine: str) -> None:
    for persona in (0, 8, 0x20000, 0x20008, 0xFFFFFFFF):
        assert call(machine, "personality", persona) == "ALLOW"
    assert call(machine, "personality", 0x0040000) == "ENOSYS"  # ADDR_NO_RANDOMIZE


def test_filters_exist_for_the_supported_machines_only() -> None:
    for machine in MACHINES:
        for network in (False, True):
            program = command_filter(network, machine)
            assert len(program) % 8 == 0 and 0 < len(program) // 8 < 4096
    with pytest.raises(Unavailable, match="x86-64 and aarch64"):
        command_filter(False, "riscv64")


def test_fcntl_is_allowed_but_for_taking_a_lease(machine: str) -> None:
    """A read lease on a file the command owns but may only read blocks host writers (round 7, ``lock``)."""
    for cmd in (0, 1, 2, 3, 4, 5, 6, 7, 36, 37, 38, 1025, 1026, 1030, 1031, 1033, 1034, 0x7FFFFFFF):
        assert call(machine, "fcntl", 3, cmd, 0) == "ALLOW", cmd
    assert call(machine, "fcntl", 3, syscall_policy.F_SETLEASE, 0) == "EPERM"
    assert call(machine, "fcntl", 3, syscall_policy.F_SETLEASE | (1 << 32), 1) == "EPERM"  # the high word is ignored
