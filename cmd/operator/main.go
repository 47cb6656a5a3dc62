// Command operator runs the Fairplay operator: a controller-runtime manager
// with the Casino reconciler, leader election, Prometheus metrics and health
// endpoints. Its flags follow kubebuilder's scaffold.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	casinov1alpha1 "github.com/fairplay/fairplay/api/v1alpha1"
	"github.com/fairplay/fairplay/internal/controller"
)

// version is set at build time (-X main.version=...).
var version = "dev"

func main() {
	args := os.Args[1:]
	if filepath.Base(os.Args[0]) == "kubectl-fairplay" {
		// Installed as a kubectl plugin (`kubectl fairplay status`): the
		// first argument is always a command, never the manager's flags.
		if len(args) == 0 {
			args = []string{"status"}
		}
	}
	if ok, err := runSubcommand(args, os.Stdout); ok {
		if err != nil {
			fmt.Fprintln(os.Stderr, "operator:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		metricsAddr          string
		probeAddr            string
		enableLeaderElection bool
		leaderElectionNS     string
		watchNamespace       string
		secureMetrics        bool
	)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443",
		"The address the Prometheus /metrics endpoint binds to (0 disables it).")
	flag.BoolVar(&secureMetrics, "metrics-secure", true,
		"Serve /metrics over HTTPS, only to callers whose bearer token the API server authenticates (TokenReview) and "+
			"authorizes for GET /metrics (SubjectAccessReview; the chart's metrics-reader ClusterRole). "+
			"false serves plain HTTP: bind it to 127.0.0.1 then (the chart does), or anyone who reaches the port reads it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the /healthz and /readyz endpoints bind to.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false,
		"Enable leader election so that only one of several operator replicas reconciles.")
	flag.StringVar(&leaderElectionNS, "leader-election-namespace", "",
		"Namespace of the leader-election Lease (default: the operator's own namespace).")
	flag.StringVar(&watchNamespace, "watch-namespace", os.Getenv("WATCH_NAMESPACE"),
		"Comma-separated namespaces whose Casinos the operator reconciles; every list and watch stays inside them, "+
			"so Roles there suffice (the chart's operator.clusterWide=false). Empty: the whole cluster, with a ClusterRole. "+
			"Default: $WATCH_NAMESPACE.")
	opts := zap.Options{Development: false}
	opts.BindFlags(flag.CommandLine)
	flag.Usage = func() {
		_, _ = fmt.Fprintf(flag.CommandLine.Output(), "%s\n\nflags:\n", commandsUsage)
		flag.PrintDefaults()
	}
	flag.Parse() // -h prints the usage and exits 0

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")
	namespaces := controller.ParseWatchNamespaces(watchNamespace)

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(casinov1alpha1.AddToScheme(scheme))

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsOptions(metricsAddr, secureMetrics),
		HealthProbeBindAddress:        probeAddr,
		LeaderElection:                enableLeaderElection,
		LeaderElectionID:              "fairplay-operator.casino.fairplay.dev",
		LeaderElectionNamespace:       leaderElectionNS,
		LeaderElectionReleaseOnCancel: true,
		Cache:                         controller.CacheOptions(namespaces...),
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}

	if err := (&controller.CasinoReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder("fairplay-operator"),
		Clock:     clock.RealClock{},
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up casino controller: %w", err)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("add ready check: %w", err)
	}

	if len(namespaces) > 0 {
		log.Info("starting manager", "version", version, "watchNamespaces", namespaces)
	} else {
		log.Info("starting manager", "version", version, "watchNamespaces", "all")
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// metricsOptions are kubebuilder v4's secure metrics: HTTPS (a self-signed
// certificate made in memory, nothing written to the read-only root) with
// controller-runtime's authentication and authorization filter, so reading
// the operator's metrics takes a token allowed to GET /metrics. HTTP/2 is
// off, as in kubebuilder's scaffold (the HTTP/2 rapid-reset and stream
// cancellation CVEs).
func metricsOptions(addr string, secure bool) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: addr, SecureServing: secure}
	if secure {
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
		opts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	return opts
}
