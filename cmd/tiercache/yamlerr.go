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
// line holding several values (a flow mapping) stays as yaml says it.
func nameTypeErrors(doc []byte, err error) error {
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok {
		return err
	}
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil {
		return err
	}
	keys := map[int]string{} // line → the one key whose scalar value is there; "" for several
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch {
		case n.Kind == yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], strings.TrimPrefix(path+"."+n.Content[i].Value, "."))
			}
		case n.Kind == yaml.SequenceNode && n.Style&yaml.FlowStyle == 0:
			for i, c := range n.Content {
				walk(c, path+"["+strconv.Itoa(i)+"]")
			}
		default: // a scalar, or a flow collection: one value on its line
			if k, seen := keys[n.Line]; seen && k != path {
				path = ""
			}
			keys[n.Line] = path
		}
	}
	walk(&root, "")
	named := &yaml.TypeError{Errors: make([]string, len(te.Errors))}
	for i, e := range te.Errors {
		named.Errors[i] = e
		var line int
		if _, scanErr := fmt.Sscanf(e, "line %d:", &line); scanErr != nil || keys[line] == "" {
			continue
		}
		if head, rest, ok := strings.Cut(e, ": "); ok {
			named.Errors[i] = head + ": " + keys[line] + ": " + rest
		}
	}
	return named
}
