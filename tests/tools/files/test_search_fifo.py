"""The Python search backend never waits on a file swapped for a FIFO (positive control: a plain read does)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def test_plain_read_of_a_fifo_blocks_positive_control(tmp_path: Path) -> None:
    fifo = tmp_path / "swapped.txt"
    os.mkfifo(fifo)
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", f"open({str(fifo)!r}, 'rb').read()"], timeout=2, check=False)


SEARCH_WITH_SWAPPED_FIFO = """
import sys
from pathlib import Path
from types import SimpleNamespace
from k1412_ls.tools.files import search
root = Path(sys.argv[1])
# The walker saw two regular files; b.txt was swapped for a FIFO before it was opened.
search.walk_files = lambda *_: iter([SimpleNamespace(path=root / "a.txt"), SimpleNamespace(path=root / "b.txt")])
print([m.path for m in search.python_search(root, root, "needle", False, None, 10)])
"""


def test_python_search_skips_a_fifo_met_after_the_walk(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("needle here\n")
    os.mkfifo(tmp_path / "b.txt")
    out = subprocess.run([sys.executable, "-c", SEARCH_WITH_SWAPPED_FIFO, str(tmp_path)], timeout=30,
                         check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "['a.txt']"
