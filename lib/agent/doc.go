// Package agent is the protocol between envgap and an agent: the run directory, the task
// view, the repro server and Act (one run of an agent command in its workspace). envgap
// run --agent (harness/run) and envgap propose (verify/propose) both use it.
//
// An --agent value is parsed once into a Spec: the built-in agents noop and gold (which
// check the benchmark itself), an agent command, or one of envgap's own model agents,
// openai and bedrock (ModelAgent: the loop of lib/agent/loop with a model, one attempt
// in a box per ActModel; envgap study run drives the same model agent through its own
// protocol). Boxes are opened and agent images checked through narrow interfaces
// (BoxOpener, ImageChecker, Boxes), which verify.Stage and core.Core implement.
//
// A run directory holds:
//
//	workspace/        the project at base_commit and nothing later (Prepare checks it);
//	                  the agent's working directory
//	task.json         TaskView: what the dataset card lets an agent see (read-only)
//	feedback.txt      the last attempt's evaluation log (written by the harness)
//	trajectory.json   the agent may write its trajectory (JSON array or JSON Lines)
//	cost.json         the agent may write the attempt's cost in USD
//	home/             HOME and TMPDIR of the agent
//
// The agent command runs with sh -c in the workspace, in its own process group, with the
// ENVGAP_* variables (repro.go) pointing at these files and at a repro server that runs
// repro_command on the workspace in the evaluation container through the core.
// RunCommand kills the group at the attempt's timeout and caps its output; Files turns
// the workspace's changes into a files object (refusing links, binary and oversize
// files); the harness refuses an attempt that changed the run directory outside the
// workspace. harness/run loops attempts with feedback, scoring each with harness/eval.
//
// Every file of the run directory is data the agent could have made, never a path to
// follow: the harness reads the workspace, the trajectory, cost and feedback files through
// core/untrusted (no link followed, regular files with one link within a bound; anything
// else rejects the attempt, naming it) and writes the feedback and the state files over
// whatever is at their names. A command agent's box (actInBox) mounts the workspace and
// HOME read-write, the run directory read-only, and the trajectory and cost files (and
// ActOptions.Writable) read-write over it, each at its own path.
package agent
