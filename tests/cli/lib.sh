#!/usr/bin/env bash
# The helpers of the CLI tests (one script per command, each sourcing this): the paraxis
# command as a user meets it. User errors print exactly one line on stderr and exit with 2;
# successful commands exit 0; --json output parses as JSON with the documented keys.
# Usage inside a test: source lib.sh PARAXIS DATA_DIR; expect_...; finish
set -u
paraxis=${1:?usage: TEST.sh PARAXIS DATA_DIR}
data=${2:?usage: TEST.sh PARAXIS DATA_DIR}
docs="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../docs" && pwd)"
failures=0
passed=0

# expect_error PATTERN ARGS...: exit code 2, one stderr line matching PATTERN, nothing on stdout.
expect_error() {
  local pattern=$1; shift
  local out err code
  out=$("$paraxis" "$@" 2>/tmp/paraxis_cli_err.$$); code=$?
  err=$(cat /tmp/paraxis_cli_err.$$)
  local lines; lines=$(printf '%s' "$err" | grep -c '')
  if [ "$code" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qE -- "$pattern" <<<"$err" || [ -n "$out" ]; then
    echo "FAIL: paraxis $*"; echo "  exit $code, $lines stderr lines: $err"; [ -n "$out" ] && echo "  stdout: ${out:0:200}"
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}

# expect_ok PATTERN ARGS...: exit code 0 and stdout matching PATTERN.
expect_ok() {
  local pattern=$1; shift
  local out code
  out=$("$paraxis" "$@" 2>&1); code=$?
  if [ "$code" -ne 0 ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: paraxis $* (exit $code)"; echo "${out:0:400}"; failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}

# expect_json ARGS...: exit 0 and stdout is one JSON document.
expect_json() {
  if "$paraxis" "$@" | /usr/bin/python3 -c 'import json,sys; json.load(sys.stdin)'; then
    passed=$((passed + 1))
  else
    echo "FAIL: paraxis $* does not print valid JSON"; failures=$((failures + 1))
  fi
}

# expect_json_keys SECTION ARGS...: exit 0, stdout one JSON document with every key path of
# docs/json-output.md's `keys SECTION` block.
expect_json_keys() {
  local section=$1; shift
  local out
  if out=$("$paraxis" "$@" 2>/tmp/paraxis_cli_err.$$) &&
     python3 "$(dirname "${BASH_SOURCE[0]}")/check_json_keys.py" "$docs/json-output.md" "$section" <<<"$out"; then
    passed=$((passed + 1))
  else
    echo "FAIL: paraxis $* (keys of '$section')"; head -3 /tmp/paraxis_cli_err.$$; failures=$((failures + 1))
  fi
}

finish() {
  rm -f /tmp/paraxis_cli_err.$$
  echo "$passed passed, $failures failed"
  [ "$failures" -eq 0 ]
  exit $?
}
