package rocprof

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// RPV-9: the files are the reference writer's. These checks read the
// bytes, not the values: how each CSV field is quoted and each number
// written, and how results.json is laid out, so that a consumer written
// for real rocprofv3 output reads ours without a special case. They run on
// any file that claims to be rocprofv3's (by its name), ours or a real one.

// csvColumn is how the writer writes one column (csv.hpp write_csv_entry:
// strings quoted, numbers bare; floating point through numerical_formatter
// or, in the statistics files, stats_formatter).
type csvColumn int

const (
	colUnsigned    csvColumn = iota // an unsigned integer, bare
	colInteger                      // a signed integer, bare
	colText                         // a string, in double quotes
	colAgent                        // Agent_Id: "Agent N", "GPU N" or "CPU N" (metadata.cpp create_agent_index)
	colCounter                      // Counter_Value: %.6f from 1 up, %.8e below (csv.hpp)
	colStatsDouble                  // AverageNs, StdDev: %.6f above 0.01, %.8e otherwise (statistics.cpp)
	colPercent                      // Percentage: %.2f from 1, %.4f above 0.01, %.3e below
)

// csvForm is what the writer puts in each column of one kind of file; a
// column not listed (a newer writer's) is not judged.
type csvForm struct {
	suffix  string
	columns map[string]csvColumn
}

func form(suffix string, all []string, special map[string]csvColumn, rest csvColumn) csvForm {
	f := csvForm{suffix: suffix, columns: map[string]csvColumn{}}
	for _, c := range all {
		if k, ok := special[c]; ok {
			f.columns[c] = k
		} else {
			f.columns[c] = rest
		}
	}
	return f
}

// csvForms are the CSV files rocprofv3 writes for what prof produces
// (generateCSV.cpp), by file name suffix.
var csvForms = []csvForm{
	form("counter_collection.csv", CounterCSVColumns, map[string]csvColumn{
		"Agent_Id": colAgent, "Kernel_Name": colText, "Counter_Name": colText, "Counter_Value": colCounter}, colUnsigned),
	form("kernel_trace.csv", KernelTraceCSVColumns, map[string]csvColumn{
		"Kind": colText, "Agent_Id": colAgent, "Kernel_Name": colText}, colUnsigned),
	form("kernel_stats.csv", StatsCSVColumns, map[string]csvColumn{
		"Name": colText, "AverageNs": colStatsDouble, "StdDev": colStatsDouble, "Percentage": colPercent}, colUnsigned),
	form("domain_stats.csv", StatsCSVColumns, map[string]csvColumn{
		"Name": colText, "AverageNs": colStatsDouble, "StdDev": colStatsDouble, "Percentage": colPercent}, colUnsigned),
	form("agent_info.csv", AgentInfoCSVColumns, map[string]csvColumn{
		"Agent_Type": colText, "Name": colText, "Vendor_Name": colText, "Product_Name": colText, "Model_Name": colText}, colInteger),
}

// csvFormOf finds the form of a file by its name.
func csvFormOf(name string) (csvForm, bool) {
	for _, f := range csvForms {
		if strings.HasSuffix(name, f.suffix) {
			return f, true
		}
	}
	return csvForm{}, false
}

// csvCell is one field of a line as written: its text and whether it was
// in quotes.
type csvCell struct {
	text   string
	quoted bool
}

// splitCSVLine splits a line the way the writer joins it: fields separated
// by commas, a string between double quotes with nothing escaped inside
// (so a kernel name may hold a comma). ok is false for a quote that is
// never closed before the end of the line.
func splitCSVLine(line string) (cells []csvCell, ok bool) {
	for {
		if strings.HasPrefix(line, `"`) {
			// The field ends at the first quote followed by a comma or the end.
			end := -1
			for i := 1; i < len(line); i++ {
				if line[i] == '"' && (i+1 == len(line) || line[i+1] == ',') {
					end = i
					break
				}
			}
			if end < 0 {
				return cells, false
			}
			cells = append(cells, csvCell{text: line[1:end], quoted: true})
			line = line[end+1:]
		} else {
			i := strings.IndexByte(line, ',')
			if i < 0 {
				i = len(line)
			}
			cells = append(cells, csvCell{text: line[:i]})
			line = line[i:]
		}
		if line == "" {
			return cells, true
		}
		line = line[1:] // the comma
	}
}

var (
	unsignedForm = regexp.MustCompile(`^[0-9]+$`)
	integerForm  = regexp.MustCompile(`^-?[0-9]+$`)
	agentForm    = regexp.MustCompile(`^(Agent|GPU|CPU) [0-9]+$`)
)

// cellProblem says what is wrong with one field, or "".
func cellProblem(kind csvColumn, c csvCell) string {
	wantQuoted := kind == colText || kind == colAgent
	switch {
	case wantQuoted && !c.quoted:
		return "is not in double quotes: the writer quotes every text field"
	case !wantQuoted && c.quoted:
		return "is in double quotes: the writer writes numbers bare"
	}
	switch kind {
	case colUnsigned:
		if !unsignedForm.MatchString(c.text) {
			return "is not an unsigned integer as the writer writes one"
		}
	case colInteger:
		if !integerForm.MatchString(c.text) {
			return "is not an integer as the writer writes one"
		}
	case colAgent:
		if !agentForm.MatchString(c.text) {
			return `does not name an agent as the writer does ("Agent N", or "GPU N" with -A type-relative)`
		}
	case colCounter, colStatsDouble, colPercent:
		v, err := strconv.ParseFloat(c.text, 64)
		if err != nil {
			return "is not a number"
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "is not a finite number: a counter or a duration never is"
		}
		want, how := csvDouble(v), "%.6f from 1 up, %.8e below"
		switch kind {
		case colStatsDouble:
			want, how = statsDouble(v), "%.6f above 0.01, %.8e otherwise"
		case colPercent:
			want, how = statsPercent(v), "%.2f from 1 up, %.4f above 0.01, %.3e below"
		}
		if c.text != want {
			return fmt.Sprintf("is not written as the writer writes this value (%s: %s)", how, want)
		}
	}
	return ""
}

// csvFormProblems checks one CSV file's bytes against its writer's form:
// the header quoted, every field of a known column quoted or bare and its
// number written as the writer writes it, every row as long as the header.
// Each kind of problem is reported once per column, at its first line,
// with the number of lines like it.
func csvFormProblems(f csvForm, r io.Reader) []Problem {
	file := f.suffix
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var problems []Problem
	add := func(format string, args ...any) {
		problems = append(problems, Problem{Rule: "RPV-9", Msg: file + " " + fmt.Sprintf(format, args...)})
	}
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			add("cannot be read: %v", err)
		}
		return problems // an empty file: the CSV checks say so
	}
	head, ok := splitCSVLine(strings.TrimPrefix(strings.TrimSuffix(sc.Text(), "\r"), "\ufeff"))
	if !ok {
		add("line 1: a quote is never closed")
		return problems
	}
	var unquoted []string
	kinds := make([]csvColumn, len(head))
	known := make([]bool, len(head))
	for i, h := range head {
		if !h.quoted {
			unquoted = append(unquoted, h.text)
		}
		kinds[i], known[i] = f.columns[h.text]
	}
	if len(unquoted) > 0 {
		add("line 1: header field(s) %s not in double quotes: the writer quotes every header field", strings.Join(unquoted, ", "))
	}
	type finding struct {
		line  int
		text  string
		count int
	}
	found := map[string]*finding{} // column + problem -> first line
	var order []string
	for line := 2; sc.Scan(); line++ {
		text := strings.TrimSuffix(sc.Text(), "\r")
		cells, ok := splitCSVLine(text)
		if !ok {
			add("line %d: a quote is never closed", line)
			break
		}
		if len(cells) != len(head) {
			add("line %d has %d fields, the header %d: the writer writes every column of every row", line, len(cells), len(head))
			break
		}
		for i, c := range cells {
			if !known[i] {
				continue
			}
			if p := cellProblem(kinds[i], c); p != "" {
				key := head[i].text + "\x00" + p
				if fd := found[key]; fd != nil {
					fd.count++
				} else {
					found[key] = &finding{line: line, text: c.text, count: 1}
					order = append(order, key)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		add("cannot be read: %v", err)
	}
	for _, key := range order {
		col, p, _ := strings.Cut(key, "\x00")
		fd := found[key]
		more := ""
		if fd.count > 1 {
			more = fmt.Sprintf(" (%d lines like it)", fd.count)
		}
		add("line %d: %s %q %s%s", fd.line, col, fd.text, p, more)
	}
	return problems
}

// The layout of results.json (generateJSON.cpp write_json and the
// serializers it calls): the keys of each object the writer writes, in
// its order. Keys not listed (a newer writer's) are not judged; listed
// keys must come in this order.
var jsonKeyOrder = map[string][]string{
	"": {"rocprofiler-sdk-tool"},
	"/rocprofiler-sdk-tool/[]": {"metadata", "agents", "counters", "strings", "code_objects", "kernel_symbols",
		"host_functions", "summary", "callback_records", "buffer_records"},
	"/rocprofiler-sdk-tool/[]/metadata": {"node", "pid", "init_time", "fini_time", "command", "config"},
	"/rocprofiler-sdk-tool/[]/strings": {"callback_records", "buffer_records", "marker_api", "correlation_id",
		"counters", "pc_sample_instructions", "pc_sample_comments", "att_filenames", "code_object_snapshot_filenames"},
	"/rocprofiler-sdk-tool/[]/callback_records": {"counter_collection", "spm_counter_collection"},
	"/rocprofiler-sdk-tool/[]/buffer_records": {"kernel_dispatch", "hip_api", "hsa_api", "marker_api", "rccl_api",
		"memory_copy", "memory_allocation", "scratch_memory", "kfd", "rocdecode_api", "rocjpeg_api", "hipfile_api",
		"pc_sample_host_trap", "pc_sample_stochastic", "hip_graph", "rocshmem_api"},
	counterRecordPath:                 {"thread_id", "dispatch_data", "records", "stream_id", "replay_pass"},
	counterRecordPath + "/records/[]": {"counter_id", "value"},
}

// jsonRequired are the keys a consumer of the writer's output relies on.
var jsonRequired = map[string][]string{
	"":                         {"rocprofiler-sdk-tool"},
	"/rocprofiler-sdk-tool/[]": {"metadata", "agents", "counters", "strings", "callback_records", "buffer_records"},
}

const (
	counterRecordPath = "/rocprofiler-sdk-tool/[]/callback_records/counter_collection/[]"
	counterValuePath  = counterRecordPath + "/records/[]/value"
)

// jsonFrame is one open object or array of the walk.
type jsonFrame struct {
	object bool
	path   string   // "/rocprofiler-sdk-tool/[]/callback_records/...", arrays' elements "[]"
	key    string   // objects: the key whose value comes next
	onKey  bool     // objects: the next token is a key
	keys   []string // objects: the keys so far
	n      int      // arrays: the elements so far
}

// jsonFormProblems walks results.json token by token, keeping only the
// open objects: the key order of each object the writer lays out, a lone
// top-level key, and counter values written as the doubles they are
// (rapidjson writes 4.0, never 4; never null). Each kind of problem is
// reported once, with the number of places like it.
func jsonFormProblems(data []byte) []Problem {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*jsonFrame
	type finding struct {
		msg   string
		count int
	}
	found := map[string]*finding{}
	var order []string
	report := func(kind, msg string) {
		if f := found[kind]; f != nil {
			f.count++
			return
		}
		found[kind] = &finding{msg: msg, count: 1}
		order = append(order, kind)
	}
	// where names the counter value being read: counter_collection[i].records[k].
	where := func() string {
		var idx []int
		for _, f := range stack {
			if !f.object {
				idx = append(idx, f.n-1)
			}
		}
		if len(idx) >= 3 {
			return fmt.Sprintf("counter_collection[%d].records[%d]", idx[1], idx[2])
		}
		return "a counter record"
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil // unreadable JSON is reported by the value checks
		}
		var top *jsonFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if d == '}' {
				checkKeyOrder(top.path, top.keys, report)
			}
			endValue(stack)
			continue
		}
		if top != nil && top.onKey {
			k, _ := tok.(string)
			top.key, top.onKey = k, false
			top.keys = append(top.keys, k)
			continue
		}
		path := ""
		switch {
		case top == nil:
		case top.object:
			path = top.path + "/" + top.key
		default:
			top.n++
			path = top.path + "/[]"
		}
		switch t := tok.(type) {
		case json.Delim: // { or [
			stack = append(stack, &jsonFrame{object: t == '{', onKey: t == '{', path: path})
			continue
		case json.Number:
			if path == counterValuePath && !strings.ContainsAny(string(t), ".eE") {
				report("value-integer", fmt.Sprintf("%s.value is written %s, an integer: the writer writes a counter value as a double (%s.0)", where(), t, t))
			}
		case nil:
			if path == counterValuePath {
				report("value-null", fmt.Sprintf("%s.value is null: the writer writes every counter value as a number", where()))
			}
		default:
			if path == counterValuePath {
				report("value-type", fmt.Sprintf("%s.value is %v, not a number: the writer writes every counter value as a double", where(), t))
			}
		}
		endValue(stack)
	}
	var problems []Problem
	for _, kind := range order {
		f := found[kind]
		msg := f.msg
		if f.count > 1 {
			msg += fmt.Sprintf(" (%d places like it)", f.count)
		}
		problems = append(problems, Problem{Rule: "RPV-9", Msg: "results.json: " + msg})
	}
	return problems
}

// endValue ends the value of the current key of the innermost object, so
// that the next string is read as a key.
func endValue(stack []*jsonFrame) {
	if len(stack) > 0 && stack[len(stack)-1].object {
		stack[len(stack)-1].onKey = true
	}
}

// checkKeyOrder reports keys out of the writer's order and required keys
// that are missing, once per object path.
func checkKeyOrder(path string, keys []string, report func(kind, msg string)) {
	want, ok := jsonKeyOrder[path]
	if !ok {
		return
	}
	where := strings.TrimPrefix(strings.ReplaceAll(path, "/[]", "[]"), "/")
	if where == "" {
		where = "the top level"
	}
	if path == "" {
		for _, k := range keys {
			if k != "rocprofiler-sdk-tool" {
				report("top-extra", fmt.Sprintf("the top level has key %q: the writer writes one key, \"rocprofiler-sdk-tool\"", k))
			}
		}
	}
	last, lastKey := -1, ""
	for _, k := range keys {
		i := slices.Index(want, k)
		if i < 0 {
			continue
		}
		if i < last {
			report("order "+path, fmt.Sprintf("in %s, %q comes after %q: the writer writes %s in that order", where, k, lastKey, strings.Join(want, ", ")))
			break
		}
		last, lastKey = i, k
	}
	var missing []string
	for _, k := range jsonRequired[path] {
		if !slices.Contains(keys, k) {
			missing = append(missing, strconv.Quote(k))
		}
	}
	if len(missing) > 0 {
		report("missing "+path, fmt.Sprintf("%s has no %s: the writer always writes them", where, strings.Join(missing, ", ")))
	}
}
