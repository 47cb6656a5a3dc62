package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// crdFieldManager owns the CRD fields the upgrade hook applies.
const crdFieldManager = "fairplay-crds"

// applyCRDs is `operator apply-crds -f PATH`: the chart's pre-upgrade hook.
// Helm installs the CRDs of a chart's crds/ directory but never upgrades
// them, and a CRD in templates/ cannot be installed in the same release as
// the Casino made from it (Helm maps every object of a release before
// creating any, and the Casino's kind does not exist yet). So the chart
// keeps the CRD in crds/ for the install, and on every `helm upgrade` this
// command server-side applies the chart's copy (mounted from a ConfigMap)
// and waits until the API server serves it. A failure fails the hook, and
// Helm then changes nothing else.
func applyCRDs(ctx context.Context, args []string, cfg func() (*rest.Config, error), stdout io.Writer) error {
	fs := flag.NewFlagSet("apply-crds", flag.ContinueOnError)
	path := fs.String("f", "", "a CRD manifest, or a directory of *.yaml CRD manifests, to server-side apply")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for each CRD to be Established")
	const usage = "usage: operator apply-crds -f FILE|DIR [--timeout 2m]"
	if err := parseFlags(fs, args, usage, stdout); err != nil {
		return err
	}
	if *path == "" || fs.NArg() != 0 {
		return errors.New(usage)
	}
	crds, err := readCRDs(*path)
	if err != nil {
		return err
	}
	rc, err := cfg()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	c, err := client.New(rc, client.Options{})
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	for _, crd := range crds {
		keep, err := newerInCluster(ctx, c, crd)
		if err != nil {
			return err
		}
		if keep != "" {
			if _, err := fmt.Fprintf(stdout, "customresourcedefinition %s kept: %s\n", crd.GetName(), keep); err != nil {
				return err
			}
			continue
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(crd.DeepCopy()),
			client.FieldOwner(crdFieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply CRD %s: %w", crd.GetName(), err)
		}
		if err := waitEstablished(ctx, c, crd.GetName(), *timeout); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "customresourcedefinition %s applied and established\n", crd.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// newerInCluster says why the cluster's copy of crd is kept ("" when it is
// not): its revision (casinov1alpha1.AnnotationCRDRevision) is higher than
// the chart's. The CRD is cluster-wide, so an older chart's upgrade in one
// namespace would otherwise take the newer fields away from every other
// release's Casinos (the API server prunes unknown fields on their next
// write). A copy without a revision (a chart from before revisions) or with
// one that is not a whole number is replaced.
func newerInCluster(ctx context.Context, c client.Client, crd *unstructured.Unstructured) (string, error) {
	mine, err := crdRevision(crd)
	if err != nil {
		return "", fmt.Errorf("CRD %s in the chart: %w", crd.GetName(), err)
	}
	var live unstructured.Unstructured
	live.SetGroupVersionKind(crd.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKey{Name: crd.GetName()}, &live); apierrors.IsNotFound(err) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("read CRD %s: %w", crd.GetName(), err)
	}
	theirs, err := crdRevision(&live)
	switch {
	case err != nil:
		return "", nil //nolint:nilerr // a revision that is not a whole number is no chart's: replaced
	case theirs <= mine:
		return "", nil
	}
	return fmt.Sprintf("the cluster's is revision %d, this chart's %d (a newer chart installed it; "+
		"its additions are ignored by this release's operator)", theirs, mine), nil
}

// crdRevision reads a CRD's revision annotation: 0 when there is none.
func crdRevision(crd *unstructured.Unstructured) (int, error) {
	v, ok := crd.GetAnnotations()[casinov1alpha1.AnnotationCRDRevision]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("annotation %s=%q is not a whole number above 0", casinov1alpha1.AnnotationCRDRevision, v)
	}
	return n, nil
}

// readCRDs decodes path (a file, or every *.yaml of a directory) and
// refuses anything that is not a CustomResourceDefinition, so a wrong mount
// changes nothing.
func readCRDs(path string) ([]*unstructured.Unstructured, error) {
	files := []string{path}
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if st.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "*.yaml"))
		if err != nil {
			return nil, err
		}
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			var u unstructured.Unstructured
			if err := dec.Decode(&u.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			if gvk := u.GroupVersionKind(); gvk.Group != "apiextensions.k8s.io" || gvk.Kind != "CustomResourceDefinition" {
				return nil, fmt.Errorf("%s: %s %q is not a CustomResourceDefinition", f, gvk, u.GetName())
			}
			out = append(out, &u)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no CustomResourceDefinition found", path)
	}
	return out, nil
}

// waitEstablished waits until the CRD's Established condition is True for
// its current generation's names.
func waitEstablished(ctx context.Context, c client.Client, name string, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		var crd unstructured.Unstructured
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			if apierrors.IsNotFound(err) {
				last = "not found"
				return false, nil
			}
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, raw := range conds {
			m, _ := raw.(map[string]any)
			if m["type"] == "Established" {
				last = fmt.Sprintf("Established=%v %v", m["status"], m["message"])
				return m["status"] == "True", nil
			}
		}
		last = "no Established condition"
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established (%s): %w", name, strings.TrimSpace(last), err)
	}
	return nil
}

// runSubcommand runs a subcommand named by the first argument; ok is false
// when there is none (the manager runs). A subcommand's --help prints its
// usage to stdout and succeeds.
func runSubcommand(args []string, stdout io.Writer) (ok bool, err error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return false, nil
	}
	switch args[0] {
	case "apply-crds":
		err = applyCRDs(ctrl.SetupSignalHandler(), args[1:], ctrl.GetConfig, stdout)
	case "status":
		err = status(context.Background(), args[1:], stdout)
	case "help":
		_, err = fmt.Fprintln(stdout, commandsUsage)
	default:
		return true, fmt.Errorf("unknown command %q (commands: apply-crds, status; no command runs the manager)", args[0])
	}
	if errors.Is(err, errHelpShown) {
		return true, nil
	}
	return true, err
}

// commandsUsage is the part of the usage about the subcommands.
const commandsUsage = `usage: operator [flags]                       run the manager (flags below)
       operator apply-crds -f FILE|DIR [--timeout 2m]  server-side apply CRDs and wait until they are served
       operator status [-n NAMESPACE] [NAME]          show a Casino's version, conditions, keys and audits
       operator <command> --help                     a command's flags`

// errHelpShown is returned by parseFlags after it printed the usage for -h.
var errHelpShown = errors.New("help shown")

// parseFlags parses a subcommand's flags; for -h/--help it prints usage and
// the flags to stdout and returns errHelpShown.
func parseFlags(fs *flag.FlagSet, args []string, usage string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		_, _ = fmt.Fprintf(stdout, "%s\n\nflags:\n", usage)
		fs.PrintDefaults()
		return errHelpShown
	}
	if err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
	}
	return nil
}
