"""An event color as RFC 7986 ``COLOR`` takes it: a CSS3 color name (not a hex value), so each of
the student's colors (a Google color name or ``#rrggbb``) goes out as the nearest CSS3 name."""

from __future__ import annotations

from campus_settings.colors import COLORS

# A spread of CSS3 names, enough that every Google event color lands on a look-alike.
CSS3: dict[str, tuple[int, int, int]] = {
    "black": (0, 0, 0),
    "dimgray": (105, 105, 105),
    "gray": (128, 128, 128),
    "darkgray": (169, 169, 169),
    "silver": (192, 192, 192),
    "white": (255, 255, 255),
    "red": (255, 0, 0),
    "firebrick": (178, 34, 34),
    "crimson": (220, 20, 60),
    "tomato": (255, 99, 71),
    "salmon": (250, 128, 114),
    "lightcoral": (240, 128, 128),
    "indianred": (205, 92, 92),
    "orangered": (255, 69, 0),
    "darkorange": (255, 140, 0),
    "orange": (255, 165, 0),
    "goldenrod": (218, 165, 32),
    "gold": (255, 215, 0),
    "yellow": (255, 255, 0),
    "khaki": (240, 230, 140),
    "olive": (128, 128, 0),
    "yellowgreen": (154, 205, 50),
    "limegreen": (50, 205, 50),
    "mediumseagreen": (60, 179, 113),
    "seagreen": (46, 139, 87),
    "forestgreen": (34, 139, 34),
    "green": (0, 128, 0),
    "darkgreen": (0, 100, 0),
    "teal": (0, 128, 128),
    "lightseagreen": (32, 178, 170),
    "turquoise": (64, 224, 208),
    "deepskyblue": (0, 191, 255),
    "dodgerblue": (30, 144, 255),
    "steelblue": (70, 130, 180),
    "royalblue": (65, 105, 225),
    "mediumslateblue": (123, 104, 238),
    "slateblue": (106, 90, 205),
    "darkslateblue": (72, 61, 139),
    "blue": (0, 0, 255),
    "navy": (0, 0, 128),
    "mediumpurple": (147, 112, 219),
    "darkorchid": (153, 50, 204),
    "darkmagenta": (139, 0, 139),
    "purple": (128, 0, 128),
    "orchid": (218, 112, 214),
    "hotpink": (255, 105, 180),
    "brown": (165, 42, 42),
    "chocolate": (210, 105, 30),
}


def _rgb(hex_color: str) -> tuple[int, int, int]:
    value = hex_color.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def css3_name(color: str) -> str | None:
    """The CSS3 name nearest to a stored color (a Google name or ``#rrggbb``); None for anything else."""
    hex_color = COLORS[color][1] if color in COLORS else color
    if not (len(hex_color) == 7 and hex_color.startswith("#")):
        return None
    try:
        r, g, b = _rgb(hex_color)
    except ValueError:
        return None
    return min(CSS3, key=lambda name: sum((x - y) ** 2 for x, y in zip((r, g, b), CSS3[name], strict=True)))
