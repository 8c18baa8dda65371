package main

import (
	"fmt"
	"io"
)

// table collects the rows of the Markdown report.
type table struct{ rows [][3]string }

func (t *table) row(what, value, aim string) { t.rows = append(t.rows, [3]string{what, value, aim}) }

func (t *table) print(w io.Writer) {
	fmt.Fprintln(w, "| what | result | aim |")
	fmt.Fprintln(w, "| --- | --- | --- |")
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %s | %s | %s |\n", r[0], r[1], r[2])
	}
}
