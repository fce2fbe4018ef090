// Package recipe writes default recipes (the commands of one evaluation) for candidates
// that come without them, and derives a failure signature and pattern from a failing
// output for candidates without an expected_failure_regex.
//
// A default recipe is what a maintainer would type in a clean container of the
// ecosystem's evaluation image, from the project's manifests (see Default). Choices
// worth knowing:
//
//   - No "pip install --upgrade pip" in bootstrap (the card's example has one). Under a
//     registry cut-off the upgrade installs whatever pip the date-limited index offers,
//     so the toolchain would change with registry_date, the run would exercise pip's
//     behaviour at that date rather than the project's, and the upgrade itself is one
//     more install that can fail. The image's pip is fixed; bootstrap only reports the
//     toolchain's versions.
//   - A project's setup.sh runs first in resolve: it is where a repair installs system
//     packages.
//   - Java runs on the classpath (target/classes and target/dependency/*), never a fat
//     jar, so that the trace sees each dependency jar; dependency:copy-dependencies
//     copies runtime-scope jars only.
//   - repro_command is resolve then run: the failure shows at whichever step breaks.
//   - A server that never exits makes run time out; such projects need their run
//     command written by hand.
package recipe
