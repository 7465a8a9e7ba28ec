#!/usr/bin/env bash
# The release build of one product, as the README's "Performance" section measures it:
# statically linked (Swift runtime and Foundation inside), and every function of every
# module, dependencies included, in a section of its own, so that the link can put the code
# a run executes side by side (Package.swift, Sources/aggregate/Layout/).
#   bash Tools/release-build.sh PRODUCT [SWIFT_BUILD_ARGUMENTS...]
# Every release build in this folder uses these flags: SwiftPM rebuilds every module when
# they change between two builds.
set -euo pipefail
cd "$(dirname "$0")/.."
product=$1
shift
exec swift build -c release --static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -function-sections \
    --product "$product" "$@"
