package spec

import (
	"strconv"
	"strings"
)

// A repeated dispatch (Dispatch.Repeat) stands for its repetitions; each
// is an ordinary dispatch of the trace whose label is the dispatch's name,
// '#' and the repetition's index from 0. A name a spec writes cannot hold
// '#' (namePattern), so such a label never clashes with a listed dispatch.
const repetitionMark = "#"

// RepetitionLabel is the label of repetition k of the dispatch name.
func RepetitionLabel(name string, k uint64) string {
	return name + repetitionMark + strconv.FormatUint(k, 10)
}

// SplitRepetition reads a label RepetitionLabel made: the dispatch's name
// and the repetition's index. Only the canonical form reads (no sign, no
// leading zero), so one label stands for one repetition.
func SplitRepetition(label string) (name string, k uint64, ok bool) {
	i := strings.LastIndex(label, repetitionMark)
	if i <= 0 {
		return "", 0, false
	}
	digits := label[i+1:]
	if digits == "" || digits[0] < '0' || digits[0] > '9' || (len(digits) > 1 && digits[0] == '0') {
		return "", 0, false
	}
	k, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return "", 0, false
	}
	return label[:i], k, true
}

// Repetitions is how many dispatches d stands for: its repeat, else 1.
func (d Dispatch) Repetitions() uint64 { return max(d.Repeat, 1) }
