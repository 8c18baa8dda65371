package spec

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A spec may declare a matrix: named parameters, each with a list of
// values, and optional exclude and include entries, read as a CI matrix
// reads them (GitHub Actions' rules). The spec stands for one case per
// combination; wherever the spec writes $NAME (or ${NAME}) the case's value
// is put.
// Cases are expanded when the file is read, so every consumer (runner,
// reports, goldens, coverage) sees only cases, each named
// BASE/NAME=VALUE,NAME=VALUE.

// Case says which case of a matrix a spec is.
type Case struct {
	// Base is the spec's name as written.
	Base string
	// Params are the values of the matrix's parameters that name the case,
	// in the matrix's order.
	Params []Param
}

// Param is one parameter of a case.
type Param struct{ Name, Value string }

// ID is the case's part of the spec name: passes=3,continue=stop-after-1.
func (c Case) ID() string {
	parts := make([]string, len(c.Params))
	for i, p := range c.Params {
		parts[i] = p.Name + "=" + p.Value
	}
	return strings.Join(parts, ",")
}

// Name is the case's spec name: BASE/ID.
func (c Case) Name() string { return c.Base + "/" + c.ID() }

const (
	matrixKey  = "matrix"
	includeKey = "include"
	excludeKey = "exclude"
)

var (
	// paramName is a parameter's name, as written in ${NAME}.
	paramName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// paramValue is what a naming value may be: it becomes part of the
	// spec name and must read back unambiguously (no '/', ',', '=').
	paramValue = regexp.MustCompile(`^[A-Za-z0-9_.+-]+$`)
	// placeholder is $NAME or ${NAME} (for a name followed by a letter);
	// $$ is a $.
	placeholder = regexp.MustCompile(`\$\$|\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
)

// axis is one parameter with its list of values.
type axis struct {
	name   string
	values []*yaml.Node
}

// entry is one include or exclude item: parameters in written order.
type entry struct {
	node *yaml.Node
	keys []string
	vals map[string]*yaml.Node
}

// combo is one case being built: the axis values that name it and every
// value it may substitute.
type combo struct {
	naming      []Param
	vars        map[string]*yaml.Node
	fromProduct bool
}

// ParseCases reads one YAML spec, with or without a matrix, and returns
// its cases: the spec itself when it has no matrix, else one spec per
// combination, in the matrix's order (the first parameter varies slowest;
// cases that include adds come last), each with Case set. Every problem
// of every case is reported, once.
func ParseCases(name string, data []byte) (cases []Spec, err error) {
	defer func() {
		if r := recover(); r != nil {
			cases, err = nil, &Error{File: name, Line: 1, Col: 1, Msg: fmt.Sprintf("cannot read the spec: %v", r)}
		}
	}()
	root, err := parseDocument(name, data)
	if err != nil {
		return nil, err
	}
	m := takeMatrix(root)
	if m == nil {
		s, err := Parse(name, data)
		if err != nil {
			return nil, err
		}
		return []Spec{s}, nil
	}
	combos, errs := expandMatrix(name, m)
	base, baseNode := specName(root)
	if baseNode != nil && placeholder.MatchString(base) {
		errs = append(errs, &Error{File: name, Line: baseNode.Line, Col: baseNode.Column, Path: "name",
			Msg: "the name of a spec with a matrix is its cases' common prefix: leave parameters out of it"})
	}
	if len(errs) > 0 {
		return nil, errs.err()
	}
	var all caseErrors
	seen := map[string]bool{}
	for _, c := range combos {
		cs := Case{Base: base, Params: c.naming}
		if seen[cs.ID()] {
			all.add(&Error{File: name, Line: m.Line, Col: m.Column, Path: matrixKey,
				Msg: fmt.Sprintf("two cases are both named %q: give one a parameter value that differs", cs.Name())}, "")
			continue
		}
		seen[cs.ID()] = true
		s, errs := parseCase(name, root, c, cs)
		for _, e := range errs {
			all.add(e, cs.ID())
		}
		if len(errs) == 0 {
			cases = append(cases, s)
		}
	}
	if len(all.order) > 0 {
		return nil, all.err(len(combos))
	}
	return cases, nil
}

// LoadCases reads the YAML spec at path and returns its cases (ParseCases).
func LoadCases(path string) ([]Spec, error) {
	data, err := readSpecFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCases(path, data)
}

// hasMatrix reports whether the document's root mapping declares a matrix,
// and where.
func hasMatrix(root *yaml.Node) *yaml.Node {
	if root == nil || root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Kind == yaml.ScalarNode && k.Value == matrixKey {
			return k
		}
	}
	return nil
}

// takeMatrix removes the matrix from the root mapping and returns its
// value node (nil when there is none).
func takeMatrix(root *yaml.Node) *yaml.Node {
	if root == nil || root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Kind == yaml.ScalarNode && k.Value == matrixKey {
			v := root.Content[i+1]
			root.Content = slices.Delete(root.Content, i, i+2)
			return v
		}
	}
	return nil
}

// specName is the root's name scalar, if written as one.
func specName(root *yaml.Node) (string, *yaml.Node) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "name" && root.Content[i+1].Kind == yaml.ScalarNode {
			return root.Content[i+1].Value, root.Content[i+1]
		}
	}
	return "", nil
}

// expandMatrix reads the matrix and returns its combinations.
func expandMatrix(file string, m *yaml.Node) ([]combo, Errors) {
	var errs Errors
	fail := func(n *yaml.Node, path, msg string, allowed ...string) {
		errs = append(errs, &Error{File: file, Line: n.Line, Col: n.Column, Path: path, Msg: msg, Allowed: allowed})
	}
	if m.Kind != yaml.MappingNode || len(m.Content) == 0 {
		fail(m, matrixKey, "want a mapping of parameters to value lists (and include, exclude), got "+describeNode(m))
		return nil, errs
	}
	var axes []axis
	var includes, excludes []entry
	seenKey := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		path := matrixKey + "." + k.Value
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			fail(k, matrixKey, "keys must be strings, got "+describeNode(k))
			continue
		}
		if seenKey[k.Value] {
			fail(k, matrixKey, fmt.Sprintf("key %q is repeated", k.Value))
			continue
		}
		seenKey[k.Value] = true
		switch k.Value {
		case includeKey, excludeKey:
			list := readEntries(v, path, fail)
			if k.Value == includeKey {
				includes = list
			} else {
				excludes = list
			}
			continue
		}
		if !paramName.MatchString(k.Value) {
			fail(k, path, fmt.Sprintf("parameter name %q: use letters, digits and _, not a digit first", k.Value))
			continue
		}
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			fail(v, path, "want a non-empty list of values, got "+describeNonEmpty(v))
			continue
		}
		a := axis{name: k.Value}
		seenVal := map[string]bool{}
		for j, item := range v.Content {
			ip := fmt.Sprintf("%s[%d]", path, j)
			switch {
			case item.Kind != yaml.ScalarNode || item.Tag == "!!null":
				fail(item, ip, "a parameter's values name its cases: want a number, a word or true/false, got "+describeNode(item)+" (put other values in include)")
			case !paramValue.MatchString(item.Value):
				fail(item, ip, fmt.Sprintf("value %q: use letters, digits and _ . + - (it becomes part of the case's name)", item.Value))
			case seenVal[item.Value]:
				fail(item, ip, fmt.Sprintf("value %q is listed twice", item.Value))
			default:
				seenVal[item.Value] = true
				a.values = append(a.values, item)
			}
		}
		axes = append(axes, a)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	axisNames := make([]string, len(axes))
	for i, a := range axes {
		axisNames[i] = a.name
	}
	// exclude: only the axes, each with a value it has.
	var live []int // the excludes that name only axes and their values
	for i, ex := range excludes {
		path := fmt.Sprintf("%s.%s[%d]", matrixKey, excludeKey, i)
		valid := true
		for _, key := range ex.keys {
			j := slices.Index(axisNames, key)
			if j < 0 {
				fail(ex.vals[key], path+"."+key, fmt.Sprintf("no parameter %q to exclude", key), axisNames...)
				valid = false
				continue
			}
			if !slices.ContainsFunc(axes[j].values, func(n *yaml.Node) bool { return n.Value == ex.vals[key].Value }) {
				fail(ex.vals[key], path+"."+key, fmt.Sprintf("parameter %s has no value %q", key, ex.vals[key].Value), values(axes[j])...)
				valid = false
			}
		}
		if valid {
			live = append(live, i)
		}
	}
	kept := make([]entry, len(live))
	for j, i := range live {
		kept[j] = excludes[i]
	}
	// Counted before anything is built: a few lines of YAML can stand for
	// more cases than any machine holds (20 values of 8 parameters are
	// 2.56e10), so the cases the matrix stands for are counted first and
	// refused above the budget, never expanded and then found too many.
	if n := countCases(axes, kept, len(includes)); n.over(MaxCases()) {
		fail(m, matrixKey, fmt.Sprintf("this matrix stands for %s, over the budget of %d cases a spec: "+
			"split it, exclude cases, or raise the budget (--max-cases)", n, MaxCases()))
		return nil, errs
	}
	// Every combination of the axes, the first varying slowest, made one
	// at a time; an excluded one is never built. An exclude that takes no
	// case (an earlier one took them all) is an error, as it was written
	// for nothing.
	var combos []combo
	excluded := make([]bool, len(kept))
	if len(axes) > 0 {
		at := make([]int, len(axes)) // the combination, as an index into each axis
		for {
			c := combo{naming: make([]Param, len(axes)), vars: make(map[string]*yaml.Node, len(axes)), fromProduct: true}
			for i, a := range axes {
				v := a.values[at[i]]
				c.naming[i] = Param{a.name, v.Value}
				c.vars[a.name] = v
			}
			if i := slices.IndexFunc(kept, func(ex entry) bool { return matches(c, ex, axisNames) }); i >= 0 {
				excluded[i] = true
			} else {
				combos = append(combos, c)
			}
			k := len(at) - 1
			for ; k >= 0; k-- {
				if at[k]++; at[k] < len(axes[k].values) {
					break
				}
				at[k] = 0
			}
			if k < 0 {
				break
			}
		}
	}
	for j, i := range live {
		if !excluded[j] {
			fail(excludes[i].node, fmt.Sprintf("%s.%s[%d]", matrixKey, excludeKey, i), "excludes no case (an earlier exclude took them all)")
		}
	}
	// include: added to every product case whose axis values it agrees
	// with, without changing them; an entry that agrees with none is a
	// case of its own.
	for i, in := range includes {
		matched := false
		for j := range combos {
			if combos[j].fromProduct && matches(combos[j], in, axisNames) {
				matched = true
				for _, key := range in.keys {
					if !slices.Contains(axisNames, key) {
						combos[j].vars[key] = in.vals[key]
					}
				}
			}
		}
		if matched {
			continue
		}
		c := combo{vars: map[string]*yaml.Node{}}
		for _, name := range axisNames {
			if v, ok := in.vals[name]; ok {
				c.naming = append(c.naming, Param{name, v.Value})
			}
		}
		if len(c.naming) == 0 {
			// No axis at all: the entry names itself by its words.
			for _, key := range in.keys {
				if v := in.vals[key]; v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
					c.naming = append(c.naming, Param{key, v.Value})
				}
			}
		}
		for _, p := range c.naming {
			if !paramValue.MatchString(p.Value) {
				fail(in.vals[p.Name], fmt.Sprintf("%s.%s[%d].%s", matrixKey, includeKey, i, p.Name),
					fmt.Sprintf("value %q names a case of its own: use letters, digits and _ . + -", p.Value))
			}
		}
		if len(c.naming) == 0 {
			fail(in.node, fmt.Sprintf("%s.%s[%d]", matrixKey, includeKey, i), "this entry adds a case with nothing to name it by: give it a parameter with a plain value")
		}
		for _, key := range in.keys {
			c.vars[key] = in.vals[key]
		}
		combos = append(combos, c)
	}
	if len(errs) == 0 && len(combos) == 0 {
		fail(m, matrixKey, "the matrix has no case left")
	}
	return combos, errs
}

func describeNonEmpty(n *yaml.Node) string {
	if len(n.Content) == 0 && (n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode) {
		return "an empty one"
	}
	return describeNode(n)
}

func maps(m map[string]*yaml.Node) map[string]*yaml.Node {
	out := make(map[string]*yaml.Node, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func values(a axis) []string {
	out := make([]string, len(a.values))
	for i, v := range a.values {
		out[i] = v.Value
	}
	return out
}

// matches reports whether every axis the entry names has the entry's
// value in c (an entry naming no axis matches every case).
func matches(c combo, e entry, axisNames []string) bool {
	for _, key := range e.keys {
		if !slices.Contains(axisNames, key) {
			continue
		}
		v, ok := c.vars[key]
		if !ok || v.Kind != yaml.ScalarNode || v.Value != e.vals[key].Value || e.vals[key].Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

// readEntries reads an include or exclude list: mappings of parameter
// names to values.
func readEntries(v *yaml.Node, path string, fail func(*yaml.Node, string, string, ...string)) []entry {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		fail(v, path, "want a non-empty list of mappings, got "+describeNonEmpty(v))
		return nil
	}
	var out []entry
	for i, item := range v.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		if item.Kind != yaml.MappingNode || len(item.Content) == 0 {
			fail(item, ip, "want a mapping of parameters to values, got "+describeNode(item))
			continue
		}
		e := entry{node: item, vals: map[string]*yaml.Node{}}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, val := item.Content[j], item.Content[j+1]
			switch {
			case k.Kind != yaml.ScalarNode || k.Tag != "!!str":
				fail(k, ip, "keys must be strings, got "+describeNode(k))
			case !paramName.MatchString(k.Value) || k.Value == includeKey || k.Value == excludeKey:
				fail(k, ip+"."+k.Value, fmt.Sprintf("parameter name %q: use letters, digits and _, not a digit first", k.Value))
			case e.vals[k.Value] != nil:
				fail(k, ip, fmt.Sprintf("key %q is repeated", k.Value))
			case val.Kind == yaml.AliasNode || containsAlias(val):
				fail(val, ip+"."+k.Value, "aliases are not supported; write the value out")
			default:
				e.keys = append(e.keys, k.Value)
				e.vals[k.Value] = val
			}
		}
		out = append(out, e)
	}
	return out
}

func containsAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	return slices.ContainsFunc(n.Content, containsAlias)
}

// parseCase builds one case: the spec's tree with the case's values put
// in, named BASE/ID, read and validated like any spec.
func parseCase(file string, root *yaml.Node, c combo, cs Case) (Spec, Errors) {
	sub := &substituter{file: file, vars: c.vars}
	tree, _ := sub.node(root)
	if len(sub.errs) > 0 {
		return Spec{}, sub.errs
	}
	if _, n := specName(tree); n != nil {
		n.Value = cs.Name()
	}
	ch := &shapeChecker{file: file, pos: positions{}}
	ch.check(tree, reflect.TypeFor[Spec](), "")
	if len(ch.errs) > 0 {
		return Spec{}, ch.errs
	}
	var s Spec
	if err := tree.Decode(&s); err != nil {
		return Spec{}, Errors{&Error{File: file, Line: tree.Line, Col: tree.Column, Msg: err.Error()}}
	}
	s.File = file
	s.Case = &cs
	if err := validate(s, ch.pos); err != nil {
		var es Errors
		var one *Error
		switch {
		case errors.As(err, &es):
			return Spec{}, es
		case errors.As(err, &one):
			return Spec{}, Errors{one}
		}
		return Spec{}, Errors{&Error{File: file, Msg: err.Error()}}
	}
	return s, nil
}

// substituter copies a node tree, putting a case's values in place of
// $NAME.
type substituter struct {
	file string
	vars map[string]*yaml.Node
	errs Errors
}

func (s *substituter) fail(n *yaml.Node, msg string, allowed ...string) {
	s.errs = append(s.errs, &Error{File: s.file, Line: n.Line, Col: n.Column, Msg: msg, Allowed: allowed})
}

func (s *substituter) names() []string {
	out := make([]string, 0, len(s.vars))
	for k := range s.vars {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// node returns a copy of n with the values put in. A value that is null
// removes the key (or list item) it stands for (omit is true): that is how
// a case leaves an optional key out. A null written in the spec stays, for
// the reader to refuse.
func (s *substituter) node(n *yaml.Node) (out *yaml.Node, omit bool) {
	if n.Kind == yaml.ScalarNode {
		return s.scalar(n)
	}
	cp := *n
	cp.Content = nil
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, _ := s.scalar(n.Content[i])
			v, omit := s.node(n.Content[i+1])
			if !omit {
				cp.Content = append(cp.Content, k, v)
			}
		}
	default:
		for _, item := range n.Content {
			if v, omit := s.node(item); !omit {
				cp.Content = append(cp.Content, v)
			}
		}
	}
	return &cp, false
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// scalar puts values into one scalar: written whole ($NAME), the node
// becomes the value, of whatever kind (quoted or not); written inside
// text, the value's text goes in and the result is a string.
func (s *substituter) scalar(n *yaml.Node) (*yaml.Node, bool) {
	cp := *n
	if n.Kind != yaml.ScalarNode || !strings.Contains(n.Value, "$") {
		return &cp, false
	}
	if name, whole := wholePlaceholder(n.Value); whole {
		v, ok := s.lookup(n, name)
		if !ok {
			return &cp, false
		}
		if isNull(v) {
			return v, true
		}
		out := clone(v)
		out.Line, out.Column = n.Line, n.Column
		return out, false
	}
	cp.Value = placeholder.ReplaceAllStringFunc(n.Value, func(match string) string {
		if match == "$$" {
			return "$"
		}
		name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(match, "$"), "{"), "}")
		v, ok := s.lookup(n, name)
		if !ok {
			return match
		}
		if v.Kind != yaml.ScalarNode || isNull(v) {
			s.fail(n, fmt.Sprintf("$%s is %s; only a number, word or true/false can go inside text", name, describeNode(v)))
			return match
		}
		return v.Value
	})
	if cp.Value != n.Value {
		cp.Tag, cp.Style = "!!str", yaml.DoubleQuotedStyle
	}
	return &cp, false
}

// wholePlaceholder reports whether text is one placeholder and nothing
// else, and its name.
func wholePlaceholder(text string) (string, bool) {
	m := placeholder.FindStringSubmatchIndex(text)
	if m == nil || m[0] != 0 || m[1] != len(text) {
		return "", false
	}
	switch {
	case m[2] >= 0:
		return text[m[2]:m[3]], true
	case m[4] >= 0:
		return text[m[4]:m[5]], true
	}
	return "", false
}

func (s *substituter) lookup(n *yaml.Node, name string) (*yaml.Node, bool) {
	v, ok := s.vars[name]
	if !ok {
		s.fail(n, fmt.Sprintf("$%s: this case has no parameter %q", name, name), s.names()...)
	}
	return v, ok
}

func clone(n *yaml.Node) *yaml.Node {
	out := *n
	out.Content = make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out.Content[i] = clone(c)
	}
	return &out
}

// caseErrors gathers the problems of every case, each told once: a
// problem every case has is the spec's; one that only some cases have
// names them.
type caseErrors struct {
	order []string
	errs  map[string]*Error
	cases map[string][]string
}

func (c *caseErrors) add(e *Error, caseID string) {
	if c.errs == nil {
		c.errs, c.cases = map[string]*Error{}, map[string][]string{}
	}
	key := strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col) + ":" + e.Path + ":" + e.Msg
	if _, ok := c.errs[key]; !ok {
		c.order = append(c.order, key)
		c.errs[key] = e
	}
	if caseID != "" {
		c.cases[key] = append(c.cases[key], caseID)
	}
}

func (c *caseErrors) err(total int) error {
	var out Errors
	for _, key := range c.order {
		e := *c.errs[key]
		ids := c.cases[key]
		switch {
		case len(ids) == 0 || len(ids) == total:
		case len(ids) == 1:
			e.Msg = "case " + ids[0] + ": " + e.Msg
		default:
			e.Msg = fmt.Sprintf("cases %s and %d more: %s", ids[0], len(ids)-1, e.Msg)
		}
		out = append(out, &e)
	}
	return out.err()
}
