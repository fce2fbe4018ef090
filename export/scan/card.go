package scan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// phrase is how the card names a decided finding.
func phrase(o Occurrence) string {
	switch {
	case o.Decision != nil && o.Decision.Card != "":
		return o.Decision.Card
	case o.Example != "":
		return o.Example
	case o.Decision != nil && o.Decision.Decision == DecisionRedact:
		return "a credential (" + o.Rule + ")"
	}
	return "text matching the " + o.Rule + " rule"
}

type cardItem struct {
	id, phrase string
	redact     bool
	set        schemas.Source
}

// CardSection writes the credential-scan sentences of the dataset card's "Personal and
// Sensitive Information" section from the record's decided findings. taskIDs are the
// instance ids of the exported tasks; findings of other instances are candidates and are
// summarised without ids, and findings in the harness zip's source (decided
// false_positive: CheckReviewed refuses a redact there) by their phrases. Run logs and
// the crawl cache are not published and are left out, as are unreviewed findings: call it
// after CheckReviewed.
func CardSection(rec *Record, taskIDs []string) string {
	isTask := map[string]bool{}
	for _, id := range taskIDs {
		isTask[id] = true
	}
	seen := map[cardItem]bool{}
	var tasks, others []cardItem
	var harness []string
	for _, o := range rec.Findings {
		if o.Decision == nil || !published(o.Field) {
			continue
		}
		if o.Field == FieldHarness {
			if p := phrase(o); !slices.Contains(harness, p) {
				harness = append(harness, p)
			}
			continue
		}
		it := cardItem{o.InstanceID, phrase(o), o.Decision.Decision == DecisionRedact, o.Set}
		if seen[it] {
			continue
		}
		seen[it] = true
		if isTask[o.InstanceID] {
			tasks = append(tasks, it)
		} else {
			others = append(others, it)
		}
	}
	byID := func(s []cardItem) {
		sort.SliceStable(s, func(i, j int) bool {
			if s[i].id != s[j].id {
				return s[i].id < s[j].id
			}
			return s[i].phrase < s[j].phrase
		})
	}
	byID(tasks)
	byID(others)

	var b strings.Builder
	b.WriteString("All text was scanned for credentials before export")
	var fps, reds []string
	for _, it := range tasks {
		if it.redact {
			reds = append(reds, it.phrase+" in "+it.id)
		} else {
			fps = append(fps, it.phrase+" in "+it.id)
		}
	}
	switch {
	case len(fps) == 0 && len(reds) == 0:
		b.WriteString("; there were no hits.")
	case len(reds) == 0:
		fmt.Fprintf(&b, "; the only hits were text that looks like a token but is not one, left as it is (%s).", strings.Join(fps, ", "))
	default:
		fmt.Fprintf(&b, "; %s replaced in the published text by [REDACTED:<rule>] (%s)", countNoun(len(reds), "credential was", "credentials were"), strings.Join(reds, ", "))
		if len(fps) > 0 {
			fmt.Fprintf(&b, ", and the other hits were text that looks like a token but is not one, left as it is (%s)", strings.Join(fps, ", "))
		}
		b.WriteString(".")
	}
	if len(others) > 0 {
		allLite := true
		var fpPhrases []string
		nRed := 0
		have := map[string]bool{}
		for _, it := range others {
			if it.set != schemas.SourceLite {
				allLite = false
			}
			if it.redact {
				nRed++
				continue
			}
			if !have[it.phrase] {
				have[it.phrase] = true
				fpPhrases = append(fpPhrases, it.phrase)
			}
		}
		where := "In the candidates that did not become tasks"
		if allLite {
			where = "In the projects coding agents wrote"
		}
		if len(fpPhrases) > 0 {
			fmt.Fprintf(&b, " %s, the scan also matched %s; none of them is a real credential, and they are left as written.", where, joinAnd(fpPhrases))
			if nRed > 0 {
				fmt.Fprintf(&b, " %s replaced there by [REDACTED:<rule>].", capitalize(countNoun(nRed, "credential was", "credentials were")))
			}
		} else if nRed > 0 {
			fmt.Fprintf(&b, " %s, %s replaced by [REDACTED:<rule>].", where, countNoun(nRed, "credential was", "credentials were"))
		}
	}
	if len(harness) > 0 {
		sort.Strings(harness)
		fmt.Fprintf(&b, " In envgap's own source in the harness zip (tests left out), the scan matched %s; none of them is a real credential, and they are left as written.", joinAnd(harness))
	}
	return b.String()
}

func countNoun(n int, one, many string) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	num := fmt.Sprint(n)
	if n < len(words) {
		num = words[n]
	}
	if n == 1 {
		return num + " " + one
	}
	return num + " " + many
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
