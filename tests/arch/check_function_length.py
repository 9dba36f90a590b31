#!/usr/bin/env python3
"""Fails if a function body in the given source folders runs over the line limit (STYLE.md:
"a function over ~60 lines is a sign to split"; the hard limit here is 80). A function is a
brace block opened by a line that closes a parameter list (`) {`, `) const {`, `) override {`,
a constructor's initialiser list ending `{`), not by a control statement or a lambda.
Usage: check_function_length.py LIMIT DIR..."""
import re
import sys
from pathlib import Path

CONTROL = re.compile(r'^\s*(\}\s*)?(if|for|while|switch|else|do|try|catch|namespace|struct|class|enum|union)\b')
OPENER = re.compile(r'\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?(->\s*[\w:<>,\s*&]+)?\{\s*(//.*)?$')


def strip(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split('//')[0] if '//' in line and '"' not in line else line


def functions(path):
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        text = strip(lines[i])
        if OPENER.search(text) and not CONTROL.match(text) and '[' not in text.split('(')[0] and '= [' not in text:
            depth = 0
            for j in range(i, len(lines)):
                body = strip(lines[j])
                depth += body.count('{') - body.count('}')
                if depth <= 0:
                    yield i + 1, j - i + 1, lines[i].strip()
                    break
        i += 1


def main():
    limit = int(sys.argv[1])
    over = []
    count = 0
    for folder in sys.argv[2:]:
        for path in sorted(Path(folder).rglob('*.cpp')) + sorted(Path(folder).rglob('*.hpp')):
            for line, length, head in functions(path):
                count += 1
                if length > limit:
                    over.append(f'{path}:{line}: {length} lines: {head[:90]}')
    for o in over:
        print('FAIL:', o)
    if count == 0:
        print('FAIL: no functions found')
        return 1
    if not over:
        print(f'ok: {count} functions, none over {limit} lines')
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main())
