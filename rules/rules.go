// Package rules is the catalogue of kernel replay rules as data: every rule
// ID of spec/RULES.md with a short requirement in the project's own words.
package rules

import (
	"regexp"
	"strconv"
	"strings"
)

// Rule is one testable requirement of the kernel replay spec.
type Rule struct {
	ID     string // e.g. "PC-3"
	Family string // e.g. "PC"
	Text   string // what the rule requires, in one sentence
}

// IDPattern is the shape of a rule ID, FAMILY-N: submatch 1 is the family,
// 2 the number. Every reader of rule IDs uses this one.
var IDPattern = regexp.MustCompile(`^([A-Z]+)-([1-9][0-9]*)$`)

// Lookup returns the rule with the given ID.
func Lookup(id string) (Rule, bool) {
	i, ok := byID[id]
	if !ok {
		return Rule{}, false
	}
	return catalogue[i], true
}

// All returns every rule, grouped by family in Families order.
func All() []Rule { return append([]Rule(nil), catalogue...) }

// Families returns the family prefixes in catalogue order.
func Families() []string { return append([]string(nil), families...) }

// Less orders rule IDs by family (catalogue order), then by number; IDs
// that are not rules sort after every rule, alphabetically.
func Less(a, b string) bool {
	fa, na := rank(a)
	fb, nb := rank(b)
	if fa != fb {
		return fa < fb
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

func rank(id string) (family, number int) {
	fam, num, _ := strings.Cut(id, "-")
	family = len(families)
	for i, f := range families {
		if f == fam {
			family = i
		}
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		n = 0
	}
	return family, n
}

var byID = func() map[string]int {
	m := make(map[string]int, len(catalogue))
	for i, r := range catalogue {
		m[r.ID] = i
	}
	return m
}()
