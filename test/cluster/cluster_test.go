//go:build cluster

// Package cluster_test runs Fairplay on a real one-node Kubernetes cluster
// (hack/cluster.sh: kubelet, containerd, kube-proxy, a CNI bridge) the way a
// platform team would: the README's Helm commands, upgrades under load, a
// failed migration, signing-key rotation under load, drift and uninstall.
// `make test-cluster` starts the cluster, imports the images and runs it;
// FAIRPLAY_CLUSTER_SHORT=1 (the form `make test` runs) skips the longest
// steps.
package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
)

// The installation the README's commands make.
const (
	namespace  = "fairplay"
	casinoName = "fairplay"
	release    = "fairplay"
)

var (
	repoRoot string
	kube     client.Client
	// env of every command: KUBECONFIG and a PATH with kubectl and helm.
	cmdEnv []string
	// images imported into the node: the first install, the upgrade, and
	// one whose migration fails.
	imageRepo                         = "ghcr.io/fairplay/fairplay"
	tagA, tagB, tagBroken             string
	databaseURL, redisURL, adminDBURL string
	short                             bool
	// skip matches the names of steps to leave out while working on the
	// suite (FAIRPLAY_CLUSTER_SKIP); later steps may need earlier ones.
	skip *regexp.Regexp
)

func TestMain(m *testing.M) {
	must := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			fmt.Fprintf(os.Stderr, "%s is not set: run this suite with `make test-cluster` (hack/cluster-test.sh)\n", name)
			os.Exit(2)
		}
		return v
	}
	_, file, _, _ := goruntime.Caller(0)
	repoRoot = filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	kubeconfig := must("KUBECONFIG")
	bins := must("FAIRPLAY_CLUSTER_BIN")
	tagA, tagB, tagBroken = must("FAIRPLAY_CLUSTER_TAG_A"), must("FAIRPLAY_CLUSTER_TAG_B"), must("FAIRPLAY_CLUSTER_TAG_BROKEN")
	databaseURL, redisURL = must("FAIRPLAY_CLUSTER_DATABASE_URL"), must("FAIRPLAY_CLUSTER_REDIS_URL")
	adminDBURL = must("FAIRPLAY_CLUSTER_DATABASE_ADMIN_URL")
	short = os.Getenv("FAIRPLAY_CLUSTER_SHORT") != ""
	if re := os.Getenv("FAIRPLAY_CLUSTER_SKIP"); re != "" {
		skip = regexp.MustCompile(re)
	}
	cmdEnv = append(os.Environ(), "KUBECONFIG="+kubeconfig,
		"PATH="+bins+":"+filepath.Join(repoRoot, "bin")+":"+os.Getenv("PATH"))

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = casinov1alpha1.AddToScheme(scheme)
	if kube, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// sh runs a shell command from the repository root with the cluster's
// KUBECONFIG and tools, and returns its output; it fails the test on error.
func sh(t testing.TB, script string) string {
	t.Helper()
	out, err := trySh(script)
	if err != nil {
		t.Fatalf("%s\n%s\n%v", script, out, err)
	}
	return out
}

func trySh(script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = repoRoot
	cmd.Env = cmdEnv
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

// eventually polls cond every half second until it returns true or the
// timeout passes; on timeout it fails with the last description.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ok, desc := cond()
		if ok {
			return
		}
		last = desc
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last: %s\n%s", what, timeout, last, diagnostics())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// diagnostics is what a failed wait prints: the namespace's objects and the
// Casino's conditions.
func diagnostics() string {
	out, _ := trySh(`kubectl -n ` + namespace + ` get casino,deploy,rs,pods,jobs,svc,endpointslices -o wide 2>&1; kubectl -n ` + namespace + ` get casino ` + casinoName + ` -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' 2>&1; kubectl -n ` + namespace + ` get events --sort-by=.lastTimestamp 2>&1 | tail -25`)
	return out
}

func getCasino(t testing.TB) *casinov1alpha1.Casino {
	t.Helper()
	var c casinov1alpha1.Casino
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: casinoName}, &c); err != nil {
		t.Fatalf("get casino: %v", err)
	}
	return &c
}

// kstatusOf is what kstatus (Helm 4's --wait, Flux, cli-utils) computes
// for the Casino.
func kstatusOf(t testing.TB, c *casinov1alpha1.Casino) kstatus.Status {
	t.Helper()
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetGroupVersionKind(casinov1alpha1.GroupVersion.WithKind("Casino"))
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatalf("kstatus: %v", err)
	}
	return res.Status
}

// condition is the Casino's condition of type typ, or nil.
func condition(c *casinov1alpha1.Casino, typ casinov1alpha1.ConditionType) *metav1.Condition {
	return meta.FindStatusCondition(c.Status.Conditions, string(typ))
}

// waitReady waits until the Casino is Ready for its current generation and
// runs image.
func waitReady(t testing.TB, image string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "Casino Ready on "+image, func() (bool, string) {
		c := getCasino(t)
		r := condition(c, casinov1alpha1.ConditionReady)
		if r == nil {
			return false, "no Ready condition"
		}
		desc := fmt.Sprintf("Ready=%s %s: %s (observed %d of %d), current image %s", r.Status, r.Reason, r.Message,
			r.ObservedGeneration, c.Generation, c.Status.CurrentImage)
		return r.Status == metav1.ConditionTrue && r.ObservedGeneration == c.Generation && c.Status.CurrentImage == image, desc
	})
}

// deployment is the server Deployment the operator keeps.
func deployment(t testing.TB) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: casinoName}, &d); err != nil {
		t.Fatalf("get deployment: %v", err)
	}
	return &d
}

// serviceURL is the app's Service as seen from outside the pods: its
// ClusterIP, which the host routes to the node (kube-proxy balances it).
func serviceURL(t testing.TB) string {
	t.Helper()
	var svc corev1.Service
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: casinoName}, &svc); err != nil {
		t.Fatalf("get service: %v", err)
	}
	for _, p := range svc.Spec.Ports {
		if p.Name == "http" {
			return fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, p.Port)
		}
	}
	t.Fatalf("service %s has no http port: %+v", casinoName, svc.Spec.Ports)
	return ""
}

// readyEndpoints counts the ready endpoints of the app's Service.
func readyEndpoints(t testing.TB) int {
	t.Helper()
	out, err := trySh(`kubectl -n ` + namespace + ` get endpointslices -l kubernetes.io/service-name=` + casinoName +
		` -o jsonpath='{range .items[*].endpoints[*]}{.conditions.ready}{"\n"}{end}'`)
	if err != nil {
		t.Fatalf("endpointslices: %v\n%s", err, out)
	}
	return strings.Count(out, "true")
}

// jobSucceeded reports whether the named Job completed.
func jobSucceeded(t testing.TB, name string) (bool, string) {
	var job batchv1.Job
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, &job); err != nil {
		return false, err.Error()
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true, "complete"
		}
	}
	return false, fmt.Sprintf("active %d, failed %d", job.Status.Active, job.Status.Failed)
}

// readmeCommands returns the shell commands of README's "Deploying with
// Helm" section, in order.
func readmeCommands(t testing.TB) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	in, block := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Deploying with Helm"
		case in && strings.HasPrefix(line, "```sh"):
			block = true
		case in && block && strings.HasPrefix(line, "```"):
			block = false
		case in && block && strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#"):
			cmds = append(cmds, line)
		}
	}
	if len(cmds) == 0 {
		t.Fatal("README has no commands under \"## Deploying with Helm\"")
	}
	return cmds
}

var (
	dbURLPlaceholder    = regexp.MustCompile(`postgres://USER:PASSWORD@HOST:5432/fairplay(\?[^'"\s]*)?`)
	redisURLPlaceholder = regexp.MustCompile(`redis://:PASSWORD@HOST:6379/0`)
	tagFlag             = regexp.MustCompile(`image\.tag=\S+`)
)

// asWritten is a README command with only what it leaves to the reader
// filled in: the connection strings' placeholders (user, password, host) and
// the image tag.
func asWritten(t testing.TB, cmd, tag string) string {
	t.Helper()
	dbBase, dbParams, _ := strings.Cut(databaseURL, "?")
	// The README's own parameters (sslmode) stay; a URL naming a primary and
	// its standby brings its target_session_attrs along (the server refuses
	// several hosts without it).
	var attrs string
	if q, err := url.ParseQuery(dbParams); err == nil && q.Get("target_session_attrs") != "" {
		attrs = "target_session_attrs=" + q.Get("target_session_attrs")
	}
	cmd = dbURLPlaceholder.ReplaceAllStringFunc(cmd, func(m string) string {
		_, params, _ := strings.Cut(m, "?")
		if attrs != "" && params != "" {
			params += "&"
		}
		if params += attrs; params != "" {
			return dbBase + "?" + params
		}
		return dbBase
	})
	cmd = redisURLPlaceholder.ReplaceAllLiteralString(cmd, redisURL)
	cmd = tagFlag.ReplaceAllLiteralString(cmd, "image.tag="+tag)
	return cmd
}

// clusterPID is the PID of a process hack/cluster.sh started (postgres,
// redis, kubelet, ...).
func clusterPID(t testing.TB, name string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(os.Getenv("FAIRPLAY_CLUSTER_DIR"), "pids", name+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(string(raw), &pid); err != nil {
		t.Fatal(err)
	}
	return pid
}
