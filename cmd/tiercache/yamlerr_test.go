package main

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestTypeErrorsNameTheirKey checks C24's naming of yaml's type errors:
// a scalar, a block map, a block list and a flow mapping's one value of
// the wrong type are named by the key they are the value of; a line with
// two such values is left as yaml says it.
func TestTypeErrorsNameTheirKey(t *testing.T) {
	type conf struct {
		Server struct {
			Tracking bool   `yaml:"latency_tracking"`
			Pct      string `yaml:"pct"`
		} `yaml:"server"`
	}
	for _, c := range []struct{ doc, want string }{
		{"server:\n  latency_tracking: maybe\n", "line 2: server.latency_tracking: cannot unmarshal !!str `maybe`"},
		{"server:\n  latency_tracking:\n    a: 1\n", "line 3: server.latency_tracking: cannot unmarshal !!map"},
		{"server:\n  pct:\n    - 1\n", "line 3: server.pct: cannot unmarshal !!seq"},
		{"server:\n  pct:\n  - 1\n", "line 3: server.pct: cannot unmarshal !!seq"},
		{"server: {latency_tracking: maybe}\n", "line 1: server.latency_tracking: cannot unmarshal !!str `maybe`"},
		{"server: {latency_tracking: maybe, pct: [1]}\n", "line 1: cannot unmarshal !!str `maybe`"},
		{"server: {latency_tracking: maybe, pct: [1]}\n", "line 1: cannot unmarshal !!seq"},
	} {
		var v conf
		err := yaml.Unmarshal([]byte(c.doc), &v)
		if err == nil {
			t.Fatalf("%q: no error", c.doc)
		}
		if got := nameTypeErrors([]byte(c.doc), err).Error(); !strings.Contains(got, c.want) {
			t.Errorf("%q: %q, want it to say %q", c.doc, got, c.want)
		}
	}
}
