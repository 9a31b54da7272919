#!/bin/sh
# Install the pinned real agent CLIs the model-api tests run against the fake APIs:
#   @anthropic-ai/claude-code@2.1.328  and  @openai/codex@0.169.0
#
# Usage: scripts/install-real-clis.sh [DIR]
#   DIR defaults to $HARNESS_REAL_CLIS_DIR, else
#   ${XDG_CACHE_HOME:-$HOME/.cache}/structured-output-harness/real-clis
#
# The binaries live outside the repository (they are large and platform-specific)
# and are pinned because the captures they are checked against were taken with
# exactly these versions.  Running the script again is cheap: when both pinned
# versions are already there it only says so.  The tests find the install through
# HARNESS_REAL_CLIS_DIR or the default folder; HARNESS_REAL_CLIS=off leaves the
# real CLIs out of the test run.
set -eu

CLAUDE_PACKAGE=@anthropic-ai/claude-code
CLAUDE_VERSION=2.1.328
CODEX_PACKAGE=@openai/codex
CODEX_VERSION=0.169.0

DIR=${1:-${HARNESS_REAL_CLIS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/structured-output-harness/real-clis}}

# The version recorded in an installed package's package.json, or nothing.
installed_version() {
    manifest="$DIR/node_modules/$1/package.json"
    [ -f "$manifest" ] || return 0
    node -e 'process.stdout.write(String(require(process.argv[1]).version || ""))' "$manifest"
}

pinned() {
    [ "$(installed_version "$CLAUDE_PACKAGE")" = "$CLAUDE_VERSION" ] &&
        [ "$(installed_version "$CODEX_PACKAGE")" = "$CODEX_VERSION" ] &&
        [ -x "$DIR/node_modules/.bin/claude" ] &&
        [ -x "$DIR/node_modules/.bin/codex" ]
}

command -v node >/dev/null 2>&1 || { echo "install-real-clis: node is required" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "install-real-clis: npm is required" >&2; exit 1; }

if pinned; then
    echo "install-real-clis: $CLAUDE_PACKAGE@$CLAUDE_VERSION and $CODEX_PACKAGE@$CODEX_VERSION already in $DIR"
    exit 0
fi

mkdir -p "$DIR"
# A package.json of its own keeps npm from walking up into an unrelated project.
[ -f "$DIR/package.json" ] || printf '{\n  "private": true\n}\n' >"$DIR/package.json"

echo "install-real-clis: installing into $DIR"
# Optional dependencies carry the native binaries, so they must not be omitted.
npm install --prefix "$DIR" --save-exact --no-audit --no-fund --loglevel=error \
    --include=optional "$CLAUDE_PACKAGE@$CLAUDE_VERSION" "$CODEX_PACKAGE@$CODEX_VERSION"

if ! pinned; then
    echo "install-real-clis: npm finished but the pinned versions are not in $DIR/node_modules" >&2
    exit 1
fi
echo "install-real-clis: done; export HARNESS_REAL_CLIS_DIR=$DIR if that is not the default folder"
