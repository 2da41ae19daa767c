"""Which system calls a sandboxed command may make: an allow list, everything else refused.

The starting point is the default profile of Docker (moby), the most widely run seccomp policy for
ordinary Linux programs, taken as it applies to a container *without* added capabilities (K1412's
commands have none). From it K1412 takes away what an agent's command never needs and what has been
used to get out of sandboxes: the kernel keyrings, io_uring, ptrace and reading or writing other
processes' memory, namespaces, and every socket family but the few that tools use. With the network
off no unix socket can be made except a *connected* pair (``socketpair`` of stream or seqpacket
type), so no socket path on the host can be named — see ``docs/sandbox.md``.

Three answers:

* a call on :data:`ALLOWED` (or allowed by :func:`conditional_rules` for its arguments) runs;
* a call on :data:`REFUSED`, or a refused argument, fails with ``EPERM`` (``EAFNOSUPPORT`` for a
  socket family, ``EPROTONOSUPPORT`` for a netlink protocol), so programs say "Operation not permitted";
* any other call fails with ``ENOSYS``, as on a kernel that does not have it, so programs use their
  fallback (``clone3`` → ``clone``, ``openat2`` → ``openat``, new calls → the old ones).

Argument checks compare exactly what the kernel uses: the low 32 bits of an ``int`` argument, the
mode bits of a ``mode_t``. Rules for one call never overlap with different answers.
"""

from __future__ import annotations

import errno

from k1412_ls.tools.sandbox.libseccomp import (
    ACT_ALLOW,
    CMP_EQ,
    CMP_GT,
    CMP_MASKED_EQ,
    Compare,
    Rule,
    act_errno,
)

DEFAULT_ACTION = act_errno(errno.ENOSYS)
REFUSE = act_errno(errno.EPERM)

ALLOWED: tuple[str, ...] = (
    # reading and writing descriptors
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
    "lseek", "close", "close_range", "dup", "dup2", "dup3", "flock", "fsync", "fdatasync", "sync",
    "syncfs", "sync_file_range", "ftruncate", "truncate", "fallocate", "fadvise64", "readahead",
    "copy_file_range", "sendfile", "splice", "tee", "vmsplice", "ioctl", "cachestat",
    # paths (open, creat, mknod and the chmod family: conditional_rules)
    "access", "faccessat", "faccessat2", "stat", "lstat", "fstat", "newfstatat", "statx", "statfs", "fstatfs",
    "getdents", "getdents64", "getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat",
    "rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "readlink", "readlinkat",
    "utime", "utimes", "utimensat", "futimesat", "chown", "fchown", "fchownat", "lchown", "umask",
    "name_to_handle_at", "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",
    # memory
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "msync", "mlock", "mlock2", "munlock",
    "mlockall", "munlockall", "membarrier", "memfd_create", "memfd_secret", "pkey_alloc", "pkey_free",
    "pkey_mprotect", "remap_file_pages", "mseal", "map_shadow_stack",
    # processes and threads (clone and unshare: conditional_rules)
    "execve", "execveat", "exit", "exit_group", "fork", "vfork", "wait4", "waitid", "kill", "tkill", "tgkill",
    "getpid", "getppid", "gettid", "getpgid", "setpgid", "getpgrp", "getsid", "setsid", "set_tid_address",
    "set_robust_list", "get_robust_list", "rseq", "prctl", "arch_prctl", "modify_ldt", "get_thread_area",
    "set_thread_area", "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getattr",
    "sched_setattr", "sched_getparam", "sched_setparam", "sched_getscheduler", "sched_setscheduler",
    "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval", "getpriority", "setpriority",
    "ioprio_get", "ioprio_set", "getrlimit", "setrlimit", "prlimit64", "getrusage", "times", "sysinfo",
    "uname", "capget", "capset", "getcpu", "pidfd_open", "pidfd_send_signal", "process_mrelease",
    # credentials (no capability: only what the kernel lets any process do)
    "getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "setuid", "setgid",
    "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "setfsuid", "setfsgid",
    # signals
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigsuspend", "rt_sigtimedwait",
    "rt_sigqueueinfo", "rt_tgsigqueueinfo", "sigaltstack", "signalfd", "signalfd4", "pause", "alarm",
    "restart_syscall",
    # time
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time", "adjtimex",
    "clock_adjtime", "getitimer", "setitimer", "timer_create", "timer_delete", "timer_getoverrun",
    "timer_gettime", "timer_settime", "timerfd_create", "timerfd_gettime", "timerfd_settime",
    # waiting and events
    "poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
    "epoll_pwait", "epoll_pwait2", "epoll_ctl_old", "epoll_wait_old", "eventfd", "eventfd2", "futex",
    "futex_waitv", "futex_wake", "futex_wait", "futex_requeue", "pipe", "pipe2", "getrandom",
    "io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
    # System V and POSIX IPC (the command's own IPC namespace)
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr", "msgget", "msgsnd",
    "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl", "shmget", "shmat", "shmdt", "shmctl",
    # sockets once made (socket and socketpair: conditional_rules)
    "bind", "listen", "accept", "accept4", "connect", "getsockname", "getpeername", "getsockopt", "setsockopt",
    "sendto", "sendmsg", "sendmmsg", "recvfrom", "recvmsg", "recvmmsg", "shutdown",
    # confining oneself further
    "seccomp", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
)

# Refused outright with EPERM: named so the refusal is deliberate (tests check each one).
REFUSED: tuple[str, ...] = (
    # the kernel's key store is not namespaced: the user's session, user and persistent keyrings
    "keyctl", "add_key", "request_key",
    # io_uring makes sockets and opens files without the system calls this filter checks
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # other processes: tracing, their memory, their descriptors
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd", "kcmp",
    # kernel attack surface an unprivileged tool never needs
    "bpf", "perf_event_open", "userfaultfd", "fanotify_init", "lookup_dcookie", "open_by_handle_at",
    # mounts and namespaces (bubblewrap made all of them before the filter was loaded)
    "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr", "setns",
    # the machine itself
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
    "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup", "iopl", "ioperm", "settimeofday",
    "clock_settime", "sethostname", "setdomainname", "uselib",
    # memory placement across NUMA nodes (Docker allows them only with CAP_SYS_NICE)
    "mbind", "set_mempolicy", "get_mempolicy", "migrate_pages", "move_pages", "set_mempolicy_home_node",
)

# Socket families (linux/socket.h) and netlink protocols.
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
NETLINK_ROUTE = 0  # interfaces and addresses: getaddrinfo(AI_ADDRCONFIG), getifaddrs, `ip addr`
SOCK_STREAM, SOCK_SEQPACKET = 1, 5
_SOCK_TYPE_MASK = 0xF
_INT = 0xFFFFFFFF

# Namespace flags: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (and NEWTIME for unshare;
# in clone's flags that bit is part of the exit signal).
_CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
_CLONE_NEWTIME = 0x00000080
_SET_ID_BITS = 0o6000  # S_ISUID | S_ISGID
_CREATES = 0o100 | 0o20000000  # O_CREAT | __O_TMPFILE: the flags under which open's mode is used
# personality(): Linux, 32-bit Linux, uname26 and the query (Docker's list); anything else is ENOSYS.
_PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)


def _int_is(index: int, value: int) -> Compare:
    """The low 32 bits of argument ``index`` (an ``int``) equal ``value``."""
    return Compare(index, CMP_MASKED_EQ, value, _INT)


def _family_rules(name: str, allowed: dict[int, tuple[Rule, ...] | None], refusal: int) -> list[Rule]:
    """``name``'s rules by its first argument: ``allowed`` families (None: every use), all others ``refusal``.

    Every value of the low 32 bits (an ``int``: the kernel ignores the high word) gets exactly one
    answer: the values below the next power of two above the highest allowed family one by one, and
    everything above as one refusal per higher bit.
    """
    width = max(allowed).bit_length()
    rules: list[Rule] = []
    for family in range(1 << width):
        if family not in allowed:
            rules.append(Rule(name, refusal, (_int_is(0, family),)))
        elif allowed[family] is None:
            rules.append(Rule(name, ACT_ALLOW, (_int_is(0, family),)))
        else:
            rules += allowed[family] or ()
    rules += [Rule(name, refusal, (Compare(0, CMP_MASKED_EQ, 1 << bit, 1 << bit),)) for bit in range(width, 32)]
    return rules


def _socket_rules(network: bool) -> list[Rule]:
    netlink = (
        Rule("socket", ACT_ALLOW, (_int_is(0, AF_NETLINK), Compare(2, CMP_EQ, NETLINK_ROUTE))),
        Rule("socket", act_errno(errno.EPROTONOSUPPORT), (_int_is(0, AF_NETLINK), Compare(2, CMP_GT, NETLINK_ROUTE))),
    )
    # With the network off a unix socket of the command's own could name any socket path it can see.
    unix: tuple[Rule, ...] | None = None if network else (Rule("socket", REFUSE, (_int_is(0, AF_UNIX),)),)
    families: dict[int, tuple[Rule, ...] | None] = {AF_UNIX: unix, AF_INET: None, AF_INET6: None,
                                                     AF_NETLINK: netlink}
    return _family_rules("socket", families, act_errno(errno.EAFNOSUPPORT))


def _socketpair_rules(network: bool) -> list[Rule]:
    """A connected pair of unix sockets; with the network off only of a type that cannot be re-addressed.

    A datagram end (``SOCK_DGRAM``, and ``SOCK_RAW``, which unix sockets turn into datagrams) can
    ``connect``/``sendto`` any socket path; a stream or seqpacket end is connected for good
    (``connect`` fails with ``EISCONN``, an address given to ``sendto`` is refused or ignored).
    """
    if network:
        pair: tuple[Rule, ...] | None = None
    else:
        pair = tuple(Rule("socketpair", ACT_ALLOW if kind in (SOCK_STREAM, SOCK_SEQPACKET) else REFUSE,
                          (_int_is(0, AF_UNIX), Compare(1, CMP_MASKED_EQ, kind, _SOCK_TYPE_MASK)))
                     for kind in range(_SOCK_TYPE_MASK + 1))
    return _family_rules("socketpair", {AF_UNIX: pair}, act_errno(errno.EAFNOSUPPORT))


def _namespace_rules(name: str, bits: tuple[int, ...]) -> list[Rule]:
    """``name`` allowed unless its flags (first argument) ask for a new namespace."""
    mask = 0
    rules = []
    for bit in bits:
        mask |= bit
        rules.append(Rule(name, REFUSE, (Compare(0, CMP_MASKED_EQ, bit, bit),)))
    return [Rule(name, ACT_ALLOW, (Compare(0, CMP_MASKED_EQ, 0, mask),)), *rules]


def _mode_rules(name: str, index: int, when: tuple[Compare, ...] = ()) -> list[Rule]:
    """``name`` allowed unless its mode (argument ``index``) carries the setuid or setgid bit."""
    return [Rule(name, ACT_ALLOW if bits == 0 else REFUSE,
                 (*when, Compare(index, CMP_MASKED_EQ, bits, _SET_ID_BITS)))
            for bits in (0, 0o2000, 0o4000, 0o6000)]


def _open_rules(name: str, flags: int) -> list[Rule]:
    """Opening without creating is allowed whatever the mode register holds; creating, by the mode."""
    rules = [Rule(name, ACT_ALLOW, (Compare(flags, CMP_MASKED_EQ, 0, _CREATES),))]
    for creates in (0o100, 0o20000000, _CREATES):
        rules += _mode_rules(name, flags + 1, (Compare(flags, CMP_MASKED_EQ, creates, _CREATES),))
    return rules


F_SETLEASE = 1024


def _fcntl_rules() -> list[Rule]:
    """``fcntl`` allowed but for ``F_SETLEASE``: a lease on a file the command may only read (one it owns, such
    as a shown ``~/.gitconfig``) makes a host program's open of it fail or wait the lease-break time, and no
    build or test tool takes leases. The command (second argument, an ``int``) is ``F_SETLEASE`` exactly, or it
    has some other bit of its low 32 set, or it is 0 (``F_DUPFD``): three disjoint cases."""
    rules = [Rule("fcntl", REFUSE, (_int_is(1, F_SETLEASE),)), Rule("fcntl", ACT_ALLOW, (_int_is(1, 0),))]
    rules += [Rule("fcntl", ACT_ALLOW, (Compare(1, CMP_MASKED_EQ, 1 << bit, 1 << bit),))
              for bit in range(32) if 1 << bit != F_SETLEASE]
    return rules


def conditional_rules(network: bool) -> list[Rule]:
    """The calls decided by their arguments."""
    rules = [*_socket_rules(network), *_socketpair_rules(network),
             *_namespace_rules("clone", _CLONE_NAMESPACES),
             *_namespace_rules("unshare", (*_CLONE_NAMESPACES, _CLONE_NEWTIME)),
             *(Rule("personality", ACT_ALLOW, (Compare(0, CMP_EQ, persona),)) for persona in _PERSONALITIES),
             *_fcntl_rules()]
    for name, index in (("chmod", 1), ("fchmod", 1), ("fchmodat", 2), ("fchmodat2", 2), ("creat", 1),
                        ("mknod", 1), ("mknodat", 2)):
        rules += _mode_rules(name, index)
    rules += _open_rules("open", 1) + _open_rules("openat", 2)
    return rules


def rules(network: bool) -> list[Rule]:
    """Every rule of the filter for a command with the network on or off."""
    return [*(Rule(name, ACT_ALLOW) for name in ALLOWED), *(Rule(name, REFUSE) for name in REFUSED),
            *conditional_rules(network)]


__all__ = ["AF_INET", "AF_INET6", "AF_NETLINK", "AF_UNIX", "ALLOWED", "DEFAULT_ACTION", "NETLINK_ROUTE", "REFUSE",
           "REFUSED", "conditional_rules", "rules"]
