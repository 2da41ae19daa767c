"""Inspection under the ``untrusted`` policy: an allow list of (program, options) that only read and print.

A command is inspection when its program is on :data:`READERS` and every
option it is given is on that program's list (short flags, short options
with a value, long options, ``-NUM``), its operands are within the
program's count (``uniq IN OUT`` writes ``OUT``: one operand at most), and,
for the programs that take a script, the script provably does nothing but
read and print (``sed`` without ``e``/``w``/``W`` and not ``-i``; ``awk``
without ``system``, pipes, ``>``, ``getline`` or ``@load``; ``find``
without ``-exec``/``-ok``/``-delete``/``-fprint``/``-fls``). Anything not
on a list — an unknown option, a long option abbreviated (``--compress=sh``),
a git global option (``-c``, ``-C``, ``--exec-path``, ``--paginate``) — makes
the command not inspection, so it is asked about. Deny lists name the
shapes someone thought of; this list names what is known to be safe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from k1412_ls.shell.words import git_subcommand_index


@dataclass(frozen=True)
class Reader:
    """The options a read-only program may be given and stay read-only."""

    flags: str = ""  # short options without a value (combinable: -la)
    valued: str = ""  # short options that take a value (attached or the next word)
    long: frozenset[str] = field(default_factory=frozenset)  # long options, ``=VALUE`` allowed
    long_valued: frozenset[str] = field(default_factory=frozenset)  # long options whose value may be the next word
    max_operands: int | None = None
    numeric: bool = False  # -NUM (head -5)
    any_option: bool = False  # no option of the program writes or runs anything (echo, test)
    operand_prefix: str = ""  # every operand must start with this (date +FORMAT)


def _set(text: str) -> frozenset[str]:
    return frozenset(f"--{name}" for name in text.split())


_GREP_LONG = _set("extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case invert-match "
                  "word-regexp line-regexp count files-with-matches files-without-match only-matching quiet silent "
                  "no-messages byte-offset with-filename no-filename line-number recursive dereference-recursive "
                  "text null null-data initial-tab line-buffered")
_GREP_VALUED = _set("regexp file max-count after-context before-context context color colour include exclude "
                    "exclude-dir exclude-from binary-files label devices directories")
_GIT_LOG = _set(
    "stat shortstat numstat name-only name-status cached staged patch no-patch oneline graph all decorate no-decorate "
    "no-color color reverse no-merges merges first-parent summary word-diff abbrev-commit follow quiet exit-code "
    "ignore-all-space ignore-space-change ignore-blank-lines raw format pretty date since until after before author "
    "committer grep max-count skip unified relative find-renames find-copies no-renames check full-history branches "
    "tags remotes source left-right cherry-pick topo-order date-order invert-grep all-match regexp-ignore-case "
    "diff-filter dirstat minimal patience histogram text full-index binary abbrev no-prefix no-textconv no-ext-diff "
    "show-signature notes no-notes parents children boundary simplify-by-decoration ancestry-path encoding "
    "merge-base no-index color-words color-moved ignore-submodules stat-width compact-summary no-walk mailmap "
    "no-mailmap use-mailmap")
_GIT_READERS: dict[str, Reader] = {
    "status": Reader("sbvz", "u", _set("short branch long porcelain untracked-files ignored ahead-behind "
                                       "no-ahead-behind show-stash renames no-renames null column no-column verbose")),
    "diff": Reader("pusqwbzRaW0123456789MCBD", "USGl", _GIT_LOG),
    "log": Reader("pusqwbzRaW0123456789MCBDi", "nUSGL", _GIT_LOG, numeric=True),
    "show": Reader("pusqwbzRaW0123456789MCBD", "USG", _GIT_LOG),
    "branch": Reader("arvl", "", _set("all remotes verbose list show-current sort format color no-color column "
                                       "no-column"), max_operands=0),
    "rev-parse": Reader("q", "", _set("show-toplevel abbrev-ref short verify git-dir is-inside-work-tree show-prefix "
                                       "show-cdup symbolic-full-name quiet absolute-git-dir git-common-dir "
                                       "is-bare-repository all branches tags")),
    "ls-files": Reader("cdmotsuikvz", "xX", _set("cached deleted modified others ignored stage unmerged killed "
                                                  "exclude-standard full-name error-unmatch directory "
                                                  "no-empty-directory eol deduplicate abbrev format"),
                       _set("exclude exclude-from exclude-per-directory")),
    "blame": Reader("lstfnepwc0123456789MC", "L", _set("porcelain line-porcelain incremental show-stats show-name "
                                                       "show-number show-email date root reverse first-parent abbrev "
                                                       "color-lines color-by-age minimal encoding"),
                    _set("contents ignore-rev ignore-revs-file")),
    "describe": Reader("", "", _set("tags all always long abbrev dirty broken exact-match first-parent match "
                                    "exclude candidates contains")),
    "grep": Reader("ivwcnlLhHIEFGPqzae0123456789", "efABCm", _set(
        "ignore-case word-regexp count line-number files-with-matches files-without-match no-filename full-name "
        "extended-regexp fixed-strings basic-regexp perl-regexp quiet null all-match break heading show-function "
        "cached untracked no-index recurse-submodules text column only-matching invert-match"),
        _set("max-depth and or not max-count after-context before-context context")),
    "remote": Reader("v", "", _set("verbose"), max_operands=0),
}
# git's global options that change nothing: anything else (-c, -C, --exec-path, --git-dir, -p) is not inspection.
_GIT_INERT_GLOBALS = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects"})

READERS: dict[str, Reader] = {
    "ls": Reader("1aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ", "ITw",
                 _set("all almost-all human-readable recursive reverse size classify directory inode dereference "
                      "numeric-uid-gid no-group si full-time group-directories-first literal escape quote-name "
                      "file-type author context color sort time time-style format indicator-style ignore hide "
                      "block-size width tabsize quoting-style")),
    "cat": Reader("AbeEnstTuv", "", _set("number number-nonblank show-all show-ends show-tabs squeeze-blank "
                                         "show-nonprinting")),
    "head": Reader("qvz", "nc", _set("quiet silent verbose zero-terminated lines bytes"), numeric=True),
    "tail": Reader("qvzfF", "nc", _set("quiet silent verbose zero-terminated follow retry lines bytes pid "
                                       "sleep-interval"), numeric=True),
    "wc": Reader("clmwL", "", _set("bytes chars lines words max-line-length files0-from")),
    "grep": Reader("EFGPiyvwxcLloqsbHhnTZzrRaIUu0123456789", "efmABCdD", _GREP_LONG, _GREP_VALUED),
    "egrep": Reader("FGPiyvwxcLloqsbHhnTZzrRaIUu0123456789", "efmABCdD", _GREP_LONG, _GREP_VALUED),
    "fgrep": Reader("EGPiyvwxcLloqsbHhnTZzrRaIUu0123456789", "efmABCdD", _GREP_LONG, _GREP_VALUED),
    "rg": Reader("iISswxvclLoqnNHuUaF0.", "egtTmABCMjr",
                 _set("ignore-case smart-case case-sensitive word-regexp line-regexp invert-match count "
                      "files-with-matches files-without-match only-matching quiet line-number no-line-number "
                      "with-filename no-filename hidden no-ignore follow fixed-strings json vimgrep files no-heading "
                      "heading column null multiline text trim stats sort-files no-messages count-matches "
                      "unrestricted no-config"),
                 _set("regexp glob iglob type type-not max-count after-context before-context context color colors "
                      "sort sortr max-depth max-filesize threads max-columns replace encoding")),
    "sort": Reader("bdfgiMhnRrVcCsumz", "ktS", _set(
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort "
        "human-numeric-sort numeric-sort random-sort reverse version-sort check merge stable unique zero-terminated"),
        _set("key field-separator buffer-size sort parallel files0-from")),
    "uniq": Reader("cdDiuz", "fsw", _set("count repeated ignore-case unique zero-terminated all-repeated group"),
                   _set("skip-fields skip-chars check-chars"), max_operands=1),
    "cut": Reader("snz", "bcdf", _set("complement only-delimited zero-terminated"),
                  _set("bytes characters delimiter fields output-delimiter")),
    "tr": Reader("cCdst", "", _set("complement delete squeeze-repeats truncate-set1"), max_operands=2),
    "nl": Reader("p", "bdfhilnsvw"),
    "diff": Reader("qsuceyNaiwbBEZtTpr0123456789", "UCxX", _set(
        "brief report-identical-files side-by-side new-file text ignore-case ignore-all-space ignore-space-change "
        "ignore-blank-lines recursive minimal show-c-function expand-tabs initial-tab strip-trailing-cr "
        "suppress-common-lines color"), _set("unified context exclude label width ignore-matching-lines "
                                              "from-file to-file")),
    "cmp": Reader("blsz", "in", max_operands=4),
    "stat": Reader("Lft", "c", _set("dereference file-system terse"), _set("format printf")),
    "file": Reader("bcEhiklLnNprsSvzZ0", "mfFeP"),
    "du": Reader("0abcDhHklLmsSxt", "dBX", _set("all apparent-size bytes total human-readable summarize si "
                                                "count-links one-file-system dereference separate-dirs inodes"),
                 _set("max-depth block-size threshold exclude time")),
    "df": Reader("ahHiklPTva", "Bt", _set("all human-readable si inodes local portability print-type total"),
                 _set("block-size output type exclude-type")),
    "pwd": Reader("LP"), "which": Reader("as"), "type": Reader("afptP"),
    "basename": Reader("az", "s"), "dirname": Reader("z"), "realpath": Reader("emLPqsz", "", _set("relative-to")),
    "readlink": Reader("femnqsvz"),
    "date": Reader("uR", "dr", _set("utc universal rfc-email"), _set("date reference iso-8601 rfc-3339"),
                   max_operands=1, operand_prefix="+"),
    "whoami": Reader(), "id": Reader("gGnruzZ"), "uname": Reader("asnrvmpio"),
    "tree": Reader("adlfxpugshDFqNvrtcCAJ", "LPI"),
    "sha256sum": Reader("bctwz", "", _set("binary check tag text quiet status strict warn zero ignore-missing")),
    "sha1sum": Reader("bctwz", "", _set("binary check tag text quiet status strict warn zero ignore-missing")),
    "sha512sum": Reader("bctwz", "", _set("binary check tag text quiet status strict warn zero ignore-missing")),
    "md5sum": Reader("bctwz", "", _set("binary check tag text quiet status strict warn zero ignore-missing")),
    "od": Reader("bcdfiloxsv", "AjNtSw"), "xxd": Reader("aeEiupC", "cglnso", max_operands=1),
    "hexdump": Reader("bcCdovx", "enfsL"), "column": Reader("tnexJL", "csoNRHWEdl"),
    "jq": Reader("ncrjaSCMsRe", "f", _set("null-input compact-output raw-output join-output ascii-output sort-keys "
                                          "color-output monochrome-output slurp raw-input exit-status tab seq stream"),
                 _set("arg argjson slurpfile rawfile indent")),
    "echo": Reader(any_option=True), "printf": Reader(any_option=True), "true": Reader(any_option=True),
    "false": Reader(any_option=True), "test": Reader(any_option=True), "[": Reader(any_option=True),
    "[[": Reader(any_option=True),
}

_FIND_VALUED = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size -mtime -mmin -atime -amin "
    "-ctime -cmin -newer -anewer -cnewer -perm -user -group -uid -gid -links -inum -maxdepth -mindepth -printf "
    "-regextype -samefile -lname -ilname -used -fstype -D -O".split())
_FIND_FLAGS = frozenset(
    "-H -L -P -empty -readable -writable -executable -depth -follow -xdev -mount -noleaf -print -print0 -ls -prune "
    "-quit -true -false -not -a -o -and -or ! ( ) , -nouser -nogroup -daystart -ignore_readdir_race".split())


def _options_fit(reader: Reader, args: list[str]) -> bool:
    operands = 0
    index = 0
    ended = False
    while index < len(args):
        word = args[index]
        index += 1
        if ended or word == "-" or not word.startswith("-") or reader.any_option:
            if reader.operand_prefix and not word.startswith(reader.operand_prefix):
                return False
            operands += 1
            continue
        if word == "--":
            ended = True
            continue
        if word.startswith("--"):
            name = word.split("=", 1)[0]
            if name in reader.long_valued:
                index += 0 if "=" in word else 1
            elif name not in reader.long:
                return False
            continue
        if reader.numeric and word[1:].isdigit():
            continue
        for at, letter in enumerate(word[1:], start=1):
            if letter in reader.valued:
                index += 0 if at + 1 < len(word) else 1
                break
            if letter not in reader.flags:
                return False
    return reader.max_operands is None or operands <= reader.max_operands


def _find_only_reads(args: list[str]) -> bool:
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word in _FIND_VALUED or word.startswith(("-newer", "-D", "-O")):
            index += 1 if word in _FIND_VALUED or word.startswith("-newer") else 0
        elif word in _FIND_FLAGS:
            continue
        elif word.startswith("-") and word != "-":
            return False  # -exec, -execdir, -ok, -delete, -fprint, -fls and anything not listed
    return True


# A sed script as a list of commands that only print: addresses, p d q Q = l n N P D h H g G x z { } b t T :,
# s/…/…/ with flags among g p i I m M and digits, y/…/…/, a i c text, r R (reads), # comments.
_SED_ADDRESS = re.compile(r"\s*(?:\d+(?:~\d+)?|\$|/(?:\\.|[^/\\])*/[IM]*|\\(.)(?:\\.|(?!\1).)*\1[IM]*)")
_SED_SIMPLE = frozenset("pdqQ=lnNPDhHgGxzF{}")


def _sed_delimited(script: str, at: int, delimiter: str, parts: int) -> int | None:
    """The index after ``parts`` parts delimited by ``delimiter`` starting at ``at``; None when unterminated."""
    for _ in range(parts):
        while at < len(script) and script[at] != delimiter:
            at += 2 if script[at] == "\\" else 1
        if at >= len(script):
            return None
        at += 1
    return at


def sed_only_prints(script: str) -> bool:
    """Whether a sed script provably only reads and prints (no ``e``, ``w``, ``W``, ``s///e``, ``s///w``)."""
    at = 0
    while at < len(script):
        char = script[at]
        if char in " \t\n;":
            at += 1
            continue
        if char == "#":
            end = script.find("\n", at)
            at = len(script) if end < 0 else end
            continue
        for _ in range(2):
            match = _SED_ADDRESS.match(script, at)
            if match is None:
                break
            at = match.end()
            while at < len(script) and script[at] in " \t":
                at += 1
            if at < len(script) and script[at] == ",":
                at += 1
            else:
                break
        while at < len(script) and script[at] in " \t!":
            at += 1
        if at >= len(script):
            return True
        command = script[at]
        at += 1
        if command in _SED_SIMPLE:
            while at < len(script) and script[at].isdigit():
                at += 1
        elif command in "sy":
            if at >= len(script) or script[at] in "\\\n":
                return False
            end = _sed_delimited(script, at + 1, script[at], 2)
            if end is None:
                return False
            at = end
            while command == "s" and at < len(script) and script[at] not in ";\n}":
                if script[at] not in "gpiImM0123456789 \t":
                    return False  # e (run), w (write) or anything unknown
                at += 1
        elif command in "aicrRbtT:":
            while True:  # text to the end of the line; a/i/c text goes on while its lines end with a backslash
                end = script.find("\n", at)
                if end < 0:
                    return True
                line, at = script[at:end], end + 1
                if command not in "aic" or not line.endswith("\\"):
                    break
        else:
            return False  # e, w, W, v and anything unknown
    return True


_SED_OPTIONS = Reader("nErsuz", "el", _set("quiet silent regexp-extended separate unbuffered null-data posix debug "
                                            "sandbox"), _set("expression line-length"))
_AWK_OPTIONS = Reader("", "Fve", frozenset(), _set("field-separator assign source"))
_AWK_UNSAFE = re.compile(r"system|getline|[|>@]|\bclose\b")


def _sed_only_reads(args: list[str]) -> bool:
    if not _options_fit(_SED_OPTIONS, args):
        return False  # -i, -f, --in-place, --file and anything unknown
    if "--sandbox" in args:
        return True  # GNU sed refuses e, w and r itself
    scripts = [args[i + 1] for i, w in enumerate(args[:-1]) if w in ("-e", "--expression")]
    scripts += [w.split("=", 1)[1] for w in args if w.startswith("--expression=")]
    scripts += [w[2:] for w in args if w.startswith("-e") and len(w) > 2 and not w.startswith("--")]
    if not scripts:
        operands = [w for w in args if not w.startswith("-") or w == "-"]
        scripts = operands[:1]
    return all(sed_only_prints(s) for s in scripts)


def _awk_only_reads(args: list[str]) -> bool:
    if not _options_fit(_AWK_OPTIONS, args):
        return False  # -f (a program from a file), -i/-l (includes and extensions) and anything unknown
    programs = [args[i + 1] for i, w in enumerate(args[:-1]) if w in ("-e", "--source")]
    if not programs:
        skip = False
        for word in args:
            if skip:
                skip = False
            elif word in ("-F", "-v", "--field-separator", "--assign"):
                skip = True
            elif not word.startswith("-"):
                programs = [word]
                break
    return bool(programs) and not any(_AWK_UNSAFE.search(p) for p in programs)


def _git_only_reads(args: list[str]) -> bool:
    at = git_subcommand_index(args)
    if any(w not in _GIT_INERT_GLOBALS for w in args[:at]) or at >= len(args):
        return False
    reader = _GIT_READERS.get(args[at])
    return reader is not None and _options_fit(reader, args[at + 1:])


# Programs none of whose options write a file or run a program: a word that is not literal (``cat "$f"``,
# ``grep x *.py``) may expand to any option and they still only read. For every other reader such a word could
# be ``--compress-program=sh``, ``-delete``, a sed script or a second ``uniq`` operand, so it is not inspection.
_ANY_WORD_SAFE = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "cut", "tr", "nl", "stat", "du", "df", "pwd",
    "basename", "dirname", "realpath", "readlink", "whoami", "id", "uname", "sha256sum", "sha1sum", "sha512sum",
    "md5sum", "od", "hexdump", "column", "cmp", "diff", "echo", "printf", "true", "false", "test", "[", "[[",
})


def is_inspection(words: list[str]) -> bool:
    """Whether a simple command (its words as written, wrappers removed, "" for a word that is not literal)
    provably only reads and prints."""
    if not words or any(not w for w in words[:1]):
        return not words
    program = words[0]
    args = words[1:]
    if "" in args and program not in _ANY_WORD_SAFE:
        return False
    if program == "git":
        return _git_only_reads(args)
    if program == "find":
        return _find_only_reads(args)
    if program in ("sed", "gsed"):
        return _sed_only_reads(args)
    if program in ("awk", "gawk", "mawk", "nawk"):
        return _awk_only_reads(args)
    reader = READERS.get(program)
    return reader is not None and _options_fit(reader, args)


__all__ = ["READERS", "Reader", "is_inspection", "sed_only_prints"]
