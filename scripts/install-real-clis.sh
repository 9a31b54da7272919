#!/bin/sh
# Install the real agent CLIs the model-api tests run against the fake APIs.
#
# Usage: scripts/install-real-clis.sh [DIR] [claude=VERSION] [codex=VERSION] [codebuddy=VERSION]
#   DIR defaults to $HARNESS_REAL_CLIS_DIR, else
#   ${XDG_CACHE_HOME:-$HOME/.cache}/structured-output-harness/real-clis
#
# Without a version: the pinned pair, @anthropic-ai/claude-code@2.1.328 and
# @openai/codex@0.169.0, into DIR itself.  They are pinned because the captures
# they are checked against were taken with exactly these versions; `make test`
# installs only them.  Beside them, CodeBuddy Code 2.117.0 at its pin, into
# DIR/codebuddy-2.117.0 (its own prefix, so the pinned pair's folder is never
# rewritten): it is published only inside CodeBuddy's SDK package,
# @tencent-ai/agent-sdk@0.3.201 ships it as cli/bin/codebuddy (Node only), so
# a CodeBuddy version is installed through the SDK release that ships it
# (`codebuddy_sdk`, which knows only the releases checked by hand).
#
# With cli=VERSION: that published version into DIR/CLI-VERSION (its own npm
# prefix, e.g. DIR/claude-2.1.235), so that any number of versions live side by
# side; `--target 'real:claude=2.1.235'` does this on demand.  A version the npm
# registry does not have is one line on stderr and exit 3.  A version is
# installed into a temporary folder beside its final one and renamed into place,
# so a folder that exists is complete, and two installs of one version at once
# leave one.
#
# Running the script again is cheap: what is already there is only reported.
# The tests find the installs through HARNESS_REAL_CLIS_DIR or the default
# folder; HARNESS_REAL_CLIS=off leaves the real CLIs out of the test run.
set -eu

CLAUDE_PACKAGE=@anthropic-ai/claude-code
CLAUDE_VERSION=2.1.328
CODEX_PACKAGE=@openai/codex
CODEX_VERSION=0.169.0
CODEBUDDY_PACKAGE=@tencent-ai/agent-sdk
CODEBUDDY_VERSION=2.117.0

DIR=
VERSIONS=
for arg in "$@"; do
    case $arg in
        claude=* | codex=* | codebuddy=*) VERSIONS="$VERSIONS $arg" ;;
        *=*)
            echo "install-real-clis: unknown CLI in '$arg' (claude=, codex= or codebuddy=VERSION)" >&2
            exit 2
            ;;
        *)
            [ -z "$DIR" ] || { echo "install-real-clis: one folder only, not '$DIR' and '$arg'" >&2; exit 2; }
            DIR=$arg
            ;;
    esac
done
DIR=${DIR:-${HARNESS_REAL_CLIS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/structured-output-harness/real-clis}}

# The version recorded in an installed package's package.json under prefix $1, or nothing.
installed_version() {
    manifest="$1/node_modules/$2/package.json"
    [ -f "$manifest" ] || return 0
    node -e 'process.stdout.write(String(require(process.argv[1]).version || ""))' "$manifest"
}

pinned() {
    [ "$(installed_version "$DIR" "$CLAUDE_PACKAGE")" = "$CLAUDE_VERSION" ] &&
        [ "$(installed_version "$DIR" "$CODEX_PACKAGE")" = "$CODEX_VERSION" ] &&
        [ -x "$DIR/node_modules/.bin/claude" ] &&
        [ -x "$DIR/node_modules/.bin/codex" ]
}

# A private package.json keeps npm from walking up into an unrelated project.
prefix() {
    mkdir -p "$1"
    [ -f "$1/package.json" ] || printf '{\n  "private": true\n}\n' >"$1/package.json"
}

# Optional dependencies carry the native binaries, so they must not be omitted.
npm_install() {
    into=$1
    shift
    npm install --prefix "$into" --save-exact --no-audit --no-fund --loglevel=error \
        --include=optional "$@"
}

command -v node >/dev/null 2>&1 || { echo "install-real-clis: node is required" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "install-real-clis: npm is required" >&2; exit 1; }

# Whether prefix $1 holds package $2 at version $3 with its executable $4.
complete() {
    if [ "$4" = codebuddy ]; then # the CLI inside the SDK, at its own version
        [ "$(installed_version "$1" "$2/cli")" = "$3" ] && [ -x "$1/node_modules/$2/cli/bin/codebuddy" ]
        return
    fi
    [ "$(installed_version "$1" "$2")" = "$3" ] && [ -x "$1/node_modules/.bin/$4" ]
}

# The @tencent-ai/agent-sdk release that ships CodeBuddy Code $1 (each checked by
# installing it and reading cli/package.json), or nothing for a version not known here.
codebuddy_sdk() {
    case $1 in
        2.117.0) echo 0.3.201 ;;
    esac
}

# One published version of one CLI into DIR/CLI-VERSION.
install_version() {
    cli=${1%%=*}
    version=${1#*=}
    case $cli in
        claude) package=$CLAUDE_PACKAGE ;;
        codebuddy) package=$CODEBUDDY_PACKAGE ;;
        *) package=$CODEX_PACKAGE ;;
    esac
    case $version in
        *[!0-9.]* | .* | *. | *..* | "")
            echo "install-real-clis: '$version' is not a version of $cli (MAJOR.MINOR.PATCH)" >&2
            exit 2
            ;;
    esac
    target="$DIR/$cli-$version"
    if complete "$target" "$package" "$version" "$cli"; then
        echo "install-real-clis: $cli $version ($package) already in $target"
        return 0
    fi
    published=$version
    if [ "$cli" = codebuddy ]; then
        published=$(codebuddy_sdk "$version")
        if [ -z "$published" ]; then
            echo "install-real-clis: no $package release known to ship CodeBuddy Code $version (known: $CODEBUDDY_VERSION)" >&2
            exit 3
        fi
    fi
    # Asked first, so an unpublished version is one line rather than npm's page of 404s.
    if ! found=$(npm view "$package@$published" version 2>/dev/null) || [ "$found" != "$published" ]; then
        if npm view "$package" name >/dev/null 2>&1; then
            echo "install-real-clis: $package@$published is not published on the npm registry" >&2
            exit 3
        fi
        echo "install-real-clis: cannot reach the npm registry to look up $package@$published" >&2
        exit 1
    fi
    staging="$DIR/.$cli-$version.$$"
    trap 'rm -rf "$staging"' EXIT INT TERM
    prefix "$staging"
    echo "install-real-clis: installing $package@$published into $target"
    npm_install "$staging" "$package@$published"
    if ! complete "$staging" "$package" "$version" "$cli"; then
        echo "install-real-clis: npm finished but $package@$published is not in $staging/node_modules" >&2
        exit 1
    fi
    if complete "$target" "$package" "$version" "$cli"; then
        rm -rf "$staging" # installed by another run meanwhile: keep theirs
    else
        rm -rf "$target" # an incomplete folder of an older layout, if any
        mv "$staging" "$target"
    fi
    trap - EXIT INT TERM
}

if [ -n "$VERSIONS" ]; then
    mkdir -p "$DIR"
    for each in $VERSIONS; do
        install_version "$each"
    done
    exit 0
fi

mkdir -p "$DIR"
install_version "codebuddy=$CODEBUDDY_VERSION"

if pinned; then
    echo "install-real-clis: $CLAUDE_PACKAGE@$CLAUDE_VERSION and $CODEX_PACKAGE@$CODEX_VERSION already in $DIR"
    exit 0
fi

prefix "$DIR"
echo "install-real-clis: installing into $DIR"
npm_install "$DIR" "$CLAUDE_PACKAGE@$CLAUDE_VERSION" "$CODEX_PACKAGE@$CODEX_VERSION"

if ! pinned; then
    echo "install-real-clis: npm finished but the pinned versions are not in $DIR/node_modules" >&2
    exit 1
fi
echo "install-real-clis: done; export HARNESS_REAL_CLIS_DIR=$DIR if that is not the default folder"
