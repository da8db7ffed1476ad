package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// nameTypeErrors puts the key into each of yaml's "line N: cannot
// unmarshal ..." lines (a value of the wrong type: "maybe" for a bool, a
// list for a string), which name the line but not the key: "line 3:
// server.latency_tracking: cannot unmarshal !!str `maybe` into bool". A
// map or list where a scalar belongs is named by the key it is the value
// of (yaml gives the line it starts on, which is its first entry's); a
// line holding several values of that kind (a flow mapping "{a: x, b: y}")
// stays as yaml says it.
func nameTypeErrors(doc []byte, err error) error {
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok {
		return err
	}
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil {
		return err
	}
	// line → the one key whose value of that kind starts there; "" for several
	scalars, colls := map[int]string{}, map[int]string{}
	note := func(m map[int]string, line int, path string) {
		if k, seen := m[line]; seen && k != path {
			path = ""
		}
		m[line] = path
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			note(colls, n.Line, path)
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], strings.TrimPrefix(path+"."+n.Content[i].Value, "."))
			}
		case yaml.SequenceNode:
			note(colls, n.Line, path)
			for i, c := range n.Content {
				walk(c, path+"["+strconv.Itoa(i)+"]")
			}
		default: // a scalar or an alias
			note(scalars, n.Line, path)
		}
	}
	walk(&root, "")
	named := &yaml.TypeError{Errors: make([]string, len(te.Errors))}
	for i, e := range te.Errors {
		named.Errors[i] = e
		var line int
		if _, scanErr := fmt.Sscanf(e, "line %d:", &line); scanErr != nil {
			continue
		}
		keys := scalars
		if strings.Contains(e, "cannot unmarshal !!map") || strings.Contains(e, "cannot unmarshal !!seq") {
			keys = colls
		}
		if keys[line] == "" {
			continue
		}
		if head, rest, ok := strings.Cut(e, ": "); ok {
			named.Errors[i] = head + ": " + keys[line] + ": " + rest
		}
	}
	return named
}
