"""Reads the pixels of a PNG file, so a test can check what a screenshot shows.

Only what Chromium writes is supported: 8-bit RGB or RGBA, not interlaced (PNG specification,
W3C Recommendation, https://www.w3.org/TR/png/: chunk layout, zlib-compressed IDAT, the five
per-row filter types and the Paeth predictor). Standard library only.
"""
import collections
import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Image:
    def __init__(self, width, height, channels, rows):
        self.width = width
        self.height = height
        self.channels = channels
        self.rows = rows  # one bytes object per row, `channels` bytes per pixel

    def pixel(self, x, y):
        """(r, g, b) at column x, row y."""
        at = x * self.channels
        return tuple(self.rows[y][at:at + 3])

    def pixels(self):
        for row in self.rows:
            for at in range(0, len(row), self.channels):
                yield row[at], row[at + 1], row[at + 2]


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(data):
    if data[:8] != SIGNATURE:
        raise ValueError("not a PNG file")
    at = 8
    idat = []
    width = height = channels = None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (2, 6) or interlace != 0:
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {color}, "
                                 f"interlace {interlace}")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                upper_left = previous[i - channels] if i >= channels else 0
                line[i] = (line[i] + _paeth(left, previous[i], upper_left)) & 0xFF
        elif kind != 0:
            raise ValueError(f"bad PNG filter type {kind} in row {y}")
        rows.append(bytes(line))
        previous = line
    return Image(width, height, channels, rows)


def read(path):
    with open(path, "rb") as f:
        return decode(f.read())


def colour_counts(image):
    """{(r, g, b): number of pixels} of an image."""
    return collections.Counter(image.pixels())


def count_near(counts, colour, distance):
    """How many pixels of `counts` (colour_counts) are within `distance` (Euclidean, in RGB) of
    `colour` (r, g, b)."""
    r0, g0, b0 = colour
    limit = distance * distance
    return sum(n for (r, g, b), n in counts.items()
               if (r - r0) ** 2 + (g - g0) ** 2 + (b - b0) ** 2 <= limit)
