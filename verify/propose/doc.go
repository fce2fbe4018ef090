// Package propose asks an agent for the reference fix of each reproduced Reported issue that
// has none (envgap propose). An eligible candidate (Eligible: a Reported candidate with no
// reference fix whose failure reproduced, and no verdict yet) gets a workspace at its base
// commit and the run --agent protocol (lib/agent); what the agent changed becomes a proposal
// in the store (Ref), refused when it touches source (lib/envfiles). The next envgap verify
// checks a proposal like any fix; admit takes a verified one into the task row.
package propose
