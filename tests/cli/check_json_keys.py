#!/usr/bin/env python3
"""Reads one JSON document on stdin and checks that it has every key path of the `keys SECTION`
block of docs/json-output.md (`a.b`: key b inside object a; `a[]`: every element of array a,
which must not be empty). Prints what is missing. Usage: check_json_keys.py DOC SECTION"""
import json
import re
import sys


def documented(doc, section):
    match = re.search(r'^```keys ' + re.escape(section) + r'\n(.*?)^```', open(doc).read(), re.S | re.M)
    if not match:
        sys.exit(f'FAIL: {doc} has no keys block for {section}')
    return match.group(1).split()


def missing(value, parts, path):
    if not parts:
        return []
    part = parts[0]
    array = part.endswith('[]')
    key = part[:-2] if array else part
    if not isinstance(value, dict) or key not in value:
        return [path + part]
    inner = value[key]
    if not array:
        return missing(inner, parts[1:], path + key + '.')
    if not isinstance(inner, list) or not inner:
        return [path + part + ' (an empty or non-array value)']
    out = []
    for element in inner:
        out += missing(element, parts[1:], path + part + '.')
    return sorted(set(out))


def main():
    doc, section = sys.argv[1], sys.argv[2]
    try:
        value = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f'FAIL: not one JSON document: {e}')
        return 1
    gaps = []
    for path in documented(doc, section):
        gaps += missing(value, path.split('.'), '')
    for gap in gaps:
        print(f'FAIL: {section}: no key {gap}')
    return 1 if gaps else 0


if __name__ == '__main__':
    sys.exit(main())
