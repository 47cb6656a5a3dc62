package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSubcommandHelp: `operator <command> --help` prints the command's usage
// and flags to stdout and succeeds without a kubeconfig or a cluster.
func TestSubcommandHelp(t *testing.T) {
	t.Setenv("KUBECONFIG", "/nonexistent")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"status", "--help"}, []string{"usage: operator status", "-kubeconfig", "-n string"}},
		{[]string{"apply-crds", "-h"}, []string{"usage: operator apply-crds", "-f string", "-timeout duration"}},
		{[]string{"help"}, []string{"operator apply-crds", "operator status"}},
	} {
		var out bytes.Buffer
		ok, err := runSubcommand(tc.args, &out)
		if !ok || err != nil {
			t.Errorf("operator %v: ok %v, %v", tc.args, ok, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("operator %v printed %q, lacking %q", tc.args, out.String(), w)
			}
		}
	}
	var out bytes.Buffer
	if ok, err := runSubcommand([]string{"status", "--bogus"}, &out); !ok || err == nil || !strings.Contains(err.Error(), "usage: operator status") {
		t.Errorf("operator status --bogus: ok %v, %v", ok, err)
	}
	if ok, _ := runSubcommand([]string{"--leader-elect"}, &out); ok {
		t.Error("manager flags were taken for a subcommand")
	}
}
