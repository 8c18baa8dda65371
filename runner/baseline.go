package runner

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Baseline is a previous run's results (the results CSV that run writes):
// the cases that failed then are expected to fail now (deqp-runner's
// baseline). Only failures and errors are kept; passes, skips and flakes
// of the previous run say nothing about this one.
type Baseline struct {
	File string
	// Failing maps a case to the status it had: fail or error.
	Failing map[string]CaseStatus
}

// LoadBaseline reads a results CSV: a header line `case,status,...`, then
// one case a line.
func LoadBaseline(path string) (Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return Baseline{}, err
	}
	defer f.Close()
	return ReadBaseline(path, f)
}

// ReadBaseline is LoadBaseline on a reader; name is used in messages.
func ReadBaseline(name string, r io.Reader) (Baseline, error) {
	b := Baseline{File: name, Failing: map[string]CaseStatus{}}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return b, fmt.Errorf("%s: empty: a baseline is a results file (case,status,duration,rules)", name)
	}
	if err != nil {
		return b, fmt.Errorf("%s: %w", name, err)
	}
	if len(header) < 2 || header[0] != "case" || header[1] != "status" {
		return b, fmt.Errorf("%s:1: want the header case,status,duration,rules, got %q", name, strings.Join(header, ","))
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return b, fmt.Errorf("%s: %w", name, err)
		}
		if len(rec) < 2 {
			return b, fmt.Errorf("%s:%d: want case,status,...", name, line)
		}
		switch st := CaseStatus(rec[1]); st {
		case CaseFail, CaseError:
			b.Failing[rec[0]] = st
		case CasePass, CaseSkip, CaseFlake:
		default:
			return b, fmt.Errorf("%s:%d: unknown status %q (allowed: pass, fail, error, skip, flake)", name, line, rec[1])
		}
	}
}

// Change is what a case did against the baseline.
type Change string

// Changes against a baseline. NewFailure and Fixed fail the run: a new
// failure is a regression, and a fixed case must leave the baseline so
// that it stays true (the toml-test habit the xfail list keeps too).
const (
	Unchanged    Change = "unchanged"     // passed, or skipped, as nothing said otherwise
	NewFailure   Change = "new failure"   // fails now, not listed
	StillFailing Change = "still failing" // fails now, listed
	Fixed        Change = "fixed"         // passes now, listed as failing
	Flaked       Change = "flake"         // a flake: reported, never fails the run
)

// Compare says what case a did against the baseline.
func (b Baseline) Compare(name string, a Attempted) Change {
	_, listed := b.Failing[name]
	switch a.Status() {
	case CaseFlake:
		return Flaked
	case CaseFail, CaseError:
		if listed {
			return StillFailing
		}
		return NewFailure
	case CasePass:
		if listed {
			return Fixed
		}
	}
	return Unchanged
}

// Fails reports whether a change fails the run.
func (c Change) Fails() bool { return c == NewFailure || c == Fixed }
