// Package atif is Harbor's Agent Trajectory Interchange Format (ATIF, RFC 0001 of the
// Harbor framework): the trajectory one attempt of an agent made, in the form other
// harnesses, viewers and trace exporters read.
//
// Trajectory and its parts are the format's types (v1.0 to v1.7 read; Version written).
// Validate checks a decoded JSON document against every rule of the specification the
// format's own validator applies: required fields, types, step ids sequential from 1,
// sources system, user or agent, agent-only fields on agent steps only, observation
// results that name a tool call of their own step, non-negative metrics, ISO 8601
// timestamps, and no field the format does not define. Parse reads a file an agent wrote
// (hostile: size-bounded, invalid UTF-8 replaced, never followed anywhere) and validates
// it.
//
// FromEntries converts envgap's own trajectory entries (the built-in loop's, lib/agent/
// loop: user, assistant and tool entries, notes, refused connections and the stop record)
// and the other JSON shapes envgap's later-history rules read; Raw makes the one step of a
// trajectory envgap cannot read (its text kept, marked not inspected).
//
// envgap's verdict on the attempt (corpus, task, run, attempt, status, leaks, whether the
// trajectory was inspected) is kept under the root's extra, at the key ExtraKey.
package atif
