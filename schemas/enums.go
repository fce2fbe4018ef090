package schemas

import (
	"fmt"
	"strings"
)

// Source is the set a task or candidate comes from.
type Source string

// The three sets of the card.
const (
	SourceReported Source = "reported"
	SourceRepaired Source = "repaired"
	SourceLite     Source = "lite"
)

// Sources lists every Source in the card's order.
var Sources = []Source{SourceReported, SourceRepaired, SourceLite}

// Outcome is what happened to a candidate (the card's "outcome" column).
type Outcome string

// The eight outcomes of the card.
const (
	OutcomeTask           Outcome = "task"
	OutcomeVerified       Outcome = "verified"
	OutcomeAlreadyWorks   Outcome = "already_works"
	OutcomeNotReproduced  Outcome = "not_reproduced"
	OutcomeCodeFix        Outcome = "code_fix"
	OutcomeFixNotRecorded Outcome = "fix_not_recorded"
	OutcomeNotFixed       Outcome = "not_fixed"
	OutcomeNotChecked     Outcome = "not_checked"
)

// Outcomes lists every Outcome in the card's order.
var Outcomes = []Outcome{OutcomeTask, OutcomeVerified, OutcomeAlreadyWorks, OutcomeNotReproduced,
	OutcomeCodeFix, OutcomeFixNotRecorded, OutcomeNotFixed, OutcomeNotChecked}

// Ecosystem picks the evaluation image and the package rules.
type Ecosystem string

// The four ecosystems of the card.
const (
	EcosystemPython     Ecosystem = "python"
	EcosystemCPP        Ecosystem = "cpp"
	EcosystemJava       Ecosystem = "java"
	EcosystemJavaScript Ecosystem = "javascript"
)

// Ecosystems lists every Ecosystem.
var Ecosystems = []Ecosystem{EcosystemPython, EcosystemCPP, EcosystemJava, EcosystemJavaScript}

// Image returns the card's evaluation image name of the ecosystem.
func (e Ecosystem) Image() string {
	switch e {
	case EcosystemJavaScript:
		return "envgap-javascript-eval"
	case EcosystemPython, EcosystemCPP, EcosystemJava:
		return "envgap-" + string(e) + "-eval"
	}
	return ""
}

// Category is a failure type of the card.
type Category string

// The four categories of the card.
const (
	CategoryMisspecification   Category = "misspecification"
	CategoryUnderspecification Category = "underspecification"
	CategoryConflict           Category = "conflict"
	CategorySecurity           Category = "security"
)

// Categories lists every Category.
var Categories = []Category{CategoryMisspecification, CategoryUnderspecification, CategoryConflict, CategorySecurity}

// SecurityFlag is a registry audit finding that puts a task in the secure config.
type SecurityFlag string

// The four security flags of the card.
const (
	FlagRemoved     SecurityFlag = "removed"
	FlagNonexistent SecurityFlag = "nonexistent"
	FlagVulnerable  SecurityFlag = "vulnerable"
	FlagUnpinned    SecurityFlag = "unpinned"
)

// SecurityFlags lists every SecurityFlag.
var SecurityFlags = []SecurityFlag{FlagRemoved, FlagNonexistent, FlagVulnerable, FlagUnpinned}

// Split is a split label the harness stores.
type Split string

// The split labels of the card.
const (
	SplitFull   Split = "full"
	SplitLite   Split = "lite"
	SplitSecure Split = "secure"
)

// Splits lists every Split.
var Splits = []Split{SplitFull, SplitLite, SplitSecure}

// RegistryDateSource says where registry_date comes from.
type RegistryDateSource string

// The registry date sources of the card, one per set.
const (
	DateFromPRMerged     RegistryDateSource = "pull_request_merged_at"
	DateFromIssueCreated RegistryDateSource = "issue_created_at"
	DateFromRepairedAt   RegistryDateSource = "repaired_at"
	// DateFromCreatedAt is a Lite candidate's that was never repaired (no repaired_at):
	// its registry_date is when the agent wrote the project. Such a candidate never
	// becomes a task, so task rows keep the card's three values.
	DateFromCreatedAt RegistryDateSource = "created_at"
)

// RegistryDateSources lists every RegistryDateSource.
var RegistryDateSources = []RegistryDateSource{DateFromPRMerged, DateFromIssueCreated, DateFromRepairedAt, DateFromCreatedAt}

// DateSourceFor returns the registry_date_source the card assigns to a set.
func DateSourceFor(s Source) RegistryDateSource {
	switch s {
	case SourceRepaired:
		return DateFromPRMerged
	case SourceReported:
		return DateFromIssueCreated
	default:
		return DateFromRepairedAt
	}
}

// enumError describes a value outside an enum, listing the accepted ones.
func enumError[T ~string](v T, all []T) error {
	names := make([]string, len(all))
	for i, a := range all {
		names[i] = string(a)
	}
	return fmt.Errorf("%q is not one of %s", string(v), strings.Join(names, ", "))
}

func checkEnum[T ~string](v T, all []T) error {
	for _, a := range all {
		if v == a {
			return nil
		}
	}
	return enumError(v, all)
}

// Valid reports whether the value is one of the card's; the error lists the accepted values.
func (s Source) Valid() error { return checkEnum(s, Sources) }

// Valid reports whether the value is one of the card's.
func (o Outcome) Valid() error { return checkEnum(o, Outcomes) }

// Valid reports whether the value is one of the card's.
func (e Ecosystem) Valid() error { return checkEnum(e, Ecosystems) }

// Valid reports whether the value is one of the card's.
func (c Category) Valid() error { return checkEnum(c, Categories) }

// Valid reports whether the value is one of the card's.
func (f SecurityFlag) Valid() error { return checkEnum(f, SecurityFlags) }

// Valid reports whether the value is one of the card's.
func (s Split) Valid() error { return checkEnum(s, Splits) }

// Valid reports whether the value is one of the card's.
func (r RegistryDateSource) Valid() error { return checkEnum(r, RegistryDateSources) }
