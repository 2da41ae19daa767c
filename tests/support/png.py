"""Read the pixels of a PNG (8-bit RGB or RGBA, as Chromium writes screenshots) without extra packages."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """``(width, height, rows)``: each row holds ``width`` RGB(A) pixels, filters undone."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", chunk[:10])
            if depth != 8 or color not in (2, 6) or chunk[12] != 0:
                raise ValueError("only 8-bit non-interlaced RGB/RGBA PNGs are read here")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, [bytes(_rgb(row, channels)) for row in rows]


def _rgb(row: bytes, channels: int) -> bytes:
    if channels == 3:
        return row
    return bytes(b for i, b in enumerate(row) if i % 4 != 3)


def count_color(path: Path, rgb: tuple[int, int, int], tolerance: int = 12) -> int:
    """How many pixels are within ``tolerance`` of ``rgb`` on every channel."""
    _, _, rows = read_png(path)
    red, green, blue = rgb
    count = 0
    for row in rows:
        for i in range(0, len(row), 3):
            if abs(row[i] - red) <= tolerance and abs(row[i + 1] - green) <= tolerance \
                    and abs(row[i + 2] - blue) <= tolerance:
                count += 1
    return count


__all__ = ["count_color", "read_png"]
