package verify

import (
	"slices"
	"strings"
	"testing"

	"github.com/envgap/envgap/schemas"
)

func TestClassify(t *testing.T) {
	failing := Observation{BeforeFailed: true, BeforeMatched: true, FailedStep: "repro", FailedLine: "ERROR: No matching distribution found for x==2", AfterResolved: true}
	noMatch := failing
	noMatch.BeforeMatched = false
	fixFails := failing
	fixFails.AfterResolved, fixFails.AfterFailure = false, `step run exited 1: "ModuleNotFoundError: No module named 'y'"`
	passes := Observation{AfterResolved: true}
	passesButBroken := Observation{AfterFailure: "step run exited 2"}
	tests := []struct {
		name    string
		set     schemas.Source
		hasFix  bool
		obs     []Observation
		want    schemas.Outcome
		control bool
		reason  string
		stab    string
	}{
		{"verified", schemas.SourceRepaired, true, []Observation{failing}, schemas.OutcomeVerified, false, "fails before the fix with the expected failure", "1/1"},
		{"verified repeated", schemas.SourceLite, true, []Observation{failing, failing, failing}, schemas.OutcomeVerified, false, "3 of 3 runs", "3/3"},
		{"already works", schemas.SourceRepaired, true, []Observation{passes}, schemas.OutcomeAlreadyWorks, false, "nothing to repair", "1/1"},
		{"reported control", schemas.SourceReported, false, []Observation{passes, passes}, schemas.OutcomeAlreadyWorks, true, "a control", "2/2"},
		{"no failure but broken", schemas.SourceReported, false, []Observation{passesButBroken}, schemas.OutcomeNotReproduced, false, "did not run after it either", "1/1"},
		{"wrong failure", schemas.SourceRepaired, true, []Observation{noMatch}, schemas.OutcomeNotReproduced, false, "expected_failure_regex does not match", "1/1"},
		{"fix does not work", schemas.SourceLite, true, []Observation{fixFails}, schemas.OutcomeNotReproduced, false, "the fix did not make the project run", "1/1"},
		{"flaky", schemas.SourceRepaired, true, []Observation{failing, passes, failing}, schemas.OutcomeNotReproduced, false, "flaky 2/3", "2/3"},
		{"flaky after side", schemas.SourceRepaired, true, []Observation{failing, fixFails}, schemas.OutcomeNotReproduced, false, "flaky 1/2", "1/2"},
		{"reproduces without a fix", schemas.SourceReported, false, []Observation{failing}, schemas.OutcomeNotChecked, false, "no reference fix", "1/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Classify(Case{Set: tt.set, HasFix: tt.hasFix, Regex: "x==2"}, tt.obs)
			if d.Outcome != tt.want || d.IsControl != tt.control || d.Stability != tt.stab || !strings.Contains(d.Reason, tt.reason) {
				t.Errorf("got %+v; want %s control=%v stability %s reason containing %q", d, tt.want, tt.control, tt.stab, tt.reason)
			}
		})
	}
}

// Classify returns the whole decision: with a recipe pattern, the candidate's signature
// (else the matched line); without one, the signature and pattern derived from the first
// recognised failure, and a reason saying what to do when there is none.
func TestClassifyDecidesSignature(t *testing.T) {
	line := "ERROR: No matching distribution found for tabulate==0.9.1"
	failing := Observation{BeforeFailed: true, FailedStep: "repro", FailedLine: line, Recognised: true, AfterResolved: true}
	unknown := Observation{BeforeFailed: true, FailedStep: "repro", FailedLine: "Segmentation fault", AfterResolved: true}
	passes := Observation{AfterResolved: true}
	lite := Case{Set: schemas.SourceLite, HasFix: true}
	withRegex := lite
	withRegex.Regex = "No matching distribution"
	matched := failing
	matched.BeforeMatched = true
	tests := []struct {
		name      string
		c         Case
		obs       []Observation
		want      schemas.Outcome
		sig, re   string
		reasonHas string
	}{
		{"derived", lite, []Observation{failing, failing}, schemas.OutcomeVerified, line, schemas.FailureRegex(line), "fails before the fix"},
		{"derived from a later repeat is flaky", lite, []Observation{unknown, failing}, schemas.OutcomeNotReproduced, line, schemas.FailureRegex(line), "flaky 1/2"},
		{"not recognised", lite, []Observation{unknown}, schemas.OutcomeNotReproduced, "", "", "not a recognised environment failure"},
		{"recipe pattern, matched line", withRegex, []Observation{matched}, schemas.OutcomeVerified, line, "", "fails before the fix"},
		{"recipe pattern, candidate signature", Case{Set: schemas.SourceRepaired, HasFix: true, Regex: "x", Signature: "given"}, []Observation{matched}, schemas.OutcomeVerified, "given", "", "fails before the fix"},
		{"control records none", Case{Set: schemas.SourceReported, Regex: "x", Signature: "given"}, []Observation{passes}, schemas.OutcomeAlreadyWorks, "", "", "a control"},
		{"no runs", lite, nil, schemas.OutcomeNotChecked, "", "", "no runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.obs)
			d := Classify(tt.c, tt.obs)
			if d.Outcome != tt.want || d.FailureSignature != tt.sig || d.DerivedRegex != tt.re || !strings.Contains(d.Reason, tt.reasonHas) {
				t.Errorf("got %+v\nwant %s signature %q regex %q reason containing %q", d, tt.want, tt.sig, tt.re, tt.reasonHas)
			}
			if !slices.Equal(in, tt.obs) {
				t.Errorf("Classify changed its input")
			}
		})
	}
}
