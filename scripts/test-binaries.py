"""Reads `cargo test --no-run --message-format=json` on stdin and prints the executables of one
package's test targets, one per line: `test-binaries.py PACKAGE TARGET...` (a target is a test
file's name, or the library's crate name for its unit tests). Used by scripts/test's rust stage."""

import json
import sys

package, targets = sys.argv[1], set(sys.argv[2:])
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") != "compiler-artifact" or not message.get("executable"):
        continue
    # package_id: "path+file:///.../crates/op-core#nonzero-core@0.1.0"
    if f"#{package}@" in message["package_id"] and message["target"]["name"] in targets:
        print(message["executable"])
