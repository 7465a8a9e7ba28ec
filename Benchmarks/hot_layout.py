#!/usr/bin/env python3
"""Writes the code layout of the release link (README, "Performance": "Code layout").

Usage: hot_layout.py BINARY MAP LAYOUT_DIR CALLGRIND_FILE...

BINARY is the program callgrind ran, MAP the link map of the same link (lld -Map, with
--no-demangle). Writes into LAYOUT_DIR:
- hot-functions.order: lld's --symbol-ordering-file, every function of BINARY that ran,
  the most instructions first. lld moves the section holding each named symbol.
- hot-sections.ld: a linker script fragment that puts, ahead of .text, the functions the
  order file cannot name: private ones (sections `.text..L*`, no symbol at all), the
  compiler's small helpers (ALWAYS_HOT), and hot functions whose name is defined in many
  objects (`$sSaySSGSayxGSKsWlTm`, ...). Naming those in
  the order file would move every copy, including copies inside the standard library's
  undivided `.text` sections (hundreds of KB each); by section name, only the copies that
  are sections of their own move."""
import collections, fnmatch, re, sys

binary, map_path, layout_dir, profiles = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
# A name costs at most this many bytes of other code moved into the hot region, or it goes
# to the script: the kernel maps code 64 KiB around each first touch anyway.
MOVE_LIMIT = 4096
LINKER_SAFE_NAME = re.compile(r"[A-Za-z0-9_$.]+")
# Sections gathered whole, whatever the profile says: private functions (no symbol, so no
# profile names them) and the compiler's small per-file helpers that hundreds of files define
# under one name (closure contexts' destroyers, existential boxes, blocks): about 280 KB in
# all, and callgrind names only one copy of a name, not the copies a run uses.
ALWAYS_HOT = [".text..L*", ".text.objectdestroy*", ".text.__swift_*", ".text.block_*"]


def instructions_per_function():
    """callgrind's self cost per function of BINARY, summed over every profile."""
    definition = re.compile(r"(c?ob|c?fi|c?fe|c?fn)=\((\d+)\)(?: (.*))?$")
    totals = collections.Counter()
    for profile in profiles:
        objects, functions = {}, {}  # callgrind names an id once: `fn=(12) name`, then `fn=(12)`
        function = None
        in_binary = False
        with open(profile, errors="replace") as lines:
            for line in lines:
                line = line.rstrip("\n")
                match = definition.match(line)
                if match:
                    kind, number, name = match.groups()
                    table = objects if kind.endswith("ob") else functions if kind.endswith("fn") else None
                    if table is not None and name:
                        table[number] = name
                    if kind == "ob":
                        in_binary = objects.get(number) == binary
                    elif kind == "fn":
                        function = functions.get(number) if in_binary else None
                        if function:
                            totals[function] += 0
                elif function and line[:1].isdigit():
                    fields = line.split()  # "<line> <instructions>"
                    if len(fields) >= 2:
                        totals[function] += int(fields[1])
    merged = collections.Counter()
    for name, count in totals.items():
        merged[re.sub(r"'\d+$", "", name)] += count  # callgrind marks recursion as name'2
    return merged


def code_sections():
    """Every input section of the code output sections: (size, section name, symbols)."""
    sections, in_code = [], False
    entry = re.compile(r"\s*[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+( +)(\S.*)$")
    with open(map_path) as lines:
        for line in lines:
            match = entry.match(line.rstrip("\n"))
            if not match:
                continue
            size, indent, text = int(match.group(1), 16), len(match.group(2)), match.group(3)
            if indent == 1:  # an output section
                in_code = text == ".text" or text.startswith(".text.")
            elif in_code and indent == 9:  # an input section: file:(name)
                sections.append((size, text[text.rfind(":(") + 2:-1], []))
            elif in_code and indent == 17 and sections:  # a symbol of the last input section
                sections[-1][2].append(text)
    return sections


hot = [name for name, _ in sorted(instructions_per_function().items(), key=lambda item: (-item[1], item[0]))
       if LINKER_SAFE_NAME.fullmatch(name)]
sections = code_sections()
defined_in = collections.defaultdict(list)
for index, (_, _, symbols) in enumerate(sections):
    for symbol in symbols:
        defined_in[symbol].append(index)

ordered, by_section, moved = [], [], set()
for name in hot:  # one definition: its section is where the run executed it
    if len(defined_in.get(name, [])) == 1:
        ordered.append(name)
        moved.update(defined_in[name])
for name in hot:
    homes = set(defined_in.get(name, []))
    if len(homes) < 2:
        continue
    cost = sum(sections[index][0] for index in homes - moved)
    if cost <= MOVE_LIMIT:
        ordered.append(name)
        moved.update(homes)
    elif any(sections[index][1] == ".text." + name for index in homes) and not any(
            fnmatch.fnmatchcase(".text." + name, pattern) for pattern in ALWAYS_HOT):
        by_section.append(name)

header = ("The release link's code layout (Package.swift; README, \"Performance\"). Generated by\n"
          "`bash Benchmarks/hot-layout.sh` from callgrind profiles of the benchmark's jobs; do not edit.\n"
          "A name the code no longer has is skipped, so a stale layout costs memory, not correctness.\n")
with open(f"{layout_dir}/hot-functions.order", "w") as file:
    file.write("".join("# " + line + "\n" for line in header.splitlines()))
    file.write("".join(name + "\n" for name in ordered))
with open(f"{layout_dir}/hot-sections.ld", "w") as file:
    file.write("/* " + header.replace("\n", "\n   ").rstrip() + " */\n")
    file.write("SECTIONS {\n  .text.hot : {\n")
    file.write("".join(f"    *({pattern})\n" for pattern in ALWAYS_HOT))
    file.write("".join(f"    *(.text.{name})\n" for name in by_section))
    file.write("  }\n} INSERT BEFORE .text;\n")
hot_bytes = sum(sections[index][0] for index in moved)
patterned = sum(1 for name in hot if any(fnmatch.fnmatchcase(".text." + name, pattern) for pattern in ALWAYS_HOT))
print(f"{layout_dir}: {len(ordered)} functions by name ({hot_bytes / 2**20:.2f} MiB of sections moved), "
      f"{len(by_section)} by section, {patterned} by pattern, "
      f"{len(hot) - len(ordered) - len(by_section) - patterned} left where they are")
