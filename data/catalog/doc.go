// Package catalog is envgap's domain catalogue over the content-addressed store (package
// data), the way restic's index sits over its repository: the store knows objects, refs
// and memo entries; the catalogue knows what they mean (candidate sets and candidates,
// verdicts, tasks, exclusions, the funnel, a candidate's current outcome) and keeps an
// index of candidates by instance id.
//
// The index maps an instance id to its record's digest and the set ref that holds it. It
// is built from the candidate set objects alone (never by decoding candidate records) and
// cached by set digest: set objects are immutable, so when the candidates/ refs change only
// the sets not seen before are read. Every lookup lists the candidates/ refs first, so a
// set added by another process is seen at once.
package catalog
