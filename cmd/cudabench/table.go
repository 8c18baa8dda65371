package main

import (
	"fmt"
	"io"
)

// table collects the rows of the Markdown report: what, the median and the
// minimum of the samples (a check's result goes in the median column), aim.
type table struct{ rows [][4]string }

func (t *table) row(what, median, min, aim string) {
	t.rows = append(t.rows, [4]string{what, median, min, aim})
}

func (t *table) print(w io.Writer) {
	fmt.Fprintln(w, "| what | median | min | aim |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r[0], r[1], r[2], r[3])
	}
}
