"""The `cuobjdump -sass` listing format, read once for the analysis scripts (sass_compare.py,
sass_ffma_yield.py): each instruction is a line "/*offset*/ text ; /* low word */" followed by a
line "/* high word */" (SM90: 16 bytes per instruction), under a "Function : name" header."""
import re

LINE = re.compile(r"^\s+/\*([0-9a-f]+)\*/\s+(.*?);\s+/\* (0x[0-9a-f]{16}) \*/")
HIGH = re.compile(r"^\s+/\* (0x[0-9a-f]{16}) \*/")


def parse(sass):
    """{function: [(offset, text, low, high)]}"""
    funcs, name, insts, pending = {}, None, None, None
    for line in sass.splitlines():
        if "Function :" in line:
            name = line.split("Function :")[1].strip()
            insts = funcs.setdefault(name, [])
            continue
        if insts is None:
            continue
        m = LINE.match(line)
        if m:
            pending = (int(m.group(1), 16), m.group(2).strip(), int(m.group(3), 16))
            continue
        m = HIGH.match(line)
        if m and pending is not None:
            insts.append(pending + (int(m.group(1), 16),))
            pending = None
    return funcs


def opcode(text):
    """The opcode of an instruction's text, its guard predicate (@P0, @!UP1) dropped."""
    parts = text.split()
    if parts and parts[0].startswith("@"):
        parts = parts[1:]
    return parts[0] if parts else ""
